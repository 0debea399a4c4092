"""Notebook 08's checks (a feature against the ground truth, a model against two baselines) pass
on right answers computed here with plain pandas and fail on wrong ones, saying what differs."""

from __future__ import annotations

import dask.dataframe as dd
import numpy as np
import pandas as pd
import pytest

from utils import checks
from utils.checks import CheckFailed


@pytest.fixture(scope="module")
def transactions(tiny_dataset) -> pd.DataFrame:
    return pd.read_parquet(tiny_dataset.parquet_dir)


def _spend(transactions: pd.DataFrame, start: str, end: str) -> pd.Series:
    when = transactions["timestamp"]
    rows = transactions[(when >= pd.Timestamp(start)) & (when < pd.Timestamp(end))]
    return rows.groupby("customer_id")["sales_amount"].sum()


@pytest.fixture(scope="module")
def quarters(transactions) -> pd.DataFrame:
    """Spend per customer (rows) and quarter (columns 2024Q1..2025Q4), 0 where none: plain pandas."""
    period = transactions["timestamp"].dt.to_period("Q").astype(str)
    table = transactions.assign(quarter=period).pivot_table(
        index="customer_id", columns="quarter", values="sales_amount", aggfunc="sum", fill_value=0.0
    )
    return table


# --- spend per customer in one quarter ---------------------------------------------------------


def test_customer_quarter_right_answer_passes(transactions, tiny_dataset, capsys):
    q3 = _spend(transactions, "2025-07-01", "2025-10-01")
    checks.check_customer_quarter(q3, tiny_dataset, "2025Q3")
    assert capsys.readouterr().out.startswith("✓ spend per customer in 2025Q3: all ")
    everyone = q3.reindex(transactions["customer_id"].unique(), fill_value=0.0)  # a left join's zeros
    checks.check_customer_quarter(everyone, tiny_dataset, "2025Q3")
    checks.check_customer_quarter(q3.to_frame(), tiny_dataset, "2025Q3")


def test_customer_quarter_names_the_usual_mistakes(transactions, tiny_dataset):
    q2 = _spend(transactions, "2025-04-01", "2025-07-01")
    with pytest.raises(CheckFailed, match="totals of 2025Q2, not 2025Q3"):
        checks.check_customer_quarter(q2, tiny_dataset, "2025Q3")
    all_time = transactions.groupby("customer_id")["sales_amount"].sum()
    with pytest.raises(CheckFailed, match="totals over all quarters; keep only 2025Q3"):
        checks.check_customer_quarter(all_time, tiny_dataset, "2025Q3")
    q3 = _spend(transactions, "2025-07-01", "2025-10-01")
    off = q3.copy()
    off.iloc[0] *= 1.01
    with pytest.raises(CheckFailed, match="values off for 1 of"):
        checks.check_customer_quarter(off, tiny_dataset, "2025Q3")
    with pytest.raises(CheckFailed, match="missing from your result"):
        checks.check_customer_quarter(q3.iloc[1:], tiny_dataset, "2025Q3")
    lazy = dd.from_pandas(transactions, npartitions=2).groupby("customer_id")["sales_amount"].sum()
    with pytest.raises(CheckFailed, match="lazy Dask object"):
        checks.check_customer_quarter(lazy, tiny_dataset, "2025Q3")
    with pytest.raises(ValueError, match="quarter must be one of"):
        checks.check_customer_quarter(q3, tiny_dataset, "2026Q1")


# --- a model against both baselines ------------------------------------------------------------


def _buyers(quarters: pd.DataFrame) -> pd.DataFrame:
    earlier = quarters.loc[:, :"2025Q3"]
    return quarters[(earlier > 0).any(axis=1)]


def test_beats_baselines_passes_a_better_prediction(quarters, tiny_dataset, capsys):
    buyers = _buyers(quarters)
    exact = buyers["2025Q4"]
    checks.check_beats_baselines(exact, tiny_dataset, "2025Q4", 0.05)
    assert capsys.readouterr().out.startswith("✓ predicted spend in 2025Q4: MAE $0.00 over ")
    last = buyers["2025Q3"]
    halfway = (exact + last) / 2  # half the baseline's error for every customer
    checks.check_beats_baselines(halfway, tiny_dataset, "2025Q4", 0.05)


def test_beats_baselines_refuses_baselines_and_near_misses(quarters, tiny_dataset):
    buyers = _buyers(quarters)
    with pytest.raises(CheckFailed, match="'same as last quarter' baseline itself"):
        checks.check_beats_baselines(buyers["2025Q3"], tiny_dataset, "2025Q4", 0.05)
    mean = buyers.loc[:, :"2025Q3"].mean(axis=1)
    with pytest.raises(CheckFailed, match="'mean of earlier quarters' baseline itself"):
        checks.check_beats_baselines(mean, tiny_dataset, "2025Q4", 0.05)
    with pytest.raises(CheckFailed, match="does not beat both baselines by 5%"):
        checks.check_beats_baselines(buyers["2025Q3"] * 1.02, tiny_dataset, "2025Q4", 0.05)
    exact = buyers["2025Q4"]
    with pytest.raises(CheckFailed, match="does not beat both baselines by 5%"):  # 3 % better is not enough
        checks.check_beats_baselines(0.03 * exact + 0.97 * buyers["2025Q3"], tiny_dataset, "2025Q4", 0.05)


def test_beats_baselines_refuses_other_shapes(quarters, tiny_dataset):
    buyers = _buyers(quarters)
    exact = buyers["2025Q4"]
    with pytest.raises(CheckFailed, match="are missing"):
        checks.check_beats_baselines(exact.iloc[1:], tiny_dataset, "2025Q4", 0.05)
    newcomers = quarters.index.difference(buyers.index)
    if len(newcomers):
        with pytest.raises(CheckFailed, match="bought nothing before 2025Q4"):
            checks.check_beats_baselines(quarters["2025Q4"], tiny_dataset, "2025Q4", 0.05)
    with pytest.raises(CheckFailed, match="NaN or infinite"):
        checks.check_beats_baselines(exact.where(exact.index != exact.index[0], np.nan), tiny_dataset, "2025Q4", 0.05)
    with pytest.raises(ValueError, match="target_quarter must be one of"):
        checks.check_beats_baselines(exact, tiny_dataset, "2024Q2", 0.05)
