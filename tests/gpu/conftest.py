"""The cluster the GPU tests run on: a ``LocalCUDACluster`` (one worker per visible GPU,
dashboard on 127.0.0.1), or the existing scheduler at ``$DASK_SCHEDULER_ADDRESS`` when it is set
(e.g. two ``dask cuda worker`` processes sharing one GPU)."""

from __future__ import annotations

import logging
import os

import pytest

from utils.machine import GPU_INSTALL_HINT


@pytest.fixture(scope="module")
def client(request):
    """One cluster per test module, closed before the next module (the notebooks start their own)."""
    for module in ("dask_cuda", "cupy"):
        pytest.importorskip(module, reason=f"{module} not installed; {GPU_INSTALL_HINT}")
    from dask_cuda import LocalCUDACluster
    from distributed import Client

    address = os.environ.get("DASK_SCHEDULER_ADDRESS")
    if address:
        with Client(address, timeout="60s") as client:
            # Its workers and scheduler did not start from this process: send them this test module,
            # whose functions they run (a LocalCUDACluster's workers inherit sys.path instead).
            client.upload_file(request.module.__file__)
            yield client
        return
    with LocalCUDACluster(dashboard_address="127.0.0.1:0", silence_logs=logging.ERROR) as cluster, Client(
        cluster
    ) as client:
        yield client
