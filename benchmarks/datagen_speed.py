"""Measure data generation speed (rows/s) to Parquet, to CSV and to both, side by side in one run.

    python -m benchmarks.datagen_speed [--rows 10000000] [--repeats 3] [--baseline-rows 2000000]

Each run is ``python -m utils.datagen`` in a fresh process, as ``make data`` runs it: the time
includes starting the interpreter and the worker processes. Besides the wall time it records the
CPU time of the generator and its workers, split into user (the generator's own work) and system
(the kernel: mostly copying the files into the page cache), which is where the time goes.

The baseline is what a plain generator does: the same partition built as a pandas DataFrame and
written with ``DataFrame.to_csv`` / ``to_parquet``, one process. Prints a Markdown table naming
the hardware; nothing here is asserted (timings are noisy), it is reported.
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from utils.base.paths import DATA_DIR_ENV_VAR, REPO_ROOT
from utils.datagen.scales import SCALE_ENV_VAR
from utils.datagen.transactions import generate_partition
from utils.machine import cpu_count, cpu_name

FORMAT_RUNS = (("parquet",), ("csv",), ("csv", "parquet"))


def time_generator_cli(rows: int, formats: tuple[str, ...], data_dir: Path) -> dict[str, float]:
    """One run of ``python -m utils.datagen --scale small --rows ROWS`` into the empty folder
    ``data_dir``: wall seconds and the CPU seconds (user, system) of the generator and its workers."""
    command = [
        sys.executable, "-m", "utils.datagen", "--scale", "small", "--rows", str(rows),
        "--formats", ",".join(formats), "--data-dir", str(data_dir),
    ]
    env = {k: v for k, v in os.environ.items() if k not in (SCALE_ENV_VAR, DATA_DIR_ENV_VAR)}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(command, cwd=REPO_ROOT, env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(command[1:])} failed: {done.stderr.strip()}")
    return {
        "seconds": seconds,
        "user_s": after.ru_utime - before.ru_utime,
        "system_s": after.ru_stime - before.ru_stime,
    }


def generator_runs(rows: int, repeats: int, data_dir: Path) -> list[dict[str, Any]]:
    """``repeats`` runs of each format choice, interleaved so that a noisy moment hits all of them.
    Every run generates into a new empty folder, like a first ``make data``, and its files are
    deleted before the next run, so each run finds the machine's memory in the same state."""
    runs = []
    for run in range(repeats):
        for formats in FORMAT_RUNS:
            folder = Path(tempfile.mkdtemp(prefix="datagen-bench-", dir=data_dir))
            try:
                runs.append({"formats": "+".join(formats), "rows": rows, "run": run,
                             **time_generator_cli(rows, formats, folder)})
            finally:
                shutil.rmtree(folder, ignore_errors=True)
    return runs


def partition_stages(rows: int = 500_000, repeats: int = 5) -> list[dict[str, Any]]:
    """Where one worker's time goes for one partition of the ``small`` scale (500 k rows,
    100 k customers): each step the generator's worker runs, timed alone, best of ``repeats``.
    The sum bounds generation speed from above: cores x rows / sum, before starting processes,
    writing the ground truth or the kernel's work on the files."""
    # The worker's own steps (utils.datagen.writers: what write_partition runs in order).
    from utils.datagen.groundtruth import partial_totals
    from utils.datagen.writers import transaction_csv_bytes, transaction_parquet_bytes, write_buffer

    partitions, customers = 20, 100_000
    total = rows * partitions
    generate_partition(42, 0, total, partitions, customers)  # warm: the customers and their months
    part = generate_partition(42, 1, total, partitions, customers)
    csv, parquet = transaction_csv_bytes(part), transaction_parquet_bytes(part)
    folder = Path(tempfile.mkdtemp(prefix="datagen-stages-"))
    steps = {
        "generate the rows (NumPy)": lambda: generate_partition(42, 1, total, partitions, customers),
        "ground-truth partial sums (NumPy)": lambda: partial_totals(part, customers),
        "encode CSV (Arrow)": lambda: transaction_csv_bytes(part),
        "encode Parquet (Arrow)": lambda: transaction_parquet_bytes(part),
        "SHA-256 and write both files": lambda: (write_buffer(folder / "a.csv", csv),
                                                 write_buffer(folder / "a.parquet", parquet)),
    }
    try:
        stages = []
        for step, run in steps.items():
            times = []
            for _ in range(repeats):
                started = time.perf_counter()
                run()
                times.append(time.perf_counter() - started)
            stages.append({"step": step, "rows": rows, "runs": repeats, "ms": 1000 * min(times),
                           "ns_per_row": 1e9 * min(times) / rows})
        return stages
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def stage_ceiling(stages: list[dict[str, Any]], cores: int) -> float:
    """Rows per second if every core did nothing but these steps, back to back."""
    return cores * 1e9 / sum(stage["ns_per_row"] for stage in stages)


def summarize(runs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per format choice: min and median wall time, rows/s of each, median user and system CPU."""
    summary = []
    for formats in dict.fromkeys(r["formats"] for r in runs):
        mine = [r for r in runs if r["formats"] == formats]
        best, median = min(r["seconds"] for r in mine), statistics.median(r["seconds"] for r in mine)
        rows = mine[0]["rows"]
        summary.append({
            "formats": formats, "rows": rows, "runs": len(mine), "min_s": best, "median_s": median,
            "M rows/s (min)": rows / best / 1e6, "M rows/s (median)": rows / median / 1e6,
            "user CPU s (median)": statistics.median(r["user_s"] for r in mine),
            "system CPU s (median)": statistics.median(r["system_s"] for r in mine),
        })
    return summary


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
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--baseline-rows", type=int, default=2_000_000)
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="datagen-bench-"))
    try:
        summary = summarize(generator_runs(args.rows, args.repeats, root))
        baseline = {fmt: time_pandas_baseline(args.baseline_rows, fmt, root) for fmt in ("parquet", "csv")}
    finally:
        shutil.rmtree(root, ignore_errors=True)
    stages = partition_stages()
    print(f"Hardware: {cpu_name()}, {cpu_count()} cores usable; Python {platform.python_version()}")
    print(f"Date: {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}\n")
    print("| generator | format | rows | seconds (min / median) | M rows/s (min) | user / system CPU s |")
    print("|---|---|---:|---:|---:|---:|")
    for s in summary:
        print(f"| `python -m utils.datagen` | {s['formats']} | {s['rows']:,} | {s['min_s']:.2f} / {s['median_s']:.2f} "
              f"| {s['M rows/s (min)']:.2f} | {s['user CPU s (median)']:.2f} / {s['system CPU s (median)']:.2f} |")
    for fmt, seconds in baseline.items():
        print(f"| plain pandas writer (1 process) | {fmt} | {args.baseline_rows:,} | {seconds:.2f} "
              f"| {args.baseline_rows / seconds / 1e6:.2f} | |")
    print("\n| one 500 k-row partition, one core | ms | ns/row |\n|---|---:|---:|")
    for stage in stages:
        print(f"| {stage['step']} | {stage['ms']:.1f} | {stage['ns_per_row']:.0f} |")
    print(f"\nCeiling on {cpu_count()} cores: {stage_ceiling(stages, cpu_count()) / 1e6:.2f} M rows/s")


if __name__ == "__main__":
    main()
