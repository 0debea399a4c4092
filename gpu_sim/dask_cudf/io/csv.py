"""Simulated ``dask_cudf.io.csv`` (rapidsai/cudf ``python/dask_cudf/dask_cudf/io/csv.py``, 26.10): what
``dd.read_csv`` does under ``dataframe.backend="cudf"``.

- ``blocksize="default"`` is 256 MiB (``None`` when ``skipfooter``/``skiprows``/``nrows`` is given);
- each file is cut into ``byte_range=(start, blocksize)`` blocks, a block never spans two files, and
  every block is read by ``cudf.read_csv`` (later blocks with the first block's column ``names`` and
  ``header=None``);
- the metadata is read by Dask's own ``read_pandas`` with ``cudf.read_csv`` as the reader, so a keyword
  ``cudf.read_csv`` lacks fails at once when it reaches the reader (``engine=``, ``converters=``) and at
  compute time when Dask's sampler consumes it first (``assume_missing=``, ``sample=``).
"""

from __future__ import annotations

import os
from glob import glob
from typing import Any
from warnings import warn

import cudf
from dask import dataframe as dd
from dask.dataframe.io.csv import make_reader
from dask.utils import parse_bytes
from fsspec.utils import infer_compression


def read_csv(path: Any, blocksize: Any = "default", **kwargs: Any) -> Any:
    """Read CSV files into a dask_cudf DataFrame (blocks of ``blocksize`` bytes, default 256 MiB)."""
    if blocksize == "default":
        if kwargs.get("skipfooter", 0) != 0 or kwargs.get("skiprows", 0) != 0 or kwargs.get("nrows") is not None:
            blocksize = None
        else:
            blocksize = "256 MiB"
    if "://" in str(path):
        func = make_reader(cudf.read_csv, "read_csv", "CSV")
        return func(path, blocksize=blocksize, **kwargs)
    return _internal_read_csv(path=path, blocksize=blocksize, **kwargs)


def _filenames(path: Any) -> list[Any]:
    if isinstance(path, list):
        return path
    if isinstance(path, str):
        return sorted(glob(path))
    if hasattr(path, "__fspath__"):
        return sorted(glob(path.__fspath__()))
    raise TypeError(f"Path type not understood:{type(path)}")


def _internal_read_csv(path: Any, blocksize: Any = "256 MiB", **kwargs: Any) -> Any:
    if isinstance(blocksize, str):
        blocksize = parse_bytes(blocksize)
    filenames = _filenames(path)
    if not filenames:
        raise FileNotFoundError(f"A file in: {filenames} does not exist.")
    compression = kwargs.get("compression", "infer")
    if compression == "infer":
        compression = infer_compression(str(filenames[0]))
    if compression and blocksize:
        kwargs.pop("byte_range", None)
        warn(
            f"Warning {compression} compression does not support breaking apart files\n"
            "Please ensure that each individual file can fit in memory and\n"
            "use the keyword ``blocksize=None to remove this message``\n"
            "Setting ``blocksize=(size of file)``",
            stacklevel=2,
        )
        blocksize = None
    if blocksize is None:
        return read_csv_without_blocksize(path, **kwargs)

    # Let dask.dataframe generate meta
    dask_reader = make_reader(cudf.read_csv, "read_csv", "CSV")
    kwargs1 = kwargs.copy()
    usecols = kwargs1.pop("usecols", None)
    dtype = kwargs1.pop("dtype", None)
    meta = dask_reader(filenames[0], **kwargs1)._meta
    names = meta.columns
    if usecols or dtype:
        meta = dask_reader(filenames[0], **kwargs)._meta

    path_list = []
    kwargs_list = []
    for fn in filenames:
        size = os.path.getsize(fn)
        for start in range(0, size, blocksize):
            kwargs2 = kwargs.copy()
            kwargs2["byte_range"] = (start, blocksize)
            if start != 0:
                kwargs2["names"] = names
                kwargs2["header"] = None
            path_list.append(fn)
            kwargs_list.append(kwargs2)
    return dd.from_map(_read_csv, path_list, kwargs_list, meta=meta)


def _read_csv(fn: Any, kwargs: dict[str, Any]) -> Any:
    return cudf.read_csv(fn, **kwargs)


def read_csv_without_blocksize(path: Any, **kwargs: Any) -> Any:
    """One partition per file (``blocksize=None``)."""
    filenames = _filenames(path)
    meta_kwargs = kwargs.copy()
    meta_kwargs.pop("skipfooter", None)
    meta_kwargs.pop("nrows", None)
    meta = cudf.read_csv(filenames[0], nrows=5, **meta_kwargs).iloc[:0]
    return dd.from_map(cudf.read_csv, filenames, meta=meta, **kwargs)
