"""Simulated ``cudf.core.groupby`` (rapidsai/cudf ``python/cudf/cudf/core/groupby/``)."""

from cudf.core.groupby.groupby import DataFrameGroupBy, GroupBy, SeriesGroupBy

__all__ = ["DataFrameGroupBy", "GroupBy", "SeriesGroupBy"]
