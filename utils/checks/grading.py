"""How every exercise is graded: read the learner's variable, compare with the exact ground
truth within a tolerance, and say in one line what differs.

Floats are compared with a tolerance (default: half a cent absolute plus a 1e-9 relative term),
never with ``==``. A check that fails on a dataset whose files were changed after generation
blames the data, not the answer (``blames_changed_data``: ``DataChanged``), and the learner's
progress records it as "data changed", not as wrong.
"""

from __future__ import annotations

import functools
import inspect
import sys
import traceback
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pandas as pd
from distributed import Client

from utils.backend import to_pandas
from utils.dataset import Dataset
from utils.progress.record import record_outcome
from utils.progress.store import DATA_CHANGED, RIGHT, WRONG
from utils.progress.store import NOT_ATTEMPTED as NOT_ATTEMPTED_OUTCOME

DEFAULT_ATOL = 0.005  # half a cent


DEFAULT_RTOL = 1e-9


class CheckFailed(AssertionError):
    """The learner's answer differs from the ground truth; the message says how."""


class DataChanged(CheckFailed):
    """The answer could not be checked: the dataset's files no longer match their manifest (the
    message names the first difference and the command that regenerates the data)."""


NOT_ATTEMPTED = "not attempted yet"


def grade(names: str, check: Callable[..., None], *args: Any, **kwargs: Any) -> None:
    """Grade the learner's variables ``names`` (comma-separated) with ``check(*values, *args)``.

    The variables are read from the calling cell's namespace, so a learner who has not written
    an answer gets one line saying what to define, and Run All continues. When the check fails
    on a dataset that was changed after generation, the message blames the data, not the answer.
    Each outcome is also recorded in the learner's progress file (``utils.progress``): right, wrong,
    not attempted, or data changed (``DataChanged``: not the learner's fault); recording never
    changes what is printed or raised.
    """
    wanted = [name.strip() for name in names.split(",")]
    caller = inspect.currentframe().f_back
    namespace = {**caller.f_globals, **caller.f_locals}  # a notebook cell's names are its globals
    check_name = getattr(check, "__name__", type(check).__name__)
    session = namespace.get("__session__") if isinstance(namespace.get("__session__"), str) else None
    missing = [name for name in wanted if namespace.get(name, ...) is ...]
    if missing:
        shown = ", ".join(f"`{name}`" for name in missing)
        print(f"{NOT_ATTEMPTED}: define {shown} in the exercise cell above, then run this cell again")
        record_outcome(wanted, check_name, NOT_ATTEMPTED_OUTCOME, session=session)
        return
    closed = [value for value in (*args, *kwargs.values()) if isinstance(value, Client) and value.status != "running"]
    if closed:
        raise CheckFailed(
            "the cluster this exercise runs on was closed (utils.shutdown(client)); run the notebook's setup "
            "cell again to start it, then your answer and this cell"
        )
    try:
        try:
            check(*(namespace[name] for name in wanted), *args, **kwargs)
        except CheckFailed as failure:
            blame_changed_data(failure, [*args, *kwargs.values()])
            raise
    except Exception as error:  # recorded as it reaches the learner (after blame_changed_data), then raised
        reason = str(error) if isinstance(error, CheckFailed) else f"the check raised {type(error).__name__}: {error}"
        record_outcome(wanted, check_name, DATA_CHANGED if isinstance(error, DataChanged) else WRONG, reason,
                       session=session)
        raise
    record_outcome(wanted, check_name, RIGHT, session=session)


def blame_changed_data(failure: BaseException, arguments: list[Any]) -> None:
    """Re-raise ``failure`` as a data problem (``DataChanged``) when a dataset's files no longer match
    their checksums."""
    if getattr(failure, "data_verified", False) or isinstance(failure, DataChanged):
        return  # a check below already verified the data (see ``blames_changed_data``)
    for dataset in arguments:
        if isinstance(dataset, Dataset):
            try:
                problems = dataset.verify()
            except (OSError, ValueError, KeyError, TypeError) as error:
                problems = [f"the manifest cannot be read: {error}"]
            if problems:
                raise DataChanged(
                    f"the data files were changed after generation ({problems[0]}), so the answer cannot "
                    f"be checked; regenerate them with `{dataset.regenerate_command}`"
                ) from (failure if isinstance(failure, CheckFailed) else None)


def blames_changed_data(check: Callable[..., None]) -> Callable[..., None]:
    """Wrap a check that reads a ``Dataset``: when it fails, or the ground truth it reads raises
    (a damaged file: a raw pandas/pyarrow error), the data's checksums are verified first, so edited
    files are blamed in one line, never the learner's answer. Called directly or through ``grade``."""

    @functools.wraps(check)
    def checked(*args: Any, **kwargs: Any) -> None:
        try:
            return check(*args, **kwargs)
        except CheckFailed as failure:
            blame_changed_data(failure, [*args, *kwargs.values()])
            failure.data_verified = True  # type: ignore[attr-defined]
            raise
        except Exception as error:
            blame_changed_data(error, [*args, *kwargs.values()])
            raise

    checked.blames_changed_data = True  # type: ignore[attr-defined]
    return checked


def _show_failure_briefly(shell: Any, etype: type, value: BaseException, tb: Any, tb_offset: Any = None) -> list[str]:
    """IPython handler: a failed check is one red line with what differs, not a traceback. The
    traceback's frames are cleared: they would keep the graded answer (say, persisted data that
    fills the workers' memory) alive after the learner replaces it."""
    print(f"✗ {value}", file=sys.stderr)
    traceback.clear_frames(tb)
    return []


def install_notebook_display() -> None:
    try:
        from IPython import get_ipython
    except ImportError:
        return
    shell = get_ipython()
    if shell is not None and hasattr(shell, "set_custom_exc"):
        shell.set_custom_exc((CheckFailed,), _show_failure_briefly)


def as_series(result: Any, what: str, value_column: str | None = None) -> pd.Series:
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
                f"{what}: expected one column of values, got columns {plain(list(result.columns))}"
            )
    if not isinstance(result, pd.Series):
        raise CheckFailed(f"{what}: expected a Series, got {type(result).__name__}")
    return result


def plain(value: Any) -> Any:
    """``value`` as plain Python (``7``, ``(7, 'sports')``, ``[1, 2]``), for a learner's message:
    NumPy 2 writes its scalars as ``np.int64(7)``, also inside the tuples of a MultiIndex's keys."""
    if isinstance(value, np.datetime64 | np.timedelta64):
        return pd.Timestamp(value) if isinstance(value, np.datetime64) else pd.Timedelta(value)
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, tuple):
        return tuple(plain(item) for item in value)
    if isinstance(value, list | np.ndarray | pd.Index):
        return [plain(item) for item in value]
    return value


def examples(keys: Sequence, limit: int = 3) -> str:
    shown = ", ".join(str(plain(k)) for k in list(keys)[:limit])
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
        raise CheckFailed(f"{what}: {len(dupes)} {key}s appear more than once (e.g. {examples(dupes)})")
    missing = expected.index.difference(yours.index)
    if len(missing):
        raise CheckFailed(f"{what}: {len(missing)} {key}s missing from your result (e.g. {examples(missing)})")
    extra = yours.index.difference(expected.index)
    if len(extra):
        raise CheckFailed(f"{what}: {len(extra)} {key}s that are not in the data (e.g. {examples(extra)})")
    yours = yours.reindex(expected.index)
    got, want = yours.to_numpy(dtype=np.float64), expected.to_numpy(dtype=np.float64)
    bad = ~np.isclose(got, want, rtol=rtol, atol=atol)
    if bad.any():
        worst = int(np.argmax(np.abs(got - want) * bad))
        off = (got[worst] - want[worst]) / want[worst] * 100 if want[worst] else float("inf")
        raise CheckFailed(
            f"{what}: values off for {int(bad.sum())} of {len(want)} {key}s; e.g. {key} "
            f"{plain(expected.index[worst])}: yours {got[worst]:,.2f}, expected {want[worst]:,.2f} "
            f"({off:+.3g}%)"
        )
    return f"✓ {what}: all {len(want):,} {key}s match the ground truth"


def matches(yours: pd.Series, expected: pd.Series) -> bool:
    """Whether ``yours`` equals ``expected`` (same keys, values within the default tolerance)."""
    try:
        compare_series(yours, expected, "", "key")
    except CheckFailed:
        return False
    return True


def passed(message: str) -> None:
    """Print the confirmation; return None so a notebook cell shows only this line."""
    print(message)


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
    passed(f"✓ {what}: {shown.format(got)} matches the ground truth")


def worker_records(client: Any) -> list[dict[str, Any]]:
    return list(client.scheduler_info(n_workers=-1)["workers"].values())
