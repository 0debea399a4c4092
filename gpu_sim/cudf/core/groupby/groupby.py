"""Simulated ``cudf.core.groupby.groupby.DataFrameGroupBy`` / ``SeriesGroupBy``: pandas' groupby
underneath, cudf's public surface and ordering on top.

Two things real cudf does that pandas does not, and that code written on pandas trips over:
- only cudf's groupby methods and keywords exist (the generated surface, ``surface.py``);
- with ``sort=False`` (cudf's default) the groups come out in hash order, not in order of first
  appearance as in pandas: code that relies on the order of an unsorted groupby's result breaks on a
  GPU. The simulation therefore orders such results by a hash of their group keys (deterministic,
  and neither sorted nor first-seen). Source: rapidsai/cudf ``python/cudf/cudf/core/groupby/groupby.py``
  (``GroupBy.__init__``: "sort : ... Sorting may be slower", results follow libcudf's hash groupby).
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from cudf.core.frame import TRANSPARENT, _from_library, as_cudf

# Methods whose result has one row per group (the rows ``sort=False`` leaves in hash order).
_PER_GROUP = frozenset({
    "agg", "aggregate", "all", "any", "count", "first", "idxmax", "idxmin", "last", "max", "mean", "median",
    "min", "nunique", "prod", "size", "std", "sum", "var",
})


def hash_order(result: Any, as_index: bool, keys: list[Any]) -> Any:
    """``result`` with its rows in the order of a hash of their group keys."""
    if not isinstance(result, (pd.DataFrame, pd.Series)) or len(result) < 2:
        return result
    if as_index:
        hashed = pd.util.hash_pandas_object(result.index.to_frame(index=False), index=False)
    else:
        present = [key for key in keys if isinstance(result, pd.DataFrame) and key in result.columns]
        if not present:
            return result
        hashed = pd.util.hash_pandas_object(pd.DataFrame(result)[present], index=False)
    order = hashed.to_numpy().argsort(kind="stable")
    reordered = result.iloc[order]
    return reordered.reset_index(drop=True) if not as_index else reordered


class GroupBy:
    """A pandas groupby behind cudf's surface for ``DataFrameGroupBy`` or ``SeriesGroupBy``."""

    def __init__(self, inner: Any, sort: bool, as_index: bool) -> None:
        object.__setattr__(self, "_inner", inner)
        object.__setattr__(self, "_sort", sort)
        object.__setattr__(self, "_as_index", as_index)

    @classmethod
    def wrap(cls, inner: Any, sort: bool, as_index: bool) -> GroupBy:
        kind = DataFrameGroupBy if isinstance(inner, pd.core.groupby.DataFrameGroupBy) else SeriesGroupBy
        return kind(inner, sort, as_index)

    _SURFACE = ""

    def _keys(self) -> list[Any]:
        return [name for name in self._inner._grouper.names if name is not None]

    def _accepted(self) -> dict[str, Any]:
        from cudf.core.surface import members

        return members(self._SURFACE)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_") or _from_library():
            return getattr(self._inner, name)
        spec = self._accepted().get(name)
        if spec is None:
            raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")
        try:
            value = getattr(self._inner, name)
        except AttributeError:
            raise NotImplementedError(f"cudf's {self._SURFACE}.{name} exists in cudf 26.10.2 but the simulated "
                                      "cudf does not implement it") from None
        if not callable(value):
            return as_cudf(value)
        return self._method(name, value, spec)

    def _method(self, name: str, value: Any, spec: dict[str, Any]) -> Any:
        from cudf.core.surface import signature_of

        signature = signature_of(spec, bound=False)
        surface_name, sort, as_index, keys = self._SURFACE, self._sort, self._as_index, self._keys()

        def call(*args: Any, **kwargs: Any) -> Any:
            try:
                signature.bind(*args, **kwargs)
            except TypeError as error:
                raise TypeError(f"{surface_name}.{name}() {error}") from None
            result = as_cudf(value(*args, **kwargs))
            return result if sort or name not in _PER_GROUP else as_cudf(hash_order(result, as_index, keys))

        TRANSPARENT.add(call.__code__)
        call.__signature__ = signature  # type: ignore[attr-defined]
        return call

    def __getitem__(self, key: Any) -> GroupBy:
        return GroupBy.wrap(self._inner[key], self._sort, self._as_index)

    def __iter__(self) -> Any:
        for key, group in self._inner:
            yield key, as_cudf(group)

    def __len__(self) -> int:
        return len(self._inner)

    def __dir__(self) -> list[str]:
        return sorted(self._accepted())


class DataFrameGroupBy(GroupBy):
    _SURFACE = "DataFrameGroupBy"


class SeriesGroupBy(GroupBy):
    _SURFACE = "SeriesGroupBy"

