"""Simulated ``dask_cudf.io.parquet`` (rapidsai/cudf ``python/dask_cudf/dask_cudf/io/parquet.py``, 26.10):
what ``dd.read_parquet`` does under ``dataframe.backend="cudf"``.

- ``blocksize="default"`` is 1/32 of the device memory (``_normalize_blocksize``), the device size read
  with ``pynvml`` (``nvmlDeviceGetMemoryInfo(handle).total`` of the first ``CUDA_VISIBLE_DEVICES``
  device, the smallest over the workers when a distributed client exists; 8 GiB if NVML says
  "not supported"), cached per process; a float below 1 is a fraction of the device;
- the reader is wrapped in a ``NoOp`` so that ``optimize()`` calls its ``_tune_up``, which fuses
  small files, ``min(⌈1 / factor⌉, ⌈√files⌉, 100)`` per partition where the factor is the uncompressed
  bytes read per file ÷ ``blocksize`` (``CudfFusedIO``; ``CudfFusedParquetIO`` with
  ``filesystem="arrow"``, whose own rule packs files up to ``blocksize``); before optimizing there is
  one partition per file (or row-group split);
- ``blocksize=None`` switches fusion off (one partition per file);
- ``dtype_backend=``, ``arrow_to_pandas=``, ``open_file_options=`` and any ``engine=`` other than
  cudf's are refused.

Plans show the real class names: ``CudfReadParquetFSSpec``, ``CudfReadParquetPyarrowFS``,
``CudfFusedIO``, ``CudfFusedParquetIO``, ``NoOp``. The simulated ``pynvml`` (``gpu_sim/pynvml.py``,
``GPU_SIM_MEMORY_BYTES``, default 80 GiB) supplies the device size."""

from __future__ import annotations

import functools
import itertools
import math
import os
import warnings
from collections.abc import MutableMapping
from typing import Any

import cudf
import numpy as np
import pandas as pd
from dask._task_spec import List as TaskList
from dask._task_spec import Task
from dask.dataframe.io.parquet.arrow import _filters_to_expression
from dask.dataframe.io.parquet.core import ParquetFunctionWrapper
from dask.tokenize import tokenize
from dask.utils import parse_bytes

from dask_cudf._expr import (
    Elemwise,
    FragmentWrapper,
    FusedIO,
    FusedParquetIO,
    ReadParquetFSSpec,
    ReadParquetPyarrowFS,
    _convert_to_list,
    new_collection,
)
from dask_cudf._legacy.io.parquet import CudfEngine, _string_dtypes_as_cudf
from dask_cudf.core import _deprecated_api

__all__ = ["CudfEngine", "read_parquet", "read_parquet_expr"]

_DEVICE_SIZE_CACHE: int | None = None


def _get_device_size() -> int:
    """Total memory of this process's first visible GPU, from NVML (the simulated pynvml here)."""
    import pynvml

    try:
        pynvml.nvmlInit()
        index = os.environ.get("CUDA_VISIBLE_DEVICES", "0").split(",")[0]
        if index and not index.isnumeric():
            handle = pynvml.nvmlDeviceGetHandleByUUID(str.encode(index))
            if pynvml.nvmlDeviceIsMigDeviceHandle(handle):
                handle = pynvml.nvmlDeviceGetDeviceHandleFromMigDeviceHandle(handle)
        else:
            handle = pynvml.nvmlDeviceGetHandleByIndex(int(index))
        return pynvml.nvmlDeviceGetMemoryInfo(handle).total
    except (ValueError, pynvml.NVMLError_NotSupported):
        return 8 * 1024**3


def _normalize_blocksize(fraction: float = 0.03125) -> int:
    """``fraction`` of the smallest worker device (default 1/32), cached for the process."""
    global _DEVICE_SIZE_CACHE

    if _DEVICE_SIZE_CACHE is None:
        try:
            from distributed import get_client

            client = get_client()
            device_size = min(client.run(_get_device_size).values())
        except (ImportError, ValueError):
            device_size = _get_device_size()
        _DEVICE_SIZE_CACHE = device_size
    return int(_DEVICE_SIZE_CACHE * fraction)


class NoOp(Elemwise):
    # Workaround - Always wrap read_parquet operations in a NoOp to trigger tune_up optimizations.
    _parameters = ["frame"]
    _is_length_preserving = True
    _projection_passthrough = True
    _filter_passthrough = True
    _preserves_partitioning_information = True

    @staticmethod
    def operation(x: Any) -> Any:
        return x


class CudfReadParquetFSSpec(ReadParquetFSSpec):
    _STATS_CACHE: MutableMapping[str, Any] = {}

    def approx_statistics(self) -> dict[str, Any]:
        """Column sizes averaged over (up to) three files' footers."""
        key = tokenize(self._dataset_info["ds"].files[:10], self.filters)
        try:
            return self._STATS_CACHE[key]
        except KeyError:
            ds_filters = None
            if self.filters is not None:
                ds_filters = _filters_to_expression(self.filters)
            n_sample = 3
            column_sizes: dict[str, Any] = {}
            for i, frag in enumerate(self._dataset_info["ds"].get_fragments(ds_filters)):
                md = frag.metadata
                for rg in range(md.num_row_groups):
                    row_group = md.row_group(rg)
                    for col in range(row_group.num_columns):
                        column = row_group.column(col)
                        name = column.path_in_schema
                        if name not in column_sizes:
                            column_sizes[name] = np.zeros(n_sample, dtype="int64")
                        column_sizes[name][i] += column.total_uncompressed_size
                if (i + 1) >= n_sample:
                    break
            self._STATS_CACHE[key] = {
                "columns": [{"path_in_schema": name, "total_uncompressed_size": np.mean(sizes)}
                            for name, sizes in column_sizes.items()]
            }
            return self._STATS_CACHE[key]

    @functools.cached_property
    def _fusion_compression_factor(self) -> float:
        if self.blocksize is None:
            return 1
        approx_stats = self.approx_statistics()
        projected_size, original_size = 0, 0
        col_op = self.operand("columns") or self.columns
        for col in approx_stats["columns"]:
            original_size += col["total_uncompressed_size"]
            if col["path_in_schema"] in col_op or (
                (split_name := col["path_in_schema"].split(".")) and split_name[0] in col_op
            ):
                projected_size += col["total_uncompressed_size"]
        if original_size < 1 or projected_size < 1:
            return 1
        blocksize = parse_bytes(self.blocksize)
        if original_size > blocksize:
            correction_factor = original_size / blocksize
        elif self.aggregate_files:
            correction_factor = 1
        else:
            correction_factor = original_size / blocksize
        projection_factor = 1 if self.operand("columns") is None else projected_size / original_size
        return max(projection_factor * correction_factor, 0.001)

    def _tune_up(self, parent: Any) -> Any:
        if self._fusion_compression_factor >= 1:
            return None
        if isinstance(parent, FusedIO):
            return None
        return parent.substitute(self, CudfFusedIO(self))


class CudfReadParquetPyarrowFS(ReadParquetPyarrowFS):
    _parameters = [
        "path", "columns", "filters", "categories", "index", "storage_options", "filesystem", "blocksize",
        "ignore_metadata_file", "calculate_divisions", "arrow_to_pandas", "pyarrow_strings_enabled", "kwargs",
        "_partitions", "_series", "_dataset_info_cache",
    ]
    _defaults = {
        "columns": None, "filters": None, "categories": None, "index": None, "storage_options": None,
        "filesystem": None, "blocksize": "256 MiB", "ignore_metadata_file": True, "calculate_divisions": False,
        "arrow_to_pandas": None, "pyarrow_strings_enabled": True, "kwargs": None, "_partitions": None,
        "_series": False, "_dataset_info_cache": None,
    }

    @functools.cached_property
    def _dataset_info(self) -> dict[str, Any]:
        dataset_info = super()._dataset_info
        meta_pd = dataset_info["base_meta"]
        if isinstance(meta_pd, cudf.DataFrame):
            return dataset_info
        for k, v in meta_pd.dtypes.items():
            if isinstance(v, pd.DatetimeTZDtype) and v.tz is not None:
                meta_pd[k] = meta_pd[k].dt.tz_localize(None)
        dataset_info["base_meta"] = cudf.from_pandas(_string_dtypes_as_cudf(meta_pd))
        self.operands[type(self)._parameters.index("_dataset_info_cache")] = dataset_info
        return dataset_info

    @staticmethod
    def _table_to_pandas(table: Any, index_name: Any) -> Any:
        if isinstance(table, cudf.DataFrame):
            df = table
        else:
            df = cudf.DataFrame.from_arrow(table)
            if index_name is not None:
                return df.set_index(index_name)
        return df

    @staticmethod
    def _fragments_to_cudf_dataframe(fragment_wrappers: Any, filters: Any, columns: Any, schema: Any) -> Any:
        from cudf.io.parquet import _apply_post_filters, _normalize_filters
        from dask.dataframe.io.utils import _is_local_fs

        if not isinstance(fragment_wrappers, list):
            fragment_wrappers = [fragment_wrappers]
        filesystem = None
        paths, row_groups = [], []
        for fw in fragment_wrappers:
            frag = fw.fragment if isinstance(fw, FragmentWrapper) else fw
            paths.append(frag.path)
            row_groups.append([rg.id for rg in frag.row_groups] if frag.row_groups else None)
            if filesystem is None:
                filesystem = frag.filesystem
        if _is_local_fs(filesystem):
            filesystem = None
        else:
            from fsspec.implementations.arrow import ArrowFSWrapper

            filesystem = ArrowFSWrapper(filesystem)
            protocol = filesystem.protocol
            paths = [f"{protocol}://{path}" for path in paths]
        filters = _normalize_filters(filters)
        projected_columns = None
        if columns and filters:
            projected_columns = [c for c in columns if c is not None]
            columns = sorted(set(v[0] for v in itertools.chain.from_iterable(filters)) | set(projected_columns))
        if row_groups == [None for _ in paths]:
            row_groups = None
        df = cudf.read_parquet(paths, columns=columns, filters=filters, row_groups=row_groups,
                               dataset_kwargs={"schema": schema})
        df = _apply_post_filters(df, filters)
        if projected_columns:
            projected_columns = [col for col in projected_columns if col in df.columns]
            df = df[projected_columns]
        return df

    @functools.cached_property
    def _use_device_io(self) -> bool:
        from dask.dataframe.io.utils import _is_local_fs

        return _is_local_fs(self.fs) or (self.fs.type_name == "s3" and cudf.get_option("kvikio_remote_io"))

    def _filtered_task(self, name: Any, index: int) -> Task:
        columns = self.columns.copy()
        index_name = self.index.name
        if self.index is not None:
            index_name = self.index.name
        schema = self._dataset_info["schema"].remove_metadata()
        if index_name:
            if columns is None:
                columns = list(schema.names)
            columns.append(index_name)
        frag_to_table = self._fragment_to_table
        if self._use_device_io:
            frag_to_table = self._fragments_to_cudf_dataframe
        return Task(
            name,
            self._table_to_pandas,
            Task(None, frag_to_table, fragment_wrapper=FragmentWrapper(self.fragments[index], filesystem=self.fs),
                 filters=self.filters, columns=columns, schema=schema),
            index_name=index_name,
        )

    @property
    def _fusion_compression_factor(self) -> float:
        blocksize = self.blocksize
        if blocksize is None:
            return 1
        if blocksize == "default":
            blocksize = "256MiB"
        projected_size = 0
        approx_stats = self.approx_statistics()
        col_op = self.operand("columns") or self.columns
        for col in approx_stats["columns"]:
            if col["path_in_schema"] in col_op or (
                (split_name := col["path_in_schema"].split(".")) and split_name[0] in col_op
            ):
                projected_size += col["total_uncompressed_size"]
        if projected_size < 1:
            return 1
        aggregate_files = max(1, int(parse_bytes(blocksize) / projected_size))
        return max(1 / aggregate_files, 0.001)

    def _tune_up(self, parent: Any) -> Any:
        if self._fusion_compression_factor >= 1:
            return None
        fused_cls = CudfFusedParquetIO if self._use_device_io else CudfFusedParquetIOHost
        if isinstance(parent, fused_cls):
            return None
        return parent.substitute(self, fused_cls(self))


class CudfFusedIO(FusedIO):
    def _task(self, name: Any, index: int) -> Task:
        expr = self.operand("_expr")
        bucket = self._fusion_buckets[index]
        io_func = expr._filtered_task(name, 0).func
        if not isinstance(io_func, ParquetFunctionWrapper) or io_func.common_kwargs.get("partitions", None):
            return Task(name, cudf.concat, TaskList(*(expr._filtered_task(name, i) for i in bucket)))
        pieces: list[Any] = []
        for i in bucket:
            piece = expr._filtered_task(name, i).args[0]
            if isinstance(piece, list):
                pieces.extend(piece)
            else:
                pieces.append(piece)
        return Task(name, io_func, pieces)


class CudfFusedParquetIO(FusedParquetIO):
    @functools.cached_property
    def _fusion_buckets(self) -> list[Any]:
        partitions = self.operand("_expr")._partitions
        npartitions = len(partitions)
        step = math.ceil(1 / self.operand("_expr")._fusion_compression_factor)
        step = min(step, 100)
        return [partitions[i: i + step] for i in range(0, npartitions, step)]

    @classmethod
    def _load_multiple_files(cls, frag_filters: Any, columns: Any, schema: Any, **to_pandas_kwargs: Any) -> Any:
        frag_to_table = CudfReadParquetPyarrowFS._fragments_to_cudf_dataframe
        return CudfReadParquetPyarrowFS._table_to_pandas(
            frag_to_table([frag[0] for frag in frag_filters], frag_filters[0][1], columns, schema),
            **to_pandas_kwargs,
        )


class CudfFusedParquetIOHost(CudfFusedParquetIO):
    @classmethod
    def _load_multiple_files(cls, frag_filters: Any, columns: Any, schema: Any, **to_pandas_kwargs: Any) -> Any:
        import pyarrow as pa

        tables = [CudfReadParquetPyarrowFS._fragment_to_table(frag, filter_, columns, schema)
                  for frag, filter_ in frag_filters]
        return CudfReadParquetPyarrowFS._table_to_pandas(pa.concat_tables(tables, promote_options="permissive"),
                                                         **to_pandas_kwargs)


def read_parquet_expr(
    path: Any,
    *args: Any,
    columns: Any = None,
    filters: Any = None,
    categories: Any = None,
    index: Any = None,
    storage_options: Any = None,
    dtype_backend: Any = None,
    calculate_divisions: bool = False,
    ignore_metadata_file: bool = False,
    metadata_task_size: Any = None,
    split_row_groups: Any = "infer",
    blocksize: Any = "default",
    aggregate_files: Any = None,
    parquet_file_extension: Any = (".parq", ".parquet", ".pq"),
    filesystem: Any = "fsspec",
    engine: Any = None,
    arrow_to_pandas: Any = None,
    open_file_options: Any = None,
    **kwargs: Any,
) -> Any:
    """Read Parquet into a dask_cudf DataFrame (see the module docstring for the partitioning rules)."""
    from dask.core import flatten
    from dask.dataframe.utils import pyarrow_strings_enabled
    from fsspec.utils import stringify_path
    from pyarrow import fs as pa_fs

    if args:
        raise ValueError(f"Unexpected positional arguments: {args}")
    if open_file_options is not None:
        raise ValueError("The open_file_options argument is no longer supported by the 'cudf' backend.")
    if dtype_backend is not None:
        raise NotImplementedError("dtype_backend is not supported by the 'cudf' backend.")
    if arrow_to_pandas is not None:
        raise NotImplementedError("arrow_to_pandas is not supported by the 'cudf' backend.")
    if engine not in (None, "cudf", CudfEngine):
        # (the real message lacks the f-prefix, so it prints "{engine}" literally)
        raise NotImplementedError("engine={engine} is not supported by the 'cudf' backend.")
    if not isinstance(path, str):
        path = stringify_path(path)
    kwargs["dtype_backend"] = None
    if filters is not None:
        for filter_ in flatten(filters, container=list):
            _, op, val = filter_
            if op == "in" and not isinstance(val, (set, list, tuple)):
                raise TypeError("Value of 'in' filter must be a list, set or tuple.")
    if blocksize == "default":
        blocksize = _normalize_blocksize()
    elif isinstance(blocksize, float) and blocksize < 1:
        blocksize = _normalize_blocksize(blocksize)

    if isinstance(filesystem, pa_fs.FileSystem) or (
        isinstance(filesystem, str) and filesystem.lower() in ("arrow", "pyarrow")
    ):
        import distributed  # noqa: F401 - CudfReadParquetPyarrowFS needs it imported (dask#11352)

        if metadata_task_size is not None:
            warnings.warn("metadata_task_size is not supported when using the pyarrow filesystem. "
                          "This argument will be ignored!", stacklevel=2)
        if aggregate_files is not None:
            warnings.warn("aggregate_files is not supported when using the pyarrow filesystem. "
                          "This argument will be ignored!", stacklevel=2)
        if split_row_groups != "infer":
            warnings.warn("split_row_groups is not supported when using the pyarrow filesystem. "
                          "This argument will be ignored!", stacklevel=2)
        if parquet_file_extension != (".parq", ".parquet", ".pq"):
            raise NotImplementedError("parquet_file_extension is not supported when using the pyarrow filesystem.")
        return new_collection(
            NoOp(
                CudfReadParquetPyarrowFS(
                    path, columns=_convert_to_list(columns), filters=filters, categories=categories, index=index,
                    calculate_divisions=calculate_divisions, storage_options=storage_options,
                    filesystem=filesystem, blocksize=blocksize, ignore_metadata_file=ignore_metadata_file,
                    arrow_to_pandas=None, pyarrow_strings_enabled=pyarrow_strings_enabled(), kwargs=kwargs,
                    _series=isinstance(columns, str),
                ),
            )
        )

    return new_collection(
        NoOp(
            CudfReadParquetFSSpec(
                path, columns=_convert_to_list(columns), filters=filters, categories=categories, index=index,
                blocksize=blocksize, storage_options=storage_options, calculate_divisions=calculate_divisions,
                ignore_metadata_file=ignore_metadata_file, metadata_task_size=metadata_task_size,
                split_row_groups=split_row_groups, aggregate_files=aggregate_files,
                parquet_file_extension=parquet_file_extension, filesystem=filesystem, engine=CudfEngine,
                kwargs=kwargs, _series=isinstance(columns, str),
            ),
        )
    )


read_parquet = read_parquet_expr
to_parquet = _deprecated_api("dask_cudf.io.parquet.to_parquet", new_api="dask_cudf._legacy.io.parquet.to_parquet",
                             rec="Please use the DataFrame.to_parquet method instead.")
