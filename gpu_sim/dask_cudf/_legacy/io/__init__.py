"""Simulated ``dask_cudf._legacy.io``."""
