"""``make gpu-check``: run the course's GPU path on a real NVIDIA GPU and write a report.

    python -m utils.gpu_check [--report-dir reports] [--skip-notebooks] [--rows N] ...

Without an NVIDIA GPU it stops at once with one ``error:`` line and exit status 2, and writes
nothing: a CPU run is never reported as a GPU run. With one it runs the checks in ``catalog``
independently and writes ``reports/gpu-check.{json,md}``. Statuses: ``pass``, ``fail``, ``skip``
(left out on request), ``not run`` (a prerequisite such as cudf is missing). Exit status: 0 when
no check failed, 1 when one did, 2 when nothing could run. GPU libraries are imported inside
functions, so the package imports on any machine.

Modules: ``cli`` (options, ``main``), ``prerequisites`` (preflight), ``runner`` (statuses, running
checks), ``cluster_checks`` (1a, 1b, 2), ``groupby_checks`` (3, 4a), ``notebook_check`` (4b),
``catalog`` (their order), ``environment`` and ``report`` (what is written), ``defaults``.
"""

from utils.gpu_check.catalog import CHECKS
from utils.gpu_check.cli import main, parse_args
from utils.gpu_check.cluster_checks import check_backend_choice, check_cluster, check_dashboard, is_bokeh_page
from utils.gpu_check.environment import collect_environment
from utils.gpu_check.groupby_checks import (
    bincount_groupby,
    check_cudf_groupby,
    check_cupy_groupby,
    compare_cents,
    ground_truth_cents,
    host_arrays,
    partitions_per_worker,
    time_groupby,
)
from utils.gpu_check.notebook_check import check_notebooks, parse_junit
from utils.gpu_check.prerequisites import cudf_missing, expected_gpu_workers, preflight
from utils.gpu_check.report import build_report, render_markdown, write_report
from utils.gpu_check.runner import (
    FAIL,
    NOT_RUN,
    PASS,
    SKIP,
    STATUSES,
    Check,
    CheckResult,
    Context,
    NotRun,
    Skipped,
    exit_code,
    run_check,
    run_checks,
)

__all__ = [
    "CHECKS",
    "FAIL",
    "NOT_RUN",
    "PASS",
    "SKIP",
    "STATUSES",
    "Check",
    "CheckResult",
    "Context",
    "NotRun",
    "Skipped",
    "bincount_groupby",
    "build_report",
    "check_backend_choice",
    "check_cluster",
    "check_cudf_groupby",
    "check_cupy_groupby",
    "check_dashboard",
    "check_notebooks",
    "collect_environment",
    "compare_cents",
    "cudf_missing",
    "exit_code",
    "expected_gpu_workers",
    "ground_truth_cents",
    "host_arrays",
    "is_bokeh_page",
    "main",
    "parse_args",
    "parse_junit",
    "partitions_per_worker",
    "preflight",
    "render_markdown",
    "run_check",
    "run_checks",
    "time_groupby",
    "write_report",
]
