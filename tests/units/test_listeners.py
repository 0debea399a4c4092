"""Nothing the course starts faces the network: every socket that ``utils.processes``' scheduler,
nannies and workers listen on is on the loopback interface. ``--no-dashboard`` alone is not enough
(the scheduler still serves ``/health`` on ``0.0.0.0:8787`` and each worker on ``0.0.0.0:<port>``)."""

from __future__ import annotations

import socket

import pytest

from utils.processes import external_cluster, listening_addresses

LOOPBACK = {"127.0.0.1", "::1"}


def test_listening_addresses_sees_this_process_and_its_children():
    with socket.create_server(("0.0.0.0", 0)) as server:
        port = server.getsockname()[1]
        assert ("0.0.0.0", port) in listening_addresses()
    assert ("0.0.0.0", port) not in listening_addresses()


@pytest.mark.slow
@pytest.mark.parametrize("nanny", [True, False], ids=["nanny", "no-nanny"])
def test_an_external_cluster_listens_on_loopback_only(nanny):
    before = set(listening_addresses())
    with external_cluster(n_workers=2, threads_per_worker=1, memory_limit="1GiB", nanny=nanny) as cluster:
        opened = {address: pid for address, pid in listening_addresses().items() if address not in before}
        started = cluster.all_pids()
    assert set(opened.values()) <= started, "a listener outside the cluster's processes"
    # the scheduler (its port and its dashboard) and, per worker, its port and web server (and the nanny's port)
    assert len(opened) >= 2 + 2 * 2, sorted(opened)
    outside = sorted(f"{ip}:{port}" for ip, port in opened if ip not in LOOPBACK)
    assert outside == [], f"listening on more than this machine: {outside}"
