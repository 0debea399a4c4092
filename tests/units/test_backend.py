"""Backend choice, the shuffle policy and what the course configured (no cluster needed)."""

from __future__ import annotations

import dask
import dask.dataframe as dd
import pandas as pd
import pytest

from utils import backend as backend_module
from utils import machine
from utils.backend import Backend, choose_backend, configure_dask, current_backend, shuffle_method, to_pandas


@pytest.fixture
def restored_config(monkeypatch):
    """Let a test call configure_dask: the two options and the recorded backend come back after."""
    monkeypatch.setattr(backend_module, "_configured", None)
    before = {
        "dataframe.backend": dask.config.get("dataframe.backend", default="pandas"),
        "dataframe.shuffle.method": dask.config.get("dataframe.shuffle.method", default=None),
    }
    with dask.config.set(before):
        yield


def test_shuffle_method_is_tasks_on_gpu_only():
    assert shuffle_method("gpu") == "tasks"
    assert shuffle_method("cpu") is None
    with pytest.raises(ValueError, match="must be one of cpu, gpu, got 'cudf'"):
        shuffle_method("cudf")


def test_configure_dask_cpu_is_what_current_backend_reports(restored_config):
    dask.config.set({"dataframe.backend": "cudf", "dataframe.shuffle.method": "tasks"})
    chosen = Backend("cpu", "because the test said so")
    configure_dask(chosen)
    assert dask.config.get("dataframe.backend") == "pandas"
    assert dask.config.get("dataframe.shuffle.method") is None
    now = current_backend()
    assert (now.name, now.reason, now.dataframe_library) == ("cpu", "because the test said so", "pandas")


def test_configure_dask_gpu_sets_cudf_and_the_tasks_shuffle(restored_config):
    configure_dask(Backend("gpu", "pretend GPU"))  # only sets options: nothing imports cudf here
    assert dask.config.get("dataframe.backend") == "cudf"
    assert dask.config.get("dataframe.shuffle.method") == "tasks"
    assert (current_backend().name, current_backend().dataframe_library) == ("gpu", "cudf")


def test_current_backend_follows_the_config_when_nothing_or_something_else_was_configured(restored_config):
    dask.config.set({"dataframe.backend": "pandas"})
    assert current_backend() == Backend("cpu", "dataframe.backend is pandas")
    configure_dask(Backend("cpu", "recorded reason"))
    dask.config.set({"dataframe.backend": "cudf"})  # changed behind the course's back
    assert current_backend() == Backend("gpu", "dataframe.backend is cudf")


def test_auto_without_gpu_is_cpu(monkeypatch):
    monkeypatch.delenv("COURSE_BACKEND", raising=False)
    chosen = choose_backend(gpus=0)
    assert chosen.name == "cpu" and chosen.dataframe_library == "pandas"
    assert "no NVIDIA GPU" in chosen.reason


def test_asking_for_gpu_without_one_is_an_error_not_a_cpu_run(monkeypatch):
    monkeypatch.setenv("COURSE_BACKEND", "gpu")
    with pytest.raises(ValueError, match="COURSE_BACKEND=gpu but no NVIDIA GPU is visible"):
        choose_backend(gpus=0)


def test_gpu_count_comes_from_machine_and_honours_cuda_visible_devices(monkeypatch):
    monkeypatch.setattr(backend_module, "missing_gpu_packages", lambda: [])
    monkeypatch.setattr(machine, "_nvml_device_count", lambda: 2)
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    assert choose_backend("auto").name == "gpu"
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")
    assert choose_backend("auto").name == "cpu"
    with pytest.raises(ValueError, match="no NVIDIA GPU is visible"):
        choose_backend("gpu")


def test_gpu_without_cudf_gives_the_one_install_hint(monkeypatch):
    monkeypatch.setattr(backend_module, "missing_gpu_packages", lambda: ["cudf", "dask_cudf"])
    with pytest.raises(ValueError, match="cudf, dask_cudf cannot be imported") as error:
        choose_backend("gpu", gpus=2)
    assert machine.GPU_INSTALL_HINT in str(error.value)
    auto = choose_backend("auto", gpus=2)
    assert auto.name == "cpu" and "not installed" in auto.reason


def test_missing_gpu_packages_asks_machine_installed(monkeypatch):
    monkeypatch.setattr(backend_module, "installed", lambda name: name != "dask_cuda")
    assert backend_module.missing_gpu_packages() == ["dask_cuda"]


def test_gpu_is_chosen_when_gpus_and_packages_exist(monkeypatch):
    monkeypatch.setattr(backend_module, "missing_gpu_packages", lambda: [])
    chosen = choose_backend("auto", gpus=4)
    assert chosen.name == "gpu" and chosen.dataframe_library == "cudf"


def test_unknown_backend_value(monkeypatch):
    monkeypatch.setenv("COURSE_BACKEND", "tpu")
    with pytest.raises(ValueError, match="COURSE_BACKEND must be one of auto, cpu, gpu, got 'tpu'"):
        choose_backend()


def test_to_pandas_passes_pandas_through_and_rejects_lazy_objects():
    frame = pd.DataFrame({"a": [1, 2]})
    assert to_pandas(frame) is frame
    with pytest.raises(TypeError, match="call .compute"):
        to_pandas(dd.from_pandas(frame, npartitions=1))
