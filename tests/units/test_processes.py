"""utils.processes: a cluster of real `dask scheduler` / `dask worker` processes that binds to
localhost, survives a killed worker with exact answers, speaks TLS, and leaves no process behind:
not on a normal exit, not when the body raises or is interrupted, not when its owner is killed."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
import time

import dask.dataframe as dd
import psutil
import pytest

from utils.backend import to_pandas
from utils.base.paths import REPO_ROOT
from utils.checks import check_customer_totals
from utils.processes import ExternalCluster, ExternalClusterError, external_cluster

pytestmark = pytest.mark.slow


def _alive(pids: set[int]) -> set[int]:
    alive = set()
    for pid in pids:
        try:
            if psutil.Process(pid).status() != psutil.STATUS_ZOMBIE:
                alive.add(pid)
        except psutil.NoSuchProcess:
            pass
    return alive


def _wait_until_gone(pids: set[int], timeout: float = 10) -> set[int]:
    deadline = time.monotonic() + timeout
    while _alive(pids) and time.monotonic() < deadline:
        time.sleep(0.1)
    return _alive(pids)


def test_processes_listen_on_localhost_only_and_none_is_left_when_the_body_raises():
    with pytest.raises(RuntimeError, match="a failing cell"), external_cluster(n_workers=2) as cluster:
        pids = cluster.all_pids()
        assert len(cluster.worker_processes()) == 2
        assert len(pids) >= 5  # scheduler, two `dask worker` commands (nannies), two worker processes
        listening = {
            (conn.laddr.ip, pid)
            for pid in pids
            for conn in psutil.Process(pid).net_connections(kind="inet")
            if conn.status == psutil.CONN_LISTEN
        }
        assert listening and {ip for ip, _ in listening} == {"127.0.0.1"}, listening
        assert cluster.address.startswith("tcp://127.0.0.1:")
        raise RuntimeError("a failing cell")
    assert _wait_until_gone(pids, timeout=1) == set()
    assert cluster.directory is not None and not cluster.directory.exists()


def test_interrupted_body_and_repeated_close_leave_nothing():
    cluster = ExternalCluster(n_workers=1)
    with pytest.raises(KeyboardInterrupt), cluster:
        pids = cluster.all_pids()
        raise KeyboardInterrupt
    assert _wait_until_gone(pids, timeout=1) == set()
    cluster.close()  # a second close (as atexit would do) is harmless


def test_processes_die_with_the_process_that_started_them(tmp_path):
    """A kernel killed outright (no atexit, no finally) takes its cluster with it."""
    owner = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent("""
            import sys, time
            from utils.processes import ExternalCluster
            cluster = ExternalCluster(n_workers=1).start()
            print(" ".join(map(str, sorted(cluster.all_pids()))), flush=True)
            time.sleep(600)
        """)],
        stdout=subprocess.PIPE, text=True,
    )
    try:
        pids = {int(pid) for pid in owner.stdout.readline().split()}
        assert len(pids) >= 3 and _alive(pids) == pids
    finally:
        owner.send_signal(signal.SIGKILL)
        owner.wait()
    assert _wait_until_gone(pids) == set(), "processes outlived their owner"


def test_a_failed_start_stops_what_it_started():
    cluster = ExternalCluster(n_workers=2, memory_limit="not-a-size")
    with pytest.raises(ExternalClusterError, match=r"the worker-\d process exited with code 1"):
        cluster.start()
    assert cluster.scheduler is not None and cluster.scheduler.returncode is not None
    assert all(worker.returncode is not None for worker in cluster.workers)
    assert not (cluster.directory and cluster.directory.exists())


def _slow_groupby(dataset, pause: float = 0.1):
    """The course's groupby-sum over many small partitions, each held up a little, so that a
    worker can be killed while it runs (tiny data would otherwise finish in a blink)."""
    total = sum(path.stat().st_size for path in dataset.csv_files)
    frame = dd.read_csv(dataset.csv_files, blocksize=max(2**12, total // 24), **dataset.csv_kwargs)

    def pace(part):
        time.sleep(pause)
        return part

    return frame.map_partitions(pace).groupby("customer_id")["sales_amount"].sum(split_out=1)


@pytest.mark.parametrize("nanny", [False, True], ids=["worker-restarted-by-its-nanny", "worker-gone-for-good"])
def test_a_worker_killed_mid_computation_still_gives_exact_totals(tiny_dataset, nanny):
    with external_cluster(n_workers=2) as cluster, cluster.client() as client:
        query = _slow_groupby(tiny_dataset)
        future = client.compute(query)
        deadline = time.monotonic() + 30
        while sum(len(keys) for keys in client.has_what().values()) < 4:  # some results exist
            assert time.monotonic() < deadline and not future.done()
            time.sleep(0.01)
        killed = cluster.kill_worker(1, nanny=nanny)
        assert not future.done(), "the kill must land in the middle of the computation"
        totals = future.result(timeout=120)
        check_customer_totals(to_pandas(totals), tiny_dataset)

        removed = [event for stamp, event in client.get_events("all")
                   if event.get("action") == "remove-worker" and stamp >= killed.at - 1]
        assert len(removed) == 1 and removed[0]["expected"] is False
        assert removed[0]["processing-tasks"] or removed[0]["lost-computed-tasks"]
        if nanny:
            assert not psutil.pid_exists(killed.pid) or _wait_until_gone({killed.pid}) == set()
            assert len(client.scheduler_info(n_workers=-1)["workers"]) == 1
        else:
            client.wait_for_workers(2, timeout=30)  # the nanny started a fresh worker
            assert killed.pid not in cluster.worker_processes()


def test_tls_cluster_refuses_plain_connections_and_computes_exact_totals(tiny_dataset):
    from distributed import Client
    from distributed.security import Security

    with external_cluster(n_workers=2, tls=True) as cluster:
        assert cluster.address.startswith("tls://127.0.0.1:")
        with pytest.raises(OSError):
            Client(cluster.address.replace("tls://", "tcp://"), timeout=3)
        with pytest.raises(OSError):  # a stranger with a certificate of its own
            Client(cluster.address, security=Security.temporary(), timeout=3)
        with cluster.client() as client:
            workers = client.scheduler_info(n_workers=-1)["workers"]
            assert len(workers) == 2 and all(address.startswith("tls://") for address in workers)
            totals = dd.read_parquet(tiny_dataset.parquet_dir).groupby("customer_id")["sales_amount"].sum()
            check_customer_totals(to_pandas(totals.compute()), tiny_dataset)
    assert not (cluster.directory and cluster.directory.exists()), "the private keys are deleted with the cluster"


def test_kill_worker_rejects_a_worker_that_does_not_exist():
    with external_cluster(n_workers=1, nanny=False) as cluster:
        assert cluster.worker_processes() == [cluster.workers[0].pid]
        with pytest.raises(IndexError, match="1 worker processes are running"):
            cluster.kill_worker(3)


def test_the_terminal_recipe_uses_a_private_scheduler_file_and_waits_for_it():
    """CONTRIBUTING's recipe reads the address from the scheduler file: the file lives in a new
    private folder (no stale or planted file from someone else), and the export waits until the new
    scheduler has written it."""
    import re

    text = (REPO_ROOT / "CONTRIBUTING.md").read_text()
    block = re.search(r"### An external cluster from a terminal.*?```bash\n(.*?)```", text, re.S).group(1)
    lines = [line.strip() for line in block.splitlines()]
    at = {name: next(i for i, line in enumerate(lines) if pattern in line) for name, pattern in
          [("folder", "run=$(mktemp -d)"), ("scheduler", "dask scheduler"),
           ("wait", 'until [ -s "$run/scheduler.json" ]'), ("export", "export DASK_SCHEDULER_ADDRESS")]}
    assert at["folder"] < at["scheduler"] < at["wait"] < at["export"], lines
    assert "/tmp/" not in block, "a fixed path in /tmp can be planted by another user of the machine"


def test_cluster_folders_of_dead_kernels_are_removed_and_the_doctor_says_so(tmp_path, monkeypatch):
    """TLS keys and logs of a killed kernel's cluster (``course-cluster-<pid>-...`` in $TMPDIR) go on
    the next run; folders of live owners, without an owner pid, or of other programs stay."""
    import subprocess
    import sys
    import tempfile

    from utils import doctor, processes

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    finished = subprocess.Popen([sys.executable, "-c", "pass"])
    finished.wait()
    dead = tmp_path / f"course-cluster-{finished.pid}-abcd1234"
    dead.mkdir()
    (dead / "key.pem").write_text("secret")
    (dead / "scheduler.log").write_text("log")
    mine = processes._make_cluster_dir()  # how start() names its folder: this live process owns it
    kept = [mine, tmp_path / "course-cluster-og2owuuj", tmp_path / f"other-program-{finished.pid}-x"]
    for folder in kept[1:]:
        folder.mkdir()
    [check] = [c for c in doctor.diagnose(data_dir=tmp_path / "data", cluster=False) if c.name == "leftovers"]
    assert not dead.exists() and all(folder.exists() for folder in kept)
    assert check.status == doctor.OK and "1 cluster folder" in check.detail and dead.name in check.detail
