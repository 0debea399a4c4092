"""``python -m utils.gpu_check``: parse the options, refuse early without a GPU, run, report."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from utils.gpu_check.catalog import CHECKS
from utils.gpu_check.defaults import (
    DEFAULT_CUSTOMERS,
    DEFAULT_NOTEBOOK_SCALE,
    DEFAULT_NOTEBOOK_TIMEOUT_S,
    DEFAULT_REPEATS,
    DEFAULT_REPORT_DIR,
    DEFAULT_ROWS,
    DEFAULT_TIMING_SCALE,
    MIN_PARTITIONS,
)
from utils.gpu_check.environment import collect_environment
from utils.gpu_check.prerequisites import expected_gpu_workers, preflight
from utils.gpu_check.report import build_report, write_report
from utils.gpu_check.runner import Context, run_checks


def _positive_int(text: str) -> int:
    value = int(text.replace("_", ""))
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {text}")
    return value


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    from utils.scales import SCALES

    parser = argparse.ArgumentParser(
        prog="python -m utils.gpu_check",
        description="Run the course's GPU path on this machine's NVIDIA GPU(s) and write "
        "reports/gpu-check.{md,json}. Exits 2 at once where no GPU is visible.",
    )
    parser.add_argument("--report-dir", type=Path, default=DEFAULT_REPORT_DIR,
                        help="where to write gpu-check.md and gpu-check.json (default: reports/)")
    parser.add_argument("--skip-notebooks", action="store_true", help="leave out check 4b")
    parser.add_argument("--scale", choices=list(SCALES), default=DEFAULT_NOTEBOOK_SCALE,
                        help="COURSE_SCALE for the notebooks (default: tiny, as in CI)")
    parser.add_argument("--timing-scale", choices=list(SCALES), default=DEFAULT_TIMING_SCALE,
                        help="dataset for the cudf-vs-pandas timing (default: small, 10 M rows)")
    parser.add_argument("--rows", type=_positive_int, default=DEFAULT_ROWS,
                        help="rows for the CuPy/NumPy twin (default: 20_000_000)")
    parser.add_argument("--partitions", type=_positive_int, default=None,
                        help=f"partitions for the twin (default: max({MIN_PARTITIONS}, 2 x workers))")
    parser.add_argument("--customers", type=_positive_int, default=DEFAULT_CUSTOMERS,
                        help="distinct customer ids for the twin (default: 100_000)")
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--repeats", type=_positive_int, default=DEFAULT_REPEATS,
                        help="timed runs of each twin; the best is compared (default: 3)")
    parser.add_argument("--notebook-timeout", type=_positive_int, default=DEFAULT_NOTEBOOK_TIMEOUT_S,
                        help="seconds for the whole notebook run (default: 3600)")
    parser.add_argument("--scheduler-address", default=None,
                        help="check an existing cluster (e.g. `dask cuda worker` processes) "
                        "instead of starting LocalCUDACluster")
    args = parser.parse_args(argv)
    if args.partitions is not None and args.partitions > args.rows:
        parser.error("--partitions cannot exceed --rows")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    """Run every check and write the report; the exit status says whether a check failed."""
    argv = list(sys.argv[1:] if argv is None else argv)
    args = parse_args(argv)
    problem = preflight(args)
    if problem:
        print(problem, file=sys.stderr)
        return 2
    environment = collect_environment(args)
    gpus = environment["gpus"]
    print(f"gpu-check on {environment['hostname']}: {gpus.get('count', 0)} GPU(s) "
          f"{', '.join(d['name'] for d in gpus.get('devices', []))}", flush=True)
    ctx = Context(args, expected_gpus=expected_gpu_workers())
    try:
        results = run_checks(CHECKS, ctx, progress=lambda line: print(line, flush=True))
    finally:
        ctx.release_cluster()
    report = build_report(environment, results, argv)
    json_path, md_path = write_report(report, args.report_dir)
    print(f"{report['outcome'].upper()}: {report['counts']}; report: {md_path} and {json_path.name}")
    return report["exit_code"]
