"""Generate the course's transaction dataset (CSV part files + Parquet) with its exact ground truth.

``ensure_dataset()`` is the one line a notebook calls; ``python -m utils.datagen`` is the CLI.
A dataset directory only ever appears complete: it is built under a hidden temporary name and
renamed into place after its manifest is written, so an interrupted run leaves nothing that
looks finished, and an existing dataset is replaced only once its successor is complete.
The manifest lists every file with its size and SHA-256; a reused dataset is checked against the
file list and sizes every time, and against the checksums on request (``--verify``).
"""

from __future__ import annotations

import argparse
import ctypes
import errno
import fcntl
import hashlib
import json
import math
import multiprocessing
import os
import shutil
import signal
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from contextlib import closing, contextmanager, suppress
from dataclasses import asdict, dataclass
from multiprocessing import get_context
from pathlib import Path

import psutil
import pyarrow as pa
import pyarrow.csv as pa_csv
import pyarrow.parquet as pq
from tqdm import tqdm

from utils.arrow_columns import cents_as_decimal
from utils.customers import CUSTOMERS_SCHEMA, customer_world, customers_table
from utils.dataset import MANIFEST_NAME, Dataset, default_data_dir, file_problems, human_bytes, sha256_file
from utils.groundtruth import Totals, partial_totals
from utils.scales import SCALES, resolve_scale
from utils.transactions import SCHEMA, Partition, generate_partition

FORMATS = ("csv", "parquet")
# Bytes per row on disk, measured on the `small` scale (CSV ~51 B, Parquet ~7.4 B), plus margin; and
# per customer, the customers table in both formats (~45 B) and the ground truth (~70 B).
BYTES_PER_ROW = {"csv": 58, "parquet": 10}
BYTES_PER_CUSTOMER = 150
# Peak memory of one process generating and writing one partition (both formats): a fixed part plus
# a part per row and per customer. Measured in fresh processes (Linux x86_64, numpy 2.4, pyarrow 26,
# format 3): a worker's own memory after imports and a warm-up partition is ~83 MB (psutil USS); on
# top of that, the ru_maxrss peak grows by 23 / 122 / 237 / 833 MB for partitions of 50 k / 500 k /
# 1 M / 4 M rows (~205 B/row plus up to ~30 MB), and by 237 -> 292 -> 1,096 MB for 1 M rows when
# customers go from 20 k to 1 M to 10 M (~86 B/customer: the customers' attributes, each month's
# activity and one cumulative weight per customer). Rounded up for margin.
PEAK_BYTES_FIXED = 140_000_000
PEAK_BYTES_PER_ROW = 220
PEAK_BYTES_PER_CUSTOMER = 110
PARALLEL_FROM_ROWS = 1_000_000  # below this, starting processes costs more than it saves
PROGRESS_FROM_ROWS = 2_000_000  # a progress bar for anything that takes more than a second
FORMAT_VERSION = 3  # 2: every file with its SHA-256 in the manifest; 3: customers table, 2024-2025, cube
# Exit code of a worker process that found itself re-importing a script without a __main__ guard.
_REIMPORT_EXIT = 86
_REIMPORT_MARKER_ENV = "COURSE_DATAGEN_REIMPORT_MARKER"  # set for the workers a pool spawns
_TMP_GLOB = ".transactions-*.tmp-*"
_OLD_GLOB = ".transactions-*.old-*"


@dataclass(frozen=True)
class Params:
    """Everything that determines the dataset's content; equal params mean identical files."""

    scale: str
    rows: int
    partitions: int
    customers: int
    seed: int
    formats: tuple[str, ...]


def make_params(
    scale: str | None = None,
    rows: int | None = None,
    partitions: int | None = None,
    customers: int | None = None,
    seed: int = 42,
    formats: Iterable[str] = FORMATS,
) -> Params:
    """Resolve a preset plus overrides, rejecting bad values with a one-line ``ValueError``."""
    preset = resolve_scale(scale)
    rows = preset.rows if rows is None else rows
    partitions = preset.partitions if partitions is None else partitions
    customers = preset.customers if customers is None else customers
    for name, value in (("rows", rows), ("partitions", partitions), ("customers", customers)):
        if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
            raise ValueError(f"{name} must be a positive integer, got {value!r}")
    if partitions > rows:
        raise ValueError(f"partitions ({partitions}) cannot exceed rows ({rows})")
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    formats = tuple(sorted(set(formats)))
    unknown = [f for f in formats if f not in FORMATS]
    if unknown or not formats:
        raise ValueError(f"formats must be among {', '.join(FORMATS)}, got {list(formats)!r}")
    return Params(preset.name, rows, partitions, customers, seed, formats)


def estimated_bytes(params: Params) -> int:
    return params.rows * sum(BYTES_PER_ROW[f] for f in params.formats) + params.customers * BYTES_PER_CUSTOMER


def partition_peak_bytes(params: Params) -> int:
    """Memory one process needs at its peak to generate and write one partition."""
    rows = math.ceil(params.rows / params.partitions)
    return PEAK_BYTES_FIXED + rows * PEAK_BYTES_PER_ROW + params.customers * PEAK_BYTES_PER_CUSTOMER


def available_memory() -> int:
    """Bytes this process may still allocate: the machine's available memory, lowered to the
    container's limit (cgroup v2, as on Binder) when one is set."""
    available = psutil.virtual_memory().available
    try:
        limit = Path("/sys/fs/cgroup/memory.max").read_text().strip()
        if limit != "max":
            used = int(Path("/sys/fs/cgroup/memory.current").read_text())
            available = min(available, max(0, int(limit) - used))
    except (OSError, ValueError):
        pass
    return available


def _check_workers(workers: int | None) -> None:
    if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int) or workers < 1):
        raise ValueError(f"workers must be a positive integer, got {workers!r}")


def _choose_workers(params: Params, workers: int | None) -> int:
    """The requested number of processes, or by default one per core; either way refuse before
    writing anything when the partitions being generated at once cannot fit in memory."""
    peak, available = partition_peak_bytes(params), available_memory()
    rows = math.ceil(params.rows / params.partitions)
    if peak > available:
        spare = available - PEAK_BYTES_FIXED - params.customers * PEAK_BYTES_PER_CUSTOMER
        if spare >= 1000 * PEAK_BYTES_PER_ROW:
            advice = f"use more --partitions (at least {math.ceil(params.rows / (spare // PEAK_BYTES_PER_ROW)):,})"
        else:
            advice = "free some memory (close other notebooks) or choose a smaller --scale"
        raise ValueError(
            f"a partition of {rows:,} rows needs about {human_bytes(peak)} of memory, "
            f"{human_bytes(available)} available; {advice}"
        )
    # While the workers start, this process writes the customers table from its own copy of the
    # customers (see generate), so that copy shares the memory with the workers' partitions.
    fit = max(1, (available - params.customers * PEAK_BYTES_PER_CUSTOMER) // peak)
    if workers is None:
        if params.rows < PARALLEL_FROM_ROWS:
            return 1
        from utils.machine import cpu_count

        return max(1, min(cpu_count(), params.partitions, fit))
    workers = min(workers, params.partitions)  # more would have no partition to generate
    if workers > fit:
        raise ValueError(
            f"{workers} workers generating partitions of {rows:,} rows at once need about "
            f"{human_bytes(workers * peak)} of memory, {human_bytes(available)} available; "
            f"use --workers {fit} or more --partitions"
        )
    return workers


def _unwritable(data_dir: Path, error: OSError) -> ValueError:
    return ValueError(
        f"cannot write to data directory {data_dir} ({error.strerror or error}); "
        "pass another --data-dir or set COURSE_DATA_DIR"
    )


def _check_writable(data_dir: Path) -> None:
    try:
        data_dir.mkdir(parents=True, exist_ok=True)
        probe = data_dir / f".write-probe-{uuid.uuid4().hex}"
        probe.touch()
        probe.unlink()
    except OSError as error:
        raise _unwritable(data_dir, error) from None


def describe_params(params: Params) -> str:
    """``scale 'small'``, or what was overridden: ``6,000 rows (--rows overrides scale 'tiny')``."""
    preset = SCALES[params.scale]
    changed = [name for name in ("rows", "partitions", "customers") if getattr(params, name) != getattr(preset, name)]
    if not changed:
        return f"scale {params.scale!r}"
    flags = ", ".join(f"--{name}" for name in changed)
    return f"{params.rows:,} rows ({flags} {'overrides' if len(changed) == 1 else 'override'} scale {params.scale!r})"


def _check_space(data_dir: Path, params: Params) -> None:
    need, free = estimated_bytes(params), shutil.disk_usage(data_dir).free
    if need > free:
        raise ValueError(
            f"not enough free disk in {data_dir} for {describe_params(params)}: needs about "
            f"{human_bytes(need)}, {human_bytes(free)} free; choose a smaller --scale "
            "or another --data-dir"
        )


# --- worker processes ---------------------------------------------------------------------------

_PR_SET_PDEATHSIG = 1


def _worker_init(parent_pid: int) -> None:
    """Runs first in every worker: die with the generator, leave Ctrl-C to it."""
    # Ctrl-C in a terminal reaches the whole process group; the parent stops the pool itself.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if sys.platform.startswith("linux"):
        # The kernel kills this process the moment its parent dies, even by kill -9.
        with suppress(OSError, AttributeError):
            ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != parent_pid:  # the parent died before the line above took effect
        os._exit(1)

    def exit_when_orphaned() -> None:  # every platform: the parent's pid is gone -> so are we
        while os.getppid() == parent_pid:
            time.sleep(0.2)
        os._exit(1)

    threading.Thread(target=exit_when_orphaned, name="datagen-parent-watch", daemon=True).start()


def _refuse_reimport_in_worker() -> None:
    """A spawned worker re-imports the caller's ``__main__`` script; an unguarded script calls
    ``ensure_dataset()`` again there, which would wait forever for the parent's lock. Exit at once
    with a code the parent recognises and reports (see ``_pool_error``)."""
    if getattr(multiprocessing.current_process(), "_inheriting", False):
        marker = os.environ.get(_REIMPORT_MARKER_ENV)
        if marker:  # the parent looks for this file: exit codes alone can be lost in a broken pool
            with suppress(OSError):
                Path(marker).touch()
        raise SystemExit(_REIMPORT_EXIT)


# Files are written 1 MiB per system call: on a 2-core Linux VM, writing 600 MB of new files in
# 30 MB calls cost 1.4 s of kernel time, in 1 MiB calls 0.12 s (4 MiB calls already cost 1.4 s).
WRITE_CHUNK_BYTES = 1 << 20


def _write_buffer(path: Path, buffer: pa.Buffer) -> str:
    """Write ``buffer`` to ``path`` and return its SHA-256 (hashed in memory, no re-read)."""
    digest = hashlib.sha256(buffer).hexdigest()
    view = memoryview(buffer)
    with open(path, "wb") as handle:  # buffered: it retries a short write until all is written
        for start in range(0, len(view), WRITE_CHUNK_BYTES):
            handle.write(view[start:start + WRITE_CHUNK_BYTES])
    return digest


# Arrow's CSV writer formats rows a batch at a time; batches of 64 k rows write the same bytes as
# its default 1,024 in 15 % less time (81 -> 69 ms per 500 k-row partition). No value of the
# dataset contains a comma, quote or line break, so nothing is quoted (Arrow refuses to write such
# a value unquoted rather than corrupt the file): 2 bytes less per row than quoting every string.
CSV_WRITE_OPTIONS = pa_csv.WriteOptions(quoting_style="none", batch_size=65_536)
# Parquet encodings of the transaction part files: dictionary pages for the columns that repeat
# values (what pyarrow does by default for every column) and delta encoding for the two that rise
# row by row (transaction_id, timestamp), where a dictionary never pays. Half the bytes of the
# all-dictionary default (3.5 vs 7.3 MB per 500 k rows) and, with the statistics below, written in
# 28 instead of 47 ms; every reader the course uses (pandas/pyarrow, cudf, polars, DuckDB) decodes both.
TRANSACTION_PARQUET_OPTIONS = {
    "use_dictionary": ["customer_id", "store_id", "product_category", "sales_amount"],
    "column_encoding": {"transaction_id": "DELTA_BINARY_PACKED", "timestamp": "DELTA_BINARY_PACKED"},
    # Min/max statistics only where they let a reader skip row groups: on the sorted columns
    # (a time filter); every row group spans nearly all customers, stores and amounts.
    "write_statistics": ["transaction_id", "timestamp"],
}


def _csv_bytes(table: pa.Table) -> pa.Buffer:
    sink = pa.BufferOutputStream()
    pa_csv.write_csv(table, sink, write_options=CSV_WRITE_OPTIONS)
    return sink.getvalue()


def _parquet_bytes(table: pa.Table, **options) -> pa.Buffer:
    # Nanosecond timestamps: the resolution both pandas and cudf use by default.
    if "timestamp" in table.column_names:
        index = table.column_names.index("timestamp")
        table = table.set_column(index, "timestamp", table["timestamp"].cast("timestamp[ns]"))
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink, compression="snappy", **options)
    return sink.getvalue()


def _transaction_csv_bytes(part: Partition) -> pa.Buffer:
    # The amounts as exact decimals ("118.20"): Arrow formats them faster than floats (~10 ms less
    # per 500 k rows), and every reader parses them to the same float64 as "118.2".
    amounts = cents_as_decimal(part.cents)
    return _csv_bytes(part.table.set_column(part.table.schema.get_field_index("sales_amount"), "sales_amount", amounts))


def _transaction_parquet_bytes(part: Partition) -> pa.Buffer:
    return _parquet_bytes(part.table, **TRANSACTION_PARQUET_OPTIONS)


_ENCODERS = {"csv": ("csv", _transaction_csv_bytes), "parquet": ("parquet", _transaction_parquet_bytes)}
CUSTOMER_FILES = {"parquet": "customers/customers.parquet", "csv": "customers/customers.csv"}


def _write_customers(directory: Path, params: Params) -> dict[str, dict]:
    """The customers table, in both formats whatever ``params.formats`` says (it is small and
    every join needs it); returns the manifest entries. CSV: signup_date as YYYY-MM-DD."""
    table = customers_table(params.seed, params.customers)
    (directory / "customers").mkdir(parents=True, exist_ok=True)
    csv_table = table.set_column(3, "signup_date", table["signup_date"].cast(pa.timestamp("s")).cast(pa.date32()))
    entries = {}
    for fmt, buffer in (("parquet", _parquet_bytes(table)), ("csv", _csv_bytes(csv_table))):
        rel = CUSTOMER_FILES[fmt]
        entries[rel] = {"bytes": buffer.size, "sha256": _write_buffer(directory / rel, buffer)}
    return entries


def _iso(seconds: int) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(int(seconds)))


def _write_partition(directory: str, params: Params, index: int) -> dict:
    """Generate and write one partition; runs in a worker process."""
    part = generate_partition(params.seed, index, params.rows, params.partitions, params.customers)
    files, sizes, writes = {}, {}, {}
    # One thread hashes and writes each file while this one encodes the next and sums the ground
    # truth: a disk that cannot keep up (page cache full) then stalls that thread, not the work.
    with ThreadPoolExecutor(1, thread_name_prefix="datagen-write") as writer:
        for fmt in params.formats:
            suffix, encode = _ENCODERS[fmt]
            rel = f"{fmt}/part-{index:05d}.{suffix}"
            buffer = encode(part)
            writes[fmt] = writer.submit(_write_buffer, Path(directory) / rel, buffer)
            files[fmt], sizes[fmt] = rel, buffer.size
            del buffer
        partial = partial_totals(part, params.customers)
        digests = {fmt: write.result() for fmt, write in writes.items()}
    first, last = (part.seconds[[0, -1]] if part.seconds.size else (0, 0))
    return {
        "index": index,
        "rows": part.table.num_rows,
        "timestamps": [_iso(first), _iso(last)],
        "files": files,
        "bytes": sizes,
        "sha256": digests,
        "partial": partial,
    }


@contextmanager
def _pool(workers: int) -> Iterator[tuple[ProcessPoolExecutor, dict]]:
    """A process pool whose workers die with this process; when the caller leaves with an
    exception, queued partitions are cancelled and running ones finish before the caller goes on,
    so no worker writes into a folder being removed."""
    pool = ProcessPoolExecutor(
        workers, mp_context=get_context("spawn"), initializer=_worker_init, initargs=(os.getpid(),)
    )
    processes: dict = {}
    try:
        yield pool, processes
    except BaseException:
        # Let the running tasks finish (one partition each, about a second) and drop the queued
        # ones. Killing a worker instead can cut a result it is writing in half, and the pool's
        # manager thread then waits forever for the rest of it. The folder the workers write into
        # is removed only after this returns.
        pool.shutdown(wait=True, cancel_futures=True)
        raise
    pool.shutdown(wait=True)


@contextmanager
def _environment(name: str, value: str) -> Iterator[None]:
    """Set an environment variable for the processes started inside the block (spawned workers
    inherit the environment), and restore it afterwards."""
    saved = os.environ.get(name)
    os.environ[name] = value
    try:
        yield
    finally:
        if saved is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = saved


def _run_partitions(
    directory: Path, params: Params, workers: int, progress: bool, meanwhile: Callable[[], None]
) -> Iterator[dict]:
    """Each partition's result, in partition order; ``meanwhile`` runs in this process while the
    worker processes start (an interpreter and the imports each), so that time is not lost."""
    bar = {
        "total": params.partitions,
        "desc": f"generating {params.scale} ({params.rows:,} rows)",
        "unit": "part",
        "disable": not progress,
        "file": sys.stdout,
    }
    indices = range(params.partitions)
    if workers <= 1:
        meanwhile()
        yield from tqdm((_write_partition(str(directory), params, i) for i in indices), **bar)
        return
    marker = directory / ".reimported"
    with _pool(workers) as (pool, processes), _environment(_REIMPORT_MARKER_ENV, str(marker)):
        try:
            results = pool.map(_write_partition, [str(directory)] * len(indices), [params] * len(indices), indices)
            meanwhile()
            # The worker Process objects, kept to stop them and to read their exit codes if one dies
            # (a private attribute, stable since Python 3.3; without it errors are only less specific).
            processes.update(getattr(pool, "_processes", None) or {})
            yield from tqdm(results, **bar)
        except BrokenProcessPool:
            processes.update(getattr(pool, "_processes", None) or {})
            for process in processes.values():
                process.join(timeout=5)
            exit_codes = [p.exitcode for p in processes.values()]
            if marker.exists():
                exit_codes.append(_REIMPORT_EXIT)
            raise _pool_error(exit_codes, params) from None


def _pool_error(exit_codes: list[int | None], params: Params) -> ValueError:
    if _REIMPORT_EXIT in exit_codes:
        main = getattr(sys.modules.get("__main__"), "__file__", None) or "your script"
        return ValueError(
            f"ensure_dataset() ran again inside a generator worker, which re-imports {main}; "
            'put the script\'s code under `if __name__ == "__main__":` (README, Troubleshooting)'
        )
    killed = sorted({-code for code in exit_codes if code is not None and code < 0})
    how = f"was killed by signal {', '.join(map(str, killed))}" if killed else "died"
    return ValueError(
        f"a generator worker process {how} (out of memory?); partitions of "
        f"{math.ceil(params.rows / params.partitions):,} rows need about "
        f"{human_bytes(partition_peak_bytes(params))} each: try fewer --workers or more --partitions"
    )


# --- completeness, stale leftovers, publishing --------------------------------------------------

def _is_complete(directory: Path, params: Params | None = None) -> bool:
    """True when the manifest exists, matches ``params`` (if given) and the directory holds exactly
    the files it lists, at their recorded sizes (checksums: ``Dataset.verify()``)."""
    return why_incomplete(directory, params) is None


def why_incomplete(directory: Path, params: Params | None = None) -> str | None:
    """What keeps ``directory`` from being a complete dataset for ``params``, in a few words, or
    None when it is complete (see ``_is_complete``)."""
    try:
        manifest = json.loads((directory / MANIFEST_NAME).read_text())
    except FileNotFoundError:
        return "it has no manifest (an interrupted run?)" if directory.exists() else "it does not exist"
    except (OSError, ValueError) as error:
        return f"its manifest cannot be read ({error})"
    stored = dict(manifest.get("params", {}))
    version = stored.pop("format_version", None)
    if version != FORMAT_VERSION:
        return f"it was made by an older generator (format {version or 1}, current {FORMAT_VERSION})"
    if params is not None:
        stored_formats = set(stored.pop("formats", []))
        wanted = asdict(params)
        wanted_formats = set(wanted.pop("formats"))
        if stored != wanted or not wanted_formats <= stored_formats:
            changed = [name for name in wanted if stored.get(name) != wanted[name]] or ["formats"]
            return f"it was made with other parameters ({', '.join(changed)})"
    try:
        problems = file_problems(directory, manifest, checksums=False)
    except (OSError, KeyError, TypeError) as error:
        return f"its files cannot be checked ({error})"
    if problems:
        more = f" and {len(problems) - 1} more" if len(problems) > 1 else ""
        return f"its files do not match the manifest ({problems[0]}{more})"
    return None


def _tmp_owner(path: Path) -> int | None:
    """The pid in ``.transactions-<scale>.tmp-<pid>-<hex>`` (or ``.old-<pid>-<hex>``)."""
    pid = path.name.rsplit("-", 2)[-2]
    return int(pid) if pid.isdigit() else None


def _process_alive(pid: int, since: float | None = None) -> bool:
    """Whether ``pid`` runs and, given ``since`` (a time the owner's folder existed at), started
    no later than that: a recycled pid of a younger process does not keep a dead run's folder."""
    try:
        process = psutil.Process(pid)
        if process.status() == psutil.STATUS_ZOMBIE:
            return False
        return since is None or process.create_time() <= since + 1
    except psutil.NoSuchProcess:
        return False
    except psutil.AccessDenied:
        return True


def remove_stale_temporaries(data_dir: Path) -> int:
    """Delete the temporary and half-swapped trees that dead generators left in ``data_dir`` (killed,
    power cut); those of running generators stay. Returns the bytes freed."""
    freed = 0
    for tmp in [*data_dir.glob(_TMP_GLOB), *data_dir.glob(_OLD_GLOB)]:
        pid = _tmp_owner(tmp)
        try:
            since = tmp.stat().st_mtime
        except OSError:
            continue
        if pid is None or pid == os.getpid() or _process_alive(pid, since):
            continue
        size = sum(p.stat().st_size for p in tmp.rglob("*") if p.is_file())
        shutil.rmtree(tmp, ignore_errors=True)
        if not tmp.exists():
            freed += size
    return freed


def _as_one_line(error: BaseException, target: Path, params: Params) -> BaseException:
    """Environment failures during generation as a one-line ``ValueError`` (the CLI prints it and
    exits 2); anything else is a bug and keeps its traceback."""
    if isinstance(error, OSError) and error.errno in (errno.ENOSPC, errno.EDQUOT):
        return ValueError(
            f"the disk filled up while writing {target.name} in {target.parent} (needs about "
            f"{human_bytes(estimated_bytes(params))}); nothing was kept: free some space, choose a "
            "smaller --scale or another --data-dir"
        )
    if isinstance(error, OSError):
        return ValueError(f"cannot write {target.name} in {target.parent}: {error.strerror or error}; nothing was kept")
    if isinstance(error, MemoryError):
        return ValueError(
            f"out of memory generating partitions of {math.ceil(params.rows / params.partitions):,} rows; "
            "nothing was kept: use more --partitions or fewer --workers"
        )
    return error


SHARED_MEMORY = Path("/dev/shm")
ORPHAN_SEMAPHORE_AGE_S = 600  # a semaphore in use is mapped at once; this only adds a margin


def _mapped_shared_memory() -> set[int] | None:
    """Inodes of the /dev/shm files mapped by this user's processes, from /proc/PID/maps; None where
    the map of a Python process cannot be read (then nothing can be called unused). Inodes, not
    names: glibc's ``sem_open`` maps a temporary file and then links it under the semaphore's name,
    so the map shows the temporary name, "(deleted)"."""
    mapped: set[int] = set()
    uid = os.getuid()
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            if proc.stat().st_uid != uid:
                continue
            text = (proc / "maps").read_text()
        except FileNotFoundError:
            continue  # the process ended meanwhile
        except OSError:  # e.g. a container's init: fine unless it is a Python process (sem.mp-* are Python's)
            with suppress(OSError):
                if b"python" not in (proc / "cmdline").read_bytes().lower():
                    continue
            return None
        for line in text.splitlines():
            fields = line.split(maxsplit=5)  # address perms offset device inode pathname
            if len(fields) == 6 and fields[5].startswith(f"{SHARED_MEMORY}/"):
                mapped.add(int(fields[4]))
    return mapped


def remove_orphaned_semaphores(min_age_s: float = ORPHAN_SEMAPHORE_AGE_S) -> list[str]:
    """Delete the named semaphores (``/dev/shm/sem.mp-*``) that multiprocessing's pool left when a
    run was SIGKILLed with its resource tracker: this user's, older than ``min_age_s`` and mapped by
    no process (an open POSIX semaphore is always mapped by the processes using it, so an unmapped
    one can never be waited on again). Their names carry no owner, hence this test instead of a pid.
    Returns the names removed; does nothing where /dev/shm or /proc cannot be read (not Linux)."""
    if not SHARED_MEMORY.is_dir() or not Path("/proc/self/maps").exists():
        return []
    now, uid = time.time(), os.getuid()
    candidates = []
    for path in SHARED_MEMORY.glob("sem.mp-*"):
        with suppress(OSError):
            info = path.stat()
            if info.st_uid == uid and now - info.st_mtime >= min_age_s:
                candidates.append(path)
    if not candidates:
        return []
    mapped = _mapped_shared_memory()
    if mapped is None:
        return []
    removed = []
    for path in candidates:
        with suppress(FileNotFoundError):
            if path.stat().st_ino not in mapped:
                path.unlink()
                removed.append(path.name)
    return removed


def generate(params: Params, target: Path, workers: int | None = None, progress: bool | None = None) -> Dataset:
    """Build the dataset in a temporary directory next to ``target`` and publish it atomically."""
    _check_workers(workers)
    data_dir = target.parent
    _check_writable(data_dir)
    remove_stale_temporaries(data_dir)  # before measuring free space: a dead run's files count
    remove_orphaned_semaphores()
    _check_space(data_dir, params)
    workers = _choose_workers(params, workers)
    if progress is None:
        progress = params.rows >= PROGRESS_FROM_ROWS
    tmp = data_dir / f".{target.name}.tmp-{os.getpid()}-{uuid.uuid4().hex[:8]}"
    started = time.perf_counter()
    try:
        for fmt in params.formats:
            (tmp / fmt).mkdir(parents=True)
        customer_files: dict[str, dict] = {}

        def write_customers() -> None:
            customer_files.update(_write_customers(tmp, params))
            if workers > 1:
                customer_world.cache_clear()  # only the workers need the customers from here on

        totals, parts = Totals(params.customers), []
        with closing(_run_partitions(tmp, params, workers, progress, write_customers)) as results:
            for result in results:
                totals.add(result.pop("partial"))
                parts.append(result)
        answers = totals.write(tmp / "ground_truth")
        files = {
            rel: {"bytes": part["bytes"][fmt], "sha256": part["sha256"][fmt]}
            for part in parts
            for fmt, rel in part["files"].items()
        }
        files.update(customer_files)
        for part in parts:
            del part["sha256"]
        for path in sorted((tmp / "ground_truth").iterdir()):
            files[path.relative_to(tmp).as_posix()] = {"bytes": path.stat().st_size, "sha256": sha256_file(path)}
        manifest = {
            "params": {**asdict(params), "format_version": FORMAT_VERSION},
            "rows": sum(p["rows"] for p in parts),
            "schema": {field.name: str(field.type) for field in SCHEMA},
            "csv_read_note": "parse `timestamp` as a date; amounts have 2 decimals",
            "time_range": "2024-01-01T00:00:00Z <= timestamp < 2026-01-01T00:00:00Z",
            "sorted_by": "timestamp (within and across partitions; transaction_id increases with time)",
            "customers": {
                "rows": params.customers,
                "files": dict(CUSTOMER_FILES),
                "schema": {field.name: str(field.type) for field in CUSTOMERS_SCHEMA},
                "csv_read_note": "parse `signup_date` as a date (written YYYY-MM-DD)",
            },
            "partitions": sorted(parts, key=lambda p: p["index"]),
            "files": dict(sorted(files.items())),
            "ground_truth": answers,
            "generated_seconds": round(time.perf_counter() - started, 3),
            "generated_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        }
        (tmp / MANIFEST_NAME).write_text(json.dumps(manifest, indent=1))
        _publish(tmp, target)
    except BaseException as error:
        shutil.rmtree(tmp, ignore_errors=True)
        converted = _as_one_line(error, target, params)
        if converted is error:
            raise
        raise converted from None
    return Dataset(target)


def _publish(tmp: Path, target: Path) -> None:
    """Swap ``tmp`` in for ``target``; the old copy goes only after the new one is in place."""
    old = None
    if target.exists():
        old = target.with_name(f".{target.name}.old-{os.getpid()}-{uuid.uuid4().hex[:8]}")
        target.rename(old)
    tmp.rename(target)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


def ensure_dataset(
    scale: str | None = None,
    data_dir: str | Path | None = None,
    *,
    force: bool = False,
    workers: int | None = None,
    progress: bool | None = None,
    **overrides,
) -> Dataset:
    """Return the dataset for ``scale`` (default: ``$COURSE_SCALE``, else ``small``), generating
    it only when it is missing, incomplete or made with other parameters."""
    _refuse_reimport_in_worker()
    params = make_params(scale, **overrides)
    _check_workers(workers)
    target = Path(data_dir) if data_dir is not None else default_data_dir()
    target = target / f"transactions-{params.scale}"
    if target.parent.is_dir():  # a killed run's hidden folder goes even when the dataset is reused
        remove_stale_temporaries(target.parent)
    if not force and _is_complete(target, params):
        return Dataset(target)
    created = not target.parent.exists()
    try:
        with _generation_lock(target):
            # Another process may have finished the same dataset while this one waited.
            reason = None if force else why_incomplete(target, params)
            if not force and reason is None:
                return Dataset(target)
            if target.exists():  # say why a dataset that is there is not used (one line)
                print(f"regenerating {target}: " + (reason or "--force / force=True was given"), flush=True)
            return generate(params, target, workers=workers, progress=progress)
    except BaseException:
        if created:  # a refused or failed run leaves no empty data folder behind
            with suppress(OSError):
                target.parent.rmdir()
        raise


@contextmanager
def _generation_lock(target: Path) -> Iterator[None]:
    """One generator per data directory at a time (two notebooks started together, or a notebook
    and `make data`): the second waits, then reuses the first one's result instead of replacing
    the directory under its readers. The lock is on the directory itself, so no lock file is left."""
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        handle = os.open(target.parent, os.O_RDONLY)
    except OSError as error:
        raise _unwritable(target.parent, error) from None
    try:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            print(f"waiting: another process is generating data in {target.parent}; this one goes on when it "
                  "has finished (and reuses its dataset if it is the same)", flush=True)
            fcntl.flock(handle, fcntl.LOCK_EX)
        yield
    finally:
        os.close(handle)  # closing releases the lock


# --- command line -------------------------------------------------------------------------------

class _OneLineParser(argparse.ArgumentParser):
    """Bad arguments: one ``error: ...`` line and exit 2, without the usage block."""

    def error(self, message: str):
        self.exit(2, f"error: {message}\n")


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid int value: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {value}")
    return value


def _folder(text: str) -> Path:
    if not text.strip():
        raise argparse.ArgumentTypeError(
            "empty; give a folder, or leave --data-dir out to use $COURSE_DATA_DIR or data/"
        )
    return Path(text)


def _parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = _OneLineParser(
        prog="python -m utils.datagen",
        description="Generate synthetic customer transactions (CSV + Parquet) and their exact ground truth.",
    )
    parser.add_argument("--scale", choices=list(SCALES), help="size preset (default: $COURSE_SCALE or small)")
    parser.add_argument("--rows", type=int, help="override the preset's row count")
    parser.add_argument("--partitions", type=int, help="override the preset's partition count")
    parser.add_argument("--customers", type=int, help="override the preset's customer count")
    parser.add_argument("--seed", type=int, help="random seed (default: 42)")
    parser.add_argument("--formats", help="comma-separated: csv,parquet (default: both)")
    parser.add_argument(
        "--data-dir", type=_folder,
        help="parent directory (default: $COURSE_DATA_DIR, relative to the repository root, or data/)",
    )
    parser.add_argument("--workers", type=_positive_int, help="processes (default: one per core)")
    parser.add_argument("--force", action="store_true", help="regenerate even if a complete copy exists")
    parser.add_argument(
        "--verify", action="store_true",
        help="check the existing dataset's files against the manifest's checksums; generate nothing",
    )
    args = parser.parse_args(argv)
    if args.verify:
        extra = [f"--{name}" for name in ("rows", "partitions", "customers", "seed", "formats", "workers")
                 if getattr(args, name) is not None] + (["--force"] if args.force else [])
        if extra:
            parser.error(f"--verify takes only --scale and --data-dir, not {' '.join(extra)}")
    return args


def _verify(args: argparse.Namespace) -> int:
    scale = resolve_scale(args.scale).name
    parent = args.data_dir if args.data_dir is not None else default_data_dir()
    path = parent / f"transactions-{scale}"
    generate_cmd = f"python -m utils.datagen --scale {scale}" + (
        f" --data-dir {args.data_dir}" if args.data_dir is not None else ""
    )
    try:
        dataset = Dataset(path)
        if dataset.manifest.get("params", {}).get("format_version") != FORMAT_VERSION:
            print(
                f"error: {path} was made by an older generator (format "
                f"{dataset.manifest.get('params', {}).get('format_version', 1)}, current {FORMAT_VERSION}); "
                f"regenerate with `{dataset.regenerate_command}`",
                file=sys.stderr,
            )
            return 2
        problems = dataset.verify()
    except (ValueError, OSError, KeyError, TypeError):
        print(f"error: no complete dataset in {path}; generate it with `{generate_cmd}`", file=sys.stderr)
        return 2
    if problems:
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        print(
            f"error: {path.name}/{problems[0]}{more}: the data files were changed after generation; "
            f"regenerate with `{dataset.regenerate_command}`",
            file=sys.stderr,
        )
        return 2
    files = dataset.manifest["files"]
    total = sum(entry["bytes"] for entry in files.values())
    print(f"ok: all {len(files)} files of {path} match their checksums ({human_bytes(total)})")
    return 0


class _Terminated(KeyboardInterrupt):
    """SIGTERM, handled like Ctrl-C: the same cleanup runs."""


CLEANUP_DEADLINE_S = 15.0


def _exit_if_cleanup_hangs(code: int) -> None:
    """Bound the cleanup that a signal starts: an exception raised at an arbitrary point can leave a
    lock of the process pool held, and then stopping the pool would wait forever. After the
    deadline the process exits anyway; the next run removes the temporary folder of a dead run."""

    def force_exit() -> None:
        print("error: stopped; cleanup did not finish in time, the next run removes the temporary folder",
              file=sys.stderr, flush=True)
        os._exit(code)

    timer = threading.Timer(CLEANUP_DEADLINE_S, force_exit)
    timer.daemon = True
    timer.start()


def _raise_terminated(signum, frame):
    _exit_if_cleanup_hangs(128 + signal.SIGTERM)
    raise _Terminated()


def _raise_interrupted(signum, frame):
    _exit_if_cleanup_hangs(128 + signal.SIGINT)
    raise KeyboardInterrupt()


def main(argv: list[str] | None = None) -> int:
    args = _parse_args(argv)
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _raise_terminated)
        signal.signal(signal.SIGINT, _raise_interrupted)
    try:
        if args.verify:
            return _verify(args)
        started = time.perf_counter()
        formats = FORMATS if args.formats is None else [f.strip() for f in args.formats.split(",") if f.strip()]
        dataset = ensure_dataset(
            args.scale,
            args.data_dir,
            force=args.force,
            workers=args.workers,
            rows=args.rows,
            partitions=args.partitions,
            customers=args.customers,
            seed=42 if args.seed is None else args.seed,
            formats=formats,
        )
    except ValueError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt as interrupt:
        terminated = isinstance(interrupt, _Terminated)
        print(
            f"error: {'terminated (SIGTERM)' if terminated else 'interrupted'}; nothing half-written was kept",
            file=sys.stderr,
        )
        return 128 + (signal.SIGTERM if terminated else signal.SIGINT)
    elapsed = time.perf_counter() - started
    print(f"{dataset.rows:,} rows ready in {dataset.path} ({elapsed:.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
