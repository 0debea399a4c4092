"""Checks 1a, 1b and 2: the GPU cluster starts right, the course picks it by itself, and its
dashboard plots every worker's GPU."""

from __future__ import annotations

import os
import re
import time
import urllib.request

import pytest

from utils.machine import gpu_count

pytestmark = pytest.mark.gpu

GPU_PAGES = ("/individual-gpu-utilization", "/individual-gpu-memory")
GPU_METRICS = ("gpu_utilization", "gpu_memory_used", "gpu-memory-total")


def _worker_gpu() -> dict:
    """Runs on each worker: the GPU it computes on, as CuPy sees it."""
    import cupy

    device = cupy.cuda.Device()
    name = cupy.cuda.runtime.getDeviceProperties(device.id)["name"]
    name = name.decode(errors="replace") if isinstance(name, bytes) else str(name)
    return {"cuda_visible_devices": os.environ.get("CUDA_VISIBLE_DEVICES"), "device": int(device.id),
            "name": name, "pci_bus_id": str(device.pci_bus_id)}


def test_1a_local_cuda_cluster_has_one_worker_per_gpu(client, record_property):
    workers = client.scheduler_info(n_workers=-1)["workers"]
    gpus = client.run(_worker_gpu)
    distinct = sorted({gpu["pci_bus_id"] for gpu in gpus.values()})
    names = ", ".join(sorted({gpu["name"] for gpu in gpus.values()}))
    record_property("worker_gpus", gpus)
    record_property("summary", f"{len(workers)} worker(s) on {len(distinct)} distinct GPU(s) ({names})")
    assert workers, "the cluster has no workers"
    if client.cluster is None:  # an existing cluster: workers may share a GPU; the summary says how
        expected = os.environ.get("GPU_CHECK_WORKERS")  # tools.gpu.check --workers N waited for them
        if expected:
            assert len(workers) == int(expected), f"{len(workers)} workers, expected {expected}"
        if os.environ.get("GPU_CHECK_SHARED_GPU"):  # tools.gpu.check --shared-gpu: several workers on GPU 0
            devices = sorted({str(gpu["cuda_visible_devices"]).split(",")[0] for gpu in gpus.values()})
            assert len(workers) >= 2 and len(distinct) == 1, f"{len(workers)} workers on {len(distinct)} GPU(s)"
            assert devices == ["0"], f"the workers compute on CUDA_VISIBLE_DEVICES {devices}, expected GPU 0"
        return
    assert type(client.cluster).__name__ == "LocalCUDACluster"
    assert len(workers) == gpu_count(), f"{len(workers)} workers for {gpu_count()} visible GPU(s)"
    assert len(distinct) == len(workers), f"{len(workers)} workers share {len(distinct)} GPU(s): {distinct}"


def test_1b_course_picks_local_cuda_cluster_and_cudf(monkeypatch, record_property):
    pytest.importorskip("cudf", reason="cudf not installed")
    pytest.importorskip("dask_cudf", reason="cudf not installed (dask_cudf missing)")
    import dask

    from utils.backend import choose_backend
    from utils.cluster import describe, shutdown, start_client

    monkeypatch.delenv("COURSE_BACKEND", raising=False)  # the unaided choice
    chosen = choose_backend()
    record_property("choose_backend", f"{chosen.name}: {chosen.reason}")
    assert chosen.name == "gpu", chosen.reason
    saved = {key: dask.config.get(key, None) for key in ("dataframe.backend", "dataframe.shuffle.method")}
    course = start_client(quiet=True)
    try:
        info, cluster = describe(course), type(course.cluster).__name__
    finally:
        shutdown(course)
        dask.config.set(saved)  # start_client configures Dask globally
    record_property("describe", info)
    record_property("summary", f"start_client() chose {info['backend']} ({info['dataframe_library']}) on "
                    f"{info['workers']} worker(s): {info['reason']}")
    assert (info["backend"], info["dataframe_library"]) == ("gpu", "cudf"), info["reason"]
    if not info["external"]:
        assert cluster == "LocalCUDACluster" and info["workers"] == gpu_count()


def _gpu_metrics(dask_scheduler=None) -> dict:
    """Runs on the scheduler: the GPU metrics each worker last sent, which the GPU pages plot."""
    return {
        address: {key: worker.metrics[key] for key in GPU_METRICS if key in worker.metrics}
        for address, worker in dask_scheduler.workers.items()
    }


def _plottable(metrics: dict) -> bool:
    """Every key sent and the memory total known (utilization may be None, e.g. on MIG slices)."""
    return all(key in metrics for key in GPU_METRICS) and metrics["gpu-memory-total"] is not None


def test_2_dashboard_gpu_pages_plot_every_worker(client, record_property):
    """A CPU cluster answers both pages too, with blank plots: the metrics are what proves the GPU."""
    from utils.cluster import dashboard_address

    base = dashboard_address(client)
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # local: no proxy
    for page in GPU_PAGES:
        with opener.open(base + page, timeout=30) as response:  # an HTTP error status raises
            html = response.read().decode(errors="replace")
        assert "Bokeh" in html and re.search(r'"root_ids"\s*:\s*\[\s*"', html), f"{page}: no Bokeh document"
    deadline = time.monotonic() + 20  # workers send metrics with their heartbeats
    while True:
        metrics = client.run_on_scheduler(_gpu_metrics)
        if (metrics and all(map(_plottable, metrics.values()))) or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    record_property("gpu_metrics", metrics)
    blank = sorted(address for address, sent in metrics.items() if not _plottable(sent))
    assert metrics and not blank, f"no GPU metrics from {blank or 'any worker'}: the GPU plots are blank"
    record_property("summary", f"both GPU pages answer; {len(metrics)} worker(s) send GPU metrics")
