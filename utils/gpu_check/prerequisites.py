"""What must be importable or visible before anything runs, and the refusal line when it is not."""

from __future__ import annotations

import argparse
import os
from importlib import util

from utils.backend import gpu_count

GPU_INSTALL_HINT = "pip install -r requirements-gpu.txt -c constraints.txt"


def importable(module: str) -> bool:
    """Whether ``module`` could be imported, without importing it (GPU libraries are slow to load)."""
    try:
        return util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def cudf_missing() -> list[str]:
    """The cudf packages checks 1b, 4a and 4b need that are not installed."""
    return [m for m in ("cudf", "dask_cudf") if not importable(m)]


def expected_gpu_workers() -> int:
    """Workers ``LocalCUDACluster`` should start: one per entry of ``CUDA_VISIBLE_DEVICES`` when it
    is set (that is what dask-cuda reads), else one per GPU that NVML reports."""
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if visible is not None:
        return len([d for d in visible.split(",") if d.strip()])
    return gpu_count()


def _nvml_reason() -> str:
    """Why NVML sees no GPU, in words (after ``gpu_count()`` has tried to initialise it)."""
    try:
        from distributed.diagnostics import nvml

        state = nvml.NVML_STATE.name
    except Exception:
        return "NVML could not be queried"
    return {
        "DISABLED_PYNVML_NOT_AVAILABLE": "pynvml is not installed, so NVML cannot be asked; on a "
        f"GPU machine: {GPU_INSTALL_HINT}",
        "DISABLED_LIBRARY_NOT_FOUND": "NVML reports 0 devices: the NVIDIA driver library was not found",
        "DISABLED_CONFIG": "NVML is disabled by the distributed.diagnostics.nvml setting",
        "DISABLED_WSL_INSUFFICIENT_DRIVER": "the WSL NVIDIA driver is too old for NVML",
    }.get(state, "NVML reports 0 devices")


def preflight(args: argparse.Namespace) -> str | None:
    """The one ``error:`` line that stops the run before anything starts, or None to go on."""
    suffix = "gpu-check only runs on a machine with an NVIDIA GPU and driver"
    if not args.scheduler_address:
        visible = os.environ.get("CUDA_VISIBLE_DEVICES")
        if visible is not None and not visible.strip():
            return f"error: no NVIDIA GPU visible (CUDA_VISIBLE_DEVICES is set and empty); {suffix}"
        if gpu_count() == 0:
            return f"error: no NVIDIA GPU visible ({_nvml_reason()}); {suffix}"
    missing = [m for m in ("dask_cuda", "cupy") if not importable(m)]
    if missing:
        where = "the scheduler's workers" if args.scheduler_address else f"{gpu_count()} NVIDIA GPU(s)"
        return (
            f"error: {', '.join(missing)} cannot be imported here, so {where} cannot be checked; "
            f"install the GPU stack: {GPU_INSTALL_HINT}"
        )
    return None
