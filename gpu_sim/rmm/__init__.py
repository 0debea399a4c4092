"""Simulated RMM (RAPIDS Memory Manager): importable, with the memory-resource objects and set-up functions that
dask-cuda's ``RMMSetup`` plugin and distributed's RMM diagnostics call, and no allocator.

Why it exists: on a real GPU install rmm always comes with cudf (``cudf-cu12`` depends on ``rmm-cu12``), so
``LocalCUDACluster(rmm_pool_size=...)`` / ``rmm_async=True`` work there; without an importable ``rmm``
dask-cuda would raise its "module 'rmm' is not available" error instead. Here the resources only *record*
their settings (pool size, limits) so tests can read on a worker what dask-cuda configured. Nothing is
allocated; ``allocate`` is absent on purpose.

Copied from rapidsai/rmm ``python/rmm/rmm/rmm.py`` (``reinitialize``, hooks, ``RMMError``) and
``python/rmm/rmm/pylibrmm/memory_resource/_memory_resource.pyx`` (``_initialize``, the per-device resource
table, ``enable_logging``), snapshot of 2026-07 (26.08 development; 26.10's Python API is the same for these).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rmm import mr
from rmm.mr import disable_logging, enable_logging, get_log_filenames

__version__ = "26.10.0+sim"
__git_commit__ = ""

__all__ = [
    "RMMError",
    "disable_logging",
    "enable_logging",
    "get_log_filenames",
    "is_initialized",
    "mr",
    "register_reinitialize_hook",
    "reinitialize",
    "unregister_reinitialize_hook",
]


class RMMError(Exception):
    def __init__(self, errcode: int, msg: str) -> None:
        self.errcode = errcode
        super().__init__(msg)


_reinitialize_hooks: list[tuple[Callable, tuple, dict]] = []


def reinitialize(
    pool_allocator: bool = False,
    managed_memory: bool = False,
    initial_pool_size: int | str | None = None,
    maximum_pool_size: int | str | None = None,
    devices: int | list[int] = 0,
    logging: bool = False,
    log_file_name: str | None = None,
) -> None:
    """rmm.py ``reinitialize``: run the hooks (last registered first), then replace each device's resource."""
    for func, args, kwargs in reversed(_reinitialize_hooks):
        func(*args, **kwargs)
    mr._initialize(
        pool_allocator=pool_allocator,
        managed_memory=managed_memory,
        initial_pool_size=initial_pool_size,
        maximum_pool_size=maximum_pool_size,
        devices=devices,
        logging=logging,
        log_file_name=log_file_name,
    )


def is_initialized() -> bool:
    return mr.is_initialized()


def register_reinitialize_hook(func: Callable[..., Any], *args: Any, **kwargs: Any) -> Callable[..., Any]:
    _reinitialize_hooks.append((func, args, kwargs))
    return func


def unregister_reinitialize_hook(func: Callable[..., Any]) -> None:
    global _reinitialize_hooks
    _reinitialize_hooks = [hook for hook in _reinitialize_hooks if hook[0] != func]
