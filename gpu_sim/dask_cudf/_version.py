"""Simulated ``dask_cudf._version``."""

__version__ = "26.10.2+sim"
__git_commit__ = ""
