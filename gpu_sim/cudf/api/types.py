"""Simulated ``cudf.api.types`` (rapidsai/cudf ``python/cudf/cudf/api/types.py``): the predicates that
dask_cudf and course code call, answered by pandas' equivalents."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from pandas.api.types import (  # noqa: F401 - re-exported like cudf.api.types
    is_bool_dtype,
    is_datetime64_dtype,
    is_float_dtype,
    is_integer_dtype,
    is_list_like,
    is_numeric_dtype,
    is_timedelta64_dtype,
)


def is_scalar(val: Any) -> bool:
    """Whether ``val`` is a scalar (cudf counts NumPy 0-d arrays and ``pd.NA`` as scalars)."""
    return val is None or pd.api.types.is_scalar(val) or (isinstance(val, np.ndarray) and val.ndim == 0)


def is_string_dtype(obj: Any) -> bool:
    dtype = getattr(obj, "dtype", obj)
    return isinstance(dtype, pd.StringDtype) or (isinstance(dtype, np.dtype) and dtype.kind in "OU") or dtype is str


def is_dtype_equal(left: Any, right: Any) -> bool:
    return pd.api.types.pandas_dtype(left) == pd.api.types.pandas_dtype(right)


def _is_categorical_dtype(obj: Any) -> bool:
    dtype = getattr(obj, "dtype", obj)
    return isinstance(dtype, pd.CategoricalDtype) or (isinstance(dtype, str) and dtype == "category")


def _union_categoricals(to_union: Any, sort_categories: bool = False, ignore_order: bool = False) -> Any:
    from cudf.core.frame import as_cudf

    return as_cudf(pd.api.types.union_categoricals([pd.Series(obj) for obj in to_union]))
