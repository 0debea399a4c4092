"""Simulated ``cudf.errors`` (rapidsai/cudf ``python/cudf/cudf/errors.py``)."""

from __future__ import annotations


class UnsupportedCUDAError(Exception):
    pass


class MixedTypeError(TypeError):
    """Raised where cudf cannot hold a column of Python objects (``as_column`` in
    ``python/cudf/cudf/core/column/column.py``)."""
