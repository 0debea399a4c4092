"""``make gpu-check``: run the course's GPU path on a real NVIDIA GPU and write a report.

    python -m utils.gpu_check [--report-dir reports] [--skip-notebooks] [--rows N] ...

On a machine without an NVIDIA GPU it stops at once with one ``error:`` line on stderr and exit
status 2, and writes nothing: a CPU run is never reported as a GPU run. On a GPU machine it runs
each check below independently (one check's failure never stops the others), then writes
``reports/gpu-check.json`` and ``reports/gpu-check.md`` (GPU model and count, driver and CUDA
versions, library versions, and every check with its status and timings).

Checks, in the order they run:

1a ``cluster``        - ``dask_cuda.LocalCUDACluster`` starts one worker per visible GPU, each
                        worker on a different physical GPU (works without cudf);
1b ``backend-choice`` - the course's ``utils.start_client()`` picks ``LocalCUDACluster`` and the
                        cudf backend by itself (needs cudf; "not run" without it);
2  ``dashboard``      - the dashboard's GPU pages answer, and every worker sends the GPU metrics
                        those pages plot (a CPU cluster answers the pages too, with blank plots);
3  ``cupy-groupby``   - total sales per customer as per-partition ``cupy.bincount`` partial sums,
                        reduced across workers by ``dask.array``, equal to the generator's exact
                        ground truth in integer cents; the NumPy twin timed in the same run;
4a ``cudf-groupby``   - the article's CSV groupby-sum with the cudf backend against pandas, both
                        checked against the ground truth and timed (needs cudf);
4b ``notebooks``      - every notebook under nbval with ``COURSE_BACKEND=gpu``, serially
                        (needs cudf).

Statuses: ``pass``, ``fail``, ``skip`` (left out on request) and ``not run`` (a prerequisite is
missing, e.g. cudf). Exit status: 0 when no check failed, 1 when one did, 2 when nothing could
run. GPU libraries are imported inside functions, so the module imports on any machine.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import logging
import os
import platform
import re
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
import xml.etree.ElementTree as ET
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from importlib import metadata, util
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import numpy as np

from utils.backend import gpu_count
from utils.transactions import FIRST_CUSTOMER_ID, customer_ids, generate_partition, partition_rows

REPO_ROOT = Path(__file__).resolve().parents[1]
DEFAULT_REPORT_DIR = REPO_ROOT / "reports"
REPORT_STEM = "gpu-check"
REPORT_SCHEMA = 1
GPU_INSTALL_HINT = "pip install -r requirements-gpu.txt -c constraints.txt"
GPU_PAGES = ("/individual-gpu-utilization", "/individual-gpu-memory")
GPU_METRICS = ("gpu_utilization", "gpu_memory_used", "gpu-memory-total")

PASS, FAIL, SKIP, NOT_RUN = "pass", "fail", "skip", "not run"
STATUSES = (PASS, FAIL, SKIP, NOT_RUN)

# Defaults, and why:
# - 20 M rows for the CuPy/NumPy twin: 320 MB on the host and on the device (fits any CUDA GPU
#   with 4 GB or more), and the CPU ground truth takes a few seconds. At this size Dask's
#   per-task overhead is a visible part of both timings: the check is about exact results on
#   the GPU; for a throughput comparison raise --rows (e.g. 200_000_000 on a 40 GB+ GPU).
# - 100 000 customers: the `small` preset's, so the bincount bins match the laptop dataset.
# - the notebooks at the `tiny` scale: the same scale CI uses, so the stored outputs compare;
#   the cudf-vs-pandas timing at `small` (10 M rows), the laptop default, where it means
#   something (tiny's 20 000 rows measure only overhead).
DEFAULT_ROWS = 20_000_000
DEFAULT_CUSTOMERS = 100_000
MIN_PARTITIONS = 16
DEFAULT_NOTEBOOK_SCALE = "tiny"
DEFAULT_TIMING_SCALE = "small"
DEFAULT_REPEATS = 3
DEFAULT_NOTEBOOK_TIMEOUT_S = 3600
METRICS_WAIT_S = 20.0  # workers send GPU metrics with their heartbeats (about every second)


# --- results and the runner ---------------------------------------------------------------------


class NotRun(Exception):
    """A prerequisite is missing (cudf not installed, no cluster): the check could not run."""


class Skipped(Exception):
    """The check was left out on request (e.g. ``--skip-notebooks``)."""


@dataclass
class CheckResult:
    """One check's outcome; ``reason`` explains any status other than pass."""

    name: str
    title: str
    status: str  # pass | fail | skip | not run
    seconds: float
    summary: str = ""
    reason: str = ""
    details: dict[str, Any] = field(default_factory=dict)


CheckFunction = Callable[["Context", dict[str, Any]], "str | None"]


@dataclass(frozen=True)
class Check:
    """A labelled check: ``func(ctx, details)`` fills ``details``, returns a one-line summary
    and raises to fail (any exception), ``NotRun`` or ``Skipped``."""

    label: str  # "1a", "2", ...
    name: str
    title: str
    func: CheckFunction


def run_check(check: Check, ctx: Context) -> CheckResult:
    """Run one check; whatever it raises is recorded, never propagated (except Ctrl-C)."""
    details: dict[str, Any] = {}
    started = time.perf_counter()
    summary, reason = "", ""
    try:
        summary = check.func(ctx, details) or ""
        status = PASS
    except Skipped as error:
        status, reason = SKIP, str(error)
    except NotRun as error:
        status, reason = NOT_RUN, str(error)
    except Exception as error:  # a failing check must not stop the others
        status, reason = FAIL, f"{type(error).__name__}: {error}".strip()
    seconds = round(time.perf_counter() - started, 3)
    return CheckResult(
        f"{check.label} {check.name}", check.title, status, seconds, summary, reason, details
    )


def run_checks(
    checks: Sequence[Check], ctx: Context, progress: Callable[[str], None] | None = None
) -> list[CheckResult]:
    results = []
    for number, check in enumerate(checks, 1):
        if progress:
            progress(f"[{number}/{len(checks)}] {check.label} {check.title} ...")
        result = run_check(check, ctx)
        if progress:
            note = result.summary if result.status == PASS else result.reason
            progress(f"    {result.status} ({result.seconds:.1f} s){': ' + note if note else ''}")
        results.append(result)
    return results


def exit_code(results: Sequence[CheckResult]) -> int:
    """0 when no check failed (skipped and not-run checks are reported, not failures), else 1."""
    return 1 if any(r.status == FAIL for r in results) else 0


# --- shared state between checks ----------------------------------------------------------------


@dataclass
class Context:
    """What the checks share: the arguments and the cluster that check 1a starts."""

    args: argparse.Namespace
    expected_gpus: int = 0
    client: Any = None
    cluster: Any = None
    cluster_error: str = ""
    metrics_wait_s: float = METRICS_WAIT_S

    def require_client(self) -> Any:
        if self.client is None:
            why = self.cluster_error or "check 1a (cluster) did not start one"
            raise NotRun(f"no cluster: {why}")
        return self.client

    def release_cluster(self) -> None:
        """Close the client and the cluster this run started (an external one is left up)."""
        client, cluster = self.client, self.cluster
        self.client = self.cluster = None
        if client is not None:
            with contextlib.suppress(Exception):
                client.close()
        if cluster is not None:
            with contextlib.suppress(Exception):
                cluster.close()


def _importable(module: str) -> bool:
    try:
        return util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def cudf_missing() -> list[str]:
    return [m for m in ("cudf", "dask_cudf") if not _importable(m)]


def expected_gpu_workers() -> int:
    """Workers ``LocalCUDACluster`` should start: one per entry of ``CUDA_VISIBLE_DEVICES`` when it
    is set (that is what dask-cuda reads), else one per GPU that NVML reports."""
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if visible is not None:
        return len([d for d in visible.split(",") if d.strip()])
    return gpu_count()


@contextlib.contextmanager
def _restored_dask_config(*keys: str) -> Iterator[None]:
    """Undo global ``dask.config.set`` calls made inside (``utils.start_client`` makes some)."""
    import dask

    saved = {key: dask.config.get(key, default=None) for key in keys}
    try:
        yield
    finally:
        dask.config.set(saved)


def _timed(func: Callable[[], Any], repeats: int) -> tuple[Any, list[float]]:
    """Run ``func`` ``repeats`` times; return the last result and every wall-clock time."""
    times, result = [], None
    for _ in range(max(1, repeats)):
        started = time.perf_counter()
        result = func()
        times.append(round(time.perf_counter() - started, 4))
    return result, times


def _type_name(obj: Any) -> str:
    return f"{type(obj).__module__}.{type(obj).__qualname__}"


# --- check 1a: LocalCUDACluster -----------------------------------------------------------------


def _worker_gpu_identity() -> dict[str, Any]:
    """Runs on each worker: which GPU it computes on, as CuPy sees it."""
    out: dict[str, Any] = {"cuda_visible_devices": os.environ.get("CUDA_VISIBLE_DEVICES")}
    try:
        import cupy

        device = cupy.cuda.Device()
        props = cupy.cuda.runtime.getDeviceProperties(device.id)
        name = props.get("name", b"")
        out.update(
            device=int(device.id),
            name=name.decode(errors="replace") if isinstance(name, bytes) else str(name),
            pci_bus_id=str(device.pci_bus_id),
            memory_bytes=int(props.get("totalGlobalMem", 0)),
        )
    except Exception as error:  # reported per worker
        out["error"] = f"{type(error).__name__}: {error}"
    return out


def check_cluster(ctx: Context, details: dict[str, Any]) -> str:
    from distributed import Client

    address = ctx.args.scheduler_address
    try:
        if address:
            client, cluster = Client(address, timeout="60s"), None
        else:
            from dask_cuda import LocalCUDACluster

            cluster = LocalCUDACluster(dashboard_address=":0", silence_logs=logging.ERROR)
            client = Client(cluster)
    except Exception as error:
        ctx.cluster_error = f"the cluster did not start ({type(error).__name__}: {error})"
        raise
    ctx.client, ctx.cluster = client, cluster
    details["cluster"] = type(cluster).__name__ if cluster is not None else f"external: {address}"
    workers = client.scheduler_info(n_workers=-1)["workers"]
    details["workers"] = len(workers)
    details["threads_per_worker"] = sorted({w["nthreads"] for w in workers.values()})
    details["dashboard"] = client.dashboard_link
    identities = client.run(_worker_gpu_identity)
    details["worker_gpus"] = identities
    broken = {addr: ident["error"] for addr, ident in identities.items() if "error" in ident}
    if broken:
        addr, why = next(iter(broken.items()))
        raise AssertionError(f"{len(broken)} of {len(identities)} workers cannot use a GPU ({addr}: {why})")
    distinct = sorted({ident["pci_bus_id"] for ident in identities.values()})
    details["distinct_gpus"] = len(distinct)
    names = ", ".join(sorted({ident["name"] for ident in identities.values()}))
    if not workers:
        raise AssertionError("the cluster has no workers")
    if cluster is None:
        return f"external cluster: {len(workers)} workers on {len(distinct)} GPU(s) ({names})"
    details["expected_workers"] = ctx.expected_gpus
    if len(workers) != ctx.expected_gpus:
        raise AssertionError(f"{len(workers)} workers started for {ctx.expected_gpus} visible GPU(s)")
    if len(distinct) != len(workers):
        raise AssertionError(f"{len(workers)} workers share {len(distinct)} GPU(s): {distinct}")
    return f"{len(workers)} worker(s), one per GPU, on {len(distinct)} distinct GPU(s) ({names})"


# --- check 1b: the course's own backend choice ---------------------------------------------------


def check_backend_choice(ctx: Context, details: dict[str, Any]) -> str:
    from utils import cluster as course
    from utils.backend import choose_backend, missing_gpu_packages

    missing = missing_gpu_packages()
    details["missing_gpu_packages"] = missing
    external = ctx.args.scheduler_address
    try:
        chosen = choose_backend(gpus=expected_gpu_workers())
        details["choose_backend"] = {"backend": chosen.name, "reason": chosen.reason}
    except ValueError as error:  # e.g. COURSE_BACKEND=gpu without cudf
        chosen, details["choose_backend"] = None, f"error: {error}"
        if not missing and not external:
            raise
    if missing:
        picked = f"picks {chosen.name} ({chosen.reason})" if chosen else details["choose_backend"]
        raise NotRun(
            f"cudf not installed ({', '.join(missing)} missing); the course's choose_backend() {picked}"
        )
    if not external and chosen.name != "gpu":
        raise AssertionError(f"choose_backend() picked {chosen.name}: {chosen.reason}")
    with _restored_dask_config("dataframe.backend", "dataframe.shuffle.method"):
        client = course.start_client(address=external, quiet=True)
        try:
            info = course.describe(client)
            details["describe"] = info
            details["cluster_class"] = type(client.cluster).__name__ if client.cluster else None
        finally:
            course.shutdown(client)
    if info["backend"] != "gpu" or info["dataframe_library"] != "cudf":
        raise AssertionError(f"start_client() chose {info['backend']}: {info['reason']}")
    if not external:
        if details["cluster_class"] != "LocalCUDACluster":
            raise AssertionError(f"start_client() started a {details['cluster_class']}")
        if info["workers"] != ctx.expected_gpus:
            raise AssertionError(f"{info['workers']} workers for {ctx.expected_gpus} GPU(s)")
    return f"start_client() chose gpu (cudf) on {info['workers']} worker(s): {info['reason']}"


# --- check 2: dashboard GPU pages ----------------------------------------------------------------


def dashboard_base(client: Any) -> str:
    """``http://host:port`` of the scheduler's dashboard, from the scheduler itself (the
    configured ``dashboard_link`` may be a JupyterHub proxy path)."""
    port = client.scheduler_info(n_workers=0).get("services", {}).get("dashboard")
    if not port:
        raise AssertionError("the scheduler serves no dashboard (is bokeh installed?)")
    host = urlsplit(client.scheduler.address).hostname or "127.0.0.1"
    if host in ("0.0.0.0", "::"):
        host = "127.0.0.1"
    return f"http://{host}:{port}"


def http_get(url: str, timeout: float = 30.0) -> tuple[int, str]:
    """Status code and body of a GET, ignoring any proxy settings (the dashboard is local)."""
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(url, timeout=timeout) as response:
            return response.status, response.read().decode("utf-8", errors="replace")
    except urllib.error.HTTPError as error:
        return error.code, ""


def is_bokeh_page(html: str) -> bool:
    """A Bokeh server page with at least one root model (a figure) in its document."""
    return "Bokeh" in html and re.search(r'"root_ids"\s*:\s*\[\s*"', html) is not None


def _scheduler_gpu_metrics(dask_scheduler: Any = None) -> dict[str, dict[str, Any]]:
    """Runs on the scheduler: the GPU metrics each worker last sent (what the GPU pages plot).
    A key is absent when the worker sends none; utilization may be None (e.g. on MIG slices)."""
    return {
        address: {key: ws.metrics[key] for key in GPU_METRICS if key in ws.metrics}
        for address, ws in dask_scheduler.workers.items()
    }


def _has_gpu_metrics(metrics: dict[str, Any]) -> bool:
    return all(key in metrics for key in GPU_METRICS) and metrics["gpu-memory-total"] is not None


def gpu_metrics(client: Any, wait_s: float) -> dict[str, dict[str, Any]]:
    """Poll until every worker has sent GPU metrics, or ``wait_s`` passes."""
    deadline = time.monotonic() + wait_s
    while True:
        metrics = client.run_on_scheduler(_scheduler_gpu_metrics)
        complete = metrics and all(_has_gpu_metrics(m) for m in metrics.values())
        if complete or time.monotonic() >= deadline:
            return metrics
        time.sleep(0.5)


def check_dashboard(ctx: Context, details: dict[str, Any]) -> str:
    client = ctx.require_client()
    base = dashboard_base(client)
    details["dashboard"] = base
    pages = {}
    for page in GPU_PAGES:
        code, html = http_get(base + page)
        pages[page] = {"http_status": code, "bokeh_document": is_bokeh_page(html)}
    details["pages"] = pages
    bad = [p for p, r in pages.items() if r["http_status"] != 200 or not r["bokeh_document"]]
    if bad:
        raise AssertionError(f"GPU page(s) did not answer with a Bokeh document: {pages}")
    metrics = gpu_metrics(client, ctx.metrics_wait_s)
    details["gpu_metrics"] = metrics
    blank = [addr for addr, m in metrics.items() if not _has_gpu_metrics(m)]
    if not metrics or blank:
        raise AssertionError(
            f"the GPU pages answer but {len(blank) or 'no'} worker(s) send no GPU metrics, so "
            "their plots are blank (workers need pynvml and a GPU)"
        )
    return f"both GPU pages answer 200 with a Bokeh document; {len(metrics)} worker(s) send GPU metrics"


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

    if not _importable("numba"):
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


# --- check 4b: notebooks under nbval with the cudf backend --------------------------------------

_ANSI = re.compile(r"(?:\x1b|#x1B)\[[0-9;]*m")


def _notebook_key(path: Path) -> str:
    """The junit ``classname`` pytest gives a notebook's cells (``notebooks.01_x.ipynb``)."""
    relative = path.resolve().relative_to(REPO_ROOT) if path.is_absolute() else path
    return ".".join(relative.with_suffix("").parts) + ".ipynb"


def parse_junit(xml_text: str, notebooks: Sequence[Path] = ()) -> dict[str, dict[str, Any]]:
    """Per-notebook outcome from pytest's junit XML (one testcase per notebook cell)."""
    names = {_notebook_key(p): p.name for p in notebooks}
    out: dict[str, dict[str, Any]] = {}
    for case in ET.fromstring(xml_text).iter("testcase"):
        key = case.get("classname", "")
        name = names.get(key, key.rsplit(".", 2)[-2] + ".ipynb" if key.endswith(".ipynb") else key)
        entry = out.setdefault(
            name, {"status": PASS, "cells": 0, "failed_cells": [], "skipped_cells": 0, "seconds": 0.0}
        )
        entry["cells"] += 1
        entry["seconds"] = round(entry["seconds"] + float(case.get("time") or 0.0), 3)
        problem = case.find("failure")
        if problem is None:
            problem = case.find("error")
        if problem is not None:
            entry["status"] = FAIL
            entry["failed_cells"].append(case.get("name", "?"))
            if "first_failure" not in entry:
                message = _ANSI.sub("", problem.get("message") or problem.text or "")
                entry["first_failure"] = message.strip()[:500]
        elif case.find("skipped") is not None:
            entry["skipped_cells"] += 1
    for entry in out.values():
        if entry["status"] == PASS and entry["cells"] == entry["skipped_cells"]:
            entry["status"] = SKIP
    return out


def check_notebooks(ctx: Context, details: dict[str, Any]) -> str:
    if ctx.args.skip_notebooks:
        raise Skipped("--skip-notebooks was given")
    missing = cudf_missing()
    if missing:
        raise NotRun(f"cudf not installed ({', '.join(missing)} cannot be imported)")
    notebooks = sorted((REPO_ROOT / "notebooks").glob("*.ipynb"))
    if not notebooks:
        raise NotRun("no notebooks in notebooks/")
    ctx.release_cluster()  # the notebooks start their own LocalCUDACluster on the same GPUs
    env = {**os.environ, "COURSE_BACKEND": "gpu", "COURSE_SCALE": ctx.args.scale}
    env.pop("DASK_SCHEDULER_ADDRESS", None)
    if ctx.args.scheduler_address:
        env["DASK_SCHEDULER_ADDRESS"] = ctx.args.scheduler_address
    with tempfile.TemporaryDirectory(prefix="gpu-check-") as tmp:
        junit = Path(tmp) / "notebooks.xml"
        command = [sys.executable, "-m", "pytest", "notebooks", f"--junitxml={junit}", "-q"]
        details["command"] = f"COURSE_BACKEND=gpu COURSE_SCALE={ctx.args.scale} python -m pytest notebooks"
        try:
            done = subprocess.run(
                command, cwd=REPO_ROOT, env=env, capture_output=True, text=True,
                timeout=ctx.args.notebook_timeout, check=False,
            )
        except subprocess.TimeoutExpired:
            raise AssertionError(f"the notebooks took longer than {ctx.args.notebook_timeout} s") from None
        details["pytest_exit_code"] = done.returncode
        xml_text = junit.read_text() if junit.is_file() else ""
    if not xml_text:
        details["output_tail"] = (done.stdout + done.stderr)[-3000:]
        raise AssertionError(f"pytest wrote no junit report (exit code {done.returncode})")
    per_notebook = parse_junit(xml_text, notebooks)
    details["notebooks"] = per_notebook
    failed = sorted(n for n, r in per_notebook.items() if r["status"] == FAIL)
    not_collected = sorted({p.name for p in notebooks} - set(per_notebook))
    if not_collected:
        details["not_collected"] = not_collected
    if failed or done.returncode != 0 or not_collected:
        details["output_tail"] = _ANSI.sub("", done.stdout + done.stderr)[-3000:]
        raise AssertionError(
            f"{len(failed)} of {len(notebooks)} notebooks failed ({', '.join(failed) or 'none'}); "
            f"not collected: {', '.join(not_collected) or 'none'}; pytest exit code {done.returncode}"
        )
    return f"all {len(notebooks)} notebooks pass under nbval with the cudf backend (scale {ctx.args.scale})"


CHECKS: tuple[Check, ...] = (
    Check("1a", "cluster", "LocalCUDACluster starts one worker per visible GPU", check_cluster),
    Check("1b", "backend-choice", "utils.start_client() picks LocalCUDACluster + cudf", check_backend_choice),
    Check("2", "dashboard", "dashboard GPU pages answer and have data", check_dashboard),
    Check("3", "cupy-groupby", "CuPy bincount groupby-sum = ground truth; NumPy twin timed", check_cupy_groupby),
    Check("4a", "cudf-groupby", "cudf groupby-sum = ground truth; pandas timed", check_cudf_groupby),
    Check("4b", "notebooks", "every notebook under nbval with COURSE_BACKEND=gpu", check_notebooks),
)


# --- environment, preflight ---------------------------------------------------------------------


def _nvml_reason() -> str:
    """Why NVML sees no GPU, in words (after ``gpu_count()`` has tried to initialise it)."""
    try:
        from distributed.diagnostics import nvml

        state = nvml.NVML_STATE.name
    except Exception:
        return "NVML could not be queried"
    return {
        "DISABLED_PYNVML_NOT_AVAILABLE": "pynvml is not installed, so NVML cannot be asked; on a "
        f"GPU machine: {GPU_INSTALL_HINT}",
        "DISABLED_LIBRARY_NOT_FOUND": "NVML reports 0 devices: the NVIDIA driver library was not found",
        "DISABLED_CONFIG": "NVML is disabled by the distributed.diagnostics.nvml setting",
        "DISABLED_WSL_INSUFFICIENT_DRIVER": "the WSL NVIDIA driver is too old for NVML",
    }.get(state, "NVML reports 0 devices")


def preflight(args: argparse.Namespace) -> str | None:
    """The one ``error:`` line that stops the run before anything starts, or None to go on."""
    suffix = "gpu-check only runs on a machine with an NVIDIA GPU and driver"
    if not args.scheduler_address:
        visible = os.environ.get("CUDA_VISIBLE_DEVICES")
        if visible is not None and not visible.strip():
            return f"error: no NVIDIA GPU visible (CUDA_VISIBLE_DEVICES is set and empty); {suffix}"
        if gpu_count() == 0:
            return f"error: no NVIDIA GPU visible ({_nvml_reason()}); {suffix}"
    missing = [m for m in ("dask_cuda", "cupy") if not _importable(m)]
    if missing:
        where = "the scheduler's workers" if args.scheduler_address else f"{gpu_count()} NVIDIA GPU(s)"
        return (
            f"error: {', '.join(missing)} cannot be imported here, so {where} cannot be checked; "
            f"install the GPU stack: {GPU_INSTALL_HINT}"
        )
    return None


_DISTRIBUTIONS = {
    "dask": ("dask",),
    "distributed": ("distributed",),
    "dask-cuda": ("dask-cuda",),
    "cupy": ("cupy-cuda12x", "cupy-cuda13x", "cupy"),
    "cudf": ("cudf-cu12", "cudf-cu13", "cudf"),
    "dask-cudf": ("dask-cudf-cu12", "dask-cudf-cu13", "dask-cudf"),
    "rmm": ("rmm-cu12", "rmm-cu13", "rmm"),
    "pynvml": ("nvidia-ml-py", "pynvml"),
    "numpy": ("numpy",),
    "pandas": ("pandas",),
    "pyarrow": ("pyarrow",),
    "bokeh": ("bokeh",),
    "nbval": ("nbval",),
    "pytest": ("pytest",),
}


def package_versions() -> dict[str, str | None]:
    """Installed version of each library the checks use (None: not installed)."""
    versions: dict[str, str | None] = {}
    for name, candidates in _DISTRIBUTIONS.items():
        versions[name] = None
        for dist in candidates:
            try:
                versions[name] = f"{metadata.version(dist)}" + ("" if dist == name else f" ({dist})")
                break
            except metadata.PackageNotFoundError:
                continue
    return versions


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def nvml_inventory() -> dict[str, Any]:
    """GPU models, memory, driver and CUDA driver version as NVML reports them."""
    try:
        import pynvml

        pynvml.nvmlInit()
    except Exception as error:
        return {"count": 0, "error": f"NVML unavailable ({type(error).__name__}: {error})"}
    try:
        devices = []
        for index in range(pynvml.nvmlDeviceGetCount()):
            handle = pynvml.nvmlDeviceGetHandleByIndex(index)
            devices.append(
                {
                    "index": index,
                    "name": _text(pynvml.nvmlDeviceGetName(handle)),
                    "memory_bytes": int(pynvml.nvmlDeviceGetMemoryInfo(handle).total),
                }
            )
        cuda = int(pynvml.nvmlSystemGetCudaDriverVersion())
        return {
            "count": len(devices),
            "devices": devices,
            "driver_version": _text(pynvml.nvmlSystemGetDriverVersion()),
            "cuda_driver_version": f"{cuda // 1000}.{cuda % 1000 // 10}",
        }
    except Exception as error:
        return {"count": 0, "error": f"NVML query failed ({type(error).__name__}: {error})"}
    finally:
        with contextlib.suppress(Exception):
            pynvml.nvmlShutdown()


def cuda_runtime_version() -> str | None:
    try:
        import cupy

        version = int(cupy.cuda.runtime.runtimeGetVersion())
        return f"{version // 1000}.{version % 1000 // 10}"
    except Exception:
        return None


def collect_environment(args: argparse.Namespace) -> dict[str, Any]:
    return {
        "date_utc": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "hostname": socket.gethostname(),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "cpu_count": os.cpu_count(),
        "cuda_visible_devices": os.environ.get("CUDA_VISIBLE_DEVICES"),
        "gpus": nvml_inventory(),
        "cuda_runtime_version": cuda_runtime_version(),
        "packages": package_versions(),
        "options": {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()},
    }


# --- the report ---------------------------------------------------------------------------------


def build_report(environment: dict[str, Any], results: Sequence[CheckResult], argv: Sequence[str]) -> dict[str, Any]:
    counts = Counter(r.status for r in results)
    return {
        "schema": REPORT_SCHEMA,
        "command": " ".join(["python -m utils.gpu_check", *argv]),
        "outcome": FAIL if exit_code(results) else PASS,
        "exit_code": exit_code(results),
        "counts": {status: counts.get(status, 0) for status in STATUSES},
        "environment": environment,
        "checks": [asdict(r) for r in results],
    }


def _json_default(value: Any) -> Any:
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.floating):
        return float(value)
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, (set, tuple)):
        return list(value)
    return str(value)


def _cell(value: Any) -> str:
    """Text safe inside a Markdown table cell."""
    return str(value).replace("|", "\\|").replace("\n", " ")


def _gib(n: int | None) -> str:
    return f"{n / 2**30:.1f} GiB" if n else "?"


def render_markdown(report: dict[str, Any]) -> str:
    env = report["environment"]
    gpus = env.get("gpus", {})
    counts = ", ".join(f"{n} {s}" for s, n in report["counts"].items())
    lines = [
        "# GPU check report",
        "",
        f"Generated by `{report['command']}`. Outcome: **{report['outcome'].upper()}** ({counts}).",
        "",
        f"- Date (UTC): {env.get('date_utc')}",
        f"- Host: {env.get('hostname')} ({env.get('platform')}, {env.get('cpu_count')} CPUs)",
        f"- Python: {env.get('python')}",
        f"- GPUs: {gpus.get('count', 0)}"
        + (f" ({gpus['error']})" if gpus.get("error") else ""),
    ]
    for device in gpus.get("devices", []):
        lines.append(f"  - GPU {device['index']}: {device['name']}, {_gib(device.get('memory_bytes'))}")
    lines += [
        f"- NVIDIA driver: {gpus.get('driver_version', '?')}; CUDA (driver): "
        f"{gpus.get('cuda_driver_version', '?')}; CUDA runtime (CuPy): {env.get('cuda_runtime_version') or '?'}",
        f"- CUDA_VISIBLE_DEVICES: {env.get('cuda_visible_devices')!s}",
        "",
        "## Libraries",
        "",
        "| Library | Version |",
        "|---|---|",
    ]
    for name, version in env.get("packages", {}).items():
        lines.append(f"| {_cell(name)} | {_cell(version or 'not installed')} |")
    lines += [
        "",
        "## Checks",
        "",
        "| Check | What | Status | Seconds | Result |",
        "|---|---|---|---:|---|",
    ]
    for check in report["checks"]:
        note = check["summary"] if check["status"] == PASS else check["reason"]
        lines.append(
            f"| {_cell(check['name'])} | {_cell(check['title'])} | **{check['status']}** | "
            f"{check['seconds']:.1f} | {_cell(note)} |"
        )
    lines += ["", "## Details", ""]
    for check in report["checks"]:
        lines += [f"### {check['name']} - {check['status']}", ""]
        if not check["details"]:
            lines += ["(no details)", ""]
            continue
        for key, value in check["details"].items():
            text = value if isinstance(value, str) else json.dumps(value, default=_json_default)
            lines.append(f"- `{key}`: {text}")
        lines.append("")
    return "\n".join(lines)


def _write_atomically(path: Path, text: str) -> None:
    """Write to a temporary file in the same folder, then rename: never a half-written report."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def write_report(report: dict[str, Any], directory: Path) -> tuple[Path, Path]:
    directory.mkdir(parents=True, exist_ok=True)
    json_path, md_path = directory / f"{REPORT_STEM}.json", directory / f"{REPORT_STEM}.md"
    _write_atomically(json_path, json.dumps(report, indent=1, default=_json_default) + "\n")
    _write_atomically(md_path, render_markdown(report) + "\n")
    return json_path, md_path


# --- command line -------------------------------------------------------------------------------


def _positive_int(text: str) -> int:
    value = int(text.replace("_", ""))
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {text}")
    return value


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    from utils.scales import SCALES

    parser = argparse.ArgumentParser(
        prog="python -m utils.gpu_check",
        description="Run the course's GPU path on this machine's NVIDIA GPU(s) and write "
        "reports/gpu-check.{md,json}. Exits 2 at once where no GPU is visible.",
    )
    parser.add_argument("--report-dir", type=Path, default=DEFAULT_REPORT_DIR,
                        help="where to write gpu-check.md and gpu-check.json (default: reports/)")
    parser.add_argument("--skip-notebooks", action="store_true", help="leave out check 4b")
    parser.add_argument("--scale", choices=list(SCALES), default=DEFAULT_NOTEBOOK_SCALE,
                        help="COURSE_SCALE for the notebooks (default: tiny, as in CI)")
    parser.add_argument("--timing-scale", choices=list(SCALES), default=DEFAULT_TIMING_SCALE,
                        help="dataset for the cudf-vs-pandas timing (default: small, 10 M rows)")
    parser.add_argument("--rows", type=_positive_int, default=DEFAULT_ROWS,
                        help="rows for the CuPy/NumPy twin (default: 20_000_000)")
    parser.add_argument("--partitions", type=_positive_int, default=None,
                        help=f"partitions for the twin (default: max({MIN_PARTITIONS}, 2 x workers))")
    parser.add_argument("--customers", type=_positive_int, default=DEFAULT_CUSTOMERS,
                        help="distinct customer ids for the twin (default: 100_000)")
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--repeats", type=_positive_int, default=DEFAULT_REPEATS,
                        help="timed runs of each twin; the best is compared (default: 3)")
    parser.add_argument("--notebook-timeout", type=_positive_int, default=DEFAULT_NOTEBOOK_TIMEOUT_S,
                        help="seconds for the whole notebook run (default: 3600)")
    parser.add_argument("--scheduler-address", default=None,
                        help="check an existing cluster (e.g. `dask cuda worker` processes) "
                        "instead of starting LocalCUDACluster")
    args = parser.parse_args(argv)
    if args.partitions is not None and args.partitions > args.rows:
        parser.error("--partitions cannot exceed --rows")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    args = parse_args(argv)
    problem = preflight(args)
    if problem:
        print(problem, file=sys.stderr)
        return 2
    environment = collect_environment(args)
    gpus = environment["gpus"]
    print(f"gpu-check on {environment['hostname']}: {gpus.get('count', 0)} GPU(s) "
          f"{', '.join(d['name'] for d in gpus.get('devices', []))}", flush=True)
    ctx = Context(args, expected_gpus=expected_gpu_workers())
    try:
        results = run_checks(CHECKS, ctx, progress=lambda line: print(line, flush=True))
    finally:
        ctx.release_cluster()
    report = build_report(environment, results, argv)
    json_path, md_path = write_report(report, args.report_dir)
    print(f"{report['outcome'].upper()}: {report['counts']}; report: {md_path} and {json_path.name}")
    return report["exit_code"]


if __name__ == "__main__":
    sys.exit(main())
