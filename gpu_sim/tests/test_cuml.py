"""The simulated cuML 26.10 (``gpu_sim/cuml``): ``cuml.dask.linear_model.LinearRegression`` keeps the released
contract (cuml-cu12 26.10.0 ``cuml/dask/...``, ``cuml/linear_model/...``; raft-dask ``comms.py``/``nccl.pyx``;
NCCL ``src/init.cc``) while least squares on the workers' CPUs stands in for the OPG solver. One LocalCUDACluster on
two simulated GPUs; the shared-GPU case moves a worker's ``CUDA_VISIBLE_DEVICES`` onto the other's GPU."""

from __future__ import annotations

import contextlib
import importlib
import importlib.metadata
import inspect
import os

import cudf
import cuml
import cuml.dask
import dask
import dask.dataframe as dd
import dask_cuda.utils
import numpy as np
import pandas as pd
import pytest
import toolz
from cuml.dask.linear_model import LinearRegression
from dask_cuda import LocalCUDACluster
from distributed import Client

NCCL_INVALID_USAGE = "NCCL_ERROR: b'invalid usage (run with NCCL_DEBUG=WARN for details)'"


@pytest.fixture(scope="module")
def client():
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("GPU_SIM_DEVICES", "2")
        patch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
        patch.setattr(dask_cuda.utils, "get_gpu_count", toolz.memoize(dask_cuda.utils.get_gpu_count.__wrapped__))
        with LocalCUDACluster(host="127.0.0.1", dashboard_address="127.0.0.1:0", memory_limit="2GiB",
                              silence_logs=40) as cluster, Client(cluster) as client:
            yield client


@pytest.fixture(scope="module")
def data():
    """X (3 float32 columns), y = 2a - 3b + 0.5c + 7 with a little noise, 4 partitions each, cudf-backed."""
    rng = np.random.default_rng(0)
    frame = pd.DataFrame(rng.normal(size=(400, 3)), columns=["a", "b", "c"]).astype("float32")
    frame["y"] = (2 * frame.a - 3 * frame.b + 0.5 * frame.c + 7 + rng.normal(scale=0.01, size=400)).astype("float32")
    with dask.config.set({"dataframe.backend": "cudf"}):
        ddf = dd.from_pandas(frame, npartitions=4)
    return frame, ddf[["a", "b", "c"]], ddf["y"]


@contextlib.contextmanager
def workers_on_one_gpu(client: Client, **extra_env: str):
    """Every worker computes on simulated GPU 0 (their first CUDA_VISIBLE_DEVICES entry), as in the classroom."""
    saved = client.run(lambda: os.environ.get("CUDA_VISIBLE_DEVICES"))

    def move(values: dict) -> None:
        for name, value in values.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value

    client.run(move, {"CUDA_VISIBLE_DEVICES": "0,1", **extra_env})
    try:
        yield
    finally:
        for address, value in saved.items():
            client.run(move, {"CUDA_VISIBLE_DEVICES": value, **dict.fromkeys(extra_env)}, workers=[address])


def _least_squares(frame: pd.DataFrame, fit_intercept: bool = True) -> tuple[np.ndarray, float]:
    X = frame[["a", "b", "c"]].to_numpy(dtype=np.float64)
    if fit_intercept:
        X = np.column_stack([X, np.ones(len(X))])
    solution = np.linalg.lstsq(X, frame["y"].to_numpy(dtype=np.float64), rcond=None)[0]
    return (solution[:3], float(solution[3])) if fit_intercept else (solution, 0.0)


def test_the_installed_metadata_and_version():
    assert importlib.metadata.version("cuml-cu12") == "26.10.0+sim"
    assert cuml.__version__ == "26.10.00+sim"  # cuml/_version.py reads VERSION: "26.10.00"


def test_importing_cuml_dask_switches_shuffles_to_tasks():
    """cuml/dask/__init__.py: dask.config.set({"dataframe.shuffle.method": "tasks"}) at import."""
    with dask.config.set({"dataframe.shuffle.method": "p2p"}):
        importlib.reload(cuml.dask)
        assert dask.config.get("dataframe.shuffle.method") == "tasks"


def test_constructor_takes_client_verbose_and_the_single_gpu_keywords():
    parameters = inspect.signature(LinearRegression.__init__).parameters
    assert [(p.name, p.kind.name, p.default) for p in parameters.values()][1:] == [
        ("client", "KEYWORD_ONLY", None), ("verbose", "KEYWORD_ONLY", False), ("kwargs", "VAR_KEYWORD", inspect._empty)]
    single = inspect.signature(cuml.LinearRegression.__init__).parameters
    assert {name: p.default for name, p in single.items() if name != "self"} == {
        "algorithm": "auto", "fit_intercept": True, "copy_X": True, "verbose": False, "output_type": None}
    assert all(p.kind is p.KEYWORD_ONLY for name, p in single.items() if name != "self")


def test_fit_returns_self_and_solves_least_squares(client, data):
    frame, X, y = data
    model = LinearRegression(client=client, fit_intercept=True)
    assert model.kwargs == {"fit_intercept": True, "verbose": False}
    assert model.fit(X, y) is model
    coef, intercept = _least_squares(frame)
    assert type(model.coef_) is cudf.Series and model.coef_.dtype == np.float32  # output_type "cudf", X's dtype
    np.testing.assert_allclose(model.coef_.to_pandas().to_numpy(), coef, rtol=1e-4)
    assert type(model.intercept_) is float and model.intercept_ == pytest.approx(intercept, rel=1e-4)
    no_intercept = LinearRegression(client=client, fit_intercept=False).fit(X, y)
    assert no_intercept.intercept_ == 0.0
    np.testing.assert_allclose(no_intercept.coef_.to_pandas().to_numpy(), _least_squares(frame, False)[0], rtol=1e-4)


def test_predict_is_lazy_with_one_cudf_partition_per_partition_of_x(client, data):
    frame, X, y = data
    model = LinearRegression(client=client).fit(X, y)
    predicted = model.predict(X)
    assert isinstance(predicted, dd.Series) and type(predicted._meta) is cudf.Series
    assert predicted.npartitions == X.npartitions
    for i in range(X.npartitions):
        part, x_part = predicted.partitions[i].compute(), X.partitions[i].compute()
        assert type(part) is cudf.Series and part.dtype == np.float32
        assert part.index.equals(x_part.index)  # mlfunc(preserve_index=True)
    coef, intercept = _least_squares(frame)
    expected = frame[["a", "b", "c"]].to_numpy(dtype=np.float64) @ coef + intercept
    np.testing.assert_allclose(predicted.compute().to_pandas().sort_index().to_numpy(), expected, rtol=1e-3)
    assert isinstance(model.predict(X, delayed=False), dd.Series)  # persisted, still a collection


def test_get_combined_model_is_the_single_gpu_model(client, data):
    frame, X, y = data
    model = LinearRegression(client=client).fit(X, y)
    combined = model.get_combined_model()
    assert isinstance(combined, cuml.LinearRegression) and isinstance(combined, cuml.Base)
    assert type(combined).__qualname__ == "LinearRegressionMG"
    np.testing.assert_array_equal(combined.coef_.to_pandas().to_numpy(), model.coef_.to_pandas().to_numpy())
    local = cudf.from_pandas(frame[["a", "b", "c"]].head(5))
    np.testing.assert_allclose(combined.predict(local).to_pandas().to_numpy(),
                               model.predict(X).compute().to_pandas().sort_index().head(5).to_numpy(), rtol=1e-5)
    assert LinearRegression(client=client).get_combined_model() is None


def test_pandas_partitions_and_integer_columns_are_accepted(client, data):
    frame, _, _ = data
    ints = dd.from_pandas(pd.DataFrame({"a": np.arange(100), "b": np.arange(100) % 7, "y": np.arange(100) * 3 + 1}),
                          npartitions=2)  # pandas-backed: DistributedDataHandler calls any Dask DataFrame "cudf"
    model = LinearRegression(client=client).fit(ints[["a", "b"]], ints["y"])
    assert model.coef_.dtype == np.float32  # int64 is not float32/float64: converted to the first, float32
    np.testing.assert_allclose(model.coef_.to_pandas().to_numpy(), [3.0, 0.0], atol=1e-4)
    assert model.intercept_ == pytest.approx(1.0, abs=1e-3)


def test_what_it_refuses_and_with_which_messages(client, data):
    frame, X, y = data
    with pytest.raises(IndexError, match="tuple index out of range"):  # n_cols = data[0].shape[1]
        LinearRegression(client=client).fit(X["a"], y)
    with pytest.raises(AttributeError, match="object has no attribute 'chunks'"):  # validate_dask_array
        LinearRegression(client=client).fit(frame[["a", "b"]], frame["y"])
    with pytest.raises(RuntimeError, match=r"worker jobs failed: .*unexpected keyword argument 'normalize'"):
        LinearRegression(client=client, normalize=True).fit(X, y)  # kwargs reach LinearRegressionMG at fit
    with pytest.raises(RuntimeError, match="worker jobs failed: algorithm 'lsmr' is not supported"):
        LinearRegression(client=client, algorithm="lsmr").fit(X, y)  # the OPG fit parses eig/svd/qr only
    holed = frame[["a", "b", "c"]].copy()
    holed.iloc[3, 0] = np.nan
    with dask.config.set({"dataframe.backend": "cudf"}):
        with_nan = dd.from_pandas(holed, npartitions=4)
    with pytest.raises(RuntimeError, match=r"worker jobs failed: Input X contains NaN\."):
        LinearRegression(client=client).fit(with_nan, y)
    two_targets = X[["a", "b"]]
    with pytest.raises(RuntimeError, match=r"y should be a 1d array, got an array of shape \(\d+, 2\) instead"):
        LinearRegression(client=client).fit(X, two_targets)
    with pytest.raises(AttributeError, match="Attribute datatype not found"):
        LinearRegression(client=client).predict(X)  # before fit


def test_two_ranks_on_one_gpu_fail_as_nccl_does(client, data):
    """raft-dask opens one NCCL rank per worker; NCCL refuses two ranks on one GPU (ncclInvalidUsage)."""
    _, X, y = data
    with workers_on_one_gpu(client):
        ranks = client.run(lambda: dask_cuda.utils.nvml_device_index(0, os.environ["CUDA_VISIBLE_DEVICES"]))
        assert set(ranks.values()) == {0}
        with pytest.raises(RuntimeError) as failure:
            LinearRegression(client=client).fit(X, y)
        assert str(failure.value) == NCCL_INVALID_USAGE
        errors = [event for _, event in client.get_events("error")]
        assert any("An error occurred initializing NCCL: " + NCCL_INVALID_USAGE in str(e) for e in errors)
    with workers_on_one_gpu(client, NCCL_MULTI_RANK_GPU_ENABLE="1"):  # NCCL >= 2.30.7's opt-in
        assert LinearRegression(client=client).fit(X, y).intercept_ == pytest.approx(7.0, abs=0.01)
    assert LinearRegression(client=client).fit(X, y).intercept_ == pytest.approx(7.0, abs=0.01)  # restored
