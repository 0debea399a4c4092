"""Exercise 2 of notebook 01 counts where the cubes live. The cluster moves replicas by itself
afterwards (the Active Memory Manager drops duplicate replicas every 2 s by default), so the
check must not fail a right count because the cluster tidied up before the learner ran it."""

from __future__ import annotations

import logging
import time

import dask
import numpy as np
import pandas as pd
import pytest
from distributed import Client, LocalCluster, wait

from utils import checks
from utils.checks import CheckFailed

N = 200


def _cube(x: int) -> int:
    return x**3


@pytest.fixture
def two_workers():
    """Two worker processes (each reports its own memory, which the AMM reads) with the AMM off,
    so the test decides when replicas are dropped."""
    with (
        dask.config.set({"distributed.scheduler.active-memory-manager.start": False}),
        LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address="127.0.0.1:0",
                     silence_logs=logging.ERROR) as cluster,
        Client(cluster) as client,
    ):
        yield client


def _optimistic_memory(dask_scheduler) -> dict[str, int]:
    """Runs on the scheduler: each worker's memory as the AMM measures it by default."""
    return {address: worker.memory.optimistic for address, worker in dask_scheduler.workers.items()}


def _learner_counts(client: Client, cubes: list) -> pd.Series:
    return pd.Series([where[0] for where in client.who_has(cubes).values()]).value_counts()


def test_a_right_count_passes_after_the_cluster_dropped_one_workers_replicas(two_workers, capsys):
    client = two_workers
    cubes = client.map(_cube, range(N))
    wait(cubes)
    counted = _learner_counts(client, cubes)
    assert len(counted) == 2, "the test needs cubes on both workers"
    total = client.submit(sum, cubes).result()
    # Every cube on both workers, a large object on the first: the AMM's ReduceReplicas policy
    # drops from the worker with the most memory (distributed/active_memory_manager.py,
    # _find_dropper), so the first worker ends up holding none of the cubes it computed.
    first, second = sorted(counted.index)
    client.replicate(cubes, n=2)
    # Held until the end: a future nobody holds is released, and its memory with it (the test once
    # dropped it at once and only a quiet machine ran the AMM before the release).
    ballast = client.scatter(np.zeros(2**22), workers=[first])
    # The AMM compares the scheduler's "optimistic" memory: managed, which counts the ballast at
    # once, plus unmanaged_old from the heartbeats.
    deadline = time.monotonic() + 60
    while (memory := client.run_on_scheduler(_optimistic_memory))[first] <= memory[second]:
        assert time.monotonic() < deadline, f"the scheduler never saw the first worker as the larger: {memory}"
        time.sleep(0.1)
    client.amm.run_once()
    deadline = time.monotonic() + 60  # a fraction of a second on a quiet machine
    while any(first in holders for holders in client.who_has(cubes).values()) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(first in holders for holders in client.who_has(cubes).values()), "the AMM kept replicas"
    checks.check_cubes(cubes, counted, total, client, n=N)
    assert f"{N} cubes on 2 workers" in capsys.readouterr().out
    del ballast


def test_counts_a_worker_could_not_have_computed_fail(two_workers):
    client = two_workers
    cubes = client.map(_cube, range(N))
    wait(cubes)
    counted = _learner_counts(client, cubes)
    total = client.submit(sum, cubes).result()
    # N - 1 cubes claimed for the worker that ran fewer tasks: it ran at most (N + 1) // 2 (the cubes
    # and the sum), so the claim is impossible however the scheduler shared them out. (Claiming them
    # for a fixed worker passed the check when a busy machine had that worker run almost every cube.)
    ran = client.run(lambda dask_worker: dask_worker.state.executed_count)
    idler, busier = sorted(ran, key=ran.get)
    lopsided = pd.Series({idler: N - 1, busier: 1})
    with pytest.raises(CheckFailed, match=r"you counted \d+ cubes on "):
        checks.check_cubes(cubes, lopsided, total, client, n=N)
    with pytest.raises(CheckFailed, match="names workers that are not in this cluster"):
        checks.check_cubes(cubes, pd.Series({"tcp://127.0.0.1:1": N}), total, client, n=N)
    with pytest.raises(CheckFailed, match="cubes counted over all workers"):
        checks.check_cubes(cubes, counted.iloc[:1], total, client, n=N)
