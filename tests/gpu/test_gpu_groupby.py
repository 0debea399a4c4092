"""Checks 3 and 4a: total sales per customer on the GPUs, exact against the generator's ground
truth, with the same computation on the CPU timed in the same run.

``GPU_CHECK_ROWS`` sets the rows of the CuPy/NumPy twin (default 20_000_000: 320 MB on host and
device, fits any GPU with 4 GB; Dask's per-task overhead is then a visible part of both timings,
so raise it on a large GPU for a throughput comparison). The timings are indicative: the CPU side
runs on the same GPU workers' threads, not on a tuned all-core CPU cluster.
"""

from __future__ import annotations

import os
from collections import Counter
from typing import Any

import numpy as np
import pytest

from utils.backend import Backend, to_pandas
from utils.datagen.transactions import FIRST_CUSTOMER_ID, customer_ids, generate_partition, partition_rows
from utils.machine import installed
from utils.profiling import time_call

pytestmark = pytest.mark.gpu

ROWS = int(os.environ.get("GPU_CHECK_ROWS", "20_000_000"))
CUSTOMERS, SEED = 100_000, 42  # the `small` dataset's customers
REPEATS = 3  # timed runs of each side; the best is compared
TIMING_SCALE = "small"  # cudf vs pandas on 10 M rows: the tiny scale's 20 000 rows time only overhead


def _type_name(obj: Any) -> str:
    """``cupy.ndarray``, ``cudf.core.series.Series``, ...: where a result was computed."""
    return f"{type(obj).__module__}.{type(obj).__qualname__}"


def _timed(run, repeats: int = REPEATS) -> tuple[Any, list[float]]:
    runs = [time_call(run) for _ in range(repeats)]
    return runs[-1][0], [round(seconds, 4) for _, seconds in runs]


def _host_partition(index: int, rows: int, partitions: int, customers: int, seed: int) -> tuple:
    """Runs on a worker: one partition's customer_id and sales_amount, from the course's generator."""
    table = generate_partition(seed, index, rows, partitions, customers).table
    return table.column("customer_id").to_numpy(), table.column("sales_amount").to_numpy()


def host_arrays(rows: int, partitions: int, customers: int, seed: int) -> tuple[Any, Any]:
    """Lazy ``dask.array`` columns (customer_id, sales_amount), one NumPy chunk per partition."""
    import dask
    import dask.array as da

    ids, amounts = [], []
    for index in range(partitions):
        part = dask.delayed(_host_partition, pure=True)(index, rows, partitions, customers, seed)
        n = partition_rows(rows, partitions, index)[1]
        ids.append(da.from_delayed(part[0], (n,), dtype=np.int64))
        amounts.append(da.from_delayed(part[1], (n,), dtype=np.float64))
    return da.concatenate(ids), da.concatenate(amounts)


def _partial_sums(ids: Any, amounts: Any, customers: int) -> Any:
    """One chunk's cents per customer, a (1, customers) block from a weighted ``bincount`` over the
    integer customer ids, with NumPy or CuPy alike."""
    xp = np
    if type(ids).__module__.startswith("cupy"):
        import cupy as xp
    cents = xp.rint(amounts * 100.0)  # float64 sums of whole cents are exact below 2**53
    sums = xp.bincount(ids - FIRST_CUSTOMER_ID, weights=cents, minlength=customers)
    if sums.shape[0] != customers:
        raise ValueError(f"customer ids outside [{FIRST_CUSTOMER_ID}, +{customers})")
    return sums[None, :]


def bincount_groupby(ids: Any, amounts: Any, customers: int, split_every: int = 8) -> Any:
    """Lazy cents per customer (index ``customer_id - FIRST_CUSTOMER_ID``): partial sums where each
    chunk lives, then a tree reduction across workers; the same graph on NumPy or CuPy chunks."""
    import dask.array as da

    partials = da.map_blocks(
        _partial_sums, ids, amounts, customers=customers, new_axis=1, dtype=np.float64,
        chunks=((1,) * ids.numblocks[0], (customers,)), meta=ids._meta.astype(np.float64).reshape(0, 0),
    )
    return partials.sum(axis=0, split_every=split_every)


def ground_truth_cents(rows: int, partitions: int, customers: int, seed: int) -> np.ndarray:
    """Exact cents per customer, indexed like ``bincount_groupby``, from ``utils.datagen.groundtruth`` in
    this process (no Dask, no CuPy, none of the code under test)."""
    from utils.datagen.groundtruth import Totals, partial_totals

    totals = Totals(customers)
    for index in range(partitions):
        totals.add(partial_totals(generate_partition(seed, index, rows, partitions, customers), customers))
    assert int(totals.customer_count.sum()) == rows
    by_id = np.zeros(customers, dtype=np.int64)
    by_id[customer_ids(np.arange(customers), customers) - FIRST_CUSTOMER_ID] = totals.customer_cents
    return by_id


def assert_exact(result: Any, expected: np.ndarray, what: str) -> None:
    got = np.rint(np.asarray(result, dtype=np.float64)).astype(np.int64)
    assert got.shape == expected.shape, f"{what}: shape {got.shape}, expected {expected.shape}"
    wrong = np.flatnonzero(got != expected)
    assert wrong.size == 0, (f"{what}: {wrong.size} of {expected.size} customers differ, e.g. customer "
                             f"{FIRST_CUSTOMER_ID + wrong[0]}: {got[wrong[0]]} cents, expected {expected[wrong[0]]}")


def test_3_cupy_bincount_groupby_equals_ground_truth_numpy_twin_timed(client, record_property):
    import cupy
    from distributed import futures_of, wait

    assert installed("numba"), "distributed moves CuPy arrays between workers through numba.cuda: install numba-cuda"
    workers = len(client.scheduler_info(n_workers=-1)["workers"])
    partitions = min(ROWS, max(16, 2 * workers))  # every GPU gets work
    expected = ground_truth_cents(ROWS, partitions, CUSTOMERS, SEED)
    ids, amounts = client.persist(list(host_arrays(ROWS, partitions, CUSTOMERS, SEED)))
    to_gpu = [col.map_blocks(cupy.asarray, meta=cupy.empty((0,), dtype=col.dtype)) for col in (ids, amounts)]
    ids_gpu, amounts_gpu = client.persist(to_gpu)
    wait(futures_of(ids_gpu) + futures_of(amounts_gpu))
    placed = Counter(a for holders in client.who_has(futures_of(ids_gpu)).values() for a in holders)
    gpu_graph, cpu_graph = (bincount_groupby(i, a, CUSTOMERS) for i, a in ((ids_gpu, amounts_gpu), (ids, amounts)))
    _, first = _timed(lambda: client.compute(gpu_graph, sync=True), 1)  # includes CuPy's kernel compilation
    gpu_result, gpu_times = _timed(lambda: client.compute(gpu_graph, sync=True))
    cpu_result, cpu_times = _timed(lambda: client.compute(cpu_graph, sync=True))
    speedup = min(cpu_times) / min(gpu_times)
    for key, value in dict(
        rows=ROWS, partitions=partitions, customers=CUSTOMERS, workers=workers, gpu_chunks_per_worker=dict(placed),
        gpu_result_type=_type_name(gpu_result), gpu_first_run_seconds=first[0], gpu_seconds=gpu_times,
        numpy_seconds=cpu_times, gpu_speedup=round(speedup, 2), numpy_side=f"the same {workers} worker(s), host memory",
    ).items():
        record_property(key, value)
    assert _type_name(gpu_result).startswith("cupy"), f"the GPU graph returned {_type_name(gpu_result)}"
    assert_exact(to_pandas(gpu_result), expected, "CuPy totals")
    assert_exact(cpu_result, expected, "NumPy twin")
    record_property("summary", f"{ROWS:,} rows, {partitions} partitions: exact for all {CUSTOMERS:,} customers; "
                    f"GPU {min(gpu_times):.3f} s, NumPy {min(cpu_times):.3f} s ({speedup:.1f}x)")


def test_4a_cudf_groupby_equals_ground_truth_pandas_timed(client, record_property):
    pytest.importorskip("cudf", reason="cudf not installed")
    pytest.importorskip("dask_cudf", reason="cudf not installed (dask_cudf missing)")
    import dask
    import dask.dataframe as dd

    from utils.checks import check_customer_totals
    from utils.dataset import ensure_dataset

    dataset = ensure_dataset(TIMING_SCALE)
    times = {}
    gpu_shuffle = Backend("gpu", "the GPU policy").shuffle_method
    for backend in ("cudf", "pandas"):
        # the same (GPU) shuffle policy for both backends, so the comparison is like for like
        with dask.config.set({"dataframe.backend": backend, "dataframe.shuffle.method": gpu_shuffle}):
            totals = dd.read_csv(dataset.csv_files, **dataset.csv_kwargs).groupby("customer_id")["sales_amount"].sum()
            result, times[backend] = _timed(lambda totals=totals: client.compute(totals, sync=True))
        record_property(f"{backend}_seconds", times[backend])
        record_property(f"{backend}_result_type", _type_name(result))
        assert backend != "cudf" or _type_name(result).startswith("cudf"), f"cudf returned {_type_name(result)}"
        check_customer_totals(to_pandas(result), dataset)  # raises CheckFailed when a total is wrong
    speedup = min(times["pandas"]) / min(times["cudf"])
    record_property("summary", f"{dataset.rows:,} rows from CSV: cudf {min(times['cudf']):.2f} s, pandas "
                    f"{min(times['pandas']):.2f} s on the same workers ({speedup:.1f}x), both exact")
