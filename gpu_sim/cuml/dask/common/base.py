"""``cuml/dask/common/base.py`` (cuml 26.10.0): ``BaseEstimator`` (client, ``kwargs`` sent to the workers' models,
attributes fetched from the trained model, ``get_combined_model``), lazy predictions per partition
(``DelayedParallelFunc``), and ``SyncFitMixinLinearModel._fit``: one NCCL rank per worker holding data, one model
per rank, one fit task per rank. Deviation: CuPy metadata is NumPy here (no CuPy in the simulation)."""

from __future__ import annotations

from collections.abc import Iterable
from functools import wraps
from typing import Any

import dask
import dask.array
import dask_cudf
import numpy as np
from dask.dataframe import DataFrame as dcDataFrame
from distributed.client import Future
from toolz import first

from cuml.dask.common.input_utils import DistributedDataHandler
from cuml.dask.common.part_utils import parts_to_ranks
from cuml.dask.common.raft_comms import Comms
from cuml.dask.common.utils import get_client, wait_and_raise_from_futures
from cuml.internals.base import Base


class BaseEstimator:
    def __init__(self, *, client: Any = None, verbose: Any = False, **kwargs: Any) -> None:
        """Constructor for distributed estimators."""
        self.client = get_client(client)
        self.verbose = verbose
        kwargs["verbose"] = verbose  # kwargs transmits the verbosity level to workers
        self.kwargs = kwargs
        self.internal_model = None

    def __getstate__(self) -> dict:
        internal_model = self._get_internal_model()
        if internal_model:
            internal_model = internal_model.result()
        return {"verbose": self.verbose, "kwargs": self.kwargs, "datatype": getattr(self, "datatype", None),
                "internal_model": internal_model}

    def __setstate__(self, state: dict) -> None:
        self._set_internal_model(state.pop("internal_model"))
        self.__dict__.update(state)

    def get_combined_model(self) -> Any:
        """The trained single-GPU model, for serialization (None before training)."""
        internal_model = self._check_internal_model(self._get_internal_model())
        if isinstance(self.internal_model, Iterable):
            raise ValueError(f"Expected a single instance of cuml.Base but got {type(self.internal_model)} instead.")
        elif isinstance(self.internal_model, Future):
            internal_model = self.internal_model.result()
        return internal_model

    def _set_internal_model(self, model: Any) -> None:
        self.internal_model = self._check_internal_model(model)

    @staticmethod
    def _check_internal_model(model: Any) -> Any:
        if isinstance(model, Iterable):
            model = first(model)
        if isinstance(model, Future):
            if model.type is None:
                wait_and_raise_from_futures([model])
            if not issubclass(model.type, Base):
                raise ValueError(f"Dask Future expected to contain cuml.Base but found {model.type} instead.")
        elif model is not None and not isinstance(model, Base):
            raise ValueError(f"Expected model of type cuml.Base but found {type(model)} instead.")
        return model

    def _get_internal_model(self) -> Any:
        return self.internal_model

    @staticmethod
    def _get_model_attr(model: Any, name: str) -> Any:
        if hasattr(model, name):
            return getattr(model, name)
        elif any(x in name for x in ("_ipython", "_repr")):
            pass
        else:
            raise AttributeError(f"Attribute {name} does not exist on model {type(model)}")

    def __getattr__(self, attr: str) -> Any:
        """``_``-prefixed local attribute, else local attribute, else the trained model's (fetched remotely)."""
        real_name = "_" + attr
        ret_attr = None
        if real_name in self.__dict__:
            ret_attr = self.__dict__[real_name]
        elif attr in self.__dict__:
            ret_attr = self.__dict__[attr]
        internal_model = self._get_internal_model()
        if ret_attr is None and internal_model is not None:
            if isinstance(internal_model, Base):
                ret_attr = getattr(internal_model, attr)
            else:
                ret_attr = dask.delayed(BaseEstimator._get_model_attr)(internal_model, attr).compute()
        else:
            raise AttributeError(f"Attribute {attr} not found in {type(self)}")
        return ret_attr


class DelayedParallelFunc:
    def _run_parallel_func(self, func: Any, X: Any, n_dims: int = 1, delayed: bool = True,
                           output_futures: bool = False, output_dtype: Any = None,
                           output_collection_type: str | None = None, **kwargs: Any) -> Any:
        """``func(model, partition)`` for every partition of X, one lazy task each."""
        X_d = X.to_delayed()
        if isinstance(X, dask.array.Array):
            X_d = X_d.ravel()
        if output_collection_type is None:
            output_collection_type = self.datatype
        model_delayed = dask.delayed(self._get_internal_model(), pure=True, traverse=False)
        func = dask.delayed(func, pure=False, nout=1)
        preds = [func(model_delayed, part, **kwargs) for part in X_d]
        if isinstance(X, dcDataFrame):
            dtype = first(X.dtypes) if output_dtype is None else output_dtype
        else:
            dtype = X.dtype if output_dtype is None else output_dtype
        if output_collection_type == "cupy":
            shape = (np.nan,) * n_dims
            preds_arr = [dask.array.from_delayed(pred, meta=np.zeros(1, dtype=dtype), shape=shape, dtype=dtype)
                         for pred in preds]
            if output_futures:
                return self.client.compute(preds)
            output = dask.array.concatenate(preds_arr, axis=0, allow_unknown_chunksizes=True)
            return output if delayed else output.persist()
        elif output_collection_type == "cudf":
            if output_futures:
                return self.client.compute(preds)
            output = dask_cudf.from_delayed(preds)
            return output if delayed else output.persist()
        raise ValueError(f"Expected cupy or cudf but found {output_collection_type}")


class DelayedPredictionMixin(DelayedParallelFunc):
    def _predict(self, X: Any, delayed: bool = True, **kwargs: Any) -> Any:
        return self._run_parallel_func(func=_predict_func, X=X, n_dims=1, delayed=delayed, **kwargs)


class SyncFitMixinLinearModel:
    def _fit(self, model_func: Any, data: tuple) -> dict:
        n_cols = data[0].shape[1]
        data = DistributedDataHandler.create(data=data, client=self.client)
        self.datatype = data.datatype

        comms = Comms(comms_p2p=False)
        comms.init(workers=data.workers)

        data.calculate_parts_to_sizes(comms)
        self.ranks = data.ranks

        worker_info = comms.worker_info(comms.worker_addresses)
        parts_to_sizes, _ = parts_to_ranks(self.client, worker_info, data.gpu_futures)

        lin_models = {
            data.worker_info[w]["rank"]: self.client.submit(model_func, comms.sessionId, self.datatype,
                                                            **self.kwargs, pure=False, workers=[w])
            for w, _ in data.worker_to_parts.items()
        }
        lin_fit = {
            w: self.client.submit(self._func_fit, lin_models[data.worker_info[w]["rank"]], parts, data.total_rows,
                                  n_cols, parts_to_sizes, data.worker_info[w]["rank"], pure=False, workers=[w])
            for w, parts in data.worker_to_parts.items()
        }
        wait_and_raise_from_futures(list(lin_fit.values()))
        comms.destroy()
        return lin_models

    @staticmethod
    def _func_fit(f: Any, data: list, n_rows: int, n_cols: int, partsToSizes: list, rank: int) -> Any:  # noqa: N803
        return f.fit(data, n_rows, n_cols, partsToSizes, rank)


def mnmg_import(func: Any) -> Any:
    @wraps(func)
    def check_cuml_mnmg(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except ImportError:
            raise RuntimeError("cuML has not been built with multiGPU support enabled. Build with the --multigpu "
                               "flag to enable multiGPU support.") from None

    return check_cuml_mnmg


def _predict_func(model: Any, data: Any, **kwargs: Any) -> Any:
    return model.predict(data, **kwargs)
