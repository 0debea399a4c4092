"""Simulated ``pynvml`` (NVIDIA's nvidia-ml-py bindings) for machines without a GPU: the functions that
distributed's NVML helpers (``distributed.diagnostics.nvml``), dask-cuda's utilities (``dask_cuda.utils``)
and the course (``utils.machine``, ``tools.gpu.report``) call, answering for simulated devices.

Test infrastructure only (see ``gpu_sim/README.md``): put ``gpu_sim`` first on a process's
``PYTHONPATH`` and that process "sees" GPUs. Nothing here touches a GPU and nothing it reports is a GPU
result. Settings, read at every call (so each process may differ):

- ``GPU_SIM_DEVICES``: an integer N (N devices named ``Simulated GPU``; default 1; ``0`` is a machine
  without the NVIDIA driver: ``nvmlInit`` raises ``NVMLError_LibraryNotFound`` as on a CPU machine) or
  device names separated by ``;`` (``"Simulated H200 A;Simulated H200 B"``).
- ``GPU_SIM_MEMORY_BYTES``: each device's memory in bytes (default 80 GiB).

Device ``i`` has the UUID ``GPU-00000000-0000-0000-0000-00000000000i``. ``CUDA_VISIBLE_DEVICES`` is not
read here: like the real library, NVML numbers the physical devices and callers apply the variable.

Behaviour copied from nvidia-ml-py 13.615.71 (PyPI ``nvidia-ml-py``, module ``pynvml.py``; a copy is
vendored in ray-project/ray ``python/ray/_private/thirdparty/pynvml/pynvml.py``) and the NVML API reference
(docs.nvidia.com/deploy/nvml-api): error classes, reference-counted ``nvmlInit``/``nvmlShutdown``,
``NVMLError_Uninitialized`` before ``nvmlInit``, ``str`` results, return shapes.
"""

from __future__ import annotations

import os
import string
import sys
import threading
from dataclasses import dataclass
from types import SimpleNamespace

__version__ = "13.615.71+sim"

DEFAULT_NAME = "Simulated GPU"
DEFAULT_MEMORY_BYTES = 80 * 2**30

# nvidia-ml-py pynvml.py: return codes (the subset whose error classes callers name).
NVML_SUCCESS = 0
NVML_ERROR_UNINITIALIZED = 1
NVML_ERROR_INVALID_ARGUMENT = 2
NVML_ERROR_NOT_SUPPORTED = 3
NVML_ERROR_NO_PERMISSION = 4
NVML_ERROR_ALREADY_INITIALIZED = 5
NVML_ERROR_NOT_FOUND = 6
NVML_ERROR_INSUFFICIENT_SIZE = 7
NVML_ERROR_DRIVER_NOT_LOADED = 9
NVML_ERROR_TIMEOUT = 10
NVML_ERROR_LIBRARY_NOT_FOUND = 12
NVML_ERROR_FUNCTION_NOT_FOUND = 13
NVML_ERROR_GPU_IS_LOST = 15
NVML_ERROR_UNKNOWN = 999

NVML_DEVICE_MIG_DISABLE = 0
NVML_DEVICE_MIG_ENABLE = 1
NVML_FEATURE_DISABLED = 0
NVML_FEATURE_ENABLED = 1
nvmlMemory_v2 = 0x02000028


class NVMLError(Exception):
    """nvidia-ml-py pynvml.py ``NVMLError``: ``NVMLError(code)`` builds the subclass for that code, ``str``
    is NVML's text for it, ``.value`` the code."""

    _valClassMapping: dict[int, type] = {}
    _errcode_to_string = {
        NVML_ERROR_UNINITIALIZED: "Uninitialized",
        NVML_ERROR_INVALID_ARGUMENT: "Invalid Argument",
        NVML_ERROR_NOT_SUPPORTED: "Not Supported",
        NVML_ERROR_NO_PERMISSION: "Insufficient Permissions",
        NVML_ERROR_ALREADY_INITIALIZED: "Already Initialized",
        NVML_ERROR_NOT_FOUND: "Not Found",
        NVML_ERROR_INSUFFICIENT_SIZE: "Insufficient Size",
        NVML_ERROR_DRIVER_NOT_LOADED: "Driver Not Loaded",
        NVML_ERROR_TIMEOUT: "Timeout",
        NVML_ERROR_LIBRARY_NOT_FOUND: "NVML Shared Library Not Found",
        NVML_ERROR_FUNCTION_NOT_FOUND: "Function Not Found",
        NVML_ERROR_GPU_IS_LOST: "GPU is lost",
        NVML_ERROR_UNKNOWN: "Unknown Error",
    }

    def __new__(cls, value: int):
        if cls is NVMLError:
            cls = NVMLError._valClassMapping.get(value, cls)
        obj = Exception.__new__(cls)
        obj.value = value
        return obj

    def __str__(self) -> str:
        return NVMLError._errcode_to_string.get(self.value, f"NVML Error with code {self.value}")

    def __eq__(self, other: object) -> bool:
        return isinstance(other, NVMLError) and self.value == other.value

    __hash__ = Exception.__hash__


def _extract_errors_as_classes() -> None:
    """nvidia-ml-py pynvml.py ``_extractNVMLErrorsAsClasses``: NVML_ERROR_NOT_FOUND -> NVMLError_NotFound, ..."""
    module = sys.modules[__name__]
    for err_name in [name for name in dir(module) if name.startswith("NVML_ERROR_")]:
        class_name = "NVMLError_" + string.capwords(err_name.replace("NVML_ERROR_", ""), "_").replace("_", "")
        err_val = getattr(module, err_name)

        def gen_new(val: int):
            def new(typ, *args):
                return NVMLError.__new__(typ, val)

            return new

        error_class = type(class_name, (NVMLError,), {"__new__": gen_new(err_val)})
        error_class.__module__ = __name__
        setattr(module, class_name, error_class)
        NVMLError._valClassMapping[err_val] = error_class


_extract_errors_as_classes()
# Names callers use (defined just above; spelled out for readers and linters).
NVMLError_Uninitialized = NVMLError._valClassMapping[NVML_ERROR_UNINITIALIZED]
NVMLError_InvalidArgument = NVMLError._valClassMapping[NVML_ERROR_INVALID_ARGUMENT]
NVMLError_NotSupported = NVMLError._valClassMapping[NVML_ERROR_NOT_SUPPORTED]
NVMLError_NotFound = NVMLError._valClassMapping[NVML_ERROR_NOT_FOUND]
NVMLError_DriverNotLoaded = NVMLError._valClassMapping[NVML_ERROR_DRIVER_NOT_LOADED]
NVMLError_LibraryNotFound = NVMLError._valClassMapping[NVML_ERROR_LIBRARY_NOT_FOUND]
NVMLError_Unknown = NVMLError._valClassMapping[NVML_ERROR_UNKNOWN]


@dataclass(frozen=True)
class SimulatedDeviceHandle:
    """Stands for pynvml's ``c_nvmlDevice_t`` (an opaque pointer): the physical index of a simulated device."""

    index: int

    def __repr__(self) -> str:
        return f"<simulated nvmlDevice_t {self.index}>"


# The NVML library's per-process reference count (NVML API reference, nvmlInit_v2: "A reference count of the
# number of initializations is maintained. Shutdown only occurs when the reference count reaches zero").
_lock = threading.Lock()
_init_count = 0


def _names() -> list[str]:
    raw = os.environ.get("GPU_SIM_DEVICES", "1").strip()
    if raw.isdigit():
        return [DEFAULT_NAME] * int(raw)
    names = [name.strip() for name in raw.split(";") if name.strip()]
    if not names:
        raise ValueError(f"GPU_SIM_DEVICES must be a device count or ';'-separated names, got {raw!r}")
    return names


def _memory_bytes() -> int:
    raw = os.environ.get("GPU_SIM_MEMORY_BYTES", "").strip()
    return int(raw) if raw else DEFAULT_MEMORY_BYTES


def _uuid(index: int) -> str:
    return f"GPU-00000000-0000-0000-0000-{index:012d}"


def _check_initialized() -> None:
    """nvidia-ml-py pynvml.py ``_nvmlGetFunctionPointer`` and the NVML library: calls before ``nvmlInit`` (or
    after the last ``nvmlShutdown``) fail with NVML_ERROR_UNINITIALIZED."""
    if _init_count <= 0:
        raise NVMLError(NVML_ERROR_UNINITIALIZED)


def _handle(handle: SimulatedDeviceHandle) -> SimulatedDeviceHandle:
    _check_initialized()
    if not isinstance(handle, SimulatedDeviceHandle) or not 0 <= handle.index < len(_names()):
        raise NVMLError(NVML_ERROR_INVALID_ARGUMENT)
    return handle


def _text(value: str | bytes) -> str:
    """nvidia-ml-py ``convertStrBytes``: ``str`` arguments are accepted as well as ``bytes``."""
    return value.decode() if isinstance(value, bytes) else str(value)


def nvmlInitWithFlags(flags: int) -> None:
    """Load the library (simulated: fails as without a driver when ``GPU_SIM_DEVICES=0``) and count one init."""
    global _init_count
    if not _names():
        # nvidia-ml-py _LoadNvmlLibrary: CDLL("libnvidia-ml.so.1") fails -> NVML_ERROR_LIBRARY_NOT_FOUND.
        raise NVMLError(NVML_ERROR_LIBRARY_NOT_FOUND)
    with _lock:
        _init_count += 1


def nvmlInit() -> None:
    nvmlInitWithFlags(0)


def nvmlShutdown() -> None:
    global _init_count
    _check_initialized()
    with _lock:
        _init_count -= 1


def nvmlSystemGetDriverVersion() -> str:
    _check_initialized()
    return "0.0+sim"


def nvmlSystemGetNVMLVersion() -> str:
    _check_initialized()
    return "13.0+sim"


def nvmlSystemGetCudaDriverVersion() -> int:
    _check_initialized()
    return 13000


nvmlSystemGetCudaDriverVersion_v2 = nvmlSystemGetCudaDriverVersion


def nvmlDeviceGetCount() -> int:
    _check_initialized()
    return len(_names())


def nvmlDeviceGetHandleByIndex(index: int) -> SimulatedDeviceHandle:
    """NVML: NVML_ERROR_INVALID_ARGUMENT if ``index`` is not a device's."""
    _check_initialized()
    if not 0 <= int(index) < len(_names()):
        raise NVMLError(NVML_ERROR_INVALID_ARGUMENT)
    return SimulatedDeviceHandle(int(index))


def nvmlDeviceGetHandleByUUID(uuid: str | bytes) -> SimulatedDeviceHandle:
    """NVML: NVML_ERROR_NOT_FOUND if ``uuid`` is no device's."""
    _check_initialized()
    text = _text(uuid)
    for index in range(len(_names())):
        if _uuid(index) == text:
            return SimulatedDeviceHandle(index)
    raise NVMLError(NVML_ERROR_NOT_FOUND)


def nvmlDeviceGetIndex(handle: SimulatedDeviceHandle) -> int:
    return _handle(handle).index


def nvmlDeviceGetUUID(handle: SimulatedDeviceHandle) -> str:
    return _uuid(_handle(handle).index)


def nvmlDeviceGetName(handle: SimulatedDeviceHandle) -> str:
    return _names()[_handle(handle).index]


def nvmlDeviceGetMemoryInfo(handle: SimulatedDeviceHandle, version: int | None = None) -> SimpleNamespace:
    """``c_nvmlMemory_t`` (total, free, used), or ``c_nvmlMemory_v2_t`` (with version and reserved) when a
    version is given. Nothing is ever allocated on a simulated device: used is 0."""
    _handle(handle)
    total = _memory_bytes()
    if version:
        return SimpleNamespace(version=version, total=total, reserved=0, free=total, used=0)
    return SimpleNamespace(total=total, free=total, used=0)


def nvmlDeviceGetUtilizationRates(handle: SimulatedDeviceHandle) -> SimpleNamespace:
    """``c_nvmlUtilization_t`` (gpu, memory, in percent): a simulated device never computes."""
    _handle(handle)
    return SimpleNamespace(gpu=0, memory=0)


def nvmlDeviceGetComputeRunningProcesses(handle: SimulatedDeviceHandle) -> list:
    """No process ever has a CUDA context on a simulated device (so ``has_cuda_context`` answers no)."""
    _handle(handle)
    return []


nvmlDeviceGetComputeRunningProcesses_v2 = nvmlDeviceGetComputeRunningProcesses
nvmlDeviceGetComputeRunningProcesses_v3 = nvmlDeviceGetComputeRunningProcesses


def nvmlDeviceGetCpuAffinity(handle: SimulatedDeviceHandle, cpuSetSize: int) -> list[int]:
    """``cpuSetSize`` 64-bit masks of the CPUs near the device. Simulated: the CPUs this process may run on, so
    dask-cuda's ``CPUAffinity`` plugin never widens or narrows what the test harness allows."""
    _handle(handle)
    masks = [0] * int(cpuSetSize)
    for cpu in os.sched_getaffinity(0):
        if cpu // 64 < len(masks):
            masks[cpu // 64] |= 1 << (cpu % 64)
    return masks


def nvmlDeviceGetMigMode(device: SimulatedDeviceHandle) -> list[int]:
    """[current, pending]: a simulated device is a MIG-capable one with MIG disabled."""
    _handle(device)
    return [NVML_DEVICE_MIG_DISABLE, NVML_DEVICE_MIG_DISABLE]


def nvmlDeviceIsMigDeviceHandle(device: SimulatedDeviceHandle) -> int:
    _handle(device)
    return 0


def nvmlDeviceGetMaxMigDeviceCount(device: SimulatedDeviceHandle) -> int:
    """NVML: "Returns zero if MIG is not supported or enabled"."""
    _handle(device)
    return 0


def nvmlDeviceGetMigDeviceHandleByIndex(device: SimulatedDeviceHandle, index: int) -> SimulatedDeviceHandle:
    """MIG is disabled: there is no MIG device at any index (distributed's ``has_cuda_context`` expects
    NVMLError_NotFound for "No MIG device with that index")."""
    _handle(device)
    raise NVMLError(NVML_ERROR_NOT_FOUND)


def nvmlDeviceGetDeviceHandleFromMigDeviceHandle(migDevice: SimulatedDeviceHandle) -> SimulatedDeviceHandle:
    """Only MIG handles have a parent; no simulated handle is one."""
    _handle(migDevice)
    raise NVMLError(NVML_ERROR_INVALID_ARGUMENT)
