"""Simulated ``cudf.read_csv``: the signature of rapidsai/cudf ``python/cudf/cudf/io/csv.py`` (26.10),
so a pandas-only keyword (``engine=``, ``assume_missing=``, ``converters=``, ``sample=``,
``dtype_backend=``, ...) is a ``TypeError`` exactly as on a GPU, and libcudf's row selection for
``byte_range`` (``cpp/src/io/csv/reader_impl.cu``), which dask_cudf's blocked reads rely on. The
parsing itself is pandas'; dtypes are then made what cudf gives (datetimes in nanoseconds, strings
as ``str``)."""

from __future__ import annotations

import io
import os
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from cudf.api.types import is_scalar
from cudf.core.dataframe import DataFrame
from cudf.core.dtypes import dtype as cudf_dtype

_HEX_TYPES = {"hex": "int64", "hex64": "int64", "hex32": "int32"}
_COMPRESSION_SUFFIXES = {".gz": "gzip", ".bz2": "bz2", ".zip": "zip", ".xz": "xz", ".zst": "zstd"}


def read_csv(
    filepath_or_buffer: Any,
    sep: str = ",",
    delimiter: str | None = None,
    header: Any = "infer",
    names: Any = None,
    index_col: Any = None,
    usecols: Any = None,
    prefix: str | None = None,
    mangle_dupe_cols: bool = True,
    dtype: Any = None,
    true_values: Any = None,
    false_values: Any = None,
    skipinitialspace: bool = False,
    skiprows: int = 0,
    skipfooter: int = 0,
    nrows: int | None = None,
    na_values: Any = None,
    keep_default_na: bool = True,
    na_filter: bool = True,
    skip_blank_lines: bool = True,
    parse_dates: Any = None,
    dayfirst: bool = False,
    compression: Any = "infer",
    thousands: str | None = None,
    decimal: str = ".",
    lineterminator: str = "\n",
    quotechar: str = '"',
    quoting: int = 0,
    doublequote: bool = True,
    comment: str | None = None,
    byte_range: list[int] | tuple[int, int] | None = None,
    storage_options: Any = None,
    bytes_per_thread: int | None = None,
) -> DataFrame:
    """Read one CSV source into a (simulated) cudf DataFrame; only cudf's keywords are accepted."""
    if isinstance(filepath_or_buffer, (list, tuple)):
        if len(filepath_or_buffer) > 1:
            raise ValueError(f"read_csv does not support multiple sources, got: {list(filepath_or_buffer)}")
        filepath_or_buffer = filepath_or_buffer[0]
    if na_values is not None and is_scalar(na_values):
        na_values = [na_values]
    _validate_args(delimiter, sep, decimal, thousands, nrows, skipfooter, byte_range, skiprows)
    delimiter = str(sep if delimiter is None else delimiter)

    if compression == "infer":
        compression = _infer_compression(filepath_or_buffer)
    offset, size = (0, 0) if byte_range is None else (int(byte_range[0]), int(byte_range[1]))
    if (offset or size) and compression:
        # libcudf reader_impl.cu: CUDF_EXPECTS(... == compression_type::NONE)
        raise RuntimeError("Reading compressed data using `byte range` is unsupported")

    orig_header = header
    if names is not None:
        header = -1 if header is None or header == "infer" else header
        names = list(names)
    elif header is None:
        header = -1
    elif header == "infer":
        header = 0
    if offset and header >= 0:
        # libcudf reader_impl.cu: CUDF_EXPECTS(range_offset == 0 || header < 0)
        raise RuntimeError("byte_range offset with header not supported")

    pandas_dtype, hex_columns = _dtypes(dtype)
    data = _read_source(filepath_or_buffer, storage_options, compression)
    if offset or size:
        data = _byte_range(data, offset, size, lineterminator)

    kwargs: dict[str, Any] = {
        "sep": delimiter, "header": None if header < 0 else header, "names": names, "usecols": usecols,
        "dtype": pandas_dtype, "true_values": true_values, "false_values": false_values,
        "skipinitialspace": skipinitialspace, "skiprows": skiprows or None, "nrows": nrows,
        "na_values": na_values, "keep_default_na": keep_default_na, "na_filter": na_filter,
        "skip_blank_lines": skip_blank_lines, "parse_dates": parse_dates, "dayfirst": dayfirst,
        "thousands": thousands, "decimal": decimal, "quotechar": quotechar, "quoting": quoting,
        "doublequote": doublequote, "comment": comment,
    }
    if lineterminator != "\n":
        kwargs["lineterminator"] = lineterminator
    if skipfooter:
        kwargs.update(skipfooter=skipfooter, engine="python")
    if not data.strip():
        df = _empty_frame(names, usecols, pandas_dtype)
    else:
        df = pd.read_csv(io.BytesIO(data), **kwargs)
    if header < 0 and names is None:
        df.columns = [f"{prefix}{i}" if prefix is not None else i for i in range(len(df.columns))]
    for column in hex_columns:
        if column in df.columns:
            df[column] = df[column].map(lambda text: int(str(text), 16)).astype(_HEX_TYPES["hex"])

    df = _cudf_dtypes(df, dtype)
    if index_col is not None and index_col is not False:
        if isinstance(index_col, int):
            name = df.columns[index_col]
            df = df.set_index(name)
            if isinstance(name, str) and names is None and orig_header == "infer" and name.startswith("Unnamed:"):
                df.index.name = None
        else:
            df = df.set_index(index_col)
    return DataFrame(df)


def _validate_args(delimiter: str | None, sep: str, decimal: str, thousands: str | None, nrows: int | None,
                   skipfooter: int, byte_range: Any, skiprows: int) -> None:
    """rapidsai/cudf ``io/csv.py`` ``_validate_args`` (same checks and messages)."""
    actual_delimiter = delimiter if delimiter else sep
    if decimal == actual_delimiter:
        raise ValueError("decimal cannot be the same as delimiter")
    if thousands == actual_delimiter:
        raise ValueError("thousands cannot be the same as delimiter")
    if nrows is not None and skipfooter != 0:
        raise ValueError("cannot use both nrows and skipfooter parameters")
    if byte_range is not None and (skipfooter != 0 or skiprows != 0 or nrows is not None):
        raise ValueError("cannot manually limit rows to be read when using the byte range parameter")


def _dtypes(dtype: Any) -> tuple[Any, list[Any]]:
    """Validate ``dtype`` through cudf's ``dtype()`` (``TypeError`` for unsupported types) and
    return what pandas should parse with, plus the hex-encoded columns."""
    if dtype is None:
        return None, []
    if isinstance(dtype, Mapping):
        parsed: dict[Any, Any] = {}
        hex_columns = []
        for key, value in dtype.items():
            if isinstance(value, str) and value in _HEX_TYPES:
                hex_columns.append(key)
                parsed[key] = "str"
                continue
            parsed[key] = _parse_dtype(cudf_dtype(value))
        return parsed, hex_columns
    if isinstance(dtype, (str, np.dtype, pd.api.extensions.ExtensionDtype, type)):
        return _parse_dtype(cudf_dtype(dtype)), []
    if isinstance(dtype, (list, tuple)):
        return [_parse_dtype(cudf_dtype(value)) for value in dtype], []
    raise ValueError("dtype should be a scalar/str/list-like/dict-like")


def _parse_dtype(value: Any) -> Any:
    # pandas cannot parse straight into datetime64: read the text, convert after (as libcudf does).
    if isinstance(value, np.dtype) and value.kind in "mM":
        return "str"
    return value


def _cudf_dtypes(df: pd.DataFrame, dtype: Any) -> pd.DataFrame:
    """Make the column dtypes cudf's: requested datetime/timedelta dtypes applied, parsed or inferred
    datetimes in nanoseconds (libcudf's TIMESTAMP_NANOSECONDS), object text as ``str``."""
    requested = dtype if isinstance(dtype, Mapping) else {}
    for column in df.columns:
        wanted = requested.get(column, requested.get(str(column)))
        if wanted is not None and not (isinstance(wanted, str) and wanted in _HEX_TYPES):
            target = cudf_dtype(wanted)
            if isinstance(target, np.dtype) and target.kind in "mM" and df[column].dtype != target:
                values = df[column] if target.kind == "m" else pd.to_datetime(df[column])
                df[column] = values.astype(target)
            continue
        current = df[column].dtype
        if isinstance(current, np.dtype) and current.kind == "M" and current != np.dtype("datetime64[ns]"):
            df[column] = df[column].astype("datetime64[ns]")
        elif pd.api.types.is_object_dtype(current):
            df[column] = df[column].astype("str")
    return df


def _empty_frame(names: Any, usecols: Any, dtype: Any) -> pd.DataFrame:
    columns = list(usecols) if usecols is not None and names is None else list(names or [])
    if usecols is not None and names is not None:
        columns = [name for name in names if name in set(usecols)]
    frame = pd.DataFrame({name: pd.Series([], dtype="str") for name in columns})
    if isinstance(dtype, Mapping):
        frame = frame.astype({key: value for key, value in dtype.items() if key in frame.columns})
    return frame


def _infer_compression(source: Any) -> str | None:
    if isinstance(source, (str, os.PathLike)):
        return _COMPRESSION_SUFFIXES.get(os.path.splitext(os.fspath(source))[1].lower())
    return None


def _read_source(source: Any, storage_options: Any, compression: str | None) -> bytes:
    """All bytes of ``source`` (decompressed), as libcudf's datasource would deliver them."""
    if isinstance(source, (bytes, bytearray)):
        raw = bytes(source)
    elif isinstance(source, io.StringIO):
        raw = source.getvalue().encode()
    elif hasattr(source, "read"):
        raw = source.read()
        raw = raw.encode() if isinstance(raw, str) else raw
    else:
        import fsspec

        with fsspec.open(os.fspath(source), mode="rb", **(storage_options or {})) as handle:
            raw = handle.read()
    if compression:
        import fsspec.compression

        opener = fsspec.compression.compr[compression]
        with opener(io.BytesIO(raw)) as handle:  # type: ignore[operator]
            raw = handle.read()
    return raw


def _byte_range(data: bytes, offset: int, size: int, lineterminator: str) -> bytes:
    """The rows libcudf reads for ``byte_range=(offset, size)`` (``cpp/src/io/csv/reader_impl.cu``):
    with ``offset > 0`` the data starts after the first terminator at or after ``offset``; a row
    belongs to the range when the terminator before it lies in ``[offset, offset + size)``, so the
    last row may run past the range's end. Consecutive ranges therefore split a file into disjoint
    rows. ``size == 0`` means to the end of the data."""
    if offset > len(data):
        raise ValueError("Invalid byte range offset")
    terminator = lineterminator.encode()
    start = 0
    if offset > 0:
        found = data.find(terminator, offset)
        if found < 0:
            return b""
        start = found + len(terminator)
    if size == 0 or offset + size >= len(data):
        return data[start:]
    found = data.find(terminator, offset + size)
    end = len(data) if found < 0 else found + len(terminator)
    return data[start:end] if end > start else b""
