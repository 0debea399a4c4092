"""The simulated cudf-polars 26.10 (``gpu_sim/cudf_polars``): polars' GPU-engine hook, and the multi-GPU
``DaskEngine`` with its released constructor, checks and lifecycle (cudf-polars-cu12 26.10.2
``cudf_polars/engine/{core,dask,hardware_binding}.py``, ``callback.py``, ``utils/config.py``). polars' CPU engine
runs the plans. One LocalCUDACluster on two simulated GPUs (plus one engine-owned cluster)."""

from __future__ import annotations

import dataclasses
import functools
import importlib.metadata
import inspect
import os

import cudf_polars
import dask_cuda.utils
import polars as pl
import pytest
import toolz
from cudf_polars.engine import hardware_binding
from cudf_polars.engine.core import StreamingEngine
from cudf_polars.engine.dask import DaskEngine
from cudf_polars.engine.hardware_binding import HardwareBindingPolicy
from dask_cuda import LocalCUDACluster
from distributed import Client

MEMORY = 8 * 2**30
NO_BINDING = {"hardware_binding": HardwareBindingPolicy(enabled=False)}


@pytest.fixture(scope="module")
def client():
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("GPU_SIM_DEVICES", "2")
        patch.setenv("GPU_SIM_MEMORY_BYTES", str(MEMORY))
        patch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
        patch.setattr(dask_cuda.utils, "get_gpu_count", toolz.memoize(dask_cuda.utils.get_gpu_count.__wrapped__))
        with LocalCUDACluster(host="127.0.0.1", dashboard_address="127.0.0.1:0", memory_limit="2GiB",
                              silence_logs=40) as cluster, Client(cluster) as client:
            yield client


@pytest.fixture
def query():
    frame = pl.LazyFrame({"customer_id": [1, 2, 1, 3, 2], "sales_amount": [1.0, 2.0, 3.0, 4.0, 5.0]})
    return frame.group_by("customer_id").agg(pl.col("sales_amount").sum()).sort("customer_id")


def _has_state(client: Client, uid: str) -> set[bool]:
    return set(client.run(lambda dask_worker: hasattr(dask_worker, f"_cudf_polars_mp_context_{uid}")).values())


def test_the_installed_metadata_and_version():
    assert importlib.metadata.version("cudf-polars-cu12") == "26.10.2+sim"
    assert cudf_polars.__version__ == "26.10.02+sim"  # cudf_polars/_version.py reads VERSION: "26.10.02"


def test_constructor_and_policy_are_the_released_ones():
    parameters = inspect.signature(DaskEngine.__init__).parameters
    assert [(p.name, p.kind.name, p.default) for p in parameters.values()][1:] == [
        ("dask_client", "KEYWORD_ONLY", None), ("rapidsmpf_options", "KEYWORD_ONLY", None),
        ("executor_options", "KEYWORD_ONLY", None), ("engine_options", "KEYWORD_ONLY", None)]
    assert issubclass(DaskEngine, StreamingEngine) and issubclass(DaskEngine, pl.GPUEngine)
    assert {f.name: f.default for f in dataclasses.fields(HardwareBindingPolicy)} == {
        "skip_under_rrun": True, "enabled": True, "enable_once": True, "raise_on_fail": False, "cpu": True,
        "memory": True, "network": False}
    with pytest.raises(dataclasses.FrozenInstanceError):
        HardwareBindingPolicy().enabled = False


def test_collect_goes_through_polars_gpu_hook_and_polars_cpu_engine_runs_it(monkeypatch, query):
    calls = []
    original = cudf_polars.execute_with_cudf

    def spy(nt, duration_since_start, *, config):
        calls.append(config)
        return original(nt, duration_since_start, config=config)

    monkeypatch.setattr(cudf_polars, "execute_with_cudf", spy)
    engine = pl.GPUEngine()
    result = query.collect(engine=engine)
    assert calls == [engine]  # GPUEngine._post_opt_callback -> cudf_polars.execute_with_cudf(..., config=engine)
    assert isinstance(result, pl.DataFrame) and result.equals(query.collect())


def test_engine_lifecycle_on_an_existing_client(client, query):
    with DaskEngine(dask_client=client, engine_options=NO_BINDING) as engine:
        uid = engine._dask_ctx.rapidsmpf_id
        assert engine.nranks == 2 and _has_state(client, uid) == {True}
        assert engine.config["executor"] == "streaming"
        options = engine.config["executor_options"]
        assert options["cluster"] == "dask" and options["dask_context"].client is client
        assert options["min_device_size"] == MEMORY  # smallest device memory of the ranks
        assert engine in StreamingEngine._active_engines
        infos = engine.gather_cluster_info()
        assert sorted(info.gpu_uuid for info in infos) == [  # cuda.core's Device.uuid: no "GPU-" prefix
            "00000000-0000-0000-0000-000000000000", "00000000-0000-0000-0000-000000000001"]
        result = query.collect(engine=engine)
        assert isinstance(result, pl.DataFrame) and result.equals(query.collect())
    assert _has_state(client, uid) == {False}  # __exit__ -> shutdown -> _teardown_worker on every worker
    assert engine.config == {} and engine not in StreamingEngine._active_engines
    engine.shutdown()  # idempotent
    assert client.status == "running"  # a client it did not create stays open


def test_reserved_keys_and_bad_options(client, query):
    with pytest.raises(TypeError, match="executor_options may not contain reserved keys: {'cluster'}"):
        DaskEngine(dask_client=client, executor_options={"cluster": "spmd"})
    with pytest.raises(TypeError, match="engine_options may not contain reserved keys: {'executor'}"):
        DaskEngine(dask_client=client, engine_options={"executor": "in-memory"})
    # Checked when a query is collected (ConfigOptions.from_polars_engine); polars wraps the callback's error.
    with (DaskEngine(dask_client=client, engine_options={**NO_BINDING, "colour": "green"}) as engine,
          pytest.raises(pl.exceptions.ComputeError, match="Unsupported executor_options: {'colour'}")):
        query.collect(engine=engine)
    with (DaskEngine(dask_client=client, executor_options={"scheduler": "distributed"}) as engine,
          pytest.raises(pl.exceptions.ComputeError, match="unexpected keyword argument 'scheduler'")):
        query.collect(engine=engine)  # the outdated executor_options={"scheduler": ...} spelling


def test_ranks_sharing_a_gpu_are_refused_unless_allowed(client, query):
    def set_devices(value: str) -> None:
        os.environ["CUDA_VISIBLE_DEVICES"] = value

    saved = client.run(lambda: os.environ.get("CUDA_VISIBLE_DEVICES"))
    client.run(set_devices, "0,1")  # both workers compute on GPU 0
    try:
        before = set(client.run(lambda dask_worker: tuple(vars(dask_worker))).values())
        with pytest.raises(RuntimeError) as refused:
            DaskEngine(dask_client=client, engine_options=NO_BINDING)
        uuid0 = "00000000-0000-0000-0000-000000000000"
        assert str(refused.value) == ("Multiple ranks share the same GPU (UUID collision detected). "
                                      f"UUIDs: ['{uuid0}', '{uuid0}']. Set allow_gpu_sharing=True to allow this.")
        after = set(client.run(lambda dask_worker: tuple(vars(dask_worker))).values())
        assert before != after  # the workers were set up before the check, and nothing tore that down
        with DaskEngine(dask_client=client, engine_options={**NO_BINDING, "allow_gpu_sharing": True}) as engine:
            assert "allow_gpu_sharing" not in engine.config  # consumed by StreamingEngine, not polars' GPUEngine
            assert query.collect(engine=engine).equals(query.collect())
    finally:
        for address, value in saved.items():
            client.run(set_devices, value, workers=[address])


def test_hardware_binding_policy_is_applied_once_per_worker_process(client):
    def reset():
        hardware_binding._bind_done = False
        hardware_binding.BINDINGS.clear()

    client.run(reset)
    with DaskEngine(dask_client=client, engine_options=NO_BINDING):
        assert set(map(len, client.run(lambda: list(hardware_binding.BINDINGS)).values())) == {0}
    with DaskEngine(dask_client=client), DaskEngine(dask_client=client):  # default policy: once per process
        bindings = client.run(lambda: list(hardware_binding.BINDINGS))
    devices = client.run(lambda: os.environ["CUDA_VISIBLE_DEVICES"].split(",")[0])
    for address, records in bindings.items():
        assert records == [{"gpu": devices[address], "cpu": True, "memory": True, "network": False}]


def test_without_a_client_it_owns_one_worker_per_visible_gpu(client, query, monkeypatch):
    # Without a client, 26.10.2's DaskEngine starts a SpecCluster with distributed's defaults: a scheduler and
    # nannies on every interface and a dashboard on :8787 (no option reaches them). The course's tests listen on
    # 127.0.0.1 only, so here the classes it starts get that host; what is tested (one owned worker per GPU) stays.
    import distributed
    import distributed.deploy.spec

    local_scheduler = functools.partial(distributed.Scheduler, host="127.0.0.1", dashboard_address="127.0.0.1:0")
    monkeypatch.setattr(distributed.deploy.spec, "Scheduler", local_scheduler)
    monkeypatch.setattr(distributed, "Nanny", functools.partial(distributed.Nanny, host="127.0.0.1"))
    with DaskEngine(engine_options=NO_BINDING) as engine:
        owned = engine._dask_ctx.owned_client
        workers = owned.scheduler_info(n_workers=-1)["workers"].values()
        assert engine.nranks == 2 and sorted(w["name"] for w in workers) == ["0", "1"]
        assert {w["nthreads"] for w in workers} == {1}
        assert query.collect(engine=engine).equals(query.collect())
    assert owned.status == "closed"
