"""Simulated ``CudfEngine`` (rapidsai/cudf ``python/dask_cudf/dask_cudf/_legacy/io/parquet.py``): Dask's
Arrow Parquet engine with cudf metadata and partitions read by ``cudf.read_parquet``. Dask itself
imports it (``from dask_cudf.io.parquet import CudfEngine``) to write cudf collections with
``to_parquet`` (``_set_parquet_engine`` in dask/dataframe/dask_expr/io/parquet.py).

Writing converts each partition to pandas and lets the Arrow engine write it (the real engine writes
with cudf's writer; the files are equivalent). Hive-partitioned datasets are not simulated."""

from __future__ import annotations

import itertools
from typing import Any

import cudf
import pandas as pd
from cudf.io.parquet import _apply_post_filters, _normalize_filters
from dask.dataframe.io.parquet.arrow import ArrowDatasetEngine


def _string_dtypes_as_cudf(frame: Any) -> Any:
    """cudf reads Parquet strings as ``str`` (pandas 3's default string dtype); Dask's pandas meta may
    carry ``string[pyarrow]`` with ``pd.NA``: use the dtype the partitions will have."""
    strings = {name: "str" for name, dtype in frame.dtypes.items() if isinstance(dtype, pd.StringDtype)}
    return frame.astype(strings) if strings else frame


class CudfEngine(ArrowDatasetEngine):
    @classmethod
    def _create_dd_meta(cls, dataset_info: dict[str, Any], **kwargs: Any) -> Any:
        meta_pd = super()._create_dd_meta(dataset_info, **kwargs)
        for k, v in meta_pd.dtypes.items():
            if isinstance(v, pd.DatetimeTZDtype) and v.tz is not None:
                meta_pd[k] = meta_pd[k].dt.tz_localize(None)
        return cudf.from_pandas(_string_dtypes_as_cudf(meta_pd))

    @classmethod
    def multi_support(cls) -> bool:
        return cls == CudfEngine

    @classmethod
    def _read_paths(cls, paths: list[Any], fs: Any, columns: Any = None, row_groups: Any = None, filters: Any = None,
                    partitions: Any = None, partitioning: Any = None, partition_keys: Any = None,
                    open_file_options: Any = None, dataset_kwargs: Any = None, **kwargs: Any) -> Any:
        if row_groups == [None for _ in paths]:
            row_groups = None
        filters = _normalize_filters(filters)
        projected_columns = None
        if columns and filters:
            projected_columns = [c for c in columns if c is not None]
            columns = sorted(set(v[0] for v in itertools.chain.from_iterable(filters)) | set(projected_columns))
        if partitions:
            raise NotImplementedError("hive-partitioned Parquet is not part of the simulated dask_cudf")
        df = cudf.read_parquet(paths, engine="cudf", columns=columns, row_groups=row_groups if row_groups else None,
                               dataset_kwargs=dataset_kwargs or {}, categorical_partitions=False, filesystem=fs,
                               **kwargs)
        df = _apply_post_filters(df, filters)
        if projected_columns:
            projected_columns = [col for col in projected_columns if col in df.columns]
            df = df[projected_columns]
        return df

    @classmethod
    def read_partition(cls, fs: Any, pieces: Any, columns: Any, index: Any, categories: Any = (),
                       partitions: Any = (), filters: Any = None, partitioning: Any = None, schema: Any = None,
                       open_file_options: Any = None, **kwargs: Any) -> Any:
        if columns is not None:
            columns = list(columns)
        if isinstance(index, list):
            columns += index
        dataset_kwargs = kwargs.get("dataset", {})
        read_columns = columns
        if schema and columns and not set(schema.names) - set(columns):
            read_columns = None
        if not isinstance(pieces, list):
            pieces = [pieces]
        read_kwargs = dict(kwargs.get("read", {}))
        read_kwargs.update(open_file_options or {})
        read_kwargs.pop("check_file_size", None)
        read_kwargs.pop("open_file_options", None)
        paths, rgs = [], []
        for piece in pieces:
            path, row_group, _partition_keys = piece if isinstance(piece, tuple) else (piece, None, None)
            row_group = None if row_group == [None] else row_group
            paths.append(path)
            rgs.append([row_group] if not isinstance(row_group, list) and row_group is not None else row_group)
        df = cls._read_paths(paths, fs, columns=read_columns, row_groups=rgs if rgs else None, filters=filters,
                             partitions=partitions, partitioning=partitioning, dataset_kwargs=dataset_kwargs,
                             **read_kwargs)
        if index and (index[0] in df.columns):
            df = df.set_index(index[0])
        elif index is False and df.index.names != [None]:
            df = df.reset_index()
        return df

    @classmethod
    def write_partition(cls, df: Any, *args: Any, **kwargs: Any) -> Any:
        host = df.to_pandas() if hasattr(df, "to_pandas") else df
        return super().write_partition(host, *args, **kwargs)
