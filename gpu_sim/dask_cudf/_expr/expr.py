"""Simulated ``dask_cudf._expr.expr`` (rapidsai/cudf ``python/dask_cudf/dask_cudf/_expr/expr.py``): the
custom expressions and the patches ``_patch_dask_expr`` applies to dask-expr, plus two patches only the
simulation needs because its cudf classes subclass pandas (marked SIMULATION below)."""

from __future__ import annotations

import functools
from typing import Any

import cudf
import pandas as pd
from dask.dataframe.dask_expr import _backends as _dx_backends
from dask.dataframe.dask_expr import _indexing as _dx_indexing
from dask.dataframe.dispatch import is_categorical_dtype, make_meta, meta_nonempty
from dask.typing import no_default
from dask.utils import is_dataframe_like

from dask_cudf._expr import (
    CumulativeBlockwise,
    Elemwise,
    EnforceRuntimeDivisions,
    Expr,
    Reduction,
    RenameAxis,
    Var,
    VarColumns,
    _shuffle_module,
    new_collection,
)


class RenameAxisCudf(RenameAxis):
    @staticmethod
    def operation(df: Any, index: Any = no_default, **kwargs: Any) -> Any:
        if index != no_default:
            df.index.name = index
            return df
        raise NotImplementedError("Only `index` is supported for the cudf backend")


class ToCudfBackend(Elemwise):
    _parameters = ["frame", "options"]
    _projection_passthrough = True
    _filter_passthrough = True
    _preserves_partitioning_information = True

    @staticmethod
    def operation(df: Any, options: dict[str, Any]) -> Any:
        from dask_cudf.backends import to_cudf_dispatch

        return to_cudf_dispatch(df, **options)

    def _simplify_down(self) -> Any:
        if isinstance(self.frame._meta, (cudf.DataFrame, cudf.Series, cudf.Index)):
            return self.frame
        return None


class PatchCumulativeBlockwise(CumulativeBlockwise):
    @property
    def _args(self) -> list[Any]:
        return self.operands[:1]

    @property
    def _kwargs(self) -> dict[str, Any]:
        return {"axis": self.axis, "skipna": self.skipna}


class VarCudf(Reduction):
    """Parallel Welford variance (the real ``VarCudf``; upstream ``Var`` relies on NumPy values)."""

    _parameters = ["frame", "skipna", "ddof", "numeric_only", "split_every"]
    _defaults = {"skipna": True, "ddof": 1, "numeric_only": False, "split_every": False}

    @functools.cached_property
    def _meta(self) -> Any:
        return make_meta(meta_nonempty(self.frame._meta).var(skipna=self.skipna, numeric_only=self.numeric_only))

    @property
    def chunk_kwargs(self) -> dict[str, Any]:
        return dict(skipna=self.skipna, numeric_only=self.numeric_only)

    @property
    def combine_kwargs(self) -> dict[str, Any]:
        return {}

    @property
    def aggregate_kwargs(self) -> dict[str, Any]:
        return dict(ddof=self.ddof)

    @classmethod
    def reduction_chunk(cls, x: Any, skipna: bool = True, numeric_only: bool = False) -> Any:
        kwargs: dict[str, Any] = {"numeric_only": numeric_only} if is_dataframe_like(x) else {}
        if skipna or numeric_only:
            n = x.count(**kwargs)
            kwargs["skipna"] = skipna
            avg = x.mean(**kwargs)
        else:
            n = len(x)
            kwargs["skipna"] = skipna
            avg = x.sum(**kwargs) / n
        if numeric_only:
            x = x[n.index]
        m2 = ((x - avg) ** 2).sum(**kwargs)
        return n, avg, m2

    @classmethod
    def reduction_combine(cls, parts: list[Any]) -> Any:
        n, avg, m2 = parts[0]
        for i in range(1, len(parts)):
            n_a, avg_a, m2_a = n, avg, m2
            n_b, avg_b, m2_b = parts[i]
            n = n_a + n_b
            avg = (n_a * avg_a + n_b * avg_b) / n
            delta = avg_b - avg_a
            m2 = m2_a + m2_b + delta**2 * n_a * n_b / n
        return n, avg, m2

    @classmethod
    def reduction_aggregate(cls, vals: list[Any], ddof: int = 1) -> Any:
        n, _, m2 = cls.reduction_combine(vals)
        return m2 / (n - ddof)


def _patched_var(self: Any, axis: int = 0, skipna: bool = True, ddof: int = 1, numeric_only: bool = False,
                 split_every: Any = False) -> Any:
    if axis == 0:
        if hasattr(self._meta, "to_pandas"):
            return VarCudf(self, skipna, ddof, numeric_only, split_every)
        return Var(self, skipna, ddof, numeric_only, split_every)
    if axis == 1:
        return VarColumns(self, skipna, ddof, numeric_only)
    raise ValueError(f"axis={axis} not supported. Please specify 0 or 1")


_original_get_divisions = _shuffle_module._get_divisions


def _patched_get_divisions(frame: Any, other: Any, *args: Any, **kwargs: Any) -> Any:
    if is_categorical_dtype(other._meta.dtype) and hasattr(other.frame._meta, "to_pandas"):
        other = new_collection(other).to_backend("pandas")._expr
    return _original_get_divisions(frame, other, *args, **kwargs)


_original_erd_divisions = EnforceRuntimeDivisions._divisions


def _patched_erd_divisions(self: Any) -> tuple[Any, ...]:
    divs = _original_erd_divisions(self)
    return tuple(div.item() if hasattr(div, "item") else div for div in divs)


def _is_cudf_meta(meta: Any) -> bool:
    return type(meta).__module__.partition(".")[0] == "cudf"


# SIMULATION: dask's ToPandasBackend drops itself when the meta "is already pandas"
# (``isinstance(meta, pd.DataFrame)``, dask/dataframe/dask_expr/_backends.py); the simulated cudf
# classes subclass pandas, so without this ``to_backend("pandas")`` would keep cudf partitions.
def _patched_to_pandas_simplify_down(self: Any) -> Any:
    meta = self.frame._meta
    if isinstance(meta, (pd.DataFrame, pd.Series, pd.Index)) and not _is_cudf_meta(meta):
        return self.frame
    return None


# SIMULATION: dask widens partial date strings in ``.loc`` only for a pandas DatetimeIndex meta
# (``_maybe_partial_time_string`` in dask/dataframe/indexing.py: ``isinstance(index,
# (pd.DatetimeIndex, pd.PeriodIndex))``). A real cudf frame's index is a ``cudf.DatetimeIndex``,
# which is no pandas index, so dask leaves the strings alone and every partition resolves them
# with cudf's ``.loc``; the simulated frames carry pandas indexes, so the same decision is made here.
_original_maybe_partial_time_string = _dx_indexing.LocIndexer._maybe_partial_time_string


def _patched_maybe_partial_time_string(self: Any, iindexer: Any, unit: Any) -> Any:
    if _is_cudf_meta(self.obj._meta):
        return iindexer
    return _original_maybe_partial_time_string(self, iindexer, unit)


_PATCHED = False


def _patch_dask_expr() -> None:
    global _PATCHED

    if not _PATCHED:
        CumulativeBlockwise._args = PatchCumulativeBlockwise._args
        CumulativeBlockwise._kwargs = PatchCumulativeBlockwise._kwargs
        Expr.var = _patched_var
        _shuffle_module._get_divisions = _patched_get_divisions
        EnforceRuntimeDivisions._divisions = _patched_erd_divisions
        _dx_backends.ToPandasBackend._simplify_down = _patched_to_pandas_simplify_down
        _dx_indexing.LocIndexer._maybe_partial_time_string = _patched_maybe_partial_time_string
        _PATCHED = True
