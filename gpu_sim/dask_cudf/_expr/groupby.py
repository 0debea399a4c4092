"""Simulated ``dask_cudf._expr.groupby`` (rapidsai/cudf ``python/dask_cudf/dask_cudf/_expr/groupby.py``):
dask_cudf's ``GroupBy``/``SeriesGroupBy`` and its fused multi-aggregation expression.

The contract that matters for course code: ``GroupBy.aggregate(self, arg, fused=True, **kwargs)``
takes the aggregation spec *positionally*, so pandas-style named aggregation
(``.agg(total=("v", "sum"))``: dask's ``GroupBy.agg(*args, **kwargs)`` forwards the keywords) fails
with ``TypeError: GroupBy.aggregate() missing 1 required positional argument: 'arg'``, and
``SeriesGroupBy.aggregate(self, arg, **kwargs)`` likewise. Lists as an aggregation (``list``,
``"collect"``) need cudf list columns and are not simulated."""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
import pandas as pd
from dask.dataframe.core import _concat

from dask_cudf._expr import (
    DecomposableGroupbyAggregation,
    DXGroupBy,
    DXSeriesGroupBy,
    GroupbyAggregation,
    is_scalar,
    new_collection,
)

OPTIMIZED_AGGS = ("count", "mean", "std", "var", "sum", "min", "max", list, "first", "last")
_LIST_AGGS = ("collect", "list", list)


def _make_name(col_name: Any, sep: str = "_") -> str:
    if isinstance(col_name, str):
        return col_name
    return sep.join(name for name in col_name if name != "")


def _groupby_partition_agg(df: Any, gb_cols: Any, aggs: dict[str, Any], columns: Any, dropna: bool, sort: Any,
                           sep: str) -> Any:
    """Per-partition aggregation: count/sum/min/max/first/last (mean/std/var as their parts)."""
    df = df.copy(deep=False)  # the real code adds the pow2 column to the partition object itself
    _agg_dict: dict[str, Any] = {}
    for col, agg_list in aggs.items():
        wanted: set[Any] = set()
        for agg in agg_list:
            if agg in ("mean", "std", "var"):
                wanted.update(("count", "sum"))
            else:
                wanted.add(agg)
        _agg_dict[col] = sorted(wanted, key=str)
        if set(agg_list).intersection({"std", "var"}):
            pow2_name = _make_name((col, "pow2"), sep=sep)
            df[pow2_name] = df[col].astype("float64").pow(2)
            _agg_dict[pow2_name] = ["sum"]
    gb = df.groupby(gb_cols, dropna=dropna, as_index=False, sort=sort).agg(_agg_dict)
    output_columns = [_make_name(name, sep=sep) for name in gb.columns]
    gb.columns = output_columns
    return gb[sorted(output_columns)]


def _tree_node_agg(df: Any, gb_cols: Any, dropna: bool, sort: Any, sep: str) -> Any:
    """Combine partial aggregations (sum of counts and sums, min of mins, ...)."""
    agg_dict: dict[str, Any] = {}
    for col in df.columns:
        if col in gb_cols:
            continue
        agg = col.split(sep)[-1]
        if agg in ("count", "sum"):
            agg_dict[col] = ["sum"]
        elif agg in OPTIMIZED_AGGS:
            agg_dict[col] = [agg]
        else:
            raise ValueError(f"Unexpected aggregation: {agg}")
    gb = df.groupby(gb_cols, dropna=dropna, as_index=False, sort=sort).agg(agg_dict)
    output_columns = [_make_name(name[:-1] if isinstance(name, tuple) else name, sep=sep) for name in gb.columns]
    gb.columns = output_columns
    return gb[sorted(output_columns)]


def _var_agg(df: Any, col: Any, count_name: str, sum_name: str, pow2_sum_name: str, ddof: int = 1) -> Any:
    n = df[count_name]
    x = df[sum_name]
    x2 = df[pow2_sum_name]
    var = x2 - x**2 / n
    div = n - ddof
    div = div.where(div >= 1, 1)
    var = var / div
    return var.where((n - ddof) != 0, np.nan)


def _finalize_gb_agg(gb_in: Any, gb_cols: Any, aggs: dict[str, Any], columns: Any, final_columns: Any,
                     as_index: bool, dropna: bool, sort: Any, sep: str, str_cols_out: bool,
                     aggs_renames: dict[Any, Any]) -> Any:
    """Final aggregation: mean/std/var from their parts, sorting, index, column names."""
    gb = _tree_node_agg(gb_in, gb_cols, dropna, sort, sep)
    for col in columns:
        agg_list = aggs.get(col, [])
        agg_set = set(agg_list)
        if agg_set.intersection({"mean", "std", "var"}):
            count_name = _make_name((col, "count"), sep=sep)
            sum_name = _make_name((col, "sum"), sep=sep)
            if agg_set.intersection({"std", "var"}):
                pow2_sum_name = _make_name((col, "pow2", "sum"), sep=sep)
                var = _var_agg(gb, col, count_name, sum_name, pow2_sum_name)
                if "var" in agg_list:
                    gb[_make_name((col, "var"), sep=sep)] = var
                if "std" in agg_list:
                    gb[_make_name((col, "std"), sep=sep)] = np.sqrt(var)
                gb = gb.drop(columns=[pow2_sum_name])
            if "mean" in agg_list:
                gb[_make_name((col, "mean"), sep=sep)] = gb[sum_name] / gb[count_name]
            if "sum" not in agg_list:
                gb = gb.drop(columns=[sum_name])
            if "count" not in agg_list:
                gb = gb.drop(columns=[count_name])
    if sort:
        gb = gb.sort_values(gb_cols)
    if as_index:
        gb = gb.set_index(gb_cols)
    col_array = []
    agg_array = []
    for col in gb.columns:
        if col in gb_cols:
            col_array.append(col)
            agg_array.append("")
        else:
            name, agg = col.split(sep)
            col_array.append(name)
            agg_array.append(aggs_renames.get((name, agg), agg))
    if str_cols_out:
        gb.columns = col_array
    else:
        gb.columns = pd.MultiIndex.from_arrays([col_array, agg_array])
    return gb[final_columns]


def _redirect_aggs(arg: Any) -> Any:
    """Redirect aggregations to their names in cuDF (``sum`` -> ``"sum"``, ...)."""
    redirects: dict[Any, Any] = {sum: "sum", max: "max", min: "min", "collect": list, "list": list}
    if isinstance(arg, dict):
        new_arg: dict[Any, Any] = {}
        for col in arg:
            if isinstance(arg[col], list):
                new_arg[col] = [redirects.get(agg, agg) for agg in arg[col]]
            elif isinstance(arg[col], dict):
                new_arg[col] = {k: redirects.get(v, v) for k, v in arg[col].items()}
            else:
                new_arg[col] = redirects.get(arg[col], arg[col])
        return new_arg
    if isinstance(arg, list):
        return [redirects.get(agg, agg) for agg in arg]
    return redirects.get(arg, arg)


def _aggs_optimized(arg: Any, supported: Any) -> bool:
    if isinstance(arg, (list, dict)):
        if isinstance(arg, dict):
            _global_set: set[Any] = set()
            for col in arg:
                if isinstance(arg[col], list):
                    _global_set = _global_set.union(set(arg[col]))
                elif isinstance(arg[col], dict):
                    _global_set = _global_set.union(set(arg[col].values()))
                else:
                    _global_set.add(arg[col])
        else:
            _global_set = set(arg)
        return bool(_global_set.issubset(supported))
    if isinstance(arg, (str, type)):
        return arg in supported
    return False


def _refuse_list_aggs(arg: Any) -> None:
    values: list[Any] = []
    for value in arg.values() if isinstance(arg, dict) else [arg]:
        values.extend(value.values() if isinstance(value, dict) else value if isinstance(value, list) else [value])
    if any(isinstance(value, str | type) and value in _LIST_AGGS for value in values):
        raise NotImplementedError("list aggregations need cudf list columns, which the simulation does not have")


def _get_spec_info(gb: Any) -> dict[str, Any]:
    aggs = gb.arg.copy() if isinstance(gb.arg, (dict, list)) else gb.arg
    if gb._slice and not isinstance(aggs, dict):
        aggs = {gb._slice: aggs}
    gb_cols = gb._by_columns
    if isinstance(gb_cols, str):
        gb_cols = [gb_cols]
    columns = [c for c in gb.frame.columns if c not in gb_cols]
    if not isinstance(aggs, dict):
        aggs = {col: aggs for col in columns}
    str_cols_out = True
    aggs_renames: dict[Any, Any] = {}
    for col in aggs:
        if isinstance(aggs[col], str) or callable(aggs[col]):
            aggs[col] = [aggs[col]]
        elif isinstance(aggs[col], dict):
            str_cols_out = False
            col_aggs = []
            for k, v in aggs[col].items():
                aggs_renames[col, v] = k
                col_aggs.append(v)
            aggs[col] = col_aggs
        else:
            str_cols_out = False
        if col in gb_cols:
            columns.append(col)
    return {"aggs": aggs, "columns": columns, "str_cols_out": str_cols_out, "aggs_renames": aggs_renames}


def _get_meta(gb: Any) -> Any:
    spec_info = gb.spec_info
    aggs = spec_info["aggs"].copy()
    aggs_renames = spec_info["aggs_renames"]
    if spec_info["str_cols_out"]:
        for col in aggs:
            aggs[col] = aggs[col][0]
    _meta = gb.frame._meta.groupby(gb._by_columns).agg(aggs)
    if aggs_renames:
        col_array = []
        agg_array = []
        for col, agg in _meta.columns:
            col_array.append(col)
            agg_array.append(aggs_renames.get((col, agg), agg))
        _meta.columns = pd.MultiIndex.from_arrays([col_array, agg_array])
    return _meta


class DecomposableCudfGroupbyAgg(DecomposableGroupbyAggregation):
    sep = "___"

    @functools.cached_property
    def spec_info(self) -> dict[str, Any]:
        return _get_spec_info(self)

    @functools.cached_property
    def _meta(self) -> Any:
        return _get_meta(self)

    @property
    def shuffle_by_index(self) -> bool:
        return False

    @classmethod
    def chunk(cls, df: Any, *by: Any, **kwargs: Any) -> Any:
        return _groupby_partition_agg(df, **kwargs)

    @classmethod
    def combine(cls, inputs: list[Any], **kwargs: Any) -> Any:
        return _tree_node_agg(_concat(inputs), **kwargs)

    @classmethod
    def aggregate(cls, inputs: list[Any], **kwargs: Any) -> Any:
        return _finalize_gb_agg(_concat(inputs), **kwargs)

    @property
    def chunk_kwargs(self) -> dict[str, Any]:
        dropna = True if self.dropna is None else self.dropna
        return {"gb_cols": self._by_columns, "aggs": self.spec_info["aggs"], "columns": self.spec_info["columns"],
                "dropna": dropna, "sort": self.sort, "sep": self.sep}

    @property
    def combine_kwargs(self) -> dict[str, Any]:
        dropna = True if self.dropna is None else self.dropna
        return {"gb_cols": self._by_columns, "dropna": dropna, "sort": self.sort, "sep": self.sep}

    @property
    def aggregate_kwargs(self) -> dict[str, Any]:
        dropna = True if self.dropna is None else self.dropna
        final_columns = self._slice or self._meta.columns
        return {"gb_cols": self._by_columns, "aggs": self.spec_info["aggs"], "columns": self.spec_info["columns"],
                "final_columns": final_columns, "as_index": True, "dropna": dropna, "sort": self.sort,
                "sep": self.sep, "str_cols_out": self.spec_info["str_cols_out"],
                "aggs_renames": self.spec_info["aggs_renames"]}


class CudfGroupbyAgg(GroupbyAggregation):
    @functools.cached_property
    def spec_info(self) -> dict[str, Any]:
        return _get_spec_info(self)

    @functools.cached_property
    def _meta(self) -> Any:
        return _get_meta(self)

    def _lower(self) -> Any:
        return DecomposableCudfGroupbyAgg(self.frame, self.arg, self.observed, self.dropna, self.split_every,
                                          self.split_out, self.sort, self.shuffle_method, self._slice, *self.by)


def _maybe_get_custom_expr(gb: Any, aggs: Any, split_every: Any = None, split_out: Any = None,
                           shuffle_method: Any = None, **kwargs: Any) -> Any:
    if kwargs:
        return None
    if not hasattr(gb.obj._meta, "to_pandas"):
        return None
    _aggs = _redirect_aggs(aggs)
    if not _aggs_optimized(_aggs, OPTIMIZED_AGGS):
        return None
    _refuse_list_aggs(_aggs)
    return CudfGroupbyAgg(gb.obj.expr, _aggs, gb.observed, gb.dropna, split_every, split_out, gb.sort,
                          shuffle_method, gb._slice, *gb.by)


def _translate_arg(arg: Any) -> Any:
    if isinstance(arg, dict):
        return {k: _translate_arg(v) for k, v in arg.items()}
    if isinstance(arg, list):
        return [_translate_arg(x) for x in arg]
    if isinstance(arg, str | type) and arg in _LIST_AGGS:
        _refuse_list_aggs(arg)
    return arg


class GroupBy(DXGroupBy):
    """dask_cudf's DataFrame groupby: ``observed=True`` by default, fused aggregations."""

    def __init__(self, *args: Any, observed: Any = None, **kwargs: Any) -> None:
        observed = observed if observed is not None else True
        super().__init__(*args, observed=observed, **kwargs)

    def __getitem__(self, key: Any) -> Any:
        if is_scalar(key):
            return SeriesGroupBy(self.obj, by=self.by, slice=key, sort=self.sort, dropna=self.dropna,
                                 observed=self.observed)
        return GroupBy(self.obj, by=self.by, slice=key, sort=self.sort, dropna=self.dropna, observed=self.observed,
                       group_keys=self.group_keys)

    def aggregate(self, arg: Any, fused: bool = True, **kwargs: Any) -> Any:
        if fused and (expr := _maybe_get_custom_expr(self, arg, **kwargs)) is not None:
            return new_collection(expr)
        return super().aggregate(_translate_arg(arg), **kwargs)


class SeriesGroupBy(DXSeriesGroupBy):
    def __init__(self, *args: Any, observed: Any = None, **kwargs: Any) -> None:
        observed = observed if observed is not None else True
        super().__init__(*args, observed=observed, **kwargs)

    def aggregate(self, arg: Any, **kwargs: Any) -> Any:
        return super().aggregate(_translate_arg(arg), **kwargs)
