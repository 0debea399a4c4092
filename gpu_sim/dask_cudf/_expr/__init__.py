"""Simulated ``dask_cudf._expr``: the dask-expr names dask_cudf builds on (rapidsai/cudf
``python/dask_cudf/dask_cudf/_expr/__init__.py``)."""

import dask
import dask.dataframe.dask_expr._shuffle as _shuffle_module
from dask.dataframe import get_collection_type
from dask.dataframe.dask_expr import DataFrame as DXDataFrame
from dask.dataframe.dask_expr import FrameBase, from_dict, new_collection
from dask.dataframe.dask_expr import Index as DXIndex
from dask.dataframe.dask_expr import Series as DXSeries
from dask.dataframe.dask_expr._cumulative import CumulativeBlockwise
from dask.dataframe.dask_expr._expr import Elemwise, EnforceRuntimeDivisions, Expr, RenameAxis, VarColumns
from dask.dataframe.dask_expr._groupby import DecomposableGroupbyAggregation, GroupbyAggregation, SingleAggregation
from dask.dataframe.dask_expr._groupby import GroupBy as DXGroupBy
from dask.dataframe.dask_expr._groupby import SeriesGroupBy as DXSeriesGroupBy
from dask.dataframe.dask_expr._reductions import Reduction, Var
from dask.dataframe.dask_expr._util import _convert_to_list, _raise_if_object_series
from dask.dataframe.dask_expr.io.io import FusedIO, FusedParquetIO
from dask.dataframe.dask_expr.io.parquet import FragmentWrapper, ReadParquetFSSpec, ReadParquetPyarrowFS
from dask.dataframe.utils import is_scalar

__all__ = [
    "CumulativeBlockwise", "DXDataFrame", "DXGroupBy", "DXIndex", "DXSeries", "DXSeriesGroupBy",
    "DecomposableGroupbyAggregation", "Elemwise", "EnforceRuntimeDivisions", "Expr", "FragmentWrapper", "FrameBase",
    "FusedIO", "FusedParquetIO", "GroupbyAggregation", "ReadParquetFSSpec", "ReadParquetPyarrowFS", "Reduction",
    "RenameAxis", "SingleAggregation", "Var", "VarColumns", "_convert_to_list", "_raise_if_object_series",
    "_shuffle_module", "dask", "from_dict", "get_collection_type", "is_scalar", "new_collection",
]
