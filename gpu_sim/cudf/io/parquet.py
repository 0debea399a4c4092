"""Simulated ``cudf.read_parquet`` / ``DataFrame.to_parquet`` with the signature and keyword checks of
rapidsai/cudf ``python/cudf/cudf/io/parquet.py`` (26.10): ``engine`` must be ``"cudf"`` or
``"pyarrow"``; with ``engine="cudf"`` any keyword cudf does not know (``dtype_backend=``, ...) is a
``ValueError("cudf engine doesn't support the following keyword arguments: [...]")``. The reading is
PyArrow's; filters are applied row-wise afterwards (``_apply_post_filters``) as cudf does when it
cannot push them into libcudf."""

from __future__ import annotations

import itertools
import operator
import os
import warnings
from collections.abc import Callable
from functools import partial, reduce
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.dataset as pa_ds
import pyarrow.parquet as pq
from pandas.api.types import is_list_like

from cudf.core.dataframe import DataFrame

_ALLOWED_CUDF_ENGINE_KWARGS = {"_chunk_read_limit", "_pass_read_limit", "filters"}


def read_parquet(
    filepath_or_buffer: Any,
    engine: str = "cudf",
    columns: Any = None,
    storage_options: Any = None,
    filesystem: Any = None,
    filters: Any = None,
    row_groups: Any = None,
    use_pandas_metadata: bool = True,
    categorical_partitions: bool = True,
    bytes_per_thread: int | None = None,
    dataset_kwargs: dict[str, Any] | None = None,
    nrows: int | None = None,
    skip_rows: int | None = None,
    allow_mismatched_pq_schemas: bool = False,
    ignore_missing_columns: bool = True,
    case_sensitive_names: bool = True,
    *args: Any,
    **kwargs: Any,
) -> DataFrame:
    """Read Parquet file(s) or directories into a (simulated) cudf DataFrame."""
    if engine not in {"cudf", "pyarrow"}:
        raise ValueError(f"Only supported engines are {{'cudf', 'pyarrow'}}, got {engine=}")
    if not is_list_like(filepath_or_buffer):
        filepath_or_buffer = [filepath_or_buffer]
    if row_groups is not None:
        if not is_list_like(row_groups):
            row_groups = [[row_groups]]
        elif not is_list_like(row_groups[0]):
            row_groups = [row_groups]
    if columns is not None and not is_list_like(columns):
        raise ValueError("Expected list like for columns")
    filters = _normalize_filters(filters)
    kwargs.pop("prefetch_options", None)
    if engine == "cudf":
        # rapidsai/cudf io/parquet.py ``_read_parquet``
        if set(kwargs).difference(_ALLOWED_CUDF_ENGINE_KWARGS):
            raise ValueError(f"cudf engine doesn't support the following keyword arguments: {list(kwargs.keys())}")
        if args:
            raise ValueError(f"cudf engine doesn't support the following positional arguments: {list(args)}")
    else:
        warnings.warn("Using CPU via PyArrow to read Parquet dataset. This option is both inefficient and unstable!",
                      stacklevel=2)

    sources, row_groups = _expand_sources(list(filepath_or_buffer), row_groups, filesystem, storage_options,
                                          dataset_kwargs)
    projected_columns = None
    read_columns = list(columns) if columns is not None else None
    if read_columns and filters:
        projected_columns = read_columns
        read_columns = sorted(set(v[0] for v in itertools.chain.from_iterable(filters)) | set(read_columns))

    tables = []
    for i, source in enumerate(sources):
        handle = pq.ParquetFile(_open(source, filesystem))
        wanted = _present(handle.schema_arrow, read_columns, ignore_missing_columns)
        groups = row_groups[i] if row_groups is not None else None
        if groups is None:
            tables.append(handle.read(columns=wanted, use_pandas_metadata=use_pandas_metadata))
        else:
            tables.append(handle.read_row_groups(groups, columns=wanted, use_pandas_metadata=use_pandas_metadata))
    table = pa.concat_tables(tables, promote_options="permissive") if len(tables) > 1 else tables[0]
    if skip_rows:
        table = table.slice(skip_rows)
    if nrows is not None and nrows >= 0:
        table = table.slice(0, nrows)
    df = DataFrame(table.to_pandas(ignore_metadata=not use_pandas_metadata))
    df = _apply_post_filters(df, filters)
    if projected_columns:
        projected_columns = [col for col in projected_columns if col in df.columns]
        return df[projected_columns]
    return df


def _open(source: Any, filesystem: Any) -> Any:
    """A path PyArrow can open itself, or an open file of a remote (fsspec/PyArrow) file system."""
    if not isinstance(source, str) or filesystem is None or isinstance(filesystem, str):
        return source
    if isinstance(filesystem, pa.fs.FileSystem):
        return source if isinstance(filesystem, pa.fs.LocalFileSystem) else filesystem.open_input_file(source)
    protocol = getattr(filesystem, "protocol", "file")
    if protocol in ("file", "local") or (isinstance(protocol, tuple) and "file" in protocol):
        return source
    return filesystem.open(source, mode="rb")


def _present(schema: pa.Schema, columns: list[Any] | None, ignore_missing: bool) -> list[Any] | None:
    if columns is None:
        return None
    names = set(schema.names)
    missing = [col for col in columns if col not in names and str(col).split(".")[0] not in names]
    if missing and not ignore_missing:
        raise ValueError(f"Columns {missing} not found in the Parquet file")
    return [col for col in columns if col not in missing]


def _expand_sources(sources: list[Any], row_groups: Any, filesystem: Any, storage_options: Any,
                    dataset_kwargs: dict[str, Any] | None) -> tuple[list[Any], Any]:
    """Directories become their Parquet files (cudf's ``_process_dataset`` uses a PyArrow dataset)."""
    expanded: list[Any] = []
    for source in sources:
        if isinstance(source, (str, os.PathLike)) and os.path.isdir(source):
            dataset = pa_ds.dataset(os.fspath(source), format="parquet", **(dataset_kwargs or {}))
            expanded.extend(sorted(dataset.files))
        elif isinstance(source, os.PathLike):
            expanded.append(os.fspath(source))
        elif isinstance(source, str) and "://" in source:
            import fsspec

            expanded.append(fsspec.open(source, mode="rb", **(storage_options or {})).open())
        else:
            expanded.append(source)
    if row_groups is not None and len(row_groups) != len(expanded):
        raise ValueError("row_groups must have one list of row groups per source")
    return expanded, row_groups


def _normalize_filters(filters: list[Any] | None) -> list[list[tuple[Any, ...]]] | None:
    """rapidsai/cudf ``io/parquet.py`` ``_normalize_filters`` (DNF validation)."""
    if not filters:
        return None
    msg = f"filters must be None, or non-empty List[Tuple] or List[List[Tuple]]. Got {filters}"
    if not isinstance(filters, list):
        raise TypeError(msg)
    filters = filters if isinstance(filters[0], list) else [filters]
    for conjunction in filters:
        if not conjunction or not isinstance(conjunction, list):
            raise TypeError(msg)
        for predicate in conjunction:
            if not isinstance(predicate, tuple) or len(predicate) != 3:
                raise TypeError(f"Predicate must be Tuple[str, str, Any], got {predicate}.")
    return filters


def _apply_post_filters(df: DataFrame, filters: list[list[tuple[Any, ...]]] | None) -> DataFrame:
    """rapidsai/cudf ``io/parquet.py`` ``_apply_post_filters``: DNF filters applied row-wise."""
    if not filters:
        return df

    def _handle_in(column: pd.Series, value: Any, *, negate: bool) -> pd.Series:
        if not isinstance(value, (list, set, tuple)):
            raise TypeError("Value of 'in'/'not in' filter must be a list, set, or tuple.")
        return ~column.isin(value) if negate else column.isin(value)

    def _handle_is(column: pd.Series, value: Any, *, negate: bool) -> pd.Series:
        if value not in {np.nan, None}:
            raise TypeError("Value of 'is'/'is not' filter must be np.nan or None.")
        return ~column.isna() if negate else column.isna()

    handlers: dict[str, Callable[..., Any]] = {
        "==": operator.eq, "!=": operator.ne, "<": operator.lt, "<=": operator.le, ">": operator.gt,
        ">=": operator.ge, "in": partial(_handle_in, negate=False), "not in": partial(_handle_in, negate=True),
        "is": partial(_handle_is, negate=False), "is not": partial(_handle_is, negate=True),
    }
    index = df.index
    reset_index = isinstance(index, pd.RangeIndex) and index.name is None and index.start == 0 and index.step == 1
    try:
        selection = reduce(
            operator.or_,
            (reduce(operator.and_, (handlers[op](df[column], value) for (column, op, value) in expr))
             for expr in filters),
        )
        if reset_index:
            return df[selection].reset_index(drop=True)
        return df[selection]
    except (KeyError, TypeError):
        warnings.warn(f"Row-wise filtering failed in read_parquet for {filters}", stacklevel=2)
        return df


def to_parquet(df: DataFrame, path: Any, engine: str = "cudf", compression: Any = "snappy", index: bool | None = None,
               partition_cols: Any = None, *args: Any, **kwargs: Any) -> None:
    """``DataFrame.to_parquet`` with cudf's engine: PyArrow writes the host copy."""
    if engine == "cudf":
        known = {"partition_file_name", "partition_offsets", "statistics", "metadata_file_path", "int96_timestamps",
                 "row_group_size_bytes", "row_group_size_rows", "max_page_size_bytes", "max_page_size_rows",
                 "max_dictionary_size", "storage_options", "return_metadata", "force_nullable_schema",
                 "header_version", "use_dictionary", "skip_compression", "column_encoding", "column_type_length",
                 "output_as_binary", "store_schema", "page_level_compression"}
        unknown = [key for key in kwargs if key not in known]
        if unknown:
            raise ValueError(f"cudf engine doesn't support the following keyword arguments: {unknown}")
        for col in df.columns:
            if (partition_cols is None or col not in partition_cols) and df[col].dtype.name == "category":
                raise ValueError("'category' column dtypes are currently not supported by the gpu accelerated "
                                 "parquet writer")
    table = pa.Table.from_pandas(pd.DataFrame(df), preserve_index=index)
    if partition_cols:
        pq.write_to_dataset(table, os.fspath(path), partition_cols=list(partition_cols),
                            compression=compression)
    else:
        pq.write_table(table, path if not isinstance(path, os.PathLike) else os.fspath(path),
                       compression=compression)
