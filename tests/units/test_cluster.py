"""The course's cluster: CPU path, GPU refusal, localhost-only binding, dashboard links, scheduler
address errors and an external scheduler. Backend choice itself is in test_backend.py."""

from __future__ import annotations

import os
import time

import dask
import dask.dataframe as dd
import dask.system
import pytest
from support.clusters import course_client

from utils import cluster as cluster_module
from utils import machine
from utils.backend import current_backend
from utils.cluster import (
    SchedulerAddressError,
    SchedulerUnreachableError,
    check_scheduler_address,
    dashboard_address,
    dashboard_bind_address,
    dashboard_link,
    describe,
    hardware_label,
    shutdown,
    start_client,
)


def test_asking_for_gpu_without_one_is_an_error_not_a_cpu_run(monkeypatch):
    monkeypatch.setenv("COURSE_BACKEND", "gpu")
    monkeypatch.setattr(machine, "_nvml_device_count", lambda: 0)
    with pytest.raises(ValueError, match="no NVIDIA GPU"):
        start_client(quiet=True)


@pytest.mark.parametrize(("cores", "expected"), [(1, (1, 1)), (2, (2, 1)), (3, (3, 1)), (8, (4, 2)), (64, (4, 16))])
def test_cpu_workers_share_the_cores_dask_counts(monkeypatch, cores, expected):
    monkeypatch.setattr(dask.system, "CPU_COUNT", cores)  # what utils.machine.cpu_count reads
    assert cluster_module._default_cpu_workers() == expected


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
        assert not hasattr(client, "course_backend")  # nothing is attached to Dask's Client
        assert (info["backend"], info["reason"]) == ("cpu", current_backend().reason)
        assert info["reason"] == "COURSE_BACKEND=cpu was requested"
        assert hardware_label(client).startswith("cpu backend (pandas); local cluster with 2 workers / 2 threads")
        df = dd.read_csv(tiny_dataset.csv_files, **tiny_dataset.csv_kwargs)
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


def test_local_true_ignores_the_scheduler_address(monkeypatch):
    """Notebooks that size their own workers start a local cluster even where a shared one is set."""
    monkeypatch.setenv("DASK_SCHEDULER_ADDRESS", "tcp://127.0.0.1:1")
    with course_client(n_workers=1, threads_per_worker=1, quiet=True, backend="cpu", local=True) as client:
        assert client.cluster is not None
        assert client.submit(sum, [1, 2]).result() == 3


def _dashboard_listening_hosts(client) -> set[str]:
    """Hosts the in-process scheduler's dashboard listens on, read from its sockets and, as a
    second witness, from the operating system's table of this process's listening sockets."""
    import psutil

    server = client.cluster.scheduler.http_server
    from_sockets = {sock.getsockname()[0] for sock in server._sockets.values()}
    from_os = {
        conn.laddr.ip
        for conn in psutil.Process().net_connections(kind="inet")
        if conn.status == psutil.CONN_LISTEN and conn.laddr.port == server.port
    }
    assert from_sockets == from_os, (from_sockets, from_os)
    return from_sockets


def test_local_cluster_listens_on_localhost_only_and_links_are_right(monkeypatch):
    monkeypatch.delenv("COURSE_DASHBOARD_ADDRESS", raising=False)
    with course_client(n_workers=1, threads_per_worker=1, quiet=True, backend="cpu") as client:
        assert _dashboard_listening_hosts(client) == {"127.0.0.1"}
        assert client.scheduler.address.startswith("tcp://127.0.0.1:")
        workers = client.scheduler_info(n_workers=-1)["workers"]
        assert workers and all(address.startswith("tcp://127.0.0.1:") for address in workers)
        import psutil

        worker_pids = set(client.run(os.getpid).values())
        worker_listening = {
            conn.laddr.ip
            for pid in worker_pids
            for conn in psutil.Process(pid).net_connections(kind="inet")
            if conn.status == psutil.CONN_LISTEN
        }
        assert worker_listening == {"127.0.0.1"}  # worker comm and worker HTTP server

        port = client.cluster.scheduler.http_server.port
        assert dashboard_address(client) == f"http://127.0.0.1:{port}"
        import urllib.request

        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        with opener.open(f"{dashboard_address(client)}/health", timeout=30) as response:
            assert response.read().decode() == "ok"

        assert dashboard_link(client) == f"http://127.0.0.1:{port}/status"
        assert dashboard_link(client, "individual-gpu-memory") == f"http://127.0.0.1:{port}/individual-gpu-memory"
        assert describe(client)["dashboard"] == f"http://127.0.0.1:{port}/status"

        monkeypatch.setenv("JUPYTERHUB_SERVICE_PREFIX", "/user/ann/")
        with dask.config.set({"distributed.dashboard.link": "{JUPYTERHUB_SERVICE_PREFIX}proxy/{port}/status"}):
            assert dashboard_link(client, "workers") == f"/user/ann/proxy/{port}/workers"
            assert dashboard_address(client) == f"http://127.0.0.1:{port}"  # Python still goes direct


def test_remote_dashboard_access_is_an_explicit_opt_in(monkeypatch):
    monkeypatch.setenv("COURSE_DASHBOARD_ADDRESS", "0.0.0.0:0")
    assert dashboard_bind_address() == "0.0.0.0:0"
    with course_client(n_workers=1, threads_per_worker=1, quiet=True, backend="cpu") as client:
        assert _dashboard_listening_hosts(client) == {"0.0.0.0"}
        assert client.scheduler.address.startswith("tcp://127.0.0.1:")  # only the dashboard opens up
    monkeypatch.setenv("COURSE_DASHBOARD_ADDRESS", "  ")
    assert dashboard_bind_address() == "127.0.0.1:0"


@pytest.mark.parametrize(
    ("address", "problem"),
    [
        ("nonsense", "expected the form tcp://host:port"),
        ("tcp://", "expected the form tcp://host:port"),
        ("tcp://10.0.0.5", "expected the form tcp://host:port"),
        ("tcp://10.0.0.5:port", "expected the form tcp://host:port"),
        ("http://x:8786", "protocol 'http' is not one Dask speaks"),
        ("tcp://10.0.0.5:99999", "port 99999 is out of range"),
    ],
)
def test_a_malformed_scheduler_address_is_one_clear_line(monkeypatch, address, problem):
    monkeypatch.setenv("DASK_SCHEDULER_ADDRESS", address)
    started = time.monotonic()
    with pytest.raises(SchedulerAddressError) as error:
        start_client(quiet=True)
    assert time.monotonic() - started < 20  # a guard only: it fails before any connection attempt
    message = str(error.value)
    assert isinstance(error.value, ValueError) and "\n" not in message
    assert message.startswith(f"DASK_SCHEDULER_ADDRESS={address!r} is not a scheduler address: {problem}")
    assert "unset DASK_SCHEDULER_ADDRESS" in message and "`dask scheduler`" in message


@pytest.mark.parametrize(
    "address",
    ["tcp://10.0.0.5:8786", "10.0.0.5:8786", " tls://sched.example:8786 ", "tcp://[::1]:8786",
     "ucx://10.0.0.5:8786", "ucxx://10.0.0.5:8786"],  # ucxx: the scheme distributed-ucxx registers
)
def test_well_formed_scheduler_addresses_pass_the_check(address):
    assert check_scheduler_address(address) == address.strip()


def test_a_scheduler_address_with_nothing_behind_it_fails_fast_and_clearly(monkeypatch):
    monkeypatch.setenv("DASK_SCHEDULER_ADDRESS", "tcp://127.0.0.1:1")
    started = time.monotonic()
    with pytest.raises(SchedulerUnreachableError) as error:
        start_client(quiet=True)
    assert time.monotonic() - started < 20  # Dask's own default would wait 30 s
    assert isinstance(error.value, ConnectionError)
    assert error.value.__context__ is None  # no chained retry traceback under the one line
    message = str(error.value)
    assert "\n" not in message
    assert message.startswith("no Dask scheduler answered at DASK_SCHEDULER_ADDRESS='tcp://127.0.0.1:1' within 5 s;")
    assert "unset DASK_SCHEDULER_ADDRESS" in message and "`dask scheduler`" in message


@pytest.fixture
def external_cluster():
    """A real `dask scheduler` and `dask worker` in separate processes, as on a multi-node cluster."""
    from utils.processes import external_cluster as processes

    with processes(n_workers=1, threads_per_worker=1, memory_limit="1GiB") as cluster:
        yield cluster.address


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
        assert info["dashboard"] == dashboard_link(client) and info["dashboard"].endswith("/status")
        assert dashboard_address(client).startswith("http://127.0.0.1:")
        df = dd.read_parquet(tiny_dataset.parquet_dir)
        assert float(df["sales_amount"].sum().compute()) == pytest.approx(
            tiny_dataset.answers()["total_cents"] / 100, abs=0.005
        )
    finally:
        shutdown(client)
    with Client(external_cluster, timeout=10) as again:
        assert len(again.scheduler_info()["workers"]) == 1, "shutdown must not stop an external cluster"


# --- addresses where something answers that is not a Dask scheduler (issue 27, item 2) ------------

def _start_client_within(seconds: float, **kwargs):
    """``start_client(**kwargs)`` in a thread: its result or exception, or a failure when it hangs
    (Dask's handshake read has no timeout: distributed/comm/core.py, ``connect``)."""
    import threading

    outcome: dict = {}

    def run() -> None:
        try:
            outcome["client"] = start_client(quiet=True, **kwargs)
        except BaseException as error:  # noqa: BLE001 - handed to the test
            outcome["error"] = error

    thread = threading.Thread(target=run, daemon=True)
    started = time.monotonic()
    thread.start()
    thread.join(seconds)
    if thread.is_alive():
        pytest.fail(f"start_client({kwargs}) still waits after {seconds} s")
    if "client" in outcome:
        shutdown(outcome["client"])
        pytest.fail("start_client connected to something that is not a scheduler")
    return outcome["error"], time.monotonic() - started


@pytest.fixture(scope="module")
def not_a_scheduler():
    """Three local servers that are not Dask schedulers: a web server (``http.server``, as the
    dashboard), a socket that accepts and says nothing, and one that answers anything with HTTP 400."""
    import http.server
    import socket
    import threading

    web = http.server.ThreadingHTTPServer(("127.0.0.1", 0), http.server.SimpleHTTPRequestHandler)
    threading.Thread(target=web.serve_forever, daemon=True).start()
    silent, answers_400 = socket.create_server(("127.0.0.1", 0)), socket.create_server(("127.0.0.1", 0))
    held: list = []

    def accept_silently() -> None:
        while True:
            try:
                held.append(silent.accept()[0])
            except OSError:
                return

    def answer_400() -> None:
        while True:
            try:
                conn = answers_400.accept()[0]
            except OSError:
                return
            with conn:
                conn.settimeout(5)
                try:
                    conn.recv(1024)
                    conn.sendall(b"HTTP/1.0 400 Bad Request\r\nContent-Length: 0\r\n\r\n")
                except OSError:
                    pass

    for target in (accept_silently, answer_400):
        threading.Thread(target=target, daemon=True).start()
    yield {
        "http": f"tcp://127.0.0.1:{web.server_address[1]}",
        "silent": f"tcp://127.0.0.1:{silent.getsockname()[1]}",
        "400": f"tcp://127.0.0.1:{answers_400.getsockname()[1]}",
    }
    web.shutdown()
    for sock in (silent, answers_400, *held):
        sock.close()


@pytest.mark.parametrize(
    ("server", "said"),
    [("http", "speaks HTTP"), ("silent", "said nothing"), ("400", "speaks HTTP")],
)
def test_a_server_that_is_not_a_scheduler_is_one_line_within_seconds(monkeypatch, not_a_scheduler, server, said):
    address = not_a_scheduler[server]
    monkeypatch.setenv("DASK_SCHEDULER_ADDRESS", address)
    error, took = _start_client_within(15, connect_timeout=1)
    assert isinstance(error, SchedulerUnreachableError), f"{type(error).__name__}: {error}"
    message = str(error)
    assert "\n" not in message and took < 10
    assert message.startswith(f"DASK_SCHEDULER_ADDRESS={address!r} is not a Dask scheduler: ") and said in message
    assert "`dask scheduler`" in message


def test_a_workers_address_is_one_line(monkeypatch):
    from distributed import LocalCluster

    with LocalCluster(n_workers=1, processes=False, protocol="tcp", host="127.0.0.1",
                      dashboard_address=None, silence_logs=cluster_module.QUIET) as cluster:
        worker = next(iter(cluster.scheduler.workers))
        monkeypatch.setenv("DASK_SCHEDULER_ADDRESS", worker)
        error, _ = _start_client_within(15, connect_timeout=2)
        assert isinstance(error, SchedulerAddressError), f"{type(error).__name__}: {error}"
        assert "\n" not in str(error) and "is a Dask worker, not the scheduler" in str(error)
        assert cluster.scheduler.address in str(error)  # the worker knows its scheduler: name it


@pytest.mark.parametrize(
    ("address", "said"),
    [("tls://127.0.0.1:9", "needs the cluster's TLS certificates"),
     ("ucx://127.0.0.1:9", "needs the UCXX package"),
     ("ucxx://127.0.0.1:9", "needs the UCXX package")],
)
def test_a_protocol_this_client_cannot_speak_is_one_line(monkeypatch, address, said):
    monkeypatch.setenv("DASK_SCHEDULER_ADDRESS", address)
    error, took = _start_client_within(15, connect_timeout=1)
    assert isinstance(error, SchedulerAddressError), f"{type(error).__name__}: {error}"
    assert "\n" not in str(error) and said in str(error) and took < 5


# --- $COURSE_DASHBOARD_ADDRESS, validated in one place (issue 27, item 6) --------------------------

@pytest.mark.parametrize(
    ("value", "bind"),
    [("8787", "127.0.0.1:8787"), (" 8787 ", "127.0.0.1:8787"), (":8787", "127.0.0.1:8787"),
     ("0", "127.0.0.1:0"), ("0.0.0.0:8787", "0.0.0.0:8787"), ("localhost:0", "localhost:0")],
)
def test_a_bare_dashboard_port_means_localhost(monkeypatch, value, bind):
    monkeypatch.setenv("COURSE_DASHBOARD_ADDRESS", value)
    assert dashboard_bind_address() == bind


@pytest.mark.parametrize(
    ("value", "problem"),
    [("foo", "expected PORT or HOST:PORT"), ("99999", "port 99999 is out of range"),
     ("127.0.0.1:99999", "port 99999 is out of range"), ("127.0.0.1:http", "expected PORT or HOST:PORT"),
     ("no-such-host.invalid:8787", "host 'no-such-host.invalid' does not resolve")],
)
def test_a_bad_dashboard_address_is_one_line_naming_the_variable(monkeypatch, value, problem):
    monkeypatch.setenv("COURSE_DASHBOARD_ADDRESS", value)
    with pytest.raises(ValueError) as error:
        dashboard_bind_address()
    message = str(error.value)
    assert "\n" not in message and message.startswith(f"COURSE_DASHBOARD_ADDRESS={value!r} ") and problem in message
    assert "unset COURSE_DASHBOARD_ADDRESS" in message
    with pytest.raises(ValueError, match="COURSE_DASHBOARD_ADDRESS"):
        start_client(quiet=True, local=True, backend="cpu")  # before any cluster starts


# --- re-running a setup cell replaces this kernel's previous cluster (issue 27, item 7) -----------

_THREADS_ONLY = {"n_workers": 1, "threads_per_worker": 1, "backend": "cpu", "local": True, "processes": False,
                 "protocol": "tcp", "dashboard_address": "127.0.0.1:0"}


def test_rerunning_start_client_replaces_the_previous_cluster(capsys):
    from distributed.core import Status

    first = start_client(quiet=True, **_THREADS_ONLY)
    first_cluster = first.cluster
    second = start_client(**_THREADS_ONLY)
    try:
        assert first_cluster.status == Status.closed, "the previous cluster must not keep running"
        assert first.status == "closed"
        said = [line for line in capsys.readouterr().out.splitlines() if "previous" in line]
        assert len(said) == 1 and "closed" in said[0] and "start_client" in said[0]
        kept = start_client(quiet=True, replace=False, **_THREADS_ONLY)  # e.g. the doctor's own cluster
        shutdown(kept)
        assert second.cluster.status == Status.running
    finally:
        shutdown(second)
    third = start_client(**_THREADS_ONLY)  # after shutdown() there is nothing to replace
    try:
        assert "previous" not in capsys.readouterr().out
    finally:
        shutdown(third)


# --- worker memory: a limit no worker can work under, and memory warnings that reach the learner ---

@pytest.mark.parametrize("limit", ["200MiB", "100MB", 150 * 2**20])
def test_a_memory_limit_below_an_idle_worker_is_refused_in_one_line(limit):
    started = time.monotonic()
    with pytest.raises(ValueError) as error:
        start_client(n_workers=1, memory_limit=limit, local=True, backend="cpu", quiet=True)
    message = str(error.value)
    assert "\n" not in message and "idle worker" in message and "pauses" in message and "at least" in message
    assert time.monotonic() - started < 2  # refused before any process starts


def test_memory_pause_and_restart_warnings_reach_the_learner(capfd):
    """Pause and restart lines pass the course's quiet logging (silence_logs=ERROR here, and
    DASK_DISTRIBUTED__LOGGING__DISTRIBUTED=error in conftest.py); other INFO lines do not."""
    client = start_client(n_workers=1, threads_per_worker=1, memory_limit="1GiB", local=True, backend="cpu",
                          quiet=True, dashboard_address="127.0.0.1:0")

    def wait_for(text: str, seen: str) -> str:
        deadline = time.monotonic() + 60  # seconds on a quiet machine
        while text not in seen and time.monotonic() < deadline:
            time.sleep(0.2)
            seen += capfd.readouterr().err
        return seen

    try:
        # The worker (~60 MiB) is above 3 % of 1 GiB: it pauses at its next memory check. The
        # threshold is lowered only now, once start_client has set the worker up: lowered in the
        # config, the worker paused while starting, before the course's plugin let the line
        # through, and the line was lost on a loaded machine. (distributed/worker_memory.py:
        # WorkerMemoryManager.memory_pause_fraction, read at every check.)
        client.run(lambda dask_worker: setattr(dask_worker.memory_manager, "memory_pause_fraction", 0.03))
        seen = wait_for("Pausing worker", "")
        [nanny] = client.cluster.workers.values()
        nanny.memory_manager.memory_terminate_fraction = 0.05  # distributed/worker_memory.py, NannyMemoryManager
        seen = wait_for("Restarting", seen)
    finally:
        shutdown(client)
    assert "Pausing worker" in seen, seen[-2000:]
    assert "memory budget. Restarting" in seen, seen[-2000:]
    assert " - INFO - " not in seen, seen[-2000:]


def test_hardware_label_uses_the_cluster_description_and_this_machine(monkeypatch):
    monkeypatch.setattr(
        cluster_module,
        "describe",
        lambda client: {
            "backend": "gpu",
            "dataframe_library": "cudf",
            "workers": 2,
            "threads": 2,
            "gpus": ["NVIDIA H100", "NVIDIA H100"],
            "external": False,
        },
    )
    monkeypatch.setattr(cluster_module, "cpu_name", lambda: "Test CPU 9000")
    monkeypatch.setattr(dask.system, "CPU_COUNT", 3)
    assert hardware_label(object()) == (
        "gpu backend (cudf); local cluster with 2 workers / 2 threads; "
        "GPUs: NVIDIA H100, NVIDIA H100; notebook machine: Test CPU 9000, 3 CPU cores"
    )
