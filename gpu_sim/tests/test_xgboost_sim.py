"""The released ``xgboost.dask`` on simulated cudf partitions (``xgboost_device_sim``): the same predictions as the
CPU path on the same data, each device substitution on its own, the output ``predict`` builds as released (a pandas
``meta`` over cudf partitions), and the refusal NCCL gives two ranks on one GPU. Nothing here touches a GPU."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import cudf
import dask.dataframe as dd
import dask_cuda.utils
import numpy as np
import pandas as pd
import pytest
import toolz
import xgboost as xgb
import xgboost.dask as dxgb
import xgboost_device_sim as sim
from dask_cuda import LocalCUDACluster
from distributed import Client, LocalCluster
from xgboost.core import XGBoostError

SIM = Path(sim.__file__).resolve().parent
FEATURES = ["a", "b", "c"]
PARAMS = {"tree_method": "hist", "objective": "reg:squarederror", "max_depth": 3, "learning_rate": 0.3, "seed": 0}
LOCAL = {"host": "127.0.0.1", "dashboard_address": "127.0.0.1:0", "silence_logs": 40}
NCCL_TEXT = "Multiple processes within communication group running on same CUDA device is not supported."


def _table(rows: int = 400) -> pd.DataFrame:
    rng = np.random.default_rng(7)
    frame = pd.DataFrame({"a": rng.random(rows), "b": rng.normal(size=rows), "c": rng.integers(0, 6, rows)})
    frame["y"] = 3 * frame["a"] + frame["b"] - 0.5 * frame["c"] + rng.normal(scale=0.1, size=rows)
    return frame


@pytest.fixture(scope="module", autouse=True)
def two_simulated_gpus():
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("GPU_SIM_DEVICES", "2")
        patch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
        patch.setattr(dask_cuda.utils, "get_gpu_count", toolz.memoize(dask_cuda.utils.get_gpu_count.__wrapped__))
        yield


@pytest.fixture(scope="module")
def client(two_simulated_gpus):
    """Two workers, one per simulated GPU (each sees its own device first); the default client while it lasts, since
    ``xgboost.dask.predict``'s collections hold a future of the booster."""
    with LocalCUDACluster(memory_limit="1GiB", **LOCAL) as cluster, Client(cluster) as client:
        yield client


def _collections(table: pd.DataFrame, on_gpu: bool, npartitions: int = 4) -> tuple[dd.DataFrame, dd.Series]:
    frame = dd.from_pandas(cudf.from_pandas(table) if on_gpu else table, npartitions=npartitions)
    return frame[FEATURES], frame["y"]


def _train_predict(client: Client, on_gpu: bool) -> tuple[xgb.Booster, dd.Series]:
    X, y = _collections(_table(), on_gpu)
    X, y = client.persist([X, y])
    dtrain = dxgb.DaskQuantileDMatrix(client, X, y)
    params = {**PARAMS, "device": "cuda" if on_gpu else "cpu"}
    booster = dxgb.train(client, params, dtrain, num_boost_round=20, evals=[(dtrain, "train")])["booster"]
    return booster, dxgb.predict(client, booster, X)


def test_cudf_partitions_train_and_predict_like_the_cpu_path(client):
    gpu_booster, gpu_prediction = _train_predict(client, on_gpu=True)
    cpu_booster, cpu_prediction = _train_predict(client, on_gpu=False)
    on_gpu = gpu_prediction.compute()
    assert isinstance(on_gpu, cudf.Series)  # xgboost/dask/__init__.py _maybe_dataframe: cudf in, cudf out
    np.testing.assert_allclose(on_gpu.to_pandas().to_numpy(), cpu_prediction.compute().to_numpy(), rtol=1e-6)
    assert gpu_booster.num_boosted_rounds() == cpu_booster.num_boosted_rounds() == 20
    # device="cuda" without a GPU: the build's own fallback (src/context.cc), so the booster reports the CPU
    assert json.loads(gpu_booster.save_config())["learner"]["generic_param"]["device"] == "cpu"


def test_predict_builds_a_pandas_meta_over_cudf_partitions_as_released(client):
    _, prediction = _train_predict(client, on_gpu=True)
    # xgboost/dask/__init__.py _direct_predict_impl: map_partitions(..., meta=dd.utils.make_meta({0: "f4"}))
    assert type(prediction._meta) is pd.Series
    assert isinstance(prediction.partitions[0].compute(), cudf.Series)
    # Dask passes pandas' axis=None to the partitions' clip, which cudf's IndexedFrame.clip refuses
    with pytest.raises(NotImplementedError, match="axis is not yet supported in clip"):
        prediction.clip(lower=0).compute()
    moved = prediction.to_backend("cudf")  # dask_cudf ToCudfBackend: cudf meta, partitions unchanged
    assert isinstance(moved._meta, cudf.Series)
    assert float(moved.clip(lower=0).min().compute()) >= 0


def test_cudf_columns_reach_xgboost_as_host_interfaces_after_the_released_checks():
    from xgboost.data import CudfTransformed, _transform_cudf_df

    frame = cudf.from_pandas(pd.DataFrame({"x": [1.5, 2.5, np.nan], "flag": [True, False, True]}))
    transformed, names, types = _transform_cudf_df(frame, None, None, False)
    assert isinstance(transformed, CudfTransformed)
    assert names == ["x", "flag"] and types == ["float", "int"]  # bool became uint8 before (issue 10181)
    for interface, (host,) in zip(transformed.aitfs, transformed.temporary_buffers, strict=True):
        assert interface["data"][0] == host.__array_interface__["data"][0]  # kept alive with the transformed frame
    assert transformed.shape == (3, 2)
    with pytest.raises(ValueError, match="DataFrame.dtypes for data must be int, float, bool or category"):
        _transform_cudf_df(cudf.from_pandas(pd.DataFrame({"s": pd.Series(["a", "b"], dtype="str")})),
                           None, None, False)


def test_labels_and_weights_come_from_host_copies_and_nulls_are_refused():
    table = _table(50)
    matrix = xgb.DMatrix(cudf.from_pandas(table[FEATURES]), label=cudf.from_pandas(table["y"]),
                         weight=cudf.from_pandas(table["a"] + 1))
    np.testing.assert_allclose(matrix.get_label(), table["y"].to_numpy(), rtol=1e-6)
    np.testing.assert_allclose(matrix.get_weight(), (table["a"] + 1).to_numpy(), rtol=1e-6)
    with_null = cudf.from_pandas(table["y"].where(table.index != 3))
    with pytest.raises(ValueError, match="Missing value is not allowed for: label"):  # check_cudf_meta
        xgb.DMatrix(cudf.from_pandas(table[FEATURES]), label=with_null)


def test_cuda_entry_points_read_host_columns():
    from xgboost.core import _LIB

    for cuda_name, host_name in sim.HOST_TWINS.items():
        assert getattr(_LIB, cuda_name) is getattr(_LIB, host_name)
    table = _table(120)
    gpu_frame = cudf.from_pandas(table[FEATURES])
    booster = xgb.train({**PARAMS, "device": "cpu"}, xgb.DMatrix(table[FEATURES], label=table["y"]), 10)
    expected = booster.predict(xgb.DMatrix(table[FEATURES]))
    np.testing.assert_allclose(booster.predict(xgb.DMatrix(gpu_frame)), expected, rtol=1e-6)  # _from_cudf_df
    in_place = booster.inplace_predict(gpu_frame)  # XGBoosterPredictFromCudaColumnar, _prediction_output
    assert isinstance(in_place, np.ndarray)
    np.testing.assert_allclose(in_place, expected, rtol=1e-6)
    quantile = xgb.QuantileDMatrix(gpu_frame, label=cudf.from_pandas(table["y"]))  # the proxy's columnar data
    assert (quantile.num_row(), quantile.num_col()) == (120, 3)


def test_device_cuda_is_the_builds_own_fallback_to_the_cpu():
    table = _table(60)
    with pytest.warns(UserWarning, match="Device is changed from GPU to CPU"):
        booster = xgb.train({**PARAMS, "device": "cuda"},
                            xgb.DMatrix(cudf.from_pandas(table[FEATURES]), label=cudf.from_pandas(table["y"])), 3)
    assert json.loads(booster.save_config())["learner"]["generic_param"]["device"] == "cpu"


def test_a_worker_without_partitions_gets_a_host_empty_matrix(client):
    from xgboost.dask.data import _make_empty

    assert isinstance(_make_empty(True), np.ndarray) and _make_empty(True).shape == (0, 0)
    first, second = sorted(client.scheduler_info(n_workers=-1)["workers"])
    table = _table()
    # one partition per matrix, so no worker ever has two tasks queued for Dask's work stealing to move
    X, y = _collections(table.iloc[:300], on_gpu=True, npartitions=1)
    X_valid, y_valid = _collections(table.iloc[300:], on_gpu=True, npartitions=1)
    X, y = client.persist([X, y], workers=[first])
    X_valid, y_valid = client.persist([X_valid, y_valid], workers=[second])
    dtrain = dxgb.DaskQuantileDMatrix(client, X, y)
    dvalid = dxgb.DaskQuantileDMatrix(client, X_valid, y_valid, ref=dtrain)
    assert set(dtrain.worker_map) == {first} and set(dvalid.worker_map) == {second}
    # two ranks, one per simulated GPU: each has no partition of one of the matrices
    output = dxgb.train(client, {**PARAMS, "device": "cuda"}, dtrain, num_boost_round=5,
                        evals=[(dtrain, "train"), (dvalid, "valid")])
    assert len(output["history"]["valid"]["rmse"]) == 5


def test_uuid_bytes_and_the_device_of_this_process(monkeypatch):
    assert sim.uuid_bytes("GPU-00000000-0000-0000-0000-000000000001").tolist() == [0] * 15 + [1]
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "1,0")
    assert sim.device_uuid() == "GPU-00000000-0000-0000-0000-000000000001"
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "GPU-00000000-0000-0000-0000-000000000000")
    assert sim.device_uuid() == "GPU-00000000-0000-0000-0000-000000000000"
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES")
    assert sim.device_uuid() == "GPU-00000000-0000-0000-0000-000000000000"
    assert sim.wants_cuda({"device": "cuda"}) and sim.wants_cuda({"device": "gpu:0"})
    assert not sim.wants_cuda({"device": "cpu"}) and not sim.wants_cuda({})


def _two_ranks_on(client: Client, on_gpu: bool, device: str) -> None:
    """Training with one partition on each of the two workers: two XGBoost ranks (xgboost.dask trains on the workers
    that hold the matrix's partitions; Dask's work stealing may rarely move one, hence a few attempts)."""
    first, second = sorted(client.scheduler_info(n_workers=-1)["workers"])
    table = _table()
    for _ in range(3):
        parts = []
        for worker, rows in [(first, table.iloc[:200]), (second, table.iloc[200:])]:
            X, y = _collections(rows, on_gpu, npartitions=1)
            parts.append(client.persist([X, y], workers=[worker]))
        dtrain = dxgb.DaskQuantileDMatrix(client, dd.concat([X for X, _ in parts]), dd.concat([y for _, y in parts]))
        if set(dtrain.worker_map) == {first, second}:
            break
    assert set(dtrain.worker_map) == {first, second}
    dxgb.train(client, {**PARAMS, "device": device}, dtrain, num_boost_round=3)


def test_two_ranks_on_one_device_fail_as_nccl_refuses_them():
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, memory_limit="1GiB",
                      env={"CUDA_VISIBLE_DEVICES": "0"}, **LOCAL) as cluster, Client(cluster) as client:
        with pytest.raises(XGBoostError, match=NCCL_TEXT) as refused:
            _two_ranks_on(client, on_gpu=True, device="cuda")
        assert "(1 vs. 2)" in str(refused.value) and "GPU-00000000-0000-0000-0000-000000000000" in str(refused.value)
        # device data, whatever `device` says: sketched on the GPU, merged over NCCL (xgboost/dask/data.py
        # _get_is_cuda; v3.2.0 src/data/quantile_dmatrix.cu, src/common/quantile.cu SketchContainer::AllReduce)
        with pytest.raises(XGBoostError, match=NCCL_TEXT):
            _two_ranks_on(client, on_gpu=True, device="cpu")
        # host data, CUDA device: the gradients are summed over NCCL (worker_train)
        with pytest.raises(XGBoostError, match=NCCL_TEXT):
            _two_ranks_on(client, on_gpu=False, device="cuda")
        _two_ranks_on(client, on_gpu=False, device="cpu")  # no device, no NCCL: the ranks talk over TCP


def test_two_ranks_on_two_devices_train(client):
    _two_ranks_on(client, on_gpu=True, device="cuda")


def run_with_the_simulation(script: str) -> None:
    """Run ``script`` in a fresh Python whose path starts with the simulation; it must succeed."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(SIM), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize("order", ["cudf first", "xgboost first"])
def test_every_process_that_imports_cudf_is_patched_whatever_the_order(order):
    imports = "import cudf, xgboost.dask" if order == "cudf first" else "import xgboost.dask, cudf"
    script = (f"{imports}\n"
              "import xgboost.core, xgboost.data, xgboost.dask.data as dd\n"
              "lib = xgboost.core._LIB\n"
              "assert lib.XGDMatrixCreateFromCudaColumnar is lib.XGDMatrixCreateFromColumnar\n"
              "assert xgboost.data.CudfTransformed.__init__.__module__ == 'xgboost_device_sim'\n"
              "assert dd._make_empty.__module__ == 'xgboost_device_sim'\n"
              "assert xgboost.dask.worker_train.__module__ == 'xgboost_device_sim'\n")
    run_with_the_simulation(script)


def test_without_cudf_xgboost_is_left_alone():
    script = ("import sys, xgboost.dask, xgboost.core\n"
              "assert 'cudf' not in sys.modules\n"
              "assert not any(type(f).__name__ == 'PostImportFinder' for f in sys.meta_path)\n"
              "assert xgboost.core._LIB.XGDMatrixCreateFromCudaColumnar is not "
              "xgboost.core._LIB.XGDMatrixCreateFromColumnar\n")
    run_with_the_simulation(script)



def test_a_substitution_whose_target_a_release_renamed_fails_loudly():
    import types

    import xgboost_device_sim

    module = types.ModuleType("xgboost.data")
    with pytest.raises(AttributeError, match="has no _meta_from_cudf_series: re-read the substitution"):
        xgboost_device_sim._replace(module, "_meta_from_cudf_series", object())
