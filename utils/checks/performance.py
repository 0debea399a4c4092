"""Checks of how a computation ran, read from its task stream and plan: tasks per prefix, one
read per partition, the split_out the measurements support, a fast pipeline (notebooks 03 and 04)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from dask.utils import key_split
from distributed import get_task_stream

from utils.checks.grading import (
    CheckFailed,
    as_series,
    blames_changed_data,
    check_scalar,
    compare_series,
    passed,
    plain,
    worker_records,
)
from utils.checks.totals import check_grouped, check_total_sales
from utils.dataset import Dataset
from utils.profiling import time_call


def task_records(task_stream: Any) -> list[dict[str, Any]]:
    """The records of a ``get_task_stream`` context (``ts``) or its ``ts.data`` list."""
    records = getattr(task_stream, "data", task_stream)
    if not isinstance(records, list):
        raise CheckFailed("expected the object of `with get_task_stream(client=client) as ts:` (or ts.data)")
    return records


def compute_intervals_per_prefix(task_stream: Any) -> pd.Series:
    """How many ``compute`` intervals each task prefix has in a recorded task stream."""
    counts: dict[str, int] = {}
    for record in task_records(task_stream):
        for interval in record.get("startstops", ()):
            if interval["action"] == "compute":
                prefix = key_split(record["key"])
                counts[prefix] = counts.get(prefix, 0) + 1
    return pd.Series(counts, dtype="int64").rename_axis("prefix").sort_index()


def _read_prefixes(task_stream: Any) -> pd.Series:
    counts = compute_intervals_per_prefix(task_stream)
    return counts[counts.index.str.contains("read")]


def check_tasks_per_prefix(answer: Any, task_stream: Any) -> None:
    """``compute`` intervals per task prefix of a recorded task stream (a Series indexed by prefix)."""
    expected = compute_intervals_per_prefix(task_stream).astype(float)
    yours = as_series(answer, "compute intervals per prefix").astype(float)
    passed(compare_series(yours, expected, "compute intervals per task prefix", "prefix", atol=0))


@blames_changed_data
def check_one_pass(sales_total: Any, n_over_100: Any, task_stream: Any, dataset: Dataset, partitions: int) -> None:
    """Total sales and the count of sales over $100, computed from one read of every partition."""
    check_total_sales(sales_total, dataset)
    check_scalar(n_over_100, dataset.answers()["over_100_count"], "transactions over $100", rtol=0, atol=0.5)
    reads = int(_read_prefixes(task_stream).sum())
    if reads == 0:
        raise CheckFailed("one pass: no read tasks were recorded; compute inside the "
                          "`with get_task_stream(client=client) as one_pass_ts:` block")
    if reads != partitions:
        raise CheckFailed(f"one pass: {reads} read tasks for {partitions} CSV partitions, so the files were read "
                          f"{reads / partitions:.3g} times; compute both results with one dask.compute(...) call")
    passed(f"✓ one pass: {reads} read tasks for {partitions} partitions — every partition read once")


def check_split_out_choice(choice: Any, runs: pd.DataFrame, result_bytes: int, client: Any) -> None:
    """The ``split_out`` the measurements support: the fewest tasks while the result fits easily
    (under a tenth of the smallest worker's memory limit) in one output partition, else > 1."""
    what = "your split_out choice"
    if isinstance(choice, bool) or not isinstance(choice, int | np.integer) or choice < 1:
        raise CheckFailed(f"{what}: split_out must be a whole number >= 1, got {plain(choice)!r}")
    measured = list(runs.index)
    if choice not in measured:
        raise CheckFailed(f"{what}: you measured split_out in {plain(measured)}; choose one of them")
    smallest = min(w["memory_limit"] for w in worker_records(client))
    fits = result_bytes * 10 <= smallest
    if fits:
        fewest = int(runs["tasks"].idxmin())
        if choice != fewest:
            raise CheckFailed(
                f"{what}: split_out={choice} runs {int(runs.loc[choice, 'tasks'])} tasks against "
                f"{int(runs.loc[fewest, 'tasks'])} for split_out={fewest}, and the result "
                f"({result_bytes / 1e3:,.0f} kB) fits easily in one worker ({smallest / 2**30:.1f} GiB): "
                "the extra partitions buy nothing"
            )
        reason = f"the result ({result_bytes / 1e3:,.0f} kB) fits in one worker and needs the fewest tasks"
    else:
        if choice == 1:
            raise CheckFailed(f"{what}: the result ({result_bytes / 1e6:,.0f} MB) is over a tenth of a worker's "
                              f"memory ({smallest / 1e6:,.0f} MB); spread it with split_out > 1")
        reason = "the result is too big for one worker"
    passed(f"✓ {what}: split_out={choice} — {reason}")


@blames_changed_data
def check_fast_pipeline(pipeline: Any, client: Any, dataset: Dataset) -> None:
    """Run the learner's ``fast_pipeline()`` under a task stream: exact per-category totals, Parquet
    only, each Parquet file read at most once, the files' own partitions (no repartition)."""
    what = "fast_pipeline"
    if not callable(pipeline):
        raise CheckFailed(f"{what}: define a function `fast_pipeline()` that returns the totals")
    with get_task_stream(client=client) as recorded:
        result, seconds = time_call(pipeline)
    check_grouped(result, dataset, "product_category")
    counts = compute_intervals_per_prefix(recorded)
    reads = counts[counts.index.str.contains("read")]
    csv_reads = int(reads[reads.index.str.contains("csv")].sum())
    if csv_reads:
        raise CheckFailed(f"{what}: still {csv_reads} CSV read tasks; read Parquet with only the columns you need")
    files = len(list(Path(dataset.parquet_dir).glob("*.parquet")))
    if int(reads.sum()) > files:
        raise CheckFailed(f"{what}: {int(reads.sum())} Parquet read tasks for {files} files, so the data was read "
                          f"more than once; one groupby().sum() computes every category in one pass")
    if any("repartition" in prefix for prefix in counts.index):
        raise CheckFailed(f"{what}: it repartitions; keep the files' own partitions")
    passed(f"✓ {what}: {int(counts.sum())} tasks, {int(reads.sum())} Parquet reads, one pass, "
            f"{seconds:.2f} s (timing shown, not graded)")
