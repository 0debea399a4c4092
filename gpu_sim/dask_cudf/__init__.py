"""Simulated dask_cudf 26.10 (test infrastructure, see ``gpu_sim/README.md``): the cudf backend
of Dask DataFrame, ported from rapidsai/cudf ``python/dask_cudf/dask_cudf`` onto the simulated cudf.
``dask_cudf.read_csv``/``read_parquet`` are ``dd.read_csv``/``dd.read_parquet`` under
``dataframe.backend="cudf"`` (rapidsai/cudf ``python/dask_cudf/dask_cudf/__init__.py``)."""

from __future__ import annotations

from typing import Any

import cudf
import dask.dataframe as dd
from dask import config
from dask.dataframe import from_delayed

from . import backends, io  # noqa: F401
from ._expr import collection  # noqa: F401
from ._expr.expr import _patch_dask_expr
from ._version import __git_commit__, __version__  # noqa: F401
from .core import DataFrame, Index, Series, _deprecated_api, concat, from_cudf


def read_csv(*args: Any, **kwargs: Any) -> Any:
    with config.set({"dataframe.backend": "cudf"}):
        return dd.read_csv(*args, **kwargs)


def read_json(*args: Any, **kwargs: Any) -> Any:
    with config.set({"dataframe.backend": "cudf"}):
        return dd.read_json(*args, **kwargs)


def read_orc(*args: Any, **kwargs: Any) -> Any:
    with config.set({"dataframe.backend": "cudf"}):
        return dd.read_orc(*args, **kwargs)


def read_parquet(*args: Any, **kwargs: Any) -> Any:
    with config.set({"dataframe.backend": "cudf"}):
        return dd.read_parquet(*args, **kwargs)


groupby_agg = _deprecated_api("dask_cudf.groupby_agg")
read_text = DataFrame.read_text
to_orc = _deprecated_api("dask_cudf.to_orc", new_api="dask_cudf.io.orc.to_orc",
                         rec="Please use DataFrame.to_orc instead.")

_patch_dask_expr()

__all__ = ["DataFrame", "Index", "Series", "concat", "from_cudf", "from_delayed"]

# rapidsai/cudf dask_cudf/__init__.py: ``if not hasattr(cudf.DataFrame, "mean"): cudf.DataFrame.mean = None``
# (cudf.DataFrame has ``mean``, so this is a no-op there as here).
if not hasattr(cudf.DataFrame, "mean"):
    cudf.DataFrame.mean = None  # type: ignore[assignment,method-assign]
del cudf
