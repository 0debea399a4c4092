"""Simulated ``cudf.api``."""

from cudf.api import types

__all__ = ["types"]
