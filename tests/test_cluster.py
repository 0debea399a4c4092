"""Backend choice and the course's cluster: CPU path, GPU refusals, external scheduler."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import dask
import dask.dataframe as dd
import pandas as pd
import pytest

from utils import backend as backend_module
from utils.backend import choose_backend, to_pandas
from utils.cluster import course_client, describe, shutdown, start_client


def test_auto_without_gpu_is_cpu(monkeypatch):
    monkeypatch.delenv("COURSE_BACKEND", raising=False)
    chosen = choose_backend(gpus=0)
    assert chosen.name == "cpu" and chosen.dataframe_library == "pandas"
    assert "no NVIDIA GPU" in chosen.reason


def test_asking_for_gpu_without_one_is_an_error_not_a_cpu_run(monkeypatch):
    monkeypatch.setenv("COURSE_BACKEND", "gpu")
    with pytest.raises(ValueError, match="COURSE_BACKEND=gpu but no NVIDIA GPU is visible"):
        choose_backend(gpus=0)
    with pytest.raises(ValueError, match="no NVIDIA GPU"):
        start_client(quiet=True)


def test_gpu_without_cudf_explains_what_to_install(monkeypatch):
    monkeypatch.setattr(backend_module, "missing_gpu_packages", lambda: ["cudf", "dask_cudf"])
    with pytest.raises(ValueError, match="cudf, dask_cudf cannot be imported; pip install -r requirements-gpu.txt"):
        choose_backend("gpu", gpus=2)
    auto = choose_backend("auto", gpus=2)
    assert auto.name == "cpu" and "not installed" in auto.reason


def test_gpu_is_chosen_when_gpus_and_packages_exist(monkeypatch):
    monkeypatch.setattr(backend_module, "missing_gpu_packages", lambda: [])
    chosen = choose_backend("auto", gpus=4)
    assert chosen.name == "gpu" and chosen.dataframe_library == "cudf"


def test_unknown_backend_value(monkeypatch):
    monkeypatch.setenv("COURSE_BACKEND", "tpu")
    with pytest.raises(ValueError, match="COURSE_BACKEND must be one of auto, cpu, gpu, got 'tpu'"):
        choose_backend()


def test_cpu_cluster_summary_config_and_clean_shutdown(capsys, tiny_dataset):
    client = start_client(n_workers=2, threads_per_worker=1, backend="cpu")
    cluster = client.cluster
    try:
        printed = capsys.readouterr().out
        for label in ("Backend   : cpu (pandas)", "2 workers, 2 threads", "GPUs      : none", "Dashboard : http"):
            assert label in printed
        info = describe(client)
        assert (info["workers"], info["threads"], info["external"]) == (2, 2, False)
        assert dask.config.get("dataframe.backend") == "pandas"
        df = dd.read_csv(tiny_dataset.csv_glob, **tiny_dataset.csv_kwargs)
        assert len(df) == tiny_dataset.rows
    finally:
        shutdown(client)
    assert client.status == "closed"
    assert cluster.status.name == "closed"


def test_course_client_context_manager_closes(tiny_dataset):
    with course_client(n_workers=1, threads_per_worker=1, quiet=True, backend="cpu") as client:
        assert client.submit(sum, [1, 2, 3]).result() == 6
        cluster = client.cluster
    assert client.status == "closed" and cluster.status.name == "closed"


def test_to_pandas_passes_pandas_through_and_rejects_lazy_objects():
    frame = pd.DataFrame({"a": [1, 2]})
    assert to_pandas(frame) is frame
    with pytest.raises(TypeError, match="call .compute"):
        to_pandas(dd.from_pandas(frame, npartitions=1))


def _wait_for(path: Path, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while not path.exists():
        if time.monotonic() > deadline:
            raise TimeoutError(f"{path} did not appear")
        time.sleep(0.2)


@pytest.fixture
def external_cluster(tmp_path):
    """A real `dask scheduler` and `dask worker` in separate processes, as on a multi-node cluster."""
    scheduler_file = tmp_path / "scheduler.json"
    dask_cli = [str(Path(sys.executable).with_name("dask"))]
    env = {**os.environ, "DASK_DISTRIBUTED__LOGGING__DISTRIBUTED": "error"}
    scheduler = subprocess.Popen(
        [*dask_cli, "scheduler", "--port", "0", "--dashboard-address", ":0", "--scheduler-file", str(scheduler_file)],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    worker = None
    try:
        _wait_for(scheduler_file)
        worker = subprocess.Popen(
            [*dask_cli, "worker", "--scheduler-file", str(scheduler_file), "--nworkers", "1",
             "--nthreads", "1", "--no-dashboard", "--memory-limit", "1GiB"],
            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        import json

        yield json.loads(scheduler_file.read_text())["address"]
    finally:
        for process in (worker, scheduler):
            if process is not None:
                process.terminate()
                process.wait(timeout=30)


@pytest.mark.slow
def test_connects_to_an_external_scheduler_and_leaves_it_running(external_cluster, monkeypatch, tiny_dataset):
    monkeypatch.setenv("DASK_SCHEDULER_ADDRESS", external_cluster)
    from distributed import Client

    with Client(external_cluster) as probe:
        probe.wait_for_workers(1, timeout=60)
    client = start_client(quiet=True)
    try:
        info = describe(client)
        assert info["external"] is True and info["workers"] == 1 and info["backend"] == "cpu"
        assert "external cluster" in info["reason"]
        df = dd.read_parquet(tiny_dataset.parquet_dir)
        assert float(df["sales_amount"].sum().compute()) == pytest.approx(
            tiny_dataset.answers["total_cents"] / 100, abs=0.005
        )
    finally:
        shutdown(client)
    with Client(external_cluster, timeout=10) as again:
        assert len(again.scheduler_info()["workers"]) == 1, "shutdown must not stop an external cluster"
