"""The course's benchmark harness: total sales per customer, engines side by side, every answer
checked against the generator's ground truth; then docs/benchmarks.md and its charts.

    python -m benchmarks.run --quick   # make benchmark: 1 M rows, a few minutes, into reports/benchmarks/
    python -m benchmarks.run           # make benchmark-full: 1 M, 10 M, 100 M rows (about 8 GB of data
                                       # in $COURSE_DATA_DIR), into docs/benchmarks/ and docs/benchmarks.md

Missing datasets are generated first (not timed). Each measurement is repeated (``--repeats``,
at least 3) with the engines interleaved, so a machine shared with other work slows all of them
alike; the raw times, min and median, hardware, versions and load average are written to
``results.json`` and ``timings.csv``, and ``benchmarks.report`` turns them into the tables and
charts. Nothing here is asserted: timings are reported, not tested.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import platform
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import dask.dataframe as dd
import pandas as pd
import psutil
from distributed import get_task_stream

import utils
from benchmarks import engines as eng
from benchmarks import report
from benchmarks.datagen_speed import partition_stages
from utils import pipeline
from utils.checks import check_customer_totals
from utils.datagen.manifest import REPO_ROOT, default_data_dir
from utils.datagen.scales import SCALES
from utils.machine import cpu_count, cpu_name, package_version
from utils.profiling import task_stream_frame

FULL_SCALES = ("binder", "small", "medium")
QUICK_SCALES = ("binder",)
PACKAGES = ("dask", "distributed", "pandas", "pyarrow", "numpy", "polars", "duckdb")
FULL_OUT = REPO_ROOT / "docs" / "benchmarks"
QUICK_OUT = REPO_ROOT / "reports" / "benchmarks"
SWEEP_BLOCKSIZES = (2**20, 4 * 2**20, 16 * 2**20, 64 * 2**20)  # plus the rule's and one per file
SMALL_WORKER_MEMORY = "2GiB"


class PeakMemory:
    """Peak resident memory of this process and all its children (cluster workers included)
    while the ``with`` block runs, above what they held when it began; sampled every 20 ms."""

    def __init__(self) -> None:
        self.peak = 0
        self._stop = threading.Event()

    @staticmethod
    def _tree_rss() -> int:
        me = psutil.Process()
        total = me.memory_info().rss
        for child in me.children(recursive=True):
            with contextlib.suppress(psutil.Error):
                total += child.memory_info().rss
        return total

    def _sample(self, baseline: int) -> None:
        while not self._stop.wait(0.02):
            self.peak = max(self.peak, self._tree_rss() - baseline)

    def __enter__(self) -> PeakMemory:
        self._thread = threading.Thread(target=self._sample, args=(self._tree_rss(),), daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


def checked(result: pd.Series, dataset: utils.Dataset) -> None:
    """The ground-truth check, its "✓" line swallowed (a wrong answer still raises)."""
    with contextlib.redirect_stdout(io.StringIO()):
        check_customer_totals(utils.to_pandas(result), dataset)


def timed_run(function: Callable[[], pd.Series], dataset: utils.Dataset) -> dict[str, float]:
    with PeakMemory() as memory:
        start = time.perf_counter()
        result = function()
        seconds = time.perf_counter() - start
    checked(result, dataset)
    return {"seconds": seconds, "peak_memory_bytes": memory.peak, "load_average": os.getloadavg()[0]}


def environment() -> dict[str, Any]:
    memory = psutil.virtual_memory().total
    return {
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "cpu": cpu_name(),
        "cores": cpu_count(),
        "memory_bytes": memory,
        "python": platform.python_version(),
        "platform": platform.platform(),
        "packages": {name: package_version(name) for name in PACKAGES},
        "load_average_start": os.getloadavg(),
    }


def log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", flush=True)


def datagen_throughput(rows: int, repeats: int, data_dir: Path) -> list[dict[str, Any]]:
    """Rows per second of ``python -m utils.datagen`` to Parquet, CSV and both (the default)."""
    from benchmarks.datagen_speed import generator_runs

    runs = generator_runs(rows, repeats, data_dir)
    for run in runs:
        log(f"datagen {run['formats']}: {rows / run['seconds'] / 1e6:.2f} M rows/s "
            f"(user {run['user_s']:.1f} s, system {run['system_s']:.1f} s)")
    return runs


def compare_engines(datasets: list[utils.Dataset], repeats: int) -> list[dict[str, Any]]:
    """Every engine on every dataset and format, repeats interleaved; one record per run."""
    records = []
    engines = eng.all_engines()
    try:
        for engine in engines:
            if engine.skipped:
                log(f"{engine.name}: {engine.skipped}")
                records.append({"engine": engine.name, "skipped": engine.skipped})
        for dataset in datasets:
            for repeat in range(repeats):
                for engine in (e for e in engines if not e.skipped):
                    for fmt in pipeline.FORMATS:
                        run = timed_run(lambda e=engine, f=fmt, d=dataset: e.run(d, f), dataset)
                        records.append({"engine": engine.name, "shape": engine.shape, "scale": dataset.scale,
                                        "rows": dataset.rows, "format": fmt, "repeat": repeat, **run})
                        log(f"{dataset.scale} {fmt:7} {engine.name:48} {run['seconds']:8.2f} s")
    finally:
        for engine in engines:
            engine.close()
    return records


def cluster_shapes(dataset: utils.Dataset, repeats: int) -> list[dict[str, Any]]:
    """Strong scaling and threads vs processes: the recommended pipeline on 1 x 1, 2 x 1, 1 x 2."""
    records = []
    shapes = [(1, 1)] + [(n, 1) for n in range(2, cpu_count() + 1)] + [(1, cpu_count())]
    for workers, threads in dict.fromkeys(shapes):
        engine = eng.start_recommended_cluster(n_workers=workers, threads_per_worker=threads)
        try:
            for repeat in range(repeats):
                for fmt in pipeline.FORMATS:
                    run = timed_run(lambda f=fmt, e=engine: e.run(dataset, f), dataset)
                    records.append({"workers": workers, "threads_per_worker": threads, "format": fmt,
                                    "scale": dataset.scale, "rows": dataset.rows, "repeat": repeat, **run})
                    log(f"shape {workers}x{threads} {fmt:7} {run['seconds']:8.2f} s")
        finally:
            engine.close()
    return records


def partition_sweep(dataset: utils.Dataset, repeats: int) -> list[dict[str, Any]]:
    """The recommended CSV pipeline at several ``blocksize`` values, the rule's among them."""
    engine = eng.start_recommended_cluster()
    records = []
    try:
        rule = pipeline.csv_blocksize(dataset, engine.client)
        sizes = {f"{size / 2**20:g} MiB": size for size in SWEEP_BLOCKSIZES}
        sizes[f"the rule ({rule / 2**20:,.0f} MiB)"] = rule
        kwargs = dataset.fast_csv_kwargs(pipeline.COLUMNS, backend="cpu")
        for repeat in range(repeats):
            for label, blocksize in sizes.items():
                frame = dd.read_csv(dataset.csv_files, blocksize=blocksize, **kwargs)
                query = pipeline.customer_totals(frame)
                run = timed_run(lambda q=query: engine.client.compute(q, sync=True), dataset)
                records.append({"blocksize": label, "blocksize_bytes": blocksize, "partitions": frame.npartitions,
                                "scale": dataset.scale, "rows": dataset.rows, "repeat": repeat, **run})
                log(f"sweep {label:22} {frame.npartitions:5} partitions {run['seconds']:8.2f} s")
    finally:
        engine.close()
    return records


def small_workers(dataset: utils.Dataset) -> list[dict[str, Any]]:
    """The recommended pipeline on workers limited to 2 GiB each: exact, and no worker restarted."""
    shape = pipeline.cluster_shape("cpu")
    client = utils.start_client(local=True, quiet=True, memory_limit=SMALL_WORKER_MEMORY, **shape)
    records = []
    try:
        for fmt in pipeline.FORMATS:
            before = eng.worker_pids(client)
            query = pipeline.total_sales_per_customer(dataset, fmt, client)
            run = timed_run(lambda q=query: client.compute(q, sync=True), dataset)
            after = eng.worker_pids(client)
            restarted = sum(1 for address, pid in before.items() if after.get(address) != pid)
            records.append({"format": fmt, "scale": dataset.scale, "rows": dataset.rows,
                            "memory_limit": SMALL_WORKER_MEMORY, **shape, "workers_restarted": restarted, **run})
            log(f"{SMALL_WORKER_MEMORY} workers {fmt:7} {run['seconds']:8.2f} s, restarts: "
                f"{records[-1]['workers_restarted']}")
    finally:
        utils.shutdown(client)
    return records


def profiles(dataset: utils.Dataset) -> list[dict[str, Any]]:
    """Where the time goes, from the task stream: seconds per task prefix and action for the
    notebook-03 pipeline and the recommended one (CSV and Parquet), and partial-sum sizes."""
    records = []
    for engine in (eng.start_notebook03_cluster(), eng.start_recommended_cluster()):
        try:
            for fmt in pipeline.FORMATS:
                with get_task_stream(client=engine.client) as stream:
                    start = time.perf_counter()
                    checked(engine.run(dataset, fmt), dataset)
                    wall = time.perf_counter() - start
                frame = task_stream_frame(stream.data)
                by = frame.groupby(["prefix", "action"])["duration"].agg(["sum", "count"]).reset_index()
                for row in by.itertuples(index=False):
                    records.append({"engine": engine.name, "shape": engine.shape, "format": fmt,
                                    "scale": dataset.scale, "wall_seconds": wall, "prefix": row.prefix,
                                    "action": row.action, "seconds": float(row.sum), "intervals": int(row.count)})
                log(f"profile {engine.name} {fmt}: {wall:.2f} s, {len(frame)} intervals")
        finally:
            engine.close()
    return records


def partial_sizes(dataset: utils.Dataset) -> dict[str, Any]:
    """Rows in, partial sums out, per partition (Parquet, as the recommended pipeline reads it):
    how much the chunk step shrinks the data that the tree reduction then moves."""
    frame = pipeline.read_transactions(dataset, "parquet")
    sizes = frame.map_partitions(lambda part: pd.DataFrame(
        {"rows": [len(part)], "partials": [part[pipeline.KEY].nunique()]})).compute(scheduler="threads")
    return {"scale": dataset.scale, "rows": dataset.rows, "partitions": len(sizes),
            "customers": int(len(dataset.customer_totals_cents)),
            "mean_rows_per_partition": float(sizes["rows"].mean()),
            "mean_partials_per_partition": float(sizes["partials"].mean())}


@contextlib.contextmanager
def quiet_warnings() -> Iterator[None]:
    import logging
    import warnings

    logging.getLogger("distributed").setLevel(logging.ERROR)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="1 M rows only, for development (make benchmark)")
    parser.add_argument("--scales", nargs="+", help=f"dataset scales (default {' '.join(FULL_SCALES)})")
    parser.add_argument("--repeats", type=int, default=3, help="runs per measurement (at least 3)")
    parser.add_argument("--data-dir", type=Path, default=None, help="where datasets live (default $COURSE_DATA_DIR)")
    parser.add_argument("--out", type=Path, default=None, help="results folder (default docs/benchmarks/)")
    parser.add_argument("--datagen-rows", type=int, default=None, help="rows for the generation speed test")
    args = parser.parse_args(argv)
    if args.repeats < 3:
        parser.error(f"--repeats must be at least 3 (min and median need them), got {args.repeats}")
    scales = args.scales or list(QUICK_SCALES if args.quick else FULL_SCALES)
    unknown = [s for s in scales if s not in SCALES]
    if unknown:
        parser.error(f"unknown scale(s) {', '.join(unknown)}: choose from {', '.join(SCALES)}")
    out = args.out or (QUICK_OUT if args.quick else FULL_OUT)
    data_dir = (args.data_dir or default_data_dir()).resolve()
    data_dir.mkdir(parents=True, exist_ok=True)
    datagen_rows = args.datagen_rows or (2_000_000 if args.quick else 10_000_000)

    with quiet_warnings():
        results: dict[str, Any] = {"mode": "quick" if args.quick else "full", "repeats": args.repeats,
                                   "environment": environment()}
        log(f"{results['environment']['cpu']}, {cpu_count()} cores; data in {data_dir}")
        datasets = [utils.ensure_dataset(scale, data_dir) for scale in scales]
        mid = datasets[min(1, len(datasets) - 1)]
        results["datagen"] = datagen_throughput(datagen_rows, args.repeats, data_dir)
        results["datagen_stages"] = partition_stages()
        results["engines"] = compare_engines(datasets, args.repeats)
        results["shapes"] = cluster_shapes(mid, args.repeats)
        results["sweep"] = partition_sweep(mid, args.repeats)
        results["small_workers"] = small_workers(datasets[-1])
        results["profiles"] = profiles(mid)
        results["partials"] = [partial_sizes(dataset) for dataset in datasets]
        results["environment"]["load_average_end"] = os.getloadavg()
    out.mkdir(parents=True, exist_ok=True)
    (out / "results.json").write_text(json.dumps(results, indent=1, default=str) + "\n")
    pd.DataFrame([r for r in results["engines"] if "seconds" in r]).to_csv(out / "timings.csv", index=False)
    markdown = REPO_ROOT / "docs" / "benchmarks.md" if out == FULL_OUT else out / "benchmarks.md"
    page = report.write(out, markdown)
    log(f"wrote {out / 'results.json'} and {page}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
