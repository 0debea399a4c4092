"""Simulated ``dask_cudf._expr.collection`` (rapidsai/cudf ``python/dask_cudf/dask_cudf/_expr/collection.py``):
the collection classes Dask builds for cudf partitions (``get_collection_type``/``get_parallel_type``),
with dask_cudf's own ``groupby``, ``set_index``, ``var`` and ``rename_axis``."""

from __future__ import annotations

import warnings
from typing import Any

import cudf
from dask import config
from dask.dataframe import get_collection_type
from dask.dataframe.core import is_dataframe_like
from dask.dataframe.dispatch import get_parallel_type
from dask.typing import no_default

from dask_cudf._expr import DXDataFrame, DXIndex, DXSeries, FrameBase, _raise_if_object_series, new_collection


class CudfFrameBase(FrameBase):
    def _prepare_cov_corr(self, min_periods: Any, numeric_only: Any) -> Any:
        self._meta.cov(min_periods=min_periods)
        frame = self
        if numeric_only:
            numerics = self._meta._get_numeric_data()
            if len(numerics.columns) != len(self.columns):
                frame = frame[list(numerics.columns)]
        return frame, min_periods

    def var(self, axis: int = 0, skipna: bool = True, ddof: int = 1, numeric_only: bool = False,
            split_every: Any = False, **kwargs: Any) -> Any:
        _raise_if_object_series(self, "var")
        axis = self._validate_axis(axis)
        self._meta.var(axis=axis, skipna=skipna, numeric_only=numeric_only)
        frame = self
        if is_dataframe_like(self._meta) and numeric_only:
            index = self._meta.to_pandas().var(numeric_only=True).index
            frame = frame[list(index)]
        return new_collection(frame.expr.var(axis, skipna, ddof, numeric_only, split_every=split_every))

    def rename_axis(self, mapper: Any = no_default, index: Any = no_default, columns: Any = no_default,
                    axis: int = 0) -> Any:
        from dask_cudf._expr.expr import RenameAxisCudf

        return new_collection(RenameAxisCudf(self, mapper=mapper, index=index, columns=columns, axis=axis))


class DataFrame(DXDataFrame, CudfFrameBase):
    @classmethod
    def from_dict(cls, *args: Any, **kwargs: Any) -> Any:
        with config.set({"dataframe.backend": "cudf"}):
            return DXDataFrame.from_dict(*args, **kwargs)

    def set_index(self, *args: Any, divisions: Any = None, **kwargs: Any) -> Any:
        if divisions == "quantile":
            divisions = None
            warnings.warn("Ignoring divisions='quantile'. This option is now deprecated. Please raise an issue on "
                          "github if this feature is necessary.", FutureWarning, stacklevel=2)
        return super().set_index(*args, divisions=divisions, **kwargs)

    def groupby(self, by: Any, group_keys: bool = True, sort: Any = None, observed: Any = None, dropna: Any = None,
                **kwargs: Any) -> Any:
        """dask_cudf's GroupBy; ``as_index=False`` is refused (``NotImplementedError``) as in 26.10."""
        from dask_cudf._expr.groupby import GroupBy

        if isinstance(by, FrameBase) and not isinstance(by, DXSeries):
            raise ValueError(f"`by` must be a column name or list of columns, got {by}.")
        if "as_index" in kwargs:
            msg = ("The `as_index` argument is now deprecated. All groupby results will be consistent with "
                   "`as_index=True`.")
            if kwargs.pop("as_index") is not True:
                raise NotImplementedError(f"{msg} Please reset the index after aggregating.")
            warnings.warn(msg, FutureWarning, stacklevel=2)
        return GroupBy(self, by, group_keys=group_keys, sort=sort, observed=observed, dropna=dropna, **kwargs)

    def to_orc(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError("to_orc is not part of the simulated dask_cudf (gpu_sim/README.md)")

    @staticmethod
    def read_text(*args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError("read_text is not part of the simulated dask_cudf (gpu_sim/README.md)")

    def clip(self, lower: Any = None, upper: Any = None, axis: Any = 1) -> Any:
        if axis not in (None, 1):
            raise NotImplementedError("axis not yet supported in clip.")
        return new_collection(self.expr.clip(lower, upper, 1))


class Series(DXSeries, CudfFrameBase):
    def groupby(self, by: Any, **kwargs: Any) -> Any:
        from dask_cudf._expr.groupby import SeriesGroupBy

        return SeriesGroupBy(self, by, **kwargs)

    def clip(self, lower: Any = None, upper: Any = None, axis: Any = 1) -> Any:
        if axis not in (None, 1):
            raise NotImplementedError("axis not yet supported in clip.")
        return new_collection(self.expr.clip(lower, upper, 1))


class Index(DXIndex, CudfFrameBase):
    pass


# dask.dataframe dispatch
get_parallel_type.register(cudf.DataFrame, lambda _: DataFrame)
get_parallel_type.register(cudf.Series, lambda _: Series)
get_parallel_type.register(cudf.Index, lambda _: Index)

# dask_expr dispatch
get_collection_type.register(cudf.DataFrame, lambda _: DataFrame)
get_collection_type.register(cudf.Series, lambda _: Series)
get_collection_type.register(cudf.Index, lambda _: Index)
