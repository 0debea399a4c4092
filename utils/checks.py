"""Self-checks for exercises: compare a learner's result with the generator's exact ground truth.

Each check prints one confirmation line when the answer is right and raises ``CheckFailed`` with
a message saying *what* differs when it is wrong. Floats are compared with a tolerance
(default: half a cent absolute plus a 1e-9 relative term), never with ``==``.

Notebooks call checks through ``grade("name", check, ...)``, which reads the learner's variable
itself: an exercise nobody has attempted yet prints "not attempted yet" instead of a
``NameError``, so Run All goes on.
"""

from __future__ import annotations

import functools
import inspect
import sys
import traceback
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from utils.backend import to_pandas
from utils.dataset import Dataset

DEFAULT_ATOL = 0.005  # half a cent
DEFAULT_RTOL = 1e-9


class CheckFailed(AssertionError):
    """The learner's answer differs from the ground truth; the message says how."""


NOT_ATTEMPTED = "not attempted yet"


def grade(names: str, check: Callable[..., None], *args: Any, **kwargs: Any) -> None:
    """Grade the learner's variables ``names`` (comma-separated) with ``check(*values, *args)``.

    The variables are read from the calling cell's namespace, so a learner who has not written
    an answer gets one line saying what to define, and Run All continues. When the check fails
    on a dataset that was changed after generation, the message blames the data, not the answer.
    """
    wanted = [name.strip() for name in names.split(",")]
    caller = inspect.currentframe().f_back
    namespace = {**caller.f_globals, **caller.f_locals}  # a notebook cell's names are its globals
    missing = [name for name in wanted if namespace.get(name, ...) is ...]
    if missing:
        shown = ", ".join(f"`{name}`" for name in missing)
        print(f"{NOT_ATTEMPTED}: define {shown} in the exercise cell above, then run this cell again")
        return
    try:
        check(*(namespace[name] for name in wanted), *args, **kwargs)
    except CheckFailed as failure:
        _blame_changed_data(failure, [*args, *kwargs.values()])
        raise


def _blame_changed_data(failure: BaseException, arguments: list[Any]) -> None:
    """Re-raise ``failure`` as a data problem when a dataset's files no longer match their checksums."""
    if getattr(failure, "data_verified", False):
        return  # a check below already verified the data (see ``_blames_changed_data``)
    for dataset in arguments:
        if isinstance(dataset, Dataset):
            try:
                problems = dataset.verify()
            except (OSError, ValueError, KeyError, TypeError) as error:
                problems = [f"the manifest cannot be read: {error}"]
            if problems:
                raise CheckFailed(
                    f"the data files were changed after generation ({problems[0]}), so the answer cannot "
                    f"be checked; regenerate them with `{dataset.regenerate_command}`"
                ) from (failure if isinstance(failure, CheckFailed) else None)


def _blames_changed_data(check: Callable[..., None]) -> Callable[..., None]:
    """Wrap a check that reads a ``Dataset``: when it fails, or the ground truth it reads raises
    (a damaged file: a raw pandas/pyarrow error), the data's checksums are verified first, so edited
    files are blamed in one line, never the learner's answer. Called directly or through ``grade``."""

    @functools.wraps(check)
    def checked(*args: Any, **kwargs: Any) -> None:
        try:
            return check(*args, **kwargs)
        except CheckFailed as failure:
            _blame_changed_data(failure, [*args, *kwargs.values()])
            failure.data_verified = True  # type: ignore[attr-defined]
            raise
        except Exception as error:
            _blame_changed_data(error, [*args, *kwargs.values()])
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


def _install_notebook_display() -> None:
    try:
        from IPython import get_ipython
    except ImportError:
        return
    shell = get_ipython()
    if shell is not None and hasattr(shell, "set_custom_exc"):
        shell.set_custom_exc((CheckFailed,), _show_failure_briefly)


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
            f"({off:+.3g}%)"
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



# --- checks on clusters, futures, task streams and plans (facts read from Dask itself) --------


CLUSTER_FACTS = ("workers", "threads_per_worker", "memory_limit_gib")


def _workers(client: Any) -> list[dict[str, Any]]:
    return list(client.scheduler_info(n_workers=-1)["workers"].values())


def check_cluster_facts(answer: Any, client: Any) -> None:
    """A dict of ``workers``, ``threads_per_worker`` and ``memory_limit_gib`` (per worker) that
    must describe the cluster behind ``client``, as its scheduler reports it."""
    what = "cluster facts"
    if not isinstance(answer, dict):
        raise CheckFailed(f"{what}: expected a dict with keys {list(CLUSTER_FACTS)}, got {type(answer).__name__}")
    missing = [key for key in CLUSTER_FACTS if key not in answer]
    if missing:
        raise CheckFailed(f"{what}: your dict lacks {missing}")
    workers = _workers(client)
    threads = {w["nthreads"] for w in workers}
    memory = {round(w["memory_limit"] / 2**30, 3) for w in workers}
    expected = {
        "workers": len(workers),
        "threads_per_worker": threads.pop() if len(threads) == 1 else sorted(threads),
        "memory_limit_gib": memory.pop() if len(memory) == 1 else sorted(memory),
    }
    for key in CLUSTER_FACTS:
        got, want = answer[key], expected[key]
        try:
            close = np.isclose(float(got), float(want), rtol=0, atol=0.01)
        except (TypeError, ValueError):
            raise CheckFailed(f"{what}: {key} should be a number, got {got!r}") from None
        if not close:
            raise CheckFailed(f"{what}: {key} is {got!r} in your dict, but the scheduler reports {want!r}")
    _passed(f"✓ {what}: {expected['workers']} workers × {expected['threads_per_worker']} threads, "
            f"{expected['memory_limit_gib']} GiB each — as the scheduler reports")


def check_cubes(cubes: Any, cubes_per_worker: Any, cube_total: Any, client: Any, n: int = 1000) -> None:
    """Futures of x**3 for x in range(n), computed through ``client``; where they live; their sum."""
    what = "cubes on the cluster"
    if not isinstance(cubes, list) or len(cubes) != n or not all(hasattr(f, "key") for f in cubes):
        raise CheckFailed(f"{what}: `cubes` should be the list of {n} futures that client.map returns")
    foreign = [f for f in cubes if f.client.scheduler.address != client.scheduler.address]
    if foreign:
        raise CheckFailed(f"{what}: {len(foreign)} futures were computed on another cluster; "
                          f"use the client you were given ({client.scheduler.address})")
    values = client.gather(cubes)
    wrong = [x for x, value in enumerate(values) if value != x**3]
    if wrong:
        raise CheckFailed(f"{what}: futures {_examples(wrong)} do not hold x**3 of their input")
    check_scalar(cube_total, (n * (n - 1) // 2) ** 2, f"sum of cubes of 0..{n - 1}", atol=0)
    # Results only gain copies (the worker that ran sum fetched them), so each worker must hold
    # at least as many cubes as the learner counted for it, and the counts must add up to n.
    held: dict[str, int] = {}
    for holders in client.who_has(cubes).values():
        for worker in holders:
            held[worker] = held.get(worker, 0) + 1
    yours = _as_series(cubes_per_worker, "cubes per worker")
    strangers = [w for w in yours.index if w not in held]
    if strangers:
        raise CheckFailed(f"{what}: `cubes_per_worker` names workers that hold none of your cubes: "
                          f"{_examples(strangers)}; count with client.who_has(cubes)")
    too_many = [w for w in yours.index if yours[w] > held[w]]
    if too_many:
        worker = too_many[0]
        raise CheckFailed(f"{what}: you counted {yours[worker]} cubes on {worker}, which holds {held[worker]}")
    check_scalar(yours.sum(), n, "cubes counted over all workers", atol=0)
    _passed(f"✓ {what}: {n} cubes on {len(yours)} workers, as the cluster reports")


def _records(task_stream: Any) -> list[dict[str, Any]]:
    """The records of a ``get_task_stream`` context (``ts``) or its ``ts.data`` list."""
    records = getattr(task_stream, "data", task_stream)
    if not isinstance(records, list):
        raise CheckFailed("expected the object of `with get_task_stream(client=client) as ts:` (or ts.data)")
    return records


def compute_intervals_per_prefix(task_stream: Any) -> pd.Series:
    """How many ``compute`` intervals each task prefix has in a recorded task stream."""
    from dask.utils import key_split

    counts: dict[str, int] = {}
    for record in _records(task_stream):
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
    yours = _as_series(answer, "compute intervals per prefix").astype(float)
    _passed(compare_series(yours, expected, "compute intervals per task prefix", "prefix", atol=0))


def check_one_pass(sales_total: Any, n_over_100: Any, task_stream: Any, dataset: Dataset, partitions: int) -> None:
    """Total sales and the count of sales over $100, computed from one read of every partition."""
    check_total_sales(sales_total, dataset)
    check_scalar(n_over_100, dataset.answers["over_100_count"], "transactions over $100", rtol=0, atol=0.5)
    reads = int(_read_prefixes(task_stream).sum())
    if reads == 0:
        raise CheckFailed("one pass: no read tasks were recorded; compute inside the "
                          "`with get_task_stream(client=client) as one_pass_ts:` block")
    if reads != partitions:
        raise CheckFailed(f"one pass: {reads} read tasks for {partitions} CSV partitions, so the files were read "
                          f"{reads / partitions:.3g} times; compute both results with one dask.compute(...) call")
    _passed(f"✓ one pass: {reads} read tasks for {partitions} partitions — every partition read once")


def check_split_out_choice(choice: Any, runs: pd.DataFrame, result_bytes: int, client: Any) -> None:
    """The ``split_out`` the measurements support: the fewest tasks while the result fits easily
    (under a tenth of the smallest worker's memory limit) in one output partition, else > 1."""
    what = "your split_out choice"
    if isinstance(choice, bool) or not isinstance(choice, int | np.integer) or choice < 1:
        raise CheckFailed(f"{what}: split_out must be a whole number >= 1, got {choice!r}")
    measured = list(runs.index)
    if choice not in measured:
        raise CheckFailed(f"{what}: you measured split_out in {measured}; choose one of them")
    smallest = min(w["memory_limit"] for w in _workers(client))
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
    _passed(f"✓ {what}: split_out={choice} — {reason}")


def check_fast_pipeline(pipeline: Any, client: Any, dataset: Dataset) -> None:
    """Run the learner's ``fast_pipeline()`` under a task stream: exact per-category totals, Parquet
    only, each Parquet file read at most once, the files' own partitions (no repartition)."""
    from distributed import get_task_stream

    from utils.profiling import time_call

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
    _passed(f"✓ {what}: {int(counts.sum())} tasks, {int(reads.sum())} Parquet reads, one pass, "
            f"{seconds:.2f} s (timing shown, not graded)")



# --- memory: spilling, partition sizes, persisting within a budget (notebook 05) ---------------


def _persisted_partitions(collection: Any, what: str) -> int:
    """Raise unless ``collection`` is a persisted Dask collection; return its partition count."""
    from distributed import futures_of

    if not hasattr(collection, "__dask_graph__"):
        kind = type(collection).__name__
        raise CheckFailed(f"{what}: expected a Dask DataFrame (the result of .persist()), got {kind}")
    held = futures_of(collection)
    if not held:
        raise CheckFailed(f"{what}: nothing is persisted; call .persist() (and wait) so the workers hold the data")
    return len(held)


def check_spilled(collection: Any, client: Any) -> None:
    """A persisted collection bigger than the workers' budget: some of its partitions were spilled.
    A demonstration of spilling in which nothing spilled shows nothing, so this fails loudly."""
    from utils.memory import spilled_partitions

    _persisted_partitions(collection, "spilling")
    spilled, total = spilled_partitions(client, collection)
    if spilled == 0:
        raise CheckFailed(f"spilling: none of the {total} persisted partitions was spilled, so the data fit the "
                          "budget after all; lower the budget or use a bigger COURSE_SCALE")
    _passed("✓ spilling happened: the workers moved part of the persisted data out of memory")


def check_partition_plan(partition_gb: Any, n_partitions: Any, gpu_memory_gb: float, data_gb: float) -> None:
    """A partition size in the 1/32-1/16 band of one GPU's memory, and the partition count it gives."""
    from utils.partitions import GPU_BAND

    what = "partition plan"
    try:
        size, count = float(partition_gb), int(n_partitions)
    except (TypeError, ValueError):
        raise CheckFailed(f"{what}: partition_gb must be a number and n_partitions a whole number") from None
    low, high = (gpu_memory_gb * fraction for fraction in GPU_BAND)
    if not low - 1e-9 <= size <= high + 1e-9:
        raise CheckFailed(f"{what}: {size:g} GB is outside 1/32-1/16 of a {gpu_memory_gb:g} GB GPU "
                          f"({low:g}-{high:g} GB) for shuffle-heavy work")
    expected = data_gb / size
    if not expected * 0.9 - 1 <= count <= expected * 1.1 + 1:
        raise CheckFailed(f"{what}: {data_gb:g} GB in partitions of {size:g} GB is about {expected:,.0f} "
                          f"partitions, not {count:,}")
    _passed(f"✓ {what}: {size:g} GB partitions (1/32-1/16 of {gpu_memory_gb:g} GB), about {expected:,.0f} of them")


def check_persisted_within_budget(slim: Any, totals: Any, client: Any, dataset: Dataset) -> None:
    """Exercise: persist only what the question needs, small enough to stay in memory: at most two
    thirds of what the workers may hold, leaving room for the tasks that use it and for uneven
    placement over the workers."""
    from distributed import futures_of

    from utils.dataset import human_bytes
    from utils.memory import worker_memory

    what = "slim persist"
    _persisted_partitions(slim, what)
    held = sum(client.nbytes([future.key for future in futures_of(slim)], summary=False).values())
    budget = int(worker_memory(client)["budget"].sum())
    if budget and held > budget * 2 / 3:
        raise CheckFailed(f"{what}: it holds {human_bytes(held)}, more than two thirds of the workers' budget "
                          f"({human_bytes(budget)}); keep only the columns the question needs, with smaller dtypes")
    check_grouped(totals, dataset, ["store_id", "product_category"])
    _passed(f"✓ {what}: {human_bytes(held)} held, within two thirds of the {human_bytes(budget)} budget")



# --- joins, sorting and time (notebook 06) -----------------------------------------------------


def check_segment_quarter(result: Any, dataset: Dataset, quarter: str) -> None:
    """Total sales per customer segment in one quarter ("2025Q2"): a Series indexed by segment.
    A wrong answer that matches the all-time totals or another quarter's says so."""
    what = f"sales per segment in {quarter}"
    table = dataset.totals_by("quarter", "segment")["total_cents"] / 100.0
    quarters = list(table.index.get_level_values("quarter").unique())
    if quarter not in quarters:
        raise ValueError(f"quarter must be one of {quarters}, got {quarter!r}")
    yours = _as_series(result, what, "sales_amount")
    if yours.index.nlevels != 1:
        raise CheckFailed(f"{what}: index has {yours.index.nlevels} levels; expected one row per segment")
    yours.index = yours.index.set_names("segment")
    expected = table.xs(quarter, level="quarter")
    try:
        message = compare_series(yours, expected, what, "segment")
    except CheckFailed:
        all_time = dataset.totals_by("segment")["total_cents"] / 100.0
        if _matches(yours, all_time):
            raise CheckFailed(f"{what}: these are the totals over all quarters; keep only {quarter}") from None
        for other in quarters:
            if other != quarter and _matches(yours, table.xs(other, level="quarter")):
                raise CheckFailed(f"{what}: these are the totals of {other}, not {quarter}; check the dates") from None
        raise
    _passed(message)


def _matches(yours: pd.Series, expected: pd.Series) -> bool:
    """Whether ``yours`` equals ``expected`` (same keys, values within the default tolerance)."""
    try:
        compare_series(yours, expected, "", "key")
    except CheckFailed:
        return False
    return True


def check_top_customers_in_region(result: Any, dataset: Dataset, region: str, n: int = 10) -> None:
    """The ``n`` customers *of one region* (the customers table's region) with the highest total
    sales, highest first: a Series indexed by customer_id. The ground truth joins the generator's
    per-customer totals with the customers table read by pandas, independently of Dask."""
    what = f"top {n} customers in the {region} region"
    customers = pd.read_parquet(dataset.customers_parquet, columns=["customer_id", "region"])
    regions = sorted(customers["region"].unique())
    if region not in regions:
        raise ValueError(f"region must be one of {regions}, got {region!r}")
    home = customers.set_index("customer_id")["region"]
    totals = dataset.customer_totals()
    in_region = totals[home.reindex(totals.index).to_numpy() == region].sort_values(ascending=False, kind="stable")
    expected_rows = min(n, len(in_region))
    yours = _as_series(result, what, "sales_amount")
    if len(yours) != expected_rows:
        raise CheckFailed(f"{what}: expected {expected_rows} rows, got {len(yours)}")
    elsewhere = [c for c in yours.index if home.get(c, region) != region]
    if elsewhere:
        raise CheckFailed(f"{what}: {len(elsewhere)} customers are not in the {region} region "
                          f"(e.g. {_examples(elsewhere)}); filter on the customers table's region")
    unknown = [c for c in yours.index if c not in in_region.index]
    if unknown:
        raise CheckFailed(f"{what}: {len(unknown)} customers have no transactions (e.g. {_examples(unknown)})")
    cutoff = in_region.iloc[expected_rows - 1]  # the n-th total: a tie with it may take the last places
    outside = [c for c in yours.index if in_region[c] < cutoff - DEFAULT_ATOL]
    if outside:
        raise CheckFailed(f"{what}: {len(outside)} customers do not belong in the top {n} (e.g. {_examples(outside)})")
    truth = in_region.reindex(yours.index)
    message = compare_series(yours, truth, what, "customer")
    if (np.diff(truth.to_numpy()) > DEFAULT_ATOL).any():
        raise CheckFailed(f"{what}: right customers, wrong order; sort by total, highest first")
    _passed(message)


JOIN_STRATEGIES = ("broadcast", "shuffle")


def _smallest_worker_memory(client: Any) -> int:
    """The least memory one worker can hold data in: its memory limit, or its GPU's memory where
    that is smaller (a broadcast copies the small side into every GPU). GPU memory is asked of the
    workers: the scheduler's record of a nanny-started dask-cuda worker has no ``"gpu"`` entry."""
    from utils.machine import this_gpu

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
        raise CheckFailed(f"{what}: choose one of {list(JOIN_STRATEGIES)}, got {choice!r}")
    choice = choice.strip().lower()
    missing = [name for name in JOIN_STRATEGIES if name not in runs.index]
    if missing:
        raise CheckFailed(f"{what}: the measured table lacks the {missing} row(s); run the measuring cell first")
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
    _passed(f"✓ {what}: {choice} — {reason}")


def check_daily_totals(result: Any, dataset: Dataset, window_days: int = 1) -> None:
    """Sales per calendar day (``window_days=1``) or summed over a trailing window of days (e.g. a
    7-day rolling sum, as ``rolling("7D")`` gives), indexed by day. Days without transactions
    count as zero; a result may include them or leave them out."""
    what = "daily sales" if window_days == 1 else f"{window_days}-day rolling sales"
    yours = _as_series(result, what, "sales_amount")
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
        raise CheckFailed(f"{what}: {len(dupes)} days appear more than once (e.g. {_examples(dupes.date)})")
    extra = yours.index.difference(calendar)
    if len(extra):
        raise CheckFailed(f"{what}: {len(extra)} days outside the data's {calendar[0].date()} .. "
                          f"{calendar[-1].date()} (e.g. {_examples(extra.date)})")
    missing = truth.index.difference(yours.index)
    if len(missing):
        raise CheckFailed(f"{what}: {len(missing)} days with transactions missing from your result "
                          f"(e.g. {_examples(missing.date)})")
    _passed(compare_series(yours, expected.reindex(yours.index), what, "day"))



# --- scaling out: a lost worker, TLS (notebook 07) ---------------------------------------------


def check_totals_after_loss(totals: Any, lost: Any, client: Any, dataset: Dataset) -> None:
    """Exercise: total sales per customer, computed while a worker was killed (``lost`` is what
    ``ExternalCluster.kill_worker`` returned). The scheduler's own event log must show the worker
    lost while it was running tasks, so a kill before or after the computation fails."""
    import time

    what = "totals after a lost worker"
    at = getattr(lost, "at", None)
    if not isinstance(at, float):
        raise CheckFailed(f"{what}: `lost` should be what cluster.kill_worker(...) returned, got {type(lost).__name__}")
    deadline = time.monotonic() + 10  # the scheduler logs the loss a moment after the kill
    while True:
        removals = [(stamp, event) for stamp, event in client.get_events("all")
                    if event.get("action") == "remove-worker" and at - 1 <= stamp <= at + 60]
        if removals or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    if not removals:
        raise CheckFailed(f"{what}: the scheduler of this cluster logged no lost worker after your kill")
    _, event = min(removals, key=lambda item: abs(item[0] - at))
    running, finished = len(event.get("processing-tasks", ())), len(event.get("lost-computed-tasks", ()))
    if not running:
        raise CheckFailed(f"{what}: the worker you killed was running no task, so no computation was in progress; "
                          "kill it while the groupby runs (after client.compute, before .result())")
    yours = _as_series(totals, what, "sales_amount")
    matched = compare_series(yours, dataset.customer_totals(), what, "customer")
    _passed(f"{matched}; the lost worker was running {running} and holding {finished} finished tasks, "
            "which the scheduler ran again elsewhere")


def check_tls_totals(tls_client: Any, totals: Any, dataset: Dataset) -> None:
    """Exercise: a client connected over TLS (a ``tls://`` scheduler address) and total sales per
    customer computed through it."""
    from distributed import Client

    what = "totals over TLS"
    if not isinstance(tls_client, Client):
        raise CheckFailed(f"{what}: `tls_client` should be a distributed.Client, got {type(tls_client).__name__}")
    protocol = str(tls_client.scheduler.address).split("://", 1)[0]
    if protocol != "tls":
        raise CheckFailed(f"{what}: your client talks to its scheduler over {protocol}://, unencrypted; connect "
                          "to the TLS cluster's tls:// address with its security= settings")
    yours = _as_series(totals, what, "sales_amount")
    _passed(compare_series(yours, dataset.customer_totals(), what, "customer") + ", over an encrypted connection")


def _customer_quarter_table(dataset: Dataset) -> pd.DataFrame:
    """Ground truth in dollars, one row per customer who ever bought, one column per quarter
    ("2024Q1", ...), 0.0 where the customer bought nothing that quarter."""
    truth = dataset.customer_quarter_totals()
    table = truth.pivot(index="customer_id", columns="quarter", values="total_cents")
    return table.reindex(columns=sorted(truth["quarter"].unique())).fillna(0) / 100.0


def check_customer_quarter(result: Any, dataset: Dataset, quarter: str) -> None:
    """Exercise: each customer's total spend in one quarter ("2025Q3"), a Series indexed by
    customer_id, for the customers who bought in that quarter (rows of 0.0 for the others, as a
    left join gives them, are ignored). Another quarter's or the all-time totals are named as such."""
    table = _customer_quarter_table(dataset)
    if quarter not in table.columns:
        raise ValueError(f"quarter must be one of {list(table.columns)}, got {quarter!r}")
    what = f"spend per customer in {quarter}"
    yours = _as_series(result, what, "sales_amount")
    if yours.index.nlevels != 1:
        raise CheckFailed(f"{what}: index has {yours.index.nlevels} levels; expected one row per customer_id")
    yours = yours[yours.to_numpy(dtype=np.float64) != 0]
    yours.index = yours.index.set_names("customer_id")

    def nonzero(column: pd.Series) -> pd.Series:
        return column[column != 0]

    try:
        message = compare_series(yours, nonzero(table[quarter]), what, "customer")
    except CheckFailed:
        if _matches(yours, nonzero(table.sum(axis=1))):
            raise CheckFailed(f"{what}: these are the totals over all quarters; keep only {quarter}") from None
        for other in table.columns:
            if other != quarter and _matches(yours, nonzero(table[other])):
                raise CheckFailed(f"{what}: these are the totals of {other}, not {quarter}; check the dates") from None
        raise
    _passed(message)


def check_beats_baselines(predictions: Any, dataset: Dataset, target_quarter: str, margin: float) -> None:
    """Exercise: predicted spend in ``target_quarter`` for every customer who bought in an earlier
    quarter (a Series indexed by customer_id), whose mean absolute error (MAE) against the ground
    truth is at least ``margin`` (0.05 = 5 %) below both baselines, which this check computes itself
    from the ground truth: "same as last quarter" (the previous quarter's spend) and "mean of
    earlier quarters" (over every quarter before the target, zeros included)."""
    table = _customer_quarter_table(dataset)
    if target_quarter not in table.columns or table.columns.get_loc(target_quarter) < 2:
        raise ValueError(f"target_quarter must be one of {list(table.columns[2:])}, got {target_quarter!r}")
    earlier = table.iloc[:, : table.columns.get_loc(target_quarter)]
    buyers = earlier.index[(earlier > 0).any(axis=1)]
    want = table.loc[buyers, target_quarter].to_numpy(dtype=np.float64)
    baselines = {
        "same as last quarter": earlier.loc[buyers].iloc[:, -1].to_numpy(dtype=np.float64),
        "mean of earlier quarters": earlier.loc[buyers].mean(axis=1).to_numpy(dtype=np.float64),
    }
    what = f"predicted spend in {target_quarter}"
    yours = _as_series(predictions, what)
    if yours.index.nlevels != 1:
        raise CheckFailed(f"{what}: index has {yours.index.nlevels} levels; expected one row per customer_id")
    if yours.index.has_duplicates:
        dupes = yours.index[yours.index.duplicated()].unique()
        raise CheckFailed(f"{what}: {len(dupes)} customer_ids appear more than once (e.g. {_examples(dupes)})")
    missing = buyers.difference(yours.index)
    if len(missing):
        raise CheckFailed(f"{what}: {len(missing)} of the {len(buyers)} customers who bought before "
                          f"{target_quarter} are missing (e.g. {_examples(missing)})")
    extra = yours.index.difference(buyers)
    if len(extra):
        raise CheckFailed(f"{what}: {len(extra)} customers who bought nothing before {target_quarter} "
                          f"(e.g. {_examples(extra)}): there is nothing to predict them from")
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
    _passed(f"✓ {what}: MAE ${mae:,.2f} over {len(buyers):,} customers, {1 - mae / best:.0%} below the better "
            f"baseline (MAE {shown})")


_install_notebook_display()


# Every check that reads a dataset verifies it when it fails (``_blames_changed_data``).
for _name, _check in list(globals().items()):
    if _name.startswith("check_") and callable(_check) and "dataset" in inspect.signature(_check).parameters:
        globals()[_name] = _blames_changed_data(_check)
del _name, _check
