"""Simulated ``cudf.io`` (rapidsai/cudf ``python/cudf/cudf/io``): CSV and Parquet only."""

from cudf.io import csv, parquet
from cudf.io.csv import read_csv
from cudf.io.parquet import read_parquet

__all__ = ["csv", "parquet", "read_csv", "read_parquet"]
