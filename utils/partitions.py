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

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pyarrow.parquet as pq
from distributed import get_client

from utils.backend import Backend, as_backend
from utils.base.units import human_bytes
from utils.machine import this_gpu

GPU_BAND = (1 / 32, 1 / 16)  # of one GPU's memory
COPIES_PER_TASK = 4  # input + output + intermediates of one task, in partitions
SAFETY = 2  # keep half of the worker's memory for everything else
MAX_CPU_PARTITION_BYTES = 256 * 2**20
MIN_PARTITION_BYTES = 64 * 2**10  # below this a task's fixed cost (~1 ms) dwarfs its work
# Parquet file fusion at optimize time, as dask 2026.7.1 and dask_cudf 26.10 do it:
FUSION_MAX_FILES = 100  # dask/dataframe/dask_expr/io/io.py, FusedIO._fusion_buckets
FUSION_MIN_FACTOR = 0.001  # the floor of every reader's _fusion_compression_factor
GPU_PARQUET_BLOCKSIZE_FRACTION = 1 / 32  # dask_cudf/io/parquet.py, _normalize_blocksize
GPU_UNKNOWN_DEVICE_BYTES = 8 * 1024**3  # dask_cudf's guess where NVML cannot tell (_get_device_size)
GPU_SIZE_SAMPLE_FILES = 3  # dask_cudf averages column sizes over the footers of the first 3 files


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


@dataclass(frozen=True)
class ParquetFusion:
    """How many Parquet files Dask's default reader (``filesystem="fsspec"``) puts in one partition
    when it optimizes a plan whose reader feeds another operation, and why."""

    files: int
    factor: float  # the reader's compression factor: below 1 the optimizer fuses files
    files_per_partition: int
    partitions: int
    reason: str  # how the factor was found

    def __str__(self) -> str:
        if self.factor >= 1:
            return f"factor {self.factor:.3g} ({self.reason}) is not below 1: no fusion, {self.partitions} partitions"
        cap = math.ceil(math.sqrt(self.files))
        return (f"factor {self.factor:.3g} ({self.reason}); files per partition = min(ceil(1/{self.factor:.3g}), "
                f"ceil(sqrt({self.files})) = {cap}, {FUSION_MAX_FILES}) = {self.files_per_partition}; "
                f"partitions = ceil({self.files} / {self.files_per_partition}) = {self.partitions}")


def gpu_parquet_blocksize(client=None) -> int:
    """dask_cudf's default ``read_parquet`` blocksize: 1/32 of the smallest worker GPU's total memory
    (of this process's GPU without a client; 8 GiB where NVML cannot tell), as ``_normalize_blocksize``
    in dask_cudf/io/parquet.py (RAPIDS 26.10) computes it."""
    if client is None:
        try:
            client = get_client()
        except ValueError:  # no client in this process
            client = None
    devices = list(client.run(this_gpu).values()) if client is not None else [this_gpu()]
    memories = [device["memory_bytes"] if device else GPU_UNKNOWN_DEVICE_BYTES for device in devices]
    return int(min(memories or [GPU_UNKNOWN_DEVICE_BYTES]) * GPU_PARQUET_BLOCKSIZE_FRACTION)


def _uncompressed_bytes_per_file(files: Sequence[str]) -> dict[str, float]:
    """Each column's uncompressed bytes per file, from the footers of the first files, averaged over
    ``GPU_SIZE_SAMPLE_FILES`` as dask_cudf does (it divides by 3 even when there are fewer files)."""
    sizes: dict[str, float] = {}
    for path in files[:GPU_SIZE_SAMPLE_FILES]:
        metadata = pq.ParquetFile(path).metadata
        for group in range(metadata.num_row_groups):
            row_group = metadata.row_group(group)
            for index in range(row_group.num_columns):
                column = row_group.column(index)
                sizes[column.path_in_schema] = sizes.get(column.path_in_schema, 0) + column.total_uncompressed_size
    return {name: size / GPU_SIZE_SAMPLE_FILES for name, size in sizes.items()}


def parquet_fusion(
    files: Sequence[str | Path],
    columns: Sequence[str] | None = None,
    backend: Backend | str | None = None,
    blocksize: int | None = None,
) -> ParquetFusion:
    """The file-fusion rule of ``dd.read_parquet`` (default ``filesystem="fsspec"``, no ``filters=``)
    for a read of ``columns`` (``None``: every column, no projection) from ``files``.

    Both backends end in ``FusedIO`` (dask/dataframe/dask_expr/io/io.py): files per partition =
    ``min(ceil(1 / factor), ceil(sqrt(files)), 100)``; only the factor differs:

    - pandas (``ReadParquet._fusion_compression_factor``, dask/dataframe/dask_expr/io/parquet.py):
      columns read / (columns stored - 1), or 1 without a projection (no fusion);
    - cudf (``CudfReadParquetFSSpec._fusion_compression_factor``, dask_cudf/io/parquet.py): the
      uncompressed bytes of the columns read per file (footers of the first three files) /
      ``blocksize`` (default ``gpu_parquet_blocksize()``; ``blocksize=None`` in the read switches
      fusion off, which this function does not model).

    Each factor is at least 0.001; at 1 or more nothing is fused."""
    paths = sorted(str(path) for path in files)
    if not paths:
        raise ValueError("no Parquet files given")
    if as_backend(backend).is_gpu:
        blocksize = gpu_parquet_blocksize() if blocksize is None else blocksize
        sizes = _uncompressed_bytes_per_file(paths)
        read = sum(size for name, size in sizes.items() if columns is None or name.split(".")[0] in columns)
        if read < 1 or sum(sizes.values()) < 1:
            factor, reason = 1.0, "no column sizes in the footers"
        else:
            factor = max(read / blocksize, FUSION_MIN_FACTOR)
            reason = f"{human_bytes(int(read))} of the columns read per file / blocksize {human_bytes(blocksize)}"
    else:
        stored = len(pq.read_schema(paths[0]).names)
        if columns is None:
            factor, reason = 1.0, "no column projection"
        else:
            factor = max(len(columns) / max(stored - 1, 1), FUSION_MIN_FACTOR)
            reason = f"{len(columns)} columns read / ({stored} stored - 1)"
    if factor >= 1:
        return ParquetFusion(len(paths), factor, 1, len(paths), reason)
    per_partition = min(math.ceil(1 / factor), math.ceil(math.sqrt(len(paths))), FUSION_MAX_FILES)
    return ParquetFusion(len(paths), factor, per_partition, math.ceil(len(paths) / per_partition), reason)
