"""The simulated dask_cudf 26.10 (``gpu_sim/dask_cudf``) under ``dataframe.backend="cudf"``: each
test pins one contract of rapidsai/cudf ``python/dask_cudf/dask_cudf`` (the module docstrings name the
file). In-process with the synchronous scheduler, except one small LocalCluster test."""

from __future__ import annotations

import importlib.metadata

import cudf
import dask
import dask.dataframe as dd
import dask_cudf
import dask_cudf.io.parquet as dask_cudf_parquet
import numpy as np
import pandas as pd
import pytest
from dask.sizeof import sizeof


@pytest.fixture
def gpu_backend():
    with dask.config.set({"dataframe.backend": "cudf", "scheduler": "sync", "dataframe.shuffle.method": "tasks"}):
        yield


@pytest.fixture
def device_memory(monkeypatch):
    """Set the simulated device size (pynvml reads GPU_SIM_MEMORY_BYTES) and forget dask_cudf's cache."""

    def set_memory(n_bytes: int | None) -> None:
        if n_bytes is None:
            monkeypatch.delenv("GPU_SIM_MEMORY_BYTES", raising=False)
        else:
            monkeypatch.setenv("GPU_SIM_MEMORY_BYTES", str(n_bytes))
        monkeypatch.setattr(dask_cudf_parquet, "_DEVICE_SIZE_CACHE", None)

    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    set_memory(None)
    return set_memory


def _is_cudf(obj) -> bool:
    return type(obj).__module__.split(".")[0] == "cudf"


def test_the_backend_is_found_through_the_entry_points_of_the_dist_info():
    assert importlib.metadata.version("dask-cudf") == "26.10.2+sim"
    for group in ("dask.dataframe.backends", "dask_expr.dataframe.backends"):  # both, as real pyproject.toml
        (entry,) = [ep for ep in importlib.metadata.entry_points(group=group) if ep.name == "cudf"]
        assert entry.value == "dask_cudf.backends:CudfBackendEntrypoint"
        assert entry.load() is dask_cudf.backends.CudfBackendEntrypoint


def test_collections_have_cudf_partitions_and_compute_to_cudf(gpu_backend, tiny_dataset):
    ds = tiny_dataset
    for collection in [dd.read_csv(ds.csv_files, **ds.csv_kwargs), dd.read_parquet(ds.parquet_dir),
                       dd.from_dict({"a": list(range(10))}, npartitions=2)]:
        assert type(collection) is dask_cudf.DataFrame and type(collection._meta) is cudf.DataFrame
        assert type(collection.partitions[0].compute()) is cudf.DataFrame
    assert type(dd.read_parquet(ds.parquet_dir)["sales_amount"].sum().compute()) in (float, np.float64)
    assert sizeof(cudf.DataFrame({"a": [1, 2]})) > 0 and cudf.DataFrame.mean is not None


def test_to_backend_moves_between_pandas_and_cudf(tiny_dataset):
    with dask.config.set(scheduler="sync"):
        on_cpu = dd.read_parquet(tiny_dataset.parquet_dir)
        on_gpu = on_cpu.to_backend("cudf")
        back = on_gpu.to_backend("pandas")
        assert type(on_gpu._meta) is cudf.DataFrame and type(on_gpu.compute()) is cudf.DataFrame
        assert type(back._meta) is pd.DataFrame and type(back.compute()) is pd.DataFrame
        assert len(back.compute()) == tiny_dataset.rows


def test_partition_results_of_shuffles_and_joins_stay_cudf(gpu_backend, tiny_dataset):
    ds = tiny_dataset
    df = dd.read_parquet(ds.parquet_dir)
    customers = dd.read_parquet(ds.customers_parquet)
    computed = {
        "groupby sum": df.groupby("customer_id")["sales_amount"].sum(),
        "groupby split_out": df.groupby("customer_id")["sales_amount"].sum(split_out=2),
        "merge": df.merge(customers, on="customer_id", how="left"),
        "broadcast merge": df.merge(customers.repartition(npartitions=2), on="customer_id", broadcast=True),
        "concat": dd.concat([df, df]),
        "sort_values": df.sort_values("sales_amount"),
        "set_index": df.set_index("customer_id"),
        "nlargest": df.groupby("customer_id")["sales_amount"].sum().nlargest(10),
        "dt accessor": df["timestamp"].dt.quarter,
    }
    wrong = {}
    for name, collection in computed.items():
        partitions = [type(part) for part in dask.compute(*collection.to_delayed())]
        if not all(_is_cudf(collection._meta) and t.__module__.startswith("cudf") for t in partitions):
            wrong[name] = (type(collection._meta), partitions)
    assert not wrong, wrong


def test_read_csv_rejects_pandas_only_keywords_at_once_or_at_compute(gpu_backend, tiny_dataset):
    ds = tiny_dataset
    # dask's read_pandas samples with cudf.read_csv as the reader: the keyword reaches it at once
    with pytest.raises(TypeError, match="registered to the cudf backend.\nOriginal Message: read_csv\\(\\) got an "
                                        "unexpected keyword argument 'engine'"):
        dd.read_csv(ds.csv_files, engine="pyarrow", **ds.csv_kwargs)
    # read_pandas consumes assume_missing/sample itself, then every block passes them to cudf.read_csv
    lazy = dd.read_csv(ds.csv_files, assume_missing=True, **ds.csv_kwargs)
    with pytest.raises(TypeError, match="unexpected keyword argument 'assume_missing'"):
        lazy.compute()
    fast_gpu = ds.fast_csv_kwargs(["customer_id", "sales_amount"], backend="gpu")
    assert len(dd.read_csv(ds.csv_files, **fast_gpu).compute()) == ds.rows
    with pytest.raises(TypeError, match="unexpected keyword argument 'engine'"):
        dd.read_csv(ds.csv_files, **ds.fast_csv_kwargs(["customer_id", "sales_amount"], backend="cpu"))


def _byte_ranges(collection) -> list[tuple[int, int]]:
    from_map = next(expr for expr in collection.expr.walk() if type(expr).__name__ == "FromMap")
    return [kwargs["byte_range"] for kwargs in from_map.iterables[1]]


def test_read_csv_cuts_256_mib_blocks_by_default_within_each_file(gpu_backend, tiny_dataset):
    ds = tiny_dataset
    default = dd.read_csv(ds.csv_files, **ds.csv_kwargs)
    assert _byte_ranges(default) == [(0, 256 * 2**20)] * len(ds.csv_files)
    sizes = [path.stat().st_size for path in ds.csv_files]
    small = dd.read_csv(ds.csv_files, blocksize=50_000, **ds.csv_kwargs)
    assert small.npartitions == sum(-(-size // 50_000) for size in sizes)  # no block spans two files
    assert len(small.compute()) == ds.rows
    assert dd.read_csv(ds.csv_files, blocksize=None, **ds.csv_kwargs).npartitions == len(ds.csv_files)
    # nrows switches blocks off (one partition per file, each cudf.read_csv(nrows=...)); pandas refuses nrows
    first_rows = dd.read_csv(ds.csv_files, nrows=100, **ds.csv_kwargs)
    assert first_rows.npartitions == len(ds.csv_files) and len(first_rows.compute()) == 100 * len(ds.csv_files)
    with dask.config.set({"dataframe.backend": "pandas"}), pytest.raises(ValueError, match="'nrows' keyword"):
        dd.read_csv(ds.csv_files, nrows=100, **ds.csv_kwargs)


def test_dask_cudf_read_csv_is_dd_read_csv_under_the_cudf_backend(tiny_dataset):
    ds = tiny_dataset
    with dask.config.set({"dataframe.backend": "pandas", "scheduler": "sync"}):
        article = dask_cudf.read_csv(ds.csv_files, **ds.csv_kwargs)
        assert type(article) is dask_cudf.DataFrame and type(article.head(2)) is cudf.DataFrame
        with pytest.warns(FutureWarning, match="dask_cudf.io.read_csv is now deprecated"):
            dask_cudf.io.read_csv(ds.csv_files, **ds.csv_kwargs)
    with dask.config.set({"dataframe.backend": "cudf"}):
        assert dd.read_csv(ds.csv_files, **ds.csv_kwargs)._name == article._name


def test_read_parquet_fuses_small_files_only_when_optimized(gpu_backend, tiny_dataset, device_memory):
    ds = tiny_dataset
    df = dd.read_parquet(ds.parquet_dir)
    assert dask_cudf_parquet._normalize_blocksize() == 80 * 2**30 // 32  # pynvml total of device 0, 1/32
    assert df.npartitions == len(ds.parquet_files)  # one per file before optimize()
    optimized = df.optimize()
    assert optimized.npartitions < len(ds.parquet_files)
    plan = optimized.expr.tree_repr()
    assert "CudfFusedIO" in plan and "NoOp" in plan
    assert "CudfReadParquetFSSpec" in df.expr.tree_repr()
    assert all(key[0].startswith("read_parquet-fused-") for key in optimized.__dask_graph__()
               if "read_parquet" in key[0] and "operation" not in key[0])
    assert len(df.compute()) == ds.rows
    listed = dd.read_parquet([str(path) for path in ds.parquet_files], columns=["customer_id", "sales_amount"])
    assert listed.npartitions == len(ds.parquet_files) > listed.optimize().npartitions
    unfused = dd.read_parquet(ds.parquet_dir, blocksize=None)
    assert unfused.optimize().npartitions == len(ds.parquet_files)  # blocksize=None: one per file
    with dask.config.set({"dataframe.backend": "pandas"}):
        assert dd.read_parquet(ds.parquet_dir).optimize().npartitions == len(ds.parquet_files)


def test_parquet_blocksize_follows_the_simulated_device_memory(gpu_backend, tiny_dataset, device_memory):
    file_bytes = tiny_dataset.parquet_files[0].stat().st_size
    device_memory(file_bytes * 32 // 4)  # 1/32 of it is smaller than one file: nothing to fuse
    df = dd.read_parquet(tiny_dataset.parquet_dir)
    assert df.expr.frame.blocksize == file_bytes // 4
    assert df.optimize().npartitions == len(tiny_dataset.parquet_files)
    device_memory(2 * 2**30)
    assert dask_cudf_parquet._normalize_blocksize(0.5) == 2**30


def test_read_parquet_with_the_arrow_filesystem_fuses_and_pushes_filters_down(gpu_backend, tiny_dataset,
                                                                              device_memory):
    arrow = dd.read_parquet(tiny_dataset.parquet_dir, filesystem="arrow")
    assert "CudfReadParquetPyarrowFS" in arrow.expr.tree_repr()
    query = arrow[arrow["sales_amount"] > 100][["customer_id", "sales_amount"]]
    plan = query.optimize().expr.tree_repr()
    assert "CudfFusedParquetIO" in plan
    reader = next(e for e in query.simplify().expr.walk() if type(e).__name__ == "CudfReadParquetPyarrowFS")
    assert reader.filters is not None  # the filter went into the reader
    result = query.compute()
    assert type(result) is cudf.DataFrame and len(result) and (result["sales_amount"] > 100).all()


@pytest.mark.parametrize(("keywords", "error", "message"), [
    ({"dtype_backend": "pyarrow"}, NotImplementedError, "dtype_backend is not supported by the 'cudf' backend."),
    ({"engine": "pyarrow"}, NotImplementedError, "engine={engine} is not supported by the 'cudf' backend."),
    ({"open_file_options": {}}, ValueError, "The open_file_options argument is no longer supported"),
])
def test_read_parquet_refuses_pandas_only_keywords(gpu_backend, tiny_dataset, keywords, error, message):
    with pytest.raises(error) as raised:
        dd.read_parquet(tiny_dataset.parquet_dir, **keywords)
    assert "registered to the cudf backend" in str(raised.value) and message in str(raised.value)


def test_named_aggregation_fails_as_in_26_10(gpu_backend, tiny_dataset):
    df = dd.read_parquet(tiny_dataset.parquet_dir)
    # dask's GroupBy.agg(*args, **kwargs) -> dask_cudf's aggregate(self, arg, fused=True, **kwargs)
    with pytest.raises(TypeError, match=r"^GroupBy.aggregate\(\) missing 1 required positional argument: 'arg'$"):
        df.groupby("customer_id").agg(total=("sales_amount", "sum"))
    with pytest.raises(TypeError, match=r"^SeriesGroupBy.aggregate\(\) missing 1 required positional argument"):
        df.groupby("customer_id")["sales_amount"].agg(total="sum")
    with dask.config.set({"dataframe.backend": "pandas"}):
        on_cpu = dd.read_parquet(tiny_dataset.parquet_dir)
        assert list(on_cpu.groupby("customer_id").agg(total=("sales_amount", "sum")).columns) == ["total"]


def test_groupby_aggregations_that_work_on_26_10(gpu_backend, tiny_dataset):
    df = dd.read_parquet(tiny_dataset.parquet_dir)
    truth = pd.read_parquet(tiny_dataset.parquet_dir).groupby("customer_id")["sales_amount"]
    by_sum = df.groupby("customer_id")["sales_amount"].sum(split_out=2).compute()
    assert type(by_sum) is cudf.Series
    pd.testing.assert_series_equal(by_sum.to_pandas().sort_index(), truth.sum(), check_names=False)
    both = df.groupby("customer_id").agg({"sales_amount": ["sum", "count", "mean"]}).compute()
    assert type(both) is cudf.DataFrame and list(both.columns) == [("sales_amount", "sum"), ("sales_amount", "count"),
                                                                   ("sales_amount", "mean")]
    np.testing.assert_allclose(both.to_pandas().sort_index()[("sales_amount", "mean")], truth.mean())
    one = df.groupby("customer_id").agg({"sales_amount": "sum"}).compute()
    assert list(one.columns) == ["sales_amount"]
    assert type(df.groupby(["store_id", "product_category"]).sales_amount.std().compute()) is cudf.Series
    with pytest.raises(NotImplementedError, match="Please reset the index after aggregating"):
        df.groupby("customer_id", as_index=False)
    with pytest.warns(FutureWarning, match="The `as_index` argument is now deprecated"):
        df.groupby("customer_id", as_index=True)


def test_loc_keeps_partial_date_strings_for_cudf_partitions(gpu_backend):
    index = pd.DatetimeIndex(["2024-09-30 12:00", "2024-10-01 00:00", "2024-11-15 08:00", "2024-12-31 00:00",
                              "2024-12-31 15:00", "2025-01-01 00:00"], name="timestamp")
    pdf = pd.DataFrame({"v": np.arange(6.0)}, index=index)
    on_gpu = dd.from_pandas(cudf.from_pandas(pdf), npartitions=2)
    on_cpu = dd.from_pandas(pdf, npartitions=2)
    assert on_gpu.known_divisions and on_cpu.known_divisions
    gpu_rows = on_gpu.loc["2024-10-01":"2024-12-31"]
    cpu_rows = on_cpu.loc["2024-10-01":"2024-12-31"]
    assert gpu_rows.expr.iindexer == slice("2024-10-01", "2024-12-31")  # not widened for a cudf meta
    assert isinstance(cpu_rows.expr.iindexer.stop, pd.Timestamp)  # widened to the end of the day
    assert gpu_rows.compute().index.max() == pd.Timestamp("2024-12-31 00:00")  # 15:00 dropped
    assert cpu_rows.compute().index.max() == pd.Timestamp("2024-12-31 15:00")
    bounds = slice(pd.Timestamp("2024-10-01"), pd.Timestamp("2024-12-31 23:59:59.999999999"))
    pd.testing.assert_frame_equal(on_gpu.loc[bounds].compute().to_pandas(), on_cpu.loc[bounds].compute())


def test_loc_on_the_course_dataset_with_parquet_divisions(gpu_backend, tiny_dataset):
    indexed = dd.read_parquet(tiny_dataset.parquet_dir, index="timestamp", calculate_divisions=True)
    assert indexed.known_divisions
    truth = pd.read_parquet(tiny_dataset.parquet_dir).set_index("timestamp").sort_index()
    explicit = indexed.loc[pd.Timestamp("2024-10-01"):pd.Timestamp("2024-12-31 23:59:59.999999999")].compute()
    assert len(explicit) == len(truth.loc["2024-10-01":"2024-12-31"])
    partial = indexed.loc["2024-10-01":"2024-12-31"].compute()
    assert len(partial) == len(truth.loc["2024-10-01":pd.Timestamp("2024-12-31")])


def test_to_parquet_writes_a_cudf_collection(gpu_backend, tiny_dataset, tmp_path):
    df = dd.read_parquet(tiny_dataset.parquet_dir)
    df.to_parquet(tmp_path / "copy")
    again = dd.read_parquet(tmp_path / "copy")
    assert type(again._meta) is cudf.DataFrame and len(again) == tiny_dataset.rows


def test_a_local_cluster_moves_cudf_partitions_between_processes(tiny_dataset, device_memory, monkeypatch):
    from distributed import Client, LocalCluster

    monkeypatch.setenv("GPU_SIM_MEMORY_BYTES", str(40 * 2**30))  # inherited by the worker processes
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                      dashboard_address=None) as cluster, Client(cluster) as client, \
            dask.config.set({"dataframe.backend": "cudf", "dataframe.shuffle.method": "tasks"}):
        monkeypatch.setenv("GPU_SIM_MEMORY_BYTES", str(80 * 2**30))  # this process differs from the workers
        df = dd.read_parquet(tiny_dataset.parquet_dir)
        assert dask_cudf_parquet._DEVICE_SIZE_CACHE == 40 * 2**30  # the smallest worker device (client.run)
        totals = df.groupby("customer_id")["sales_amount"].sum(split_out=2).compute()
        modules = client.run(lambda: __import__("cudf").__file__)
    customers = pd.read_parquet(tiny_dataset.parquet_dir, columns=["customer_id"])["customer_id"].nunique()
    assert type(totals) is cudf.Series and len(totals) == customers
    assert all(path.endswith("gpu_sim/cudf/__init__.py") for path in modules.values())
