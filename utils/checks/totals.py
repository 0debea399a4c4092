"""Checks of the course's answers about the data: totals per customer, per group, the top
customers, counts and means (notebooks 00, 02 and 03)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from utils.backend import to_pandas
from utils.checks.grading import (
    CheckFailed,
    as_series,
    blames_changed_data,
    check_scalar,
    compare_series,
    examples,
    passed,
)
from utils.dataset import Dataset


@blames_changed_data
def check_customer_totals(result: Any, dataset: Dataset) -> None:
    """Total sales per customer: a Series indexed by customer_id (the course's worked example)."""
    yours = as_series(result, "total sales per customer", "sales_amount")
    passed(compare_series(yours, dataset.customer_totals(), "total sales per customer", "customer"))


def _grouped_truth(dataset: Dataset, by: Sequence[str], statistic: str) -> pd.Series:
    table = dataset.totals_by(*by)
    if statistic == "sum":
        return table["total_cents"] / 100.0
    if statistic == "count":
        return table["transactions"].astype(np.float64)
    if statistic == "mean":
        return table["total_cents"] / 100.0 / table["transactions"]
    raise ValueError(f"statistic must be sum, count or mean, got {statistic!r}")


@blames_changed_data
def check_grouped(result: Any, dataset: Dataset, by: str | Sequence[str], statistic: str = "sum") -> None:
    """``sales_amount`` summed / counted / averaged per store_id and/or product_category."""
    by = [by] if isinstance(by, str) else list(by)
    what = f"{statistic} of sales_amount by {' and '.join(by)}"
    yours = as_series(result, what, "sales_amount")
    expected = _grouped_truth(dataset, by, statistic)
    if yours.index.nlevels != expected.index.nlevels:
        raise CheckFailed(f"{what}: index has {yours.index.nlevels} level(s), expected {by}")
    yours.index = yours.index.set_names(expected.index.names)
    tolerance = {"rtol": 1e-9, "atol": 1e-9} if statistic == "mean" else {}
    passed(compare_series(yours, expected, what, "group", **tolerance))


@blames_changed_data
def check_top_customers(result: Any, dataset: Dataset, n: int = 10) -> None:
    """The ``n`` customers with the highest total sales, highest first."""
    what = f"top {n} customers"
    yours = as_series(result, what, "sales_amount")
    expected = dataset.customer_totals().nlargest(n)
    if len(yours) != n:
        raise CheckFailed(f"{what}: expected {n} rows, got {len(yours)}")
    if list(yours.index) != list(expected.index):
        wrong = [c for c in yours.index if c not in set(expected.index)]
        if wrong:
            raise CheckFailed(f"{what}: {len(wrong)} customers do not belong in the top {n} (e.g. {examples(wrong)})")
        raise CheckFailed(f"{what}: right customers, wrong order; sort by total, highest first")
    passed(compare_series(yours, expected, what, "customer"))


@blames_changed_data
def check_row_count(value: Any, dataset: Dataset) -> None:
    check_scalar(value, dataset.answers()["rows"], "number of rows", rtol=0, atol=0.5)


@blames_changed_data
def check_filtered_mean(value: Any, dataset: Dataset) -> None:
    """Mean ``sales_amount`` over transactions above $100 (the second article's filter + mean).

    Accepts the scalar or the Series that ``df[df.sales_amount > 100].mean()`` returns."""
    if isinstance(to_pandas(value) if not hasattr(value, "__dask_graph__") else value, pd.Series):
        value = to_pandas(value)["sales_amount"]
    answers = dataset.answers()
    expected = answers["over_100_cents"] / 100.0 / answers["over_100_count"]
    check_scalar(value, expected, "mean sales_amount of transactions over $100")


@blames_changed_data
def check_total_sales(value: Any, dataset: Dataset) -> None:
    check_scalar(value, dataset.answers()["total_cents"] / 100.0, "total sales", atol=0.005)
