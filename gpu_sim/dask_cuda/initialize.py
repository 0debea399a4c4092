"""Port of rapidsai/dask-cuda ``dask_cuda/initialize.py`` (26.10): ``initialize()`` (the UCX configuration for the
client and the cluster's parent process) and the worker preload ``dask_cuda.initialize`` with its click option
``--create-cuda-context``, which ``LocalCUDACluster`` and ``dask cuda worker`` pass to every worker.

Simulated: creating the CUDA context is a no-op. The real preload calls ``cuda.core.Device().set_current()`` on
the worker's first visible device and warns about a context on the wrong device; there is no device and no
``cuda.core`` here, so nothing is created and ``distributed.diagnostics.nvml.has_cuda_context()`` keeps
answering "no context" on a simulated worker (a real worker would answer yes after this preload).
"""

from __future__ import annotations

import logging
import os

import click
import dask

from .utils import get_ucx_config

logger = logging.getLogger(__name__)

pre_existing_cuda_context = None
cuda_context_created = None


def _get_device_str() -> str:
    """The worker's device: the first entry of ``CUDA_VISIBLE_DEVICES`` (an index or a UUID)."""
    if int(os.environ.get("DASK_CUDA_TEST_SINGLE_GPU", "0")) != 0:
        return "0"
    return os.environ.get("CUDA_VISIBLE_DEVICES", "0").split(",")[0]


def _create_cuda_context() -> None:
    """Simulated no-op: there is no device to create a CUDA context on (see the module docstring)."""


def initialize(create_cuda_context=True, enable_tcp_over_ucx=None, enable_infiniband=None, enable_nvlink=None,
               enable_rdmacm=None) -> None:
    """Set the ``distributed-ucxx`` configuration from the flags (None without distributed-ucxx, as real) and
    create the CUDA context when asked (a no-op here)."""
    ucx_config = get_ucx_config(
        enable_tcp_over_ucx=enable_tcp_over_ucx,
        enable_infiniband=enable_infiniband,
        enable_nvlink=enable_nvlink,
        enable_rdmacm=enable_rdmacm,
    )
    dask.config.set({"distributed-ucxx": ucx_config})
    if create_cuda_context:
        _create_cuda_context()


@click.command()
@click.option("--create-cuda-context/--no-create-cuda-context", default=False, help="Create CUDA context")
def dask_setup(worker, create_cuda_context):
    if create_cuda_context:
        _create_cuda_context()
