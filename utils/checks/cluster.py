"""Checks of facts read from a cluster itself: its workers, where futures live, a worker lost
mid-computation, a TLS connection (notebooks 01 and 07)."""

from __future__ import annotations

import time
from typing import Any

import numpy as np
from distributed import Client

from utils.checks.grading import (
    CheckFailed,
    as_series,
    blames_changed_data,
    check_scalar,
    compare_series,
    examples,
    passed,
    plain,
    worker_records,
)
from utils.dataset import Dataset

CLUSTER_FACTS = ("workers", "threads_per_worker", "memory_limit_gib")


def check_cluster_facts(answer: Any, client: Any) -> None:
    """A dict of ``workers``, ``threads_per_worker`` and ``memory_limit_gib`` (per worker) that
    must describe the cluster behind ``client``, as its scheduler reports it."""
    what = "cluster facts"
    if not isinstance(answer, dict):
        raise CheckFailed(f"{what}: expected a dict with keys {list(CLUSTER_FACTS)}, got {type(answer).__name__}")
    missing = [key for key in CLUSTER_FACTS if key not in answer]
    if missing:
        raise CheckFailed(f"{what}: your dict lacks {missing}")
    workers = worker_records(client)
    threads = {w["nthreads"] for w in workers}
    memory = {round(w["memory_limit"] / 2**30, 3) for w in workers}
    expected = {
        "workers": len(workers),
        "threads_per_worker": threads.pop() if len(threads) == 1 else sorted(threads),
        "memory_limit_gib": memory.pop() if len(memory) == 1 else sorted(memory),
    }
    for key in CLUSTER_FACTS:
        got, want = answer[key], expected[key]
        try:
            close = np.isclose(float(got), float(want), rtol=0, atol=0.01)
        except (TypeError, ValueError):
            raise CheckFailed(f"{what}: {key} should be a number, got {plain(got)!r}") from None
        if not close:
            raise CheckFailed(f"{what}: {key} is {plain(got)!r} in your dict, "
                              f"but the scheduler reports {plain(want)!r}")
    passed(f"✓ {what}: {expected['workers']} workers × {expected['threads_per_worker']} threads, "
            f"{expected['memory_limit_gib']} GiB each — as the scheduler reports")


def check_cubes(cubes: Any, cubes_per_worker: Any, cube_total: Any, client: Any, n: int = 1000) -> None:
    """Futures of x**3 for x in range(n), computed through ``client``; where they live; their sum."""
    what = "cubes on the cluster"
    if not isinstance(cubes, list) or len(cubes) != n or not all(hasattr(f, "key") for f in cubes):
        raise CheckFailed(f"{what}: `cubes` should be the list of {n} futures that client.map returns")
    foreign = [f for f in cubes if f.client.scheduler.address != client.scheduler.address]
    if foreign:
        raise CheckFailed(f"{what}: {len(foreign)} futures were computed on another cluster; "
                          f"use the client you were given ({client.scheduler.address})")
    values = client.gather(cubes)
    wrong = [x for x, value in enumerate(values) if value != x**3]
    if wrong:
        raise CheckFailed(f"{what}: futures {examples(wrong)} do not hold x**3 of their input")
    check_scalar(cube_total, (n * (n - 1) // 2) ** 2, f"sum of cubes of 0..{n - 1}", atol=0)
    # Where a cube lives now is not where it was computed: the worker that ran sum fetched copies,
    # and the Active Memory Manager drops duplicate replicas every 2 s by default, possibly all of
    # a worker's own (distributed/active_memory_manager.py, ReduceReplicas and _find_dropper). What
    # does not move is how many tasks each worker has run (WorkerState.executed_count,
    # distributed/worker_state_machine.py): a worker cannot hold more of its own cubes than that.
    ran = client.run(_tasks_run)
    yours = as_series(cubes_per_worker, "cubes per worker")
    strangers = [w for w in yours.index if w not in ran]
    if strangers:
        raise CheckFailed(f"{what}: `cubes_per_worker` names workers that are not in this cluster: "
                          f"{examples(strangers)}; count with client.who_has(cubes)")
    too_many = [w for w in yours.index if yours[w] > ran[w]]
    if too_many:
        worker = too_many[0]
        raise CheckFailed(f"{what}: you counted {yours[worker]} cubes on {worker}, which has run only "
                          f"{ran[worker]} tasks; count with client.who_has(cubes) right after wait(cubes)")
    check_scalar(yours.sum(), n, "cubes counted over all workers", atol=0)
    passed(f"✓ {what}: {n} cubes on {len(yours)} workers, as the cluster reports")


def _tasks_run(dask_worker: Any) -> int:
    """Runs on each worker (Client.run): how many tasks it has executed in its lifetime."""
    return int(dask_worker.state.executed_count)


@blames_changed_data
def check_totals_after_loss(totals: Any, lost: Any, client: Any, dataset: Dataset) -> None:
    """Exercise: total sales per customer, computed while a worker was killed (``lost`` is what
    ``ExternalCluster.kill_worker`` returned). The scheduler's own event log must show the worker
    lost while it was running tasks, so a kill before or after the computation fails."""
    what = "totals after a lost worker"
    at = getattr(lost, "at", None)
    if not isinstance(at, float):
        raise CheckFailed(f"{what}: `lost` should be what cluster.kill_worker(...) returned, got {type(lost).__name__}")
    deadline = time.monotonic() + 10  # the scheduler logs the loss a moment after the kill
    while True:
        removals = [(stamp, event) for stamp, event in client.get_events("all")
                    if event.get("action") == "remove-worker" and at - 1 <= stamp <= at + 60]
        if removals or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    if not removals:
        raise CheckFailed(f"{what}: the scheduler of this cluster logged no lost worker after your kill")
    _, event = min(removals, key=lambda item: abs(item[0] - at))
    running, finished = len(event.get("processing-tasks", ())), len(event.get("lost-computed-tasks", ()))
    if not running:
        raise CheckFailed(f"{what}: the worker you killed was running no task, so no computation was in progress; "
                          "kill it while the groupby runs (after client.compute, before .result())")
    yours = as_series(totals, what, "sales_amount")
    matched = compare_series(yours, dataset.customer_totals(), what, "customer")
    passed(f"{matched}; the lost worker was running {running} and holding {finished} finished tasks, "
            "which the scheduler ran again elsewhere")


@blames_changed_data
def check_tls_totals(tls_client: Any, totals: Any, dataset: Dataset) -> None:
    """Exercise: a client connected over TLS (a ``tls://`` scheduler address) and total sales per
    customer computed through it."""
    what = "totals over TLS"
    if not isinstance(tls_client, Client):
        raise CheckFailed(f"{what}: `tls_client` should be a distributed.Client, got {type(tls_client).__name__}")
    protocol = str(tls_client.scheduler.address).split("://", 1)[0]
    if protocol != "tls":
        raise CheckFailed(f"{what}: your client talks to its scheduler over {protocol}://, unencrypted; connect "
                          "to the TLS cluster's tls:// address with its security= settings")
    yours = as_series(totals, what, "sales_amount")
    passed(compare_series(yours, dataset.customer_totals(), what, "customer") + ", over an encrypted connection")
