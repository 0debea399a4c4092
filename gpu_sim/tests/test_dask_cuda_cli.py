"""``dask cuda worker`` of the simulated dask-cuda (a port of dask-cuda 26.10's ``cli.py`` + ``cuda_worker.py``),
run end to end through the real ``dask`` command, which finds it through the ``dask_cli`` entry point of
``dask_cuda-26.10.0+sim.dist-info``: a ``dask scheduler`` and a ``dask cuda worker`` on 127.0.0.1 (their web servers
too: ``--no-dashboard`` alone leaves one on every interface) with two
simulated GPUs, both killed (with their process groups) when the module ends. Nothing here touches a GPU."""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from distributed import Client

SIM = Path(__file__).resolve().parents[1]
REPO = SIM.parent
GIB = 2**30
HAS_CUDF = importlib.util.find_spec("cudf") is not None


def _dask() -> list[str]:
    """The real ``dask`` command of this environment (next to the interpreter)."""
    script = Path(sys.executable).with_name("dask")
    return [str(script)] if script.exists() else [sys.executable, "-m", "dask"]


def _env() -> dict[str, str]:
    env = {**os.environ, "GPU_SIM_DEVICES": "2", "DASK_DISTRIBUTED__LOGGING__DISTRIBUTED": "error",
           "PYTHONPATH": os.pathsep.join(filter(None, [str(SIM), str(REPO), os.environ.get("PYTHONPATH")]))}
    env.pop("CUDA_VISIBLE_DEVICES", None)
    env.pop("GPU_SIM_MEMORY_BYTES", None)
    return env


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _stop(process: subprocess.Popen) -> None:
    """SIGTERM to the process group this test started (the command and its nanny's workers), SIGKILL after 15 s."""
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=15)
    # the workers of a nanny that exited first may linger in the group: end them too
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)


@pytest.fixture(scope="module")
def cli_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Client, Path]]:
    tmp = tmp_path_factory.mktemp("dask_cuda_cli")
    scheduler_file = tmp / "scheduler.json"
    processes: list[subprocess.Popen] = []

    def launch(name: str, command: list[str]) -> subprocess.Popen:
        with open(tmp / f"{name}.log", "w") as log:  # the child keeps its own copy of the descriptor
            process = subprocess.Popen(command, cwd=REPO, env=_env(), stdout=log, stderr=subprocess.STDOUT,
                                       stdin=subprocess.DEVNULL, start_new_session=True)
        processes.append(process)
        return process

    try:
        scheduler = launch("scheduler", [*_dask(), "scheduler", "--host", "127.0.0.1", "--port", str(_free_port()),
                                         "--no-dashboard", "--dashboard-address", "127.0.0.1:0",
                                         "--scheduler-file", str(scheduler_file)])
        deadline = time.monotonic() + 60
        while not scheduler_file.exists() or not scheduler_file.read_text().strip():
            assert scheduler.poll() is None, (tmp / "scheduler.log").read_text()
            assert time.monotonic() < deadline, "the scheduler wrote no scheduler file in 60 s"
            time.sleep(0.2)
        address = json.loads(scheduler_file.read_text())["address"]
        launch("worker", [
            *_dask(), "cuda", "worker", address, "--host", "127.0.0.1", "--nthreads", "2", "--memory-limit", "1GiB",
            "--device-memory-limit", "0.25", "--rmm-pool-size", "1GiB", "--name", "gpu",
            "--local-directory", str(tmp / "work"), "--no-dashboard", "--dashboard-address", "127.0.0.1:0",
            "--death-timeout", "60", "--protocol", "tcp",
            *(["--enable-cudf-spill"] if HAS_CUDF else []),
        ])
        with Client(address, timeout=30, set_as_default=False) as client:
            try:
                client.wait_for_workers(2, timeout=120)
            except TimeoutError:
                pytest.fail("dask cuda worker did not start 2 workers:\n" + (tmp / "worker.log").read_text()[-3000:])
            yield client, tmp
    finally:
        for process in reversed(processes):
            _stop(process)


def _by_name(client: Client, function) -> dict:
    names = {address: w["name"] for address, w in client.scheduler_info(n_workers=-1)["workers"].items()}
    return {names[address]: result for address, result in client.run(function).items()}


def test_one_worker_per_gpu_named_and_rotated(cli_cluster):
    client, tmp = cli_cluster
    workers = client.scheduler_info(n_workers=-1)["workers"].values()
    assert sorted(w["name"] for w in workers) == ["gpu-0", "gpu-1"]  # --name gets -<i> with several GPUs
    assert {(w["nthreads"], w["memory_limit"]) for w in workers} == {(2, GIB)}
    assert all(Path(w["local_directory"]).is_relative_to(tmp / "work") for w in workers)
    assert all("gpu" not in w for w in workers)  # nanny-started: no "gpu" entry, as with LocalCUDACluster
    assert _by_name(client, lambda: os.environ["CUDA_VISIBLE_DEVICES"]) == {"gpu-0": "0,1", "gpu-1": "1,0"}


def test_workers_carry_the_plugins_and_limits_the_options_asked_for(cli_cluster):
    client, _ = cli_cluster

    def report(dask_worker):
        plugins = {type(p).__name__: p for p in dask_worker.plugins.values()
                   if type(p).__module__ == "dask_cuda.plugins"}
        return (sorted(plugins), plugins["RMMSetup"].initial_pool_size, plugins["CUDFSetup"].spill,
                type(dask_worker.data).__name__, dask_worker.data.device_buffer.n,
                [p.module.__name__ for p in dask_worker.preloads])

    expected = (["CPUAffinity", "CUDFSetup", "PreImport", "RMMSetup"], GIB, HAS_CUDF, "DeviceHostFile", 20 * GIB,
                ["dask_cuda.initialize"])
    assert set(map(str, _by_name(client, report).values())) == {str(expected)}


def test_each_worker_computes_on_its_own_gpu(cli_cluster):
    from utils.machine import this_gpu

    client, _ = cli_cluster
    gpus = _by_name(client, this_gpu)
    assert {name: gpu["uuid"][-1] for name, gpu in gpus.items()} == {"gpu-0": "0", "gpu-1": "1"}
    assert {gpu["name"] for gpu in gpus.values()} == {"Simulated GPU"}


def test_the_scheduler_and_the_workers_listen_on_this_machine_only(cli_cluster):
    """``--no-dashboard`` keeps a web server (``/health``, ``/metrics``) on every interface, the scheduler's
    on 8787; ``--dashboard-address 127.0.0.1:0`` is what keeps it on this machine."""
    from utils.processes import listening_addresses

    client, _ = cli_cluster
    client.wait_for_workers(2, timeout=60)
    listeners = listening_addresses()  # this test process and every process it started
    assert len(listeners) >= 4, listeners  # the scheduler, a nanny per worker and the workers themselves
    assert {ip for ip, _ in listeners} <= {"127.0.0.1", "::1"}, sorted(listeners)


def test_worker_options_have_the_real_names_and_defaults():
    from dask_cuda.cli import cuda, worker

    defaults = {param.name: param.default for param in worker.params}
    assert set(cuda.commands) == {"worker", "config"}
    assert {name: defaults[name] for name in (
        "host", "nthreads", "memory_limit", "device_memory_limit", "enable_cudf_spill", "rmm_pool_size", "rmm_async",
        "protocol", "scheduler_file", "name", "local_directory", "dashboard_address", "dashboard", "death_timeout",
        "multiprocessing_method")} == {
        "host": None, "nthreads": 1, "memory_limit": "auto", "device_memory_limit": "default",
        "enable_cudf_spill": False, "rmm_pool_size": None, "rmm_async": False, "protocol": None,
        "scheduler_file": None, "name": None, "local_directory": None, "dashboard_address": ":0", "dashboard": True,
        "death_timeout": None, "multiprocessing_method": "spawn"}
    flags = {opt for param in worker.params for opt in [*param.opts, *param.secondary_opts]}
    assert {"--enable-cudf-spill", "--disable-cudf-spill", "--rmm-async", "--no-rmm-async", "--no-dashboard",
            "--set-rmm-allocator-for-libs", "--scheduler-file", "--death-timeout"} <= flags


def test_the_dask_command_finds_it_and_needs_a_scheduler():
    shown = subprocess.run([*_dask(), "cuda", "worker", "--help"], cwd=REPO, env=_env(), capture_output=True,
                           text=True, timeout=120, check=False)
    assert shown.returncode == 0 and "--device-memory-limit" in shown.stdout, shown.stderr
    missing = subprocess.run([*_dask(), "cuda", "worker"], cwd=REPO, env=_env(), capture_output=True, text=True,
                             timeout=120, check=False)
    assert missing.returncode != 0 and "ValueError: No scheduler specified" in missing.stderr, missing.stderr[-2000:]
