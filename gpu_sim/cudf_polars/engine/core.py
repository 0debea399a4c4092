"""``cudf_polars.engine.core`` (26.10.2): ``StreamingEngine``, the polars ``GPUEngine`` subclass every multi-GPU
engine derives from (context manager, ``shutdown``, the cluster's smallest device memory as ``min_device_size``,
and the refusal of several ranks on one GPU unless ``engine_options={"allow_gpu_sharing": True}``), ``ClusterInfo``
and the reserved option keys."""

from __future__ import annotations

import contextlib
import dataclasses
import os
import socket
import threading
import weakref
from typing import Any, ClassVar, Self

import polars as pl

from cudf_polars.utils.config import get_device_handle, get_total_device_memory


def _cuda_core_uuid() -> str:
    """``cuda.core.Device().uuid`` of this process's device: 8-4-4-4-12 hex, without NVML's ``GPU-`` prefix."""
    import pynvml

    return pynvml.nvmlDeviceGetUUID(get_device_handle()).removeprefix("GPU-")


@dataclasses.dataclass(frozen=True)
class ClusterInfo:
    """Diagnostic information about a single rank in the cluster."""

    pid: int
    hostname: str
    cuda_visible_devices: str | None
    gpu_uuid: str
    device_memory: int | None = None

    @classmethod
    def local(cls) -> ClusterInfo:
        return cls(pid=os.getpid(), hostname=socket.gethostname(),
                   cuda_visible_devices=os.environ.get("CUDA_VISIBLE_DEVICES"), gpu_uuid=_cuda_core_uuid(),
                   device_memory=get_total_device_memory())


_RESERVED_EXECUTOR_KEYS: frozenset[str] = frozenset({"cluster", "spmd_context", "ray_context", "dask_context"})
_RESERVED_ENGINE_KEYS: frozenset[str] = frozenset({"memory_resource", "executor"})


def check_reserved_keys(executor_options: dict[str, Any], engine_options: dict[str, Any]) -> None:
    """Raise :exc:`TypeError` if any reserved keys are present in the option dicts."""
    if bad := _RESERVED_EXECUTOR_KEYS & executor_options.keys():
        raise TypeError(f"executor_options may not contain reserved keys: {bad}")
    if bad := _RESERVED_ENGINE_KEYS & engine_options.keys():
        raise TypeError(f"engine_options may not contain reserved keys: {bad}")


class StreamingEngine(pl.GPUEngine):
    """Base class for multi-GPU Polars engines; a context manager whose exit calls :meth:`shutdown`."""

    _active_engines: ClassVar[weakref.WeakSet[StreamingEngine]] = weakref.WeakSet()
    _active_engines_lock: ClassVar[threading.Lock] = threading.Lock()

    def __init__(self, *, nranks: int, executor_options: dict[str, Any], engine_options: dict[str, Any],
                 exit_stack: contextlib.ExitStack | None = None) -> None:
        self._nranks = nranks
        self._exit_stack: contextlib.ExitStack | None = exit_stack or contextlib.ExitStack()
        cluster_infos = self.gather_cluster_info()
        device_memories = [info.device_memory for info in cluster_infos]
        executor_options["min_device_size"] = (
            None if any(dm is None for dm in device_memories) else min(device_memories, default=None))
        # allow_gpu_sharing is consumed here since polars' GPUEngine doesn't accept it.
        engine_options = dict(engine_options)
        allow_gpu_sharing = engine_options.pop("allow_gpu_sharing", False)
        super().__init__(executor="streaming", executor_options=executor_options, **engine_options)
        if nranks > 1 and not allow_gpu_sharing:
            uuids = [info.gpu_uuid for info in cluster_infos]
            if len(uuids) != len(set(uuids)):
                raise RuntimeError("Multiple ranks share the same GPU (UUID collision detected). "
                                   f"UUIDs: {uuids}. Set allow_gpu_sharing=True to allow this.")
        with StreamingEngine._active_engines_lock:
            StreamingEngine._active_engines.add(self)

    @property
    def nranks(self) -> int:
        """Number of ranks (for example GPUs or workers) in the cluster."""
        return self._nranks

    def gather_cluster_info(self) -> list[ClusterInfo]:
        raise NotImplementedError

    def shutdown(self) -> None:
        """Shut down engine and release all owned resources (idempotent)."""
        if self._exit_stack is None:
            return
        try:
            self._exit_stack.close()
        finally:
            self._exit_stack = None
            self.device = None
            self.memory_resource = None
            self.config = {}
            with StreamingEngine._active_engines_lock:
                StreamingEngine._active_engines.discard(self)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *_: object) -> None:
        self.shutdown()
