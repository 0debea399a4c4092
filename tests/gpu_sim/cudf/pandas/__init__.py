"""Simulated ``cudf.pandas`` (rapidsai/cudf ``python/cudf/cudf/pandas``): the entry points exist
(``install()``, ``%load_ext cudf.pandas``, ``python -m cudf.pandas script.py``) and pandas code runs
unchanged, on pandas itself: the accelerator's proxy types and GPU fallback are not simulated."""

from __future__ import annotations

from typing import Any

LOADED = False


def install() -> None:
    """Enable pandas accelerator mode (here: record it; pandas stays pandas)."""
    global LOADED
    LOADED = True


def load_ipython_extension(ip: Any) -> None:
    """``%load_ext cudf.pandas``."""
    install()


__all__ = ["LOADED", "install", "load_ipython_extension"]
