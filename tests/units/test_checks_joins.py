"""Notebook 06's checks (joins, sorting, time) pass on right answers computed here with plain
pandas, and fail on wrong ones with messages that say what differs."""

from __future__ import annotations

import dask.dataframe as dd
import pandas as pd
import pytest

from utils import checks
from utils.checks import CheckFailed


@pytest.fixture(scope="module")
def enriched(tiny_dataset) -> pd.DataFrame:
    """Every transaction with its customer's segment and region (pandas, no Dask)."""
    transactions = pd.read_parquet(tiny_dataset.parquet_dir)
    return transactions.merge(pd.read_parquet(tiny_dataset.customers_parquet), on="customer_id", how="left")


def _quarter(frame: pd.DataFrame, start: str, end: str) -> pd.DataFrame:
    return frame[(frame["timestamp"] >= pd.Timestamp(start)) & (frame["timestamp"] < pd.Timestamp(end))]


# --- total sales per segment in one quarter ----------------------------------------------------


def test_segment_quarter_right_answer_passes(enriched, tiny_dataset, capsys):
    q2 = _quarter(enriched, "2025-04-01", "2025-07-01").groupby("segment")["sales_amount"].sum()
    checks.check_segment_quarter(q2, tiny_dataset, "2025Q2")
    assert capsys.readouterr().out.startswith("✓ sales per segment in 2025Q2: all 4 segments match")
    checks.check_segment_quarter(q2.to_frame(), tiny_dataset, "2025Q2")  # a one-column frame is fine


def test_segment_quarter_names_the_usual_mistakes(enriched, tiny_dataset):
    all_time = enriched.groupby("segment")["sales_amount"].sum()
    with pytest.raises(CheckFailed, match="totals over all quarters; keep only 2025Q2"):
        checks.check_segment_quarter(all_time, tiny_dataset, "2025Q2")
    q1 = _quarter(enriched, "2025-01-01", "2025-04-01").groupby("segment")["sales_amount"].sum()
    with pytest.raises(CheckFailed, match="totals of 2025Q1, not 2025Q2"):
        checks.check_segment_quarter(q1, tiny_dataset, "2025Q2")
    q2 = _quarter(enriched, "2025-04-01", "2025-07-01").groupby("segment")["sales_amount"].sum()
    with pytest.raises(CheckFailed, match="values off for 1 of 4 segments; e.g. segment premium"):
        checks.check_segment_quarter(q2.mul(pd.Series({"premium": 1.01})).fillna(q2), tiny_dataset, "2025Q2")
    with pytest.raises(CheckFailed, match="1 segments missing"):
        checks.check_segment_quarter(q2.drop("budget"), tiny_dataset, "2025Q2")


def test_segment_quarter_refuses_other_shapes(enriched, tiny_dataset):
    by_two = _quarter(enriched, "2025-04-01", "2025-07-01").groupby(["segment", "region"])["sales_amount"].sum()
    with pytest.raises(CheckFailed, match="index has 2 levels"):
        checks.check_segment_quarter(by_two, tiny_dataset, "2025Q2")
    lazy = dd.from_pandas(enriched, npartitions=2).groupby("segment")["sales_amount"].sum()
    with pytest.raises(CheckFailed, match="lazy Dask object"):
        checks.check_segment_quarter(lazy, tiny_dataset, "2025Q2")
    with pytest.raises(ValueError, match="quarter must be one of"):
        checks.check_segment_quarter(pd.Series(dtype=float), tiny_dataset, "2026Q1")


# --- top customers of one region ---------------------------------------------------------------


def _region_totals(enriched: pd.DataFrame, region: str) -> pd.Series:
    rows = enriched[enriched["region"] == region]
    return rows.groupby("customer_id")["sales_amount"].sum().sort_values(ascending=False)


def test_top_customers_in_region_right_answer_passes(enriched, tiny_dataset, capsys):
    for region in sorted(enriched["region"].unique()):
        checks.check_top_customers_in_region(_region_totals(enriched, region).head(10), tiny_dataset, region)
    assert capsys.readouterr().out.count("all 10 customers match the ground truth") == 5
    checks.check_top_customers_in_region(_region_totals(enriched, "west").head(3), tiny_dataset, "west", n=3)


def test_top_customers_in_region_wrong_answers(enriched, tiny_dataset):
    overall = enriched.groupby("customer_id")["sales_amount"].sum().nlargest(10)
    with pytest.raises(CheckFailed, match=r"customers are not in the west region \(e\.g\. "):
        checks.check_top_customers_in_region(overall, tiny_dataset, "west")
    west = _region_totals(enriched, "west")
    with pytest.raises(CheckFailed, match="right customers, wrong order"):
        checks.check_top_customers_in_region(west.head(10).iloc[::-1], tiny_dataset, "west")
    with pytest.raises(CheckFailed, match="expected 10 rows, got 9"):
        checks.check_top_customers_in_region(west.head(9), tiny_dataset, "west")
    with pytest.raises(CheckFailed, match="do not belong in the top 10"):
        checks.check_top_customers_in_region(west.iloc[1:11], tiny_dataset, "west")
    off = west.head(10).copy()
    off.iloc[4] += 1.0
    with pytest.raises(CheckFailed, match="values off for 1 of 10 customers"):
        checks.check_top_customers_in_region(off, tiny_dataset, "west")
    with pytest.raises(ValueError, match="region must be one of"):
        checks.check_top_customers_in_region(west.head(10), tiny_dataset, "atlantis")


# --- the join strategy, chosen from measurements -----------------------------------------------


class FakeClient:
    """Two workers of 1 GiB each, optionally with a GPU of ``gpu_bytes``. As with real dask-cuda
    workers, the scheduler's record holds no GPU entry; the workers report their GPU when asked
    (``client.run(utils.machine.this_gpu)``)."""

    def __init__(self, gpu_bytes: int | None = None) -> None:
        self.gpu_bytes = gpu_bytes

    def scheduler_info(self, n_workers=-1):
        return {"workers": {"a": {"memory_limit": 2**30}, "b": {"memory_limit": 2**30}}}

    def run(self, function):
        assert function.__name__ == "this_gpu", function
        gpu = {"name": "a GPU", "uuid": "GPU-0", "memory_bytes": self.gpu_bytes} if self.gpu_bytes else None
        return {"a": gpu, "b": gpu}


RUNS = pd.DataFrame(
    {"tasks": [20, 31, 20], "seconds": [0.1, 0.3, 0.2]},
    index=pd.Index(["one partition", "broadcast", "shuffle"], name="strategy"),
)


def test_join_choice_follows_the_small_side_and_the_memory(capsys):
    checks.check_join_choice("broadcast", RUNS, 50_000, FakeClient())
    assert "✓ your join strategy: broadcast" in capsys.readouterr().out
    with pytest.raises(CheckFailed, match="runs 20 tasks against 31 .* broadcast the small side"):
        checks.check_join_choice("shuffle", RUNS, 50_000, FakeClient())
    with pytest.raises(CheckFailed, match="over a tenth of a worker's memory .* shuffle both sides"):
        checks.check_join_choice("broadcast", RUNS, 2**29, FakeClient())
    checks.check_join_choice(" Shuffle ", RUNS, 2**29, FakeClient())


def test_join_choice_counts_gpu_memory_when_it_is_smaller():
    with pytest.raises(CheckFailed, match="shuffle both sides"):
        checks.check_join_choice("broadcast", RUNS, 50_000_000, FakeClient(gpu_bytes=100_000_000))
    checks.check_join_choice("broadcast", RUNS, 50_000_000, FakeClient(gpu_bytes=80 * 10**9))


def test_join_choice_refuses_what_was_not_measured():
    for bad in ("hash", 1, None, True):
        with pytest.raises(CheckFailed, match=r"choose one of \['broadcast', 'shuffle'\]"):
            checks.check_join_choice(bad, RUNS, 50_000, FakeClient())
    with pytest.raises(CheckFailed, match=r"lacks the \['shuffle'\] row"):
        checks.check_join_choice("broadcast", RUNS.drop("shuffle"), 50_000, FakeClient())


# --- daily totals and rolling windows ----------------------------------------------------------


@pytest.fixture(scope="module")
def daily(enriched) -> pd.Series:
    return enriched.groupby(enriched["timestamp"].dt.floor("D"))["sales_amount"].sum()


def test_daily_and_rolling_totals_pass(daily, tiny_dataset, capsys):
    checks.check_daily_totals(daily, tiny_dataset)
    checks.check_daily_totals(daily.rolling("7D").sum(), tiny_dataset, window_days=7)
    checks.check_daily_totals(daily.cumsum(), tiny_dataset, window_days=len(daily))
    checks.check_daily_totals(daily.set_axis(daily.index.date), tiny_dataset)  # dates work as well as timestamps
    out = capsys.readouterr().out
    assert "✓ daily sales: all 731 days match" in out and "✓ 7-day rolling sales: all 731 days match" in out


def test_daily_totals_wrong_answers(daily, tiny_dataset):
    with pytest.raises(CheckFailed, match="values off"):
        checks.check_daily_totals(daily, tiny_dataset, window_days=7)
    with pytest.raises(CheckFailed, match="1 days with transactions missing"):
        checks.check_daily_totals(daily.iloc[1:], tiny_dataset)
    later = pd.concat([daily, pd.Series([1.0], index=pd.DatetimeIndex(["2026-01-05"]))])
    with pytest.raises(CheckFailed, match=r"1 days outside the data's 2024-01-01 \.\. 2025-12-31"):
        checks.check_daily_totals(later, tiny_dataset)
    with pytest.raises(CheckFailed, match="times of day"):
        checks.check_daily_totals(daily.set_axis(daily.index + pd.Timedelta(hours=3)), tiny_dataset)
    with pytest.raises(CheckFailed, match="index the result by day"):
        checks.check_daily_totals(daily.reset_index(drop=True).set_axis(["x"] * len(daily)), tiny_dataset)
    with pytest.raises(CheckFailed, match="appear more than once"):
        checks.check_daily_totals(pd.concat([daily, daily.iloc[:2]]), tiny_dataset)
