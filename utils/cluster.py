"""One call that gives a notebook a Dask ``Client`` on the right hardware.

- ``$DASK_SCHEDULER_ADDRESS`` set: connect to that existing (possibly multi-node) cluster.
- GPUs + cudf + dask-cuda: ``LocalCUDACluster``, one worker per GPU, cudf spilling on.
- Otherwise: ``LocalCluster`` with the pandas backend.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from distributed import Client, LocalCluster

from utils.backend import Backend, choose_backend, configure_dask, gpu_count, missing_gpu_packages

SCHEDULER_ENV_VAR = "DASK_SCHEDULER_ADDRESS"
QUIET = logging.ERROR


def _default_cpu_workers() -> tuple[int, int]:
    """Workers and threads for a CPU cluster: up to 4 single-process workers sharing the cores."""
    cores = os.cpu_count() or 1
    workers = min(4, cores)
    return workers, max(1, cores // workers)


def _start_local_cluster(
    backend: Backend,
    n_workers: int | None,
    threads_per_worker: int | None,
    memory_limit: str | float | None,
    **kwargs: Any,
):
    common = {"dashboard_address": ":0", "silence_logs": QUIET}
    if backend.name == "gpu":
        from dask_cuda import LocalCUDACluster

        options = {"enable_cudf_spill": True, **common, **kwargs}
        if n_workers is not None:
            options["n_workers"] = n_workers
        if threads_per_worker is not None:
            options["threads_per_worker"] = threads_per_worker
        if memory_limit is not None:
            options["memory_limit"] = memory_limit
        return LocalCUDACluster(**options)
    default_workers, default_threads = _default_cpu_workers()
    return LocalCluster(
        n_workers=n_workers or default_workers,
        threads_per_worker=threads_per_worker or default_threads,
        memory_limit=memory_limit if memory_limit is not None else "auto",
        processes=True,
        **common,
        **kwargs,
    )


def _worker_hardware() -> dict[str, Any]:
    """Runs on each worker of an external cluster: what it can use."""
    return {"gpus": gpu_count(), "gpu_packages_missing": missing_gpu_packages()}


def _choose_for_external(client: Client, requested: str | None) -> Backend:
    reports = list(client.run(_worker_hardware).values())
    if not reports:
        raise ValueError(f"the scheduler at {client.scheduler.address} has no workers; start some")
    all_gpu = all(r["gpus"] > 0 and not r["gpu_packages_missing"] for r in reports)
    gpus = sum(r["gpus"] for r in reports) if all_gpu else 0
    backend = choose_backend(requested, gpus=gpus)
    return Backend(backend.name, f"external cluster: {backend.reason}")


def start_client(
    n_workers: int | None = None,
    threads_per_worker: int | None = None,
    memory_limit: str | float | None = None,
    backend: str | None = None,
    address: str | None = None,
    quiet: bool = False,
    **cluster_kwargs: Any,
) -> Client:
    """Start (or connect to) the course's cluster and return its ``Client``.

    ``address`` (or ``$DASK_SCHEDULER_ADDRESS``) connects to an existing scheduler. ``backend``
    (or ``$COURSE_BACKEND``) is ``auto``, ``cpu`` or ``gpu``. Extra keyword arguments go to
    ``LocalCluster`` / ``LocalCUDACluster`` (e.g. ``rmm_pool_size``, ``protocol``).
    """
    address = address or os.environ.get(SCHEDULER_ENV_VAR)
    if address:
        client = Client(address)
        try:
            chosen = _choose_for_external(client, backend)
        except BaseException:
            client.close()
            raise
    else:
        chosen = choose_backend(backend)
        cluster = _start_local_cluster(chosen, n_workers, threads_per_worker, memory_limit, **cluster_kwargs)
        client = Client(cluster)
    configure_dask(chosen)
    client.course_backend = chosen  # read by describe(); a plain attribute on the Client
    if not quiet:
        print(summary(client))
    return client


def describe(client: Client) -> dict[str, Any]:
    """Backend, workers, threads, memory and GPUs of the cluster behind ``client``."""
    workers = client.scheduler_info(n_workers=-1)["workers"].values()
    gpus = [w["gpu"]["name"] for w in workers if isinstance(w.get("gpu"), dict) and "name" in w["gpu"]]
    backend: Backend | None = getattr(client, "course_backend", None)
    return {
        "backend": backend.name if backend else "unknown",
        "dataframe_library": backend.dataframe_library if backend else "unknown",
        "reason": backend.reason if backend else "",
        "workers": len(workers),
        "threads": sum(w["nthreads"] for w in workers),
        "memory_bytes": sum(w.get("memory_limit") or 0 for w in workers),
        "gpus": gpus,
        "external": client.cluster is None,
        "dashboard": client.dashboard_link,
    }


def summary(client: Client) -> str:
    """A short, readable description of the cluster, printed by ``start_client``."""
    info = describe(client)
    where = "external scheduler" if info["external"] else "local cluster"
    gpus = ", ".join(info["gpus"]) if info["gpus"] else "none"
    return "\n".join(
        [
            f"Backend   : {info['backend']} ({info['dataframe_library']}) - {info['reason']}",
            f"Cluster   : {where}, {info['workers']} workers, {info['threads']} threads, "
            f"{info['memory_bytes'] / 2**30:.1f} GiB memory limit in total",
            f"GPUs      : {gpus}",
            f"Dashboard : {info['dashboard']}",
        ]
    )


def shutdown(client: Client) -> None:
    """Close the client and the cluster it started; an external cluster is left running."""
    cluster = client.cluster
    client.close()
    if cluster is not None:
        cluster.close()


@contextmanager
def course_client(**kwargs: Any) -> Iterator[Client]:
    """``with course_client() as client:`` - ``start_client`` with a guaranteed ``shutdown``."""
    client = start_client(**kwargs)
    try:
        yield client
    finally:
        shutdown(client)
