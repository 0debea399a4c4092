"""``Dataset.parquet_kwargs``: one partition per Parquet file on either backend (dask_cudf would
fuse small files, by the uncompressed bytes read against ``blocksize``, 1/32 of a GPU's memory by default;
``blocksize=None`` switches that off)."""

from __future__ import annotations

from pathlib import Path

import dask
import dask.dataframe as dd

from utils import backend as backend_module


def test_pandas_backend_needs_no_argument_and_reads_one_partition_per_file(tiny_dataset):
    backend_module.reset()
    with dask.config.set({"dataframe.backend": "pandas"}):
        assert tiny_dataset.parquet_kwargs == {}
        frame = dd.read_parquet(tiny_dataset.parquet_dir, **tiny_dataset.parquet_kwargs)
        files = sorted(Path(tiny_dataset.parquet_dir).glob("*.parquet"))
        assert len(files) > 1 and frame.npartitions == len(files)


def test_cudf_backend_switches_dask_cudf_file_fusion_off(tiny_dataset):
    """Read at call time: the same dataset object gives the cudf argument once cudf is configured
    (nothing is read here: cudf is not installed on CPU machines)."""
    backend_module.reset()
    with dask.config.set({"dataframe.backend": "cudf"}):
        assert tiny_dataset.parquet_kwargs == {"blocksize": None}
    with dask.config.set({"dataframe.backend": "pandas"}):
        assert tiny_dataset.parquet_kwargs == {}
