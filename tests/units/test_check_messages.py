"""A check's message shows plain Python values: ``group (7, 'sports')``, never NumPy's reprs such as
``(np.int64(7), 'sports')``, whatever scalars the learner's result or the ground truth carry."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd
import pytest

from utils.checks import grading
from utils.checks.cluster import check_cluster_facts
from utils.checks.grading import CheckFailed, compare_series, examples
from utils.checks.joins import check_join_choice
from utils.checks.performance import check_split_out_choice


def _groups(stores: list, categories: list, values: list[float]) -> pd.Series:
    """A Series on a (store_id, product_category) MultiIndex built from NumPy scalars."""
    index = pd.MultiIndex.from_arrays([np.array(stores), np.array(categories, dtype=object)],
                                      names=["store_id", "product_category"])
    return pd.Series(values, index=index)


TRUTH = _groups([np.int64(7), np.int64(8), np.int64(9)], [np.str_("sports"), np.str_("books"), np.str_("toys")],
                [1.0, 2.0, 3.0])
FLOAT_KEYS = pd.Series([1.0, 2.0], index=pd.MultiIndex.from_arrays(
    [np.array([np.float64(0.5), np.float64(1.5)]), np.array([np.str_("a"), np.str_("b")], dtype=object)]))


class _FakeClient:
    """What ``check_cluster_facts`` asks of a client: the scheduler's worker records."""

    def scheduler_info(self, n_workers: int = -1) -> dict:
        return {"workers": {"tcp://a": {"nthreads": 2, "memory_limit": 2**30}}}


def _failure(call: Callable[[], object]) -> str:
    with pytest.raises(CheckFailed) as failed:
        call()
    return str(failed.value)


CASES: dict[str, tuple[Callable[[], object], str]] = {
    "values off for a group": (
        lambda: compare_series(TRUTH * np.array([1.0, 1.25, 1.0]), TRUTH, "sum by store and category", "group"),
        "e.g. group (8, 'books'): yours 2.50, expected 2.00"),
    "groups missing": (
        lambda: compare_series(TRUTH.iloc[:1], TRUTH, "sum", "group"), "(8, 'books'), (9, 'toys')"),
    "float keys off": (
        lambda: compare_series(FLOAT_KEYS * 2, FLOAT_KEYS, "sum", "group"), "group (1.5, 'b'): yours 4.00"),
    "a float key alone": (
        lambda: compare_series(pd.Series([3.0], index=[np.float64(0.5)]), pd.Series([1.0], index=[np.float64(0.5)]),
                               "sum", "customer"), "customer 0.5: yours 3.00, expected 1.00"),
    "split_out as a NumPy integer": (
        lambda: check_split_out_choice(np.int64(0), pd.DataFrame({"tasks": [3]}, index=[1]), 0, None),
        "got 0"),
    "join strategy as a NumPy string": (
        lambda: check_join_choice(np.str_("merge"), pd.DataFrame(), 0, None), "got 'merge'"),
    "cluster facts as NumPy numbers": (
        lambda: check_cluster_facts({"workers": np.float64(3.0), "threads_per_worker": np.int64(2),
                                     "memory_limit_gib": np.float64(1.0)}, _FakeClient()),
        "workers is 3.0 in your dict, but the scheduler reports 1"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_a_failure_message_shows_plain_python_values(case):
    call, expected = CASES[case]
    message = _failure(call)
    assert "np." not in message and "numpy" not in message, message
    assert expected in message, message


def test_examples_and_plain_unwrap_numpy_scalars_in_keys():
    keys = [(np.int64(7), np.str_("sports")), (np.int64(8), np.float64(2.5))]
    assert examples(keys) == "(7, 'sports'), (8, 2.5)"
    assert examples(np.array([np.int64(1), np.int64(2), np.int64(3), np.int64(4)])) == "1, 2, 3, ..."
    plain = grading.plain
    assert plain([np.int64(1), (np.float64(0.5), np.str_("x"))]) == [1, (0.5, "x")]
    assert type(plain(np.int64(1))) is int and type(plain(np.float64(0.5))) is float
    assert plain(np.bool_(True)) is True and plain("store") == "store"
