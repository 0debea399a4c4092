"""Simulated ``rmm.mr``: memory resources that record their settings and allocate nothing.

Copied from rapidsai/rmm ``python/rmm/rmm/pylibrmm/memory_resource/_memory_resource.pyx`` (class names,
constructor arguments, ``pool_size``/``get_allocated_bytes``/``get_allocation_limit``/``get_file_name``, the
per-device resource table with ``CudaMemoryResource`` as default, ``_initialize``, ``enable_logging``) and
``python/rmm/rmm/pylibrmm/helper.pyx`` (``parse_bytes``). The "current device" of a process is device 0 of
its ``CUDA_VISIBLE_DEVICES`` numbering, as in CUDA (no device is ever switched here).
"""

from __future__ import annotations

import os
import re
from collections import defaultdict
from typing import Any

_BYTE_SIZES = {"b": 1, "": 1, "kb": 1000, "mb": 1000**2, "gb": 1000**3, "tb": 1000**4, "pb": 1000**5,
               "kib": 1024, "mib": 1024**2, "gib": 1024**3, "tib": 1024**4, "pib": 1024**5}
_PATTERN = re.compile(r"^([0-9]+(?:\.[0-9]*)?)[\t ]*((?i:(?:[kmgtp]i?)?b))?$")


def parse_bytes(s: int | str) -> int:
    """rmm ``pylibrmm/helper.pyx`` ``parse_bytes``: an int as is, or a number with an SI/binary suffix."""
    if isinstance(s, int):
        return s
    match = _PATTERN.match(s)
    if match is None:
        raise ValueError(f"Could not parse {s} as a byte specification")
    return int(float(match.group(1)) * _BYTE_SIZES[(match.group(2) or "").lower()])


def _current_device_free_memory() -> int:
    """Free memory of this process's CUDA device 0 (the first ``CUDA_VISIBLE_DEVICES`` entry), from NVML."""
    import pynvml

    first = os.environ.get("CUDA_VISIBLE_DEVICES", "0").split(",")[0].strip() or "0"
    pynvml.nvmlInit()
    try:
        handle = (pynvml.nvmlDeviceGetHandleByIndex(int(first)) if first.isdigit()
                  else pynvml.nvmlDeviceGetHandleByUUID(first))
        return int(pynvml.nvmlDeviceGetMemoryInfo(handle).free)
    finally:
        pynvml.nvmlShutdown()


class DeviceMemoryResource:
    """Base of every resource. Simulated: no ``allocate``/``deallocate`` (there is no device memory)."""

    def __repr__(self) -> str:
        settings = ", ".join(f"{key}={value!r}" for key, value in vars(self).items() if key != "upstream_mr")
        return f"<simulated rmm.mr.{type(self).__name__}({settings})>"


class UpstreamResourceAdaptor(DeviceMemoryResource):
    def __init__(self, upstream_mr: DeviceMemoryResource, *args: Any, **kwargs: Any) -> None:
        if upstream_mr is None:
            raise Exception("Argument `upstream_mr` must not be None")
        self.upstream_mr = upstream_mr

    def get_upstream(self) -> DeviceMemoryResource:
        return self.upstream_mr


class CudaMemoryResource(DeviceMemoryResource):
    pass


class ManagedMemoryResource(DeviceMemoryResource):
    pass


class CudaAsyncMemoryResource(DeviceMemoryResource):
    def __init__(self, initial_pool_size: int | str | None = None, release_threshold: int | None = None,
                 enable_ipc: bool = False, enable_fabric: bool = False) -> None:
        self.initial_pool_size = None if initial_pool_size is None else parse_bytes(initial_pool_size)
        self.release_threshold = release_threshold
        self.enable_ipc = enable_ipc
        self.enable_fabric = enable_fabric


class PoolMemoryResource(UpstreamResourceAdaptor):
    def __init__(self, upstream_mr: DeviceMemoryResource, initial_pool_size: int | str | None = None,
                 maximum_pool_size: int | str | None = None) -> None:
        super().__init__(upstream_mr)
        # "By default, half the available memory on the device is used" (c_percent_of_free_device_memory(50)).
        self.initial_pool_size = (_current_device_free_memory() // 2 if initial_pool_size is None
                                  else parse_bytes(initial_pool_size))
        self.maximum_pool_size = None if maximum_pool_size is None else parse_bytes(maximum_pool_size)

    def pool_size(self) -> int:
        """The pool's current size: it never grows here, nothing is allocated."""
        return self.initial_pool_size


class LimitingResourceAdaptor(UpstreamResourceAdaptor):
    def __init__(self, upstream_mr: DeviceMemoryResource, allocation_limit: int) -> None:
        super().__init__(upstream_mr)
        self.allocation_limit = int(allocation_limit)

    def get_allocated_bytes(self) -> int:
        return 0

    def get_allocation_limit(self) -> int:
        return self.allocation_limit


class TrackingResourceAdaptor(UpstreamResourceAdaptor):
    def __init__(self, upstream_mr: DeviceMemoryResource, capture_stacks: bool = False) -> None:
        super().__init__(upstream_mr)
        self.capture_stacks = capture_stacks

    def get_allocated_bytes(self) -> int:
        return 0


class StatisticsResourceAdaptor(UpstreamResourceAdaptor):
    @property
    def allocation_counts(self) -> dict[str, int]:
        return {"current_bytes": 0, "current_count": 0, "peak_bytes": 0, "peak_count": 0,
                "total_bytes": 0, "total_count": 0}


class LoggingResourceAdaptor(UpstreamResourceAdaptor):
    """Records the log file's name (with ``.dev<ID>`` before the extension, as real); writes no file."""

    def __init__(self, upstream_mr: DeviceMemoryResource, log_file_name: str | None = None) -> None:
        super().__init__(upstream_mr)
        if log_file_name is None:
            log_file_name = os.getenv("RMM_LOG_FILE")
            if not log_file_name:
                raise ValueError("RMM log file must be specified either using log_file_name= argument or "
                                 "RMM_LOG_FILE environment variable")
        name, ext = os.path.splitext(log_file_name)
        self._log_file_name = os.path.abspath(f"{name}.dev0{ext}")

    def flush(self) -> None:
        pass

    def get_file_name(self) -> str:
        return self._log_file_name


# Global per-device memory resources (device -> resource), CudaMemoryResource until set.
_per_device_mrs: defaultdict[int, DeviceMemoryResource] = defaultdict(CudaMemoryResource)


def _initialize(pool_allocator: bool = False, managed_memory: bool = False, initial_pool_size: Any = None,
                maximum_pool_size: Any = None, devices: int | list[int] | None = 0, logging: bool = False,
                log_file_name: str | None = None) -> None:
    upstream = ManagedMemoryResource if managed_memory else CudaMemoryResource
    _per_device_mrs.clear()
    for device in [0] if devices is None else [devices] if isinstance(devices, int) else devices:
        if pool_allocator:
            resource: DeviceMemoryResource = PoolMemoryResource(
                upstream(),
                initial_pool_size=None if initial_pool_size is None else parse_bytes(initial_pool_size),
                maximum_pool_size=None if maximum_pool_size is None else parse_bytes(maximum_pool_size),
            )
        else:
            resource = upstream()
        set_per_device_resource(device, LoggingResourceAdaptor(resource, log_file_name) if logging else resource)


def get_per_device_resource(device: int) -> DeviceMemoryResource:
    return _per_device_mrs[device]


def set_per_device_resource(device: int, mr: DeviceMemoryResource) -> None:
    if not isinstance(mr, DeviceMemoryResource):
        raise TypeError(f"Argument 'mr' has incorrect type (expected DeviceMemoryResource, got {type(mr).__name__})")
    _per_device_mrs[device] = mr


def set_current_device_resource(mr: DeviceMemoryResource) -> None:
    set_per_device_resource(0, mr)


def get_current_device_resource() -> DeviceMemoryResource:
    return get_per_device_resource(0)


def is_initialized() -> bool:
    return True


def enable_logging(log_file_name: str | None = None) -> None:
    for device in [0] if not _per_device_mrs.keys() else list(_per_device_mrs.keys()):
        resource = _per_device_mrs[device]
        if not isinstance(resource, LoggingResourceAdaptor):
            set_per_device_resource(device, LoggingResourceAdaptor(resource, log_file_name))


def disable_logging() -> None:
    for device, resource in list(_per_device_mrs.items()):
        if isinstance(resource, LoggingResourceAdaptor):
            set_per_device_resource(device, resource.get_upstream())


def get_log_filenames() -> dict[int, str | None]:
    return {device: resource.get_file_name() if isinstance(resource, LoggingResourceAdaptor) else None
            for device, resource in _per_device_mrs.items()}
