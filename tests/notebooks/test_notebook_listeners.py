"""Clusters a notebook builds itself listen on 127.0.0.1 only, like every cluster ``utils`` starts.

Notebook 01's in-process "mystery" cluster (``processes=False``) gave its workers' HTTP servers the
default address, every interface (``0.0.0.0`` and ``::``), until it set ``worker_dashboard_address``;
``host="127.0.0.1"`` is not the fix there: with ``processes=False`` distributed 2026.7.1 then fails to
start the scheduler (``distributed/comm/inproc.py`` ``validate_address``)."""

from __future__ import annotations

import json
import logging
import random

import psutil
from distributed import Client, LocalCluster

from utils.base.paths import REPO_ROOT

NOTEBOOK = REPO_ROOT / "notebooks" / "01_cluster_setup.ipynb"
MARKER = "mystery_cluster = LocalCluster("


def listening() -> set[tuple[str, int]]:
    """This process's listening TCP sockets."""
    return {(c.laddr.ip, c.laddr.port) for c in psutil.Process().net_connections(kind="inet")
            if c.status == psutil.CONN_LISTEN}


def test_notebook_01s_in_process_cluster_listens_on_localhost_only():
    cells = json.loads(NOTEBOOK.read_text())["cells"]
    (source,) = ["".join(c["source"]) for c in cells if c["cell_type"] == "code" and MARKER in "".join(c["source"])]
    namespace = {"random": random, "logging": logging, "LocalCluster": LocalCluster, "Client": Client}
    before = listening()
    exec(source, namespace)  # the cell as a learner runs it
    try:
        opened = listening() - before
    finally:
        namespace["mystery_client"].close()
        namespace["mystery_cluster"].close()
    assert opened, "the cluster opened no port (the premise of this test)"
    assert {ip for ip, _ in opened} == {"127.0.0.1"}, sorted(opened)
