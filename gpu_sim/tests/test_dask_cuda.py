"""The simulated ``dask_cuda.LocalCUDACluster`` (a port of dask-cuda 26.10's): keywords, validation, worker names,
rotated ``CUDA_VISIBLE_DEVICES``, device memory limit, plugins, the simulated rmm, what the scheduler records about
nanny-started workers and what ``utils`` reads from them. Two simulated GPUs with distinct names; one shared
cluster for most tests. Nothing here touches a GPU."""

from __future__ import annotations

import importlib.util
import inspect
import logging
import os
import warnings

import dask_cuda
import dask_cuda.utils
import pytest
import toolz
from dask_cuda import LocalCUDACluster
from distributed import Client, LocalCluster

GIB = 2**30
NAMES = ["Simulated GPU A", "Simulated GPU B"]
UUIDS = [f"GPU-00000000-0000-0000-0000-{index:012d}" for index in range(2)]
HAS_CUDF = importlib.util.find_spec("cudf") is not None
LOCAL = {"host": "127.0.0.1", "dashboard_address": "127.0.0.1:0"}

# rapidsai/dask-cuda dask_cuda/local_cuda_cluster.py (26.10), LocalCUDACluster.__init__, in order.
KEYWORDS_26_10 = [
    "CUDA_VISIBLE_DEVICES", "n_workers", "threads_per_worker", "memory_limit", "device_memory_limit",
    "enable_cudf_spill", "cudf_spill_stats", "local_directory", "protocol", "enable_tcp_over_ucx",
    "enable_infiniband", "enable_nvlink", "enable_rdmacm", "rmm_pool_size", "rmm_maximum_pool_size",
    "rmm_managed_memory", "rmm_async", "rmm_allocator_external_lib_list", "rmm_release_threshold",
    "rmm_log_directory", "rmm_track_allocations", "log_spilling", "pre_import", "kwargs",
]


@pytest.fixture(scope="module", autouse=True)
def two_simulated_gpus():
    """Two named simulated GPUs for this process and the workers it starts; CUDA_VISIBLE_DEVICES unset. dask-cuda
    memoizes the GPU count per process, so the count is computed afresh for this module."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("GPU_SIM_DEVICES", ";".join(NAMES))
        patch.delenv("GPU_SIM_MEMORY_BYTES", raising=False)
        patch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
        patch.setattr(dask_cuda.utils, "get_gpu_count", toolz.memoize(dask_cuda.utils.get_gpu_count.__wrapped__))
        yield


@pytest.fixture(scope="module")
def cluster(two_simulated_gpus):
    """A LocalCUDACluster with the defaults that matter (one worker per GPU, default device memory limit) and the
    options the course teaches (cudf spilling where a cudf is importable, an RMM pool, pre-import)."""
    with LocalCUDACluster(
        enable_cudf_spill=HAS_CUDF, cudf_spill_stats=1, rmm_pool_size="1GiB", rmm_maximum_pool_size="2GiB",
        pre_import="json", memory_limit="2GiB", silence_logs=40, **LOCAL,
    ) as cluster:
        yield cluster


@pytest.fixture(scope="module")
def client(cluster):
    with Client(cluster, set_as_default=False) as client:
        yield client


def _by_name(client: Client, function) -> dict:
    """``client.run(function)`` keyed by worker name instead of address."""
    names = {address: w["name"] for address, w in client.scheduler_info(n_workers=-1)["workers"].items()}
    return {names[address]: result for address, result in client.run(function).items()}


def test_keywords_are_the_26_10_list():
    assert list(inspect.signature(LocalCUDACluster.__init__).parameters)[1:] == KEYWORDS_26_10
    assert issubclass(LocalCUDACluster, LocalCluster)


def test_one_worker_per_visible_gpu_named_by_its_device(cluster, client):
    workers = client.scheduler_info(n_workers=-1)["workers"]
    assert sorted(w["name"] for w in workers.values()) == [0, 1]
    assert {w["nthreads"] for w in workers.values()} == {1}  # threads_per_worker=1 by default
    assert cluster.cuda_visible_devices == [0, 1]
    # cuda_visible_devices(i, devices): worker i's device first, then the rest
    assert _by_name(client, lambda: os.environ["CUDA_VISIBLE_DEVICES"]) == {0: "0,1", 1: "1,0"}
    assert set(_by_name(client, lambda: os.environ["RAPIDS_NO_INITIALIZE"]).values()) == {"True"}


def test_workers_carry_dask_cudas_plugins(client):
    def plugins(dask_worker):
        found = {type(p).__name__: p for p in dask_worker.plugins.values() if type(p).__module__ == "dask_cuda.plugins"}
        rmm, cudf = found["RMMSetup"], found["CUDFSetup"]
        return {
            "classes": sorted(found),
            "rmm": (rmm.initial_pool_size, rmm.maximum_pool_size, rmm.managed_memory, rmm.async_alloc,
                    rmm.release_threshold, rmm.logging, rmm.rmm_track_allocations, rmm.external_lib_list),
            "cudf": (cudf.spill, cudf.spill_stats),
            "pre_import": found["PreImport"].libraries,
            "affinity": found["CPUAffinity"].cores,
        }

    for report in _by_name(client, plugins).values():
        assert report["classes"] == ["CPUAffinity", "CUDFSetup", "PreImport", "RMMSetup"]
        # RMMSetup.setup parsed the sizes (aligned to 256 bytes) as real
        assert report["rmm"] == (GIB, 2 * GIB, False, False, None, False, False, None)
        assert report["cudf"] == (HAS_CUDF, 1)
        assert report["pre_import"] == ["json"]
        assert report["affinity"] == sorted(os.sched_getaffinity(0))


def test_the_rmm_pool_is_set_on_each_worker(client):
    def resource():
        import rmm

        mr = rmm.mr.get_current_device_resource()
        return type(mr).__name__, mr.pool_size(), mr.maximum_pool_size, type(mr.get_upstream()).__name__

    assert set(_by_name(client, resource).values()) == {("PoolMemoryResource", GIB, 2 * GIB, "CudaMemoryResource")}


@pytest.mark.skipif(not HAS_CUDF, reason="no cudf importable yet (the simulated cudf is built separately)")
def test_cudf_spilling_is_on_in_the_workers_and_here(client):
    import cudf

    assert cudf.get_option("spill") is True
    assert set(_by_name(client, lambda: __import__("cudf").get_option("spill")).values()) == {True}


def test_device_memory_limit_defaults_to_80_percent_and_lives_in_the_workers_data(cluster, client):
    def data(dask_worker):
        return type(dask_worker.data).__module__, type(dask_worker.data).__name__, dask_worker.data.device_buffer.n

    expected = int(80 * GIB * 0.8)
    assert cluster.device_memory_limit == expected
    assert set(_by_name(client, data).values()) == {("dask_cuda.device_host_file", "DeviceHostFile", expected)}
    config = dask_cuda.utils.get_cluster_configuration(client)
    assert config["device-memory-limit"] == expected and config["protocol"] == "tcp"


def test_workers_preload_dask_cuda_initialize_with_create_cuda_context(cluster, client):
    for spec in cluster.worker_spec.values():
        assert (spec["options"]["preload"], spec["options"]["preload_argv"]) == (
            ["dask_cuda.initialize"], ["--create-cuda-context"])
    # (the worker's Preload.argv is empty afterwards: click consumes the list it parses)
    preloads = _by_name(client, lambda dask_worker: [p.module.__name__ for p in dask_worker.preloads])
    assert set(map(tuple, preloads.values())) == {("dask_cuda.initialize",)}


def test_no_gpu_entry_in_the_schedulers_record_of_nanny_started_workers(client):
    """distributed copies DEFAULT_STARTUP_INFORMATION in Worker.__init__ before its SystemMonitor first
    initialises NVML (which registers the "gpu" entry), so a fresh worker process reports no "gpu"; the monitor's
    GPU metrics are there."""
    workers = client.scheduler_info(n_workers=-1)["workers"]
    assert all("gpu" not in w for w in workers.values()), workers

    def mechanism(dask_worker):
        from distributed.worker import DEFAULT_STARTUP_INFORMATION

        return "gpu" in dask_worker.startup_information, "gpu" in DEFAULT_STARTUP_INFORMATION

    assert set(_by_name(client, mechanism).values()) == {(False, True)}
    assert set(client.run(lambda dask_worker: dask_worker.monitor.gpu_name).values()) == set(NAMES)


def test_each_worker_computes_on_its_first_visible_gpu(client):
    from utils.cluster import _worker_hardware
    from utils.machine import this_gpu

    assert _by_name(client, this_gpu) == {
        device: {"name": NAMES[device], "uuid": UUIDS[device], "memory_bytes": 80 * GIB} for device in (0, 1)
    }
    assert {report["dask_cuda"] for report in _by_name(client, _worker_hardware).values()} == {True}


def test_cannot_scale_beyond_visible_devices(cluster):
    with pytest.raises(ValueError) as error:
        cluster.scale(3)
    assert error.value.args == ("Can not scale beyond visible devices", [0, 1])


def test_explicit_device_list_rmm_async_and_a_fraction(two_simulated_gpus):
    """CUDA_VISIBLE_DEVICES=[1]: one worker, named 1, seeing device 1; rmm_async with a pool size warns as real."""
    with pytest.warns(FutureWarning, match="'rmm_pool_size' is not needed when 'rmm_async' is enabled"):
        cluster = LocalCUDACluster(
            CUDA_VISIBLE_DEVICES=[1], rmm_async=True, rmm_pool_size="1GiB", rmm_release_threshold="2GiB",
            device_memory_limit=0.5, memory_limit=0, silence_logs=40, **LOCAL,
        )
    with cluster, Client(cluster, set_as_default=False) as client:
        def report(dask_worker):
            import rmm

            mr = rmm.mr.get_current_device_resource()
            return (os.environ["CUDA_VISIBLE_DEVICES"], dask_worker.data.device_buffer.n, type(mr).__name__,
                    mr.initial_pool_size, mr.release_threshold)

        assert _by_name(client, report) == {1: ("1", 40 * GIB, "CudaAsyncMemoryResource", GIB, 2 * GIB)}


def test_a_removed_keyword_fails_as_on_the_real_class(two_simulated_gpus, caplog):
    """jit_unspill (removed in 26.06) goes through **kwargs to LocalCluster and on to the worker, whose
    constructor rejects it. With distributed 2026.7.1 the failing start is the one ``scale()`` schedules, so
    ``__init__`` usually returns a cluster without workers and the error is only logged (tornado: "Exception in
    callback"); if the awaited start fails instead, ``__init__`` raises it. Both carry the same error."""
    caplog.set_level(logging.ERROR, logger="tornado.application")
    try:
        cluster = LocalCUDACluster(CUDA_VISIBLE_DEVICES="0", jit_unspill=True, silence_logs=50, **LOCAL)
    except RuntimeError as error:
        failure: BaseException = error
    else:
        with cluster:
            assert cluster.scheduler_info["workers"] == {}
        failure = next(r.exc_info[1] for r in caplog.records if r.name == "tornado.application" and r.exc_info)
    assert (type(failure), str(failure)) == (RuntimeError, "Nanny failed to start.")
    assert isinstance(failure.__cause__, TypeError)
    assert str(failure.__cause__) == "Server.__init__() got an unexpected keyword argument 'jit_unspill'"


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"processes": False}, ValueError, "Processes are necessary in order to use multiple GPUs with Dask"),
        ({"threads_per_worker": 0}, ValueError, "threads_per_worker must be higher than 0."),
        ({"n_workers": 0}, ValueError, "Number of workers cannot be less than 1."),
        ({"enable_infiniband": True, "protocol": "tcp"}, TypeError,
         "Enabling InfiniBand or NVLink requires protocol='ucx'"),
        ({"CUDA_VISIBLE_DEVICES": "0,foo"}, ValueError, "Devices in CUDA_VISIBLE_DEVICES must be comma-separated"),
        ({"rmm_allocator_external_lib_list": 3}, ValueError, "rmm_allocator_external_lib_list must be either"),
    ],
)
def test_invalid_arguments_fail_before_anything_starts(two_simulated_gpus, kwargs, error, message):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # e.g. the NVLink/rmm_pool_size recommendation
        with pytest.raises(error) as raised:
            LocalCUDACluster(**kwargs, **LOCAL)
    assert str(raised.value).startswith(message)


def test_nvlink_without_a_pool_warns_then_needs_ucx(two_simulated_gpus):
    with (pytest.warns(UserWarning, match="When using NVLink we recommend setting a `rmm_pool_size`"),
          pytest.raises(TypeError, match="Enabling InfiniBand or NVLink requires protocol='ucx'")):
        LocalCUDACluster(enable_nvlink=True, protocol="tcp", **LOCAL)


def test_rmm_plugin_rejects_what_real_rejects():
    from dask_cuda.plugins import RMMSetup

    base = dict(initial_pool_size=None, maximum_pool_size=None, log_directory=None, track_allocations=False,
                external_lib_list=None)
    with pytest.raises(ValueError, match="`rmm_managed_memory` is incompatible with the `rmm_async`."):
        RMMSetup(managed_memory=True, async_alloc=True, release_threshold=None, **base)
    with pytest.raises(ValueError, match="`rmm_release_threshold` requires `rmm_async`."):
        RMMSetup(managed_memory=False, async_alloc=False, release_threshold="1GiB", **base)


@pytest.mark.parametrize(
    ("protocol", "root"),
    [("ucx", "The 'ucx' protocol was removed from Distributed"), ("ucxx", "unknown address scheme 'ucxx'")],
)
def test_ucx_protocols_fail_without_distributed_ucxx(two_simulated_gpus, protocol, root):
    """No distributed-ucxx here (nor in CI): the scheduler cannot listen, as on a real install without it."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        with pytest.raises(RuntimeError, match="Cluster failed to start") as raised:
            LocalCUDACluster(protocol=protocol, silence_logs=50, **LOCAL)
    error: BaseException | None = raised.value
    while error.__cause__ is not None:
        error = error.__cause__
    assert root in str(error)


@pytest.mark.parametrize(
    ("limit", "expected"),
    [("default", int(0.8 * 80 * GIB)), ("auto", 80 * GIB), (0.25, 20 * GIB), ("10GiB", 10 * GIB), ("5GB", 5 * 10**9),
     (1, 1), (0, None), (None, None), ("0 MiB", None)],
)
def test_parse_device_memory_limit_reads_the_devices_memory(two_simulated_gpus, limit, expected):
    assert dask_cuda.utils.parse_device_memory_limit(limit, device_index=1) == expected


def test_cuda_visible_devices_helpers():
    from dask_cuda.utils import cuda_visible_devices, nvml_device_index, parse_cuda_visible_device

    assert cuda_visible_devices(3, range(8)) == "3,4,5,6,7,0,1,2"
    assert cuda_visible_devices(0) == "0,1"  # all NVML devices when CUDA_VISIBLE_DEVICES is unset
    assert (nvml_device_index(1, "1,2,3,0"), nvml_device_index(1, [UUIDS[0], UUIDS[1]])) == (2, UUIDS[1])
    assert (parse_cuda_visible_device("2"), parse_cuda_visible_device(UUIDS[1])) == (2, UUIDS[1])


def test_cudf_serialization_hook_is_spill_aware():
    """dask_cuda/__init__.py replaces distributed's lazy cudf registration with one that skips cudf's
    serializers while cudf spills by itself (unless a cudf object was already serialized in this process)."""
    from distributed.protocol.serialize import dask_serialize

    hook = dask_serialize._lazy.get("cudf", dask_cuda._register_cudf_spill_aware)
    assert hook is dask_cuda._register_cudf_spill_aware


def test_device_host_file_levels(tmp_path):
    """Device objects go to the device level (limited by device_memory_limit), host objects to the host level,
    and cudf objects to ``others`` while cudf's own spilling is on (dask_cuda/device_host_file.py)."""
    from dask_cuda.device_host_file import DeviceHostFile

    data = DeviceHostFile(str(tmp_path), device_memory_limit=10**6, memory_limit=10**6)
    data["host"] = b"x" * 100
    assert "host" in data.host and "host" not in data.device_keys
    assert data.device_buffer.n == 10**6 and data.host_buffer.n == 10**6
    cudf = pytest.importorskip("cudf")
    before = cudf.get_option("spill")
    try:
        for spill, level in ((True, "others"), (False, "device")):
            cudf.set_option("spill", spill)
            data[level] = cudf.DataFrame({"a": [1, 2, 3]})
            assert level in getattr(data, level), (spill, level)
    finally:
        cudf.set_option("spill", before)


def test_simulated_rmm_records_what_reinitialize_asked(two_simulated_gpus, tmp_path, monkeypatch):
    import rmm

    monkeypatch.setattr(rmm.mr, "_per_device_mrs", type(rmm.mr._per_device_mrs)(rmm.mr.CudaMemoryResource))
    assert type(rmm.mr.get_current_device_resource()).__name__ == "CudaMemoryResource"
    rmm.reinitialize(pool_allocator=True, managed_memory=True)
    pool = rmm.mr.get_current_device_resource()
    # "By default, half the available memory on the device is used"
    assert (type(pool).__name__, pool.pool_size(), type(pool.get_upstream()).__name__) == (
        "PoolMemoryResource", 40 * GIB, "ManagedMemoryResource")
    rmm.reinitialize(logging=True, log_file_name=str(tmp_path / "rmm.log"))
    assert rmm.get_log_filenames() == {0: str(tmp_path / "rmm.dev0.log")}
    from distributed.diagnostics import rmm as rmm_diagnostics

    assert rmm_diagnostics.real_time() == {"rmm-used": 0, "rmm-total": 0}
