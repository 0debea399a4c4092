"""One engine, one dataset, one format, in this fresh process: the unit the harness repeats.

    python -m benchmarks.one_engine --engine polars --format parquet --dataset data/transactions-small

Imports, then the engine's start-up (a Dask cluster starts here, inside this process, and its time
is reported apart), then the query ``--runs`` times, each timed alone. Only after the last run are
the answers checked against the generator's ground truth, to the cent, so that the checker's imports
never run inside a timed query. Prints one JSON object on stdout; exits 3 when an answer is wrong
(the JSON then says what differs), 0 otherwise. ``benchmarks.run`` launches this module once per
(engine, format, rows, repeat), never with a cluster alive in the launching process.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import sys
import threading
import time
from pathlib import Path
from typing import Any

import psutil

from benchmarks.engines import ENGINES, Options, Session
from utils.dataset import Dataset

WRONG_ANSWER = 3


class PeakMemory:
    """Peak resident memory of this process and all its children (cluster workers included)
    while the ``with`` block runs, above what they held when it began; sampled every 50 ms."""

    def __init__(self) -> None:
        self.peak = 0
        self._stop = threading.Event()

    @staticmethod
    def tree_rss() -> int:
        me = psutil.Process()
        total = me.memory_info().rss
        for child in me.children(recursive=True):
            with contextlib.suppress(psutil.Error):
                total += child.memory_info().rss
        return total

    def _sample(self, baseline: int) -> None:
        while not self._stop.wait(0.05):
            self.peak = max(self.peak, self.tree_rss() - baseline)

    def __enter__(self) -> PeakMemory:
        self._thread = threading.Thread(target=self._sample, args=(self.tree_rss(),), daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


def check(result: Any, dataset: Dataset) -> None:
    """The course's ground-truth check (total per customer to half a cent); raises ``CheckFailed``."""
    import utils
    from utils.checks import check_customer_totals

    with contextlib.redirect_stdout(io.StringIO()):
        check_customer_totals(utils.to_pandas(result), dataset)


def worker_pids(session: Session) -> dict[str, int]:
    """Worker address -> process id (empty without a cluster): unchanged means no worker restarted."""
    return session.client.run(os.getpid) if session.client is not None else {}


def task_stream_profile(records: list[dict[str, Any]], wall: float, threads: int) -> dict[str, Any]:
    """Where a Dask run's time went, from its task stream: seconds per task prefix and action,
    and how much of the wall time x threads the workers spent in tasks at all (the rest is
    scheduling, the client building and sending the graph, and waiting for the last task)."""
    from utils.profiling import task_stream_frame

    frame = task_stream_frame(records)
    by = frame.groupby(["prefix", "action"])["duration"].agg(["sum", "count"]).reset_index()
    busy = float(frame.loc[frame["action"] == "compute", "duration"].sum())
    first = float(frame["start"].min()) if len(frame) else 0.0
    last = float(frame["stop"].max()) if len(frame) else 0.0
    return {
        "wall_seconds": wall, "threads": threads, "task_seconds": busy, "tasks_span_seconds": last - first,
        "busy_share": busy / (wall * threads) if wall > 0 and threads else 0.0,
        "steps": [{"prefix": r.prefix, "action": r.action, "seconds": float(r.sum), "intervals": int(r.count)}
                  for r in by.itertuples(index=False)],
    }


def timed_runs(session: Session, dataset: Dataset, fmt: str, runs: int, profile: bool) -> dict[str, Any]:
    """``runs`` timed queries; the results are kept for the check that follows."""
    seconds, results, peaks, profiles = [], [], [], []
    for _ in range(runs):
        stream = None
        with PeakMemory() as memory:
            if profile and session.client is not None:
                from distributed import get_task_stream

                stream = get_task_stream(client=session.client)
                stream.__enter__()
            started = time.perf_counter()
            results.append(session.run(dataset, fmt))
            seconds.append(time.perf_counter() - started)
            if stream is not None:
                stream.__exit__(None, None, None)
        peaks.append(memory.peak)
        if stream is not None:
            threads = sum(session.client.nthreads().values())
            profiles.append(task_stream_profile(stream.data, seconds[-1], threads))
    record: dict[str, Any] = {"seconds": seconds, "peak_memory_bytes": max(peaks), "results": results}
    if profiles:
        record["profiles"] = profiles
    return record


def measure(engine_key: str, fmt: str, dataset: Dataset, runs: int, options: Options,
            profile: bool = False) -> tuple[dict[str, Any], int]:
    """Start the engine, time ``runs`` queries, check every answer: (JSON-ready record, exit code)."""
    engine = ENGINES[engine_key]
    record: dict[str, Any] = {
        "engine": engine.label, "key": engine_key, "kind": engine.kind, "format": fmt, "scale": dataset.scale,
        "rows": dataset.rows, "runs": runs, "pid": os.getpid(),
        "import_seconds": time.time() - psutil.Process().create_time(),
        "load_average_before": os.getloadavg()[0],
        "omp_num_threads": os.environ.get("OMP_NUM_THREADS"),
    }
    skipped = engine.skipped()
    if skipped:
        return {**record, "skipped": skipped}, 0
    session = engine.start(options)
    try:
        record.update(shape=session.shape, startup_seconds=session.startup_seconds)
        before = worker_pids(session)
        measured = timed_runs(session, dataset, fmt, runs, profile)
        after = worker_pids(session)
        record["workers_restarted"] = sum(1 for address, pid in before.items() if after.get(address) != pid)
    finally:
        session.close()
    results = measured.pop("results")
    record.update(measured, load_average_after=os.getloadavg()[0])
    record["first_seconds"] = record["seconds"][0]
    record["warm_seconds"] = min(record["seconds"][1:]) if runs > 1 else None
    try:
        for result in results:
            check(result, dataset)
    except Exception as error:  # CheckFailed, or a result that is not a Series at all
        return {**record, "checked": False, "error": f"{type(error).__name__}: {error}"}, WRONG_ANSWER
    return {**record, "checked": True}, 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--engine", required=True, choices=sorted(ENGINES))
    parser.add_argument("--format", required=True, choices=("parquet", "csv"))
    parser.add_argument("--dataset", required=True, type=Path, help="a generated dataset's folder")
    parser.add_argument("--runs", type=int, default=3, help="queries timed in this process (default 3)")
    parser.add_argument("--n-workers", type=int, default=None)
    parser.add_argument("--threads-per-worker", type=int, default=None)
    parser.add_argument("--memory-limit", default=None, help="per worker, e.g. 2GiB (recommended pipeline)")
    parser.add_argument("--blocksize", type=int, default=None, help="CSV blocksize in bytes (recommended pipeline)")
    parser.add_argument("--profile", action="store_true", help="record each run's task stream (Dask clusters)")
    args = parser.parse_args(argv)
    if args.runs < 1:
        parser.error("--runs must be at least 1")
    import logging
    import warnings

    logging.getLogger("distributed").setLevel(logging.ERROR)
    warnings.simplefilter("ignore")
    options = Options(args.n_workers, args.threads_per_worker, args.memory_limit, args.blocksize)
    record, code = measure(args.engine, args.format, Dataset(args.dataset), args.runs, options, args.profile)
    print(json.dumps(record, default=str), flush=True)
    return code


if __name__ == "__main__":
    sys.exit(main())
