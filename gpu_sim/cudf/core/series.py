"""Simulated ``cudf.Series`` (rapidsai/cudf ``python/cudf/cudf/core/series.py``): a pandas Series
whose class path is ``cudf.core.series.Series`` and which refuses what a device-memory Series refuses
(iteration, ``tolist``, ``__array__``, Python UDFs that numba cannot compile)."""

from __future__ import annotations

from typing import Any, Literal

import numpy as np
import pandas as pd

from cudf.core.frame import (
    ARROW_MESSAGE,
    NOT_ITERABLE_MESSAGE,
    Absent,
    CudfLocIndexer,
    SingleColumnHostGuard,
    _from_library,
    apply_udf,
    as_cudf,
    astype,
    check_column_values,
    clip,
    groupby,
    host_copy_allowed,
    keep_cudf_types,
    nullable_dtype,
)
from cudf.core.surface import check_own_methods, enforce


class _Accessor:
    """Wraps a pandas accessor (``.dt``, ``.str``, ``.cat``) so its results are cudf objects, with
    per-attribute dtype corrections where cudf's kernels differ from pandas."""

    # rapidsai/cudf python/cudf/cudf/core/column/datetime.py ``quarter``: extract_quarter with
    # ``int16_same_kind_policy`` (year/month/day/... are cast to int32 since 26.x, as in pandas).
    _DTYPES: dict[str, str] = {}

    def __init__(self, inner: Any) -> None:
        object.__setattr__(self, "_inner", inner)

    _SURFACE: str | None = None  # the accessor's class in cudf_api_surface.json (None: not enforced)

    def __getattr__(self, name: str) -> Any:
        spec = None
        from cudf.core.surface import members

        if self._SURFACE is not None and not name.startswith("_") and not _from_library():

            spec = members(self._SURFACE).get(name)
            if spec is None:
                raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")
        try:
            value = getattr(self._inner, name)
        except AttributeError:
            if spec is None:
                raise
            raise NotImplementedError(f"cudf's {self._SURFACE}.{name} exists in cudf 26.10.2 but the simulated cudf "
                                      "does not implement it") from None
        cast = self._DTYPES.get(name)
        if callable(value):
            def call(*args: Any, **kwargs: Any) -> Any:
                return as_cudf(value(*args, **kwargs))

            if spec is not None:
                from cudf.core.surface import checked

                return checked(type(self).__name__, name, call, spec, bound=False)
            return call
        result = as_cudf(value)
        if cast is not None and isinstance(result, pd.Series):
            result = result.astype(cast)
        return result

    def __dir__(self) -> list[str]:
        return dir(self._inner)

    def __iter__(self) -> Any:
        # rapidsai/cudf python/cudf/cudf/core/accessors/base_accessor.py: accessors are NotIterable.
        raise TypeError(
            f"{type(self._inner).__name__} object is not iterable. Consider using `.to_arrow()`, "
            "`.to_pandas()` or `.to_numpy()` if you wish to iterate over the values."
        )


@check_own_methods("DatetimeProperties")
class DatetimeProperties(_Accessor):
    _SURFACE = "DatetimeProperties"
    _DTYPES = {"quarter": "int16"}

    # rapidsai/cudf python/cudf/cudf/core/column/datetime.py ``DatetimeColumn._round_dt`` (26.10.2): the
    # frequency must be one of these strings exactly (pandas also takes "1D", "15min", "W", offsets...).
    ROUNDING_FREQUENCIES = ("D", "h", "min", "s", "ms", "us", "ns")

    def _rounded(self, how: str, freq: str) -> Series:
        if freq not in self.ROUNDING_FREQUENCIES:
            raise ValueError(f"Invalid resolution: '{freq}'")
        return as_cudf(getattr(self._inner, how)(freq))

    def floor(self, freq: str) -> Series:
        return self._rounded("floor", freq)

    def ceil(self, freq: str) -> Series:
        return self._rounded("ceil", freq)

    def round(self, freq: str) -> Series:
        return self._rounded("round", freq)


class TimedeltaProperties(_Accessor):
    _SURFACE = "TimedeltaProperties"


class StringMethods(_Accessor):
    _SURFACE = "StringMethods"


@enforce("Series", keep=("from_pandas",))  # cudf.from_pandas (dataframe.py) calls it
@keep_cudf_types
class Series(SingleColumnHostGuard, pd.Series):
    """A cudf Series held in host memory: pandas underneath, cudf's contract on top."""

    def __init__(self, data: Any = None, index: Any = None, dtype: Any = None, name: Any = None,
                 copy: bool | None = None, nan_as_null: Any = None, **kwargs: Any) -> None:
        super().__init__(data, index=index, dtype=dtype, name=name, copy=copy, **kwargs)
        if not _from_library():
            self._check_values()

    def _check_values(self) -> None:
        """Refuse object values cudf could not hold (``MixedTypeError``)."""
        if pd.api.types.is_object_dtype(self.dtype) and len(self):
            check_column_values(self._values, self.name)

    @property
    def _constructor(self) -> type[Series]:
        return Series

    @property
    def _constructor_expanddim(self) -> type:
        from cudf.core.dataframe import DataFrame

        return DataFrame

    def __dask_tokenize__(self) -> Any:
        from cudf.core.frame import cudf_token

        return cudf_token(self)

    # --- conversion -------------------------------------------------------------------------

    def to_pandas(self, *, index: bool = True, nullable: bool = False, arrow_type: bool = False) -> pd.Series:
        """A plain pandas Series (rapidsai/cudf ``series.py`` ``Series.to_pandas``)."""
        if nullable and arrow_type:
            raise ValueError("nullable and arrow_type cannot both be set to True")
        out = pd.Series(self, copy=True)
        if not index:
            out.index = pd.RangeIndex(len(out))
        elif not isinstance(out.index, pd.MultiIndex):  # pd.Index(a MultiIndex) would flatten it to tuples
            out.index = pd.Index(out.index)
        if nullable:
            out = out.astype(nullable_dtype(out.dtype))
        elif arrow_type:
            import pyarrow as pa

            out = out.astype(pd.ArrowDtype(pa.Array.from_pandas(out).type))
        return out

    @classmethod
    def from_pandas(cls, s: pd.Series, nan_as_null: Any = None) -> Series:
        if not isinstance(s, pd.Series):
            raise TypeError("not a pandas.Series")
        result = cls(s.copy())
        result._check_values()
        return result

    def to_arrow(self) -> Any:
        import pyarrow as pa

        return pa.Array.from_pandas(pd.Series(self))

    @classmethod
    def from_arrow(cls, array: Any) -> Series:
        return cls(array.to_pandas())

    def to_numpy(self, dtype: Any = None, copy: bool = True, na_value: Any = None) -> np.ndarray:  # type: ignore[override]
        kwargs = {} if na_value is None else {"na_value": na_value}
        return pd.Series(self).to_numpy(dtype=dtype, copy=copy, **kwargs)

    def __arrow_array__(self, type: Any = None) -> Any:  # noqa: A002 - the protocol's name
        if host_copy_allowed(self):
            import pyarrow as pa

            return pa.Array.from_pandas(pd.Series(self), type=type)
        raise TypeError(ARROW_MESSAGE)

    astype = astype  # cudf's keywords (frame.py)
    clip = clip  # cudf's own rule for ``axis`` (frame.py)
    groupby = groupby  # cudf's defaults (sort=False) and groupby objects (frame.py, core/groupby)

    def items(self) -> Any:
        """rapidsai/cudf ``python/cudf/cudf/core/series.py`` (26.10.2): ``iteritems = items =
        SingleColumnFrame.__iter__``, i.e. ``NotIterable.__iter__``: present, and refusing."""
        if _from_library():  # pandas' own use (Series.to_dict, ...)
            return pd.Series.items(self)
        raise TypeError(NOT_ITERABLE_MESSAGE.format(type(self).__name__))

    iteritems = items

    # cudf.Series has no plotting/HTML export (not defined anywhere in rapidsai/cudf core).
    plot = Absent()
    hist = Absent()
    to_markdown = Absent()
    to_latex = Absent()
    to_excel = Absent()

    # --- indexing and accessors -------------------------------------------------------------

    @property
    def loc(self) -> CudfLocIndexer:  # type: ignore[override]
        return CudfLocIndexer("loc", self)

    @property
    def dt(self) -> DatetimeProperties | TimedeltaProperties:  # type: ignore[override]
        # rapidsai/cudf series.py ``Series.dt``: DatetimeProperties for datetime64 (kind "M"),
        # TimedeltaProperties for timedelta64 (kind "m"), otherwise AttributeError
        inner = pd.Series(self).dt
        return TimedeltaProperties(inner) if self.dtype.kind == "m" else DatetimeProperties(inner)

    @property
    def str(self) -> StringMethods:  # type: ignore[override]
        return StringMethods(pd.Series(self).str)

    @property
    def cat(self) -> _Accessor:  # type: ignore[override]
        return _Accessor(pd.Series(self).cat)

    # --- user-defined functions -------------------------------------------------------------

    def apply(self, func: Any, convert_dtype: bool = True, args: tuple[Any, ...] = (),  # type: ignore[override]
              by_row: Literal[False, "compat"] = "compat", **kwargs: Any) -> Series:
        """rapidsai/cudf ``series.py`` ``Series.apply``: the function is JIT-compiled with numba."""
        if convert_dtype is not True:
            raise ValueError("Series.apply only supports convert_dtype=True")
        if by_row != "compat":
            raise NotImplementedError("by_row is currently not supported.")
        if func is str:
            return self.map(func)
        result = apply_udf(self, func, args, kwargs, rows=False)
        result.name = self.name
        return result

    def map(self, arg: Any, na_action: Literal["ignore"] | None = None) -> Series:  # type: ignore[override]
        """rapidsai/cudf ``series.py`` ``Series.map``: dicts and Series are joins, ``str`` formats,
        a function goes through ``apply`` (numba)."""
        if not (na_action is None or na_action == "ignore"):
            raise ValueError("na_action must either be 'ignore' or None")
        if na_action == "ignore":
            raise NotImplementedError(f"{na_action=} is not supported")
        if isinstance(arg, dict):
            if hasattr(arg, "__missing__"):
                raise NotImplementedError("default values in dicts are currently not supported.")
            return Series(pd.Series(self).map(arg))
        if isinstance(arg, pd.Series):
            if not arg.index.is_unique:
                raise ValueError("Reindexing only valid with uniquely valued Index objects")
            return Series(pd.Series(self).map(pd.Series(arg)))
        if arg is str:
            return Series(pd.Series(self).astype(str))
        return self.apply(arg)

    # --- hashing and partitioning (dask_cudf's dispatches call these) -----------------------

    def hash_values(self, method: str = "murmur3", seed: int | None = None) -> Series:
        if method not in ("murmur3", "xxhash32", "xxhash64", "md5", "sha1", "sha224", "sha256", "sha384", "sha512"):
            raise ValueError(f"Unsupported hashing algorithm {method}.")
        hashed = pd.util.hash_pandas_object(pd.Series(self), index=False)
        return Series((hashed & 0xFFFFFFFF).astype("uint32"), index=self.index)

    def memory_usage(self, index: bool = True, deep: bool = False) -> int:  # type: ignore[override]
        return int(pd.Series(self).memory_usage(index=index, deep=True))

