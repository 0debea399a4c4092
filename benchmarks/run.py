"""The course's benchmark harness: total sales per customer, every engine in its own fresh process,
every answer checked against the generator's ground truth; then docs/benchmarks.md and its charts.

    python -m benchmarks.run --quick   # make benchmark: 1 M rows, a few minutes, into reports/benchmarks/
    python -m benchmarks.run           # make benchmark-full: 1 M, 10 M, 100 M rows (about 7 GB of data
                                       # in $COURSE_DATA_DIR), into docs/benchmarks/ and docs/benchmarks.md

This process only launches and records. Each measurement is ``python -m benchmarks.one_engine``
in a fresh interpreter: the engine's imports, its cluster (started inside that process, its start-up
timed apart), the query ``--runs`` times, the answers checked to the cent. Before every launch this
process makes sure nothing of an earlier measurement is alive (no child process, no Dask client
here), so a single-process engine never shares the cores with an idle cluster, and no cluster's
settings (distributed sets ``OMP_NUM_THREADS=1`` where it starts workers) leak into another engine.
Processes are interleaved: every engine and format once, then again (``--repeats`` times, the
engine order rotated), so a noisy moment on a shared machine hits all of them alike. The 1-minute
load average is recorded before and after every process.

Missing datasets are generated first (``python -m utils.datagen``, not timed). On the 10 M-row
files, ``benchmarks/standalone.py`` (a plain script with no course code) times polars, DuckDB and
the recommended pipeline after each round of the harness's engines, and the report sets its ratios
beside the harness's.
Nothing here is asserted: timings are reported, not tested.
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import json
import os
import platform
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psutil

from benchmarks import report
from benchmarks import standalone as plain
from benchmarks.datagen_speed import generator_runs, partition_stages
from benchmarks.engines import ENGINES
from benchmarks.one_engine import WRONG_ANSWER
from utils.base.lifetime import launcher_command
from utils.base.paths import REPO_ROOT, default_data_dir
from utils.datagen.manifest import dataset_dir, is_complete, read_manifest
from utils.datagen.scales import SCALES
from utils.machine import cpu_count, cpu_name, package_version

FULL_SCALES = ("binder", "small", "medium")
QUICK_SCALES = ("binder",)
FORMATS = ("parquet", "csv")
ENGINE_ORDER = ("polars", "duckdb", "pandas", "threaded", "worked-example", "cluster", "dask-cudf")
PACKAGES = ("dask", "distributed", "pandas", "pyarrow", "numpy", "polars", "duckdb")
FULL_OUT = REPO_ROOT / "docs" / "benchmarks"
QUICK_OUT = REPO_ROOT / "reports" / "benchmarks"
SWEEP_BLOCKSIZES = (2**20, 4 * 2**20, 16 * 2**20, 64 * 2**20)  # plus the rule's
SMALL_WORKER_MEMORY = "2GiB"
CHILD_TIMEOUT_S = 1800
SECTIONS = ("profiles", "shapes", "sweep", "small-workers", "datagen")  # after the engines, in this order


class WrongAnswer(RuntimeError):
    """An engine's answer differed from the ground truth: no timing of it may be reported."""


def log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", flush=True)


def nothing_alive() -> list[str]:
    """What of an earlier measurement still runs in or under this process: child processes, and a
    Dask client (this process never starts one; a caller that imported this module might have)."""
    alive = []
    for child in psutil.Process().children(recursive=True):
        try:
            if child.status() != psutil.STATUS_ZOMBIE:
                alive.append(f"child process {child.pid} ({' '.join(child.cmdline()[:4])})")
        except psutil.NoSuchProcess:
            continue
    distributed = sys.modules.get("distributed")
    if distributed is not None:
        try:
            client = distributed.default_client()
        except ValueError:
            pass
        else:
            alive.append(f"a Dask client in this process ({client})")
    return alive


PR_SET_CHILD_SUBREAPER = 36  # prctl(2): orphaned descendants become this process's children


def become_subreaper() -> None:
    """On Linux, adopt orphaned descendants (a cluster worker outliving the process that started
    it), so that ``nothing_alive`` sees them; elsewhere only direct children are seen."""
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1)


def settle(timeout: float = 15.0) -> list[str]:
    """Wait until nothing of an earlier measurement is alive (reaping adopted orphans); what is
    still alive after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        with contextlib.suppress(ChildProcessError):
            while os.waitpid(-1, os.WNOHANG)[0] > 0:
                pass
        alive = nothing_alive()
        if not alive or time.monotonic() > deadline:
            return alive
        time.sleep(0.1)


def one_engine_command(engine: str, fmt: str, dataset: Path, runs: int, *extra: str) -> list[str]:
    argv = [sys.executable, "-m", "benchmarks.one_engine", "--engine", engine, "--format", fmt,
            "--dataset", str(dataset), "--runs", str(runs), *extra]
    return launcher_command(argv)  # the child dies with this process, even on kill -9


def launch(engine: str, fmt: str, dataset: Path, runs: int, *extra: str, timeout: float = CHILD_TIMEOUT_S,
           settle_timeout: float = 15.0) -> dict[str, Any]:
    """One fresh process measuring one engine; its JSON record. Raises ``WrongAnswer`` when the
    child found a wrong answer, ``RuntimeError`` when something is alive here or the child failed."""
    alive = settle(settle_timeout)
    if alive:
        raise RuntimeError("refusing to measure while an earlier measurement is alive: " + "; ".join(alive))
    command = one_engine_command(engine, fmt, dataset, runs, *extra)
    load_before = os.getloadavg()[0]
    done = subprocess.run(command, cwd=REPO_ROOT, capture_output=True, text=True, timeout=timeout)
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    record = json.loads(lines[-1]) if lines else {}
    if done.returncode == WRONG_ANSWER:
        raise WrongAnswer(f"{engine} on {fmt} ({dataset.name}): {record.get('error', 'wrong answer')}")
    if done.returncode != 0 or not record:
        tail = "\n".join(done.stderr.strip().splitlines()[-15:])
        raise RuntimeError(f"{engine} on {fmt} ({dataset.name}) failed with exit code {done.returncode}:\n{tail}")
    record["driver_load_average"] = [load_before, os.getloadavg()[0]]
    return record


def summary_line(record: dict[str, Any]) -> str:
    if record.get("skipped"):
        return f"{record['engine']}: {record['skipped']}"
    times = " ".join(f"{s:.3f}" for s in record["seconds"])
    startup = f", start-up {record['startup_seconds']:.2f} s" if record.get("startup_seconds") else ""
    return (f"{record['scale']:7} {record['format']:7} {record['engine'][:48]:48} {times} s{startup}"
            f" (load {record['load_average_before']:.1f})")


def rotated(keys: list[str], by: int) -> list[str]:
    by %= max(1, len(keys))
    return keys[by:] + keys[:by]


def compare_engines(datasets: list[Path], repeats: int, runs: int, engines: list[str],
                    after_round: Callable[[Path], None] | None = None) -> list[dict[str, Any]]:
    """Every engine on every dataset and format, one fresh process each, interleaved;
    ``after_round(dataset)`` after each round of all engines (the standalone script's rounds)."""
    records = []
    skipped = [key for key in engines if ENGINES[key].skipped()]
    for key in skipped:
        records.append({"engine": ENGINES[key].label, "key": key, "skipped": ENGINES[key].skipped()})
        log(f"{ENGINES[key].label}: {ENGINES[key].skipped()}")
    running = [key for key in engines if key not in skipped]
    for dataset in datasets:
        for repeat in range(repeats):
            for key in rotated(running, repeat):
                for fmt in FORMATS:
                    record = launch(key, fmt, dataset, runs)
                    records.append({**record, "repeat": repeat})
                    log(summary_line(record))
            if after_round is not None:
                after_round(dataset)
    return records


def cluster_shapes(dataset: Path, repeats: int, runs: int) -> list[dict[str, Any]]:
    """Strong scaling and threads vs processes: the recommended pipeline on 1 x 1, N x 1, 1 x N."""
    shapes = list(dict.fromkeys([(1, 1)] + [(n, 1) for n in range(2, cpu_count() + 1)] + [(1, cpu_count())]))
    records = []
    for repeat in range(repeats):
        for workers, threads in rotated(shapes, repeat):
            for fmt in FORMATS:
                record = launch("cluster", fmt, dataset, runs, "--n-workers", str(workers),
                                "--threads-per-worker", str(threads))
                records.append({**record, "workers": workers, "threads_per_worker": threads, "repeat": repeat})
                log(f"shape {workers}x{threads}: {summary_line(record)}")
    return records


def partition_sweep(dataset: Path, repeats: int, runs: int) -> list[dict[str, Any]]:
    """The recommended CSV pipeline at several ``blocksize`` values and at the rule's."""
    sizes: list[int | None] = [*SWEEP_BLOCKSIZES, None]
    records = []
    for repeat in range(repeats):
        for blocksize in rotated(sizes, repeat):
            extra = ("--blocksize", str(blocksize)) if blocksize else ()
            record = launch("cluster", "csv", dataset, runs, *extra)
            label = f"{blocksize / 2**20:g} MiB" if blocksize else "the rule"
            records.append({**record, "blocksize": label, "repeat": repeat})
            log(f"sweep {label}: {summary_line(record)}")
    return records


def small_workers(dataset: Path) -> list[dict[str, Any]]:
    """The recommended pipeline on workers limited to 2 GiB each: exact, and no worker restarted."""
    records = []
    for fmt in FORMATS:
        record = launch("cluster", fmt, dataset, 1, "--memory-limit", SMALL_WORKER_MEMORY)
        records.append({**record, "memory_limit": SMALL_WORKER_MEMORY})
        log(f"{SMALL_WORKER_MEMORY} workers: {summary_line(record)}, restarts: {record['workers_restarted']}")
    return records


def profiles(dataset: Path, runs: int) -> list[dict[str, Any]]:
    """The task stream of every run of the worked example and of the recommended pipeline."""
    records = []
    for key in ("worked-example", "cluster"):
        for fmt in FORMATS:
            record = launch(key, fmt, dataset, runs, "--profile")
            records.append(record)
            log(f"profile: {summary_line(record)}")
    return records


class Standalone:
    """``benchmarks/standalone.py`` on the same files: the plain script the harness must agree with.
    One round of it (each of its engines once, in their own processes) runs after each round of the
    harness's engines, so both see the machine in the same state."""

    def __init__(self, dataset: Path) -> None:
        self.dataset = dataset
        self.runs: list[dict[str, Any]] = []

    def round(self, dataset: Path) -> None:
        if dataset != self.dataset:
            return
        alive = settle()
        if alive:
            raise RuntimeError("refusing to run the standalone script while something is alive: " + "; ".join(alive))
        command = launcher_command([sys.executable, str(REPO_ROOT / "benchmarks" / "standalone.py"),
                                    str(dataset), "--repeats", "1", "--json"])
        done = subprocess.run(command, cwd=REPO_ROOT, capture_output=True, text=True, timeout=CHILD_TIMEOUT_S)
        if done.returncode != 0:
            raise RuntimeError(f"benchmarks/standalone.py failed:\n{done.stderr.strip()[-2000:]}")
        runs = json.loads(done.stdout.strip().splitlines()[-1])["runs"]
        self.runs += runs
        log("standalone: " + ", ".join(f"{r['engine']} {r['format']} {min(r['times']):.3f} s" for r in runs))

    def result(self) -> dict[str, Any]:
        return {"folder": str(self.dataset), "rows": read_manifest(self.dataset)["rows"],
                "repeats": len(self.runs) // (2 * len(plain.ENGINES)), "runs": self.runs,
                "summary": plain.summarize(self.runs)}


def ensure_datasets(scales: list[str], data_dir: Path) -> list[Path]:
    """Each scale's dataset folder, generated first where missing (``python -m utils.datagen``)."""
    folders = []
    for scale in scales:
        folder = dataset_dir(data_dir, scale)
        if not is_complete(folder):
            log(f"generating the {scale} dataset ({SCALES[scale].rows:,} rows) in {data_dir} (not timed)")
            subprocess.run([sys.executable, "-m", "utils.datagen", "--scale", scale, "--data-dir", str(data_dir)],
                           cwd=REPO_ROOT, check=True)
        folders.append(folder)
    return folders


def environment() -> dict[str, Any]:
    return {
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "cpu": cpu_name(),
        "cores": cpu_count(),
        "memory_bytes": psutil.virtual_memory().total,
        "python": platform.python_version(),
        "platform": platform.platform(),
        "packages": {name: package_version(name) for name in PACKAGES},
        "omp_num_threads": os.environ.get("OMP_NUM_THREADS"),
        "load_average_start": os.getloadavg(),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="1 M rows only, for development (make benchmark)")
    parser.add_argument("--scales", nargs="+", help=f"dataset scales (default {' '.join(FULL_SCALES)})")
    parser.add_argument("--engines", nargs="+", choices=ENGINE_ORDER, help="engines to compare (default all)")
    parser.add_argument("--repeats", type=int, default=3, help="fresh processes per measurement (at least 3)")
    parser.add_argument("--runs", type=int, default=3, help="queries timed in each process (default 3)")
    parser.add_argument("--data-dir", type=Path, default=None, help="where datasets live (default $COURSE_DATA_DIR)")
    parser.add_argument("--out", type=Path, default=None, help="results folder (default docs/benchmarks/)")
    parser.add_argument("--datagen-rows", type=int, default=None, help="rows for the generation speed test")
    parser.add_argument("--engines-only", action="store_true",
                        help="only the engines and the standalone script (no profile, shapes, sweep, generation)")
    parser.add_argument("--skip", nargs="+", default=[], choices=SECTIONS, help="sections to leave out of this run")
    args = parser.parse_args(argv)
    if args.repeats < 3:
        parser.error(f"--repeats must be at least 3 (min and median need them), got {args.repeats}")
    if args.runs < 2:
        parser.error(f"--runs must be at least 2 (the first query and the warm ones), got {args.runs}")
    scales = args.scales or list(QUICK_SCALES if args.quick else FULL_SCALES)
    unknown = [s for s in scales if s not in SCALES]
    if unknown:
        parser.error(f"unknown scale(s) {', '.join(unknown)}: choose from {', '.join(SCALES)}")
    out = args.out or (QUICK_OUT if args.quick else FULL_OUT)
    data_dir = (args.data_dir or default_data_dir()).resolve()
    data_dir.mkdir(parents=True, exist_ok=True)
    datagen_rows = args.datagen_rows or (2_000_000 if args.quick else 10_000_000)
    engines = list(args.engines or ENGINE_ORDER)

    become_subreaper()
    results: dict[str, Any] = {"mode": "quick" if args.quick else "full", "repeats": args.repeats,
                               "runs": args.runs, "environment": environment()}
    log(f"{results['environment']['cpu']}, {cpu_count()} cores; data in {data_dir}")
    datasets = ensure_datasets(scales, data_dir)
    results["datasets"] = [{"scale": read_manifest(d)["params"]["scale"], "rows": read_manifest(d)["rows"],
                            "path": str(d)} for d in datasets]
    mid, largest = datasets[min(1, len(datasets) - 1)], datasets[-1]
    standalone = Standalone(mid)
    results["engines"] = compare_engines(datasets, args.repeats, args.runs, engines, standalone.round)
    results["standalone"] = standalone.result()
    wanted = set() if args.engines_only else set(SECTIONS) - set(args.skip)
    if args.quick:  # they need the 10 M-row files to say anything
        wanted -= {"shapes", "sweep"}
    if "profiles" in wanted:
        results["profiles"] = profiles(mid, args.runs)
    if "shapes" in wanted:
        results["shapes"] = cluster_shapes(mid, args.repeats, args.runs)
    if "sweep" in wanted:
        results["sweep"] = partition_sweep(mid, args.repeats, args.runs)
    if "small-workers" in wanted:
        results["small_workers"] = small_workers(largest)
    if "datagen" in wanted:
        runs = generator_runs(datagen_rows, args.repeats, data_dir)
        results["datagen"] = runs
        for run in runs:
            log(f"datagen {run['formats']}: {datagen_rows / run['seconds'] / 1e6:.2f} M rows/s")
        results["datagen_stages"] = partition_stages()
    results["environment"]["load_average_end"] = os.getloadavg()
    out.mkdir(parents=True, exist_ok=True)
    (out / "results.json").write_text(json.dumps(results, indent=1, default=str) + "\n")
    report.timings_frame(results["engines"]).to_csv(out / "timings.csv", index=False)
    markdown = REPO_ROOT / "docs" / "benchmarks.md" if out == FULL_OUT else out / "benchmarks.md"
    page = report.write(out, markdown)
    log(f"wrote {out / 'results.json'} and {page}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
