"""Checks of the training notebook: spend per customer in a quarter, and predictions that beat
two baselines computed here from the ground truth (notebook 08)."""

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


def _customer_quarter_table(dataset: Dataset) -> pd.DataFrame:
    """Ground truth in dollars, one row per customer who ever bought, one column per quarter
    ("2024Q1", ...), 0.0 where the customer bought nothing that quarter."""
    truth = dataset.customer_quarter_totals()
    table = truth.pivot(index="customer_id", columns="quarter", values="total_cents")
    return table.reindex(columns=sorted(truth["quarter"].unique())).fillna(0) / 100.0


@blames_changed_data
def check_customer_quarter(result: Any, dataset: Dataset, quarter: str) -> None:
    """Exercise: each customer's total spend in one quarter ("2025Q3"), a Series indexed by
    customer_id, for the customers who bought in that quarter (rows of 0.0 for the others, as a
    left join gives them, are ignored). Another quarter's or the all-time totals are named as such."""
    table = _customer_quarter_table(dataset)
    if quarter not in table.columns:
        raise ValueError(f"quarter must be one of {plain(list(table.columns))}, got {plain(quarter)!r}")
    what = f"spend per customer in {quarter}"
    yours = as_series(result, what, "sales_amount")
    if yours.index.nlevels != 1:
        raise CheckFailed(f"{what}: index has {yours.index.nlevels} levels; expected one row per customer_id")
    yours = yours[yours.to_numpy(dtype=np.float64) != 0]
    yours.index = yours.index.set_names("customer_id")

    def nonzero(column: pd.Series) -> pd.Series:
        return column[column != 0]

    try:
        message = compare_series(yours, nonzero(table[quarter]), what, "customer")
    except CheckFailed:
        if matches(yours, nonzero(table.sum(axis=1))):
            raise CheckFailed(f"{what}: these are the totals over all quarters; keep only {quarter}") from None
        for other in table.columns:
            if other != quarter and matches(yours, nonzero(table[other])):
                raise CheckFailed(f"{what}: these are the totals of {other}, not {quarter}; check the dates") from None
        raise
    passed(message)


@blames_changed_data
def check_beats_baselines(predictions: Any, dataset: Dataset, target_quarter: str, margin: float) -> None:
    """Exercise: predicted spend in ``target_quarter`` for every customer who bought in an earlier
    quarter (a Series indexed by customer_id), whose mean absolute error (MAE) against the ground
    truth is at least ``margin`` (0.05 = 5 %) below both baselines, which this check computes itself
    from the ground truth: "same as last quarter" (the previous quarter's spend) and "mean of
    earlier quarters" (over every quarter before the target, zeros included)."""
    table = _customer_quarter_table(dataset)
    if target_quarter not in table.columns or table.columns.get_loc(target_quarter) < 2:
        raise ValueError(f"target_quarter must be one of {plain(list(table.columns[2:]))}, "
                         f"got {plain(target_quarter)!r}")
    earlier = table.iloc[:, : table.columns.get_loc(target_quarter)]
    buyers = earlier.index[(earlier > 0).any(axis=1)]
    want = table.loc[buyers, target_quarter].to_numpy(dtype=np.float64)
    baselines = {
        "same as last quarter": earlier.loc[buyers].iloc[:, -1].to_numpy(dtype=np.float64),
        "mean of earlier quarters": earlier.loc[buyers].mean(axis=1).to_numpy(dtype=np.float64),
    }
    what = f"predicted spend in {target_quarter}"
    yours = as_series(predictions, what)
    if yours.index.nlevels != 1:
        raise CheckFailed(f"{what}: index has {yours.index.nlevels} levels; expected one row per customer_id")
    if yours.index.has_duplicates:
        dupes = yours.index[yours.index.duplicated()].unique()
        raise CheckFailed(f"{what}: {len(dupes)} customer_ids appear more than once (e.g. {examples(dupes)})")
    missing = buyers.difference(yours.index)
    if len(missing):
        raise CheckFailed(f"{what}: {len(missing)} of the {len(buyers)} customers who bought before "
                          f"{target_quarter} are missing (e.g. {examples(missing)})")
    extra = yours.index.difference(buyers)
    if len(extra):
        raise CheckFailed(f"{what}: {len(extra)} customers who bought nothing before {target_quarter} "
                          f"(e.g. {examples(extra)}): there is nothing to predict them from")
    got = yours.reindex(buyers).to_numpy(dtype=np.float64)
    if not np.isfinite(got).all():
        raise CheckFailed(f"{what}: {int((~np.isfinite(got)).sum())} predictions are NaN or infinite")
    mae = float(np.abs(got - want).mean())
    for name, baseline in baselines.items():
        if np.allclose(got, baseline, atol=DEFAULT_ATOL):
            raise CheckFailed(f"{what}: these are the '{name}' baseline itself (MAE ${mae:,.2f}); a model must beat it")
    errors = {name: float(np.abs(baseline - want).mean()) for name, baseline in baselines.items()}
    best = min(errors.values())
    needed = (1 - margin) * best
    shown = ", ".join(f"{name} ${error:,.2f}" for name, error in errors.items())
    if mae > needed:
        raise CheckFailed(f"{what}: your MAE ${mae:,.2f} does not beat both baselines by {margin:.0%} (MAE {shown}; "
                          f"needed at most ${needed:,.2f})")
    passed(f"✓ {what}: MAE ${mae:,.2f} over {len(buyers):,} customers, {1 - mae / best:.0%} below the better "
            f"baseline (MAE {shown})")
