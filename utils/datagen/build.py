"""Build a dataset: every partition in parallel worker processes, the ground truth summed on the
way, the manifest written last, and the whole directory published atomically.

A dataset directory only ever appears complete: it is built under a hidden temporary name and
renamed into place after its manifest is written, so an interrupted run leaves nothing that
looks finished, and an existing dataset is replaced only once its successor is complete.
``ensure_generated`` is the entry point: it reuses a complete dataset and generates otherwise.
"""

from __future__ import annotations

import errno
import fcntl
import json
import math
import multiprocessing
import os
import shutil
import signal
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from contextlib import closing, contextmanager, suppress
from dataclasses import asdict
from multiprocessing import get_context
from pathlib import Path

from dask.system import CPU_COUNT
from tqdm import tqdm

from utils.base.lifetime import process_alive, remove_orphaned_semaphores
from utils.base.paths import default_data_dir
from utils.base.units import human_bytes
from utils.datagen.customers import CUSTOMERS_SCHEMA, customer_world
from utils.datagen.groundtruth import Totals
from utils.datagen.manifest import (
    FORMAT_VERSION,
    MANIFEST_NAME,
    dataset_dir,
    sha256_file,
    why_incomplete,
)
from utils.datagen.params import Params, describe_params, make_params
from utils.datagen.sizes import (
    PEAK_BYTES_FIXED,
    PEAK_BYTES_PER_CUSTOMER,
    PEAK_BYTES_PER_ROW,
    available_memory,
    estimated_bytes,
    partition_peak_bytes,
)
from utils.datagen.transactions import SCHEMA
from utils.datagen.writers import (
    CUSTOMER_FILES,
    STOP_MARKER,
    worker_init,
    write_customers,
    write_partition,
    write_partition_unless_stopping,
)

PARALLEL_FROM_ROWS = 1_000_000  # below this, starting processes costs more than it saves
PROGRESS_FROM_ROWS = 2_000_000  # a progress bar for anything that takes more than a second
# Exit code of a worker process that found itself re-importing a script without a __main__ guard.
_REIMPORT_EXIT = 86
_REIMPORT_MARKER_ENV = "COURSE_DATAGEN_REIMPORT_MARKER"  # set for the workers a pool spawns
_TMP_GLOB = ".transactions-*.tmp-*"
_OLD_GLOB = ".transactions-*.old-*"


def _check_workers(workers: int | None) -> None:
    if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int) or workers < 1):
        raise ValueError(f"workers must be a positive integer, got {workers!r}")


def choose_workers(params: Params, workers: int | None) -> int:
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
        # Dask's count honours CPU quotas (containers, Binder) and affinity, os.cpu_count() does not.
        return max(1, min(int(CPU_COUNT), params.partitions, fit))
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
        try:
            probe.touch()
        finally:  # even when a Ctrl-C comes in between
            probe.unlink(missing_ok=True)
    except OSError as error:
        raise _unwritable(data_dir, error) from None


def _refuse_foreign(target: Path) -> None:
    """The dataset's place must be empty or a real folder: a file or a link there is the learner's
    (the generator only ever makes folders), and replacing it would move it aside, out of sight."""
    if target.is_symlink():
        kind = "link"
    elif target.exists() and not target.is_dir():
        kind = "file"
    else:
        return
    raise ValueError(
        f"{target} is a {kind}, not a dataset folder the course made: move or remove it, "
        "or pass another --data-dir"
    )


def _check_space(data_dir: Path, params: Params) -> None:
    need, free = estimated_bytes(params), shutil.disk_usage(data_dir).free
    if need > free:
        raise ValueError(
            f"not enough free disk in {data_dir} for {describe_params(params)}: needs about "
            f"{human_bytes(need)}, {human_bytes(free)} free; choose a smaller --scale "
            "or another --data-dir"
        )


# --- worker processes ---------------------------------------------------------------------------

@contextmanager
def _ctrl_c_held() -> Iterator[None]:
    """Start the pool's workers inside this block: they begin with SIGINT blocked. A worker's
    interpreter loads for a second or more before the pool's initializer (``worker_init``) makes it
    ignore Ctrl-C, and a Ctrl-C meanwhile (a terminal sends it to the whole process group) would
    print the worker's own traceback; a blocked signal stays pending instead, and the initializer
    drops it. The signal mask passes to a child through fork and exec (multiprocessing starts its
    resource tracker the same way). This process gets a Ctrl-C that came meanwhile when the block ends."""
    if not hasattr(signal, "pthread_sigmask"):  # not POSIX: no process groups to reach the workers
        yield
        return
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


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


def _start_quiet_resource_tracker() -> None:
    """Start multiprocessing's resource tracker (the pool would start it) without its warnings. When
    the generator ends without closing its pool (a second Ctrl-C, the cleanup deadline: ``cli``), the
    tracker removes the pool's semaphores itself, and its warning that they leaked would only add
    lines of its own after the generator's one line. (A warning filter cannot hold a colon, so it
    matches all of the tracker's warnings: they all start ``resource_tracker:``.)"""
    from multiprocessing import resource_tracker

    quiet = "ignore:resource_tracker:UserWarning"
    given = os.environ.get("PYTHONWARNINGS")
    with _environment("PYTHONWARNINGS", f"{given},{quiet}" if given else quiet):
        resource_tracker.ensure_running()


@contextmanager
def _pool(workers: int) -> Iterator[tuple[ProcessPoolExecutor, dict]]:
    """A process pool whose workers die with this process; when the caller leaves with an
    exception, queued partitions are cancelled (those already handed to a worker are skipped, see
    ``_run_partitions``) and running ones finish before the caller goes on, so no worker writes
    into a folder being removed."""
    _start_quiet_resource_tracker()
    pool = ProcessPoolExecutor(
        workers, mp_context=get_context("spawn"), initializer=worker_init, initargs=(os.getpid(),)
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
        yield from tqdm((write_partition(str(directory), params, i) for i in indices), **bar)
        return
    marker = directory / ".reimported"
    with _pool(workers) as (pool, processes), _environment(_REIMPORT_MARKER_ENV, str(marker)):
        try:
            with _ctrl_c_held():  # map submits every partition, which starts the workers
                results = pool.map(
                    write_partition_unless_stopping, [str(directory)] * len(indices), [params] * len(indices),
                    indices,
                )
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
        except BaseException:  # Ctrl-C, an error: the partitions queued for the workers are skipped
            with suppress(OSError):
                (directory / STOP_MARKER).touch()
            raise


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



def _tmp_owner(path: Path) -> int | None:
    """The pid in ``.transactions-<scale>.tmp-<pid>-<hex>`` (or ``.old-<pid>-<hex>``)."""
    pid = path.name.rsplit("-", 2)[-2]
    return int(pid) if pid.isdigit() else None


def remove_stale_temporaries(data_dir: Path) -> int:
    """Delete the temporary and half-swapped trees that dead generators left in ``data_dir`` (killed,
    power cut); those of running generators stay. Returns the bytes freed."""
    freed = 0
    for tmp in [*data_dir.glob(_TMP_GLOB), *data_dir.glob(_OLD_GLOB)]:
        if tmp.is_symlink() or not tmp.is_dir():  # the generator's temporaries are all real folders
            continue
        pid = _tmp_owner(tmp)
        try:
            since = tmp.stat().st_mtime
        except OSError:
            continue
        if pid is None or pid == os.getpid() or process_alive(pid, since):
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


def generate(params: Params, target: Path, workers: int | None = None, progress: bool | None = None) -> Path:
    """Build the dataset in a temporary directory next to ``target`` and publish it atomically."""
    _check_workers(workers)
    _refuse_foreign(target)
    data_dir = target.parent
    _check_writable(data_dir)
    remove_stale_temporaries(data_dir)  # before measuring free space: a dead run's files count
    remove_orphaned_semaphores()
    _check_space(data_dir, params)
    workers = choose_workers(params, workers)
    if progress is None:
        progress = params.rows >= PROGRESS_FROM_ROWS
    tmp = data_dir / f".{target.name}.tmp-{os.getpid()}-{uuid.uuid4().hex[:8]}"
    started = time.perf_counter()
    try:
        for fmt in params.formats:
            (tmp / fmt).mkdir(parents=True)
        customer_files: dict[str, dict] = {}

        def write_customers_meanwhile() -> None:
            customer_files.update(write_customers(tmp, params))
            if workers > 1:
                customer_world.cache_clear()  # only the workers need the customers from here on

        totals, parts = Totals(params.customers), []
        with closing(_run_partitions(tmp, params, workers, progress, write_customers_meanwhile)) as results:
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
    return target


def _publish(tmp: Path, target: Path) -> None:
    """Swap ``tmp`` in for ``target``; the old copy goes only after the new one is in place."""
    old = None
    if target.exists():
        old = target.with_name(f".{target.name}.old-{os.getpid()}-{uuid.uuid4().hex[:8]}")
        target.rename(old)
    tmp.rename(target)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


def ensure_generated(
    scale: str | None = None,
    data_dir: str | Path | None = None,
    *,
    force: bool = False,
    workers: int | None = None,
    progress: bool | None = None,
    **overrides,
) -> Path:
    """The folder of the complete dataset for ``scale`` (default: ``$COURSE_SCALE``, else
    ``small``), generated only when it is missing, incomplete or made with other parameters;
    ``overrides`` are ``make_params``' (rows, partitions, customers, seed, formats)."""
    _refuse_reimport_in_worker()
    params = make_params(scale, **overrides)
    _check_workers(workers)
    target = dataset_dir(Path(data_dir) if data_dir is not None else default_data_dir(), params.scale)
    if target.parent.is_dir():  # a killed run's hidden folder goes even when the dataset is reused
        remove_stale_temporaries(target.parent)
    if not force and why_incomplete(target, params) is None:
        return target
    _refuse_foreign(target)  # before the line that says it is regenerated
    created = not target.parent.exists()
    try:
        with generation_lock(target):
            # Another process may have finished the same dataset while this one waited.
            reason = None if force else why_incomplete(target, params)
            if not force and reason is None:
                return target
            if target.exists():  # say why a dataset that is there is not used (one line)
                print(f"regenerating {target}: " + (reason or "--force / force=True was given"), flush=True)
            return generate(params, target, workers=workers, progress=progress)
    except BaseException:
        if created:  # a refused or failed run leaves no empty data folder behind
            with suppress(OSError):
                target.parent.rmdir()
        raise


@contextmanager
def generation_lock(target: Path) -> Iterator[None]:
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


