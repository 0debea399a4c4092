"""Simulated cudf index classes (rapidsai/cudf ``python/cudf/cudf/core/index.py``): pandas index
subclasses with cudf's class paths, for ``cudf.Index(...)``, ``cudf.from_pandas(pd.Index)``,
``isinstance`` checks and dask_cudf's dispatch registrations.

Simplification (see the README): the index *of* a simulated ``cudf.DataFrame``/``Series`` stays a
pandas index, because pandas rebuilds indexes with its own classes in many operations. The cudf
behaviour that matters for the course, ``.loc`` label slicing on a datetime index, lives in the
frames' ``.loc`` (``cudf.core.frame.CudfLocIndexer``) and dask_cudf's ``_patch_dask_expr``."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from cudf.core.frame import SingleColumnHostGuard


class Index(SingleColumnHostGuard, pd.Index):
    """``cudf.Index``: constructing one returns the cudf index class for the data's dtype."""

    def __new__(cls, data: Any = None, dtype: Any = None, copy: bool = False, name: Any = None,
                nan_as_null: Any = None, **kwargs: Any) -> Index:
        return as_index(pd.Index(data, dtype=dtype, copy=copy, name=name, **kwargs))

    def to_pandas(self, *, nullable: bool = False, arrow_type: bool = False) -> pd.Index:
        return _plain(self)



class RangeIndex(Index, pd.RangeIndex):
    def __new__(cls, start: Any = None, stop: Any = None, step: Any = None, dtype: Any = None,
                copy: bool = False, name: Any = None) -> RangeIndex:
        return pd.RangeIndex.__new__(cls, start, stop, step, dtype=dtype, copy=copy, name=name)


class DatetimeIndex(Index, pd.DatetimeIndex):
    def __new__(cls, data: Any = None, freq: Any = None, tz: Any = None, ambiguous: str = "raise",
                dayfirst: bool = False, yearfirst: bool = False, dtype: Any = None, copy: bool = False,
                name: Any = None) -> DatetimeIndex:
        return pd.DatetimeIndex.__new__(cls, data, freq=freq, tz=tz, ambiguous=ambiguous, dayfirst=dayfirst,
                                        yearfirst=yearfirst, dtype=dtype, copy=copy, name=name)


class CategoricalIndex(Index, pd.CategoricalIndex):
    def __new__(cls, data: Any = None, categories: Any = None, ordered: Any = None, dtype: Any = None,
                copy: bool = False, name: Any = None) -> CategoricalIndex:
        return pd.CategoricalIndex.__new__(cls, data, categories=categories, ordered=ordered, dtype=dtype,
                                           copy=copy, name=name)


def _plain(index: pd.Index) -> pd.Index:
    if isinstance(index, pd.MultiIndex):
        return pd.MultiIndex(levels=index.levels, codes=index.codes, names=index.names)
    if isinstance(index, pd.RangeIndex):
        return pd.RangeIndex(index.start, index.stop, index.step, name=index.name)
    return pd.Index(np.asarray(index._values) if index.dtype.kind in "iufbmM" else index._values, name=index.name,
                    dtype=index.dtype)


def as_index(index: pd.Index) -> pd.Index:
    """The cudf index class for a pandas index (same data)."""
    from cudf.core.multiindex import MultiIndex

    if isinstance(index, Index | MultiIndex):
        return index
    if isinstance(index, pd.MultiIndex):
        return MultiIndex(levels=index.levels, codes=index.codes, names=index.names)
    if isinstance(index, pd.RangeIndex):
        return RangeIndex(index.start, index.stop, index.step, name=index.name)
    if isinstance(index, pd.DatetimeIndex):
        return DatetimeIndex._simple_new(index._data, name=index.name)
    if isinstance(index, pd.CategoricalIndex):
        return CategoricalIndex._simple_new(index._data, name=index.name)
    if type(index) is pd.Index:
        return Index._simple_new(index._data, name=index.name)
    return index
