"""``cuml.dask.linear_model.LinearRegression`` (cuml 26.10.0 ``cuml/dask/linear_model/linear_regression.py``).

The constructor takes ``client``, ``verbose`` and any keyword, stored in ``kwargs`` and checked only when ``fit``
builds the per-rank ``LinearRegressionMG(handle=..., output_type=datatype, **kwargs)`` on the workers (so a wrong
keyword fails at ``fit``, inside "N of N worker jobs failed: ..."). The OPG solver is simulated (see
``cuml.linear_model.linear_regression_mg``): ordinary least squares on the workers' CPUs.
"""

from __future__ import annotations

from typing import Any

from dask.distributed import get_worker

from cuml.dask.common.base import BaseEstimator, DelayedPredictionMixin, SyncFitMixinLinearModel, mnmg_import
from cuml.dask.common.raft_comms import get_raft_comm_state


class LinearRegression(BaseEstimator, SyncFitMixinLinearModel, DelayedPredictionMixin):
    """Linear regression over a Dask cluster, one rank per worker (simulated: least squares on the CPU).

    Parameters: ``client``, ``verbose`` and the single-GPU model's keywords (``algorithm='auto'``,
    ``fit_intercept=True``, ``copy_X=True``). Attributes: ``coef_`` (cuDF Series for DataFrame input),
    ``intercept_`` (float).
    """

    def __init__(self, *, client: Any = None, verbose: Any = False, **kwargs: Any) -> None:
        super().__init__(client=client, verbose=verbose, **kwargs)

    def fit(self, X: Any, y: Any) -> LinearRegression:
        """Fit the model with X (Dask DataFrame or Dask array) and y (same partitions)."""
        models = self._fit(model_func=LinearRegression._create_model, data=(X, y))
        self._set_internal_model(models[0])
        return self

    def predict(self, X: Any, delayed: bool = True) -> Any:
        """Predictions for X as a Dask collection, one partition per partition of X (lazy unless delayed=False)."""
        return self._predict(X, delayed=delayed)

    def _get_param_names(self) -> list[str]:
        return list(self.kwargs.keys())

    @staticmethod
    @mnmg_import
    def _create_model(sessionId: bytes, datatype: str, **kwargs: Any) -> Any:  # noqa: N803
        from cuml.linear_model.linear_regression_mg import LinearRegressionMG

        handle = get_raft_comm_state(sessionId, get_worker())["handle"]
        return LinearRegressionMG(handle=handle, output_type=datatype, **kwargs)
