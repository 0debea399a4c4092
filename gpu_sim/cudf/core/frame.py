"""What the simulated ``cudf.DataFrame`` and ``cudf.Series`` share: pandas objects underneath, with the
parts of cudf's contract that make code written for pandas break on a GPU.

The real classes (rapidsai/cudf ``python/cudf/cudf/core/frame.py``, ``indexed_frame.py``,
``single_column_frame.py``) keep their data in device memory, so every implicit conversion to host
objects raises; those refusals are reproduced here, with cudf's messages. The simulated classes
subclass pandas; pandas, NumPy and PyArrow still convert them internally (``_from_library``), only
calls from other code (the course, matplotlib, ...) are refused, as they would be on a GPU.
"""

from __future__ import annotations

import builtins
import datetime
import functools
import math
import sys
import types
from collections.abc import Callable, Hashable
from typing import Any

import numpy as np
import pandas as pd
from pandas.core.indexing import _LocIndexer

# Packages whose internal use of the host-conversion protocols is allowed: pandas is the storage
# here, NumPy/PyArrow are what pandas calls, and the simulation itself.
_LIBRARY_PACKAGES = frozenset({"pandas", "numpy", "pyarrow", "cudf"})
# Code objects of wrappers that stand between a caller and a simulated method (signature checks,
# cudf-typed results): ``_from_library`` looks through them at the real caller.
TRANSPARENT: set[types.CodeType] = set()


def _from_library(depth: int = 2) -> bool:
    """Whether the code ``depth`` frames up (the caller of the caller) belongs to pandas/NumPy/
    PyArrow or the simulation, as opposed to user or third-party code that would get a real cudf
    object and fail."""
    try:
        frame = sys._getframe(depth)
    except ValueError:
        return False
    # pandas' ``NDFrame.__getattr__`` retries a failed attribute lookup, and the simulation's own
    # wrappers (``TRANSPARENT``) only pass a call on: judge their caller instead.
    while frame is not None and (frame.f_code in TRANSPARENT or (
            frame.f_code.co_name == "__getattr__" and frame.f_globals.get("__name__", "").startswith("pandas."))):
        frame = frame.f_back
    return frame is not None and frame.f_globals.get("__name__", "").partition(".")[0] in _LIBRARY_PACKAGES


_SIMULATION_PACKAGES = frozenset({"cudf", "dask_cudf"})
_HOST_LIBRARIES = frozenset({"pandas", "numpy", "pyarrow"})


def host_copy_allowed(obj: Any, depth: int = 2) -> bool:
    """Whether an implicit host copy of ``obj`` (``__array__``, ``__arrow_array__``, iteration) is
    pandas working inside a cudf object (a pandas method whose ``self`` is a simulated cudf object,
    or pandas called by the simulation) rather than pandas, NumPy or PyArrow *given* a cudf object by
    other code: ``pandas_frame.assign(x=cudf_series)``, ``pd.Series(np.asarray(cudf_series))``,
    ``pa.array(cudf_series)`` reach ``__array__`` on a GPU and fail there (cudf ``core/frame.py``)."""
    try:
        frame = sys._getframe(depth)
    except ValueError:
        return False
    while frame is not None and frame.f_code in TRANSPARENT:
        frame = frame.f_back
    while frame is not None:
        package = frame.f_globals.get("__name__", "").partition(".")[0]
        if package in _SIMULATION_PACKAGES:
            return True
        if package not in _HOST_LIBRARIES:
            return False
        owner = frame.f_locals.get("self")
        if owner is obj or type(owner).__module__.partition(".")[0] == "cudf":
            return True  # pandas running a (simulated) cudf method: cudf handles its own arguments
        frame = frame.f_back
    return False


def as_cudf(obj: Any) -> Any:
    """Re-type a pandas result of a pandas method as the cudf class the real method returns (cudf
    methods return cudf objects); other objects pass through."""
    from cudf.core.dataframe import DataFrame
    from cudf.core.series import Series

    kind = type(obj)
    if kind is pd.DataFrame:
        return DataFrame(obj)
    if kind is pd.Series:
        return Series(obj)
    if kind is tuple:
        return tuple(as_cudf(item) for item in obj)
    return obj


def keep_cudf_types(cls: type, skip: frozenset[str] = frozenset()) -> type:
    """Class decorator: every public pandas method not defined by ``cls`` returns cudf-typed results
    (pandas' ``_constructor`` covers most of them, not ``value_counts``, ``describe``, ...). Names
    that ``cls`` or one of its own mixins (non-pandas bases) defines stay as they are."""
    own = {name for klass in cls.__mro__ if klass.__module__.partition(".")[0] not in ("pandas", "builtins")
           for name in vars(klass)}
    for base in cls.__mro__[1:]:
        if base.__module__.partition(".")[0] != "pandas":
            continue
        for name, attr in vars(base).items():
            if name.startswith("_") or name in own or name in skip or not isinstance(attr, types.FunctionType):
                continue
            own.add(name)
            setattr(cls, name, _returning_cudf(attr))
    return cls


def _returning_cudf(method: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(method)
    def wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
        return as_cudf(method(self, *args, **kwargs))

    TRANSPARENT.add(wrapper.__code__)
    return wrapper


class Absent:
    """A pandas attribute the real cudf class does not have: reading it raises ``AttributeError``
    with Python's own message, so ``hasattr`` is False as on a GPU."""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, obj: Any, owner: type | None = None) -> Any:
        owner = owner or type(obj)
        if _from_library():  # pandas' own methods may use it internally (Series.to_dict uses items)
            for base in owner.__mro__[1:]:
                if self.name in vars(base):
                    return vars(base)[self.name].__get__(obj, owner)
        raise AttributeError(f"'{owner.__name__}' object has no attribute '{self.name}'")


# rapidsai/cudf python/cudf/cudf/core/frame.py ``Frame.__array__`` / ``__arrow_array__``.
ARRAY_MESSAGE = (
    "Implicit conversion to a host NumPy array via __array__ is not allowed, To explicitly construct a "
    "GPU matrix, consider using .to_cupy()\nTo explicitly construct a host matrix, consider using .to_numpy()."
)
ARROW_MESSAGE = (
    "Implicit conversion to a host PyArrow object via __arrow_array__ is not allowed. Consider using .to_arrow()"
)
# rapidsai/cudf python/cudf/cudf/core/mixins/notiterable.py and single_column_frame.py ``tolist``
NOT_ITERABLE_MESSAGE = ("{} object is not iterable. Consider using `.to_arrow()`, `.to_pandas()` "
                        "or `.to_numpy()` if you wish to iterate over the values.")
TOLIST_MESSAGE = ("cuDF does not support conversion to host memory via the `tolist()` method. "
                  "Consider using `.to_arrow().to_pylist()` to construct a Python list.")
UDF_COMPILE_MESSAGE = "user defined function compilation failed."

# rapidsai/cudf python/cudf/cudf/utils/dtypes.py ``np_dtypes_to_pandas_dtypes`` (``nullable=True``).
NULLABLE_DTYPES: dict[str, Any] = {
    "uint8": pd.UInt8Dtype(), "uint16": pd.UInt16Dtype(), "uint32": pd.UInt32Dtype(), "uint64": pd.UInt64Dtype(),
    "int8": pd.Int8Dtype(), "int16": pd.Int16Dtype(), "int32": pd.Int32Dtype(), "int64": pd.Int64Dtype(),
    "bool": pd.BooleanDtype(), "float32": pd.Float32Dtype(), "float64": pd.Float64Dtype(),
}


def nullable_dtype(dtype: Any) -> Any:
    """The pandas nullable dtype ``to_pandas(nullable=True)`` gives for ``dtype`` (strings: ``string``)."""
    if isinstance(dtype, np.dtype) and dtype.name in NULLABLE_DTYPES:
        return NULLABLE_DTYPES[dtype.name]
    if isinstance(dtype, pd.StringDtype) or pd.api.types.is_object_dtype(dtype):
        return pd.StringDtype()
    return dtype


def check_column_values(values: Any, name: Hashable) -> None:
    """Refuse Python objects in a column as cudf's ``as_column`` does (rapidsai/cudf
    ``python/cudf/cudf/core/column/column.py``): strings, decimals, booleans, lists and structs are
    columns; ``date``/``Timestamp``/mixed objects are not (``MixedTypeError``, a ``TypeError``)."""
    from cudf.errors import MixedTypeError

    inferred = pd.api.types.infer_dtype(values, skipna=True)
    if inferred in ("mixed-integer", "mixed-integer-float"):
        raise MixedTypeError("Cannot create column with mixed types")
    if inferred not in ("mixed", "decimal", "string", "empty", "boolean"):
        raise MixedTypeError(f"Cannot convert a {inferred} of object type")
    if inferred == "mixed":
        import pyarrow as pa

        try:
            pa.array(np.asarray(values, dtype=object), from_pandas=True)
        except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError) as error:
            raise MixedTypeError(f"Cannot create column with mixed types (column {name!r})") from error


# ---------------------------------------------------------------------------------------------
# .loc with a DatetimeIndex


def datetime_label_slice(index: pd.Index, key: slice) -> slice:
    """cudf's ``DatetimeIndex.find_label_range`` (rapidsai/cudf ``python/cudf/cudf/core/index.py``):
    string bounds become ``pd.to_datetime(bound)``, i.e. the *instant* (``"2024-12-31"`` is midnight),
    not pandas' partial-string interval (the whole day); other bound types raise ``TypeError``."""
    if any(not (bound is None or isinstance(bound, (str, datetime.datetime))) for bound in (key.start, key.stop)):
        raise TypeError("Can only slice DatetimeIndex with a string or datetime objects")
    if isinstance(key.stop, str) and not (index.is_monotonic_increasing or index.is_monotonic_decreasing):
        raise KeyError(
            "Value based partial slicing on non-monotonic DatetimeIndexes with non-existing keys is not allowed."
        )
    return slice(
        pd.to_datetime(key.start) if key.start is not None else None,
        pd.to_datetime(key.stop) if key.stop is not None else None,
        key.step,
    )


class SingleColumnHostGuard:
    """What cudf's one-column objects (Series, Index) refuse: an implicit copy to host memory.
    rapidsai/cudf python/cudf/cudf/core/mixins/notiterable.py (a SingleColumnFrame is NotIterable),
    core/single_column_frame.py ``tolist`` and core/frame.py ``__array__``. Put it first among the
    bases, before the pandas class whose methods it guards; the library's own calls pass."""

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
        if host_copy_allowed(self):
            return np.asarray(self._values, dtype=dtype)
        raise TypeError(ARRAY_MESSAGE)

    def __iter__(self) -> Any:
        if host_copy_allowed(self):
            return super().__iter__()
        raise TypeError(NOT_ITERABLE_MESSAGE.format(type(self).__name__))

    def tolist(self) -> list[Any]:
        if _from_library():
            return super().tolist()
        raise TypeError(TOLIST_MESSAGE)

    to_list = tolist


class CudfLocIndexer(_LocIndexer):
    """``.loc`` with cudf's label-slice resolution on a DatetimeIndex; everything else is pandas'."""

    def _cudf_key(self, key: Any) -> Any:
        index = self.obj.index
        if not isinstance(index, pd.DatetimeIndex):
            return key
        if isinstance(key, tuple) and key and isinstance(key[0], slice):
            return (datetime_label_slice(index, key[0]), *key[1:])
        if isinstance(key, slice):
            return datetime_label_slice(index, key)
        return key

    def __getitem__(self, key: Any) -> Any:
        return as_cudf(super().__getitem__(self._cudf_key(key)))

    def __setitem__(self, key: Any, value: Any) -> None:
        super().__setitem__(self._cudf_key(key), value)


# ---------------------------------------------------------------------------------------------
# User-defined functions (apply / map)

# Names a numba CUDA device function may use (numba's CUDA target: math functions and the scalar
# builtins; https://numba.readthedocs.io/en/stable/cuda/cudapysupported.html).
_JIT_BUILTINS = frozenset({"abs", "bool", "float", "int", "len", "max", "min", "pow", "range", "round"})
_JIT_MODULES = frozenset({"math", "cmath", "numpy", "operator"})


def _jit_compilable(func: Any, args: tuple[Any, ...]) -> str | None:
    """Why numba's ``cuda.jit(device=True)`` would refuse ``func`` (None: it may compile). cudf
    compiles every UDF (rapidsai/cudf ``python/cudf/cudf/core/udf/udf_kernel_base.py``
    ``ApplyKernelBase``): only scalar arguments, only plain Python functions, whose globals are
    math/NumPy functions, scalar builtins or other numba device functions."""
    from cudf.api.types import is_scalar

    if not all(is_scalar(arg) for arg in args):
        return "only scalar valued args are supported by apply"
    if not isinstance(func, types.FunctionType):
        return f"cannot compile {type(func).__name__} {getattr(func, '__name__', func)!r}: not a Python function"
    code = func.__code__
    for name in code.co_names:
        if name in func.__globals__:
            value = func.__globals__[name]
        elif name in _JIT_BUILTINS:
            continue
        elif hasattr(builtins, name):
            return f"Untyped global name {name!r}: builtin not supported in a CUDA device function"
        else:
            continue  # an attribute name (x.real, math.floor): typed later
        if isinstance(value, types.ModuleType):
            if value.__name__.partition(".")[0] not in _JIT_MODULES:
                return f"Untyped global name {name!r}: module {value.__name__} is not supported by numba"
        elif not _jit_typable_global(value):
            return f"Untyped global name {name!r}: cannot determine Numba type of {type(value).__name__}"
    for cell in func.__closure__ or ():
        if not isinstance(cell.cell_contents, (int, float, bool, complex)):
            return f"cannot freeze closure variable of type {type(cell.cell_contents).__name__}"
    return None


def _jit_typable_global(value: Any) -> bool:
    """Globals numba can type in a device function: scalars, math functions, NumPy ufuncs, other
    numba-compiled functions and ``cudf.NA``."""
    if isinstance(value, (int, float, bool, complex)) or value is pd.NA:
        return True
    if getattr(value, "__module__", "") in ("math", "cmath"):
        return True
    return type(value).__name__ in ("ufunc", "CUDADispatcher", "Dispatcher")


def _udf_scalar(value: Any) -> Any:
    """The value a UDF sees: NumPy scalars for datetimes/timedeltas (numba types them as
    ``NPDatetime``, without pandas' ``Timestamp`` attributes), Python scalars otherwise."""
    if isinstance(value, pd.Timestamp):
        return value.to_datetime64()
    if isinstance(value, pd.Timedelta):
        return value.to_timedelta64()
    return value


def _check_udf_result(value: Any) -> None:
    if value is None or value is pd.NA:
        return
    if isinstance(value, (bool, int, float, np.bool_, np.integer, np.floating)):
        return
    raise TypeError(f"cannot determine the numba return type of a UDF returning {type(value).__name__}")


def apply_udf(obj: Any, func: Any, args: tuple[Any, ...], kwargs: dict[str, Any], rows: bool) -> Any:
    """Run ``func`` over a Series' elements or a DataFrame's rows the way cudf does: compile it first
    (``IndexedFrame._apply``: ``ValueError("user defined function compilation failed.")`` from the
    typing error), then compute. Compilation is judged by ``_jit_compilable`` plus a typing pass over
    the data (a UDF that raises or returns non-numeric values does not type)."""
    from cudf.core.series import Series

    if kwargs:
        raise ValueError("UDFs using **kwargs are not yet supported.")
    reason = _jit_compilable(func, args)
    try:
        if reason is not None:
            raise TypeError(reason)
        if rows:
            frame = pd.DataFrame(obj)
            for column, dtype in frame.dtypes.items():
                if pd.api.types.is_object_dtype(dtype):
                    raise TypeError(f"column {column!r} of object dtype cannot be passed to a UDF")
            values = [func({k: _udf_scalar(v) for k, v in row.items()}, *args) for _, row in frame.iterrows()]
        else:
            values = [func(_udf_scalar(value), *args) for value in pd.Series(obj).tolist()]
        for value in values:
            _check_udf_result(value)
    except Exception as error:
        raise ValueError(UDF_COMPILE_MESSAGE) from error
    result = pd.Series(values, index=obj.index, dtype=_result_dtype(values))
    return Series(result)


def _result_dtype(values: list[Any]) -> Any:
    present = [value for value in values if value is not None and value is not pd.NA]
    if not present:
        return "float64"
    if all(isinstance(value, (bool, np.bool_)) for value in present):
        return "bool" if len(present) == len(values) else "boolean"
    if all(isinstance(value, (bool, int, np.bool_, np.integer)) for value in present):
        return "int64" if len(present) == len(values) else "float64"
    return "float64"


def is_nan_scalar(value: Any) -> bool:
    return isinstance(value, float) and math.isnan(value)


def cudf_token(obj: Any) -> list[Any]:
    """Dask token of a cudf object: its cudf type, dtypes and data (rapidsai/cudf ``indexed_frame.py``
    ``__dask_tokenize__``), so equal pandas and cudf data never share a Dask key."""
    from dask.tokenize import normalize_token

    plain = pd.DataFrame(obj) if obj.ndim == 2 else pd.Series(obj)
    return [f"{type(obj).__module__}.{type(obj).__qualname__}", str(dict(plain.dtypes.items()) if obj.ndim == 2
                                                                      else plain.dtype), normalize_token(plain)]


def register_tokenizer(*classes: type) -> None:
    """The simulated classes subclass pandas, whose ``normalize_token`` registration would win over
    ``__dask_tokenize__``: register theirs explicitly (Dask is there whenever it tokenizes)."""
    try:
        from dask.tokenize import normalize_token
    except ImportError:  # pragma: no cover - cudf without Dask
        return
    normalize_token.register(classes)(cudf_token)


# ---------------------------------------------------------------------------------------------
# Behaviour copied inside accepted calls


def clip(self: Any, lower: Any = None, upper: Any = None, axis: Any = 1, inplace: bool = False) -> Any:
    """rapidsai/cudf ``python/cudf/cudf/core/indexed_frame.py`` ``IndexedFrame.clip`` (26.10.2): only
    ``axis=1`` is accepted, so pandas' ``axis=None`` (what Dask passes for a collection whose meta is
    pandas) raises ``NotImplementedError``; thresholds are one per column, swapped for a Series when
    lower > upper."""
    from cudf.api.types import is_scalar

    if axis != 1:
        raise NotImplementedError("`axis is not yet supported in clip`")
    if lower is None and upper is None:
        return None if inplace is True else self.copy(deep=True)
    columns = 1 if self.ndim == 1 else len(self.columns)
    lower = np.full(columns, lower) if is_scalar(lower) else list(lower)
    upper = np.full(columns, upper) if is_scalar(upper) else list(upper)
    if len(lower) != len(upper):
        raise ValueError("Length of lower and upper should be equal")
    if len(lower) != columns:
        raise ValueError("Length of lower/upper should be equal to number of columns")
    if self.ndim == 1:
        low, high = lower[0], upper[0]
        if low is not None and high is not None and low > high:
            low, high = high, low
        output = pd.Series(self).clip(low, high)
    else:
        plain = pd.DataFrame(self)
        output = pd.DataFrame({name: plain[name].clip(low, high) for name, low, high in
                               zip(plain.columns, lower, upper, strict=True)}, index=plain.index)
    output = as_cudf(output)
    if inplace:
        if self.ndim == 1:
            self[:] = output
        else:
            self[list(self.columns)] = output
        return None
    return output


_NO_DEFAULT = object()  # cudf's ``no_default`` (cudf.api.extensions.no_default) for groupby's sort/group_keys


def groupby(self: Any, by: Any = None, axis: Any = 0, level: Any = None, as_index: bool = True,
            sort: Any = _NO_DEFAULT, group_keys: Any = _NO_DEFAULT, observed: bool = True,
            dropna: bool = True) -> Any:
    """rapidsai/cudf ``python/cudf/cudf/core/indexed_frame.py`` ``IndexedFrame.groupby`` (26.10.2):
    ``sort`` and ``group_keys`` default to the ``mode.pandas_compatible`` option (False), so groups
    come out in no particular order unless ``sort=True`` is asked; ``axis`` other than 0 and
    ``observed=False`` are not implemented. pandas' own internal calls keep pandas' groupby."""
    from cudf.core.groupby import GroupBy
    from cudf.options import get_option

    plain = pd.DataFrame if self.ndim == 2 else pd.Series
    if _from_library():  # pandas' own use (value_counts, ...) keeps pandas' groupby and defaults
        given = {"by": by, "level": level, "as_index": as_index, "sort": sort, "group_keys": group_keys,
                 "observed": observed, "dropna": dropna}
        return plain.groupby(self, **{k: v for k, v in given.items() if v is not _NO_DEFAULT})
    if sort is _NO_DEFAULT:
        sort = get_option("mode.pandas_compatible")
    if group_keys is _NO_DEFAULT:
        group_keys = get_option("mode.pandas_compatible")
    if axis not in (0, "index"):
        raise NotImplementedError("axis parameter is not yet implemented")
    if not observed:
        raise NotImplementedError("observed parameter is not yet implemented")
    if by is None and level is None:
        raise TypeError("groupby() requires either by or level to be specified.")
    if group_keys is None:
        group_keys = False
    inner = plain.groupby(self, by=by, level=level, as_index=as_index, sort=sort, group_keys=group_keys,
                          observed=observed, dropna=dropna)
    return GroupBy.wrap(inner, sort=sort, as_index=as_index)


def astype(self: Any, dtype: Any, copy: bool | None = None, errors: str = "raise") -> Any:
    """rapidsai/cudf ``dataframe.py`` / ``series.py`` ``astype(dtype, copy=None, errors="raise")``: ``copy``
    is an ordinary keyword there (dask_cudf's ``group_split_cudf`` passes ``copy=False``); pandas 3
    deprecates it, so the simulation does not pass it on."""
    plain = pd.DataFrame if self.ndim == 2 else pd.Series
    return as_cudf(plain.astype(self, dtype, errors=errors))
