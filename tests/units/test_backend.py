"""Backend choice (this machine, ``$COURSE_BACKEND``, an external cluster's workers), the shuffle policy,
what the course configured, ``reset`` and the reader (no cluster needed)."""

from __future__ import annotations

import dask
import dask.dataframe as dd
import pandas as pd
import pytest

from utils import backend as backend_module
from utils import machine
from utils.backend import (
    Backend,
    as_backend,
    choose_backend,
    configure_dask,
    current_backend,
    is_gpu_worker,
    reset,
    to_pandas,
)


@pytest.fixture
def restored_config():
    """Let a test call configure_dask: ``reset`` before and after, inside a config context that
    brings the two options back whatever the test set by hand."""
    reset()
    before = {
        "dataframe.backend": dask.config.get("dataframe.backend", default="pandas"),
        "dataframe.shuffle.method": dask.config.get("dataframe.shuffle.method", default=None),
    }
    with dask.config.set(before):
        yield
        reset()


def test_shuffle_method_is_tasks_on_gpu_only():
    assert Backend("gpu", "x").shuffle_method == "tasks"
    assert Backend("cpu", "x").shuffle_method is None
    assert Backend("gpu", "x").dask_config() == {"dataframe.backend": "cudf", "dataframe.shuffle.method": "tasks"}
    with pytest.raises(ValueError, match="must be one of cpu, gpu, got 'cudf'"):
        Backend("cudf", "not a backend name")


def test_as_backend_is_the_one_default_rule(restored_config):
    configure_dask(Backend("gpu", "pretend GPU"))
    assert as_backend() is current_backend() and as_backend().name == "gpu"
    chosen = Backend("cpu", "mine")
    assert as_backend(chosen) is chosen
    assert as_backend("cpu").name == "cpu" and as_backend("gpu").is_gpu
    with pytest.raises(ValueError, match="backend must be one of cpu, gpu, got 'tpu'"):
        as_backend("tpu")


def test_reset_forgets_the_choice_and_puts_dask_back(restored_config):
    dask.config.set({"dataframe.backend": "pandas", "dataframe.shuffle.method": None})
    configure_dask(Backend("gpu", "pretend GPU"))
    configure_dask(Backend("cpu", "then CPU"))
    assert current_backend() == Backend("cpu", "then CPU")
    reset()
    assert current_backend() == Backend("cpu", "dataframe.backend is pandas")
    assert (dask.config.get("dataframe.backend"), dask.config.get("dataframe.shuffle.method")) == ("pandas", None)
    configure_dask(Backend("gpu", "pretend GPU"))
    reset()
    assert dask.config.get("dataframe.backend") == "pandas" and current_backend().name == "cpu"
    reset()  # nothing configured: nothing to undo
    assert current_backend().name == "cpu"


def test_the_reader_keeps_the_recorded_reason_only_while_dask_agrees(restored_config):
    configure_dask(Backend("gpu", "2 NVIDIA GPU(s) found"))
    assert current_backend() == Backend("gpu", "2 NVIDIA GPU(s) found")
    with dask.config.set({"dataframe.backend": "pandas"}):  # a learner switches back by hand
        assert current_backend() == Backend("cpu", "dataframe.backend is pandas")
    assert current_backend() == Backend("gpu", "2 NVIDIA GPU(s) found")


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


# --- an external cluster: the chooser reads its workers' reports -------------------------------

def report(gpu: str | None = None, dask_cuda: bool = True, missing: tuple[str, ...] = ()) -> dict:
    """One worker's report, as ``utils.cluster.workers_hardware`` gathers it."""
    device = {"name": "NVIDIA H100", "uuid": gpu, "memory_bytes": 80 * 10**9} if gpu else None
    return {"gpu": device, "dask_cuda": dask_cuda and gpu is not None, "gpu_packages_missing": list(missing)}


@pytest.fixture
def gpu_stack_here(monkeypatch):
    monkeypatch.setattr(backend_module, "missing_gpu_packages", lambda: [])
    monkeypatch.delenv("COURSE_BACKEND", raising=False)


def test_external_cpu_workers_give_cpu(gpu_stack_here):
    chosen = choose_backend(workers={"tcp://a:1": report(), "tcp://b:1": report()})
    assert chosen == Backend("cpu", "external cluster: no NVIDIA GPU found")


def test_external_gpu_workers_give_gpu_counting_distinct_devices(gpu_stack_here):
    workers = {"tcp://a:1": report("GPU-0"), "tcp://b:1": report("GPU-0"), "tcp://c:1": report("GPU-1")}
    assert all(is_gpu_worker(r) for r in workers.values())
    chosen = choose_backend(workers=workers)
    assert chosen == Backend("gpu", "external cluster: 2 NVIDIA GPU(s) found and cudf/dask-cuda are installed")


def test_external_cluster_is_cpu_unless_every_worker_is_a_gpu_worker(gpu_stack_here):
    plain = report("GPU-1", dask_cuda=False)  # `dask worker` on a GPU machine: sees the GPU, is a CPU worker
    no_cudf = report("GPU-2", missing=("cudf",))
    assert not is_gpu_worker(plain) and not is_gpu_worker(no_cudf)
    chosen = choose_backend(workers={"tcp://a:1": report("GPU-0"), "tcp://b:1": plain, "tcp://c:1": no_cudf})
    assert chosen.name == "cpu" and chosen.reason.startswith("external cluster: 2 of 3 workers are not dask-cuda")
    with pytest.raises(ValueError, match="COURSE_BACKEND=gpu but no NVIDIA GPU is visible"):
        choose_backend("gpu", workers={"tcp://a:1": report("GPU-0"), "tcp://b:1": plain})


def test_external_choice_honours_the_request_and_the_env_var(gpu_stack_here, monkeypatch):
    workers = {"tcp://a:1": report("GPU-0")}
    requested = choose_backend("cpu", workers=workers)
    assert requested == Backend("cpu", "external cluster: COURSE_BACKEND=cpu was requested")
    monkeypatch.setenv("COURSE_BACKEND", "cpu")
    assert choose_backend(workers=workers).name == "cpu"
    monkeypatch.setenv("COURSE_BACKEND", "gpu")
    assert choose_backend(workers=workers).reason == (
        "external cluster: COURSE_BACKEND=gpu was requested and 1 GPU(s) are visible"
    )


def test_an_external_cluster_without_workers_is_an_error():
    with pytest.raises(ValueError, match="has no workers; start some"):
        choose_backend(workers={})


def test_the_local_choice_reads_the_env_var(monkeypatch):
    monkeypatch.setattr(backend_module, "missing_gpu_packages", lambda: [])
    monkeypatch.setenv("COURSE_BACKEND", "cpu")
    assert choose_backend(gpus=2) == Backend("cpu", "COURSE_BACKEND=cpu was requested")
    monkeypatch.setenv("COURSE_BACKEND", " GPU ")
    assert choose_backend(gpus=2).name == "gpu"
    assert choose_backend("cpu", gpus=2).name == "cpu", "an explicit request wins over the variable"
