"""Notebook 05's worker restarted for memory: the demonstration's data, its exact answer, and the
two checks that grade it (each must fail on a wrong answer)."""

from __future__ import annotations

import pandas as pd
import pytest

from utils import checks
from utils.join_demo import (
    CUSTOMERS,
    REGIONS,
    customer_rows,
    demo_customers,
    demo_transactions,
    region_cents,
    transaction_rows,
)

ROWS = 300_001  # not a multiple of the partition count: the last partition is shorter


class FakeClient:
    """What the checks read from a client: the scheduler's events of one topic."""

    def __init__(self, restarts: int) -> None:
        self.restarts = restarts

    def get_events(self, topic: str) -> tuple:
        assert topic == "worker-restart-memory"
        return tuple((0.0, {"worker": "tcp://127.0.0.1:1", "pid": 1, "rss": 2**30}) for _ in range(self.restarts))


def joined_in_pandas(rows: int) -> pd.Series:
    """The answer by a plain pandas join of all rows: an independent route to region_cents."""
    joined = transaction_rows((0, rows)).merge(customer_rows(CUSTOMERS), on="customer_id")
    return joined.groupby("region", observed=True)["cents"].sum()


def test_the_exact_answer_equals_a_plain_pandas_join():
    expected = joined_in_pandas(ROWS)
    assert region_cents(ROWS, chunk_rows=70_000).to_dict() == expected.to_dict()
    assert list(region_cents(ROWS).index) == list(REGIONS)


def test_partitions_cover_every_row_once_and_amounts_are_whole_cents():
    frame = demo_transactions(ROWS, partitions=7).compute(scheduler="sync")
    assert len(frame) == ROWS
    assert frame["cents"].between(1, 9_999).all()
    assert frame["customer_id"].between(0, CUSTOMERS - 1).all()
    assert frame.reset_index(drop=True).equals(transaction_rows((0, ROWS)))


def test_the_dask_join_gives_the_exact_answer():
    joined = demo_transactions(ROWS, partitions=5).merge(demo_customers(), on="customer_id")
    result = joined.groupby("region", observed=True)["cents"].sum().compute(scheduler="sync")
    checks.check_region_cents(result, ROWS, FakeClient(restarts=0))


def test_region_check_fails_on_a_wrong_answer():
    right = region_cents(ROWS)
    with pytest.raises(checks.CheckFailed, match="values off"):
        checks.check_region_cents(right + pd.Series([1, 0, 0, 0], index=right.index), ROWS, FakeClient(0))
    with pytest.raises(checks.CheckFailed, match="missing"):
        checks.check_region_cents(right.iloc[:3], ROWS, FakeClient(0))
    with pytest.raises(checks.CheckFailed, match="values off"):
        checks.check_region_cents(region_cents(ROWS - 1), ROWS, FakeClient(0))  # a row lost by the join


def test_region_check_fails_when_a_worker_was_restarted_on_the_way():
    with pytest.raises(checks.CheckFailed, match="restarted for memory 2 time"):
        checks.check_region_cents(region_cents(ROWS), ROWS, FakeClient(restarts=2))


def test_restart_check_fails_when_nothing_was_restarted(capsys):
    with pytest.raises(checks.CheckFailed, match="no nanny restarted"):
        checks.check_restarted_for_memory(FakeClient(restarts=0))
    checks.check_restarted_for_memory(FakeClient(restarts=1))
    assert "✓ restart for memory" in capsys.readouterr().out
