"""Simulated ``cudf.concat`` (rapidsai/cudf ``python/cudf/cudf/core/reshape.py``): only cudf objects
may be concatenated (a pandas object in the list is a ``TypeError``, as on a GPU)."""

from __future__ import annotations

from typing import Any

import pandas as pd

from cudf.core.frame import as_cudf

_AXIS_MAP = {0: 0, 1: 1, "index": 0, "columns": 1}


def concat(objs: Any, axis: Any = 0, join: str = "outer", ignore_index: bool = False, keys: Any = None,
           levels: Any = None, names: Any = None, verify_integrity: bool = False, sort: Any = None) -> Any:
    """Concatenate cudf DataFrames, Series or Indexes (cudf's argument checks and errors)."""
    from cudf.core.dataframe import DataFrame
    from cudf.core.index import Index, as_index
    from cudf.core.series import Series

    if keys is not None:
        raise NotImplementedError("keys is currently not supported")
    if levels is not None:
        raise NotImplementedError("levels is currently not supported")
    if names is not None:
        raise NotImplementedError("names is currently not supported")
    if not objs:
        raise ValueError("No objects to concatenate")
    axis = _AXIS_MAP.get(axis)
    if axis is None:
        raise ValueError(f'`axis` must be 0 / "index" or 1 / "columns", got: {axis}')
    if isinstance(objs, dict):
        if axis != 1:
            raise NotImplementedError(f"Can only concatenate dictionary input along axis=1, not {axis}")
        objs = {key: obj for key, obj in objs.items() if obj is not None}
        if any(isinstance(obj, Index) for obj in objs.values()):
            raise TypeError("cannot concatenate a dictionary containing indices")
        return as_cudf(pd.concat(objs, axis=1, join=join, ignore_index=ignore_index, sort=bool(sort)))
    objs = [obj for obj in objs if obj is not None]
    if not objs:
        raise ValueError("All objects passed were None")
    allowed = {Series, DataFrame, Index}
    if not all(isinstance(obj, tuple(allowed)) for obj in objs):
        raise TypeError(f"can only concatenate objects which are instances of {allowed}, "
                        f"instead received {[type(obj) for obj in objs]}")
    if any(isinstance(obj, Index) for obj in objs):
        if not all(isinstance(obj, Index) for obj in objs):
            raise TypeError("when concatenating indices you must provide ONLY indices")
        result = objs[0].append(objs[1:]) if len(objs) > 1 else objs[0]
        return as_index(pd.Index(result))
    if axis == 1 and not all(isinstance(obj, (Series, DataFrame)) for obj in objs):
        raise TypeError("Can only concatenate Series and DataFrame objects when axis=1")
    return as_cudf(pd.concat(objs, axis=axis, join=join, ignore_index=ignore_index, sort=bool(sort)))
