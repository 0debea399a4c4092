"""What the course reads from the workers of a cluster, checked on CPU workers that "see" GPUs
through the simulated RAPIDS stack on their path (gpu_sim: its ``pynvml`` answers for
simulated devices): the GPU names come from the workers themselves, and an external cluster is
labelled GPU only when its workers are dask-cuda workers. Nothing here runs on a GPU."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import dask
import pytest

from utils import backend as backend_module
from utils.base.paths import REPO_ROOT
from utils.cluster import describe, shutdown, start_client, summary

GPU_SIM = REPO_ROOT / "gpu_sim"
GPU_NAMES = "Simulated H200 A;Simulated H200 B"


def _sim_module(name: str, path: Path):
    """Import a simulation helper in this process under ``name``, so ``client.run`` sends the
    function by reference and the workers import the same module from their own path."""
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def sim_gpu_cluster():
    """Two plain `dask worker` processes (not dask-cuda workers) that see two simulated GPUs through
    NVML and can import the simulated cudf/dask_cudf/dask_cuda: like CPU workers on a GPU machine."""
    from utils.processes import external_cluster

    path = os.pathsep.join([str(GPU_SIM), os.environ.get("PYTHONPATH", "")])
    env = {"PYTHONPATH": path.rstrip(os.pathsep), "GPU_SIM_DEVICES": GPU_NAMES, "CUDA_VISIBLE_DEVICES": "1,0"}
    with external_cluster(n_workers=2, threads_per_worker=1, memory_limit="1GiB", env=env) as cluster:
        yield cluster.address


@pytest.fixture
def client_has_gpu_stack(monkeypatch):
    """This (notebook) process pretends cudf & co. are importable; Dask's options come back after."""
    monkeypatch.setattr(backend_module, "missing_gpu_packages", lambda: [])
    backend_module.reset()
    monkeypatch.delenv("COURSE_BACKEND", raising=False)
    keys = ("dataframe.backend", "dataframe.shuffle.method")
    with dask.config.set({key: dask.config.get(key, default=None) for key in keys}):
        yield
        backend_module.reset()


def test_the_simulation_is_not_on_this_process_path():
    """The premise: only the workers see the simulation, so what the tests read came from them."""
    for module in ("pynvml", "cudf", "dask_cuda", "rmm"):
        spec = importlib.util.find_spec(module)
        assert spec is None or "gpu_sim" not in str(spec.origin or spec.submodule_search_locations), spec


@pytest.mark.slow
def test_gpu_names_come_from_the_workers(sim_gpu_cluster, client_has_gpu_stack):
    client = start_client(address=sim_gpu_cluster, quiet=True)
    try:
        info = describe(client)
        text = summary(client)
    finally:
        shutdown(client)
    # CUDA_VISIBLE_DEVICES=1,0: each worker computes on its first entry, device 1
    assert info["gpus"] == ["Simulated H200 B"], info
    assert info["gpu_workers"] == 2
    assert "GPUs      : Simulated H200 B (2 workers on 1 GPU)" in text, text


def _describe_external(address: str) -> dict:
    """Connect the course's client to ``address``, describe the cluster, disconnect."""
    client = start_client(address=address, quiet=True)
    try:
        return describe(client)
    finally:
        shutdown(client)


@pytest.mark.slow
def test_external_cpu_workers_that_see_gpus_are_not_a_gpu_cluster(sim_gpu_cluster, client_has_gpu_stack):
    info = _describe_external(sim_gpu_cluster)
    assert (info["backend"], info["dataframe_library"]) == ("cpu", "pandas"), info["reason"]
    assert "not dask-cuda workers" in info["reason"]
    assert dask.config.get("dataframe.backend") == "pandas"


@pytest.mark.slow
def test_external_dask_cuda_workers_are_a_gpu_cluster(sim_gpu_cluster, client_has_gpu_stack):
    from distributed import Client

    helper = _sim_module("gpu_sim_helpers", GPU_SIM / "gpu_sim_helpers.py")
    with Client(sim_gpu_cluster) as setup:
        workers = sorted(setup.scheduler_info(n_workers=-1)["workers"])
        setup.run(helper.become_dask_cuda_worker, workers=workers[:1])
        half = _describe_external(sim_gpu_cluster)
        assert half["backend"] == "cpu" and "1 of 2 workers" in half["reason"], half["reason"]
        setup.run(helper.become_dask_cuda_worker, workers=workers[1:])
        full = _describe_external(sim_gpu_cluster)
    assert (full["backend"], full["dataframe_library"]) == ("gpu", "cudf"), full["reason"]
    assert full["reason"].startswith("external cluster: 1 NVIDIA GPU(s) found"), full["reason"]
    assert dask.config.get("dataframe.backend") == "cudf"
