"""Run on a worker whose path has these stand-ins: give it the plugin a dask-cuda worker carries."""

from __future__ import annotations


def become_dask_cuda_worker(dask_worker) -> str:
    from dask_cuda.plugins import CUDFSetup

    dask_worker.plugins["CUDFSetup-standin"] = CUDFSetup()
    return dask_worker.address
