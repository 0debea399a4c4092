"""Port of rapidsai/dask-cuda ``dask_cuda/plugins.py`` (26.10): the worker plugins every dask-cuda worker carries,
with the real class names, module, constructor arguments, attributes and ``setup`` code.

``setup`` runs the real code paths against the simulation: ``CPUAffinity`` pins the worker to the CPUs NVML
names (the simulated NVML names the CPUs the process may already use, so nothing changes), ``RMMSetup``
configures the simulated ``rmm`` (resources that record their sizes, no allocation), ``CUDFSetup`` calls
``cudf.set_option`` on whichever cudf is importable (the simulated one under ``gpu_sim``), ``PreImport``
imports the named modules.
"""

from __future__ import annotations

import importlib
import logging
import os
from collections.abc import Callable

from distributed import WorkerPlugin

from .utils import get_rmm_log_file_name, parse_device_bytes


class CPUAffinity(WorkerPlugin):
    def __init__(self, cores):
        self.cores = cores

    def setup(self, worker=None):
        try:
            os.sched_setaffinity(0, self.cores)
        except Exception:
            logger = logging.getLogger("distributed.worker")
            logger.warning(
                "Setting CPU affinity for GPU failed. Please refer to the following "
                "link for troubleshooting information: "
                "https://docs.rapids.ai/api/dask-cuda/nightly/troubleshooting/#setting-cpu-affinity-failure"
            )


class CUDFSetup(WorkerPlugin):
    def __init__(self, spill, spill_stats):
        self.spill = spill
        self.spill_stats = spill_stats

    def setup(self, worker=None):
        try:
            import cudf

            cudf.set_option("spill", self.spill)
            cudf.set_option("spill_stats", self.spill_stats)
        except ImportError:
            pass


class RMMSetup(WorkerPlugin):
    def __init__(
        self,
        initial_pool_size,
        maximum_pool_size,
        managed_memory,
        async_alloc,
        release_threshold,
        log_directory,
        track_allocations,
        external_lib_list,
    ):
        if async_alloc is True and managed_memory is True:
            raise ValueError("`rmm_managed_memory` is incompatible with the `rmm_async`.")
        if async_alloc is False and release_threshold is not None:
            raise ValueError("`rmm_release_threshold` requires `rmm_async`.")

        self.initial_pool_size = initial_pool_size
        self.maximum_pool_size = maximum_pool_size
        self.managed_memory = managed_memory
        self.async_alloc = async_alloc
        self.release_threshold = release_threshold
        self.logging = log_directory is not None
        self.log_directory = log_directory
        self.rmm_track_allocations = track_allocations
        self.external_lib_list = external_lib_list

    def setup(self, worker=None):
        self.initial_pool_size = parse_device_bytes(self.initial_pool_size, alignment_size=256)

        if self.async_alloc:
            import rmm

            self.release_threshold = parse_device_bytes(self.release_threshold, alignment_size=256)
            mr = rmm.mr.CudaAsyncMemoryResource(
                initial_pool_size=self.initial_pool_size,
                release_threshold=self.release_threshold,
            )
            self.maximum_pool_size = parse_device_bytes(self.maximum_pool_size, alignment_size=256)
            if self.maximum_pool_size is not None:
                mr = rmm.mr.LimitingResourceAdaptor(mr, allocation_limit=self.maximum_pool_size)
            rmm.mr.set_current_device_resource(mr)
            if self.logging:
                rmm.enable_logging(log_file_name=get_rmm_log_file_name(worker, self.logging, self.log_directory))
        elif self.initial_pool_size is not None or self.managed_memory:
            import rmm

            pool_allocator = self.initial_pool_size is not None
            if self.initial_pool_size is not None:
                self.maximum_pool_size = parse_device_bytes(self.maximum_pool_size, alignment_size=256)
            rmm.reinitialize(
                pool_allocator=pool_allocator,
                managed_memory=self.managed_memory,
                initial_pool_size=self.initial_pool_size,
                maximum_pool_size=self.maximum_pool_size,
                logging=self.logging,
                log_file_name=get_rmm_log_file_name(worker, self.logging, self.log_directory),
            )

        if self.rmm_track_allocations:
            import rmm

            mr = rmm.mr.get_current_device_resource()
            rmm.mr.set_current_device_resource(rmm.mr.TrackingResourceAdaptor(mr))

        if self.external_lib_list is not None:
            for lib in self.external_lib_list:
                enable_rmm_memory_for_library(lib)


def enable_rmm_memory_for_library(lib_name: str) -> None:
    """Make ``lib_name`` ("cupy" or "torch") allocate through RMM."""
    setup_functions: dict[str, Callable[[], None]] = {"torch": _setup_rmm_for_torch, "cupy": _setup_rmm_for_cupy}
    if lib_name not in setup_functions:
        supported_libs = ", ".join(setup_functions.keys())
        raise ValueError(
            f"The library '{lib_name}' is not supported for RMM integration. "
            f"Supported libraries are: {supported_libs}."
        )
    setup_functions[lib_name]()


def _setup_rmm_for_torch() -> None:
    try:
        import torch
    except ImportError as e:
        raise ImportError("PyTorch is not installed.") from e
    from rmm.allocators.torch import rmm_torch_allocator  # not simulated: fails here, after torch

    torch.cuda.memory.change_current_allocator(rmm_torch_allocator)


def _setup_rmm_for_cupy() -> None:
    try:
        import cupy
    except ImportError as e:
        raise ImportError("CuPy is not installed.") from e
    from rmm.allocators.cupy import rmm_cupy_allocator  # not simulated: fails here, after cupy

    cupy.cuda.set_allocator(rmm_cupy_allocator)


class PreImport(WorkerPlugin):
    def __init__(self, libraries):
        if libraries is None:
            libraries = []
        elif isinstance(libraries, str):
            libraries = libraries.split(",")
        self.libraries = libraries

    def setup(self, worker=None):
        for lib in self.libraries:
            importlib.import_module(lib)
