"""How big a dataset is on disk and how much memory generating it takes.

The generator refuses before writing anything when disk or memory is short; the doctor asks the
same questions before a class starts. Both read the measured constants here.
"""

from __future__ import annotations

import math
from pathlib import Path

import psutil

from utils.datagen.params import Params

# Bytes per row on disk, measured on the `small` scale (CSV ~51 B, Parquet ~7.4 B), plus margin; and
# per customer, the customers table in both formats (~45 B) and the ground truth (~70 B).
BYTES_PER_ROW = {"csv": 58, "parquet": 10}
BYTES_PER_CUSTOMER = 150
# Peak memory of one process generating and writing one partition (both formats): a fixed part plus
# a part per row and per customer. Measured in fresh processes (Linux x86_64, numpy 2.4, pyarrow 26,
# format 3): a worker's own memory after imports and a warm-up partition is ~83 MB (psutil USS); on
# top of that, the ru_maxrss peak grows by 23 / 122 / 237 / 833 MB for partitions of 50 k / 500 k /
# 1 M / 4 M rows (~205 B/row plus up to ~30 MB), and by 237 -> 292 -> 1,096 MB for 1 M rows when
# customers go from 20 k to 1 M to 10 M (~86 B/customer: the customers' attributes, each month's
# activity and one cumulative weight per customer). Rounded up for margin.
PEAK_BYTES_FIXED = 140_000_000
PEAK_BYTES_PER_ROW = 220
PEAK_BYTES_PER_CUSTOMER = 110


def estimated_bytes(params: Params) -> int:
    """Disk the dataset of ``params`` takes (the free-space check before writing)."""
    return params.rows * sum(BYTES_PER_ROW[f] for f in params.formats) + params.customers * BYTES_PER_CUSTOMER


def partition_peak_bytes(params: Params) -> int:
    """Memory one process needs at its peak to generate and write one partition."""
    rows = math.ceil(params.rows / params.partitions)
    return PEAK_BYTES_FIXED + rows * PEAK_BYTES_PER_ROW + params.customers * PEAK_BYTES_PER_CUSTOMER


def available_memory() -> int:
    """Bytes this process may still allocate: the machine's available memory, lowered to the
    container's limit (cgroup v2, as on Binder) when one is set."""
    available = psutil.virtual_memory().available
    try:
        limit = Path("/sys/fs/cgroup/memory.max").read_text().strip()
        if limit != "max":
            used = int(Path("/sys/fs/cgroup/memory.current").read_text())
            available = min(available, max(0, int(limit) - used))
    except (OSError, ValueError):
        pass
    return available

