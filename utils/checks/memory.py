"""Checks of memory: spilling that really happened, a partition plan in the GPU band, a persist
that fits the workers' budget, a worker restarted for memory and the join that then fits (notebook 05)."""

from __future__ import annotations

from typing import Any

from distributed import futures_of

from utils.base.units import human_bytes
from utils.checks.grading import CheckFailed, as_series, blames_changed_data, compare_series, passed
from utils.checks.totals import check_grouped
from utils.dataset import Dataset
from utils.join_demo import region_cents
from utils.memory import spilled_partitions, worker_memory
from utils.partitions import GPU_BAND


def persisted_partitions(collection: Any, what: str) -> int:
    """Raise unless ``collection`` is a persisted Dask collection; return its partition count."""
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
    persisted_partitions(collection, "spilling")
    spilled, total = spilled_partitions(client, collection)
    if spilled == 0:
        raise CheckFailed(f"spilling: none of the {total} persisted partitions was spilled, so the data fit the "
                          "budget after all; lower the budget or use a bigger COURSE_SCALE")
    passed("✓ spilling happened: the workers moved part of the persisted data out of memory")


def check_partition_plan(partition_gb: Any, n_partitions: Any, gpu_memory_gb: float, data_gb: float) -> None:
    """A partition size in the 1/32-1/16 band of one GPU's memory, and the partition count it gives."""
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
    passed(f"✓ {what}: {size:g} GB partitions (1/32-1/16 of {gpu_memory_gb:g} GB), about {expected:,.0f} of them")


@blames_changed_data
def check_persisted_within_budget(slim: Any, totals: Any, client: Any, dataset: Dataset) -> None:
    """Exercise: persist only what the question needs, small enough to stay in memory: at most two
    thirds of what the workers may hold, leaving room for the tasks that use it and for uneven
    placement over the workers."""
    what = "slim persist"
    persisted_partitions(slim, what)
    held = sum(client.nbytes([future.key for future in futures_of(slim)], summary=False).values())
    budget = int(worker_memory(client)["budget"].sum())
    if budget and held > budget * 2 / 3:
        raise CheckFailed(f"{what}: it holds {human_bytes(held)}, more than two thirds of the workers' budget "
                          f"({human_bytes(budget)}); keep only the columns the question needs, with smaller dtypes")
    check_grouped(totals, dataset, ["store_id", "product_category"])
    passed(f"✓ {what}: {human_bytes(held)} held, within two thirds of the {human_bytes(budget)} budget")


MEMORY_RESTART_EVENTS = "worker-restart-memory"  # the nanny's event topic (distributed/worker_memory.py)


def memory_restarts(client: Any) -> int:
    """How many times a nanny of ``client``'s cluster restarted its worker for memory, as the
    scheduler recorded it."""
    return len(client.get_events(MEMORY_RESTART_EVENTS))


def check_restarted_for_memory(client: Any) -> None:
    """The demonstration's failure was a worker restarted for memory, not something else: the
    nanny's event says so. A demonstration in which nothing was restarted shows nothing."""
    if memory_restarts(client) == 0:
        raise CheckFailed("restart for memory: no nanny restarted its worker for memory, so the join fit after "
                          "all; give the worker less memory_limit or the join more rows")
    passed("✓ restart for memory: the nanny restarted the worker for memory, and the scheduler recorded it")


def check_region_cents(result: Any, rows: int, client: Any) -> None:
    """The join demonstration's total cents per region, exact, on a cluster where no worker was
    restarted for memory (a result that needed restarts would hide the problem)."""
    what = "cents per region"
    yours = as_series(result, what, "cents")
    message = compare_series(yours, region_cents(rows), what, "region", rtol=0, atol=0)
    restarts = memory_restarts(client)
    if restarts:
        raise CheckFailed(f"{what}: right, but a worker was restarted for memory {restarts} time(s) on the way; "
                          "use smaller partitions so that each task fits the worker")
    passed(f"{message}, with no restart for memory")
