"""Checks of memory: spilling that really happened, a partition plan in the GPU band, a persist
that fits the workers' budget (notebook 05)."""

from __future__ import annotations

from typing import Any

from distributed import futures_of

from utils.checks.grading import CheckFailed, blames_changed_data, passed
from utils.checks.totals import check_grouped
from utils.datagen.sizes import human_bytes
from utils.dataset import Dataset
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
