"""``cuml.linear_model.LinearRegression`` (cuml 26.10.0 ``cuml/linear_model/linear_regression.pyx``): the
keyword-only constructor and its defaults, the algorithm names, ``fit``'s input checks, ``coef_``/``intercept_``
in the estimator's output type and ``predict`` keeping X's index. The solver is ``_ols`` (NumPy on the CPU)."""

from __future__ import annotations

from typing import Any

import cudf
import numpy as np
import pandas as pd

from cuml.internals.base import Base
from cuml.internals.validation import check_inputs
from cuml.linear_model import _ols

ALGORITHMS = ("auto", "eig", "svd", "lsmr", "qr", "svd-qr", "svd-jacobi")


def to_output(values: np.ndarray, output_type: str, index: Any = None) -> Any:
    """An array in cuML's output type (``cuml/internals/outputs.py`` ``convert_arrays``); 1-D -> Series."""
    if output_type in ("cudf", "pandas"):
        if values.ndim == 1:
            frame: Any = pd.Series(values, index=index)
        else:
            frame = pd.DataFrame(values, index=index)
        return cudf.from_pandas(frame) if output_type == "cudf" else frame
    return values  # "numpy", and "cupy" (NumPy stands in for CuPy here)


class LinearRegression(Base):
    """Ordinary least squares Linear Regression (simulated: NumPy on the CPU)."""

    @classmethod
    def _get_param_names(cls) -> list[str]:
        return [*super()._get_param_names(), "algorithm", "fit_intercept", "copy_X"]

    def __init__(self, *, algorithm: str = "auto", fit_intercept: bool = True, copy_X: bool = True,
                 verbose: Any = False, output_type: str | None = None) -> None:
        super().__init__(verbose=verbose, output_type=output_type)
        self.algorithm = algorithm
        self.fit_intercept = fit_intercept
        self.copy_X = copy_X

    # ``coef_`` and ``intercept_`` are ReflectedAttr: unset -> AttributeError; arrays follow the output type.
    @property
    def coef_(self) -> Any:
        if "_coef" not in self.__dict__:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute 'coef_'")
        return to_output(self._coef, self._get_output_type())

    @coef_.setter
    def coef_(self, value: np.ndarray) -> None:
        self._coef = np.asarray(value)

    @property
    def intercept_(self) -> Any:
        if "_intercept" not in self.__dict__:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute 'intercept_'")
        value = self._intercept
        return to_output(value, self._get_output_type()) if isinstance(value, np.ndarray) else value

    @intercept_.setter
    def intercept_(self, value: Any) -> None:
        self._intercept = value

    def _set_solution(self, coef: np.ndarray, intercept: np.ndarray, dtype: np.dtype, y_ndim: int) -> None:
        if y_ndim == 1:
            self.coef_ = coef[:, 0].astype(dtype)
            self.intercept_ = float(dtype.type(intercept[0])) if self.fit_intercept else 0.0
        else:
            self.coef_ = coef.T.astype(dtype)
            self.intercept_ = intercept.astype(dtype) if self.fit_intercept else 0.0

    def fit(self, X: Any, y: Any, sample_weight: Any = None) -> LinearRegression:
        """Fit the model with X and y."""
        if sample_weight is not None:
            raise NotImplementedError("simulated cuML: sample_weight is not simulated")
        self._set_output_type(X)
        X, y = check_inputs(self, X, y, dtype=("float32", "float64"), ensure_min_samples=2,
                            accept_multi_output=True, reset=True)
        if self.algorithm not in ALGORITHMS:
            raise ValueError(f"algorithm={self.algorithm!r} is not supported")
        coef, intercept = _ols.solve(_ols.Moments.of(X, y), self.fit_intercept)
        self._set_solution(coef, intercept, X.dtype, y.ndim)
        return self

    def predict(self, X: Any) -> Any:
        """Predicts ``y`` values for ``X``, with X's index (``mlfunc(preserve_index=True)``)."""
        from sklearn.exceptions import NotFittedError

        if "_coef" not in self.__dict__:  # sklearn's check_is_fitted, which cuML calls
            raise NotFittedError(f"This {type(self).__name__} instance is not fitted yet. Call 'fit' with appropriate "
                                 "arguments before using this estimator.")
        output_type = self.output_type if self.output_type not in (None, "input") else infer(X)
        X, index = check_inputs(self, X, dtype=self._coef.dtype, return_index=True)
        out = X @ self._coef.T
        out += self._intercept
        return to_output(out, output_type, index)


def infer(X: Any) -> str:
    from cuml.internals.base import infer_output_type

    return infer_output_type(X)
