"""Paths and default option values for ``python -m utils.gpu_check``, with the reasons for them."""

from __future__ import annotations

from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
DEFAULT_REPORT_DIR = REPO_ROOT / "reports"

# Defaults, and why:
# - 20 M rows for the CuPy/NumPy twin: 320 MB on the host and on the device (fits any CUDA GPU
#   with 4 GB or more), and the CPU ground truth takes a few seconds. At this size Dask's
#   per-task overhead is a visible part of both timings: the check is about exact results on
#   the GPU; for a throughput comparison raise --rows (e.g. 200_000_000 on a 40 GB+ GPU).
# - 100 000 customers: the `small` preset's, so the bincount bins match the laptop dataset.
# - the notebooks at the `tiny` scale: the same scale CI uses, so the stored outputs compare;
#   the cudf-vs-pandas timing at `small` (10 M rows), the laptop default, where it means
#   something (tiny's 20 000 rows measure only overhead).
DEFAULT_ROWS = 20_000_000
DEFAULT_CUSTOMERS = 100_000
MIN_PARTITIONS = 16
DEFAULT_NOTEBOOK_SCALE = "tiny"
DEFAULT_TIMING_SCALE = "small"
DEFAULT_REPEATS = 3
DEFAULT_NOTEBOOK_TIMEOUT_S = 3600
METRICS_WAIT_S = 20.0  # workers send GPU metrics with their heartbeats (about every second)
