"""Which DataFrame backend the course runs on (pandas on CPUs, cudf on NVIDIA GPUs), and the
one place that converts GPU results for plotting, printing and checking.

Keeping the switch here is what lets every notebook run unchanged on a laptop and on a GPU box.
"""

from __future__ import annotations

import importlib.util
import os
from dataclasses import dataclass
from typing import Any

import dask

BACKEND_ENV_VAR = "COURSE_BACKEND"
CHOICES = ("auto", "cpu", "gpu")
GPU_PACKAGES = ("cudf", "dask_cudf", "dask_cuda")
GPU_INSTALL_HINT = "pip install -r requirements-gpu.txt (cudf-cu12, dask-cudf-cu12, dask-cuda[cu12])"


@dataclass(frozen=True)
class Backend:
    """The chosen backend and a sentence a learner can read about why."""

    name: str  # "cpu" or "gpu"
    reason: str

    @property
    def dataframe_library(self) -> str:
        return "cudf" if self.name == "gpu" else "pandas"


def gpu_count() -> int:
    """NVIDIA GPUs visible to this process; 0 (never an exception) on machines without NVML."""
    try:
        from distributed.diagnostics.nvml import device_get_count

        return int(device_get_count())
    except Exception:
        return 0


def missing_gpu_packages() -> list[str]:
    return [name for name in GPU_PACKAGES if importlib.util.find_spec(name) is None]


def choose_backend(requested: str | None = None, gpus: int | None = None) -> Backend:
    """Pick cpu or gpu from ``requested`` (else ``$COURSE_BACKEND``, else auto-detection).

    Asking for ``gpu`` where it cannot run is an error, never a silent CPU run.
    """
    wanted = (requested or os.environ.get(BACKEND_ENV_VAR) or "auto").strip().lower()
    if wanted not in CHOICES:
        raise ValueError(f"{BACKEND_ENV_VAR} must be one of {', '.join(CHOICES)}, got {wanted!r}")
    gpus = gpu_count() if gpus is None else gpus
    missing = missing_gpu_packages()
    if wanted == "cpu":
        return Backend("cpu", f"{BACKEND_ENV_VAR}=cpu was requested")
    if wanted == "gpu":
        if gpus == 0:
            raise ValueError(
                f"{BACKEND_ENV_VAR}=gpu but no NVIDIA GPU is visible (NVML found none); "
                f"unset it or set {BACKEND_ENV_VAR}=cpu"
            )
        if missing:
            raise ValueError(
                f"{BACKEND_ENV_VAR}=gpu but {', '.join(missing)} cannot be imported; {GPU_INSTALL_HINT}"
            )
        return Backend("gpu", f"{BACKEND_ENV_VAR}=gpu was requested and {gpus} GPU(s) are visible")
    if gpus and not missing:
        return Backend("gpu", f"{gpus} NVIDIA GPU(s) found and cudf/dask-cuda are installed")
    if gpus:
        return Backend("cpu", f"{gpus} GPU(s) found but {', '.join(missing)} not installed")
    return Backend("cpu", "no NVIDIA GPU found")


def configure_dask(backend: Backend) -> None:
    """Set the global Dask options the backend needs (``dataframe.backend``, shuffle method).

    On GPUs the tasks shuffle is used because P2P copies GPU partitions through host memory.
    """
    if backend.name == "gpu":
        dask.config.set({"dataframe.backend": "cudf", "dataframe.shuffle.method": "tasks"})
    else:
        dask.config.set({"dataframe.backend": "pandas", "dataframe.shuffle.method": None})


def to_pandas(obj: Any) -> Any:
    """Return ``obj`` as a pandas/NumPy object: cudf frames and CuPy arrays are copied to host,
    pandas objects pass through. Call it once on a computed result before plotting or checking."""
    if hasattr(obj, "__dask_graph__"):
        raise TypeError("to_pandas() takes a computed result: call .compute() first")
    module = type(obj).__module__
    if module.startswith("cudf") and hasattr(obj, "to_pandas"):
        return obj.to_pandas()
    if module.startswith("cupy") and hasattr(obj, "get"):
        return obj.get()
    return obj
