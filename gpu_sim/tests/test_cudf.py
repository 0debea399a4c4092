"""The simulated cudf 26.10 (``gpu_sim/cudf``): each test pins one contract copied from
rapidsai/cudf ``python/cudf/cudf`` (the module docstrings name the file). Runs only with the simulation
first on ``PYTHONPATH`` (``tests/gpu_wing/test_gpu_sim.py``)."""

from __future__ import annotations

import importlib.metadata
import io
import math

import cudf
import numpy as np
import pandas as pd
import pytest

from utils.backend import to_pandas as course_to_pandas


@pytest.fixture
def frame() -> cudf.DataFrame:
    return cudf.DataFrame({"k": [1, 2, 1, 3], "v": [1.0, 2.0, 3.0, 4.0], "s": ["a", "b", "c", "d"]})


def test_the_installed_metadata_and_class_paths_are_cudf_26_10():
    assert importlib.metadata.version("cudf") == "26.10.2+sim"
    assert cudf.__file__.endswith("gpu_sim/cudf/__init__.py")
    assert f"{cudf.DataFrame.__module__}.{cudf.DataFrame.__qualname__}" == "cudf.core.dataframe.DataFrame"
    assert f"{cudf.Series.__module__}.{cudf.Series.__qualname__}" == "cudf.core.series.Series"
    assert cudf.Index.__module__ == "cudf.core.index" and cudf.MultiIndex.__module__ == "cudf.core.multiindex"


def test_to_pandas_returns_plain_pandas_objects_and_the_course_helper_uses_it(frame):
    plain = frame.to_pandas()
    assert type(plain) is pd.DataFrame and type(frame["v"].to_pandas()) is pd.Series
    pd.testing.assert_frame_equal(plain, pd.DataFrame(frame))
    assert type(course_to_pandas(frame)) is pd.DataFrame  # utils.backend.to_pandas: module startswith "cudf"
    nullable = frame.to_pandas(nullable=True).dtypes
    assert (str(nullable["k"]), str(nullable["v"]), str(nullable["s"])) == ("Int64", "Float64", "string")
    with pytest.raises(ValueError, match="cannot both be set"):
        frame.to_pandas(nullable=True, arrow_type=True)


def test_from_pandas_converts_frames_and_refuses_what_cudf_cannot_hold():
    pdf = pd.DataFrame({"a": [1, 2], "b": ["x", "y"]})
    converted = cudf.from_pandas(pdf, nan_as_null=None)
    assert type(converted) is cudf.DataFrame and type(cudf.from_pandas(pdf["a"])) is cudf.Series
    assert type(cudf.from_pandas(pd.Index([1, 2]))) is cudf.Index
    with pytest.raises(TypeError, match="from_pandas only accepts"):
        cudf.from_pandas([1, 2])
    # python/cudf/cudf/core/column/column.py as_column: Python objects are no column
    with pytest.raises(cudf.errors.MixedTypeError, match="Cannot convert a date of object type"):
        cudf.from_pandas(pd.DataFrame({"d": [pd.Timestamp("2024-01-01").date()] * 2}))
    with pytest.raises(TypeError, match="Cannot create column with mixed types"):
        cudf.DataFrame({"x": [1, "a"]})


def test_operations_keep_the_cudf_type(frame):
    results = {
        "groupby sum": frame[["k", "v"]].groupby("k").sum(),
        "groupby column sum": frame.groupby("k")["v"].sum(),
        "groupby agg": frame.groupby("k").agg({"v": ["sum", "count"]}),
        "groupby size": frame.groupby("k").size(),
        "merge": frame.merge(frame, on="k"),
        "sort": frame.sort_values("v"),
        "set_index": frame.set_index("k"),
        "value_counts": frame["k"].value_counts(),
        "describe": frame.describe(),
        "nlargest": frame["v"].nlargest(2),
        "str accessor": frame["s"].str.upper(),
        "reset_index": frame.groupby("k").size().reset_index(),
        "loc mask": frame.loc[frame["k"] > 1],
        "cudf.concat": cudf.concat([frame, frame]),
    }
    wrong = {name: type(result) for name, result in results.items() if type(result).__module__.split(".")[0] != "cudf"}
    assert not wrong, wrong
    assert type(frame.dtypes) is pd.Series  # cudf returns dtypes as a pandas Series


def test_cudf_concat_refuses_pandas_objects(frame):
    with pytest.raises(TypeError, match="can only concatenate objects which are instances of"):
        cudf.concat([frame, frame.to_pandas()])
    with pytest.raises(ValueError, match="No objects to concatenate"):
        cudf.concat([])


def test_options_spill_and_spill_stats_like_cudf():
    before = cudf.get_option("spill")  # True once a LocalCUDACluster(enable_cudf_spill=True) started here
    assert before in (False, True) and cudf.get_option("spill_stats") == 0
    with cudf.option_context("spill", not before, "spill_stats", 1):
        assert cudf.get_option("spill") is (not before) and cudf.get_option("spill_stats") == 1
    assert cudf.get_option("spill") is before
    with pytest.raises(ValueError, match="is not a valid option. Must be one of"):
        cudf.set_option("spill", "yes")
    with pytest.raises(KeyError, match='"no-such-option" does not exist.'):
        cudf.get_option("no-such-option")


def test_implicit_conversion_to_host_objects_is_refused(frame):
    series = frame["v"]
    with pytest.raises(TypeError, match="Series object is not iterable"):
        list(series)
    with pytest.raises(TypeError, match="Implicit conversion to a host NumPy array via __array__ is not allowed"):
        np.asarray(series)
    with pytest.raises(TypeError, match="Implicit conversion to a host NumPy array"):
        np.asarray(frame)
    with pytest.raises(TypeError, match="does not support conversion to host memory via the `tolist"):
        series.tolist()
    with pytest.raises(TypeError, match="iteration of DataFrame via iterrows"):
        frame.iterrows()
    assert not hasattr(frame, "plot") and not hasattr(series, "plot")
    # cudf/core/series.py (26.10.2): `iteritems = items = SingleColumnFrame.__iter__`: present, and refusing
    with pytest.raises(TypeError, match="Series object is not iterable"):
        series.items()
    # the explicit conversions work, and pandas' own internals still convert
    assert series.to_numpy().tolist() == [1.0, 2.0, 3.0, 4.0]
    assert series.to_arrow().to_pylist() == [1.0, 2.0, 3.0, 4.0]
    assert series.to_dict() == {0: 1.0, 1: 2.0, 2: 3.0, 3: 4.0}
    assert math.isclose(float(np.log(series).sum()), 3.178, rel_tol=1e-3)


@pytest.mark.parametrize("keyword", [
    {"engine": "pyarrow"}, {"assume_missing": True}, {"converters": {"k": int}}, {"sample": 1000},
    {"dtype_backend": "pyarrow"}, {"on_bad_lines": "skip"}, {"low_memory": False},
])
def test_read_csv_accepts_only_cudf_keywords(keyword):
    name = next(iter(keyword))
    with pytest.raises(TypeError, match=rf"read_csv\(\) got an unexpected keyword argument '{name}'"):
        cudf.read_csv(io.StringIO("k,v\n1,2\n"), **keyword)


def test_read_csv_gives_cudf_dtypes(tiny_dataset):
    ds = tiny_dataset
    df = cudf.read_csv(ds.csv_files[0], **ds.csv_kwargs)
    assert type(df) is cudf.DataFrame
    dtypes = df.dtypes
    assert str(dtypes["customer_id"]) == "int64" and str(dtypes["sales_amount"]) == "float64"
    assert dtypes["timestamp"] == np.dtype("datetime64[ns]")  # libcudf parses dates to nanoseconds
    assert isinstance(dtypes["product_category"], pd.StringDtype)
    expected = pd.read_csv(ds.csv_files[0], **ds.csv_kwargs)
    pd.testing.assert_series_equal(df["sales_amount"].to_pandas(), expected["sales_amount"])
    assert (df["timestamp"].to_pandas() == expected["timestamp"]).all()


def test_read_csv_byte_ranges_split_a_file_into_disjoint_rows(tiny_dataset):
    path = tiny_dataset.csv_files[0]
    size = path.stat().st_size
    block = size // 5 + 7
    first = cudf.read_csv(path, byte_range=(0, block))
    names = list(first.columns)
    parts = [first] + [cudf.read_csv(path, byte_range=(start, block), names=names, header=None)
                       for start in range(block, size, block)]
    whole = cudf.read_csv(path)
    assert sum(len(part) for part in parts) == len(whole)
    assert cudf.concat(parts)["transaction_id"].to_pandas().tolist() == whole["transaction_id"].to_pandas().tolist()
    with pytest.raises(RuntimeError, match="byte_range offset with header not supported"):
        cudf.read_csv(path, byte_range=(block, block))
    with pytest.raises(ValueError, match="cannot manually limit rows to be read when using the byte range"):
        cudf.read_csv(path, byte_range=(0, block), nrows=5)


def test_read_parquet_accepts_only_cudf_keywords(tiny_dataset):
    path = tiny_dataset.parquet_files[0]
    refused = r"cudf engine doesn't support the following keyword arguments: \['dtype_backend'\]"
    with pytest.raises(ValueError, match=refused):
        cudf.read_parquet(path, dtype_backend="pyarrow")
    with pytest.raises(ValueError, match="Only supported engines are"):
        cudf.read_parquet(path, engine="fastparquet")
    with pytest.raises(ValueError, match="Expected list like for columns"):
        cudf.read_parquet(path, columns="customer_id")
    df = cudf.read_parquet(path, columns=["customer_id", "sales_amount"], filters=[("sales_amount", ">", 100)])
    assert type(df) is cudf.DataFrame and list(df.columns) == ["customer_id", "sales_amount"]
    assert len(df) and (df["sales_amount"] > 100).all()
    whole = cudf.read_parquet(tiny_dataset.parquet_dir)
    assert len(whole) == tiny_dataset.rows and whole.dtypes["timestamp"] == np.dtype("datetime64[ns]")


def _year_end_frame() -> pd.DataFrame:
    index = pd.DatetimeIndex(["2024-09-30 12:00", "2024-10-01 00:00", "2024-11-15 08:00", "2024-12-31 00:00",
                              "2024-12-31 15:00", "2025-01-01 00:00"], name="timestamp")
    return pd.DataFrame({"v": np.arange(6.0)}, index=index)


def test_loc_partial_date_string_is_an_instant_on_cudf_and_a_day_on_pandas():
    pdf = _year_end_frame()
    gdf = cudf.from_pandas(pdf)
    on_gpu = gdf.loc["2024-10-01":"2024-12-31"]
    on_cpu = pdf.loc["2024-10-01":"2024-12-31"]
    assert on_gpu.index.max() == pd.Timestamp("2024-12-31 00:00")  # DatetimeIndex.find_label_range
    assert on_cpu.index.max() == pd.Timestamp("2024-12-31 15:00")
    assert len(on_cpu) - len(on_gpu) == 1
    assert gdf["v"].loc["2024-10-01":"2024-12-31"].index.max() == pd.Timestamp("2024-12-31 00:00")


def test_loc_with_explicit_timestamps_agrees_on_both():
    pdf = _year_end_frame()
    gdf = cudf.from_pandas(pdf)
    bounds = slice(pd.Timestamp("2024-10-01"), pd.Timestamp("2024-12-31 23:59:59.999999999"))
    pd.testing.assert_frame_equal(gdf.loc[bounds].to_pandas(), pdf.loc[bounds])
    with pytest.raises(TypeError, match="Can only slice DatetimeIndex with a string or datetime objects"):
        gdf.loc[np.datetime64("2024-10-01"):np.datetime64("2024-12-31")]


def test_apply_compiles_numeric_functions_only():
    series = cudf.Series([1.0, 2.0, 3.0], name="x")
    assert series.apply(lambda x: x * 2 + 1).to_pandas().tolist() == [3.0, 5.0, 7.0]
    frame = cudf.DataFrame({"a": [1, 2], "b": [10.0, 20.0]})
    assert frame.apply(lambda row: row["a"] + row["b"], axis=1).to_pandas().tolist() == [11.0, 22.0]
    strings = cudf.Series(["a", "b"])
    # python/cudf/cudf/core/indexed_frame.py _apply: the numba typing error becomes this ValueError
    for func, data in [(lambda s: s.upper(), strings), (lambda x: pd.Timestamp(x), series),
                       (lambda x: f"{x}", series), (str.upper, strings)]:
        with pytest.raises(ValueError, match="user defined function compilation failed."):
            data.apply(func)
    with pytest.raises(NotImplementedError, match="only supports row wise ops"):
        frame.apply(lambda col: col.sum(), axis=0)
    with pytest.raises(ValueError, match="compilation failed"):
        strings.map(lambda s: s + "!")
    assert strings.map({"a": "A", "b": "B"}).to_pandas().tolist() == ["A", "B"]


def test_datetime_fields_have_cudf_dtypes():
    stamps = cudf.Series(pd.to_datetime(["2024-02-01", "2024-11-30"]))
    assert stamps.dt.quarter.dtype == np.dtype("int16")  # core/column/datetime.py quarter: int16 policy
    assert stamps.dt.year.dtype == np.dtype("int32")  # _get_dt_field casts int16 to int32 in 26.x
    assert type(stamps.dt.year) is cudf.Series


def test_csv_reader_infers_like_pandas_for_the_course_columns():
    df = cudf.read_csv(io.BytesIO(b"a,b,c\n1,2.5,x\n3,4.0,y\n"))
    assert [str(dtype) for dtype in df.dtypes.tolist()] == ["int64", "float64", "str"]
    empty = cudf.read_csv(io.BytesIO(b"1,2\n"), byte_range=(1, 1), names=["a", "b"], header=None)
    assert len(empty) == 0 and list(empty.columns) == ["a", "b"]


def test_cudf_pandas_runs_a_script_with_plain_pandas(tmp_path):
    import os
    import subprocess
    import sys

    script = tmp_path / "job.py"
    script.write_text("import sys\nimport pandas as pd\nprint(int(pd.Series([1, 2]).sum()), sys.argv[1:])\n")
    done = subprocess.run([sys.executable, "-m", "cudf.pandas", str(script), "x"], capture_output=True, text=True,
                          check=True, env={**os.environ, "PYTHONPATH": os.path.dirname(os.path.dirname(cudf.__file__))})
    assert done.stdout.strip() == "3 ['x']"


def test_to_pandas_keeps_a_groupby_multiindex():
    """A multi-key groupby result converts with its MultiIndex (notebook 06 renames a level of it)."""
    frame = cudf.from_pandas(pd.DataFrame({"month": [1, 1, 2], "region": ["n", "s", "n"], "v": [1.0, 2.0, 3.0]}))
    totals = frame.groupby(["month", "region"])["v"].sum().to_pandas()
    assert isinstance(totals.index, pd.MultiIndex) and list(totals.index.names) == ["month", "region"]
    assert isinstance(frame.groupby(["month", "region"]).sum().to_pandas().index, pd.MultiIndex)
