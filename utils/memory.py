"""How much memory a cluster's workers may hold, what they hold now, and what they spilled.

Notebook 05 shrinks a cluster's memory budget below the size of the data on purpose; these
helpers size that budget from the data and read the workers' own accounting back, so a
demonstration of spilling can prove that it spilled (a demo that silently fits is no demo).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pandas as pd

from utils.backend import Backend, as_backend
from utils.machine import gpu_count

DEMO_WORKER_LIMIT = 2 * 2**30  # the process limit of a demo worker: far above its baseline
DEMO_WORKERS = 2


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
    backend: Backend  # the workers' kind: the budget is device memory on GPUs
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

    def cluster_kwargs(self) -> dict[str, Any]:
        """Arguments for ``utils.start_client``. On GPUs the budget is each worker's
        ``device_memory_limit``, above which dask-cuda's ``DeviceHostFile`` moves whole task results
        to host memory (rapidsai/dask-cuda dask_cuda/worker_common.py). cudf's own spilling is
        switched off for the demo: with it on, that store leaves cudf objects to cudf
        (``is_spillable_object.py``), whose spilling never reads the limit and starts only when an
        allocation fails, so a small budget would show nothing. On CPUs, the ``target`` fraction of
        ``config()``."""
        kwargs: dict[str, Any] = {"n_workers": self.workers, "threads_per_worker": 1, "memory_limit": self.worker_limit}
        if self.backend.is_gpu:
            kwargs.update(device_memory_limit=self.per_worker, enable_cudf_spill=False)
        return kwargs


def demo_budget(
    data_bytes: int, ratio: float = 3.0, backend: Backend | str | None = None, workers: int | None = None
) -> MemoryBudget:
    """A budget ``ratio`` times smaller than ``data_bytes``, over ``workers`` workers: by default two,
    and on GPUs no more than the GPUs there are (one worker per GPU)."""
    backend = as_backend(backend)
    if workers is None:
        workers = max(1, min(DEMO_WORKERS, gpu_count())) if backend.is_gpu else DEMO_WORKERS
    if data_bytes <= 0 or ratio <= 1 or workers < 1:
        raise ValueError("need data_bytes > 0, ratio > 1 and workers >= 1")
    return MemoryBudget(data_bytes, ratio, workers, backend)


def _probe(dask_worker: Any) -> dict[str, Any]:
    """Runs on each worker: its limits, the ``distributed.worker.memory`` fractions (target: managed
    data, start spilling; spill: process memory; pause; terminate: the nanny restarts it), and what
    it holds in fast memory and what it spilled: to disk on a CPU worker, out of the GPU (to host
    memory or disk) on a dask-cuda worker."""
    import dask

    manager = dask_worker.memory_manager
    managed = int(dask_worker.state.nbytes)
    spilled_keys = _spilled_keys(dask_worker.data)
    totals = getattr(dask_worker.data, "spilled_total", None)  # distributed's SpillBuffer (CPU workers)
    if totals is not None:  # bytes on disk (serialized), and the in-memory size they had
        spilled, spilled_in_memory = int(totals.disk), int(totals.memory)
    else:  # dask-cuda's DeviceHostFile: the in-memory size of what left the GPU
        tasks = dask_worker.state.tasks
        spilled = spilled_in_memory = sum(tasks[key].nbytes or 0 for key in spilled_keys if key in tasks)
    device_buffer = getattr(dask_worker.data, "device_buffer", None)
    return {
        "memory_limit": manager.memory_limit or 0,
        "device_memory_limit": getattr(device_buffer, "n", 0) or 0,  # a zict.Buffer's limit; 0: no GPU store
        "target": manager.memory_target_fraction,
        "spill": manager.memory_spill_fraction,
        "pause": manager.memory_pause_fraction,
        "terminate": dask.config.get("distributed.worker.memory.terminate"),
        "managed_in_memory": managed - spilled_in_memory,
        "spilled": spilled,
        "keys_spilled": len(spilled_keys),
    }


def _spilled_keys(data: Any) -> list:
    """Keys a worker's store holds outside its fast memory. distributed's SpillBuffer keeps them in
    ``slow`` (disk). dask-cuda's DeviceHostFile (rapidsai/dask-cuda dask_cuda/device_host_file.py)
    records every GPU object's key in ``device_keys`` and keeps the ones still on the GPU in
    ``device``; the others were moved to host memory (or on to disk). Its ``host`` holds host
    objects stored directly too, so it does not count."""
    device_keys = getattr(data, "device_keys", None)
    if device_keys is not None:
        on_device = data.device
        return [key for key in device_keys if key not in on_device]
    return list(getattr(data, "slow", ()))


def worker_memory(client: Any) -> pd.DataFrame:
    """One row per worker, read from the workers now (the dashboard's view lags by a heartbeat):
    limits, thresholds, managed bytes in fast memory, bytes and keys spilled. ``budget`` is what a
    worker may hold before it spills: its GPU store's limit on a dask-cuda worker, else
    ``memory_limit x target``."""
    rows = client.run(_probe)
    frame = pd.DataFrame.from_dict(rows, orient="index").rename_axis("worker").sort_index()
    frame["budget"] = [
        int(device) if device else int(limit * target) if limit and isinstance(target, float) else 0
        for device, limit, target in zip(frame["device_memory_limit"], frame["memory_limit"], frame["target"],
                                         strict=True)
    ]
    return frame


def _stored_elsewhere(keys: list, dask_worker: Any = None) -> list:
    """Runs on a worker: which of ``keys`` it holds outside its fast memory (spilled)."""
    spilled = set(_spilled_keys(dask_worker.data))
    return [key for key in keys if key in spilled]


def spilled_partitions(client: Any, collection: Any) -> tuple[int, int]:
    """(partitions of a persisted ``collection`` that were spilled, partitions in all), asked of
    the workers that hold them: spilled to disk on CPU workers, to host memory on GPU workers."""
    from distributed import futures_of

    keys = [future.key for future in futures_of(collection)]  # the keys the workers hold
    spilled = {key for found in client.run(_stored_elsewhere, keys).values() for key in found}
    return len(spilled), len(keys)
