"""Checks 5a-5g: the course's own GPU code that needs no cudf, on real dask-cuda workers (so they run on
a GPU machine where cudf cannot be installed or carried): ``utils.start_client`` on the GPU backend,
``describe``/``workers_hardware``, the CUDA context dask-cuda's preload makes, the partition advice
from a device's memory, notebook 05's device-memory budget with CuPy chunks, dask-cuda's RMM options,
and CuPy through distributed's serializers.

Tests that start their own ``LocalCUDACluster`` (5a, 5e, 5f) are skipped where the tests run against
an existing scheduler (``tools.gpu.check --scheduler-address``): they would not test that cluster.
"""

from __future__ import annotations

import logging
import os
from typing import Any

import numpy as np
import pytest

from utils.machine import GPU_INSTALL_HINT, gpu_count, installed, this_gpu

pytestmark = pytest.mark.gpu

OWN_CLUSTER = "starts its own LocalCUDACluster: checked in the run without --scheduler-address"
NO_RMM = "rmm not installed: carry rmm-cuNN (tools/gpu/device/packages.txt) or install the GPU stack"
MiB = 2**20
BUDGET_DATA_BYTES = 768 * MiB  # notebook 05's premise: three times what the workers may hold (ratio 3)
BUDGET_CHUNK_BYTES = 16 * MiB
RMM_POOL_BYTES = 2**30


def _own_cluster_only() -> None:
    """Skip on an existing cluster, or where the GPU stack that the test starts is missing."""
    if os.environ.get("DASK_SCHEDULER_ADDRESS"):
        pytest.skip(OWN_CLUSTER)
    for module in ("dask_cuda", "cupy"):
        pytest.importorskip(module, reason=f"{module} not installed; {GPU_INSTALL_HINT}")


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def _cuda_uuid(raw: Any) -> str | None:
    """CUDA's 16-byte device UUID in NVML's spelling (``GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx``), or
    None where CuPy did not give all 16 bytes (nothing to compare then)."""
    try:
        digits = bytes(raw).hex()
    except TypeError:
        return None
    if len(digits) != 32:
        return None
    return f"GPU-{digits[:8]}-{digits[8:12]}-{digits[12:16]}-{digits[16:20]}-{digits[20:32]}"


def _worker_device() -> dict[str, Any]:
    """Runs on each worker: its GPU as CUDA sees it (CuPy's device 0, i.e. the first entry of the
    worker's CUDA_VISIBLE_DEVICES), for comparison with what the course reads through NVML."""
    import cupy

    props = cupy.cuda.runtime.getDeviceProperties(0)
    free, total = cupy.cuda.Device(0).mem_info
    return {"name": _text(props["name"]), "uuid": _cuda_uuid(props.get("uuid")),
            "total_bytes": int(total), "free_bytes": int(free),
            "cuda_visible_devices": os.environ.get("CUDA_VISIBLE_DEVICES")}


def _course_plugins(dask_worker: Any = None) -> list[str]:
    """Runs on each worker: the names of its plugins (dask-cuda's and the course's)."""
    return sorted(dask_worker.plugins)


def test_5a_start_client_on_the_gpu_backend_without_cudf(monkeypatch, record_property):
    """``utils.start_client(backend="gpu", dataframes=False)``: the course's own start-up (bind address,
    dashboard, its worker plugin) on a real LocalCUDACluster, with cudf's spilling off, where no cudf
    need be installed; without ``dataframes=False`` the GPU backend still refuses a machine without cudf."""
    _own_cluster_only()
    import dask
    from dask_cuda import LocalCUDACluster

    from utils.cluster import MemoryWarnings, describe, shutdown, start_client, workers_hardware

    monkeypatch.delenv("COURSE_BACKEND", raising=False)
    cudf_here = installed("cudf") and installed("dask_cudf")
    if not cudf_here:
        with pytest.raises(ValueError, match="cudf"):
            start_client(backend="gpu", quiet=True, replace=False)
    keys = ("dataframe.backend", "dataframe.shuffle.method")
    before = {key: dask.config.get(key, None) for key in keys}
    client = start_client(backend="gpu", dataframes=False, quiet=True, replace=False)
    try:
        cluster = client.cluster
        workers = client.scheduler_info(n_workers=-1)["workers"]
        hardware = workers_hardware(client)
        plugins = client.run(_course_plugins)
        info = describe(client)
        after = {key: dask.config.get(key, None) for key in keys}
    finally:
        shutdown(client)
    record_property("describe", info)
    record_property("worker_plugins", plugins)
    record_property("summary", f"{type(cluster).__name__} with {len(workers)} worker(s), enable_cudf_spill="
                    f"{cluster.enable_cudf_spill}; DataFrame backend left at {after['dataframe.backend']}; "
                    f"cudf {'installed' if cudf_here else 'not installed'}")
    assert isinstance(cluster, LocalCUDACluster)
    assert cluster.enable_cudf_spill is False, "cudf's spilling must be off: dask-cuda imports cudf for it"
    assert len(workers) == gpu_count()
    assert all(report["dask_cuda"] and report["gpu"] for report in hardware.values()), hardware
    assert all(MemoryWarnings.name in names for names in plugins.values()), plugins
    assert after == before, f"dataframes=False changed Dask's DataFrame settings: {before} -> {after}"
    assert cluster.scheduler_address.startswith("tcp://127.0.0.1:"), cluster.scheduler_address


def test_5b_describe_and_workers_hardware_on_dask_cuda_workers(client, record_property):
    """What the course prints about a GPU cluster comes from the workers, and agrees with CUDA there."""
    from utils.cluster import describe, workers_hardware

    workers = client.scheduler_info(n_workers=-1)["workers"]
    hardware = workers_hardware(client)
    info = describe(client)
    devices = client.run(_worker_device)
    record_property("workers_hardware", hardware)
    record_property("cuda_devices", devices)
    record_property("describe", {k: v for k, v in info.items() if k != "dashboard"})
    assert sorted(hardware) == sorted(workers) == sorted(devices)
    for address, report in hardware.items():
        assert report["dask_cuda"], f"{address}: no dask-cuda plugin on the worker"
        assert report["gpu"], f"{address}: the course sees no GPU on this worker"
        cuda = devices[address]
        if cuda["uuid"]:
            same = report["gpu"]["uuid"].lower() == cuda["uuid"].lower()
            assert same, f"{address}: NVML {report['gpu']} but CUDA {cuda}"
        assert abs(report["gpu"]["memory_bytes"] - cuda["total_bytes"]) <= 0.02 * cuda["total_bytes"], (address, cuda)
    uuids = {report["gpu"]["uuid"] for report in hardware.values()}
    assert info["gpu_workers"] == len(workers) and len(info["gpus"]) == len(uuids), info
    if client.cluster is not None:  # LocalCUDACluster: a GPU each
        assert len(uuids) == len(workers) == gpu_count()
    record_property("summary", f"{len(workers)} dask-cuda worker(s) on {len(uuids)} GPU(s): {', '.join(info['gpus'])}")


def _cuda_context(dask_worker: Any = None) -> dict[str, Any]:
    """Runs on each worker: what dask-cuda's preload recorded (``dask_cuda.initialize``: the context
    before and after it created one) and what NVML says now (``has_cuda_context``)."""
    from dask_cuda import initialize
    from distributed.diagnostics.nvml import has_cuda_context

    def plain(context: Any) -> dict[str, Any] | None:
        if context is None:
            return None
        info = context.device_info
        return {"has_context": bool(context.has_context), "uuid": _text(info.uuid) if info and info.uuid else None}

    return {"before_preload": plain(initialize.pre_existing_cuda_context),
            "made_by_preload": plain(initialize.cuda_context_created),
            "now": plain(has_cuda_context()), "gpu": this_gpu()}


def test_5c_cuda_context_on_every_worker_after_the_preload(client, record_property):
    contexts = client.run(_cuda_context)
    record_property("contexts", contexts)
    for address, seen in contexts.items():
        made, now, gpu = seen["made_by_preload"], seen["now"], seen["gpu"]
        assert made and made["has_context"], f"{address}: dask-cuda's preload made no CUDA context: {seen}"
        assert not (seen["before_preload"] or {}).get("has_context"), f"{address}: a context existed before: {seen}"
        assert now and now["has_context"], (
            f"{address}: has_cuda_context() says no: {seen} (NVML lists processes by PID: in a container whose "
            "PIDs differ from the host's it never matches)")
        assert made["uuid"] == gpu["uuid"], f"{address}: the context is on {made['uuid']}, the worker's GPU is {gpu}"
    record_property("summary", f"has_cuda_context() yes on all {len(contexts)} worker(s), on each one's own GPU")


def test_5d_partition_advice_from_the_device_memory(client, record_property):
    """``utils.partitions.advice_for_client`` on GPU workers: 1/32-1/16 of the device's memory, read
    from the workers, which CUDA confirms."""
    from utils.partitions import GPU_BAND, advice_for_client, recommended_partition_bytes

    advice = advice_for_client(client, backend="gpu")
    devices = client.run(_worker_device)
    smallest = min(device["total_bytes"] for device in devices.values())
    record_property("advice", {"bytes": advice.bytes, "low": advice.low, "high": advice.high, "reason": advice.reason})
    record_property("cuda_total_bytes", {address: device["total_bytes"] for address, device in devices.items()})
    expected = recommended_partition_bytes(min(g["memory_bytes"] for g in client.run(this_gpu).values()), 1, "gpu")
    assert advice == expected
    for fraction, bound in zip(GPU_BAND, (advice.low, advice.high), strict=True):
        assert abs(bound - smallest * fraction) <= 0.02 * smallest * fraction, (bound, smallest, fraction)
    record_property("summary", f"partitions of {advice.bytes / 2**30:.2f} GiB ({advice.low / 2**30:.2f}-"
                    f"{advice.high / 2**30:.2f} GiB) for a {smallest / 2**30:.1f} GiB device")


def test_5e_notebook05_device_budget_spills_cupy_chunks(monkeypatch, record_property):
    """Notebook 05's budget on the GPU (``demo_budget(..., backend="gpu")``: ``device_memory_limit`` a third
    of the data, cudf spilling off), with CuPy chunks in place of cudf partitions: dask-cuda's
    DeviceHostFile moves chunks to host memory beyond the budget, the course's checks see it, and the
    sum over the partly spilled array (chunks moved back to the device) is exact."""
    _own_cluster_only()
    import cupy
    import dask
    import dask.array as da
    from distributed import wait

    from utils.checks import check_spilled
    from utils.cluster import shutdown, start_client
    from utils.memory import demo_budget, spilled_partitions, worker_memory

    monkeypatch.delenv("COURSE_BACKEND", raising=False)
    budget = demo_budget(BUDGET_DATA_BYTES, ratio=3, backend="gpu")
    kwargs = budget.cluster_kwargs()
    assert kwargs["device_memory_limit"] == budget.per_worker and kwargs["enable_cudf_spill"] is False
    with dask.config.set(budget.config()):  # as notebook 05's setup cell does
        client = start_client(local=True, backend="gpu", dataframes=False, quiet=True, replace=False, **kwargs)
    try:
        items = BUDGET_DATA_BYTES // 8
        host = da.arange(items, chunks=BUDGET_CHUNK_BYTES // 8, dtype=np.int64)
        # this client explicitly: the module's `client` fixture is the current client while its cluster runs
        persisted = client.persist(host.map_blocks(cupy.asarray, meta=cupy.empty((0,), dtype=np.int64)))
        wait(persisted)
        memory = worker_memory(client)
        spilled, total = spilled_partitions(client, persisted)
        check_spilled(persisted, client)  # notebook 05's check: raises when nothing spilled
        result = client.compute(persisted.sum(), sync=True)
    finally:
        shutdown(client)
    on_device_at_most = budget.workers * (budget.per_worker // BUDGET_CHUNK_BYTES)
    record_property("worker_memory", memory.to_dict(orient="index"))
    record_property("budget", {"per_worker": budget.per_worker, "workers": budget.workers,
                               "chunks": total, "spilled": spilled, "on_device_at_most": on_device_at_most})
    assert type(result).__module__.startswith("cupy"), type(result)
    assert int(result) == items * (items - 1) // 2, "the sum over spilled and unspilled chunks is wrong"
    assert list(memory["budget"]) == [budget.per_worker] * budget.workers, memory
    assert total - spilled <= on_device_at_most, f"{total - spilled} chunks on the device, budget {on_device_at_most}"
    record_property("summary", f"{spilled} of {total} CuPy chunks moved to host memory ({BUDGET_DATA_BYTES // MiB} "
                    f"MiB over a {budget.per_worker // MiB} MiB device budget per worker); the sum is exact")


def _rmm_state(dask_worker: Any = None) -> dict[str, Any]:
    """Runs on each worker: what dask-cuda's RMMSetup plugin was given (``dask_cuda.utils.get_worker_config``),
    RMM's current device resource, and the allocator CuPy uses, after allocating through it."""
    import cupy
    import rmm
    from dask_cuda.utils import get_worker_config

    config = get_worker_config(dask_worker).get("[plugin] RMMSetup")
    if not isinstance(config, dict):  # "UNKNOWN CONFIG" where the plugin's attributes do not pickle
        plugin = next((p for p in dask_worker.plugins.values() if type(p).__name__ == "RMMSetup"), None)
        config = vars(plugin) if plugin is not None else {}
    total = int(cupy.arange(2**20, dtype=cupy.int64).sum())  # an allocation through CuPy's allocator
    resource = rmm.mr.get_current_device_resource()
    allocator = cupy.cuda.get_allocator()
    return {
        "rmm_setup": {key: config.get(key) for key in ("initial_pool_size", "maximum_pool_size", "async_alloc",
                                                       "release_threshold", "external_lib_list")},
        "resource": type(resource).__name__,
        "pool_size": resource.pool_size() if isinstance(resource, rmm.mr.PoolMemoryResource) else None,
        "cupy_allocator": f"{getattr(allocator, '__module__', '?')}.{getattr(allocator, '__qualname__', allocator)}",
        "cupy_sum_ok": total == 2**20 * (2**20 - 1) // 2,
    }


@pytest.mark.parametrize("option", ["pool", "async"])
def test_5f_rmm_options_read_back_on_the_workers(option, record_property):
    """``LocalCUDACluster(rmm_pool_size=...)`` / ``(rmm_async=True)``, with CuPy allocating through RMM
    (``rmm_allocator_external_lib_list="cupy"``): each worker's RMM resource is the one asked for."""
    _own_cluster_only()
    pytest.importorskip("rmm", reason=NO_RMM)
    from dask_cuda import LocalCUDACluster
    from distributed import Client

    asked: dict[str, Any] = {"rmm_allocator_external_lib_list": "cupy"}
    asked.update({"rmm_pool_size": RMM_POOL_BYTES} if option == "pool" else {"rmm_async": True})
    with LocalCUDACluster(dashboard_address="127.0.0.1:0", silence_logs=logging.ERROR, **asked) as cluster, \
            Client(cluster) as client:
        states = client.run(_rmm_state)
    record_property("asked", asked)
    record_property("workers", states)
    assert len(states) == gpu_count(), f"{len(states)} worker(s), {gpu_count()} GPU(s): a failing RMM setup stops one"
    for address, state in states.items():
        assert state["cupy_allocator"] == "rmm.allocators.cupy.rmm_cupy_allocator", (address, state)
        assert state["cupy_sum_ok"], (address, state)
        if option == "pool":
            assert state["resource"] == "PoolMemoryResource" and state["pool_size"] == RMM_POOL_BYTES, (address, state)
            assert state["rmm_setup"]["initial_pool_size"] == RMM_POOL_BYTES, (address, state)
        else:
            assert state["resource"] == "CudaAsyncMemoryResource", (address, state)
            assert state["rmm_setup"]["async_alloc"] is True, (address, state)
    first = next(iter(states.values()))
    record_property("summary", f"{len(states)} worker(s): {first['resource']}"
                    + (f" of {first['pool_size'] / 2**30:g} GiB" if first["pool_size"] else "")
                    + "; CuPy allocates through rmm_cupy_allocator")


def _cupy_round_trip(dask_worker: Any = None) -> dict[str, Any]:
    """Runs on a worker: a CuPy array through distributed's "dask" serializer (frames in host memory,
    as over TCP or when dask-cuda moves it off the device) and its "cuda" one (frames on the device),
    and back."""
    import cupy
    from distributed.protocol import cupy as cupy_protocol
    from distributed.protocol import deserialize, serialize

    original = cupy.arange(1_000_003, dtype=cupy.float64) * 0.5
    result: dict[str, Any] = {"deserializer": cupy_protocol.dask_deserialize_cuda_buffer.__module__}
    for serializers in (("dask",), ("cuda",)):
        header, frames = serialize(original, serializers=serializers, on_error="raise")
        back = deserialize(header, frames)
        result[serializers[0]] = {
            "frames_on_host": all(isinstance(frame, bytes | bytearray | memoryview) for frame in frames),
            "type": f"{type(back).__module__}.{type(back).__qualname__}",
            "equal": bool(isinstance(back, cupy.ndarray) and cupy.array_equal(back, original)),
        }
    return result


def test_5g_cupy_through_distributeds_serializers(client, record_property):
    """How CuPy chunks travel between workers (and to host memory and back, in dask-cuda's spilling):
    distributed/protocol/cupy.py; frames coming back from host memory become an ``rmm.DeviceBuffer``
    where rmm is installed (distributed/protocol/rmm.py), else a numba device array."""
    trips = client.run(_cupy_round_trip)
    record_property("round_trips", trips)
    for address, trip in trips.items():
        for name in ("dask", "cuda"):
            assert trip[name]["equal"], f"{address}: the {name} serializer did not give the array back: {trip}"
        assert trip["dask"]["frames_on_host"], f"{address}: the dask serializer left frames on the device: {trip}"
        if installed("rmm"):
            assert trip["deserializer"] == "distributed.protocol.rmm", (address, trip)
    record_property("summary", f"both serializers give the array back on {len(trips)} worker(s); host frames "
                    f"come back through {next(iter(trips.values()))['deserializer']}")
