"""Simulated ``cudf.core.dtypes``: cudf's dtype names. cudf 26.10 uses pandas' own dtypes for numbers,
datetimes and strings (``str``); its extension dtypes are stood in for by pandas' (categorical) or by
placeholders that ``isinstance`` checks can name (list/struct/decimal/interval columns are not
simulated). ``dtype()`` follows rapidsai/cudf ``python/cudf/cudf/core/dtypes.py`` ``dtype``."""

from __future__ import annotations

import inspect
from typing import Any

import numpy as np
import pandas as pd

CategoricalDtype = pd.CategoricalDtype
IntervalDtype = pd.IntervalDtype


class _BaseDtype(pd.api.extensions.ExtensionDtype):
    """Base of cudf's own extension dtypes (no column of these can be built here)."""


class ListDtype(_BaseDtype):
    name = "list"
    type = list


class StructDtype(_BaseDtype):
    name = "struct"
    type = dict


class Decimal32Dtype(_BaseDtype):
    name = "decimal32"
    type = object


class Decimal64Dtype(_BaseDtype):
    name = "decimal64"
    type = object


class Decimal128Dtype(_BaseDtype):
    name = "decimal128"
    type = object


# NumPy dtypes libcudf has a type for (rapidsai/cudf utils/dtypes.py SUPPORTED_NUMPY_TO_PYLIBCUDF_TYPES).
_SUPPORTED_NUMPY = {np.dtype(name) for name in (
    "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float32", "float64", "bool",
    "datetime64[s]", "datetime64[ms]", "datetime64[us]", "datetime64[ns]",
    "timedelta64[s]", "timedelta64[ms]", "timedelta64[us]", "timedelta64[ns]", "object",
)}


def dtype(arbitrary: Any) -> Any:
    """The cudf-supported dtype for ``arbitrary``; ``TypeError("Unsupported type ...")`` otherwise."""
    if isinstance(arbitrary, _BaseDtype):
        return arbitrary
    if inspect.isclass(arbitrary) and issubclass(arbitrary, pd.api.extensions.ExtensionDtype):
        raise TypeError(f"Expected an instance of {arbitrary.__name__}, but got the class instead. "
                        "Try instantiating 'dtype'.")
    if arbitrary is str or (isinstance(arbitrary, str) and arbitrary == "str"):
        return pd.api.types.pandas_dtype(arbitrary)
    try:
        np_dtype = np.dtype(arbitrary)
    except TypeError:
        pass
    else:
        if np_dtype.kind == "U":
            return np_dtype
        if np_dtype not in _SUPPORTED_NUMPY:
            raise TypeError(f"Unsupported type {np_dtype}")
        return np_dtype
    pd_dtype = pd.api.types.pandas_dtype(arbitrary)
    if isinstance(pd_dtype, pd.core.dtypes.dtypes.NumpyEADtype):
        return dtype(pd_dtype.numpy_dtype)
    return pd_dtype
