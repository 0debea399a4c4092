"""The machine a report describes: GPUs, driver and CUDA versions, library versions, options."""

from __future__ import annotations

import argparse
import contextlib
import os
import platform
import socket
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Any

_DISTRIBUTIONS = {
    "dask": ("dask",),
    "distributed": ("distributed",),
    "dask-cuda": ("dask-cuda",),
    "cupy": ("cupy-cuda12x", "cupy-cuda13x", "cupy"),
    "cudf": ("cudf-cu12", "cudf-cu13", "cudf"),
    "dask-cudf": ("dask-cudf-cu12", "dask-cudf-cu13", "dask-cudf"),
    "rmm": ("rmm-cu12", "rmm-cu13", "rmm"),
    "pynvml": ("nvidia-ml-py", "pynvml"),
    "numpy": ("numpy",),
    "pandas": ("pandas",),
    "pyarrow": ("pyarrow",),
    "bokeh": ("bokeh",),
    "nbval": ("nbval",),
    "pytest": ("pytest",),
}


def package_versions() -> dict[str, str | None]:
    """Installed version of each library the checks use (None: not installed)."""
    versions: dict[str, str | None] = {}
    for name, candidates in _DISTRIBUTIONS.items():
        versions[name] = None
        for dist in candidates:
            try:
                versions[name] = f"{metadata.version(dist)}" + ("" if dist == name else f" ({dist})")
                break
            except metadata.PackageNotFoundError:
                continue
    return versions


def _text(value: Any) -> str:
    """Some pynvml releases return bytes, others str."""
    return value.decode() if isinstance(value, bytes) else str(value)


def nvml_inventory() -> dict[str, Any]:
    """GPU models, memory, driver and CUDA driver version as NVML reports them."""
    try:
        import pynvml

        pynvml.nvmlInit()
    except Exception as error:
        return {"count": 0, "error": f"NVML unavailable ({type(error).__name__}: {error})"}
    try:
        devices = []
        for index in range(pynvml.nvmlDeviceGetCount()):
            handle = pynvml.nvmlDeviceGetHandleByIndex(index)
            devices.append(
                {
                    "index": index,
                    "name": _text(pynvml.nvmlDeviceGetName(handle)),
                    "memory_bytes": int(pynvml.nvmlDeviceGetMemoryInfo(handle).total),
                }
            )
        cuda = int(pynvml.nvmlSystemGetCudaDriverVersion())
        return {
            "count": len(devices),
            "devices": devices,
            "driver_version": _text(pynvml.nvmlSystemGetDriverVersion()),
            "cuda_driver_version": f"{cuda // 1000}.{cuda % 1000 // 10}",
        }
    except Exception as error:
        return {"count": 0, "error": f"NVML query failed ({type(error).__name__}: {error})"}
    finally:
        with contextlib.suppress(Exception):
            pynvml.nvmlShutdown()


def cuda_runtime_version() -> str | None:
    """CuPy's CUDA runtime version (may differ from the driver's), or None without CuPy."""
    try:
        import cupy

        version = int(cupy.cuda.runtime.runtimeGetVersion())
        return f"{version // 1000}.{version % 1000 // 10}"
    except Exception:
        return None


def collect_environment(args: argparse.Namespace) -> dict[str, Any]:
    """Everything the report says about the machine, so a reader can tell which GPU run it was."""
    return {
        "date_utc": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "hostname": socket.gethostname(),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "cpu_count": os.cpu_count(),
        "cuda_visible_devices": os.environ.get("CUDA_VISIBLE_DEVICES"),
        "gpus": nvml_inventory(),
        "cuda_runtime_version": cuda_runtime_version(),
        "packages": package_versions(),
        "options": {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()},
    }
