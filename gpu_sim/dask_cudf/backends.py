"""Simulated ``dask_cudf.backends``: the dispatch registrations and the ``"cudf"`` backend entry point
of rapidsai/cudf ``python/dask_cudf/dask_cudf/backends.py`` (26.10), with the cudf/CuPy internals they
call replaced by the simulated cudf (pandas underneath).

The simulated cudf classes subclass pandas, so a dispatch *not* registered here would silently fall
back to pandas' implementation through the MRO (the real classes have no pandas base and would hit
dask_cudf's or no implementation): every dispatch the real module registers is registered here too.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from functools import partial
from typing import Any

import cudf
import numpy as np
import pandas as pd
from cudf.api.types import is_scalar, is_string_dtype
from dask import config
from dask.array.dispatch import percentile_lookup
from dask.dataframe.backends import DataFrameBackendEntrypoint, PandasBackendEntrypoint
from dask.dataframe.dispatch import (
    categorical_dtype_dispatch,
    concat_dispatch,
    from_pyarrow_table_dispatch,
    group_split_dispatch,
    grouper_dispatch,
    hash_object_dispatch,
    is_categorical_dtype_dispatch,
    make_meta_dispatch,
    meta_nonempty,
    partd_encode_dispatch,
    pyarrow_schema_dispatch,
    to_pyarrow_table_dispatch,
    tolist_dispatch,
    union_categoricals_dispatch,
)
from dask.dataframe.utils import UNKNOWN_CATEGORIES, _nonempty_scalar, _scalar_from_dtype, make_meta_obj
from dask.sizeof import sizeof as sizeof_dispatch
from dask.utils import Dispatch, is_arraylike

_FRAMES = (cudf.DataFrame, cudf.Series)
_OBJECTS = (cudf.DataFrame, cudf.Series, cudf.Index)


@meta_nonempty.register(cudf.Index)
def _nonempty_index(idx: Any) -> Any:
    """A non-empty cudf index of ``idx``'s type (same cases as the real ``_nonempty_index``)."""
    if isinstance(idx, cudf.RangeIndex):
        return cudf.RangeIndex(2, name=idx.name)
    if isinstance(idx, cudf.DatetimeIndex):
        return cudf.DatetimeIndex(np.array(["1970-01-01", "1970-01-02"], dtype=idx.dtype), name=idx.name)
    if isinstance(idx, cudf.CategoricalIndex):
        return cudf.CategoricalIndex(pd.Categorical.from_codes([0, 0], categories=idx.dtype.categories,
                                                               ordered=idx.dtype.ordered), name=idx.name)
    if isinstance(idx, cudf.MultiIndex):
        levels = [meta_nonempty(lev) for lev in idx.levels]
        return cudf.MultiIndex(levels=levels, codes=[[0, 0]] * idx.nlevels, names=idx.names)
    if is_string_dtype(idx.dtype):
        return cudf.Index(["cat", "dog"], name=idx.name)
    if isinstance(idx, cudf.Index):
        return cudf.Index(np.arange(2, dtype=idx.dtype), name=idx.name)
    raise TypeError(f"Don't know how to handle index of type {type(idx).__name__}")


def _nonempty_values(dtype: Any) -> Any:
    """Two values of ``dtype`` (the real ``_get_non_empty_data``: "cat"/"dog" strings, ``arange(2)``)."""
    if isinstance(dtype, pd.CategoricalDtype):
        categories = dtype.categories if len(dtype.categories) else [UNKNOWN_CATEGORIES]
        return pd.Categorical.from_codes([0, 0], categories=categories, ordered=dtype.ordered)
    if is_string_dtype(dtype):
        return pd.array(["cat", "dog"], dtype=dtype if not isinstance(dtype, np.dtype) else "str")
    if isinstance(dtype, pd.DatetimeTZDtype):
        return pd.date_range("2001-01-01", periods=2, freq=dtype.unit, tz=dtype.tz)
    if getattr(dtype, "kind", None) in tuple("fiubmM"):
        return pd.array(np.arange(0, 2).astype(dtype.numpy_dtype if hasattr(dtype, "numpy_dtype") else dtype),
                        dtype=dtype)
    raise TypeError(f"Don't know how to handle column of dtype {dtype}")


def _nonempty_pandas_index(index: pd.Index) -> pd.Index:
    if isinstance(index, cudf.Index | cudf.MultiIndex):
        return _nonempty_index(index)
    return meta_nonempty.dispatch(pd.Index)(index)


@meta_nonempty.register(cudf.Series)
def _nonempty_series(s: Any, idx: Any = None) -> Any:
    if idx is None:
        idx = _nonempty_pandas_index(s.index)
    return cudf.Series(_nonempty_values(s.dtype), name=s.name, index=idx)


@meta_nonempty.register(cudf.DataFrame)
def meta_nonempty_cudf(x: Any) -> Any:
    idx = _nonempty_pandas_index(x.index)
    data = {i: _nonempty_values(dtype) for i, dtype in enumerate(x.dtypes.tolist())}
    result = cudf.DataFrame(data, index=idx)
    result.columns = x.columns
    return result


@make_meta_dispatch.register(_FRAMES)
def make_meta_cudf(x: Any, index: Any = None) -> Any:
    return x.head(0)


@make_meta_dispatch.register(cudf.Index)
def make_meta_cudf_index(x: Any, index: Any = None) -> Any:
    return x[:0]


def _empty_series(name: Any, dtype: Any, index: Any = None) -> Any:
    if isinstance(dtype, str) and dtype == "category":
        dtype = cudf.CategoricalDtype(categories=[UNKNOWN_CATEGORIES])
    return cudf.Series([], dtype=dtype, name=name, index=index)


def make_meta_object_cudf(x: Any, index: Any = None) -> Any:
    """Empty cudf metadata from a dict/tuple/list/dtype/scalar (the real ``make_meta_object_cudf``)."""
    if hasattr(x, "_meta"):
        return x._meta
    if is_arraylike(x) and x.shape:
        return x[:0]
    if index is not None:
        index = make_meta_dispatch(index)
    if isinstance(x, dict):
        return cudf.DataFrame({c: _empty_series(c, d, index=index) for (c, d) in x.items()}, index=index)
    if isinstance(x, tuple) and len(x) == 2:
        return _empty_series(x[0], x[1], index=index)
    if isinstance(x, (list, tuple)):
        if not all(isinstance(i, tuple) and len(i) == 2 for i in x):
            raise ValueError(f"Expected iterable of tuples of (name, dtype), got {x}")
        return cudf.DataFrame({c: _empty_series(c, d, index=index) for (c, d) in x}, columns=[c for c, d in x],
                              index=index)
    if not hasattr(x, "dtype") and x is not None:
        try:
            return _scalar_from_dtype(np.dtype(x))
        except Exception:
            pass
    if is_scalar(x):
        return _nonempty_scalar(x)
    raise TypeError(f"Don't know how to create metadata from {x}")


# The real module registers ``object`` (cudf classes have no pandas base); the simulated classes
# must be named too, or pandas' registration would win through the MRO.
make_meta_obj.register(object)(make_meta_object_cudf)
make_meta_obj.register(_OBJECTS)(make_meta_object_cudf)


@concat_dispatch.register(_OBJECTS)
def concat_cudf(dfs: list[Any], axis: int = 0, join: str = "outer", uniform: bool = False,
                filter_warning: bool = True, sort: Any = None, ignore_index: bool = False, **kwargs: Any) -> Any:
    assert join == "outer"
    if kwargs.get("ignore_order", False):
        raise NotImplementedError("ignore_order parameter is not yet supported in dask-cudf")
    return cudf.concat(dfs, axis=axis, ignore_index=ignore_index)


@categorical_dtype_dispatch.register(_OBJECTS)
def categorical_dtype_cudf(categories: Any = None, ordered: bool = False) -> Any:
    return cudf.CategoricalDtype(categories=categories, ordered=ordered)


@tolist_dispatch.register((cudf.Series, cudf.Index))
def tolist_cudf(obj: Any) -> list[Any]:
    return obj.to_pandas().tolist()


@is_categorical_dtype_dispatch.register((cudf.Series, cudf.Index))
def is_categorical_dtype_cudf(obj: Any) -> bool:
    return cudf.api.types._is_categorical_dtype(obj)


@grouper_dispatch.register(_FRAMES)
def get_grouper_cudf(obj: Any) -> Any:
    return cudf.Grouper


@percentile_lookup.register((cudf.Series, cudf.Index))
def percentile_cudf(a: Any, q: Any, interpolation: str = "linear") -> Any:
    """cudf's ``np.percentile`` equivalent (the real one uses CuPy for categorical codes)."""
    a = cudf.Series(a)
    n = len(a)
    if not len(a):
        return None, n
    if isinstance(q, Iterator):
        q = list(q)
    if isinstance(a.dtype, pd.CategoricalDtype):
        result = np.percentile(a.cat.codes.to_numpy(), q, method=interpolation)
        return pd.Categorical.from_codes(result.astype(int), a.dtype.categories, a.dtype.ordered), n
    if a.dtype.kind == "M":
        result = a.quantile([i / 100.0 for i in q], interpolation=interpolation)
        if q[0] == 0:
            result.iloc[0] = min(result.iloc[0], a.min())
        return result.to_pandas(), n
    if a.dtype.kind not in "iufm":
        interpolation = "nearest"
    return a.quantile([i / 100.0 for i in q], interpolation=interpolation).to_pandas(), n


@pyarrow_schema_dispatch.register((cudf.DataFrame,))
def _get_pyarrow_schema_cudf(obj: Any, preserve_index: Any = None, **kwargs: Any) -> Any:
    if kwargs:
        warnings.warn(f"Ignoring the following arguments to `pyarrow_schema_dispatch`: {list(kwargs)}", stacklevel=2)
    return _cudf_to_table(meta_nonempty(obj), preserve_index=preserve_index).schema


@to_pyarrow_table_dispatch.register(cudf.DataFrame)
def _cudf_to_table(obj: Any, preserve_index: Any = None, **kwargs: Any) -> Any:
    if kwargs:
        warnings.warn(f"Ignoring the following arguments to `to_pyarrow_table_dispatch`: {list(kwargs)}",
                      stacklevel=2)
    return obj.to_arrow(preserve_index=preserve_index)


@from_pyarrow_table_dispatch.register(cudf.DataFrame)
def _table_to_cudf(obj: Any, table: Any, self_destruct: Any = None, **kwargs: Any) -> Any:
    kwargs.pop("self_destruct", None)
    if kwargs:
        warnings.warn(f"Ignoring the following arguments to `from_pyarrow_table_dispatch`: {list(kwargs)}",
                      stacklevel=2)
    return obj.from_arrow(table)


@union_categoricals_dispatch.register((cudf.Series, cudf.Index))
def union_categoricals_cudf(to_union: Any, sort_categories: bool = False, ignore_order: bool = False) -> Any:
    return cudf.api.types._union_categoricals(to_union, sort_categories=False, ignore_order=False)


@hash_object_dispatch.register(_FRAMES)
def hash_object_cudf(frame: Any, index: bool = True) -> Any:
    if index:
        frame = frame.reset_index()
    return frame.hash_values()


@hash_object_dispatch.register(cudf.Index)
def hash_object_cudf_index(ind: Any, index: Any = None) -> Any:
    if isinstance(ind, cudf.MultiIndex):
        return cudf.DataFrame(ind.to_frame(index=False)).hash_values()
    return cudf.Series(pd.Series(ind.to_pandas())).hash_values()


@group_split_dispatch.register(_FRAMES)
def group_split_cudf(df: Any, c: Any, k: int, ignore_index: bool = False) -> dict[int, Any]:
    # as released: c is a cudf Series of output partition numbers
    return dict(zip(range(k), df.scatter_by_map(c.astype(np.int32, copy=False), map_size=k,
                                                keep_index=not ignore_index), strict=True))


@sizeof_dispatch.register(cudf.DataFrame)
def sizeof_cudf_dataframe(df: Any) -> int:
    return int(pd.DataFrame(df).memory_usage(index=True, deep=True).sum())


@sizeof_dispatch.register((cudf.Series, cudf.Index))
def sizeof_cudf_series_index(obj: Any) -> int:
    return int(obj.memory_usage(deep=True)) if isinstance(obj, pd.Index) else int(obj.memory_usage())


@partd_encode_dispatch.register(cudf.DataFrame)
def _simple_cudf_encode(_: Any) -> Any:
    import pickle

    import partd

    def join(dfs: list[Any]) -> Any:
        return cudf.DataFrame() if not dfs else cudf.concat(dfs)

    dumps = partial(pickle.dumps, protocol=pickle.HIGHEST_PROTOCOL)
    return partial(partd.Encode, dumps, pickle.loads, join)


def _default_backend(func: Any, *args: Any, **kwargs: Any) -> Any:
    """Call a dask.dataframe function with the "pandas" backend (avoids recursing into this one)."""
    with config.set({"dataframe.backend": "pandas"}):
        return func(*args, **kwargs)


def _unsupported_kwargs(old: str, new: str, kwargs: dict[str, Any]) -> None:
    if kwargs:
        raise ValueError(f"Unsupported key-word arguments used in `to_backend` for {old}-to-{new} conversion: {kwargs}")


# Register cudf->pandas
to_pandas_dispatch = PandasBackendEntrypoint.to_backend_dispatch()


@to_pandas_dispatch.register(_OBJECTS)
def to_pandas_dispatch_from_cudf(data: Any, nullable: bool = False, **kwargs: Any) -> Any:
    _unsupported_kwargs("cudf", "pandas", kwargs)
    return data.to_pandas(nullable=nullable)


# Register pandas->cudf
to_cudf_dispatch = Dispatch("to_cudf_dispatch")


@to_cudf_dispatch.register((pd.DataFrame, pd.Series, pd.Index))
def to_cudf_dispatch_from_pandas(data: Any, nan_as_null: Any = None, **kwargs: Any) -> Any:
    if isinstance(data, _OBJECTS):  # the simulated classes are pandas subclasses
        return to_cudf_dispatch_from_cudf(data, **kwargs)
    _unsupported_kwargs("pandas", "cudf", kwargs)
    return cudf.from_pandas(data, nan_as_null=nan_as_null)


@to_cudf_dispatch.register(_OBJECTS)
def to_cudf_dispatch_from_cudf(data: Any, **kwargs: Any) -> Any:
    _unsupported_kwargs("cudf", "cudf", kwargs)
    return data


class CudfBackendEntrypoint(DataFrameBackendEntrypoint):
    """The ``"cudf"`` backend for ``dataframe.backend`` (registered through the
    ``dask.dataframe.backends`` and ``dask_expr.dataframe.backends`` entry points, as the real
    package's ``pyproject.toml`` declares)."""

    @staticmethod
    def to_backend(data: Any, **kwargs: Any) -> Any:
        from dask_cudf._expr import new_collection
        from dask_cudf._expr.expr import ToCudfBackend

        return new_collection(ToCudfBackend(data, kwargs))

    @staticmethod
    def from_dict(data: Any, npartitions: int, orient: str = "columns", dtype: Any = None, columns: Any = None,
                  constructor: Any = cudf.DataFrame) -> Any:
        from dask_cudf._expr import from_dict

        return _default_backend(from_dict, data, npartitions=npartitions, orient=orient, dtype=dtype,
                                columns=columns, constructor=constructor)

    @staticmethod
    def read_parquet(*args: Any, **kwargs: Any) -> Any:
        from dask_cudf.io.parquet import read_parquet as read_parquet_expr

        return read_parquet_expr(*args, **kwargs)

    @staticmethod
    def read_csv(path: Any, *args: Any, header: Any = "infer", dtype_backend: Any = None, storage_options: Any = None,
                 **kwargs: Any) -> Any:
        from dask_cudf.io.csv import read_csv

        return read_csv(path, *args, header=header, storage_options=storage_options, **kwargs)

    @staticmethod
    def read_json(*args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError("read_json is not part of the simulated dask_cudf (gpu_sim/README.md)")

    @staticmethod
    def read_orc(*args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError("read_orc is not part of the simulated dask_cudf (gpu_sim/README.md)")
