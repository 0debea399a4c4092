"""Test-wide settings: the tiny data scale, quiet Dask, and GPU tests skipped where no GPU is."""

from __future__ import annotations

import os

import pytest

# Notebooks run by nbval inherit this environment: the tiny scale keeps each under a minute.
os.environ.setdefault("COURSE_SCALE", "tiny")
os.environ.setdefault("DASK_DISTRIBUTED__LOGGING__DISTRIBUTED", "error")
os.environ.setdefault("PYDEVD_DISABLE_FILE_VALIDATION", "1")  # a debugger warning in kernels


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Skip tests marked ``gpu`` with a stated reason on machines without an NVIDIA GPU."""
    if not any(item.get_closest_marker("gpu") for item in items):
        return
    from utils.machine import gpu_count

    if gpu_count() > 0:
        return
    skip = pytest.mark.skip(reason="needs an NVIDIA GPU: NVML reports none on this machine")
    for item in items:
        if item.get_closest_marker("gpu"):
            item.add_marker(skip)
