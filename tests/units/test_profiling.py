"""utils.profiling on a task stream captured from a real LocalCluster, and on hand-made data."""

from __future__ import annotations

import time

import dask.dataframe as dd
import matplotlib
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest
from distributed import get_task_stream

from utils.base.paths import REPO_ROOT
from utils.cluster import shutdown, start_client
from utils.profiling import (
    ALL_WORKERS,
    COLUMNS,
    count_tasks,
    plot_task_stream,
    summarize_task_stream,
    task_stream_frame,
    time_call,
    timed,
)

matplotlib.use("Agg")  # no windows: the plots are inspected, never shown


@pytest.fixture(scope="module")
def client():
    client = start_client(n_workers=2, threads_per_worker=1, quiet=True, backend="cpu")
    client.wait_for_workers(2)
    yield client
    shutdown(client)


@pytest.fixture(scope="module")
def captured(client, tiny_dataset):
    """The course's groupby-sum on the tiny CSV files, with its task stream recorded."""
    df = dd.read_csv(tiny_dataset.csv_files, **tiny_dataset.csv_kwargs)
    with get_task_stream(client=client) as ts:
        totals = df.groupby("customer_id")["sales_amount"].sum().compute()
    assert len(totals) == tiny_dataset.answers()["customers_with_transactions"]
    return ts.data


@pytest.fixture
def hand_made() -> list[dict]:
    """Two tasks on two workers; the second first fetches its input (a transfer), then computes."""
    return [
        {
            "key": ("read-csv-abc123", 0),
            "worker": "tcp://127.0.0.1:1001",
            "thread": 11,
            "status": "OK",
            "startstops": ({"action": "compute", "start": 100.0, "stop": 100.5},),
        },
        {
            "key": ("sum-tree-def456", 0),
            "worker": "tcp://127.0.0.1:1002",
            "thread": 22,
            "status": "OK",
            "startstops": (
                {"action": "transfer", "start": 100.5, "stop": 100.75, "source": "tcp://127.0.0.1:1001"},
                {"action": "compute", "start": 100.75, "stop": 101.0},
            ),
        },
        {
            "key": "finalize-789",
            "worker": "tcp://127.0.0.1:1002",
            "thread": 22,
            "status": "OK",
            "startstops": ({"action": "disk-write", "start": 101.0, "stop": 101.25},),
        },
    ]


def test_frame_has_one_row_per_startstop(captured):
    frame = task_stream_frame(captured)
    assert list(frame.columns) == COLUMNS
    assert len(frame) == sum(len(task["startstops"]) for task in captured) > 0


def test_frame_covers_both_workers_and_the_groupby_steps(captured, client):
    frame = task_stream_frame(captured)
    assert set(frame["worker"]) == set(client.scheduler_info()["workers"])
    assert "compute" in set(frame["action"])
    computed = set(frame.loc[frame["action"] == "compute", "prefix"])
    assert {"read-csv", "chunk"} <= computed
    assert any(prefix.startswith("sum") for prefix in computed)  # the tree reduction's combine


def test_frame_times_are_relative_and_consistent(captured):
    frame = task_stream_frame(captured)
    assert frame["start"].min() == 0.0
    assert (frame["duration"] >= 0).all()
    assert (frame["stop"] >= frame["start"]).all()
    np.testing.assert_allclose(frame["duration"], frame["stop"] - frame["start"])
    assert frame["stop"].max() < 600  # seconds since the first task, not epoch seconds
    assert frame["start"].is_monotonic_increasing


def test_summary_totals_add_up(captured):
    frame = task_stream_frame(captured)
    summary = summarize_task_stream(frame)
    workers = summary.drop(index=ALL_WORKERS)
    assert set(workers.index) == set(frame["worker"])
    assert summary.loc[ALL_WORKERS, "total"] == pytest.approx(frame["duration"].sum())
    assert summary.loc[ALL_WORKERS, "compute"] == pytest.approx(
        frame.loc[frame["action"] == "compute", "duration"].sum()
    )
    for worker, rows in frame.groupby("worker"):
        assert summary.loc[worker, "total"] == pytest.approx(rows["duration"].sum())
    assert summary.loc[ALL_WORKERS, "threads"] == 2
    assert ((summary["busy_share"] > 0) & (summary["busy_share"] <= 1.0 + 1e-9)).all()


def test_plot_draws_every_interval_once_with_a_legend_per_prefix(captured):
    frame = task_stream_frame(captured)
    ax = plot_task_stream(frame)
    try:
        bars = sum(len(collection.get_paths()) for collection in ax.collections)
        assert bars == len(frame)
        legend = {text.get_text() for text in ax.get_legend().get_texts()}
        expected = set(frame.loc[frame["action"] == "compute", "prefix"])
        expected |= set(frame.loc[frame["action"] != "compute", "action"])
        assert legend == expected
        assert len(ax.get_yticks()) == frame.groupby(["worker", "thread"]).ngroups == 2
        assert ax.get_xlabel() and ax.get_ylabel()
    finally:
        plt.close(ax.figure)


def test_hand_made_stream_keeps_transfer_and_disk_actions(hand_made):
    frame = task_stream_frame(hand_made)
    assert len(frame) == 4
    assert list(frame["action"]) == ["compute", "transfer", "compute", "disk-write"]
    assert list(frame["prefix"]) == ["read-csv", "sum-tree", "sum-tree", "finalize"]
    assert list(frame["start"]) == [0.0, 0.5, 0.75, 1.0]
    assert list(frame["duration"]) == [0.5, 0.25, 0.25, 0.25]

    summary = summarize_task_stream(frame)
    second = "tcp://127.0.0.1:1002"
    assert summary.loc[second, "transfer"] == pytest.approx(0.25)
    assert summary.loc[second, "disk-write"] == pytest.approx(0.25)
    assert summary.loc["tcp://127.0.0.1:1001", "transfer"] == 0.0
    assert summary.loc[ALL_WORKERS, "total"] == pytest.approx(1.25)
    assert summary.loc[second, "busy_share"] == pytest.approx(0.75 / 1.25)

    ax = plot_task_stream(frame)
    try:
        by_label = {collection.get_label(): collection for collection in ax.collections}
        assert {"read-csv", "sum-tree", "transfer", "disk-write"} <= set(by_label)
        assert by_label["transfer"].get_hatch()  # transfers stand out from compute bars
        assert by_label["transfer"].get_hatch() != by_label["disk-write"].get_hatch()
        assert by_label["read-csv"].get_hatch() is None
    finally:
        plt.close(ax.figure)


def test_empty_stream_gives_an_empty_frame():
    frame = task_stream_frame([])
    assert frame.empty and list(frame.columns) == COLUMNS


def test_count_tasks_sees_the_shuffle(tiny_dataset):
    df = dd.read_parquet(tiny_dataset.parquet_dir)
    tree = df.groupby("customer_id")["sales_amount"].sum(split_out=1)
    shuffled = df.groupby("customer_id")["sales_amount"].sum(split_out=4)
    assert 0 < count_tasks(tree) < count_tasks(shuffled)


def test_timed_measures_and_prints(capsys):
    with timed("nothing much") as timer:
        sum(range(1000))
    assert 0 <= timer.seconds < 5
    assert capsys.readouterr().out.startswith("nothing much: ")
    with timed("quiet", verbose=False) as timer:
        pass
    assert capsys.readouterr().out == "" and timer.seconds >= 0


def test_time_call_returns_the_result_and_the_wall_time():
    result, seconds = time_call(lambda: sum(range(10)))
    assert result == 45
    _, slept = time_call(lambda: time.sleep(0.05))
    assert 0.04 <= slept < 5


def test_summary_of_an_empty_frame_is_empty_not_an_error():
    summary = summarize_task_stream(task_stream_frame([]))
    assert isinstance(summary, pd.DataFrame)
    assert summary.loc[ALL_WORKERS, "total"] == 0.0


def test_prefix_colours_are_stable_distinct_and_never_transfer_red():
    from matplotlib.colors import to_rgba

    from utils.profiling import prefix_colors

    alone = prefix_colors(["read-csv"])
    together = prefix_colors(["read-csv", "chunk", "sum-tree"])
    assert together["read-csv"] == alone["read-csv"]  # same prefix, same colour, in any plot
    many = prefix_colors([f"task-{i}" for i in range(16)])
    assert len(set(many.values())) == 16
    reserved = {to_rgba("red"), to_rgba("tab:red"), to_rgba("orange"), to_rgba("tab:orange")}
    assert not set(many.values()) & reserved


def test_notebook_04_writes_its_performance_report_to_the_scratch_area(tmp_path, monkeypatch):
    """Run notebook 04's report cell where the current folder cannot take a ``reports`` folder (a
    read-only checkout; as root, a file in the way stands in for the permissions), with a stand-in
    ``performance_report``: the report goes to ``ds.scratch_dir``, the course's one writable place."""
    import contextlib
    import json
    from pathlib import Path
    from types import SimpleNamespace

    import pandas as pd

    cells = json.loads((REPO_ROOT / "notebooks" / "04_profiling.ipynb").read_text())["cells"]
    [source] = ["".join(c["source"]) for c in cells if c["cell_type"] == "code" and "performance_report(" in
                "".join(c["source"]) and "report_path" in "".join(c["source"])]

    @contextlib.contextmanager
    def performance_report(filename):
        yield
        Path(filename).write_text("<html></html>")

    checkout = tmp_path / "checkout"
    checkout.mkdir()
    (checkout / "reports").write_text("not a folder")
    monkeypatch.chdir(checkout)
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    frame = dd.from_pandas(pd.DataFrame({"customer_id": [1, 1, 2], "sales_amount": [1.0, 2.0, 3.0]}), npartitions=1)
    namespace = {"Path": Path, "os": __import__("os"), "performance_report": performance_report, "df": frame,
                 "ds": SimpleNamespace(scratch_dir=scratch)}
    exec(compile(source, "notebook-04-report-cell", "exec"), namespace)
    assert namespace["report_path"].parent == scratch and namespace["report_path"].is_file()
