"""utils.machine: the one home of CPU/GPU counts, the CPU name and package versions."""

from __future__ import annotations

from importlib import metadata

import dask.system
import pandas as pd
import pytest

from utils import machine
from utils.machine import (
    cpu_count,
    cpu_name,
    gpu_count,
    installed,
    package_version,
    visible_gpu_indices,
)


@pytest.mark.parametrize(
    ("visible", "expected"),
    [
        (None, ["0", "1", "2", "3"]),  # unset: every physical GPU
        ("", []),  # empty: none (CUDA's rule, not "unset")
        ("0,2", ["0", "2"]),
        (" 3 , 1 ", ["3", "1"]),  # order kept, spaces ignored
        ("1,7,2", ["1"]),  # 7 does not exist: CUDA stops at the first invalid entry
        ("-1", []),  # the usual way of hiding every GPU
        ("0,,1", ["0"]),
        ("0,bogus,1", ["0"]),
        ("GPU-8f2e1c4a-0000-0000-0000-000000000000,1", ["GPU-8f2e1c4a-0000-0000-0000-000000000000", "1"]),
    ],
)
def test_visible_gpu_indices(visible, expected):
    assert visible_gpu_indices(4, visible) == expected


@pytest.mark.parametrize(
    ("physical", "visible", "expected"),
    [(0, None, 0), (0, "0", 0), (4, None, 4), (4, "0,2", 2), (4, "", 0), (4, "-1", 0), (2, "0,1,2,3", 2)],
)
def test_gpu_count_is_nvml_narrowed_by_cuda_visible_devices(monkeypatch, physical, visible, expected):
    monkeypatch.setattr(machine, "_nvml_device_count", lambda: physical)
    if visible is None:
        monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    else:
        monkeypatch.setenv("CUDA_VISIBLE_DEVICES", visible)
    assert gpu_count() == expected


def test_gpu_count_without_a_driver_is_zero_not_an_error(monkeypatch):
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    assert gpu_count() == 0  # this machine has no NVIDIA driver: NVML's failure becomes 0


def test_cpu_count_is_dasks_quota_aware_count(monkeypatch):
    assert cpu_count() == dask.system.CPU_COUNT
    monkeypatch.setattr(dask.system, "CPU_COUNT", 3)  # e.g. a container limited to 3 cores
    assert cpu_count() == 3


def test_cpu_name_is_a_non_empty_string():
    assert isinstance(cpu_name(), str) and cpu_name().strip()


def test_installed_does_not_need_the_module_to_exist():
    assert installed("pandas")
    assert not installed("no_such_module_for_the_course")
    assert not installed("no_such_module_for_the_course.sub")


def test_package_version_installed_and_missing():
    assert package_version("pandas") == pd.__version__
    assert package_version("no_such_module_for_the_course") is None
    assert package_version("cudf") is None  # the CPU environment has no GPU stack


def test_package_version_finds_gpu_wheels_under_their_cuda_suffixed_names(monkeypatch):
    def version(dist: str) -> str:
        if dist == "cudf-cu12":
            return "26.10.0"
        raise metadata.PackageNotFoundError(dist)

    monkeypatch.setattr(machine.metadata, "version", version)
    assert package_version("cudf") == "26.10.0"
    assert package_version("dask_cuda") is None


def test_this_gpu_is_none_without_a_driver(monkeypatch):
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    assert machine.this_gpu() is None  # no NVIDIA driver here; the stand-in NVML tests cover a GPU


@pytest.mark.parametrize(
    ("module", "distribution"),
    [
        ("cudf", "cudf-cu12"), ("cudf", "cudf-cu13"), ("cudf", "cudf"),  # pip CUDA 12 / 13, conda
        ("dask_cudf", "dask-cudf-cu13"), ("dask_cudf", "dask-cudf"),
        ("dask_cuda", "dask-cuda"),
        ("cupy", "cupy-cuda12x"), ("cupy", "cupy-cuda13x"), ("cupy", "cupy"),
        ("rmm", "rmm-cu13"), ("pynvml", "nvidia-ml-py"),
        ("distributed_ucxx", "distributed-ucxx-cu12"), ("distributed_ucxx", "distributed-ucxx-cu13"),
        ("distributed_ucxx", "distributed-ucxx"),
    ],
)
def test_package_version_knows_every_way_a_gpu_library_is_installed(monkeypatch, module, distribution):
    """The version table must not say "not installed" for a conda or CUDA 13 install."""
    def version(dist: str) -> str:
        if dist == distribution:
            return "26.10.0"
        raise metadata.PackageNotFoundError(dist)

    monkeypatch.setattr(machine.metadata, "version", version)
    assert package_version(module) == "26.10.0"
