"""Plans read as text through public APIs: one line per operation, and the shuffle named."""

from __future__ import annotations

import dask
import dask.dataframe as dd
import pandas as pd

from utils.plans import data_movement, plan_lines, show_plan


def _frames():
    left = dd.from_pandas(pd.DataFrame({"k": range(100), "v": 1.0}), npartitions=4)
    right = dd.from_pandas(pd.DataFrame({"k": range(100), "w": 2.0}), npartitions=3)
    return left, right


def test_tree_reduction_moves_nothing_and_a_split_out_shuffles():
    left, _ = _frames()
    assert data_movement(left.groupby("k").v.sum(split_out=1)) == "no shuffle"
    with dask.config.set({"dataframe.shuffle.method": "tasks"}):
        assert data_movement(left.groupby("k").v.sum(split_out=4)) == "TaskShuffle"


def test_a_hash_join_is_named_by_its_shuffle():
    left, right = _frames()
    with dask.config.set({"dataframe.shuffle.method": "tasks"}):
        movement = data_movement(left.merge(right, on="k", broadcast=False))
    assert "Shuffle" in movement or "P2P" in movement


def test_plan_lines_are_operations_cut_to_width_and_replaced(tiny_dataset, capsys):
    frame = dd.read_csv(tiny_dataset.csv_files, **tiny_dataset.csv_kwargs)
    lines = plan_lines(frame[frame.sales_amount > 100].sales_amount.mean(), width=60,
                       replace={str(tiny_dataset.path): "<data>"})
    assert lines and all(line.lstrip()[:1].isupper() for line in lines)  # no sample rows
    assert all(len(line) <= 60 for line in lines)
    assert any("Filter" in line for line in lines)
    show_plan(frame.sales_amount.sum())
    assert capsys.readouterr().out.strip()


def test_join_strategy_names_broadcast_hash_and_blockwise_merges():
    from utils.plans import join_strategy

    left, right = _frames()
    single = dd.from_pandas(pd.DataFrame({"k": range(100), "w": 2.0}), npartitions=1)
    assert join_strategy(left.merge(single, on="k")) == "blockwise merge (no shuffle)"
    assert join_strategy(left.merge(right, on="k", broadcast=True)) == "broadcast join"
    with dask.config.set({"dataframe.shuffle.method": "tasks"}):
        assert join_strategy(left.merge(right, on="k", broadcast=False)) == "hash join (tasks shuffle)"
