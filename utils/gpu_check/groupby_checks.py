"""Checks 3 and 4a: total sales per customer on the GPUs, exact against the ground truth, timed
against the same computation on the CPU."""

from __future__ import annotations

import contextlib
import io
import time
from collections import Counter
from collections.abc import Callable
from typing import Any

import numpy as np

from utils.gpu_check.defaults import MIN_PARTITIONS
from utils.gpu_check.prerequisites import cudf_missing, importable
from utils.gpu_check.runner import Context, NotRun
from utils.transactions import FIRST_CUSTOMER_ID, customer_ids, generate_partition, partition_rows


def _timed(func: Callable[[], Any], repeats: int) -> tuple[Any, list[float]]:
    """Run ``func`` ``repeats`` times; return the last result and every wall-clock time."""
    from utils.profiling import time_call

    times, result = [], None
    for _ in range(max(1, repeats)):
        result, seconds = time_call(func)
        times.append(round(seconds, 4))
    return result, times


def _type_name(obj: Any) -> str:
    """``cupy.ndarray``, ``cudf.core.series.Series``, ...: proves where a result was computed."""
    return f"{type(obj).__module__}.{type(obj).__qualname__}"


# --- check 3: CuPy groupby-sum (bincount partial sums) and its NumPy twin -------------------------


def _host_partition(seed: int, index: int, rows: int, partitions: int, customers: int) -> tuple:
    """Runs on a worker: one partition's customer_id and sales_amount columns (NumPy), from the
    same deterministic generator as the course's dataset."""
    table = generate_partition(seed, index, rows, partitions, customers).table
    return (
        table.column("customer_id").to_numpy(),
        table.column("sales_amount").to_numpy(),
    )


def host_arrays(rows: int, partitions: int, customers: int, seed: int) -> tuple[Any, Any]:
    """Lazy ``dask.array`` columns (customer_id, sales_amount), one chunk per partition."""
    import dask
    import dask.array as da

    ids, amounts = [], []
    for index in range(partitions):
        part = dask.delayed(_host_partition, pure=True)(seed, index, rows, partitions, customers)
        n = partition_rows(rows, partitions, index)[1]
        ids.append(da.from_delayed(part[0], (n,), dtype=np.int64))
        amounts.append(da.from_delayed(part[1], (n,), dtype=np.float64))
    return da.concatenate(ids), da.concatenate(amounts)


def _array_module(array: Any) -> Any:
    if type(array).__module__.startswith("cupy"):
        import cupy

        return cupy
    return np


def _partial_sums(ids: Any, amounts: Any, customers: int) -> Any:
    """One chunk's sales per customer in cents, as a (1, customers) block, with NumPy or CuPy:
    the integer customer ids are the bins of a weighted ``bincount``."""
    xp = _array_module(ids)
    cents = xp.rint(amounts * 100.0)  # float64 sums of integers are exact below 2**53
    sums = xp.bincount(ids - FIRST_CUSTOMER_ID, weights=cents, minlength=customers)
    if sums.shape[0] != customers:
        raise ValueError(f"customer ids outside [{FIRST_CUSTOMER_ID}, +{customers})")
    return sums[None, :]


def bincount_groupby(ids: Any, amounts: Any, customers: int, split_every: int = 8) -> Any:
    """Total cents per customer (index ``customer_id - FIRST_CUSTOMER_ID``) as a lazy array:
    per-chunk partial sums where the data lives, then a tree reduction across workers. The chunks
    may be NumPy or CuPy arrays; the graph is the same."""
    import dask.array as da

    meta = ids._meta.astype(np.float64).reshape(0, 0)
    partials = da.map_blocks(
        _partial_sums,
        ids,
        amounts,
        customers=customers,
        new_axis=1,
        chunks=((1,) * ids.numblocks[0], (customers,)),
        dtype=np.float64,
        meta=meta,
    )
    return partials.sum(axis=0, split_every=split_every)


def ground_truth_cents(rows: int, partitions: int, customers: int, seed: int) -> tuple[np.ndarray, int]:
    """Exact cents per customer (indexed like ``bincount_groupby``) and the row count, summed by
    ``utils.groundtruth`` in this process, without Dask, CuPy or the code under check."""
    from utils.groundtruth import Totals, partial_totals

    totals = Totals(customers)
    for index in range(partitions):
        part = generate_partition(seed, index, rows, partitions, customers)
        totals.add(partial_totals(part, customers))
    by_id = np.zeros(customers, dtype=np.int64)
    by_id[customer_ids(np.arange(customers), customers) - FIRST_CUSTOMER_ID] = totals.customer_cents
    return by_id, int(totals.customer_count.sum())


def compare_cents(result: Any, expected: np.ndarray) -> dict[str, Any]:
    """Exact integer comparison; ``matches`` is True only when every customer agrees."""
    got = np.rint(np.asarray(result, dtype=np.float64)).astype(np.int64)
    if got.shape != expected.shape:
        return {"matches": False, "why": f"shape {got.shape}, expected {expected.shape}"}
    wrong = np.flatnonzero(got != expected)
    out: dict[str, Any] = {
        "matches": wrong.size == 0,
        "customers": int(expected.size),
        "mismatched_customers": int(wrong.size),
        "total_cents": int(got.sum()),
        "expected_total_cents": int(expected.sum()),
    }
    if wrong.size:
        i = int(wrong[0])
        out["example"] = {
            "customer_id": FIRST_CUSTOMER_ID + i, "got_cents": int(got[i]), "expected_cents": int(expected[i])
        }
    return out


def partitions_per_worker(client: Any, collection: Any) -> dict[str, int]:
    """How many chunks of a persisted collection each worker holds (waits for them first)."""
    from distributed import futures_of, wait

    futures = futures_of(collection)
    wait(futures)
    holders = client.who_has(futures)
    return dict(Counter(addr for addrs in holders.values() for addr in addrs))


def check_cupy_groupby(ctx: Context, details: dict[str, Any]) -> str:
    client = ctx.require_client()
    import cupy
    from distributed import futures_of, wait

    if not importable("numba"):
        raise AssertionError(
            "numba is not installed, and distributed sends CuPy arrays between processes through "
            "numba.cuda; install numba-cuda[cu12] (requirements-gpu.txt's cudf brings it)"
        )

    from utils.backend import to_pandas

    args = ctx.args
    workers = len(client.scheduler_info(n_workers=-1)["workers"])
    rows, customers, seed = args.rows, args.customers, args.seed
    partitions = args.partitions or min(rows, max(MIN_PARTITIONS, 2 * workers))
    details.update(rows=rows, partitions=partitions, customers=customers, seed=seed, workers=workers)

    started = time.perf_counter()
    expected, truth_rows = ground_truth_cents(rows, partitions, customers, seed)
    details["ground_truth_seconds"] = round(time.perf_counter() - started, 3)
    if truth_rows != rows:
        raise AssertionError(f"ground truth counted {truth_rows} rows, expected {rows}")

    held: list[Any] = []
    try:
        started = time.perf_counter()
        ids, amounts = client.persist(list(host_arrays(rows, partitions, customers, seed)))
        held += [ids, amounts]
        wait(futures_of(ids) + futures_of(amounts))
        details["generate_on_workers_seconds"] = round(time.perf_counter() - started, 3)

        started = time.perf_counter()
        ids_gpu = ids.map_blocks(cupy.asarray, meta=cupy.empty((0,), dtype=np.int64))
        amounts_gpu = amounts.map_blocks(cupy.asarray, meta=cupy.empty((0,), dtype=np.float64))
        ids_gpu, amounts_gpu = client.persist([ids_gpu, amounts_gpu])
        held += [ids_gpu, amounts_gpu]
        wait(futures_of(ids_gpu) + futures_of(amounts_gpu))
        details["host_to_device_seconds"] = round(time.perf_counter() - started, 3)
        details["gpu_partitions_per_worker"] = partitions_per_worker(client, ids_gpu)

        gpu_graph = bincount_groupby(ids_gpu, amounts_gpu, customers)
        cpu_graph = bincount_groupby(ids, amounts, customers)
        details["graph"] = "map_blocks(bincount) per chunk, then sum(axis=0, split_every=8)"
        details["gpu_chunk_type"] = _type_name(gpu_graph._meta)

        def run_gpu() -> Any:
            return client.compute(gpu_graph, sync=True)

        def run_cpu() -> Any:
            return client.compute(cpu_graph, sync=True)

        _, first = _timed(run_gpu, 1)  # includes CuPy's one-off kernel compilation
        details["gpu_first_run_seconds"] = first[0]
        gpu_result, gpu_times = _timed(run_gpu, args.repeats)
        details["gpu_result_type"] = _type_name(gpu_result)
        cpu_result, cpu_times = _timed(run_cpu, args.repeats)
        details["cpu_result_type"] = _type_name(cpu_result)
    finally:
        for collection in held:
            client.cancel(futures_of(collection))

    details["gpu_seconds"], details["cpu_seconds"] = gpu_times, cpu_times
    speedup = min(cpu_times) / min(gpu_times) if min(gpu_times) > 0 else float("inf")
    details["gpu_speedup"] = round(speedup, 2)
    details["cpu_twin_note"] = f"NumPy on the same {workers} worker(s), their threads, host memory"
    if not details["gpu_result_type"].startswith("cupy"):
        raise AssertionError(f"the GPU twin returned {details['gpu_result_type']}, not a CuPy array")
    details["gpu_vs_ground_truth"] = gpu_cmp = compare_cents(to_pandas(gpu_result), expected)
    details["cpu_vs_ground_truth"] = cpu_cmp = compare_cents(cpu_result, expected)
    if not gpu_cmp["matches"]:
        raise AssertionError(f"CuPy totals differ from the ground truth: {gpu_cmp}")
    if not cpu_cmp["matches"]:
        raise AssertionError(f"NumPy twin differs from the ground truth: {cpu_cmp}")
    return (
        f"{rows:,} rows, {partitions} partitions: exact for all {customers:,} customers; "
        f"GPU {min(gpu_times):.3f} s, NumPy {min(cpu_times):.3f} s ({speedup:.1f}x)"
    )


# --- check 4a: cudf groupby-sum against pandas --------------------------------------------------


def groupby_sum(dataset: Any) -> Any:
    """The article's question, lazily: total sales per customer from the CSV part files."""
    import dask.dataframe as dd

    frame = dd.read_csv(dataset.csv_glob, **dataset.csv_kwargs)
    return frame.groupby("customer_id")["sales_amount"].sum()


def time_groupby(client: Any, dataset: Any, backend: str, repeats: int) -> tuple[Any, list[float], str]:
    """Build and compute ``groupby_sum`` with ``dataframe.backend=backend`` on ``client``;
    return the result as pandas, the times, and the computed result's type."""
    import dask

    from utils.backend import to_pandas

    with dask.config.set({"dataframe.backend": backend, "dataframe.shuffle.method": "tasks"}):
        result, times = _timed(lambda: client.compute(groupby_sum(dataset), sync=True), repeats)
    return to_pandas(result), times, _type_name(result)


def check_cudf_groupby(ctx: Context, details: dict[str, Any]) -> str:
    missing = cudf_missing()
    if missing:
        raise NotRun(f"cudf not installed ({', '.join(missing)} cannot be imported)")
    client = ctx.require_client()
    from utils.checks import check_customer_totals
    from utils.datagen import ensure_dataset

    started = time.perf_counter()
    dataset = ensure_dataset(ctx.args.timing_scale)
    details["dataset"] = {"scale": dataset.scale, "rows": dataset.rows, "csv_bytes": dataset.size_bytes("csv")}
    details["dataset_ready_seconds"] = round(time.perf_counter() - started, 3)
    times = {}
    for backend in ("cudf", "pandas"):
        result, times[backend], kind = time_groupby(client, dataset, backend, ctx.args.repeats)
        details[backend] = {"seconds": times[backend], "result_type": kind}
        with contextlib.redirect_stdout(io.StringIO()) as said:
            check_customer_totals(result, dataset)  # raises CheckFailed when wrong
        details[backend]["ground_truth"] = said.getvalue().strip()
    if not details["cudf"]["result_type"].startswith("cudf"):
        raise AssertionError(f"the cudf run returned {details['cudf']['result_type']}")
    speedup = min(times["pandas"]) / min(times["cudf"])
    details["cudf_speedup"] = round(speedup, 2)
    details["pandas_note"] = "pandas on the same GPU workers' threads (one per worker by default)"
    return (
        f"{dataset.rows:,} rows from CSV: cudf {min(times['cudf']):.2f} s, "
        f"pandas {min(times['pandas']):.2f} s ({speedup:.1f}x), both exact"
    )
