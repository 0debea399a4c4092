"""How much memory a cluster's workers may hold, what they hold now, and what they spilled.

Notebook 05 shrinks a cluster's memory budget below the size of the data on purpose; these
helpers size that budget from the data and read the workers' own accounting back, so a
demonstration of spilling can prove that it spilled (a demo that silently fits is no demo).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pandas as pd

DEMO_WORKER_LIMIT = 2 * 2**30  # the process limit of a demo worker: far above its baseline


def in_memory_bytes(dataset: Any) -> int:
    """The whole dataset's size as pandas DataFrames, estimated from its first Parquet file
    (bytes per row in memory x rows), without loading everything into this process."""
    import pyarrow.parquet as pq

    first = dataset.parquet_files[0]
    sample = pd.read_parquet(first)
    per_row = sample.memory_usage(deep=True).sum() / max(1, pq.ParquetFile(first).metadata.num_rows)
    return int(per_row * dataset.rows)


@dataclass(frozen=True)
class MemoryBudget:
    """A cluster whose workers may hold ``budget_bytes`` of data in all: ``1/ratio`` of the data."""

    data_bytes: int
    ratio: float
    workers: int
    worker_limit: int = DEMO_WORKER_LIMIT

    @property
    def budget_bytes(self) -> int:
        return int(self.data_bytes / self.ratio)

    @property
    def per_worker(self) -> int:
        return self.budget_bytes // self.workers

    def config(self) -> dict[str, Any]:
        """Dask settings for a CPU demo: spill managed data above the budget (``target``), and take
        process-memory thresholds out of the way, so that what happens depends on the data only."""
        return {
            "distributed.worker.memory.target": self.per_worker / self.worker_limit,
            "distributed.worker.memory.spill": False,
            "distributed.worker.memory.pause": False,
            "distributed.worker.memory.terminate": False,
        }

    def cluster_kwargs(self, backend: str) -> dict[str, Any]:
        """Arguments for ``utils.start_client``: on GPUs the budget is each worker's
        ``device_memory_limit``, above which dask-cuda moves whole task results to host memory
        (its ``DeviceHostFile``, rapidsai/dask-cuda dask_cuda/worker_common.py); cudf's own spilling
        (``enable_cudf_spill``) does not read that limit and runs alongside it. On CPUs, the
        ``target`` fraction of ``config()``."""
        kwargs: dict[str, Any] = {"n_workers": self.workers, "threads_per_worker": 1, "memory_limit": self.worker_limit}
        if backend == "gpu":
            kwargs["device_memory_limit"] = self.per_worker
        return kwargs


def demo_budget(data_bytes: int, ratio: float = 3.0, workers: int = 2) -> MemoryBudget:
    """A budget ``ratio`` times smaller than ``data_bytes``, over ``workers`` workers."""
    if data_bytes <= 0 or ratio <= 1 or workers < 1:
        raise ValueError("need data_bytes > 0, ratio > 1 and workers >= 1")
    return MemoryBudget(data_bytes, ratio, workers)


def _probe(dask_worker: Any) -> dict[str, Any]:
    """Runs on each worker: its limit, the ``distributed.worker.memory`` fractions (target: managed
    data, start spilling; spill: process memory; pause; terminate: the nanny restarts it), and what
    it holds in memory and on disk."""
    import dask

    manager = dask_worker.memory_manager
    spilled = getattr(dask_worker.data, "spilled_total", None)
    managed = int(dask_worker.state.nbytes)
    on_disk_bytes = int(spilled.disk) if spilled is not None else 0
    spilled_memory_bytes = int(spilled.memory) if spilled is not None else 0
    return {
        "memory_limit": manager.memory_limit or 0,
        "target": manager.memory_target_fraction,
        "spill": manager.memory_spill_fraction,
        "pause": manager.memory_pause_fraction,
        "terminate": dask.config.get("distributed.worker.memory.terminate"),
        "managed_in_memory": managed - spilled_memory_bytes,
        "spilled_to_disk": on_disk_bytes,
        "keys_on_disk": len(getattr(dask_worker.data, "slow", ())),
    }


def worker_memory(client: Any) -> pd.DataFrame:
    """One row per worker, read from the workers now (the dashboard's view lags by a heartbeat):
    memory limit, thresholds, managed bytes in memory, bytes and keys spilled to disk."""
    rows = client.run(_probe)
    frame = pd.DataFrame.from_dict(rows, orient="index").rename_axis("worker").sort_index()
    frame["budget"] = [
        int(limit * target) if limit and isinstance(target, float) else 0
        for limit, target in zip(frame["memory_limit"], frame["target"], strict=True)
    ]
    return frame


SPILL_STORES = ("slow", "host", "disk")  # CPU SpillBuffer: disk; Dask-CUDA DeviceHostFile: host, disk


def _stored_elsewhere(keys: list, dask_worker: Any = None) -> list:
    """Runs on a worker: which of ``keys`` it holds outside its fast memory (spilled)."""
    stores = [getattr(dask_worker.data, name) for name in SPILL_STORES if hasattr(dask_worker.data, name)]
    return [key for key in keys if any(key in store for store in stores)]


def spilled_partitions(client: Any, collection: Any) -> tuple[int, int]:
    """(partitions of a persisted ``collection`` that were spilled, partitions in all), asked of
    the workers that hold them: spilled to disk on CPU workers, to host memory on GPU workers."""
    from distributed import futures_of

    keys = [future.key for future in futures_of(collection)]  # the keys the workers hold
    spilled = {key for found in client.run(_stored_elsewhere, keys).values() for key in found}
    return len(spilled), len(keys)
