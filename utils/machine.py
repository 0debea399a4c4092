"""Facts about this machine and its installed software, each computed in exactly one place.

Notebooks, the cluster helper, the data generator, benchmarks and the GPU tests all ask here, so
they cannot disagree (e.g. about how many GPUs are usable when ``CUDA_VISIBLE_DEVICES`` is set,
or how many cores a container's CPU quota really allows).
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import platform
from functools import cache
from importlib import metadata
from pathlib import Path
from typing import Any

GPU_INSTALL_HINT = (
    "install the GPU stack: pip install -r requirements-gpu.txt -c constraints.txt "
    "(or conda env create -f environment.yml)"
)

# Import name -> distributions that can provide it (pip CUDA 12 / CUDA 13 wheels, conda, plain).
_DISTRIBUTIONS: dict[str, tuple[str, ...]] = {
    "dask": ("dask",),
    "distributed": ("distributed",),
    "pandas": ("pandas",),
    "pyarrow": ("pyarrow",),
    "numpy": ("numpy",),
    "bokeh": ("bokeh",),
    "cudf": ("cudf-cu12", "cudf-cu13", "cudf"),
    "dask_cudf": ("dask-cudf-cu12", "dask-cudf-cu13", "dask-cudf", "dask_cudf"),
    "dask_cuda": ("dask-cuda", "dask_cuda"),
    "cupy": ("cupy-cuda12x", "cupy-cuda13x", "cupy"),
    "rmm": ("rmm-cu12", "rmm-cu13", "rmm"),
    "pynvml": ("nvidia-ml-py", "pynvml"),
    "distributed_ucxx": ("distributed-ucxx-cu12", "distributed-ucxx-cu13", "distributed-ucxx"),  # protocol="ucx"
}


def cpu_count() -> int:
    """Cores this process may use: Dask's count honours CPU quotas (containers, Binder) and
    affinity, where ``os.cpu_count()`` reports every core of the host."""
    from dask.system import CPU_COUNT

    return int(CPU_COUNT)


@cache
def cpu_name() -> str:
    """The CPU model, for labelling measurements."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown CPU"


def _nvml_device_count() -> int:
    try:
        from distributed.diagnostics.nvml import device_get_count

        return int(device_get_count())
    except Exception:
        return 0


def visible_gpu_indices(physical: int, visible: str | None) -> list[str]:
    """Entries of ``CUDA_VISIBLE_DEVICES`` that name a device (all ``physical`` ones when unset),
    read the way CUDA and dask-cuda read it: an empty value hides every GPU, an entry is an index
    below ``physical`` or a ``GPU-``/``MIG-`` UUID, and the list stops at the first invalid entry
    (so the common ``CUDA_VISIBLE_DEVICES=-1`` hides every GPU)."""
    if visible is None:
        return [str(i) for i in range(physical)]
    entries: list[str] = []
    for raw in visible.split(","):
        entry = raw.strip()
        is_index = entry.isdigit() and int(entry) < physical
        if not (is_index or entry.startswith(("GPU-", "MIG-"))):
            break
        entries.append(entry)
    return entries


def gpu_count() -> int:
    """NVIDIA GPUs this process may use: NVML's count, narrowed by ``CUDA_VISIBLE_DEVICES``.
    0 (never an exception) on machines without a driver."""
    physical = _nvml_device_count()
    if physical == 0:
        return 0
    return len(visible_gpu_indices(physical, os.environ.get("CUDA_VISIBLE_DEVICES")))


def this_gpu() -> dict[str, Any] | None:
    """The GPU this process computes on, as NVML names it (``name``, ``uuid``, ``memory_bytes``),
    or None where it may use none. CUDA numbers a process's devices from the first entry of its
    ``CUDA_VISIBLE_DEVICES``, which is how dask-cuda gives each worker its own GPU.

    Run it on the workers (``client.run``) to learn their GPUs: the scheduler's record of a
    nanny-spawned worker (``LocalCUDACluster``, ``dask cuda worker``) has no GPU name, because
    NVML starts in the worker after its start-up information was taken."""
    if gpu_count() == 0:
        return None
    try:
        from distributed.diagnostics import nvml

        first = visible_gpu_indices(_nvml_device_count(), os.environ.get("CUDA_VISIBLE_DEVICES"))[0]
        facts = nvml.one_time()  # the first visible device: name and total memory
        uuid = nvml.get_device_index_and_uuid(first).uuid
    except Exception:  # an NVML that answers the count but not the details: no usable facts
        return None
    return {"name": _text(facts["name"]), "uuid": _text(uuid), "memory_bytes": facts["memory-total"]}


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)  # older pynvml releases: bytes


def installed(module: str) -> bool:
    """Whether ``module`` can be imported, without importing it (cudf takes seconds to import)."""
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def package_version(module: str) -> str | None:
    """Installed version of the package that provides ``module`` (e.g. ``cudf`` from the
    ``cudf-cu12`` wheel or a conda package); None when it is not installed."""
    for dist in _DISTRIBUTIONS.get(module, (module,)):
        try:
            return metadata.version(dist)
        except metadata.PackageNotFoundError:
            continue
    return None


def cuda_version(number: int) -> str:
    """CUDA version text from the integer NVML and the CUDA runtime report (12080 -> 12.8)."""
    return f"{number // 1000}.{number % 1000 // 10}"


def nvml_gpus() -> dict[str, Any]:
    """GPU models and memory, the driver and its CUDA version, as NVML reports them."""
    try:
        import pynvml

        pynvml.nvmlInit()
    except Exception as error:
        return {"count": 0, "error": f"NVML unavailable ({type(error).__name__}: {error})"}
    try:
        handles = [pynvml.nvmlDeviceGetHandleByIndex(i) for i in range(pynvml.nvmlDeviceGetCount())]
        return {
            "count": len(handles),
            "devices": [{"name": _text(pynvml.nvmlDeviceGetName(h)), "memory_gib": round(
                pynvml.nvmlDeviceGetMemoryInfo(h).total / 2**30, 1)} for h in handles],
            "driver": _text(pynvml.nvmlSystemGetDriverVersion()),
            "cuda_driver": cuda_version(pynvml.nvmlSystemGetCudaDriverVersion()),
        }
    except Exception as error:
        return {"count": 0, "error": f"NVML query failed ({type(error).__name__}: {error})"}
    finally:
        with contextlib.suppress(Exception):
            pynvml.nvmlShutdown()
