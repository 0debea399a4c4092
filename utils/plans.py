"""Reading Dask DataFrame query plans as short text, with public APIs only.

``collection.optimize(fuse=False).pprint()`` prints the optimized plan, but readers carry sample
rows and long function reprs in their parameters, which bury the operations a learner wants to
see. These helpers keep one line per operation, so notebooks and self-checks read plans the same
way.
"""

from __future__ import annotations

import contextlib
import io
from collections import Counter
from typing import Any

from dask.utils import key_split

SHUFFLE_MARKERS = ("Shuffle", "P2P")  # P2PShuffle, TaskShuffle, DiskShuffle, HashJoinP2P, ...


def plan_lines(collection: Any, width: int = 110, replace: dict[str, str] | None = None) -> list[str]:
    """The optimized plan of a Dask DataFrame/Series, one operation per line (top = last step).

    Lines that are not operations (sample rows printed inside a reader's parameters) are dropped;
    long lines are cut at ``width``; ``replace`` shortens strings such as long paths.
    """
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        collection.optimize(fuse=False).pprint()
    lines = []
    for line in buffer.getvalue().splitlines():
        if not line.lstrip()[:1].isupper():
            continue
        for old, new in (replace or {}).items():
            line = line.replace(old, new)
        lines.append(line if len(line) <= width else line[: width - 3] + "...")
    return lines


def show_plan(collection: Any, width: int = 110, replace: dict[str, str] | None = None) -> None:
    """Print ``plan_lines``: read it bottom-up, from the reader to the result."""
    print("\n".join(plan_lines(collection, width, replace)))


def task_counts(collection: Any) -> dict[str, int]:
    """The tasks of the optimized plan, counted by name (``dask.utils.key_split``, the names the task
    stream and the dashboard show), most first. Counted before blockwise fusion (``fuse=False``, as
    ``plan_lines``), so a read and the steps after it count once each per partition.

    This counts what the optimizer really runs: Dask fuses small Parquet files into one read task
    (``read_parquet-fused``) only when the reader feeds another operation, so a bare
    ``read_parquet(...).optimize().npartitions`` can differ from the read tasks of a computation."""
    graph = collection.optimize(fuse=False).__dask_graph__()
    return dict(Counter(key_split(key) for key in graph).most_common())


def read_tasks(collection: Any) -> int:
    """How many tasks of the optimized plan read files: those whose name says ``read``
    (``read-csv``, ``read_parquet``, ``read_parquet-fused``, ``readparquetpyarrowfs-fused-parq``, ...)."""
    return sum(count for name, count in task_counts(collection).items() if "read" in name)


def data_movement(collection: Any) -> str:
    """How the plan moves rows between partitions: the first shuffle node it contains
    (``P2PShuffle``, ``TaskShuffle``, ``HashJoinP2P``, ...), or ``"no shuffle"`` when partitions
    are only combined (a tree reduction) or processed where they are."""
    for line in plan_lines(collection, width=10_000):
        name = line.strip().split(":", 1)[0].split("(", 1)[0]
        if any(marker in name for marker in SHUFFLE_MARKERS):
            return name
    return "no shuffle"


def plan_operations(collection: Any) -> list[str]:
    """The names of the optimized plan's operations, top (the last step) first."""
    return [line.strip().split(":", 1)[0] for line in plan_lines(collection, width=10_000)]


def join_strategy(joined: Any) -> str:
    """How Dask runs a ``merge``, read from its optimized plan: a broadcast join, a hash join over
    a P2P or a tasks shuffle, or a blockwise merge that moves nothing."""
    operations = plan_operations(joined)
    if "BroadcastJoin" in operations:
        return "broadcast join"
    if "HashJoinP2P" in operations:
        return "hash join (P2P shuffle)"
    if any("Shuffle" in operation for operation in operations):
        return "hash join (tasks shuffle)"
    return "blockwise merge (no shuffle)"
