"""Simulated ``cudf.DataFrame`` and ``cudf.from_pandas`` (rapidsai/cudf
``python/cudf/cudf/core/dataframe.py``): a pandas DataFrame whose class path is
``cudf.core.dataframe.DataFrame``, whose columns and results stay cudf-typed, and which refuses what
a device-memory DataFrame refuses."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

import numpy as np
import pandas as pd

from cudf.core.frame import (
    ARRAY_MESSAGE,
    Absent,
    CudfLocIndexer,
    _from_library,
    apply_udf,
    astype,
    check_column_values,
    clip,
    groupby,
    host_copy_allowed,
    keep_cudf_types,
    nullable_dtype,
)
from cudf.core.series import Series
from cudf.core.surface import enforce


@enforce("DataFrame", keep=("from_pandas",))  # cudf.from_pandas calls it
@keep_cudf_types
class DataFrame(pd.DataFrame):
    """A cudf DataFrame held in host memory: pandas underneath, cudf's contract on top."""

    def __init__(self, data: Any = None, index: Any = None, columns: Any = None, dtype: Any = None,
                 copy: bool | None = None, nan_as_null: Any = None) -> None:
        super().__init__(data, index=index, columns=columns, dtype=dtype, copy=copy)
        if not _from_library():  # pandas' own results are checked where they are built
            self._check_columns()

    def _check_columns(self) -> None:
        """Refuse object columns cudf could not hold (``MixedTypeError``)."""
        if len(self):
            for position, column_dtype in enumerate(pd.DataFrame(self).dtypes.tolist()):
                if pd.api.types.is_object_dtype(column_dtype):
                    check_column_values(self._mgr.iget_values(position), self.columns[position])

    @property
    def _constructor(self) -> type[DataFrame]:
        return DataFrame

    @property
    def _constructor_sliced(self) -> type[Series]:
        return Series

    def __dask_tokenize__(self) -> Any:
        from cudf.core.frame import cudf_token

        return cudf_token(self)

    @property
    def dtypes(self) -> pd.Series:  # type: ignore[override]
        """A pandas Series of dtypes, as cudf returns (rapidsai/cudf ``dataframe.py`` ``dtypes``)."""
        return pd.DataFrame(self).dtypes

    # --- conversion -------------------------------------------------------------------------

    def to_pandas(self, *, nullable: bool = False, arrow_type: bool = False) -> pd.DataFrame:
        """A plain pandas DataFrame (rapidsai/cudf ``dataframe.py`` ``DataFrame.to_pandas``):
        ``nullable=True`` gives pandas' nullable dtypes, ``arrow_type=True`` ``pd.ArrowDtype``."""
        if nullable and arrow_type:
            raise ValueError("nullable and arrow_type cannot both be set to True")
        out = pd.DataFrame(self, copy=True)
        out.index = pd.Index(out.index) if not isinstance(out.index, pd.MultiIndex) else out.index
        if nullable:
            out = out.astype({name: nullable_dtype(dtype) for name, dtype in out.dtypes.items()})
        elif arrow_type:
            import pyarrow as pa

            table = pa.Table.from_pandas(out, preserve_index=False)
            out = out.astype({name: pd.ArrowDtype(table.schema.field(str(name)).type) for name in out.columns})
        return out

    @classmethod
    def from_pandas(cls, dataframe: pd.DataFrame, nan_as_null: Any = None) -> DataFrame:
        if not isinstance(dataframe, pd.DataFrame):
            raise TypeError("not a pandas.DataFrame")
        result = cls(dataframe.copy())
        result._check_columns()
        return result

    def to_arrow(self, preserve_index: bool | None = None) -> Any:
        import pyarrow as pa

        return pa.Table.from_pandas(pd.DataFrame(self), preserve_index=preserve_index)

    @classmethod
    def from_arrow(cls, table: Any) -> DataFrame:
        return cls(table.to_pandas())

    def to_parquet(self, path: Any, engine: str = "cudf", compression: Any = "snappy",  # type: ignore[override]
                   index: bool | None = None, partition_cols: Any = None, *args: Any, **kwargs: Any) -> None:
        """cudf's ``DataFrame.to_parquet`` (``cudf.io.parquet.to_parquet``)."""
        from cudf.io.parquet import to_parquet

        return to_parquet(self, path, engine, compression, index, partition_cols, *args, **kwargs)

    def to_numpy(self, dtype: Any = None, copy: bool = True, na_value: Any = None) -> np.ndarray:  # type: ignore[override]
        kwargs = {} if na_value is None else {"na_value": na_value}
        return pd.DataFrame(self).to_numpy(dtype=dtype, copy=copy, **kwargs)

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
        if host_copy_allowed(self):
            return np.asarray(pd.DataFrame(self).to_numpy(), dtype=dtype)
        raise TypeError(ARRAY_MESSAGE)

    def iterrows(self) -> Any:  # type: ignore[override]
        # rapidsai/cudf dataframe.py ``iterrows``
        if _from_library():
            return super().iterrows()
        raise TypeError(
            "cuDF does not support iteration of DataFrame via iterrows. Consider using "
            "`.to_pandas().iterrows()` if you wish to iterate over each row."
        )

    def itertuples(self, index: bool = True, name: str | None = "Pandas") -> Any:  # type: ignore[override]
        # rapidsai/cudf dataframe.py ``itertuples``
        if _from_library():
            return super().itertuples(index=index, name=name)
        raise TypeError(
            "cuDF does not support iteration of DataFrame via itertuples. Consider using "
            "`.to_pandas().itertuples()` if you wish to iterate over namedtuples."
        )

    # cudf.DataFrame has no plotting, Styler or HTML/Markdown/LaTeX/Excel export (rapidsai/cudf core).
    astype = astype  # cudf's keywords (frame.py)
    clip = clip  # cudf's own rule for ``axis`` (frame.py)
    groupby = groupby  # cudf's defaults (sort=False) and groupby objects (frame.py, core/groupby)

    plot = Absent()
    hist = Absent()
    boxplot = Absent()
    style = Absent()
    to_html = Absent()
    to_markdown = Absent()
    to_latex = Absent()
    to_excel = Absent()

    # --- indexing ---------------------------------------------------------------------------

    @property
    def loc(self) -> CudfLocIndexer:  # type: ignore[override]
        return CudfLocIndexer("loc", self)

    # --- user-defined functions -------------------------------------------------------------

    def apply(self, func: Any, axis: Any = 1, raw: bool = False, result_type: Any = None,  # type: ignore[override]
              args: tuple[Any, ...] = (), by_row: Literal[False, "compat"] = "compat",
              engine: Literal["python", "numba"] = "python", engine_kwargs: dict[str, bool] | None = None,
              **kwargs: Any) -> Series:
        """rapidsai/cudf ``dataframe.py`` ``DataFrame.apply``: row-wise only, JIT-compiled with numba."""
        if axis != 1:
            raise NotImplementedError("DataFrame.apply currently only supports row wise ops")
        if raw:
            raise NotImplementedError("The `raw` kwarg is not yet supported.")
        if result_type is not None:
            raise NotImplementedError("The `result_type` kwarg is not yet supported.")
        if by_row != "compat":
            raise NotImplementedError("by_row is currently not supported.")
        return apply_udf(self, func, args, kwargs, rows=True)

    def map(self, func: Callable[[Any], Any], na_action: str | None = None, **kwargs: Any) -> DataFrame:  # type: ignore[override]
        """rapidsai/cudf ``dataframe.py`` ``DataFrame.map``: ``Series.apply`` column by column."""
        if kwargs:
            raise NotImplementedError("DataFrame.map does not yet support **kwargs.")
        if na_action not in {"ignore", None}:
            raise ValueError(f"na_action must be 'ignore' or None. Got {na_action!r}")
        return DataFrame({name: self[name].apply(func) for name in self.columns}, index=self.index)

    # --- hashing and partitioning (dask_cudf's dispatches call these) -----------------------

    def hash_values(self, method: str = "murmur3", seed: int | None = None) -> Series:
        hashed = pd.util.hash_pandas_object(pd.DataFrame(self), index=False)
        return Series((hashed & 0xFFFFFFFF).astype("uint32"), index=self.index)

    def scatter_by_map(self, map_index: Any, map_size: int | None = None, keep_index: bool = True,
                       debug: bool = False) -> list[DataFrame]:
        """Split rows by destination ``map_index`` into ``map_size`` frames (rapidsai/cudf
        ``dataframe.py`` ``scatter_by_map``), which dask_cudf's ``group_split`` uses."""
        return _scatter(self, map_index, map_size, keep_index)


def _scatter(obj: Any, map_index: Any, map_size: int | None, keep_index: bool) -> list[Any]:
    if isinstance(map_index, str):
        map_index = obj[map_index]
    codes = np.asarray(pd.Series(map_index).to_numpy(), dtype=np.int64)
    size = int(codes.max()) + 1 if map_size is None and len(codes) else int(map_size or 0)
    if len(codes) and (codes.min() < 0 or codes.max() >= size):
        raise ValueError("Partition map has invalid values")
    order = np.argsort(codes, kind="stable")
    bounds = np.searchsorted(codes[order], np.arange(size + 1))
    parts = [obj.iloc[order[bounds[i]:bounds[i + 1]]] for i in range(size)]
    if not keep_index:
        parts = [part.reset_index(drop=True) for part in parts]
    return parts


# No Series.scatter_by_map: cudf 26.10.2 defines it on DataFrame only (cudf_api_surface.json), although
# dask_cudf's group_split_cudf is registered for Series too (dask_cudf/backends.py): a Series reaching it fails
# there as here.


def from_pandas(obj: Any, nan_as_null: Any = None) -> Any:
    """``cudf.from_pandas`` (rapidsai/cudf ``dataframe.py``): pandas DataFrame/Series/Index to cudf;
    anything else is a ``TypeError``; object columns that cudf cannot hold raise ``MixedTypeError``."""
    from cudf.core.index import Index, as_index

    if isinstance(obj, pd.DataFrame):
        return DataFrame.from_pandas(obj, nan_as_null=nan_as_null)
    if isinstance(obj, pd.Series):
        return Series.from_pandas(obj, nan_as_null=nan_as_null)
    if isinstance(obj, pd.Index):
        return as_index(obj) if not isinstance(obj, Index) else obj
    raise TypeError(f"from_pandas only accepts Pandas Dataframes, Series, Index, RangeIndex and MultiIndex objects. "
                    f"Got {type(obj)}")


def merge(left: DataFrame, right: DataFrame, *args: Any, **kwargs: Any) -> DataFrame:
    """``cudf.merge``: ``left.merge(right, ...)``."""
    return left.merge(right, *args, **kwargs)
