"""A real Dask cluster of separate processes on this machine, started and always stopped.

``with external_cluster(n_workers=2) as cluster:`` starts one ``dask scheduler`` process and
``n_workers`` ``dask worker`` processes (one ``dask cuda worker`` with ``gpu=True``; with
``shared_gpu="0"``, ``n_workers`` ``dask cuda worker`` processes that all compute on GPU 0, the
course's classroom recipe), the same
commands a multi-node cluster runs, waits until every worker has joined, and gives
``cluster.address`` for ``Client(cluster.address)``. Everything listens on 127.0.0.1 on ports the
operating system picks (``--port 0``; the scheduler writes its address to a scheduler file), so
nothing clashes and nothing faces the network.

No process outlives its owner: leaving the ``with`` block, an exception, ``KeyboardInterrupt``,
``close()`` and interpreter exit (``atexit``) stop every process the cluster started, whole
process trees (each command runs in its own session, so a worker's nanny and the worker process
under it go together); on Linux each command also dies with the process that started it
(``PR_SET_PDEATHSIG``), which covers a kernel that is killed outright. (That signal follows the
*thread* that started the command: start clusters from the main thread, as notebooks do.)

``kill_worker(i)`` kills one worker without warning, for fault-tolerance demonstrations: by
default the process that runs tasks (its nanny starts a fresh one), with ``nanny=True`` the whole
``dask worker`` command (the worker is gone for good, like a machine that died).
"""

from __future__ import annotations

import atexit
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import weakref
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from utils.base.lifetime import launcher_command, process_alive
from utils.cluster import LOCAL_HOST
from utils.machine import gpu_count

START_TIMEOUT_S = 60
STOP_TIMEOUT_S = 10

# A cluster's private folder in $TMPDIR (certificates, logs, worker spill): the prefix and the owner's
# pid let a later run tell a dead kernel's folder from a live one's and from other programs' files.
CLUSTER_DIR_PREFIX = "course-cluster-"


def _make_cluster_dir() -> Path:
    return Path(tempfile.mkdtemp(prefix=f"{CLUSTER_DIR_PREFIX}{os.getpid()}-"))


def remove_stale_cluster_dirs() -> list[str]:
    """Delete the ``course-cluster-<pid>-*`` folders in $TMPDIR whose owner process is dead (a
    killed kernel or test run); folders of live owners, and any without the course's naming, stay.
    Returns the names removed."""
    removed = []
    for folder in Path(tempfile.gettempdir()).glob(f"{CLUSTER_DIR_PREFIX}*-*"):
        pid = folder.name[len(CLUSTER_DIR_PREFIX):].split("-", 1)[0]
        try:
            since = folder.stat().st_mtime
        except OSError:
            continue
        if not pid.isdigit() or int(pid) == os.getpid() or not folder.is_dir() or process_alive(int(pid), since):
            continue
        shutil.rmtree(folder, ignore_errors=True)
        if not folder.exists():
            removed.append(folder.name)
    return removed


_LIVE: weakref.WeakSet[ExternalCluster] = weakref.WeakSet()
_LIVE_LOCK = threading.Lock()


@atexit.register
def _stop_everything_at_exit() -> None:
    with _LIVE_LOCK:
        clusters = list(_LIVE)
    for cluster in clusters:
        cluster.close()


@dataclass(frozen=True)
class KilledProcess:
    """What ``kill_worker`` did: which worker and process, when (``time.time()``, the clock of the
    scheduler's events), and whether a nanny survives to start a replacement."""

    index: int
    pid: int
    at: float
    restarts: bool


class ExternalClusterError(RuntimeError):
    """A scheduler or worker process failed to start; the message ends with its log."""


def dask_command() -> str:
    """The ``dask`` command of this Python environment (next to the interpreter)."""
    candidate = Path(sys.executable).with_name("dask")
    return str(candidate) if candidate.exists() else shutil.which("dask") or "dask"


def _default_memory_limit(n_workers: int) -> int:
    """Like ``LocalCluster``: the machine's memory (or the container's limit) shared by the workers."""
    from distributed.system import MEMORY_LIMIT

    return int(MEMORY_LIMIT // max(1, n_workers))


class ExternalCluster:
    """A scheduler and workers as separate processes on 127.0.0.1. Use ``external_cluster(...)``
    (a ``with`` block) in scripts and tests; notebooks, whose cells cannot share a ``with`` block,
    call ``start()`` and ``close()`` (and are covered by ``atexit`` and the parent-death signal).

    ``tls=True`` secures every connection with TLS and refuses unencrypted ones: temporary
    certificates (``distributed.security.Security.temporary()``, needs ``cryptography``) are
    written to the cluster's private directory for the processes, and ``cluster.security`` is what
    a client needs: ``Client(cluster.address, security=cluster.security)``.
    """

    def __init__(
        self,
        n_workers: int | None = 2,
        threads_per_worker: int = 1,
        memory_limit: int | str | None = None,
        gpu: bool = False,
        shared_gpu: str | None = None,
        tls: bool = False,
        nanny: bool = True,
        env: dict[str, str] | None = None,
        start_timeout: float = START_TIMEOUT_S,
    ) -> None:
        if gpu and n_workers is None:
            n_workers = gpu_count()
        if not n_workers or n_workers < 1:
            raise ValueError(f"n_workers must be at least 1, got {n_workers!r}")
        self.n_workers = n_workers
        self.threads_per_worker = threads_per_worker
        self.memory_limit = memory_limit if memory_limit is not None else _default_memory_limit(n_workers)
        self.gpu = gpu or shared_gpu is not None
        self.shared_gpu = shared_gpu
        self.tls = tls
        self.nanny = nanny
        self.env = dict(env or {})
        self.start_timeout = start_timeout
        self.protocol = "tls" if tls else "tcp"
        self.address: str | None = None
        self.dashboard_port: int | None = None
        self.security: Any = None
        self.scheduler: subprocess.Popen | None = None
        self.workers: list[subprocess.Popen] = []  # one per `dask worker` command (one in all on GPUs)
        self.directory: Path | None = None
        self.kills: list[KilledProcess] = []
        self._closed = False

    # -- starting ----------------------------------------------------------------------------

    def start(self) -> ExternalCluster:
        """Start the scheduler and the workers and wait until all workers have joined; on any
        failure (or Ctrl-C) stop whatever was started before re-raising."""
        if self.scheduler is not None:
            raise RuntimeError("this cluster was started already")
        with _LIVE_LOCK:
            _LIVE.add(self)
        try:
            remove_stale_cluster_dirs()  # TLS keys and logs of a killed kernel's cluster
            self.directory = _make_cluster_dir()
            env = {**os.environ, **self.env}
            tls_args: list[str] = []
            if self.tls:
                tls_args = self._write_certificates()
                env["DASK_DISTRIBUTED__COMM__REQUIRE_ENCRYPTION"] = "True"
            scheduler_file = self.directory / "scheduler.json"
            self.scheduler = self._launch(
                "scheduler",
                [dask_command(), "scheduler", "--host", LOCAL_HOST, "--port", "0", "--protocol", self.protocol,
                 "--dashboard-address", f"{LOCAL_HOST}:0", "--scheduler-file", str(scheduler_file), *tls_args],
                env,
            )
            info = self._wait_for_scheduler_file(scheduler_file)
            self.address = info["address"]
            self.dashboard_port = info.get("services", {}).get("dashboard")
            worker_env = env if self.shared_gpu is None else {**env, "CUDA_VISIBLE_DEVICES": self.shared_gpu}
            for command in self._worker_commands(scheduler_file, tls_args):
                self.workers.append(self._launch(f"worker-{len(self.workers)}", command, worker_env))
            self._wait_for_workers()
        except BaseException:
            self.close()
            raise
        return self

    def _write_certificates(self) -> list[str]:
        from distributed.security import Security

        temporary = Security.temporary()  # one self-signed certificate for every role, in memory
        files = {"ca.pem": temporary.tls_ca_file, "cert.pem": temporary.tls_worker_cert,
                 "key.pem": temporary.tls_worker_key}
        for name, content in files.items():
            path = self.directory / name
            path.touch(mode=0o600)
            path.write_text(content)
        self.security = temporary
        return ["--tls-ca-file", str(self.directory / "ca.pem"), "--tls-cert", str(self.directory / "cert.pem"),
                "--tls-key", str(self.directory / "key.pem")]

    def _worker_commands(self, scheduler_file: Path, tls_args: list[str]) -> list[list[str]]:
        common = ["--scheduler-file", str(scheduler_file), "--host", LOCAL_HOST, "--protocol", self.protocol,
                  "--nthreads", str(self.threads_per_worker), "--memory-limit", str(self.memory_limit),
                  "--no-dashboard", "--dashboard-address", f"{LOCAL_HOST}:0", *tls_args]
        if self.shared_gpu is not None:  # the classroom recipe: one `dask cuda worker` per worker, all on one GPU,
            # each with its share of the device memory (the default 80 % assumes a worker has the GPU to itself)
            share = f"{0.8 / self.n_workers:.2f}"
            return [[dask_command(), "cuda", "worker", *common, "--device-memory-limit", share,
                     "--local-directory", str(self.directory / f"gpu-{i}")] for i in range(self.n_workers)]
        if self.gpu:  # one command per machine; it starts one worker per visible GPU itself
            return [[dask_command(), "cuda", "worker", *common, "--local-directory", str(self.directory / "gpu")]]
        return [
            [dask_command(), "worker", *common, "--nworkers", "1", "--name", f"worker-{i}",
             "--local-directory", str(self.directory / f"worker-{i}"), "--nanny" if self.nanny else "--no-nanny"]
            for i in range(self.n_workers)
        ]

    def _launch(self, name: str, command: list[str], env: dict[str, str]) -> subprocess.Popen:
        log = open(self.directory / f"{name}.log", "wb")  # noqa: SIM115 (the process owns it; closed below)
        try:
            return subprocess.Popen(
                launcher_command(command),
                env=env, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                start_new_session=True,  # its own process group: stopping it stops its children too
            )
        finally:
            log.close()

    def _check_alive(self) -> None:
        for name, process in self._named_processes():
            if process.poll() is not None:
                raise ExternalClusterError(
                    f"the {name} process exited with code {process.returncode} while starting; its log:\n"
                    + self.log(name, lines=20)
                )

    def _deadline_passed(self, deadline: float, what: str) -> None:
        if time.monotonic() > deadline:
            raise ExternalClusterError(f"{what} within {self.start_timeout:g} s; the scheduler's log:\n"
                                       + self.log("scheduler", lines=20))

    def _wait_for_scheduler_file(self, path: Path) -> dict[str, Any]:
        deadline = time.monotonic() + self.start_timeout
        while True:
            self._check_alive()
            try:
                return json.loads(path.read_text())
            except (FileNotFoundError, json.JSONDecodeError):  # not yet, or half written
                pass
            self._deadline_passed(deadline, "the scheduler wrote no address")
            time.sleep(0.05)

    def _wait_for_workers(self) -> None:
        deadline = time.monotonic() + self.start_timeout
        with self.client(timeout=self.start_timeout) as probe:
            while len(probe.scheduler_info(n_workers=-1)["workers"]) < self.n_workers:
                self._check_alive()
                self._deadline_passed(deadline, f"{self.n_workers} workers did not join")
                time.sleep(0.1)

    # -- using -------------------------------------------------------------------------------

    def client(self, **kwargs: Any):
        """A new ``Client`` connected to this cluster (with its TLS settings when it has them)."""
        from distributed import Client

        if self.address is None:
            raise RuntimeError("the cluster is not running; call start() first")
        return Client(self.address, security=self.security, **kwargs)

    def _named_processes(self) -> list[tuple[str, subprocess.Popen]]:
        named = [("scheduler", self.scheduler)] if self.scheduler is not None else []
        return named + [(f"worker-{i}", p) for i, p in enumerate(self.workers)]

    def log(self, name: str = "scheduler", lines: int | None = None) -> str:
        """The output of one process (``scheduler``, ``worker-0``, ...), or its last ``lines``."""
        if self.directory is None:
            return ""
        try:
            text = (self.directory / f"{name}.log").read_text(errors="replace")
        except FileNotFoundError:
            return ""
        return "\n".join(text.splitlines()[-lines:]) if lines else text

    def worker_processes(self) -> list[int]:
        """PIDs of the processes that run tasks, one per worker, in start order (without a nanny
        the command itself; with one, the process the nanny started)."""
        import psutil

        pids = []
        for command in self.workers:
            if command.poll() is not None:
                continue
            if not self.nanny:
                pids.append(command.pid)
                continue
            try:
                children = psutil.Process(command.pid).children()
            except psutil.NoSuchProcess:
                continue
            spawned = []
            for child in children:
                try:
                    if "spawn_main" in " ".join(child.cmdline()):  # not the resource tracker
                        spawned.append(child)
                except psutil.Error:
                    continue
            pids += [child.pid for child in sorted(spawned, key=lambda c: c.create_time())]
        return pids

    def kill_worker(self, index: int = 0, nanny: bool = False) -> KilledProcess:
        """Kill worker ``index`` at once (SIGKILL, no goodbye to the scheduler). ``nanny=False``:
        the process that runs its tasks, which its nanny replaces; ``nanny=True``: its whole
        ``dask worker`` command, so it stays gone."""
        pids = self.worker_processes()
        if not 0 <= index < len(pids):
            raise IndexError(f"worker {index} does not exist: {len(pids)} worker processes are running")
        pid = pids[index]
        if nanny and self.nanny:
            command = next(c for c in self.workers if pid in {ch.pid for ch in _children(c.pid)})
            _signal_tree(command, signal.SIGKILL)
            command.wait()
        else:
            os.kill(pid, signal.SIGKILL)
        killed = KilledProcess(index, pid, time.time(), restarts=self.nanny and not nanny)
        self.kills.append(killed)
        return killed

    def kill_scheduler(self) -> float:
        """Kill the scheduler at once (the workers and clients lose it); returns ``time.time()``."""
        if self.scheduler is None or self.scheduler.poll() is not None:
            raise RuntimeError("the scheduler is not running")
        _signal_tree(self.scheduler, signal.SIGKILL)
        self.scheduler.wait()
        return time.time()

    def process_table(self) -> list[dict[str, Any]]:
        """One row per live process: its role, PID, parent and the addresses it listens on."""
        import psutil

        roles = {self.scheduler.pid: "scheduler (`dask scheduler`)"} if self.scheduler is not None else {}
        command = "`dask cuda worker`" if self.gpu else "`dask worker`"
        roles |= {p.pid: f"nanny ({command} #{i})" if self.nanny else f"worker ({command} #{i})"
                  for i, p in enumerate(self.workers)}
        roles |= {pid: f"worker process #{i} (runs tasks)" for i, pid in enumerate(self.worker_processes())}
        rows = []
        for pid in sorted(self.all_pids()):
            try:
                process = psutil.Process(pid)
                listening = sorted(f"{c.laddr.ip}:{c.laddr.port}" for c in process.net_connections(kind="inet")
                                   if c.status == psutil.CONN_LISTEN)
                rows.append({"role": roles.get(pid, "helper (multiprocessing resource tracker)"), "pid": pid,
                             "parent": process.ppid(), "listens on": ", ".join(listening) or "-"})
            except psutil.Error:
                continue
        return rows

    def all_pids(self) -> set[int]:
        """Every live process this cluster started, children included (what ``close`` stops)."""
        pids = set()
        for _, process in self._named_processes():
            if process.poll() is None:
                pids.add(process.pid)
            pids |= {child.pid for child in _children(process.pid)}
        return pids

    # -- stopping ----------------------------------------------------------------------------

    def close(self, timeout: float = STOP_TIMEOUT_S) -> None:
        """Stop every process this cluster started (workers first, politely, then the scheduler;
        SIGKILL for whatever has not exited after ``timeout`` s) and delete its directory.
        Safe to call more than once, and from ``atexit``."""
        if self._closed:
            return
        try:
            for group in (self.workers, [self.scheduler] if self.scheduler is not None else []):
                for process in group:
                    _signal_tree(process, signal.SIGTERM)
                deadline = time.monotonic() + timeout
                for process in group:
                    while not _exited(process) and time.monotonic() < deadline:
                        time.sleep(0.05)
                    _signal_tree(process, signal.SIGKILL)  # it, or stragglers in its group
                    process.wait()
        finally:
            self._closed = True
            with _LIVE_LOCK:
                _LIVE.discard(self)
            if self.directory is not None:
                shutil.rmtree(self.directory, ignore_errors=True)

    def __enter__(self) -> ExternalCluster:
        return self.start() if self.scheduler is None else self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "closed" if self._closed else ("running" if self.address else "not started")
        return (f"<ExternalCluster {self.address or ''} {state}: {self.n_workers} "
                f"{'GPU ' if self.gpu else ''}workers x {self.threads_per_worker} threads, {self.protocol}>")


def listening_addresses(pid: int | None = None) -> dict[tuple[str, int], int]:
    """Every TCP address that process ``pid`` (default: this one) and all its descendants listen on,
    with the pid that listens there: what a test reads to prove that nothing the course starts
    faces the network (a scheduler or worker web server defaults to every interface)."""
    import psutil

    try:
        root = psutil.Process(pid)
        tree = [root, *root.children(recursive=True)]
    except psutil.NoSuchProcess:
        return {}
    found = {}
    for process in tree:
        try:
            sockets = process.net_connections(kind="inet")
        except psutil.Error:  # it ended meanwhile
            continue
        found |= {(c.laddr.ip, c.laddr.port): process.pid for c in sockets if c.status == psutil.CONN_LISTEN}
    return found


def _children(pid: int) -> list[Any]:
    import psutil

    try:
        return psutil.Process(pid).children(recursive=True)
    except psutil.Error:
        return []


def _exited(process: subprocess.Popen) -> bool:
    """Whether ``process`` has exited, without reaping it: until it is reaped its PID (and so its
    process group's ID) cannot be given to another process, so signalling the group stays safe."""
    if process.returncode is not None:
        return True
    try:
        return os.waitid(os.P_PID, process.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
    except ChildProcessError:
        return True


def _signal_tree(process: subprocess.Popen, sig: int) -> None:
    """Signal the process group of one started command (the command and its children). Only
    while the command is not reaped yet: after that its group ID may belong to someone else, and
    its children have been told to exit by then (a nanny's worker exits when the nanny does)."""
    if process.returncode is not None:
        return
    with suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, sig)


@contextmanager
def external_cluster(**kwargs: Any) -> Iterator[ExternalCluster]:
    """``with external_cluster(n_workers=2, threads_per_worker=1, gpu=False, tls=False) as cluster:``
    a started ``ExternalCluster`` (``cluster.address``); every process is stopped on the way out."""
    cluster = ExternalCluster(**kwargs)
    try:
        cluster.start()
        yield cluster
    finally:
        cluster.close()
