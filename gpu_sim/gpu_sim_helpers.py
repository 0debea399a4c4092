"""Helpers that tests run on workers whose path has the simulation (``client.run`` sends them by reference, so the
workers import this module from their own ``PYTHONPATH``)."""

from __future__ import annotations

from typing import Any


def become_dask_cuda_worker(dask_worker: Any) -> str:
    """Give a plain ``dask worker`` the plugin every dask-cuda worker carries (``dask_cuda.plugins.CUDFSetup``, as
    ``LocalCUDACluster`` and ``dask cuda worker`` add it), so it looks like a dask-cuda worker to the course."""
    from dask_cuda.plugins import CUDFSetup

    dask_worker.plugins["CUDFSetup-gpu-sim"] = CUDFSetup(spill=False, spill_stats=0)
    return dask_worker.address
