"""Simulated ``dask_cudf.core`` (rapidsai/cudf ``python/dask_cudf/dask_cudf/core.py``)."""

from __future__ import annotations

import warnings
from importlib import import_module
from typing import Any

import cudf
import dask.dataframe as dd
import pandas as pd

from dask_cudf._expr.collection import DataFrame, Index, Series

__all__ = ["DataFrame", "Index", "Series", "_deprecated_api", "concat", "from_cudf"]

concat = dd.concat


def from_cudf(data: Any, npartitions: int | None = None, chunksize: int | None = None, sort: bool = True,
              name: Any = None) -> Any:
    """A Dask DataFrame from a cudf DataFrame (``dd.from_pandas`` on cudf data)."""
    if isinstance(getattr(data, "index", None), cudf.MultiIndex | pd.MultiIndex):
        raise NotImplementedError("dask_cudf does not support MultiIndex Dataframes.")
    return dd.from_pandas(data, npartitions=npartitions, chunksize=chunksize, sort=sort)


def _deprecated_api(old_api: str, new_api: str | None = None, rec: str | None = None) -> Any:
    def inner_func(*args: Any, **kwargs: Any) -> Any:
        if new_api:
            msg = f"{old_api} is now deprecated. "
            msg += rec or f"Please use {new_api} instead."
            warnings.warn(msg, FutureWarning, stacklevel=2)
            new_attr = new_api.split(".")
            module = import_module(".".join(new_attr[:-1]))
            return getattr(module, new_attr[-1])(*args, **kwargs)
        raise NotImplementedError(f"{old_api} is no longer supported. " + (rec or ""))

    return inner_func
