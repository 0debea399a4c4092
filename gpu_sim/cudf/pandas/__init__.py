"""Simulated ``cudf.pandas`` (cudf 26.10.2 ``cudf/pandas/__init__.py``): the entry points exist with the released
names and command line (``install()``, ``%load_ext cudf.pandas`` with its profiling cell magics,
``python -m cudf.pandas [--profile | --line-profile] script.py | -m module | -c command``), ``LOADED`` turns true
on install, and the profiler prints the released tables.

What is not simulated is the accelerator itself: after ``install()``, ``import pandas`` still gives pandas (no
proxy module, no proxy types: ``is_proxy_object`` is always false) and every pandas call runs on the CPU, which is
how the profiler reports each call, labelled "simulated".
"""

from __future__ import annotations

from typing import Any

from cudf.pandas.magics import load_ipython_extension
from cudf.pandas.profiler import Profiler

__all__ = ["Profiler", "as_proxy_object", "install", "is_proxy_instance", "is_proxy_object", "load_ipython_extension"]

LOADED = False


def install() -> None:
    """Enable Pandas Accelerator Mode (here: record it; ``import pandas`` stays pandas)."""
    global LOADED
    LOADED = True


def is_proxy_object(obj: Any) -> bool:
    """Whether ``obj`` is a cudf.pandas proxy: never, without the accelerator."""
    return False


def is_proxy_instance(obj: Any, type: Any) -> bool:  # noqa: A002 (the released parameter name)
    return False


def as_proxy_object(obj: Any) -> Any:
    """The proxy of a cudf or pandas object; without the accelerator, the object itself."""
    return obj
