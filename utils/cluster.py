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
import sys
from contextlib import suppress
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from distributed import Client, LocalCluster
from distributed.diagnostics.plugin import WorkerPlugin

from utils.backend import Backend, choose_backend, configure_dask, current_backend, missing_gpu_packages
from utils.machine import cpu_count, cpu_name, this_gpu

SCHEDULER_ENV_VAR = "DASK_SCHEDULER_ADDRESS"
DASHBOARD_ENV_VAR = "COURSE_DASHBOARD_ADDRESS"
LOCAL_HOST = "127.0.0.1"
DEFAULT_DASHBOARD_ADDRESS = f"{LOCAL_HOST}:0"  # a free port, reachable from this machine only
CONNECT_TIMEOUT_S = 5  # Dask's default is 30 s: too long to wait for a mistyped address
# ``ucxx`` is the scheme distributed-ucxx registers for itself (the ``distributed.comm.backends``
# entry point ``ucxx = "distributed_ucxx:UCXXBackend"``, rapidsai/ucxx python/distributed-ucxx/pyproject.toml).
SCHEDULER_PROTOCOLS = ("tcp", "tls", "ucx", "ucxx", "ws", "wss")
QUIET = logging.ERROR

# An idle CPU worker process (distributed, pandas, pyarrow imported) holds 165-175 MiB (measured, Linux
# x86_64, this environment); rounded up. Below ``limit x pause fraction`` of this it pauses at once
# and never runs a task (distributed/worker_memory.py, ``_maybe_pause_or_unpause``).
IDLE_WORKER_BYTES = 200 * 2**20
MIN_WORKER_MEMORY = "512MiB"  # what the refusal suggests: an idle worker plus room for some data
# The loggers of Dask's worker pause/spill warnings (in the worker process) and of the nanny's
# "exceeded 95% memory budget. Restarting..." (in this process): distributed/worker_memory.py.
MEMORY_LOGGERS = ("distributed.worker.memory", "distributed.nanny.memory")

_FIX_ADDRESS = (
    f"unset {SCHEDULER_ENV_VAR} to start a local cluster, or start one with `dask scheduler` "
    f"and set {SCHEDULER_ENV_VAR} to the address it prints (e.g. tcp://10.0.0.5:8786)"
)


class SchedulerAddressError(ValueError):
    """``$DASK_SCHEDULER_ADDRESS`` (or ``address=``) is not a scheduler address."""


class SchedulerUnreachableError(ConnectionError):
    """No scheduler answered at the given address in time."""


class DashboardAddressError(ValueError):
    """``$COURSE_DASHBOARD_ADDRESS`` is not a port or host:port the dashboard can listen on."""


def dashboard_bind_address() -> str:
    """Where a local cluster's dashboard listens: ``$COURSE_DASHBOARD_ADDRESS`` when set (the
    explicit opt-in to remote access, e.g. ``0.0.0.0:8787``), else 127.0.0.1 on a free port. A bare
    port (``8787`` or ``:8787``) means 127.0.0.1:PORT: Dask itself would bind it on every interface.
    An IPv6 address is refused: distributed splits the dashboard address at every ``:``
    (``clean_dashboard_address`` in distributed/utils.py), so ``[::1]:8787`` cannot start a cluster.
    Anything else is a one-line ``DashboardAddressError`` naming the variable."""
    import socket

    value = os.environ.get(DASHBOARD_ENV_VAR, "")
    cleaned = value.strip()
    if not cleaned:
        return DEFAULT_DASHBOARD_ADDRESS
    host, sep, port_text = cleaned.rpartition(":")
    if not sep:
        host, port_text = "", cleaned
    host = host.strip()
    problem = None
    if cleaned.count(":") > 1 or "[" in cleaned or "]" in cleaned:
        problem = ("an IPv6 address (or more than one ':') is not accepted: Dask's dashboard takes PORT or HOST:PORT "
                   "with an IPv4 address or a host name, e.g. 8787, :0, 127.0.0.1:8787 or 0.0.0.0:8787")
    elif not (port_text.isascii() and port_text.isdigit()):  # '²'.isdigit() is True, and int() refuses it
        problem = ("expected PORT or HOST:PORT (e.g. 8787 for 127.0.0.1:8787, :0 for a free port, "
                   "or 0.0.0.0:8787 for every interface)")
    elif not 0 <= int(port_text) < 65536:
        problem = f"port {int(port_text)} is out of range (0-65535; 0 picks a free port)"
    elif host:
        try:
            socket.getaddrinfo(host, None)
        except (OSError, UnicodeError):
            problem = f"host {host!r} does not resolve on this machine"
    if problem:
        raise DashboardAddressError(
            f"{DASHBOARD_ENV_VAR}={value!r} is not a dashboard address: {problem}; "
            f"fix it or unset {DASHBOARD_ENV_VAR} (the dashboard then listens on 127.0.0.1 at a free port)"
        )
    return f"{host or LOCAL_HOST}:{int(port_text)}"


def check_scheduler_address(address: str) -> str:
    """``address`` stripped, or ``SchedulerAddressError`` saying what is wrong with it and how
    to fix it. Accepts ``tcp://host:port`` (and tls/ucx/ucxx/ws/wss) or ``host:port``."""
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


_NOT_A_SCHEDULER_FIX = (
    f"set {SCHEDULER_ENV_VAR} to the scheduler's address that `dask scheduler` prints "
    "(e.g. tcp://10.0.0.5:8786; the dashboard's http port is not it), or unset it to start a local cluster"
)
PROBE_MAX_HANDSHAKE_BYTES = 1 << 20  # a Dask handshake is a few hundred bytes


def _not_a_scheduler(address: str, why: str) -> SchedulerUnreachableError:
    return SchedulerUnreachableError(
        f"{SCHEDULER_ENV_VAR}={address!r} is not a Dask scheduler: {why}; {_NOT_A_SCHEDULER_FIX}"
    )


def _check_protocol_available(address: str, security: Any) -> Any:
    """The ``Security`` to connect with, or ``SchedulerAddressError`` for a protocol this process
    cannot speak: Dask raises a bare ``TypeError`` for both cases below."""
    import importlib.util

    from distributed.comm.addressing import parse_address
    from distributed.security import Security

    protocol, _ = parse_address(address, strict=False)
    if protocol in ("ucx", "ucxx") and importlib.util.find_spec("distributed_ucxx") is None:
        # distributed/comm/ucx.py is a stub since UCX-Py's removal: its connector cannot be built.
        raise SchedulerAddressError(
            f"{SCHEDULER_ENV_VAR}={address!r} needs the UCXX package (distributed-ucxx), which is not "
            "installed; install distributed-ucxx-cu12/cu13 (GPU machines) or use the scheduler's tcp:// address"
        )
    security = Security() if security is None else security  # Security() reads Dask's TLS config
    if protocol in ("tls", "wss") and security.get_connection_args("client").get("ssl_context") is None:
        raise SchedulerAddressError(
            f"{SCHEDULER_ENV_VAR}={address!r} needs the cluster's TLS certificates, and none are configured; "
            "pass start_client(security=...) (e.g. cluster.security of utils.processes) or set "
            "distributed.comm.tls.ca-file/client.cert/client.key in Dask's config"
        )
    return security


def _probe_tcp(address: str, timeout: float) -> bool:
    """A Dask server greets first (its handshake: distributed/comm/core.py, ``Listener.on_connection``),
    while Dask's client waits for that greeting without a timeout (``connect`` there). So read the
    first 8 bytes (the frame length, distributed/comm/tcp.py) ourselves, with a timeout: nothing, or
    an absurd length (``HTTP/1.0`` read as one, 3 EiB), is not a scheduler. Refused connections are
    left to ``Client``, which retries them until the scheduler starts or the timeout passes: False."""
    import socket
    import struct

    from distributed.comm.addressing import parse_address, parse_host_port

    _, location = parse_address(address, strict=False)
    host, port = parse_host_port(location)
    try:
        sock = socket.create_connection((host, port), timeout=timeout)
    except OSError:
        return False
    with sock:
        sock.settimeout(timeout)
        greeting = b""
        try:
            while len(greeting) < 8:
                chunk = sock.recv(8 - len(greeting))
                if not chunk:
                    break
                greeting += chunk
        except OSError:
            pass
        if len(greeting) == 8 and 0 < struct.unpack("Q", greeting)[0] <= PROBE_MAX_HANDSHAKE_BYTES:
            return True
        if greeting.startswith(b"HTTP/") or (not greeting and _speaks_http(sock, host)):
            raise _not_a_scheduler(address, "it speaks HTTP (a web page, e.g. the Dask dashboard)")
        if greeting:
            raise _not_a_scheduler(address, f"it answered {greeting[:8]!r}, not Dask's protocol")
        raise _not_a_scheduler(address, f"it accepted the connection but said nothing within {timeout:g} s")


def _speaks_http(sock: Any, host: str) -> bool:
    try:
        sock.sendall(f"HEAD / HTTP/1.0\r\nHost: {host}\r\n\r\n".encode())
        return sock.recv(5) == b"HTTP/"
    except OSError:
        return False


def _identity(address: str, timeout: float, security: Any) -> dict[str, Any] | None:
    """``identity()`` of the Dask server at ``address`` with a hard timeout, run on a thread of its
    own (a notebook's kernel already runs an event loop). None when it did not answer."""
    import asyncio
    import threading

    from distributed.core import rpc

    async def ask() -> dict[str, Any]:
        server = rpc(address, timeout=timeout, connection_args=security.get_connection_args("client"))
        try:
            return await asyncio.wait_for(server.identity(), timeout)
        finally:
            await server.close_rpc()

    answer: dict[str, Any] = {}

    def run() -> None:
        with suppress(BaseException):  # no answer: Client() below says why
            answer["identity"] = asyncio.run(ask())

    thread = threading.Thread(target=run, name="course-scheduler-probe", daemon=True)
    thread.start()
    thread.join(timeout + 2)
    return answer.get("identity")


def _connect(address: str, timeout: float, security: Any = None) -> Client:
    address = check_scheduler_address(address)
    security = _check_protocol_available(address, security)
    from distributed.comm.addressing import parse_address

    protocol, _ = parse_address(address, strict=False)
    if protocol == "tcp" and _probe_tcp(address, timeout) or protocol in ("tls", "ws", "wss"):
        identity = _identity(address, timeout, security) or {}
        kind = identity.get("type", "Scheduler")
        if kind != "Scheduler":
            where = f" (its scheduler is {identity['scheduler']})" if identity.get("scheduler") else ""
            raise SchedulerAddressError(
                f"{SCHEDULER_ENV_VAR}={address!r} is a Dask {kind.lower()}, not the scheduler{where}; "
                f"set {SCHEDULER_ENV_VAR} to the scheduler's address"
            )
    try:
        return Client(address, timeout=timeout, security=security)
    except OSError:
        pass  # re-raised below without Dask's retry traceback
    raise SchedulerUnreachableError(
        f"no Dask scheduler answered at {SCHEDULER_ENV_VAR}={address!r} within {timeout:g} s; {_FIX_ADDRESS}"
    )


def check_worker_memory(memory_limit: str | float | None, threads: int | None) -> None:
    """Refuse a per-worker limit that is no size (negative, or not a number of bytes), and one that
    an idle worker already exceeds at its pause line: its workers would pause at once and the
    computation would wait forever, silently. 0 and None are distributed's "no limit"."""
    if memory_limit is None or memory_limit == "auto":
        return
    import dask
    from distributed.worker_memory import parse_memory_limit

    try:
        limit = parse_memory_limit(memory_limit, threads or 1, logger=logging.getLogger(__name__))
        is_size = limit is None or limit > 0  # distributed turns -1 or '-1GiB' into a negative limit
    except (ValueError, TypeError, OverflowError):  # 'lots', nan, inf: Dask's own messages name no argument
        is_size = False
    if not is_size:
        raise ValueError(
            f"memory_limit={memory_limit!r} is not a size: give bytes > 0 like '2GiB', a fraction of "
            "the machine's memory like 0.5, 'auto' (the machine's memory shared by the workers), "
            "or 0 or None for no limit"
        )
    if not limit:  # 0 or None: no limit (distributed's LocalCluster)
        return
    pause = dask.config.get("distributed.worker.memory.pause")
    line = limit * pause if pause else limit
    if line <= IDLE_WORKER_BYTES:
        from dask.utils import format_bytes

        at = f"pauses at {pause:.0%} of its limit ({format_bytes(int(line))})" if pause else "pauses at its limit"
        raise ValueError(
            f"memory_limit={memory_limit!r} per worker is below what an idle worker uses (about "
            f"{format_bytes(IDLE_WORKER_BYTES)}); a worker {at}, so it would never run a task: "
            f"give each worker at least {MIN_WORKER_MEMORY}, or fewer workers more memory"
        )


class _StderrHandler(logging.StreamHandler):
    """Writes to whatever ``sys.stderr`` is at the time (a notebook's, a test's capture)."""

    @property  # type: ignore[override]
    def stream(self):
        return sys.stderr

    @stream.setter
    def stream(self, value: Any) -> None:
        pass


def let_memory_warnings_through() -> None:
    """Show Dask's memory warnings (a worker pausing, a nanny restarting a worker over its limit)
    although the course turns Dask's other logs down to errors: without them, a paused cluster
    waits with no output and a memory restart ends in a ``KilledWorker`` with no word of memory.
    Runs in this process (the nannies of a local cluster live here) and, as a worker plugin, in
    every worker process, restarted ones included."""
    for name in MEMORY_LOGGERS:
        logger = logging.getLogger(name)
        if not any(isinstance(handler, _StderrHandler) for handler in logger.handlers):
            handler = _StderrHandler()
            handler.setFormatter(logging.Formatter("%(asctime)s - %(name)s - %(levelname)s - %(message)s"))
            logger.addHandler(handler)
        logger.setLevel(logging.WARNING)
        logger.propagate = False  # not twice, and not filtered by the quiet `distributed` handler


class MemoryWarnings(WorkerPlugin):
    """``let_memory_warnings_through`` on every worker, including those a nanny restarts."""

    name = "course-memory-warnings"

    def setup(self, worker: Any) -> None:
        let_memory_warnings_through()


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
    if backend.is_gpu:
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


def _worker_hardware(dask_worker: Any) -> dict[str, Any]:
    """Runs on each worker (``client.run``): the GPU it computes on, whether dask-cuda set it up
    (its workers carry dask-cuda's plugins: CUDFSetup, RMMSetup, ...) and the GPU libraries it lacks."""
    plugins = dask_worker.plugins.values()
    return {
        "gpu": this_gpu(),
        "dask_cuda": any(type(plugin).__module__.split(".")[0] == "dask_cuda" for plugin in plugins),
        "gpu_packages_missing": missing_gpu_packages(),
    }


def workers_hardware(client: Client) -> dict[str, dict[str, Any]]:
    """What each worker of ``client``'s cluster reports about itself, by worker address."""
    return dict(sorted(client.run(_worker_hardware).items()))


# The local cluster this process's last ``start_client`` started, and its client: re-running a
# setup cell closes it instead of adding a second cluster (2 -> 4 -> 6 worker processes).
_previous: dict[str, Any] = {}


def _close_previous_cluster(quiet: bool) -> None:
    from distributed.core import Status

    client, cluster = _previous.pop("client", None), _previous.pop("cluster", None)
    if cluster is None or getattr(cluster, "status", None) in (Status.closing, Status.closed):
        return
    workers = len(getattr(cluster, "workers", {}) or {})
    for closable in (client, cluster):
        with suppress(Exception):  # already half-closed by the learner: nothing left to stop
            closable.close()
    if not quiet:
        print(f"start_client: closed the cluster ({_plural(workers, 'worker')}) that this kernel's previous "
              "start_client() started; one cluster per kernel (pass replace=False to keep it)")


def start_client(
    n_workers: int | None = None,
    threads_per_worker: int | None = None,
    memory_limit: str | float | None = None,
    backend: str | None = None,
    address: str | None = None,
    quiet: bool = False,
    connect_timeout: float = CONNECT_TIMEOUT_S,
    local: bool = False,
    security: Any = None,
    replace: bool = True,
    dataframes: bool = True,
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

    ``dataframes=False`` leaves Dask's DataFrame backend as it is: a cluster for arrays (CuPy on GPU
    workers) where cudf is not installed. The GPU backend then needs dask-cuda only, and a local
    ``LocalCUDACluster`` starts with cudf's spilling off unless ``enable_cudf_spill=True`` is passed
    (dask-cuda imports cudf for it); ``describe`` reports the DataFrame backend Dask already had.
    """
    address = address or (None if local else os.environ.get(SCHEDULER_ENV_VAR))
    if address is not None and address.strip():
        client = _connect(address, connect_timeout, security)
        try:
            reports = workers_hardware(client)
            if not reports:
                raise ValueError(f"the scheduler at {client.scheduler.address} has no workers; start some")
            chosen = choose_backend(backend, workers=reports)
        except BaseException:
            client.close()
            raise
    else:
        chosen = choose_backend(backend, dataframes=dataframes)
        if chosen.is_gpu and not dataframes:
            cluster_kwargs.setdefault("enable_cudf_spill", False)  # dask_cuda/local_cuda_cluster.py: `import cudf`
        dashboard_bind_address()  # a bad $COURSE_DASHBOARD_ADDRESS fails before anything is closed
        check_worker_memory(memory_limit, threads_per_worker)
        if replace:
            _close_previous_cluster(quiet)
        let_memory_warnings_through()
        cluster = _start_local_cluster(chosen, n_workers, threads_per_worker, memory_limit, **cluster_kwargs)
        try:
            client = Client(cluster)
            client.register_plugin(MemoryWarnings())
        except BaseException:
            cluster.close()
            raise
        if replace:
            _previous.update(client=client, cluster=cluster)
    if dataframes:
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


def _gpus_of(client: Client, workers: Any) -> tuple[list[str], int]:
    """Names of the distinct GPUs the workers compute on, and how many workers have one. Asked of
    the workers themselves; where they cannot answer (``utils`` not importable there), what the
    scheduler recorded at their start."""
    try:
        reports = [report["gpu"] for report in workers_hardware(client).values() if report["gpu"]]
    except Exception:
        reports = [{"name": w["gpu"]["name"], "uuid": address} for address, w in workers.items()
                   if isinstance(w.get("gpu"), dict) and w["gpu"].get("name")]
    devices = {report["uuid"]: report["name"] for report in reports}
    return list(devices.values()), len(reports)


def describe(client: Client) -> dict[str, Any]:
    """Backend, workers, threads, memory and GPUs of the cluster behind ``client``. ``gpus`` names
    each distinct GPU the workers compute on (whatever the backend); ``gpu_workers`` counts the
    workers that have one (several workers may share a GPU)."""
    workers = client.scheduler_info(n_workers=-1)["workers"]
    gpus, gpu_workers = _gpus_of(client, workers)
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
        "threads": sum(w["nthreads"] for w in workers.values()),
        "memory_bytes": sum(w.get("memory_limit") or 0 for w in workers.values()),
        "gpus": gpus,
        "gpu_workers": gpu_workers,
        "external": client.cluster is None,
        "dashboard": dashboard,
    }


def workers_share_a_gpu(client: Client) -> bool:
    """Whether two or more workers compute on the same GPU (the classroom recipe: several
    ``dask cuda worker`` processes on GPU 0). Libraries that run one NCCL rank per worker refuse
    that layout (XGBoost's and cuML's collectives, cudf-polars' multi-GPU engine), so the cells that
    use them need to know."""
    gpus, gpu_workers = _gpus_of(client, client.scheduler_info(n_workers=-1)["workers"])
    return gpu_workers > len(gpus)


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def summary(client: Client) -> str:
    """A short, readable description of the cluster, printed by ``start_client``."""
    info = describe(client)
    where = "external scheduler" if info["external"] else "local cluster"
    gpus = "none"
    if info["gpus"]:
        gpus = (f"{', '.join(info['gpus'])} ({_plural(info['gpu_workers'], 'worker')} on "
                f"{_plural(len(info['gpus']), 'GPU')})")
    return "\n".join(
        [
            f"Backend   : {info['backend']} ({info['dataframe_library']}) - {info['reason']}",
            f"Cluster   : {where}, {info['workers']} workers, {info['threads']} threads, "
            f"{info['memory_bytes'] / 2**30:.1f} GiB memory limit in total",
            f"GPUs      : {gpus}",
            f"Dashboard : {info['dashboard'] or 'none'}",
        ]
    )


def hardware_label(client: Any) -> str:
    """One line naming where a measurement ran, to print next to any timing table: the backend,
    the cluster behind ``client`` and this (notebook) machine's CPU model and usable cores."""
    info = describe(client)
    gpus = ", ".join(info["gpus"]) if info["gpus"] else "no GPU"
    where = "external cluster" if info["external"] else "local cluster"
    return (
        f"{info['backend']} backend ({info['dataframe_library']}); {where} with {info['workers']} "
        f"workers / {info['threads']} threads; GPUs: {gpus}; notebook machine: {cpu_name()}, "
        f"{cpu_count()} CPU cores"
    )


def shutdown(client: Client) -> None:
    """Close the client and the cluster it started; an external cluster is left running."""
    cluster = client.cluster
    client.close()
    if cluster is not None:
        cluster.close()
