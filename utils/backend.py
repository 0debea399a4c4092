"""Which DataFrame backend the course runs on (pandas on CPUs, cudf on NVIDIA GPUs), and the
one place that converts GPU results for plotting, printing and checking.

Keeping the switch here is what lets every notebook run unchanged on a laptop and on a GPU box.
Facts about the machine (GPU count, installed packages, the install hint) come from
``utils.machine``; this module only decides what to do with them.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

import dask

from utils.machine import GPU_INSTALL_HINT, gpu_count, installed

BACKEND_ENV_VAR = "COURSE_BACKEND"
CHOICES = ("auto", "cpu", "gpu")
NAMES = ("cpu", "gpu")
GPU_PACKAGES = ("cudf", "dask_cudf", "dask_cuda")
DATAFRAME_PACKAGES = ("cudf", "dask_cudf")  # what a GPU cluster without DataFrames (CuPy arrays only) can lack


@dataclass(frozen=True)
class Backend:
    """The chosen backend and a sentence a learner can read about why."""

    name: str  # "cpu" or "gpu"
    reason: str

    @property
    def dataframe_library(self) -> str:
        return "cudf" if self.name == "gpu" else "pandas"


# What the last ``configure_dask`` call set, so that ``current_backend`` can say why.
_configured: Backend | None = None


def missing_gpu_packages() -> list[str]:
    """The GPU packages (cudf, dask_cudf, dask_cuda) that cannot be imported here."""
    return [name for name in GPU_PACKAGES if not installed(name)]


def choose_backend(requested: str | None = None, gpus: int | None = None, dataframes: bool = True) -> Backend:
    """Pick cpu or gpu from ``requested`` (else ``$COURSE_BACKEND``, else auto-detection).

    ``gpus`` defaults to the GPUs this process may use (``utils.machine.gpu_count``, which
    honours ``CUDA_VISIBLE_DEVICES``). Asking for ``gpu`` where it cannot run is an error, never
    a silent CPU run. ``dataframes=False`` chooses for GPU workers alone (CuPy arrays, no cudf
    DataFrames): the GPU then needs dask-cuda but not cudf/dask_cudf.
    """
    wanted = (requested or os.environ.get(BACKEND_ENV_VAR) or "auto").strip().lower()
    if wanted not in CHOICES:
        raise ValueError(f"{BACKEND_ENV_VAR} must be one of {', '.join(CHOICES)}, got {wanted!r}")
    gpus = gpu_count() if gpus is None else gpus
    if wanted == "cpu":
        return Backend("cpu", f"{BACKEND_ENV_VAR}=cpu was requested")
    missing = [name for name in missing_gpu_packages() if dataframes or name not in DATAFRAME_PACKAGES]
    needed = "cudf/dask-cuda are" if dataframes else "dask-cuda is"
    if wanted == "gpu":
        if gpus == 0:
            raise ValueError(
                f"{BACKEND_ENV_VAR}=gpu but no NVIDIA GPU is visible (NVML found none, or "
                f"CUDA_VISIBLE_DEVICES hides them); unset it or set {BACKEND_ENV_VAR}=cpu"
            )
        if missing:
            raise ValueError(
                f"{BACKEND_ENV_VAR}=gpu but {', '.join(missing)} cannot be imported; {GPU_INSTALL_HINT}"
            )
        return Backend("gpu", f"{BACKEND_ENV_VAR}=gpu was requested and {gpus} GPU(s) are visible")
    if gpus and not missing:
        return Backend("gpu", f"{gpus} NVIDIA GPU(s) found and {needed} installed")
    if gpus:
        return Backend("cpu", f"{gpus} GPU(s) found but {', '.join(missing)} not installed")
    return Backend("cpu", "no NVIDIA GPU found")


def shuffle_method(backend_name: str) -> str | None:
    """The ``dataframe.shuffle.method`` for a backend: ``"tasks"`` on GPUs (P2P copies GPU
    partitions through host memory), None on CPUs (Dask picks P2P under a distributed Client)."""
    if backend_name not in NAMES:
        raise ValueError(f"backend name must be one of {', '.join(NAMES)}, got {backend_name!r}")
    return "tasks" if backend_name == "gpu" else None


def configure_dask(backend: Backend) -> None:
    """Set the global Dask options the backend needs (``dataframe.backend``, shuffle method) and
    remember ``backend`` for ``current_backend``."""
    global _configured
    dask.config.set(
        {
            "dataframe.backend": backend.dataframe_library,
            "dataframe.shuffle.method": shuffle_method(backend.name),
        }
    )
    _configured = backend


def current_backend() -> Backend:
    """The backend Dask is configured for now: gpu when ``dataframe.backend`` is ``cudf``, else
    cpu, with the reason recorded by the last ``start_client``/``configure_dask`` (when the
    configuration has not been changed since)."""
    library = dask.config.get("dataframe.backend", default="pandas")
    name = "gpu" if library == "cudf" else "cpu"
    if _configured is not None and _configured.name == name:
        return _configured
    return Backend(name, f"dataframe.backend is {library}")


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
