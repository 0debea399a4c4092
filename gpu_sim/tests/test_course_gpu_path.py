"""The course's own GPU path (``utils``) on the simulated stack: what a learner's setup cells do on a
GPU box, and the defects a source review found (each of these tests failed before its fix).
Simulated: proves code paths and library contracts, never GPU speed or memory."""

from __future__ import annotations

import dask
import pytest

from utils import backend as backend_module
from utils import pipeline
from utils.cluster import describe, shutdown, start_client
from utils.partitions import GPU_BAND, advice_for_client

SIMULATED_MEMORY = 80 * 2**30  # GPU_SIM_MEMORY_BYTES unset: the simulated pynvml's default


@pytest.fixture
def gpu_mode(monkeypatch):
    """COURSE_BACKEND=gpu on one simulated GPU; Dask's options and the recorded backend come back after."""
    monkeypatch.setenv("COURSE_BACKEND", "gpu")
    monkeypatch.setenv("GPU_SIM_DEVICES", "1")
    monkeypatch.delenv("DASK_SCHEDULER_ADDRESS", raising=False)
    monkeypatch.delenv("GPU_SIM_MEMORY_BYTES", raising=False)
    monkeypatch.setattr(backend_module, "_configured", None)
    keys = ("dataframe.backend", "dataframe.shuffle.method")
    with dask.config.set({key: dask.config.get(key, default=None) for key in keys}):
        yield


def test_the_pipeline_cluster_shape_asked_before_start_client_keeps_one_worker_per_gpu(gpu_mode):
    """03's setup calls ``cluster_shape()`` before ``start_client``: it must not ask LocalCUDACluster
    for one worker per core (before the fix: "Can not scale beyond visible devices" on one GPU)."""
    assert dask.config.get("dataframe.backend") == "pandas"  # the premise: nothing configured yet
    shape = pipeline.cluster_shape()
    assert shape == {}
    client = start_client(quiet=True, **shape)
    try:
        info = describe(client)
    finally:
        shutdown(client)
    assert info["backend"] == "gpu" and info["workers"] == 1 and info["threads"] == 1, info


def test_partition_advice_reads_gpu_memory_from_the_workers(gpu_mode):
    """Nanny-started dask-cuda workers have no ``"gpu"`` entry in ``scheduler_info()`` (before the
    fix: KeyError in 02 and, through ``pipeline.csv_blocksize``, in 03)."""
    client = start_client(quiet=True)
    try:
        workers = client.scheduler_info(n_workers=-1)["workers"]
        assert all("gpu" not in worker for worker in workers.values()), workers  # the premise
        advice = advice_for_client(client)
    finally:
        shutdown(client)
    assert (advice.low, advice.high) == tuple(int(SIMULATED_MEMORY * fraction) for fraction in GPU_BAND)
