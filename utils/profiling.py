"""Read Dask's task stream as a table and a static picture, and time things honestly.

The dashboard's task stream is live and interactive but disappears with the cluster and does not
render in a saved notebook or a CI log. ``get_task_stream`` records the same data; the functions
here turn it into a pandas table (to count, sum and compare) and a matplotlib Gantt chart (to
look at), so a notebook can *show* where time went, not just assert it.

    with get_task_stream(client=client) as ts:
        result = df.groupby("customer_id")["sales_amount"].sum().compute()
    frame = task_stream_frame(ts.data)
    summarize_task_stream(frame)
    plot_task_stream(frame)
"""

from __future__ import annotations

import time
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, TypeVar

import pandas as pd
from dask.utils import key_split

T = TypeVar("T")

# The four kinds of work a worker reports in a task's ``startstops``.
ACTIONS = ("compute", "transfer", "disk-read", "disk-write")
COLUMNS = ["worker", "thread", "key", "prefix", "action", "start", "stop", "duration"]
ALL_WORKERS = "all workers"

# Non-compute actions keep the dashboard's colours (transfer red, disk orange) and get a hatch
# so they stay distinguishable in print; compute bars are coloured by task prefix.
ACTION_STYLE = {
    "transfer": {"facecolor": "red", "hatch": "////", "alpha": 0.6},
    "disk-read": {"facecolor": "orange", "hatch": "....", "alpha": 0.8},
    "disk-write": {"facecolor": "darkorange", "hatch": "xxxx", "alpha": 0.8},
}
OTHER_ACTION_STYLE = {"facecolor": "grey", "hatch": "\\\\", "alpha": 0.6}
# tab20 without its reds and oranges, so that a task prefix never looks like a transfer.
_PREFIX_PALETTE_INDICES = (0, 4, 8, 10, 12, 14, 16, 18, 1, 5, 9, 11, 13, 15, 17, 19)


def task_stream_frame(ts_data: list[dict[str, Any]]) -> pd.DataFrame:
    """One row per start/stop interval of ``get_task_stream(...).data``.

    A task can have several intervals (e.g. ``transfer`` of its inputs, then ``compute``), and
    each is a separate bar in the dashboard, so each is a row here. Times are seconds since the
    earliest interval began, which makes streams from different runs comparable.
    """
    rows = []
    for task in ts_data:
        key = task["key"]
        prefix = key_split(key)
        for interval in task.get("startstops", ()):
            rows.append(
                {
                    "worker": task.get("worker", "unknown"),
                    "thread": task.get("thread", 0),
                    "key": str(key),
                    "prefix": prefix,
                    "action": interval["action"],
                    "start": float(interval["start"]),
                    "stop": float(interval["stop"]),
                }
            )
    frame = pd.DataFrame(rows, columns=COLUMNS[:-1])
    frame = frame.astype({"start": "float64", "stop": "float64"})
    if not frame.empty:
        origin = frame["start"].min()
        frame["start"] -= origin
        frame["stop"] -= origin
    frame["duration"] = frame["stop"] - frame["start"]
    return frame.sort_values(["start", "worker", "thread"], ignore_index=True)


def summarize_task_stream(frame: pd.DataFrame) -> pd.DataFrame:
    """Seconds spent per action on each worker, plus how busy its threads were.

    ``busy_share`` is busy seconds / (wall time x threads seen): the rest is the white space of
    the task stream (scheduler overhead, waiting for inputs, too little work). The last row sums
    all workers.
    """
    actions = list(ACTIONS) + sorted(set(frame["action"]) - set(ACTIONS))
    seconds = frame.pivot_table(
        index="worker", columns="action", values="duration", aggfunc="sum", fill_value=0.0
    )
    seconds = seconds.reindex(columns=actions, fill_value=0.0).astype("float64")
    seconds.columns.name = None
    seconds["total"] = seconds[actions].sum(axis=1)
    seconds["threads"] = frame.groupby("worker")["thread"].nunique()
    overall = seconds.sum().to_frame(ALL_WORKERS).T
    table = pd.concat([seconds, overall])
    table["threads"] = table["threads"].astype("int64")
    wall = float(frame["stop"].max() - frame["start"].min()) if not frame.empty else 0.0
    table["busy_share"] = table["total"] / (wall * table["threads"]) if wall > 0 else float("nan")
    table.index.name = "worker"
    return table


def _lane_labels(frame: pd.DataFrame) -> dict[tuple[str, Any], str]:
    """A readable y label per (worker, thread): ``127.0.0.1:40123 · thread 0``."""
    labels = {}
    for worker, threads in frame.groupby("worker", sort=True)["thread"]:
        name = str(worker).split("://")[-1]
        for i, thread in enumerate(sorted(threads.unique())):
            labels[(worker, thread)] = f"{name} · thread {i}"
    return labels


def prefix_colors(prefixes: list[str]) -> dict[str, Any]:
    """A colour per task prefix, never red or orange (those mean transfer and disk).

    Like the dashboard, the colour comes from a hash of the prefix name, so ``read-csv`` has the
    same colour in every plot; a prefix whose colour is already taken in this plot gets the next
    free one, so that two prefixes in one picture never share a colour (up to 16 prefixes).
    """
    from matplotlib import colormaps

    palette = [colormaps["tab20"](i) for i in _PREFIX_PALETTE_INDICES]
    colors: dict[str, Any] = {}
    taken: set[int] = set()
    for prefix in dict.fromkeys(prefixes):
        index = zlib.crc32(prefix.encode()) % len(palette)
        while index in taken and len(taken) < len(palette):
            index = (index + 1) % len(palette)
        taken.add(index)
        colors[prefix] = palette[index]
    return colors


def plot_task_stream(frame: pd.DataFrame, ax=None, title: str | None = None, legend: bool = True):
    """Draw the task stream as a static Gantt chart: one lane per worker thread.

    Compute bars are coloured per task prefix (like the dashboard); transfers are red and
    hatched, disk reads/writes (spilling) orange and hatched; gaps are idle time.
    Returns the matplotlib ``Axes``; each bar collection carries its prefix or action as label
    (``legend=False`` leaves the legend out, e.g. for a second plot with the same prefixes).
    """
    import matplotlib.pyplot as plt

    lanes = _lane_labels(frame)
    order = list(lanes)
    compute = frame[frame["action"] == "compute"]
    colors = prefix_colors(list(dict.fromkeys(compute["prefix"])))
    entries = len(colors) + frame.loc[frame["action"] != "compute", "action"].nunique()
    legend_columns = 1 + max(0, entries - 1) // 10
    if ax is None:  # wide enough for the legend columns, tall enough for the lanes
        size = (8 + 2.5 * legend_columns, 1.2 + max(0.45 * len(order), 0.25 * min(entries, 10)))
        _, ax = plt.subplots(figsize=size)
    labelled: set[str] = set()

    def draw(rows: pd.DataFrame, label: str, style: dict[str, Any]) -> None:
        for (worker, thread), lane in rows.groupby(["worker", "thread"], sort=False):
            y = order.index((worker, thread))
            ax.broken_barh(
                list(zip(lane["start"], lane["duration"], strict=True)),
                (y - 0.4, 0.8),
                edgecolor=style["facecolor"],
                linewidth=0.5,
                label=label if label not in labelled else "_nolegend_",
                **style,
            )
            labelled.add(label)

    for prefix, rows in compute.groupby("prefix", sort=False):
        draw(rows, prefix, {"facecolor": colors[prefix]})
    for action, rows in frame[frame["action"] != "compute"].groupby("action", sort=True):
        draw(rows, action, ACTION_STYLE.get(action, OTHER_ACTION_STYLE))

    ax.set_yticks(range(len(order)), [lanes[lane] for lane in order])
    ax.set_ylim(-0.6, len(order) - 0.4)
    ax.invert_yaxis()
    ax.set_xlabel("seconds since the first task started")
    ax.set_ylabel("worker · thread")
    ax.set_title(title or f"Task stream: {len(frame)} intervals on {len(order)} worker threads")
    if labelled and legend:
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize="small", frameon=False,
                  title="task prefix / action", ncols=legend_columns)
    ax.grid(axis="x", alpha=0.3)
    return ax


def count_tasks(collection: Any) -> int:
    """Tasks the scheduler will run for ``collection`` (its graph after optimisation and fusion).

    Every task costs scheduler and worker overhead (roughly 0.1-1 ms on a CPU), so the count is
    the first number to look at when a computation has many partitions or a shuffle.
    """
    optimized = collection.optimize() if hasattr(collection, "optimize") else collection
    return len(optimized.__dask_graph__())


@dataclass
class Timer:
    """What ``timed`` measured: ``seconds`` is set when the ``with`` block ends."""

    label: str
    seconds: float = float("nan")


@contextmanager
def timed(label: str, verbose: bool = True) -> Iterator[Timer]:
    """Measure the wall time of a ``with`` block (``time.perf_counter``) and print it.

    Wall time is what a learner waits for, including scheduling and data transfer, which is
    exactly what CPU-time or per-task measurements leave out.
    """
    timer = Timer(label)
    start = time.perf_counter()
    try:
        yield timer
    finally:
        timer.seconds = time.perf_counter() - start
        if verbose:
            print(f"{label}: {timer.seconds:.2f} s")


def time_call(function: Callable[[], T]) -> tuple[T, float]:
    """Run ``function()`` and return ``(its result, wall seconds)``: for timing a value-returning
    call in one line, where a ``with timed(...)`` block would need a variable set inside it."""
    start = time.perf_counter()
    result = function()
    return result, time.perf_counter() - start

