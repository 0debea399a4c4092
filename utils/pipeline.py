"""The course's recommended way to compute total sales per customer, in one place.

Notebooks 02, 03 and 05 teach it and ``benchmarks/`` measures it through these functions, so the
course and its benchmark never disagree. What makes it fast (each choice measured with the
harness in benchmarks/, each engine in its own fresh process; its latest run is docs/benchmarks.md):

- **read only what the answer needs**: two columns (``columns=`` for Parquet, ``usecols=`` and
  the backend's fastest CSV reader for CSV, ``Dataset.fast_csv_kwargs``);
- **on CPUs, Parquet through Arrow's own filesystem** (``filesystem=pyarrow.fs.LocalFileSystem()``,
  still the manifest's list of files): Dask then reads the fused files with pyarrow and converts
  them to pandas once, instead of reading each through fsspec and concatenating the pandas frames;
  at 10 M rows on 2 cores, interleaved fresh processes, the warm query took 0.36-0.49 s instead of
  0.47-0.75 s (the first query of a new cluster pays about half a second more, for pyarrow's dataset
  machinery). cudf keeps its own reader;
- **``split_out=1``**: a tree reduction of the partial sums, never the shuffle that the default
  ``split_out`` picks from 16 input partitions on (ten times slower at thousands of partitions);
- **partitions from the course's one rule** (``utils.partitions``);
- **on one machine with CPUs only, Dask's threaded scheduler** (``.compute(scheduler="threads")``,
  no cluster): measured in fresh processes on 2 cores (docs/benchmarks.md), it ran this pipeline
  in 25-60 % less time than the LocalCluster at 10 M and 100 M rows. The cluster adds work on the same
  cores: a scheduler and the client's event loop, the graph sent over TCP, partial results pickled
  between processes; pyarrow and pandas release the GIL for the heavy work, so threads suffice.
  What it lacks is the dashboard and task stream, and it never leaves the machine: notebook 03
  keeps the cluster to show how the work is split, and GPUs and many machines need one;
- **on a CPU cluster, one single-threaded worker process per core** (``cluster_shape``, up to
  ``MAX_CPU_WORKERS`` processes): measured on 2 cores at 10 M rows, each cluster in its own fresh
  process (``benchmarks.one_engine``), two processes of one thread read and summed the CSV files in
  2.2-2.5 s against 2.8-3.4 s for one process of two threads, and Parquet in about the same time;
  the partials moving between the processes are only a few per cent of the rows (the Zipf-skewed
  customers), so the move costs little.
"""

from __future__ import annotations

from typing import Any

import dask.dataframe as dd
from pyarrow.fs import LocalFileSystem

from utils.backend import Backend, as_backend, choose_backend, current_backend
from utils.dataset import Dataset
from utils.machine import cpu_count
from utils.partitions import advice_for_client

COLUMNS = ("customer_id", "sales_amount")
KEY, VALUE = COLUMNS
SPLIT_OUT = 1  # one output partition: the result (one float per customer) fits any worker
MAX_CPU_WORKERS = 8  # more processes than this: threads share the rest (measured only on 2 cores)
IN_MEMORY_BYTES_PER_ROW = 16  # customer_id int64 + sales_amount float64
FORMATS = ("parquet", "csv")


def cluster_shape(backend: Backend | str | None = None, cores: int | None = None) -> dict[str, int]:
    """``start_client`` arguments for this pipeline: on CPUs one single-threaded worker process per
    core (beyond ``MAX_CPU_WORKERS`` cores, that many processes sharing the cores as threads); on
    GPUs nothing, which keeps one worker per GPU.

    Called before ``start_client`` (notebook 03's setup), so ``backend`` defaults to the backend
    ``start_client`` is about to choose (``choose_backend``: ``$COURSE_BACKEND`` or the hardware),
    not to Dask's current setting, which is still the CPU default then."""
    if (choose_backend() if backend is None else as_backend(backend)).is_gpu:
        return {}
    cores = cores or cpu_count()
    workers = max(1, min(cores, MAX_CPU_WORKERS))
    return {"n_workers": workers, "threads_per_worker": max(1, cores // workers)}


def csv_blocksize(dataset: Dataset, client: Any = None) -> int | None:
    """The CSV ``blocksize`` that gives partitions of the rule's size (``utils.partitions``) for
    the two columns read, on ``client``'s smallest worker; ``None`` (one partition per file)
    without a client. A block never spans two files, so files smaller than it stay whole."""
    if client is None:
        return None
    csv_bytes = dataset.size_bytes("csv")
    if csv_bytes <= 0:
        raise ValueError(f"{dataset.path} has no CSV files; generate them with `{dataset.regenerate_command}`")
    memory_per_csv_byte = IN_MEMORY_BYTES_PER_ROW * dataset.rows / csv_bytes
    return advice_for_client(client).blocksize(memory_per_csv_byte)


def read_transactions(dataset: Dataset, fmt: str = "parquet", client: Any = None) -> dd.DataFrame:
    """The two columns of total sales per customer, lazily, from the dataset's Parquet or CSV
    files (the manifest's list, so stray files are never read)."""
    if fmt == "parquet":
        files = [str(path) for path in dataset.parquet_files]
        if current_backend().is_gpu:
            return dd.read_parquet(files, columns=list(COLUMNS))
        return dd.read_parquet(files, columns=list(COLUMNS), filesystem=LocalFileSystem())
    if fmt == "csv":
        blocksize = csv_blocksize(dataset, client)
        return dd.read_csv(dataset.csv_files, blocksize=blocksize, **dataset.fast_csv_kwargs(COLUMNS))
    raise ValueError(f"fmt must be one of {', '.join(FORMATS)}, got {fmt!r}")


def customer_totals(frame: dd.DataFrame) -> dd.Series:
    """Total ``sales_amount`` per ``customer_id`` as a tree reduction into one partition."""
    return frame.groupby(KEY)[VALUE].sum(split_out=SPLIT_OUT)


def total_sales_per_customer(dataset: Dataset, fmt: str = "parquet", client: Any = None) -> dd.Series:
    """The recommended pipeline, lazy: ``read_transactions`` then ``customer_totals``.
    ``.compute()`` it (and ``utils.to_pandas`` the result) for one total per customer."""
    return customer_totals(read_transactions(dataset, fmt, client))
