"""The files of a dataset, written: one partition's CSV and Parquet part files, the customers
table, each hashed as it is written.

``write_partition`` is what every generator worker process runs; the benchmark of the generator's
stages (``benchmarks/datagen_speed.py``) times the same public steps one by one. What else a worker
runs (``worker_init``, ``write_partition_unless_stopping``) is here too, so that a worker imports only
what generating needs, not ``build``'s imports (Dask among them, which would slow every worker's start).
"""

from __future__ import annotations

import hashlib
import os
import signal
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pyarrow as pa
import pyarrow.csv as pa_csv
import pyarrow.parquet as pq

from utils.base.lifetime import die_with_parent, exit_when_orphaned
from utils.datagen.arrow_columns import cents_as_decimal
from utils.datagen.customers import customers_table
from utils.datagen.groundtruth import partial_totals
from utils.datagen.params import Params
from utils.datagen.transactions import Partition, generate_partition

# Files are written 1 MiB per system call: on a 2-core Linux VM, writing 600 MB of new files in
# 30 MB calls cost 1.4 s of kernel time, in 1 MiB calls 0.12 s (4 MiB calls already cost 1.4 s).
WRITE_CHUNK_BYTES = 1 << 20


def write_buffer(path: Path, buffer: pa.Buffer) -> str:
    """Write ``buffer`` to ``path`` and return its SHA-256 (hashed in memory, no re-read)."""
    digest = hashlib.sha256(buffer).hexdigest()
    view = memoryview(buffer)
    with open(path, "wb") as handle:  # buffered: it retries a short write until all is written
        for start in range(0, len(view), WRITE_CHUNK_BYTES):
            handle.write(view[start:start + WRITE_CHUNK_BYTES])
    return digest


# Arrow's CSV writer formats rows a batch at a time; batches of 64 k rows write the same bytes as
# its default 1,024 in 15 % less time (81 -> 69 ms per 500 k-row partition). No value of the
# dataset contains a comma, quote or line break, so nothing is quoted (Arrow refuses to write such
# a value unquoted rather than corrupt the file): 2 bytes less per row than quoting every string.
CSV_WRITE_OPTIONS = pa_csv.WriteOptions(quoting_style="none", batch_size=65_536)
# Parquet encodings of the transaction part files: dictionary pages for the columns that repeat
# values (what pyarrow does by default for every column) and delta encoding for the two that rise
# row by row (transaction_id, timestamp), where a dictionary never pays. Half the bytes of the
# all-dictionary default (3.5 vs 7.3 MB per 500 k rows) and, with the statistics below, written in
# 28 instead of 47 ms; every reader the course uses (pandas/pyarrow, cudf, polars, DuckDB) decodes both.
TRANSACTION_PARQUET_OPTIONS = {
    "use_dictionary": ["customer_id", "store_id", "product_category", "sales_amount"],
    "column_encoding": {"transaction_id": "DELTA_BINARY_PACKED", "timestamp": "DELTA_BINARY_PACKED"},
    # Min/max statistics only where they let a reader skip row groups: on the sorted columns
    # (a time filter); every row group spans nearly all customers, stores and amounts.
    "write_statistics": ["transaction_id", "timestamp"],
}


def csv_bytes(table: pa.Table) -> pa.Buffer:
    sink = pa.BufferOutputStream()
    pa_csv.write_csv(table, sink, write_options=CSV_WRITE_OPTIONS)
    return sink.getvalue()


def parquet_bytes(table: pa.Table, **options) -> pa.Buffer:
    # Nanosecond timestamps: the resolution both pandas and cudf use by default.
    if "timestamp" in table.column_names:
        index = table.column_names.index("timestamp")
        table = table.set_column(index, "timestamp", table["timestamp"].cast("timestamp[ns]"))
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink, compression="snappy", **options)
    return sink.getvalue()


def transaction_csv_bytes(part: Partition) -> pa.Buffer:
    # The amounts as exact decimals ("118.20"): Arrow formats them faster than floats (~10 ms less
    # per 500 k rows), and every reader parses them to the same float64 as "118.2".
    amounts = cents_as_decimal(part.cents)
    return csv_bytes(part.table.set_column(part.table.schema.get_field_index("sales_amount"), "sales_amount", amounts))


def transaction_parquet_bytes(part: Partition) -> pa.Buffer:
    return parquet_bytes(part.table, **TRANSACTION_PARQUET_OPTIONS)


ENCODERS = {"csv": ("csv", transaction_csv_bytes), "parquet": ("parquet", transaction_parquet_bytes)}
CUSTOMER_FILES = {"parquet": "customers/customers.parquet", "csv": "customers/customers.csv"}


def write_customers(directory: Path, params: Params) -> dict[str, dict]:
    """The customers table, in both formats whatever ``params.formats`` says (it is small and
    every join needs it); returns the manifest entries. CSV: signup_date as YYYY-MM-DD."""
    table = customers_table(params.seed, params.customers)
    (directory / "customers").mkdir(parents=True, exist_ok=True)
    csv_table = table.set_column(3, "signup_date", table["signup_date"].cast(pa.timestamp("s")).cast(pa.date32()))
    entries = {}
    for fmt, buffer in (("parquet", parquet_bytes(table)), ("csv", csv_bytes(csv_table))):
        rel = CUSTOMER_FILES[fmt]
        entries[rel] = {"bytes": buffer.size, "sha256": write_buffer(directory / rel, buffer)}
    return entries


def _iso(seconds: int) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(int(seconds)))


def write_partition(directory: str, params: Params, index: int) -> dict:
    """Generate and write one partition; runs in a worker process."""
    part = generate_partition(params.seed, index, params.rows, params.partitions, params.customers)
    files, sizes, writes = {}, {}, {}
    # One thread hashes and writes each file while this one encodes the next and sums the ground
    # truth: a disk that cannot keep up (page cache full) then stalls that thread, not the work.
    with ThreadPoolExecutor(1, thread_name_prefix="datagen-write") as writer:
        for fmt in params.formats:
            suffix, encode = ENCODERS[fmt]
            rel = f"{fmt}/part-{index:05d}.{suffix}"
            buffer = encode(part)
            writes[fmt] = writer.submit(write_buffer, Path(directory) / rel, buffer)
            files[fmt], sizes[fmt] = rel, buffer.size
            del buffer
        partial = partial_totals(part, params.customers)
        digests = {fmt: write.result() for fmt, write in writes.items()}
    first, last = (part.seconds[[0, -1]] if part.seconds.size else (0, 0))
    return {
        "index": index,
        "rows": part.table.num_rows,
        "timestamps": [_iso(first), _iso(last)],
        "files": files,
        "bytes": sizes,
        "sha256": digests,
        "partial": partial,
    }


# --- the worker processes' side of ``build``'s process pool ---------------------------------------

STOP_MARKER = ".stopping"  # written into the folder being built when the generator stops early


def worker_init(parent_pid: int) -> None:
    """Runs first in every worker: die with the generator, leave Ctrl-C to it."""
    # Ctrl-C in a terminal reaches the whole process group; the parent stops the pool itself.
    # The worker started with SIGINT blocked (build._ctrl_c_held); one that came meanwhile is dropped.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    die_with_parent(parent_pid)
    exit_when_orphaned(parent_pid, "datagen-parent-watch")


def write_partition_unless_stopping(directory: str, params: Params, index: int) -> dict | None:
    """``write_partition``, unless the generator is stopping (Ctrl-C, an error): then the partitions
    already queued for the workers are skipped at once instead of being generated into a folder
    about to be removed, and the pool stops after the partitions being written."""
    if os.path.exists(os.path.join(directory, STOP_MARKER)):
        return None
    return write_partition(directory, params, index)
