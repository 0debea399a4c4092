"""Behaviours inside accepted calls that the simulated cudf copies from cudf 26.10.2 because a course
cell depends on them (each test fails without the copied code). Runs only with the simulation first
on ``PYTHONPATH`` (``tests/gpu_wing/test_gpu_sim.py``)."""

from __future__ import annotations

import cudf
import dask.dataframe as dd
import pandas as pd
import pytest


def test_clip_accepts_only_axis_1_as_in_indexed_frame_clip():
    # cudf/core/indexed_frame.py IndexedFrame.clip: `if axis != 1: raise NotImplementedError(...)`
    series = cudf.Series([1.0, -2.0, 3.0])
    clipped = series.clip(lower=0)
    assert type(clipped) is cudf.Series and clipped.to_pandas().tolist() == [1.0, 0.0, 3.0]
    assert cudf.Series([5.0, -5.0]).clip(3, 1).to_pandas().tolist() == [3.0, 1.0]  # a Series swaps lower > upper
    frame = cudf.DataFrame({"a": [1, -1], "b": [5, -5]})
    assert frame.clip(lower=[0, -2]).to_pandas().to_dict("list") == {"a": [1, 0], "b": [5, -2]}
    with pytest.raises(NotImplementedError, match="axis is not yet supported in clip"):
        series.clip(lower=0, axis=None)
    with pytest.raises(ValueError, match="equal to number of columns"):
        frame.clip(lower=[0], upper=[1])


def test_a_pandas_meta_over_cudf_partitions_sends_axis_none_to_clip():
    # What xgboost.dask.predict builds (map_partitions with a pandas meta) meets on a GPU: dask's
    # Series.clip (dask/dataframe/dask_expr/_collection.py) passes axis=None to each partition.
    collection = dd.from_pandas(pd.Series([1.0, -2.0]), npartitions=1).map_partitions(
        cudf.from_pandas, meta=pd.Series([], dtype="f8"))
    with pytest.raises(NotImplementedError, match="axis is not yet supported in clip"):
        collection.clip(lower=0).compute()
    # dask_cudf's own Series.clip (dask_cudf/_expr/collection.py) sends axis=1: fine
    assert collection.to_backend("cudf").clip(lower=0).compute().to_pandas().tolist() == [1.0, 0.0]


def test_groupby_defaults_to_sort_false_and_hash_ordered_groups():
    # cudf/core/indexed_frame.py IndexedFrame.groupby: sort defaults to mode.pandas_compatible (False)
    frame = cudf.DataFrame({"k": list(range(40, 0, -1)) * 2, "v": [1.0] * 80})
    unsorted = frame.groupby("k")["v"].sum().to_pandas()
    ordered = frame.groupby("k", sort=True)["v"].sum().to_pandas()
    assert ordered.index.tolist() == list(range(1, 41))
    assert sorted(unsorted.index.tolist()) == ordered.index.tolist()
    first_seen = list(range(40, 0, -1))
    assert unsorted.index.tolist() not in (ordered.index.tolist(), first_seen)  # neither sorted nor first-seen
    with cudf.option_context("mode.pandas_compatible", True):
        assert frame.groupby("k")["v"].sum().to_pandas().index.tolist() == list(range(1, 41))


def test_groupby_refuses_what_cudf_has_not_implemented():
    frame = cudf.DataFrame({"k": [1, 2], "v": [1.0, 2.0]})
    with pytest.raises(NotImplementedError, match="observed parameter is not yet implemented"):
        frame.groupby("k", observed=False)
    with pytest.raises(NotImplementedError, match="axis parameter is not yet implemented"):
        frame.groupby("k", axis=1)
    with pytest.raises(TypeError, match="requires either by or level"):
        frame.groupby()
    assert frame["k"].value_counts().to_pandas().to_dict() == {1: 1, 2: 1}  # pandas' internal groupby still works


def test_dt_floor_and_round_take_only_cudfs_frequencies():
    # cudf/core/column/datetime.py DatetimeColumn._round_dt: D, h, min, s, ms, us, ns exactly
    times = cudf.Series(pd.to_datetime(["2024-03-05 10:31:07", "2024-03-06 23:59:59"]))
    assert times.dt.floor("D").to_pandas().tolist() == [pd.Timestamp("2024-03-05"), pd.Timestamp("2024-03-06")]
    assert times.dt.round("h").to_pandas().tolist()[0] == pd.Timestamp("2024-03-05 11:00")
    for frequency in ("1D", "15min", "W", "MS"):
        with pytest.raises(ValueError, match=f"Invalid resolution: '{frequency}'"):
            times.dt.floor(frequency)


def test_pandas_given_a_cudf_object_needs_a_host_copy_and_is_refused():
    # pandas core/construction.py sanitize_array: np.array(data) for a new column, which cudf refuses
    # (core/frame.py Frame.__array__); pandas core/reshape/concat.py refuses non-pandas objects. cudf's own
    # methods take cudf arguments.
    host = pd.DataFrame({"a": [1.0, 2.0]})
    device = cudf.Series([3.0, 4.0])
    with pytest.raises(TypeError, match="Implicit conversion to a host NumPy array"):
        host.assign(b=device)
    with pytest.raises(TypeError, match="cannot concatenate object of type"):
        pd.concat([host, cudf.DataFrame({"a": [5.0]})])
    frame = cudf.DataFrame({"a": [1.0, 2.0]})
    assert frame.assign(b=device).to_pandas()["b"].tolist() == [3.0, 4.0]
    assert frame[frame["a"] > 1.0].to_pandas()["a"].tolist() == [2.0]
