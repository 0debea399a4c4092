"""Port of rapidsai/dask-cuda ``dask_cuda/worker_common.py`` (26.10): what ``LocalCUDACluster`` and ``dask cuda
worker`` give each worker: its ``data`` (a ``DeviceHostFile`` holding ``device_memory_limit``) and its plugins."""

from __future__ import annotations

import os

from .device_host_file import DeviceHostFile
from .plugins import CPUAffinity, CUDFSetup, PreImport, RMMSetup
from .utils import get_cpu_affinity, has_device_memory_resource, parse_device_memory_limit


def worker_data_function(device_memory_limit=None, memory_limit=None, enable_cudf_spill=False):
    """A callable ``data(device_index)`` giving the worker's ``data`` setting for that device."""

    def data(device_index):
        if int(os.environ.get("DASK_CUDA_TEST_DISABLE_DEVICE_SPECIFIC", "0")) != 0:
            return {}

        # First raise errors for invalid configurations
        if not has_device_memory_resource(device_index):
            if enable_cudf_spill:
                raise ValueError(
                    "cuDF spilling is not supported on devices without dedicated "
                    "memory, such as system on a chip (SoC) devices."
                )
            elif device_memory_limit not in [None, "default"]:
                raise ValueError("device_memory_limit is set but device has no dedicated memory.")

        if device_memory_limit is None and memory_limit is None:
            return {}  # All spilling is disabled
        elif not has_device_memory_resource(device_index):
            if device_memory_limit == "default" and memory_limit is None:
                return {}
            return None
        else:
            # Device has dedicated memory and host memory is limited
            return (
                DeviceHostFile,
                {
                    "device_memory_limit": parse_device_memory_limit(device_memory_limit, device_index=device_index),
                    "memory_limit": memory_limit,
                },
            )

    return data


def worker_plugins(
    *,
    device_index,
    rmm_initial_pool_size,
    rmm_maximum_pool_size,
    rmm_managed_memory,
    rmm_async_alloc,
    rmm_release_threshold,
    rmm_log_directory,
    rmm_track_allocations,
    rmm_allocator_external_lib_list,
    pre_import,
    enable_cudf_spill,
    cudf_spill_stats,
):
    """The set of plugins of a CUDA worker: CPUAffinity, RMMSetup, PreImport and CUDFSetup."""
    if int(os.environ.get("DASK_CUDA_TEST_DISABLE_DEVICE_SPECIFIC", "0")) != 0:
        return {
            PreImport(pre_import),
            CUDFSetup(spill=enable_cudf_spill, spill_stats=cudf_spill_stats),
        }
    return {
        CPUAffinity(get_cpu_affinity(device_index)),
        RMMSetup(
            initial_pool_size=rmm_initial_pool_size,
            maximum_pool_size=rmm_maximum_pool_size,
            managed_memory=rmm_managed_memory,
            async_alloc=rmm_async_alloc,
            release_threshold=rmm_release_threshold,
            log_directory=rmm_log_directory,
            track_allocations=rmm_track_allocations,
            external_lib_list=rmm_allocator_external_lib_list,
        ),
        PreImport(pre_import),
        CUDFSetup(spill=enable_cudf_spill, spill_stats=cudf_spill_stats),
    }
