"""The course's one rule for partition sizes, from the memory and the threads of a worker.

Notebook 02 states the rule, notebook 05 measures it, benchmarks retune it: all of them call
this module, so there is one rule and one set of numbers. The benchmark's partition sweep
(docs/benchmarks.md) found no reason to change it: for total sales per customer, CSV blocks of
1-4 MiB were 2-4x slower than the rule's one partition per 35 MB part file, and the rule's size
never had to be capped on those files.

- **GPU** (cudf): a partition of 1/32 to 1/16 of one GPU's memory for shuffle-heavy work
  (groupby with many groups, joins, sorting); the rule returns the middle of that band.
- **CPU** (pandas): every thread of a worker works on one partition at a time, and a task holds
  its input, its output and intermediate copies, about ``COPIES_PER_TASK`` partitions in all;
  so ``threads x COPIES_PER_TASK x partition`` must fit in the worker's memory limit with room to
  spare. Capped at ``MAX_CPU_PARTITION_BYTES``: beyond that, a partition gains nothing but memory
  pressure.
"""

from __future__ import annotations

from dataclasses import dataclass

from utils.backend import Backend, as_backend
from utils.machine import this_gpu

GPU_BAND = (1 / 32, 1 / 16)  # of one GPU's memory
COPIES_PER_TASK = 4  # input + output + intermediates of one task, in partitions
SAFETY = 2  # keep half of the worker's memory for everything else
MAX_CPU_PARTITION_BYTES = 256 * 2**20
MIN_PARTITION_BYTES = 64 * 2**10  # below this a task's fixed cost (~1 ms) dwarfs its work


@dataclass(frozen=True)
class PartitionAdvice:
    """A recommended in-memory partition size, and why."""

    bytes: int
    low: int
    high: int
    reason: str

    def blocksize(self, memory_per_csv_byte: float) -> int:
        """The CSV ``blocksize`` that gives partitions of about ``bytes`` in memory, given how many
        bytes of memory one byte of CSV text becomes (measured: ``partition memory / file size``)."""
        if memory_per_csv_byte <= 0:
            raise ValueError(f"memory_per_csv_byte must be > 0, got {memory_per_csv_byte}")
        return max(MIN_PARTITION_BYTES, int(self.bytes / memory_per_csv_byte))


def recommended_partition_bytes(
    memory_per_worker: int, threads_per_worker: int = 1, backend: Backend | str = "cpu"
) -> PartitionAdvice:
    """The partition size (in memory) for a worker with ``memory_per_worker`` bytes (device memory
    for ``backend="gpu"``, the worker's memory limit for ``"cpu"``) and ``threads_per_worker``.

    ``backend`` names the rule to apply to those numbers, not the backend in force: it defaults to
    the CPU rule (``advice_for_client`` passes the cluster's backend)."""
    if memory_per_worker <= 0 or threads_per_worker < 1:
        raise ValueError("memory_per_worker must be > 0 and threads_per_worker >= 1")
    if as_backend(backend).is_gpu:
        low, high = (int(memory_per_worker * fraction) for fraction in GPU_BAND)
        return PartitionAdvice((low + high) // 2, low, high, "1/32-1/16 of the GPU's memory (shuffle-heavy work)")
    fits = memory_per_worker // (threads_per_worker * COPIES_PER_TASK * SAFETY)
    size = max(MIN_PARTITION_BYTES, min(MAX_CPU_PARTITION_BYTES, fits))
    reason = (f"{threads_per_worker} thread(s) x {COPIES_PER_TASK} copies x {SAFETY} (headroom) must fit the "
              f"worker's memory; at most {MAX_CPU_PARTITION_BYTES // 2**20} MiB")
    return PartitionAdvice(size, size // 2, size, reason)


def advice_for_client(client, backend: Backend | str | None = None) -> PartitionAdvice:
    """The rule applied to the smallest worker of ``client``'s cluster (GPU memory on GPU workers).

    GPU memory is asked of the workers themselves (``utils.machine.this_gpu`` through
    ``client.run``): the scheduler's record of a nanny-started dask-cuda worker has no ``"gpu"``
    entry, because NVML starts in the worker after its start-up information was sent
    (dask/distributed ``distributed/worker.py``, ``distributed/diagnostics/nvml.py``)."""
    backend = as_backend(backend)  # default: current_backend()
    workers = list(client.scheduler_info(n_workers=-1)["workers"].values())
    if not workers:
        raise ValueError("the cluster has no workers")
    if backend.is_gpu:
        devices = [device for device in client.run(this_gpu).values() if device]
        if len(devices) < len(workers):
            raise ValueError(f"the gpu backend is set but only {len(devices)} of {len(workers)} workers have a GPU; "
                             "start GPU workers with LocalCUDACluster or `dask cuda worker`")
        memory = min(device["memory_bytes"] for device in devices)
    else:
        memory = min(w["memory_limit"] for w in workers)
    threads = max(w["nthreads"] for w in workers)
    return recommended_partition_bytes(memory, threads, backend)
