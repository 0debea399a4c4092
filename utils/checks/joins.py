"""Checks of joins, sorting and time: sales per segment and quarter, the top customers of a
region, the join strategy the measurements support, daily and rolling totals (notebook 06)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from utils.checks.grading import (
    DEFAULT_ATOL,
    CheckFailed,
    as_series,
    blames_changed_data,
    compare_series,
    examples,
    matches,
    passed,
    plain,
)
from utils.dataset import Dataset
from utils.machine import this_gpu


@blames_changed_data
def check_segment_quarter(result: Any, dataset: Dataset, quarter: str) -> None:
    """Total sales per customer segment in one quarter ("2025Q2"): a Series indexed by segment.
    A wrong answer that matches the all-time totals or another quarter's says so."""
    what = f"sales per segment in {quarter}"
    table = dataset.totals_by("quarter", "segment")["total_cents"] / 100.0
    quarters = list(table.index.get_level_values("quarter").unique())
    if quarter not in quarters:
        raise ValueError(f"quarter must be one of {plain(quarters)}, got {plain(quarter)!r}")
    yours = as_series(result, what, "sales_amount")
    if yours.index.nlevels != 1:
        raise CheckFailed(f"{what}: index has {yours.index.nlevels} levels; expected one row per segment")
    yours.index = yours.index.set_names("segment")
    expected = table.xs(quarter, level="quarter")
    try:
        message = compare_series(yours, expected, what, "segment")
    except CheckFailed:
        all_time = dataset.totals_by("segment")["total_cents"] / 100.0
        if matches(yours, all_time):
            raise CheckFailed(f"{what}: these are the totals over all quarters; keep only {quarter}") from None
        for other in quarters:
            if other != quarter and matches(yours, table.xs(other, level="quarter")):
                raise CheckFailed(f"{what}: these are the totals of {other}, not {quarter}; check the dates") from None
        raise
    passed(message)


@blames_changed_data
def check_top_customers_in_region(result: Any, dataset: Dataset, region: str, n: int = 10) -> None:
    """The ``n`` customers *of one region* (the customers table's region) with the highest total
    sales, highest first: a Series indexed by customer_id. The ground truth joins the generator's
    per-customer totals with the customers table read by pandas, independently of Dask."""
    what = f"top {n} customers in the {region} region"
    customers = pd.read_parquet(dataset.customers_parquet, columns=["customer_id", "region"])
    regions = sorted(customers["region"].unique())
    if region not in regions:
        raise ValueError(f"region must be one of {plain(regions)}, got {plain(region)!r}")
    home = customers.set_index("customer_id")["region"]
    totals = dataset.customer_totals()
    in_region = totals[home.reindex(totals.index).to_numpy() == region].sort_values(ascending=False, kind="stable")
    expected_rows = min(n, len(in_region))
    yours = as_series(result, what, "sales_amount")
    if len(yours) != expected_rows:
        raise CheckFailed(f"{what}: expected {expected_rows} rows, got {len(yours)}")
    elsewhere = [c for c in yours.index if home.get(c, region) != region]
    if elsewhere:
        raise CheckFailed(f"{what}: {len(elsewhere)} customers are not in the {region} region "
                          f"(e.g. {examples(elsewhere)}); filter on the customers table's region")
    unknown = [c for c in yours.index if c not in in_region.index]
    if unknown:
        raise CheckFailed(f"{what}: {len(unknown)} customers have no transactions (e.g. {examples(unknown)})")
    cutoff = in_region.iloc[expected_rows - 1]  # the n-th total: a tie with it may take the last places
    outside = [c for c in yours.index if in_region[c] < cutoff - DEFAULT_ATOL]
    if outside:
        raise CheckFailed(f"{what}: {len(outside)} customers do not belong in the top {n} (e.g. {examples(outside)})")
    truth = in_region.reindex(yours.index)
    message = compare_series(yours, truth, what, "customer")
    if (np.diff(truth.to_numpy()) > DEFAULT_ATOL).any():
        raise CheckFailed(f"{what}: right customers, wrong order; sort by total, highest first")
    passed(message)


JOIN_STRATEGIES = ("broadcast", "shuffle")


def _smallest_worker_memory(client: Any) -> int:
    """The least memory one worker can hold data in: its memory limit, or its GPU's memory where
    that is smaller (a broadcast copies the small side into every GPU). GPU memory is asked of the
    workers: the scheduler's record of a nanny-started dask-cuda worker has no ``"gpu"`` entry."""
    devices = client.run(this_gpu)
    sizes = []
    for address, worker in client.scheduler_info(n_workers=-1)["workers"].items():
        limits = [worker.get("memory_limit") or 0]
        gpu = devices.get(address)
        if gpu:
            limits.append(gpu["memory_bytes"])
        sizes.append(min(limit for limit in limits if limit) if any(limits) else 0)
    return min(sizes)


def check_join_choice(choice: Any, runs: pd.DataFrame, small_side_bytes: int, client: Any) -> None:
    """The join strategy the measurements support: ``"broadcast"`` when the small side fits easily
    (under a tenth of the smallest worker's memory) in every worker, so the big side never moves;
    else ``"shuffle"``. Task counts are quoted from ``runs``; wall times are never graded."""
    what = "your join strategy"
    if not isinstance(choice, str) or choice.strip().lower() not in JOIN_STRATEGIES:
        raise CheckFailed(f"{what}: choose one of {list(JOIN_STRATEGIES)}, got {plain(choice)!r}")
    choice = choice.strip().lower()
    missing = [name for name in JOIN_STRATEGIES if name not in runs.index]
    if missing:
        raise CheckFailed(f"{what}: the measured table lacks the {plain(missing)} row(s); run the measuring cell first")
    smallest = _smallest_worker_memory(client)
    tasks = {name: int(runs.loc[name, "tasks"]) for name in JOIN_STRATEGIES}
    small, memory = f"{small_side_bytes / 1e6:,.1f} MB", f"{smallest / 2**30:,.1f} GiB"
    if small_side_bytes * 10 <= smallest:
        if choice != "broadcast":
            raise CheckFailed(
                f"{what}: the shuffle join runs {tasks['shuffle']} tasks against {tasks['broadcast']} for the "
                f"broadcast join, but it sends every transaction between workers, while the small side ({small}) "
                f"fits easily in every worker ({memory}): broadcast the small side"
            )
        reason = (f"the small side ({small}) fits easily in every worker ({memory}), so the big side stays where "
                  f"it is ({tasks['broadcast']} tasks; task counts alone hide what a shuffle moves)")
    else:
        if choice != "shuffle":
            raise CheckFailed(f"{what}: the small side ({small}) is over a tenth of a worker's memory ({memory}); "
                              "a copy in every worker would not fit: shuffle both sides")
        reason = f"the small side ({small}) is too big to copy into every worker ({memory})"
    passed(f"✓ {what}: {choice} — {reason}")


@blames_changed_data
def check_daily_totals(result: Any, dataset: Dataset, window_days: int = 1) -> None:
    """Sales per calendar day (``window_days=1``) or summed over a trailing window of days (e.g. a
    7-day rolling sum, as ``rolling("7D")`` gives), indexed by day. Days without transactions
    count as zero; a result may include them or leave them out."""
    what = "daily sales" if window_days == 1 else f"{window_days}-day rolling sales"
    yours = as_series(result, what, "sales_amount")
    try:
        days = pd.DatetimeIndex(yours.index)
    except (TypeError, ValueError):
        raise CheckFailed(f"{what}: index the result by day (dates or timestamps)") from None
    if (days != days.normalize()).any():
        raise CheckFailed(f"{what}: the index has times of day; group by day (e.g. .dt.floor('D'))")
    yours.index = days.as_unit("ns").rename("date")
    truth = dataset.daily_totals()["total_cents"] / 100.0
    truth.index = pd.DatetimeIndex(truth.index).as_unit("ns")
    calendar = pd.date_range(truth.index.min(), truth.index.max(), freq="D", unit="ns", name="date")
    expected = truth.reindex(calendar, fill_value=0.0).rolling(window_days, min_periods=1).sum()
    if yours.index.has_duplicates:
        dupes = yours.index[yours.index.duplicated()].unique()
        raise CheckFailed(f"{what}: {len(dupes)} days appear more than once (e.g. {examples(dupes.date)})")
    extra = yours.index.difference(calendar)
    if len(extra):
        raise CheckFailed(f"{what}: {len(extra)} days outside the data's {calendar[0].date()} .. "
                          f"{calendar[-1].date()} (e.g. {examples(extra.date)})")
    missing = truth.index.difference(yours.index)
    if len(missing):
        raise CheckFailed(f"{what}: {len(missing)} days with transactions missing from your result "
                          f"(e.g. {examples(missing.date)})")
    passed(compare_series(yours, expected.reindex(yours.index), what, "day"))
