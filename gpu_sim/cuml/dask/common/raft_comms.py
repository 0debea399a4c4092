"""Stand-in for raft-dask's NCCL communicator (rapidsai/raft ``python/raft-dask/raft_dask/common/comms.py``
``Comms``, ``get_raft_comm_state``, ``_func_worker_ranks``, ``_func_init_all``/``_func_init_nccl``,
``_func_destroy_all``; ``raft_dask/common/nccl.pyx`` ``nccl.init``), snapshot of 2026-07 (26.08 development).
A real install has it in the ``raft_dask`` package (``raft-dask-cu12``, cuML's ``dask`` extra).

What is copied: one rank per worker, ranks ordered by (worker IP, NVML index of the worker's first
``CUDA_VISIBLE_DEVICES`` entry), the per-worker session state, and NCCL's refusal of two ranks on one GPU.
NCCL (NVIDIA/nccl ``src/init.cc``, ``initTransportsRank``) compares the ranks' host and GPU after its bootstrap
allgather and returns ``ncclInvalidUsage``; NCCL <= 2.29 logs "Duplicate GPU detected : rank %d and rank %d both
on CUDA device %lx", NCCL >= 2.30.7 (newest source read: v2.30.7) logs "Multiple Ranks are using the same
GPU/Partition. Set NCCL_MULTI_RANK_GPU_ENABLE=1 to enable this configuration." and honours that variable; the log
line appears only with ``NCCL_DEBUG=WARN`` (default: none). raft-dask turns the result into
``RuntimeError("NCCL_ERROR: %s" % ncclGetErrorString(result))``, with the C string as Python ``bytes``.

What is not: NCCL itself. The collectives are replaced by ``Handle.allreduce``, which exchanges the ranks' partial
sums through Dask ``Variable``s on the scheduler.
"""

from __future__ import annotations

import os
import socket
import sys
import threading
import time
import uuid
from collections import OrderedDict
from typing import Any

from dask.distributed import Variable, default_client, get_client

# nccl.h ncclGetErrorString(ncclInvalidUsage), NVIDIA/nccl src/init.cc.
INVALID_USAGE = b"invalid usage (run with NCCL_DEBUG=WARN for details)"
MULTI_RANK_WARNING = ("Multiple Ranks are using the same GPU/Partition. Set NCCL_MULTI_RANK_GPU_ENABLE=1 to enable "
                      "this configuration.")
ALLREDUCE_TIMEOUT_S = 120


def _device_of_this_process() -> tuple[int | str, str]:
    """(NVML index or UUID, GPU UUID) of this process's first visible device, as NVML names it."""
    import pynvml
    from dask_cuda.utils import nvml_device_index

    index = nvml_device_index(0, os.getenv("CUDA_VISIBLE_DEVICES"))
    pynvml.nvmlInit()
    handle = (pynvml.nvmlDeviceGetHandleByUUID(index) if isinstance(index, str)
              else pynvml.nvmlDeviceGetHandleByIndex(index))
    return index, pynvml.nvmlDeviceGetUUID(handle)


def _get_nvml_device_index() -> int | str:
    """NVML device index from ``CUDA_VISIBLE_DEVICES`` (raft-dask: fails where it is unset)."""
    from dask_cuda.utils import nvml_device_index

    return nvml_device_index(0, os.getenv("CUDA_VISIBLE_DEVICES"))


def _get_worker_ip(worker_address: str) -> str:
    return ":".join(worker_address.split(":")[0:2])


def _func_worker_ranks(client: Any, workers: list[str]) -> dict[str, int]:
    """Ranks sorted by worker IP, then NVML device index (raft-dask; nvbug 4149999)."""
    nvml_device_index_d = client.run(_get_nvml_device_index, workers=workers)
    worker_info_list = [(_get_worker_ip(worker), index, worker) for worker, index in nvml_device_index_d.items()]
    worker_info_list.sort()
    return {wi[2]: i for i, wi in enumerate(worker_info_list)}


def _peer_info() -> tuple[str, str]:
    """(host, GPU UUID): what NCCL's bootstrap allgather tells every rank about every other."""
    return socket.gethostname(), _device_of_this_process()[1]


def get_raft_comm_state(sessionId: Any, state_object: Any = None, dask_worker: Any = None) -> dict:  # noqa: N803
    state_object = state_object if state_object is not None else dask_worker
    if not hasattr(state_object, "_raft_comm_state"):
        state_object._raft_comm_state = {}
    if sessionId is not None and sessionId not in state_object._raft_comm_state:
        state_object._raft_comm_state[sessionId] = {"ts": time.time()}
    if sessionId is not None:
        return state_object._raft_comm_state[sessionId]
    return state_object._raft_comm_state


class nccl:  # noqa: N801 (raft-dask's name)
    """``raft_dask.common.nccl.nccl``: ``init`` fails as ``ncclCommInitRank`` does for two ranks on one GPU."""

    def init(self, nranks: int, commId: bytes, rank: int, peers: list[tuple[str, str]]) -> None:  # noqa: N803
        self.size, self.rank = nranks, rank
        if os.environ.get("NCCL_MULTI_RANK_GPU_ENABLE") == "1":
            return
        host, gpu = peers[rank]
        if any(other == (host, gpu) for i, other in enumerate(peers) if i != rank):
            if os.environ.get("NCCL_DEBUG", "").upper() in ("WARN", "INFO", "TRACE"):
                print(f"{socket.gethostname()}:{os.getpid()}:{threading.get_native_id()} [0] init.cc:1057 "
                      f"NCCL WARN {MULTI_RANK_WARNING}", file=sys.stderr, flush=True)
            raise RuntimeError(f"NCCL_ERROR: {INVALID_USAGE}")

    def destroy(self) -> None:
        pass


class Handle:
    """The comms-carrying handle each rank's model receives (``pylibraft.common.handle.Handle`` with comms)."""

    def __init__(self, session_id: bytes, rank: int, nranks: int) -> None:
        self.session_id, self.rank, self.nranks = session_id, rank, nranks

    def _variable(self, rank: int) -> Variable:
        return Variable(f"sim-nccl-{self.session_id.hex()}-{rank}", client=get_client())

    def allreduce(self, rank: int, value: Any) -> Any:
        """Sum ``value`` over all ranks; every rank gets the total (a blocking collective, like NCCL's)."""
        self._variable(rank).set({"value": value})
        total = value
        for other in range(self.nranks):
            if other == rank:
                continue
            try:
                got = self._variable(other).get(timeout=ALLREDUCE_TIMEOUT_S)
            except TimeoutError:
                raise RuntimeError(f"simulated NCCL allreduce: rank {other} did not arrive within "
                                   f"{ALLREDUCE_TIMEOUT_S} s") from None
            if "failed" in got:
                raise RuntimeError(f"simulated NCCL allreduce: rank {other} failed before the collective "
                                   f"({got['failed']}); a real NCCL collective would wait for it")
            total = total + got["value"]
        return total

    def abandon(self, rank: int, error: BaseException) -> None:
        """Tell the peers this rank will not join the collective."""
        self._variable(rank).set({"failed": f"{type(error).__name__}: {error}"})

    def sync(self) -> None:
        pass

    def __getstate__(self) -> dict:
        return dict(self.__dict__)


def _func_init_all(sessionId: bytes, uniqueId: bytes, comms_p2p: bool, worker_info: dict, verbose: bool,  # noqa: N803
                   streams_per_handle: int, peers: list[tuple[str, str]], dask_worker: Any = None) -> None:
    state = get_raft_comm_state(sessionId=sessionId, state_object=dask_worker)
    state["nccl_uid"] = uniqueId
    state["wid"] = worker_info[dask_worker.address]["rank"]
    state["nworkers"] = len(worker_info)
    try:
        n = nccl()
        n.init(state["nworkers"], uniqueId, state["wid"], peers)
        state["nccl"] = n
    except Exception as e:
        dask_worker.log_event(topic="error", msg=f"An error occurred initializing NCCL: {e}.")
        raise
    state["handle"] = Handle(sessionId, state["wid"], state["nworkers"])


def _func_destroy_all(sessionId: bytes, comms_p2p: bool, verbose: bool = False, dask_worker: Any = None) -> None:  # noqa: N803
    state = get_raft_comm_state(sessionId=sessionId, state_object=dask_worker)
    if "nccl" in state:
        state["nccl"].destroy()
        del state["nccl"]
    state.pop("handle", None)


class Comms:
    """NCCL communicators across a Dask cluster's workers, one rank per worker (``init()``, then ``destroy()``)."""

    valid_nccl_placements = ("client", "worker", "scheduler")

    def __init__(self, comms_p2p: bool = False, client: Any = None, verbose: bool = False,
                 streams_per_handle: int = 0, nccl_root_location: str = "scheduler") -> None:
        self.client = client if client is not None else default_client()
        self.comms_p2p = comms_p2p
        self.nccl_root_location = nccl_root_location.lower()
        if self.nccl_root_location not in Comms.valid_nccl_placements:
            raise ValueError(f"nccl_root_location must be one of: {Comms.valid_nccl_placements}")
        self.streams_per_handle = streams_per_handle
        self.sessionId = uuid.uuid4().bytes
        self.nccl_initialized = False
        self.ucx_initialized = False
        self.verbose = verbose

    def worker_info(self, workers: list[str]) -> dict[str, dict[str, int]]:
        ranks = _func_worker_ranks(self.client, workers)
        return {k: {"rank": rank} for k, rank in ranks.items()}

    def init(self, workers: list[str] | None = None) -> None:
        self.worker_addresses = list(OrderedDict.fromkeys(
            self.client.scheduler_info(n_workers=-1)["workers"].keys() if workers is None else workers))
        worker_info = self.worker_info(self.worker_addresses)
        worker_info = {w: worker_info[w] for w in self.worker_addresses}
        self.uniqueId = os.urandom(127)  # the real one comes from ncclGetUniqueId on the NCCL root
        by_rank = sorted(self.worker_addresses, key=lambda w: worker_info[w]["rank"])
        found = self.client.run(_peer_info, workers=by_rank)
        peers = [tuple(found[w]) for w in by_rank]
        self.client.run(_func_init_all, self.sessionId, self.uniqueId, self.comms_p2p, worker_info, self.verbose,
                        self.streams_per_handle, peers, workers=self.worker_addresses, wait=True)
        self.nccl_initialized = True

    def destroy(self) -> None:
        self.client.run(_func_destroy_all, self.sessionId, self.comms_p2p, self.verbose, wait=True,
                        workers=self.worker_addresses)
        for rank in range(len(self.worker_addresses)):
            Variable(f"sim-nccl-{self.sessionId.hex()}-{rank}", client=self.client).delete()
        self.nccl_initialized = False
