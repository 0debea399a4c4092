"""Simulated cudf 26.10 for machines without a GPU (test infrastructure, see ``gpu_sim/README.md``).

pandas objects underneath, cudf's class paths and the parts of cudf's contract the course can trip
over on a GPU: cudf-only reader keywords, ``to_pandas``/``from_pandas``, no implicit host conversion,
numba-compiled UDFs, ``.loc`` label slices on a datetime index. Nothing here touches a GPU and
nothing it computes is a GPU result. Sources: rapidsai/cudf ``python/cudf/cudf`` (26.10 snapshot).
"""

import pandas as _pd

from cudf import api, core, errors, io, options
from cudf.core.dataframe import DataFrame, from_pandas, merge
from cudf.core.dtypes import (
    CategoricalDtype,
    Decimal32Dtype,
    Decimal64Dtype,
    Decimal128Dtype,
    IntervalDtype,
    ListDtype,
    StructDtype,
    dtype,
)
from cudf.core.frame import register_tokenizer as _register_tokenizer
from cudf.core.index import CategoricalIndex, DatetimeIndex, Index, RangeIndex
from cudf.core.multiindex import MultiIndex
from cudf.core.pandas_boundary import install as _install_pandas_boundary
from cudf.core.reshape import concat
from cudf.core.series import Series
from cudf.io import read_csv, read_parquet
from cudf.options import describe_option, get_option, option_context, set_option

_register_tokenizer(DataFrame, Series)
_install_pandas_boundary()

__version__ = "26.10.2+sim"
__git_commit__ = ""

NA = _pd.NA
NaT = _pd.NaT
Grouper = _pd.Grouper
NamedAgg = _pd.NamedAgg


def date_range(*args: object, **kwargs: object) -> DatetimeIndex:
    """``cudf.date_range``: a cudf DatetimeIndex."""
    return DatetimeIndex(_pd.date_range(*args, **kwargs))  # type: ignore[arg-type]


def to_datetime(arg: object, *args: object, **kwargs: object) -> object:
    """``cudf.to_datetime``: pandas' parsing, cudf-typed result."""
    from cudf.core.frame import as_cudf

    return as_cudf(_pd.to_datetime(arg, *args, **kwargs))  # type: ignore[call-overload]


__all__ = [
    "NA", "CategoricalDtype", "CategoricalIndex", "DataFrame", "DatetimeIndex", "Decimal32Dtype", "Decimal64Dtype",
    "Decimal128Dtype", "Grouper", "Index", "IntervalDtype", "ListDtype", "MultiIndex", "NaT", "NamedAgg", "RangeIndex",
    "Series", "StructDtype", "api", "concat", "core", "date_range", "describe_option", "dtype", "errors",
    "from_pandas", "get_option", "io", "merge", "option_context", "options", "read_csv", "read_parquet",
    "set_option", "to_datetime",
]

try:  # XGBoost's device path on this cudf, in every process that imports it (gpu_sim/xgboost_device_sim.py)
    from xgboost_device_sim import install as _install_xgboost_device_path
except ModuleNotFoundError as missing:  # pragma: no cover - the simulation's folder is not on sys.path
    if missing.name != "xgboost_device_sim":
        raise
else:
    _install_xgboost_device_path()
    del _install_xgboost_device_path
