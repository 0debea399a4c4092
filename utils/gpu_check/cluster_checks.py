"""Checks 1a, 1b and 2: the GPU cluster starts right, the course picks it, its dashboard plots GPUs."""

from __future__ import annotations

import contextlib
import logging
import os
import re
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

from utils.gpu_check.prerequisites import expected_gpu_workers
from utils.gpu_check.runner import Context, NotRun

GPU_PAGES = ("/individual-gpu-utilization", "/individual-gpu-memory")
GPU_METRICS = ("gpu_utilization", "gpu_memory_used", "gpu-memory-total")


@contextlib.contextmanager
def _restored_dask_config(*keys: str) -> Iterator[None]:
    """Undo global ``dask.config.set`` calls made inside (``utils.start_client`` makes some)."""
    import dask

    saved = {key: dask.config.get(key, default=None) for key in keys}
    try:
        yield
    finally:
        dask.config.set(saved)


# --- check 1a: LocalCUDACluster -----------------------------------------------------------------


def _worker_gpu_identity() -> dict[str, Any]:
    """Runs on each worker: which GPU it computes on, as CuPy sees it."""
    out: dict[str, Any] = {"cuda_visible_devices": os.environ.get("CUDA_VISIBLE_DEVICES")}
    try:
        import cupy

        device = cupy.cuda.Device()
        props = cupy.cuda.runtime.getDeviceProperties(device.id)
        name = props.get("name", b"")
        out.update(
            device=int(device.id),
            name=name.decode(errors="replace") if isinstance(name, bytes) else str(name),
            pci_bus_id=str(device.pci_bus_id),
            memory_bytes=int(props.get("totalGlobalMem", 0)),
        )
    except Exception as error:  # reported per worker
        out["error"] = f"{type(error).__name__}: {error}"
    return out


def check_cluster(ctx: Context, details: dict[str, Any]) -> str:
    from distributed import Client

    address = ctx.args.scheduler_address
    try:
        if address:
            client, cluster = Client(address, timeout="60s"), None
        else:
            from dask_cuda import LocalCUDACluster

            cluster = LocalCUDACluster(dashboard_address=":0", silence_logs=logging.ERROR)
            client = Client(cluster)
    except Exception as error:
        ctx.cluster_error = f"the cluster did not start ({type(error).__name__}: {error})"
        raise
    ctx.client, ctx.cluster = client, cluster
    details["cluster"] = type(cluster).__name__ if cluster is not None else f"external: {address}"
    workers = client.scheduler_info(n_workers=-1)["workers"]
    details["workers"] = len(workers)
    details["threads_per_worker"] = sorted({w["nthreads"] for w in workers.values()})
    details["dashboard"] = client.dashboard_link
    identities = client.run(_worker_gpu_identity)
    details["worker_gpus"] = identities
    broken = {addr: ident["error"] for addr, ident in identities.items() if "error" in ident}
    if broken:
        addr, why = next(iter(broken.items()))
        raise AssertionError(f"{len(broken)} of {len(identities)} workers cannot use a GPU ({addr}: {why})")
    distinct = sorted({ident["pci_bus_id"] for ident in identities.values()})
    details["distinct_gpus"] = len(distinct)
    names = ", ".join(sorted({ident["name"] for ident in identities.values()}))
    if not workers:
        raise AssertionError("the cluster has no workers")
    if cluster is None:
        return f"external cluster: {len(workers)} workers on {len(distinct)} GPU(s) ({names})"
    details["expected_workers"] = ctx.expected_gpus
    if len(workers) != ctx.expected_gpus:
        raise AssertionError(f"{len(workers)} workers started for {ctx.expected_gpus} visible GPU(s)")
    if len(distinct) != len(workers):
        raise AssertionError(f"{len(workers)} workers share {len(distinct)} GPU(s): {distinct}")
    return f"{len(workers)} worker(s), one per GPU, on {len(distinct)} distinct GPU(s) ({names})"


# --- check 1b: the course's own backend choice ---------------------------------------------------


def check_backend_choice(ctx: Context, details: dict[str, Any]) -> str:
    from utils import cluster as course
    from utils.backend import choose_backend, missing_gpu_packages

    missing = missing_gpu_packages()
    details["missing_gpu_packages"] = missing
    external = ctx.args.scheduler_address
    try:
        chosen = choose_backend(gpus=expected_gpu_workers())
        details["choose_backend"] = {"backend": chosen.name, "reason": chosen.reason}
    except ValueError as error:  # e.g. COURSE_BACKEND=gpu without cudf
        chosen, details["choose_backend"] = None, f"error: {error}"
        if not missing and not external:
            raise
    if missing:
        picked = f"picks {chosen.name} ({chosen.reason})" if chosen else details["choose_backend"]
        raise NotRun(
            f"cudf not installed ({', '.join(missing)} missing); the course's choose_backend() {picked}"
        )
    if not external and chosen.name != "gpu":
        raise AssertionError(f"choose_backend() picked {chosen.name}: {chosen.reason}")
    with _restored_dask_config("dataframe.backend", "dataframe.shuffle.method"):
        client = course.start_client(address=external, quiet=True)
        try:
            info = course.describe(client)
            details["describe"] = info
            details["cluster_class"] = type(client.cluster).__name__ if client.cluster else None
        finally:
            course.shutdown(client)
    if info["backend"] != "gpu" or info["dataframe_library"] != "cudf":
        raise AssertionError(f"start_client() chose {info['backend']}: {info['reason']}")
    if not external:
        if details["cluster_class"] != "LocalCUDACluster":
            raise AssertionError(f"start_client() started a {details['cluster_class']}")
        if info["workers"] != ctx.expected_gpus:
            raise AssertionError(f"{info['workers']} workers for {ctx.expected_gpus} GPU(s)")
    return f"start_client() chose gpu (cudf) on {info['workers']} worker(s): {info['reason']}"


# --- check 2: dashboard GPU pages ----------------------------------------------------------------


def dashboard_base(client: Any) -> str:
    """``http://host:port`` of the scheduler's dashboard, from the scheduler itself (the
    configured ``dashboard_link`` may be a JupyterHub proxy path)."""
    port = client.scheduler_info(n_workers=0).get("services", {}).get("dashboard")
    if not port:
        raise AssertionError("the scheduler serves no dashboard (is bokeh installed?)")
    host = urlsplit(client.scheduler.address).hostname or "127.0.0.1"
    if host in ("0.0.0.0", "::"):
        host = "127.0.0.1"
    return f"http://{host}:{port}"


def http_get(url: str, timeout: float = 30.0) -> tuple[int, str]:
    """Status code and body of a GET, ignoring any proxy settings (the dashboard is local)."""
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(url, timeout=timeout) as response:
            return response.status, response.read().decode("utf-8", errors="replace")
    except urllib.error.HTTPError as error:
        return error.code, ""


def is_bokeh_page(html: str) -> bool:
    """A Bokeh server page with at least one root model (a figure) in its document."""
    return "Bokeh" in html and re.search(r'"root_ids"\s*:\s*\[\s*"', html) is not None


def _scheduler_gpu_metrics(dask_scheduler: Any = None) -> dict[str, dict[str, Any]]:
    """Runs on the scheduler: the GPU metrics each worker last sent (what the GPU pages plot).
    A key is absent when the worker sends none; utilization may be None (e.g. on MIG slices)."""
    return {
        address: {key: ws.metrics[key] for key in GPU_METRICS if key in ws.metrics}
        for address, ws in dask_scheduler.workers.items()
    }


def _has_gpu_metrics(metrics: dict[str, Any]) -> bool:
    """Every metric key present and the memory total known: the pages have something to plot."""
    return all(key in metrics for key in GPU_METRICS) and metrics["gpu-memory-total"] is not None


def gpu_metrics(client: Any, wait_s: float) -> dict[str, dict[str, Any]]:
    """Poll until every worker has sent GPU metrics, or ``wait_s`` passes."""
    deadline = time.monotonic() + wait_s
    while True:
        metrics = client.run_on_scheduler(_scheduler_gpu_metrics)
        complete = metrics and all(_has_gpu_metrics(m) for m in metrics.values())
        if complete or time.monotonic() >= deadline:
            return metrics
        time.sleep(0.5)


def check_dashboard(ctx: Context, details: dict[str, Any]) -> str:
    client = ctx.require_client()
    base = dashboard_base(client)
    details["dashboard"] = base
    pages = {}
    for page in GPU_PAGES:
        code, html = http_get(base + page)
        pages[page] = {"http_status": code, "bokeh_document": is_bokeh_page(html)}
    details["pages"] = pages
    bad = [p for p, r in pages.items() if r["http_status"] != 200 or not r["bokeh_document"]]
    if bad:
        raise AssertionError(f"GPU page(s) did not answer with a Bokeh document: {pages}")
    metrics = gpu_metrics(client, ctx.metrics_wait_s)
    details["gpu_metrics"] = metrics
    blank = [addr for addr, m in metrics.items() if not _has_gpu_metrics(m)]
    if not metrics or blank:
        raise AssertionError(
            f"the GPU pages answer but {len(blank) or 'no'} worker(s) send no GPU metrics, so "
            "their plots are blank (workers need pynvml and a GPU)"
        )
    return f"both GPU pages answer 200 with a Bokeh document; {len(metrics)} worker(s) send GPU metrics"
