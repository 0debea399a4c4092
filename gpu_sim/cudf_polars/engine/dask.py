"""``cudf_polars.engine.dask.DaskEngine`` (26.10.2 ``cudf_polars/engine/dask.py``): a multi-GPU polars engine on a
Dask cluster, one rank per worker.

Copied: the keyword-only constructor (``dask_client``, ``rapidsmpf_options``, ``executor_options``,
``engine_options``), the reserved-key and empty-cluster checks, the two-phase per-worker set-up (root worker first,
then every worker; each applies the ``hardware_binding`` policy and keeps its state in the worker attribute
``_cudf_polars_mp_context_<uid>``), a ``LocalCluster``-like ``SpecCluster`` of one nanny per visible GPU when no
client is given, and ``shutdown`` (teardown on every worker, owned client and cluster closed; idempotent). The GPU
sharing check is ``StreamingEngine``'s (``core.py``); when it refuses, the constructor raises after the workers were
set up, and, as in 26.10.2, nothing tears their state down.

Simulated: no RapidsMPF/UCXX communicator, RMM resource or kvikio configuration is created, and
``collect(engine=...)`` runs the plan on polars' CPU engine in this process (see ``cudf_polars.callback``), where
the real engine runs it on every worker's GPU and concatenates the ranks' results.
"""

from __future__ import annotations

import dataclasses
import functools
import logging
import os
import uuid
from typing import Any

import distributed
import distributed.system

from cudf_polars.engine.core import ClusterInfo, StreamingEngine, check_reserved_keys
from cudf_polars.engine.hardware_binding import HardwareBindingPolicy, bind_to_gpu
from cudf_polars.utils.config import DaskContext


def _get_visible_gpu_ids() -> list[str]:
    """``CUDA_VISIBLE_DEVICES`` entries if set, otherwise ``["0", "1", ...]`` for NVML's device count."""
    import pynvml

    cvd = os.environ.get("CUDA_VISIBLE_DEVICES")
    if cvd is not None:
        return [d.strip() for d in cvd.split(",") if d.strip()]
    pynvml.nvmlInit()
    return [str(i) for i in range(pynvml.nvmlDeviceGetCount())]


@dataclasses.dataclass
class _WorkerContext:
    """Per-worker state of one engine (simulated: the rank, the number of ranks and the binding policy)."""

    rank: int | None
    nranks: int
    hardware_binding: HardwareBindingPolicy


def _attr(uid: str) -> str:
    return f"_cudf_polars_mp_context_{uid}"


def _setup_root(nranks: int, *, uid: str, hardware_binding: HardwareBindingPolicy,
                dask_worker: distributed.Worker | None = None) -> bytes:
    """Phase 1 on one worker: bind, create rank 0's state, return the root address for the others."""
    assert dask_worker is not None
    bind_to_gpu(hardware_binding)
    setattr(dask_worker, _attr(uid), _WorkerContext(rank=0, nranks=nranks, hardware_binding=hardware_binding))
    return f"sim-ucxx-root:{dask_worker.address}".encode()


def _setup_worker(root_address: bytes, nranks: int, ranks: dict[str, int], *, uid: str,
                  hardware_binding: HardwareBindingPolicy, dask_worker: distributed.Worker | None = None) -> None:
    """Phase 2 on every worker: non-root workers bind and join (the rank order stands in for UCXX's)."""
    assert dask_worker is not None
    if getattr(dask_worker, _attr(uid), None) is None:
        bind_to_gpu(hardware_binding)
        setattr(dask_worker, _attr(uid), _WorkerContext(rank=ranks[dask_worker.address], nranks=nranks,
                                                        hardware_binding=hardware_binding))


def _teardown_worker(*, uid: str, dask_worker: distributed.Worker | None = None) -> list:
    """Release this engine's per-worker state."""
    assert dask_worker is not None
    if getattr(dask_worker, _attr(uid), None) is not None:
        delattr(dask_worker, _attr(uid))
    return []


def _get_cluster_info(*, uid: str, dask_worker: distributed.Worker | None = None) -> tuple[int, ClusterInfo]:
    assert dask_worker is not None
    return getattr(dask_worker, _attr(uid)).rank, ClusterInfo.local()


class DaskEngine(StreamingEngine):
    """Multi-GPU Polars engine for Dask distributed execution (simulated: polars' CPU engine executes)."""

    def __init__(self, *, dask_client: distributed.Client | None = None, rapidsmpf_options: Any = None,
                 executor_options: dict[str, Any] | None = None,
                 engine_options: dict[str, Any] | None = None) -> None:
        executor_options = dict(executor_options or {})
        engine_options = engine_options or {}
        self._quent_logger = None
        check_reserved_keys(executor_options, engine_options)
        hw_binding = engine_options.get("hardware_binding", HardwareBindingPolicy())
        self.rapidsmpf_options = rapidsmpf_options
        rapidsmpf_id = str(uuid.uuid4())

        owned_cluster: Any = None
        owned_client: distributed.Client | None = None
        if dask_client is None:
            worker_spec: dict[str, Any] = {}
            for gpu_id in _get_visible_gpu_ids():
                worker_spec[str(gpu_id)] = {"cls": distributed.Nanny, "options": {
                    "nthreads": 1, "silence_logs": logging.WARNING, "memory_limit": distributed.system.MEMORY_LIMIT,
                    "env": {"CUDA_VISIBLE_DEVICES": gpu_id}}}
            owned_cluster = distributed.SpecCluster(workers=worker_spec, silence_logs=logging.WARNING)
            owned_client = distributed.Client(owned_cluster)
            dask_client = owned_client

        workers_info = dask_client.scheduler_info(n_workers=-1)["workers"]
        nranks = len(workers_info)
        if nranks == 0:
            raise RuntimeError("No workers found in the Dask cluster.")
        worker_addresses = list(workers_info.keys())
        root_worker = worker_addresses[0]
        ranks = {address: rank for rank, address in enumerate(worker_addresses)}

        root_result = dask_client.run(
            functools.partial(_setup_root, uid=rapidsmpf_id, hardware_binding=hw_binding), nranks,
            workers=[root_worker])
        dask_client.run(functools.partial(_setup_worker, uid=rapidsmpf_id, hardware_binding=hw_binding),
                        root_result[root_worker], nranks, ranks)

        dask_ctx = DaskContext(client=dask_client, rapidsmpf_id=rapidsmpf_id, quent_logger=None,
                               owned_client=owned_client, owned_cluster=owned_cluster)
        self._dask_context: DaskContext | None = dask_ctx
        super().__init__(nranks=nranks,
                         executor_options={**executor_options, "cluster": "dask", "dask_context": dask_ctx},
                         engine_options={**engine_options, "memory_resource": None})

    @property
    def _dask_ctx(self) -> DaskContext:
        if self._dask_context is None:
            raise RuntimeError("dask_context is not available after shutdown")
        return self._dask_context

    def gather_cluster_info(self) -> list[ClusterInfo]:
        """Diagnostic information from every rank, in rank order."""
        return list(self._run_by_rank(_get_cluster_info).values())

    def _run_by_rank(self, func: Any, *args: Any, **kwargs: Any) -> dict[int, Any]:
        results = self._dask_ctx.client.run(functools.partial(func, *args, uid=self._dask_ctx.rapidsmpf_id, **kwargs))
        return dict(sorted(results.values(), key=lambda pair: pair[0]))

    def shutdown(self) -> None:
        """Shut down all Dask workers' engine state; close the client and cluster this engine created."""
        if self._dask_context is None:
            return
        ctx = self._dask_context
        self._dask_context = None
        exceptions: list[Exception] = []
        try:
            ctx.client.run(functools.partial(_teardown_worker, uid=ctx.rapidsmpf_id))
        except Exception as e:
            exceptions.append(e)
        finally:
            if ctx.owned_client is not None:
                ctx.owned_client.close()
            if ctx.owned_cluster is not None:
                ctx.owned_cluster.close()
            super().shutdown()
        if exceptions:
            raise ExceptionGroup("Worker teardown failed", exceptions)
