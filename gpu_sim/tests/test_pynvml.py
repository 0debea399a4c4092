"""The simulated ``pynvml`` (gpu_sim/pynvml.py): devices from the environment, the NVML error classes and
reference counting of nvidia-ml-py, and what distributed's and dask-cuda's NVML helpers and the course's
``utils.machine`` read through it. Runs only inside the simulation (``GPU_SIM=1``, gpu_sim first on the
path). Nothing here touches a GPU."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pynvml
import pytest

SIM = Path(__file__).resolve().parents[1]
REPO = SIM.parent
GIB = 2**30


@pytest.fixture
def nvml(monkeypatch: pytest.MonkeyPatch):
    """pynvml initialised once for the test (and shut down after), with CUDA_VISIBLE_DEVICES unset."""
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    pynvml.nvmlInit()
    yield pynvml
    pynvml.nvmlShutdown()


def test_the_simulated_pynvml_is_the_one_imported():
    assert Path(pynvml.__file__).resolve() == SIM / "pynvml.py"
    assert pynvml.__version__.endswith("+sim")


def test_default_is_one_simulated_gpu_of_80_gib(nvml, monkeypatch):
    monkeypatch.delenv("GPU_SIM_DEVICES", raising=False)
    monkeypatch.delenv("GPU_SIM_MEMORY_BYTES", raising=False)
    assert nvml.nvmlDeviceGetCount() == 1
    handle = nvml.nvmlDeviceGetHandleByIndex(0)
    assert nvml.nvmlDeviceGetName(handle) == "Simulated GPU"
    memory = nvml.nvmlDeviceGetMemoryInfo(handle)
    assert (memory.total, memory.free, memory.used) == (80 * GIB, 80 * GIB, 0)


def test_devices_from_a_count_or_from_names(nvml, monkeypatch):
    monkeypatch.setenv("GPU_SIM_DEVICES", "3")
    assert nvml.nvmlDeviceGetCount() == 3
    assert {nvml.nvmlDeviceGetName(nvml.nvmlDeviceGetHandleByIndex(i)) for i in range(3)} == {"Simulated GPU"}
    monkeypatch.setenv("GPU_SIM_DEVICES", "Simulated H200 A; Simulated H200 B")
    names = [nvml.nvmlDeviceGetName(nvml.nvmlDeviceGetHandleByIndex(i)) for i in range(nvml.nvmlDeviceGetCount())]
    assert names == ["Simulated H200 A", "Simulated H200 B"]
    monkeypatch.setenv("GPU_SIM_MEMORY_BYTES", str(24 * GIB))
    assert nvml.nvmlDeviceGetMemoryInfo(nvml.nvmlDeviceGetHandleByIndex(1)).total == 24 * GIB
    v2 = nvml.nvmlDeviceGetMemoryInfo(nvml.nvmlDeviceGetHandleByIndex(1), version=nvml.nvmlMemory_v2)
    assert (v2.version, v2.total, v2.reserved, v2.free, v2.used) == (nvml.nvmlMemory_v2, 24 * GIB, 0, 24 * GIB, 0)


def test_uuids_and_indices_agree(nvml, monkeypatch):
    monkeypatch.setenv("GPU_SIM_DEVICES", "3")
    for index in range(3):
        uuid = nvml.nvmlDeviceGetUUID(nvml.nvmlDeviceGetHandleByIndex(index))
        assert uuid == f"GPU-00000000-0000-0000-0000-{index:012d}"
        for spelling in (uuid, uuid.encode()):  # nvidia-ml-py accepts str and bytes
            assert nvml.nvmlDeviceGetIndex(nvml.nvmlDeviceGetHandleByUUID(spelling)) == index


def test_errors_are_nvidia_ml_py_error_classes(nvml, monkeypatch):
    monkeypatch.setenv("GPU_SIM_DEVICES", "2")
    with pytest.raises(nvml.NVMLError_InvalidArgument) as bad_index:
        nvml.nvmlDeviceGetHandleByIndex(2)
    with pytest.raises(nvml.NVMLError_NotFound) as bad_uuid:
        nvml.nvmlDeviceGetHandleByUUID("GPU-ffffffff-0000-0000-0000-000000000000")
    assert (str(bad_index.value), str(bad_uuid.value)) == ("Invalid Argument", "Not Found")
    assert isinstance(bad_uuid.value, nvml.NVMLError) and bad_uuid.value.value == nvml.NVML_ERROR_NOT_FOUND
    # NVMLError(code) builds the code's subclass, as in nvidia-ml-py
    assert type(nvml.NVMLError(nvml.NVML_ERROR_NOT_SUPPORTED)) is nvml.NVMLError_NotSupported
    assert str(nvml.NVMLError_LibraryNotFound()) == "NVML Shared Library Not Found"


def test_calls_before_init_and_the_reference_count(monkeypatch):
    monkeypatch.setattr(pynvml, "_init_count", 0)  # whatever this process initialised before
    with pytest.raises(pynvml.NVMLError_Uninitialized):
        pynvml.nvmlDeviceGetCount()
    pynvml.nvmlInit()
    pynvml.nvmlInit()
    pynvml.nvmlShutdown()
    assert pynvml.nvmlDeviceGetCount() >= 1  # one init still holds
    pynvml.nvmlShutdown()
    with pytest.raises(pynvml.NVMLError_Uninitialized):
        pynvml.nvmlShutdown()


def test_no_driver_when_zero_devices(monkeypatch):
    monkeypatch.setenv("GPU_SIM_DEVICES", "0")
    with pytest.raises(pynvml.NVMLError_LibraryNotFound):
        pynvml.nvmlInit()


def test_zero_devices_reads_as_a_machine_without_gpus_everywhere():
    """distributed's NVML helpers and the course's gpu_count answer 0 safely, and dask-cuda's LocalCUDACluster
    fails with pynvml.NVMLError_LibraryNotFound, as the course design measured on a CPU machine."""
    code = (
        "from distributed.diagnostics.nvml import device_get_count\n"
        "from utils.machine import gpu_count, nvml_gpus\n"
        "print(device_get_count(), gpu_count(), nvml_gpus()['count'])\n"
        "from dask_cuda import LocalCUDACluster\n"
        "try:\n    LocalCUDACluster()\nexcept Exception as error:\n    print(type(error).__name__)\n"
    )
    env = {**os.environ, "GPU_SIM_DEVICES": "0", "PYTHONPATH": str(SIM)}
    env.pop("CUDA_VISIBLE_DEVICES", None)
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, env=env, capture_output=True, text=True,
                          timeout=120, check=True)
    assert done.stdout.split() == ["0", "0", "0", "NVMLError_LibraryNotFound"], done.stderr


def test_cpu_affinity_is_what_this_process_may_use(nvml):
    from dask_cuda.utils import get_cpu_affinity

    assert get_cpu_affinity(0) == sorted(os.sched_getaffinity(0))
    masks = nvml.nvmlDeviceGetCpuAffinity(nvml.nvmlDeviceGetHandleByIndex(0), 2)
    assert len(masks) == 2 and all(isinstance(mask, int) for mask in masks)


def test_mig_is_disabled_and_no_process_has_a_context(nvml, monkeypatch):
    from dask_cuda.utils import get_gpu_count_mig
    from distributed.diagnostics import nvml as distributed_nvml

    monkeypatch.setenv("GPU_SIM_DEVICES", "2")
    handle = nvml.nvmlDeviceGetHandleByIndex(1)
    assert nvml.nvmlDeviceGetMigMode(handle) == [nvml.NVML_DEVICE_MIG_DISABLE] * 2
    assert nvml.nvmlDeviceGetMaxMigDeviceCount(handle) == 0
    assert not nvml.nvmlDeviceIsMigDeviceHandle(handle)
    assert distributed_nvml.get_device_mig_mode(1) == [0, 0]
    assert get_gpu_count_mig.__wrapped__(return_uuids=True) == (0, [])
    assert distributed_nvml.has_cuda_context().has_context is False


def test_distributed_and_the_course_read_the_first_visible_device(nvml, monkeypatch):
    from distributed.diagnostics import nvml as distributed_nvml

    from utils.machine import gpu_count, nvml_gpus, this_gpu

    monkeypatch.setenv("GPU_SIM_DEVICES", "Simulated GPU A;Simulated GPU B")
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "1,0")
    assert distributed_nvml.one_time() == {"memory-total": 80 * GIB, "name": "Simulated GPU B"}
    assert distributed_nvml.real_time() == {"utilization": 0, "memory-used": 0}
    assert distributed_nvml.get_device_index_and_uuid("GPU-00000000-0000-0000-0000-000000000001").device_index == 1
    assert gpu_count() == 2
    assert this_gpu() == {"name": "Simulated GPU B", "uuid": "GPU-00000000-0000-0000-0000-000000000001",
                          "memory_bytes": 80 * GIB}
    report = nvml_gpus()
    assert [device["name"] for device in report["devices"]] == ["Simulated GPU A", "Simulated GPU B"]
    assert report["driver"].endswith("+sim")
