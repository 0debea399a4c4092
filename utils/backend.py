"""Which DataFrame backend the course runs on (pandas on CPUs, cudf on NVIDIA GPUs), and the
one place that converts GPU results for plotting, printing and checking.

Keeping the switch here is what lets every notebook run unchanged on a laptop and on a GPU box.
The decision has one home: ``choose_backend`` chooses (this machine, ``$COURSE_BACKEND``, or an
external cluster's worker reports), a ``Backend`` carries the choice, ``configure_dask`` applies it
and ``current_backend`` reads it back (``reset`` forgets it, for tests); ``as_backend`` is the one
default rule for a ``backend=`` argument. Facts about the machine (GPU count, installed packages,
the install hint) come from ``utils.machine``; this module only decides what to do with them.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
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
    """The chosen backend and a sentence a learner can read about why: the one object that carries
    the choice, from ``choose_backend`` through ``configure_dask`` to ``current_backend``."""

    name: str  # "cpu" or "gpu"
    reason: str

    def __post_init__(self) -> None:
        if self.name not in NAMES:
            raise ValueError(f"backend must be one of {', '.join(NAMES)}, got {self.name!r}")

    @property
    def is_gpu(self) -> bool:
        return self.name == "gpu"

    @property
    def dataframe_library(self) -> str:
        return "cudf" if self.is_gpu else "pandas"

    @property
    def shuffle_method(self) -> str | None:
        """``dataframe.shuffle.method``: ``"tasks"`` on GPUs (P2P copies GPU partitions through host
        memory), None on CPUs (Dask picks P2P under a distributed Client)."""
        return "tasks" if self.is_gpu else None

    def dask_config(self) -> dict[str, Any]:
        """The global Dask options this backend needs."""
        return {"dataframe.backend": self.dataframe_library, "dataframe.shuffle.method": self.shuffle_method}


# What the last ``configure_dask`` call set, so that ``current_backend`` can say why; and Dask's two
# options as they were before the first one, for ``reset``.
_configured: Backend | None = None
_before_configure: dict[str, Any] | None = None


def missing_gpu_packages() -> list[str]:
    """The GPU packages (cudf, dask_cudf, dask_cuda) that cannot be imported here."""
    return [name for name in GPU_PACKAGES if not installed(name)]


def is_gpu_worker(report: Mapping[str, Any]) -> bool:
    """Whether a worker's hardware report (``utils.cluster.workers_hardware``: ``gpu``, ``dask_cuda``,
    ``gpu_packages_missing``) is a GPU worker: a dask-cuda worker with its own device and cudf."""
    return bool(report["gpu"]) and bool(report["dask_cuda"]) and not report["gpu_packages_missing"]


def choose_backend(
    requested: str | None = None,
    gpus: int | None = None,
    dataframes: bool = True,
    workers: Mapping[str, Mapping[str, Any]] | None = None,
) -> Backend:
    """The one place that picks cpu or gpu: from ``requested`` (else ``$COURSE_BACKEND``, else
    auto-detection) and the hardware.

    The hardware is this process's (``gpus`` defaults to ``utils.machine.gpu_count``, which honours
    ``CUDA_VISIBLE_DEVICES``) or, given ``workers``, an external cluster's: the reports its workers
    gave (``utils.cluster.workers_hardware``, by worker address). There the GPU counts only when every
    worker is a GPU worker (``is_gpu_worker``): plain ``dask worker`` processes on a GPU machine see
    the GPUs through NVML and may import cudf, but they are CPU workers (many threads, no device
    memory limit, no spilling).

    Asking for ``gpu`` where it cannot run is an error, never a silent CPU run. ``dataframes=False``
    chooses for GPU workers alone (CuPy arrays, no cudf DataFrames): the GPU then needs dask-cuda but
    not cudf/dask_cudf.
    """
    if workers is not None:
        return _choose_for_workers(requested, workers)
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


def _choose_for_workers(requested: str | None, workers: Mapping[str, Mapping[str, Any]]) -> Backend:
    if not workers:
        raise ValueError("the external cluster has no workers; start some")
    reports = list(workers.values())
    gpu_workers = [report for report in reports if is_gpu_worker(report)]
    all_gpu = len(gpu_workers) == len(reports)
    gpus = len({report["gpu"]["uuid"] for report in gpu_workers}) if all_gpu else 0
    chosen = choose_backend(requested, gpus=gpus)
    reason = chosen.reason
    if not all_gpu and any(report["gpu"] for report in reports):
        reason = (f"{len(reports) - len(gpu_workers)} of {len(reports)} workers are not dask-cuda workers "
                  "with a GPU and cudf (start GPU workers with `dask cuda worker`)")
    return Backend(chosen.name, f"external cluster: {reason}")


def as_backend(backend: Backend | str | None = None) -> Backend:
    """The one default rule for a ``backend=`` argument: a ``Backend`` as it is, a name (``"cpu"``,
    ``"gpu"``) as a ``Backend`` of that name, None as ``current_backend()``."""
    if backend is None:
        return current_backend()
    if isinstance(backend, Backend):
        return backend
    return Backend(backend, f"{backend} was passed by name")


def configure_dask(backend: Backend) -> None:
    """Set the global Dask options the backend needs (``dataframe.backend``, shuffle method) and
    remember ``backend`` for ``current_backend``."""
    global _configured, _before_configure
    if _before_configure is None:
        _before_configure = {key: dask.config.get(key, default=None) for key in backend.dask_config()}
    dask.config.set(backend.dask_config())
    _configured = backend


def current_backend() -> Backend:
    """The backend Dask is configured for now: gpu when ``dataframe.backend`` is ``cudf``, else cpu.

    Dask's option is the truth, since a learner may set it by hand (``dask.config.set``): the
    ``Backend`` recorded by the last ``start_client``/``configure_dask`` is returned, with its reason,
    only while the option still names its library; otherwise a ``Backend`` that says the option
    decided."""
    library = dask.config.get("dataframe.backend", default="pandas")
    if _configured is not None and _configured.dataframe_library == library:
        return _configured
    return Backend("gpu" if library == "cudf" else "cpu", f"dataframe.backend is {library}")


def reset() -> None:
    """Forget what ``configure_dask`` recorded and put Dask's two options back to what they were
    before its first call (for tests, and for a kernel that wants the course's choice undone)."""
    global _configured, _before_configure
    if _before_configure is not None:
        dask.config.set(_before_configure)
    _configured = _before_configure = None


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
