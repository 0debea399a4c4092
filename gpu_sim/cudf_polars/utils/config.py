"""Parts of ``cudf_polars/utils/config.py`` (26.10.2): the device a process computes on, ``DaskContext`` and the
checks ``ConfigOptions.from_polars_engine`` makes of a ``GPUEngine``'s configuration when a query is collected."""

from __future__ import annotations

import dataclasses
import functools
import os
from typing import Any

# ConfigOptions.from_polars_engine: the keys a GPUEngine's config may hold.
VALID_ENGINE_OPTIONS = frozenset({"executor", "executor_options", "parquet_options", "raise_on_fail",
                                  "memory_resource_config", "hardware_binding"})
# StreamingExecutor's init fields (dataclass), in order.
STREAMING_EXECUTOR_FIELDS = (
    "cluster", "fallback_mode", "max_rows_per_partition", "target_partition_size", "broadcast_limit",
    "client_device_threshold", "sink_to_directory", "dynamic_planning", "join_filter_pushdown",
    "max_concurrent_io_tasks", "num_py_executors", "kvikio_nthreads", "kvikio_statistics", "kvikio_remote_io_backend",
    "kvikio_task_size", "kvikio_bounce_buffer_bytes", "kvikio_reactor_count", "kvikio_reactor_dispatch",
    "kvikio_request_ceiling", "min_device_size", "spmd_context", "ray_context", "dask_context", "quent_context",
)


def get_device_handle() -> Any:
    """NVML handle of this process's device: the first ``CUDA_VISIBLE_DEVICES`` entry (index or UUID), else 0."""
    import pynvml

    pynvml.nvmlInit()
    index = os.environ.get("CUDA_VISIBLE_DEVICES", "0").split(",")[0]
    if index and not index.isnumeric():
        return pynvml.nvmlDeviceGetHandleByUUID(str.encode(index))
    return pynvml.nvmlDeviceGetHandleByIndex(int(index))


@functools.cache
def get_total_device_memory() -> int | None:
    """Return the total memory of the current device."""
    import pynvml

    handle = get_device_handle()
    return None if handle is None else pynvml.nvmlDeviceGetMemoryInfo(handle).total


@dataclasses.dataclass
class DaskContext:
    """The Dask cluster a ``DaskEngine`` runs on (only valid in the process and engine that created it)."""

    client: Any
    rapidsmpf_id: str
    quent_logger: Any | None
    owned_client: Any | None = None
    owned_cluster: Any | None = None


def check_engine_config(config: dict[str, Any]) -> None:
    """The checks of ``ConfigOptions.from_polars_engine`` and ``StreamingExecutor(**executor_options)``."""
    extra_options = set(config.keys()) - VALID_ENGINE_OPTIONS
    if extra_options:
        raise TypeError(f"Unsupported executor_options: {extra_options}")
    executor = config.get("executor") or os.environ.get("CUDF_POLARS__EXECUTOR", "streaming")
    if executor not in {"in-memory", "streaming"}:
        raise ValueError(f"Unknown executor '{executor}'")
    if not isinstance(config.get("raise_on_fail", False), bool):
        raise TypeError("GPUEngine option 'raise_on_fail' must be a boolean.")
    if executor == "streaming":
        for key in config.get("executor_options", {}):
            if key not in STREAMING_EXECUTOR_FIELDS:
                raise TypeError(f"StreamingExecutor.__init__() got an unexpected keyword argument '{key}'")
