"""A stand-in for NVIDIA's ``pynvml`` (nvidia-ml-py) on machines without a GPU: the functions that
distributed's NVML helpers (``distributed.diagnostics.nvml``), dask-cuda's utilities and
``tools.gpu_report`` call, answering for pretend devices.

Put this folder first on a process's path (``PYTHONPATH``) to make that process "see" GPUs:
``STANDIN_NVML_DEVICES`` names them, separated by ``;`` (default: one "Stand-in GPU"). Device
``i`` has the UUID ``GPU-00000000-0000-0000-0000-00000000000i`` and 80 GiB of memory. Nothing
here touches a real GPU; tests use it to check code that reads NVML, never to claim a GPU result.
"""

from __future__ import annotations

import os
from types import SimpleNamespace

__version__ = "0.0.0+standin"
NVML_DEVICE_MIG_DISABLE = 0
NVML_DEVICE_MIG_ENABLE = 1
MEMORY_BYTES = 80 * 2**30


class NVMLError(Exception):
    """Base of NVML's errors, as in pynvml."""


class NVMLError_LibraryNotFound(NVMLError):  # noqa: N801 (pynvml's names)
    pass


class NVMLError_DriverNotLoaded(NVMLError):  # noqa: N801
    pass


class NVMLError_Unknown(NVMLError):  # noqa: N801
    pass


class NVMLError_NotSupported(NVMLError):  # noqa: N801
    pass


class NVMLError_NotFound(NVMLError):  # noqa: N801
    pass


class NVMLError_InvalidArgument(NVMLError):  # noqa: N801
    pass


def _names() -> list[str]:
    raw = os.environ.get("STANDIN_NVML_DEVICES", "Stand-in GPU")
    return [name.strip() for name in raw.split(";") if name.strip()]


def _uuid(index: int) -> str:
    return f"GPU-00000000-0000-0000-0000-{index:012d}"


def nvmlInit() -> None:  # noqa: N802 (pynvml's names)
    pass


def nvmlShutdown() -> None:  # noqa: N802
    pass


def nvmlSystemGetDriverVersion() -> str:  # noqa: N802
    return "0.0.standin"


def nvmlSystemGetCudaDriverVersion() -> int:  # noqa: N802
    return 13000


def nvmlDeviceGetCount() -> int:  # noqa: N802
    return len(_names())


def nvmlDeviceGetHandleByIndex(index: int) -> SimpleNamespace:  # noqa: N802
    if not 0 <= int(index) < len(_names()):
        raise NVMLError_InvalidArgument(f"no device {index}")
    return SimpleNamespace(index=int(index))


def nvmlDeviceGetHandleByUUID(uuid: str | bytes) -> SimpleNamespace:  # noqa: N802
    text = uuid.decode() if isinstance(uuid, bytes) else uuid
    for index in range(len(_names())):
        if _uuid(index) == text:
            return SimpleNamespace(index=index)
    raise NVMLError_NotFound(f"no device {text}")


def nvmlDeviceGetIndex(handle: SimpleNamespace) -> int:  # noqa: N802
    return handle.index


def nvmlDeviceGetUUID(handle: SimpleNamespace) -> str:  # noqa: N802
    return _uuid(handle.index)


def nvmlDeviceGetName(handle: SimpleNamespace) -> str:  # noqa: N802
    return _names()[handle.index]


def nvmlDeviceGetMemoryInfo(handle: SimpleNamespace) -> SimpleNamespace:  # noqa: N802
    return SimpleNamespace(total=MEMORY_BYTES, used=2**30, free=MEMORY_BYTES - 2**30)


def nvmlDeviceGetUtilizationRates(handle: SimpleNamespace) -> SimpleNamespace:  # noqa: N802
    return SimpleNamespace(gpu=0, memory=0)


def nvmlDeviceGetComputeRunningProcesses(handle: SimpleNamespace) -> list:  # noqa: N802
    return []


nvmlDeviceGetComputeRunningProcesses_v2 = nvmlDeviceGetComputeRunningProcesses


def nvmlDeviceGetMigMode(handle: SimpleNamespace) -> list[int]:  # noqa: N802
    raise NVMLError_NotSupported("no MIG on a stand-in device")


def nvmlDeviceIsMigDeviceHandle(handle: SimpleNamespace) -> bool:  # noqa: N802
    return False


def nvmlDeviceGetCpuAffinity(handle: SimpleNamespace, size: int) -> list[int]:  # noqa: N802
    return [2**64 - 1] * size
