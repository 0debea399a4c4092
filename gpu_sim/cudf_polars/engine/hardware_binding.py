"""``cudf_polars.engine.hardware_binding`` (26.10.2): the policy dataclass as released; ``bind_to_gpu`` applies it
(disabled, once per process, every call) but only records what it would bind, because the simulation has no GPU
topology for ``rapidsmpf.rrun.rrun.bind`` to pin CPU cores, NUMA memory and NICs to."""

from __future__ import annotations

import dataclasses
import os
import threading


@dataclasses.dataclass(frozen=True)
class HardwareBindingPolicy:
    """Policy controlling topology-aware hardware binding (see the released docstring for each field)."""

    skip_under_rrun: bool = True
    enabled: bool = True
    enable_once: bool = True
    raise_on_fail: bool = False
    cpu: bool = True
    memory: bool = True
    network: bool = False


_bind_lock = threading.Lock()
_bind_done = False
BINDINGS: list[dict] = []  # what this process would have bound, in order (simulation record)


def bind_to_gpu(policy: HardwareBindingPolicy) -> None:
    """Bind the calling process to resources close to its GPU, as ``policy`` says (here: record it)."""
    global _bind_done  # noqa: PLW0603
    if not policy.enabled:
        return
    if policy.enable_once:
        if _bind_done:
            return
        with _bind_lock:
            if _bind_done:
                return
            _do_bind(policy)
            _bind_done = True
    else:
        _do_bind(policy)


def _do_bind(policy: HardwareBindingPolicy) -> None:
    # rrun.bind resolves the GPU from CUDA_VISIBLE_DEVICES, falling back to GPU 0 where it is unset.
    gpu = os.environ.get("CUDA_VISIBLE_DEVICES", "0").split(",")[0]
    BINDINGS.append({"gpu": gpu, "cpu": policy.cpu, "memory": policy.memory, "network": policy.network})
