"""Self-checks for exercises: compare a learner's result with the generator's exact ground truth.

Each check prints one confirmation line when the answer is right and raises ``CheckFailed`` with
a message saying *what* differs when it is wrong. Floats are compared with a tolerance
(default: half a cent absolute plus a 1e-9 relative term), never with ``==``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from utils.backend import to_pandas
from utils.dataset import Dataset

DEFAULT_ATOL = 0.005  # half a cent
DEFAULT_RTOL = 1e-9


class CheckFailed(AssertionError):
    """The learner's answer differs from the ground truth; the message says how."""


def _as_series(result: Any, what: str, value_column: str | None = None) -> pd.Series:
    if hasattr(result, "__dask_graph__"):
        raise CheckFailed(f"{what}: got a lazy Dask object; call .compute() on it first")
    result = to_pandas(result)
    if isinstance(result, pd.DataFrame):
        if value_column in result.columns:
            result = result[value_column]
        elif result.shape[1] == 1:
            result = result.iloc[:, 0]
        else:
            raise CheckFailed(
                f"{what}: expected one column of values, got columns {list(result.columns)}"
            )
    if not isinstance(result, pd.Series):
        raise CheckFailed(f"{what}: expected a Series, got {type(result).__name__}")
    return result


def _examples(keys: Sequence, limit: int = 3) -> str:
    shown = ", ".join(str(k) for k in list(keys)[:limit])
    return f"{shown}, ..." if len(keys) > limit else shown


def compare_series(
    yours: pd.Series,
    expected: pd.Series,
    what: str,
    key: str,
    rtol: float = DEFAULT_RTOL,
    atol: float = DEFAULT_ATOL,
) -> str:
    """Compare two Series by index; return the confirmation or raise ``CheckFailed``."""
    if yours.index.has_duplicates:
        dupes = yours.index[yours.index.duplicated()].unique()
        raise CheckFailed(f"{what}: {len(dupes)} {key}s appear more than once (e.g. {_examples(dupes)})")
    missing = expected.index.difference(yours.index)
    if len(missing):
        raise CheckFailed(f"{what}: {len(missing)} {key}s missing from your result (e.g. {_examples(missing)})")
    extra = yours.index.difference(expected.index)
    if len(extra):
        raise CheckFailed(f"{what}: {len(extra)} {key}s that are not in the data (e.g. {_examples(extra)})")
    yours = yours.reindex(expected.index)
    got, want = yours.to_numpy(dtype=np.float64), expected.to_numpy(dtype=np.float64)
    bad = ~np.isclose(got, want, rtol=rtol, atol=atol)
    if bad.any():
        worst = int(np.argmax(np.abs(got - want) * bad))
        off = (got[worst] - want[worst]) / want[worst] * 100 if want[worst] else float("inf")
        raise CheckFailed(
            f"{what}: values off for {int(bad.sum())} of {len(want)} {key}s; e.g. {key} "
            f"{expected.index[worst]}: yours {got[worst]:,.2f}, expected {want[worst]:,.2f} "
            f"({off:+.2g}%)"
        )
    return f"✓ {what}: all {len(want):,} {key}s match the ground truth"


def _passed(message: str) -> None:
    """Print the confirmation; return None so a notebook cell shows only this line."""
    print(message)


def check_customer_totals(result: Any, dataset: Dataset) -> None:
    """Total sales per customer: a Series indexed by customer_id (the course's worked example)."""
    yours = _as_series(result, "total sales per customer", "sales_amount")
    _passed(compare_series(yours, dataset.customer_totals(), "total sales per customer", "customer"))


def _grouped_truth(dataset: Dataset, by: Sequence[str], statistic: str) -> pd.Series:
    table = dataset.totals_by(*by)
    if statistic == "sum":
        return table["total_cents"] / 100.0
    if statistic == "count":
        return table["transactions"].astype(np.float64)
    if statistic == "mean":
        return table["total_cents"] / 100.0 / table["transactions"]
    raise ValueError(f"statistic must be sum, count or mean, got {statistic!r}")


def check_grouped(result: Any, dataset: Dataset, by: str | Sequence[str], statistic: str = "sum") -> None:
    """``sales_amount`` summed / counted / averaged per store_id and/or product_category."""
    by = [by] if isinstance(by, str) else list(by)
    what = f"{statistic} of sales_amount by {' and '.join(by)}"
    yours = _as_series(result, what, "sales_amount")
    expected = _grouped_truth(dataset, by, statistic)
    if yours.index.nlevels != expected.index.nlevels:
        raise CheckFailed(f"{what}: index has {yours.index.nlevels} level(s), expected {by}")
    yours.index = yours.index.set_names(expected.index.names)
    tolerance = {"rtol": 1e-9, "atol": 1e-9} if statistic == "mean" else {}
    _passed(compare_series(yours, expected, what, "group", **tolerance))


def check_top_customers(result: Any, dataset: Dataset, n: int = 10) -> None:
    """The ``n`` customers with the highest total sales, highest first."""
    what = f"top {n} customers"
    yours = _as_series(result, what, "sales_amount")
    expected = dataset.customer_totals().nlargest(n)
    if len(yours) != n:
        raise CheckFailed(f"{what}: expected {n} rows, got {len(yours)}")
    if list(yours.index) != list(expected.index):
        wrong = [c for c in yours.index if c not in set(expected.index)]
        if wrong:
            raise CheckFailed(f"{what}: {len(wrong)} customers do not belong in the top {n} (e.g. {_examples(wrong)})")
        raise CheckFailed(f"{what}: right customers, wrong order; sort by total, highest first")
    _passed(compare_series(yours, expected, what, "customer"))


def check_scalar(value: Any, expected: float, what: str, rtol: float = 1e-9, atol: float = 1e-9) -> None:
    """One number (a count, a mean, a total) against its exact value."""
    if hasattr(value, "__dask_graph__"):
        raise CheckFailed(f"{what}: got a lazy Dask object; call .compute() on it first")
    value = to_pandas(value)
    try:
        got = float(value)
    except (TypeError, ValueError):
        raise CheckFailed(f"{what}: expected a number, got {type(value).__name__}") from None
    if float(expected).is_integer() and atol < 1:
        shown = "{:,.0f}"
    else:
        shown = "{:,.2f}" if atol >= 0.005 else "{:,.4f}"
    if not np.isclose(got, expected, rtol=rtol, atol=atol):
        raise CheckFailed(f"{what}: yours {shown.format(got)}, expected {shown.format(expected)}")
    _passed(f"✓ {what}: {shown.format(got)} matches the ground truth")


def check_row_count(value: Any, dataset: Dataset) -> None:
    check_scalar(value, dataset.answers["rows"], "number of rows", rtol=0, atol=0.5)


def check_filtered_mean(value: Any, dataset: Dataset) -> None:
    """Mean ``sales_amount`` over transactions above $100 (the second article's filter + mean).

    Accepts the scalar or the Series that ``df[df.sales_amount > 100].mean()`` returns."""
    if isinstance(to_pandas(value) if not hasattr(value, "__dask_graph__") else value, pd.Series):
        value = to_pandas(value)["sales_amount"]
    answers = dataset.answers
    expected = answers["over_100_cents"] / 100.0 / answers["over_100_count"]
    check_scalar(value, expected, "mean sales_amount of transactions over $100")


def check_total_sales(value: Any, dataset: Dataset) -> None:
    check_scalar(value, dataset.answers["total_cents"] / 100.0, "total sales", atol=0.005)
