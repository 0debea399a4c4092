"""Measure data generation speed (rows/s) to Parquet and to CSV, side by side in one run.

    python benchmarks/datagen_speed.py [--rows 10000000] [--baseline-rows 2000000]

The baseline is what a plain generator does: the same partition built as a pandas DataFrame and
written with ``DataFrame.to_csv`` / ``to_parquet``, one process. Prints a Markdown table naming
the hardware; nothing here is asserted (timings are noisy), it is reported.
"""

from __future__ import annotations

import argparse
import platform
import shutil
import tempfile
import time
from pathlib import Path

from utils.datagen import ensure_dataset
from utils.machine import cpu_count, cpu_name
from utils.transactions import generate_partition


def time_course_generator(rows: int, formats: list[str], root: Path) -> float:
    started = time.perf_counter()
    ensure_dataset("small", root / "-".join(formats), rows=rows, formats=formats, force=True, progress=False)
    return time.perf_counter() - started


def time_pandas_baseline(rows: int, fmt: str, root: Path) -> float:
    """One process, pandas writers: the reference the course generator is compared with."""
    partitions = max(1, rows // 500_000)
    out = root / f"baseline-{fmt}"
    out.mkdir()
    started = time.perf_counter()
    for index in range(partitions):
        frame = generate_partition(42, index, rows, partitions, 100_000).table.to_pandas()
        if fmt == "csv":
            frame.to_csv(out / f"part-{index}.csv", index=False)
        else:
            frame.to_parquet(out / f"part-{index}.parquet", index=False)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--baseline-rows", type=int, default=2_000_000)
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="datagen-bench-"))
    try:
        results = []
        for formats in (["parquet"], ["csv"], ["csv", "parquet"]):
            seconds = time_course_generator(args.rows, formats, root)
            results.append(("utils.datagen (all cores)", "+".join(formats), args.rows, seconds))
        for fmt in ("parquet", "csv"):
            seconds = time_pandas_baseline(args.baseline_rows, fmt, root)
            results.append(("plain pandas writer (1 process)", fmt, args.baseline_rows, seconds))
    finally:
        shutil.rmtree(root, ignore_errors=True)
    print(f"Hardware: {cpu_name()}, {cpu_count()} cores usable; Python {platform.python_version()}")
    print(f"Date: {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}\n")
    print("| generator | format | rows | seconds | M rows/s |")
    print("|---|---|---:|---:|---:|")
    for name, fmt, rows, seconds in results:
        print(f"| {name} | {fmt} | {rows:,} | {seconds:.2f} | {rows / seconds / 1e6:.2f} |")


if __name__ == "__main__":
    main()
