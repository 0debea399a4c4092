"""Generate the course's transaction dataset (CSV part files + Parquet) with its exact ground truth.

``ensure_dataset()`` is the one line a notebook calls; ``python -m utils.datagen`` is the CLI.
A dataset directory only ever appears complete: it is built under a hidden temporary name and
renamed into place after its manifest is written, so an interrupted run leaves nothing that
looks finished, and an existing dataset is replaced only once its successor is complete.
"""

from __future__ import annotations

import argparse
import fcntl
import json
import os
import shutil
import sys
import time
import uuid
from collections.abc import Iterable, Iterator
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from multiprocessing import get_context
from pathlib import Path

import pyarrow.csv as pa_csv
import pyarrow.parquet as pq
from tqdm import tqdm

from utils.dataset import MANIFEST_NAME, Dataset, default_data_dir
from utils.groundtruth import Totals, partial_totals
from utils.scales import SCALES, resolve_scale
from utils.transactions import SCHEMA, generate_partition

FORMATS = ("csv", "parquet")
# Bytes per row on disk, measured on the `small` scale (CSV ~53 B, Parquet ~18 B), plus margin.
BYTES_PER_ROW = {"csv": 60, "parquet": 22}
PARALLEL_FROM_ROWS = 1_000_000  # below this, starting processes costs more than it saves
PROGRESS_FROM_ROWS = 2_000_000  # a progress bar for anything that takes more than a second
FORMAT_VERSION = 1


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
    return params.rows * sum(BYTES_PER_ROW[f] for f in params.formats)


def _unwritable(data_dir: Path, error: OSError) -> ValueError:
    return ValueError(
        f"cannot write to data directory {data_dir} ({error.strerror or error}); "
        "pass another --data-dir or set COURSE_DATA_DIR"
    )


def _check_writable_with_space(data_dir: Path, params: Params) -> None:
    try:
        data_dir.mkdir(parents=True, exist_ok=True)
        probe = data_dir / f".write-probe-{uuid.uuid4().hex}"
        probe.touch()
        probe.unlink()
    except OSError as error:
        raise _unwritable(data_dir, error) from None
    need, free = estimated_bytes(params), shutil.disk_usage(data_dir).free
    if need > free:
        raise ValueError(
            f"not enough free disk in {data_dir} for scale {params.scale!r}: needs about "
            f"{need / 1e9:.1f} GB, {free / 1e9:.1f} GB free; choose a smaller --scale "
            "or another --data-dir"
        )


def _write_partition(directory: str, params: Params, index: int) -> dict:
    """Generate and write one partition; runs in a worker process."""
    part = generate_partition(params.seed, index, params.rows, params.partitions, params.customers)
    files = {}
    if "csv" in params.formats:
        path = Path(directory) / "csv" / f"part-{index:05d}.csv"
        pa_csv.write_csv(
            part.table, path, write_options=pa_csv.WriteOptions(quoting_style="needed")
        )
        files["csv"] = path
    if "parquet" in params.formats:
        path = Path(directory) / "parquet" / f"part-{index:05d}.parquet"
        # Nanosecond timestamps: the resolution both pandas and cudf use by default.
        table = part.table.set_column(2, "timestamp", part.table["timestamp"].cast("timestamp[ns]"))
        pq.write_table(table, path, compression="snappy")
        files["parquet"] = path
    return {
        "index": index,
        "rows": part.table.num_rows,
        "files": {k: str(p.relative_to(directory)) for k, p in files.items()},
        "bytes": {k: p.stat().st_size for k, p in files.items()},
        "partial": partial_totals(part, params.customers),
    }


def _run_partitions(directory: Path, params: Params, workers: int, progress: bool) -> Iterator[dict]:
    indices = range(params.partitions)
    if workers <= 1:
        results: Iterable[dict] = (_write_partition(str(directory), params, i) for i in indices)
        pool = None
    else:
        pool = ProcessPoolExecutor(workers, mp_context=get_context("spawn"))
        results = pool.map(_write_partition, [str(directory)] * len(indices), [params] * len(indices), indices)
    try:
        yield from tqdm(
            results,
            total=params.partitions,
            desc=f"generating {params.scale} ({params.rows:,} rows)",
            unit="part",
            disable=not progress,
            file=sys.stdout,
        )
    finally:
        if pool is not None:
            pool.shutdown(cancel_futures=True)


def _is_complete(directory: Path, params: Params | None = None) -> bool:
    """True when the manifest exists, matches ``params`` (if given) and every file is there."""
    try:
        manifest = json.loads((directory / MANIFEST_NAME).read_text())
    except (OSError, ValueError):
        return False
    if params is not None:
        stored = dict(manifest.get("params", {}))
        if stored.get("format_version", FORMAT_VERSION) != FORMAT_VERSION:
            return False
        stored_formats = set(stored.pop("formats", []))
        wanted = asdict(params)
        wanted_formats = set(wanted.pop("formats"))
        stored.pop("format_version", None)
        if stored != wanted or not wanted_formats <= stored_formats:
            return False
    for part in manifest.get("partitions", []):
        for fmt, rel in part["files"].items():
            path = directory / rel
            if not path.is_file() or path.stat().st_size != part["bytes"][fmt]:
                return False
    return True


def _remove_stale_temporaries(data_dir: Path, name: str) -> None:
    """Delete temporary trees left by generators that no longer run (killed, power cut)."""
    for tmp in data_dir.glob(f".{name}.tmp-*"):
        pid = tmp.name.rsplit("-", 2)[-2]
        if pid.isdigit() and not _process_alive(int(pid)):
            shutil.rmtree(tmp, ignore_errors=True)


def _process_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def generate(params: Params, target: Path, workers: int | None = None, progress: bool | None = None) -> Dataset:
    """Build the dataset in a temporary directory next to ``target`` and publish it atomically."""
    data_dir = target.parent
    _check_writable_with_space(data_dir, params)
    _remove_stale_temporaries(data_dir, target.name)
    if workers is None:
        workers = 1 if params.rows < PARALLEL_FROM_ROWS else min(os.cpu_count() or 1, params.partitions)
    if progress is None:
        progress = params.rows >= PROGRESS_FROM_ROWS
    tmp = data_dir / f".{target.name}.tmp-{os.getpid()}-{uuid.uuid4().hex[:8]}"
    started = time.perf_counter()
    try:
        for fmt in params.formats:
            (tmp / fmt).mkdir(parents=True)
        totals, parts = Totals(params.customers), []
        for result in _run_partitions(tmp, params, workers, progress):
            totals.add(result.pop("partial"))
            parts.append(result)
        answers = totals.write(tmp / "ground_truth")
        manifest = {
            "params": {**asdict(params), "format_version": FORMAT_VERSION},
            "rows": sum(p["rows"] for p in parts),
            "schema": {field.name: str(field.type) for field in SCHEMA},
            "csv_read_note": "parse `timestamp` as a date; amounts have 2 decimals",
            "partitions": sorted(parts, key=lambda p: p["index"]),
            "ground_truth": answers,
            "generated_seconds": round(time.perf_counter() - started, 3),
            "generated_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        }
        (tmp / MANIFEST_NAME).write_text(json.dumps(manifest, indent=1))
        _publish(tmp, target)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return Dataset(target)


def _publish(tmp: Path, target: Path) -> None:
    """Swap ``tmp`` in for ``target``; the old copy goes only after the new one is in place."""
    old = None
    if target.exists():
        old = target.with_name(f".{target.name}.old-{uuid.uuid4().hex[:8]}")
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
    params = make_params(scale, **overrides)
    target = Path(data_dir) if data_dir is not None else default_data_dir()
    target = target / f"transactions-{params.scale}"
    if not force and _is_complete(target, params):
        return Dataset(target)
    with _generation_lock(target):
        # Another process may have finished the same dataset while this one waited.
        if not force and _is_complete(target, params):
            return Dataset(target)
        return generate(params, target, workers=workers, progress=progress)


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
        fcntl.flock(handle, fcntl.LOCK_EX)
        yield
    finally:
        os.close(handle)  # closing releases the lock


def _parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m utils.datagen",
        description="Generate synthetic customer transactions (CSV + Parquet) and their exact ground truth.",
    )
    parser.add_argument("--scale", choices=list(SCALES), help="size preset (default: $COURSE_SCALE or small)")
    parser.add_argument("--rows", type=int, help="override the preset's row count")
    parser.add_argument("--partitions", type=int, help="override the preset's partition count")
    parser.add_argument("--customers", type=int, help="override the preset's customer count")
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--formats", default="csv,parquet", help="comma-separated: csv,parquet")
    parser.add_argument("--data-dir", type=Path, help="parent directory (default: $COURSE_DATA_DIR or data/)")
    parser.add_argument("--workers", type=int, help="processes (default: one per core)")
    parser.add_argument("--force", action="store_true", help="regenerate even if a complete copy exists")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = _parse_args(argv)
    try:
        started = time.perf_counter()
        dataset = ensure_dataset(
            args.scale,
            args.data_dir,
            force=args.force,
            workers=args.workers,
            rows=args.rows,
            partitions=args.partitions,
            customers=args.customers,
            seed=args.seed,
            formats=[f.strip() for f in args.formats.split(",") if f.strip()],
        )
    except ValueError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    elapsed = time.perf_counter() - started
    print(f"{dataset.rows:,} rows ready in {dataset.path} ({elapsed:.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
