"""Simulated ``dask_cudf.io`` (rapidsai/cudf ``python/dask_cudf/dask_cudf/io/__init__.py``): CSV and
Parquet; ``dask_cudf.io.read_csv`` is the deprecated spelling (``FutureWarning``)."""

from dask_cudf.core import _deprecated_api
from dask_cudf.io import csv, parquet

read_csv = _deprecated_api("dask_cudf.io.read_csv", new_api="dask_cudf.read_csv")
read_parquet = parquet.read_parquet
to_parquet = _deprecated_api("dask_cudf.io.to_parquet", new_api="dask_cudf._legacy.io.parquet.to_parquet",
                             rec="Please use the DataFrame.to_parquet method instead.")

__all__ = ["csv", "parquet", "read_csv", "read_parquet", "to_parquet"]
