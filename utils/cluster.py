"""One call that gives a notebook a Dask ``Client`` on the right hardware.

- ``$DASK_SCHEDULER_ADDRESS`` set: connect to that existing (possibly multi-node) cluster.
  Connecting means trusting it: the scheduler's workers run whatever code clients send them,
  and the scheduler can ask this client's process to run code too.
- GPUs + cudf + dask-cuda: ``LocalCUDACluster``, one worker per GPU, cudf spilling on.
- Otherwise: ``LocalCluster`` with the pandas backend.

A local cluster's scheduler, workers and dashboard listen on 127.0.0.1 only; set
``$COURSE_DASHBOARD_ADDRESS`` (e.g. ``0.0.0.0:8787``) to open the dashboard to other machines.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from distributed import Client, LocalCluster

from utils.backend import Backend, choose_backend, configure_dask, current_backend, missing_gpu_packages
from utils.machine import cpu_count, gpu_count

SCHEDULER_ENV_VAR = "DASK_SCHEDULER_ADDRESS"
DASHBOARD_ENV_VAR = "COURSE_DASHBOARD_ADDRESS"
LOCAL_HOST = "127.0.0.1"
DEFAULT_DASHBOARD_ADDRESS = f"{LOCAL_HOST}:0"  # a free port, reachable from this machine only
CONNECT_TIMEOUT_S = 5  # Dask's default is 30 s: too long to wait for a mistyped address
SCHEDULER_PROTOCOLS = ("tcp", "tls", "ucx", "ws", "wss")
QUIET = logging.ERROR

_FIX_ADDRESS = (
    f"unset {SCHEDULER_ENV_VAR} to start a local cluster, or start one with `dask scheduler` "
    f"and set {SCHEDULER_ENV_VAR} to the address it prints (e.g. tcp://10.0.0.5:8786)"
)


class SchedulerAddressError(ValueError):
    """``$DASK_SCHEDULER_ADDRESS`` (or ``address=``) is not a scheduler address."""


class SchedulerUnreachableError(ConnectionError):
    """No scheduler answered at the given address in time."""


def dashboard_bind_address() -> str:
    """Where a local cluster's dashboard listens: ``$COURSE_DASHBOARD_ADDRESS`` when set (the
    explicit opt-in to remote access, e.g. ``0.0.0.0:8787``), else 127.0.0.1 on a free port."""
    return os.environ.get(DASHBOARD_ENV_VAR, "").strip() or DEFAULT_DASHBOARD_ADDRESS


def check_scheduler_address(address: str) -> str:
    """``address`` stripped, or ``SchedulerAddressError`` saying what is wrong with it and how
    to fix it. Accepts ``tcp://host:port`` (and tls/ucx/ws/wss) or ``host:port``."""
    from distributed.comm.addressing import parse_address, parse_host_port

    cleaned = address.strip()
    protocol, location = parse_address(cleaned, strict=False)
    problem = None
    if protocol not in SCHEDULER_PROTOCOLS:
        problem = f"protocol {protocol!r} is not one Dask speaks ({', '.join(SCHEDULER_PROTOCOLS)})"
    else:
        try:
            host, port = parse_host_port(location)
        except ValueError:
            host, port = "", None
        if not host or port is None:
            problem = "expected the form tcp://host:port"
        elif not 0 < port < 65536:
            problem = f"port {port} is out of range"
    if problem:
        raise SchedulerAddressError(
            f"{SCHEDULER_ENV_VAR}={address!r} is not a scheduler address: {problem}; {_FIX_ADDRESS}"
        )
    return cleaned


def _connect(address: str, timeout: float) -> Client:
    address = check_scheduler_address(address)
    try:
        return Client(address, timeout=timeout)
    except OSError:
        pass  # re-raised below without Dask's retry traceback
    raise SchedulerUnreachableError(
        f"no Dask scheduler answered at {SCHEDULER_ENV_VAR}={address!r} within {timeout:g} s; {_FIX_ADDRESS}"
    )


def _default_cpu_workers() -> tuple[int, int]:
    """Workers and threads for a CPU cluster: up to 4 single-process workers sharing the cores
    this process may use (``utils.machine.cpu_count``, which honours container CPU quotas)."""
    cores = cpu_count()
    workers = max(1, min(4, cores))
    return workers, max(1, cores // workers)


def _start_local_cluster(
    backend: Backend,
    n_workers: int | None,
    threads_per_worker: int | None,
    memory_limit: str | float | None,
    **kwargs: Any,
):
    options: dict[str, Any] = {"dashboard_address": dashboard_bind_address(), "silence_logs": QUIET}
    if "host" not in kwargs and "interface" not in kwargs:
        options["host"] = LOCAL_HOST  # scheduler and workers: this machine only
    if backend.name == "gpu":
        from dask_cuda import LocalCUDACluster

        options = {"enable_cudf_spill": True, **options, **kwargs}
        if n_workers is not None:
            options["n_workers"] = n_workers
        if threads_per_worker is not None:
            options["threads_per_worker"] = threads_per_worker
        if memory_limit is not None:
            options["memory_limit"] = memory_limit
        return LocalCUDACluster(**options)
    default_workers, default_threads = _default_cpu_workers()
    options = {
        "n_workers": n_workers or default_workers,
        "threads_per_worker": threads_per_worker or default_threads,
        "memory_limit": memory_limit if memory_limit is not None else "auto",
        "processes": True,
        **options,
        **kwargs,
    }
    return LocalCluster(**options)


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
    connect_timeout: float = CONNECT_TIMEOUT_S,
    local: bool = False,
    **cluster_kwargs: Any,
) -> Client:
    """Start (or connect to) the course's cluster and return its ``Client``.

    ``address`` (or ``$DASK_SCHEDULER_ADDRESS``) connects to an existing scheduler, giving up
    after ``connect_timeout`` seconds with ``SchedulerUnreachableError``; a malformed address
    raises ``SchedulerAddressError``. ``backend`` (or ``$COURSE_BACKEND``) is ``auto``, ``cpu``
    or ``gpu``. Extra keyword arguments go to ``LocalCluster`` / ``LocalCUDACluster`` (e.g.
    ``rmm_pool_size``, ``protocol``, ``dashboard_address``). ``local=True`` always starts a local
    cluster, even where ``$DASK_SCHEDULER_ADDRESS`` is set: for notebooks that size their own
    workers (memory budgets, failures) and must not change a shared cluster.
    """
    address = address or (None if local else os.environ.get(SCHEDULER_ENV_VAR))
    if address is not None and address.strip():
        client = _connect(address, connect_timeout)
        try:
            chosen = _choose_for_external(client, backend)
        except BaseException:
            client.close()
            raise
    else:
        chosen = choose_backend(backend)
        cluster = _start_local_cluster(chosen, n_workers, threads_per_worker, memory_limit, **cluster_kwargs)
        try:
            client = Client(cluster)
        except BaseException:
            cluster.close()
            raise
    configure_dask(chosen)
    if not quiet:
        print(summary(client))
    return client


def dashboard_link(client: Client, page: str = "status") -> str:
    """The dashboard ``page`` (``status``, ``individual-gpu-memory``, ...) as a learner's browser
    opens it: ``client.dashboard_link`` with its last path segment replaced, so a proxied
    ``distributed.dashboard.link`` template (JupyterHub, Binder) is kept."""
    link = client.dashboard_link
    if not link:
        raise RuntimeError("the scheduler serves no dashboard (is bokeh installed?)")
    parts = urlsplit(link)
    base, _, _ = parts.path.rpartition("/")
    return urlunsplit(parts._replace(path=f"{base}/{page.lstrip('/')}"))


def dashboard_address(client: Client) -> str:
    """``http://host:port`` of the scheduler's dashboard, asked of the scheduler itself, for
    fetching pages from Python (``dashboard_link`` may be a proxy path that only a browser
    behind JupyterHub can follow). A wildcard bind (0.0.0.0) is reached through 127.0.0.1."""
    port = client.scheduler_info(n_workers=0).get("services", {}).get("dashboard")
    if not port:
        raise RuntimeError("the scheduler serves no dashboard (is bokeh installed?)")
    host = urlsplit(client.scheduler.address).hostname or LOCAL_HOST
    if host in ("0.0.0.0", "::"):
        host = LOCAL_HOST
    if ":" in host:
        host = f"[{host}]"
    return f"http://{host}:{port}"


def describe(client: Client) -> dict[str, Any]:
    """Backend, workers, threads, memory and GPUs of the cluster behind ``client``."""
    workers = client.scheduler_info(n_workers=-1)["workers"].values()
    gpus = [w["gpu"]["name"] for w in workers if isinstance(w.get("gpu"), dict) and "name" in w["gpu"]]
    backend = current_backend()
    try:
        dashboard: str | None = dashboard_link(client)
    except RuntimeError:
        dashboard = None
    return {
        "backend": backend.name,
        "dataframe_library": backend.dataframe_library,
        "reason": backend.reason,
        "workers": len(workers),
        "threads": sum(w["nthreads"] for w in workers),
        "memory_bytes": sum(w.get("memory_limit") or 0 for w in workers),
        "gpus": gpus,
        "external": client.cluster is None,
        "dashboard": dashboard,
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
            f"Dashboard : {info['dashboard'] or 'none'}",
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
