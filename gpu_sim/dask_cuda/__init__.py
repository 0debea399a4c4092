"""Simulated dask-cuda 26.10 (test infrastructure: see ``gpu_sim/README.md``). A port of rapidsai/dask-cuda
``dask_cuda/__init__.py`` (26.10): ``LocalCUDACluster``, ``CUDAWorker``, ``__version__`` and the cudf
serialization hook that respects cudf's own spilling. No GPU is touched; NVML, rmm and cudf are the simulated
ones next to this package."""

import sys

if sys.platform != "linux":
    raise ImportError("Only Linux is supported by Dask-CUDA at this time")

from distributed.protocol.cuda import cuda_deserialize, cuda_serialize
from distributed.protocol.serialize import dask_deserialize, dask_serialize

from ._version import __git_commit__, __version__
from .cuda_worker import CUDAWorker
from .local_cuda_cluster import LocalCUDACluster

__all__ = ["CUDAWorker", "LocalCUDACluster", "__git_commit__", "__version__"]


def _register_cudf_spill_aware():
    """Lazy hook for Distributed; no-op if cuDF is not installed."""
    try:
        import cudf
    except ImportError:
        return

    # Only enable Dask/cuDF spilling if cuDF spilling is disabled, see
    # https://github.com/rapidsai/dask-cuda/issues/1363
    if not cudf.get_option("spill"):
        # This reproduces the implementation of distributed's `_register_cudf`
        # (distributed/protocol/__init__.py).
        from cudf.comm import serialize  # noqa: F401


for registry in [cuda_serialize, cuda_deserialize, dask_serialize, dask_deserialize]:
    for lib in ["cudf", "dask_cudf"]:
        if lib in registry._lazy:
            registry._lazy[lib] = _register_cudf_spill_aware
