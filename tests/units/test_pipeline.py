"""The recommended pipeline (utils.pipeline) and the reader arguments it uses: exact answers,
no shuffle at any partition count, and no pandas-only argument on the cudf path."""

from __future__ import annotations

import inspect

import dask.dataframe as dd
import pandas as pd
import pytest

from utils import pipeline
from utils.checks import CheckFailed, check_customer_totals
from utils.dataset import CSV_COLUMNS
from utils.plans import data_movement

# The keyword names of cudf.read_csv (RAPIDS 26.10 documentation), as a stand-in: cudf cannot be
# installed here, and an argument outside this list raises TypeError on a GPU machine.
CUDF_READ_CSV_KEYWORDS = (
    "sep", "delimiter", "header", "names", "index_col", "usecols", "prefix", "mangle_dupe_cols", "dtype",
    "true_values", "false_values", "skipinitialspace", "skiprows", "skipfooter", "nrows", "na_values",
    "keep_default_na", "na_filter", "skip_blank_lines", "parse_dates", "dayfirst", "compression", "thousands",
    "decimal", "lineterminator", "quotechar", "quoting", "doublequote", "comment", "delim_whitespace",
    "byte_range", "storage_options", "bytes_per_thread",
)
CUDF_DTYPES = {"int64", "float64", "str", "string"}


def cudf_read_csv_stand_in(filepath_or_buffer, **kwargs):
    """Accepts exactly what cudf.read_csv accepts, like the real one (TypeError otherwise)."""
    parameters = [inspect.Parameter("filepath_or_buffer", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    keyword = inspect.Parameter.KEYWORD_ONLY
    parameters += [inspect.Parameter(name, keyword, default=None) for name in CUDF_READ_CSV_KEYWORDS]
    inspect.Signature(parameters).bind(filepath_or_buffer, **kwargs)


@pytest.mark.parametrize("fmt", pipeline.FORMATS)
def test_recommended_pipeline_is_exact(tiny_dataset, fmt):
    totals = pipeline.total_sales_per_customer(tiny_dataset, fmt).compute(scheduler="sync")
    check_customer_totals(totals, tiny_dataset)


def test_a_wrong_total_is_caught(tiny_dataset):
    totals = pipeline.total_sales_per_customer(tiny_dataset, "parquet").compute(scheduler="sync")
    totals.iloc[0] += 0.01
    with pytest.raises(CheckFailed):
        check_customer_totals(totals, tiny_dataset)


def test_no_shuffle_even_with_many_partitions(tiny_dataset):
    many = dd.read_csv(tiny_dataset.csv_files, blocksize=10_000, **tiny_dataset.fast_csv_kwargs(pipeline.COLUMNS))
    assert many.npartitions > 15  # where the default split_out starts to shuffle
    default = many.groupby(pipeline.KEY)[pipeline.VALUE].sum()
    assert data_movement(default) != "no shuffle"  # the trap exists at this partition count ...
    recommended = pipeline.customer_totals(many)
    assert data_movement(recommended) == "no shuffle"  # ... and the pipeline avoids it
    assert recommended.optimize().npartitions == 1
    keys = " ".join(str(key).lower() for key in recommended.optimize().__dask_graph__())
    assert "shuffle" not in keys and "p2p" not in keys
    check_customer_totals(recommended.compute(scheduler="sync"), tiny_dataset)


def test_fast_csv_kwargs_on_pandas_read_the_same_frame(tiny_dataset):
    path = tiny_dataset.csv_files[0]
    fast = tiny_dataset.fast_csv_kwargs(backend="cpu")
    assert fast["engine"] == "pyarrow"
    pd.testing.assert_frame_equal(pd.read_csv(path, **fast), pd.read_csv(path, **tiny_dataset.csv_kwargs))
    two = pd.read_csv(path, **tiny_dataset.fast_csv_kwargs(pipeline.COLUMNS, backend="cpu"))
    assert list(two.columns) == list(pipeline.COLUMNS)
    assert two.dtypes.astype(str).to_dict() == {"customer_id": "int64", "sales_amount": "float64"}


@pytest.mark.parametrize("columns", [None, pipeline.COLUMNS, ("timestamp", "sales_amount")])
def test_fast_csv_kwargs_for_cudf_are_cudf_arguments(tiny_dataset, columns):
    kwargs = tiny_dataset.fast_csv_kwargs(columns, backend="gpu")
    cudf_read_csv_stand_in(tiny_dataset.csv_files[0], **kwargs)  # raises TypeError on engine=, dtype_backend=, ...
    assert set(kwargs["dtype"].values()) <= CUDF_DTYPES
    assert ("timestamp" in kwargs["usecols"]) == (kwargs.get("parse_dates") == ["timestamp"])


def test_the_stand_in_rejects_pandas_only_arguments(tiny_dataset):
    with pytest.raises(TypeError):
        cudf_read_csv_stand_in(tiny_dataset.csv_files[0], **tiny_dataset.fast_csv_kwargs(backend="cpu"))
    with pytest.raises(TypeError):
        cudf_read_csv_stand_in(tiny_dataset.csv_files[0], dtype_backend="pyarrow")


def test_fast_csv_kwargs_refuse_unknown_columns_and_backends(tiny_dataset):
    with pytest.raises(ValueError, match="subset of"):
        tiny_dataset.fast_csv_kwargs(["customer"])
    with pytest.raises(ValueError, match="backend must be"):
        tiny_dataset.fast_csv_kwargs(backend="tpu")
    assert list(tiny_dataset.fast_csv_kwargs(backend="cpu")["usecols"]) == list(CSV_COLUMNS)


def test_read_transactions_refuses_an_unknown_format(tiny_dataset):
    with pytest.raises(ValueError, match="fmt must be one of"):
        pipeline.read_transactions(tiny_dataset, "json")


@pytest.mark.parametrize(
    ("cores", "expected"),
    [(1, {"n_workers": 1, "threads_per_worker": 1}), (2, {"n_workers": 2, "threads_per_worker": 1}),
     (8, {"n_workers": 8, "threads_per_worker": 1}), (32, {"n_workers": 8, "threads_per_worker": 4})],
)
def test_cluster_shape_on_cpus(cores, expected):
    assert pipeline.cluster_shape("cpu", cores=cores) == expected


def test_cluster_shape_on_gpus_keeps_one_worker_per_gpu():
    assert pipeline.cluster_shape("gpu", cores=64) == {}


class _StubClient:
    def __init__(self, memory_limit: int, nthreads: int) -> None:
        self._info = {"workers": {"w": {"memory_limit": memory_limit, "nthreads": nthreads}}}

    def scheduler_info(self, n_workers: int = -1) -> dict:
        return self._info


def test_csv_blocksize_follows_the_partition_rule(tiny_dataset):
    from utils.partitions import recommended_partition_bytes

    assert pipeline.csv_blocksize(tiny_dataset) is None
    blocksize = pipeline.csv_blocksize(tiny_dataset, _StubClient(2 * 2**30, 2))
    advice = recommended_partition_bytes(2 * 2**30, 2)
    csv_bytes_per_row = tiny_dataset.size_bytes("csv") / tiny_dataset.rows
    assert blocksize == pytest.approx(advice.bytes * csv_bytes_per_row / pipeline.IN_MEMORY_BYTES_PER_ROW, rel=1e-6)


def test_parquet_on_cpus_is_read_through_arrows_filesystem_from_the_manifests_list(tiny_dataset, tmp_path):
    import shutil

    from pyarrow.fs import LocalFileSystem

    from utils.dataset import Dataset

    copy = Dataset(shutil.copytree(tiny_dataset.path, tmp_path / tiny_dataset.path.name))
    stray = copy.path / "parquet" / "part-99999.parquet"  # not in the manifest: never read
    shutil.copy(copy.parquet_files[0], stray)
    frame = pipeline.read_transactions(copy, "parquet")
    assert isinstance(frame.expr.filesystem, LocalFileSystem)  # dask reads it with ReadParquetPyarrowFS
    check_customer_totals(pipeline.customer_totals(frame).compute(scheduler="sync"), copy)
