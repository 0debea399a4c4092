"""``cuml.linear_model.linear_regression_mg.LinearRegressionMG`` and ``MGFitMixin`` (cuml 26.10.0
``cuml/linear_model/linear_regression_mg.pyx``, ``cuml/linear_model/base_mg.py``): the per-rank model that
``cuml.dask`` builds on each worker with the worker's comms handle, validating each partition as the real one does.

Stand-in for the OPG solver (``ML::OLS::opg::fit``, whose ranks add their partial sums with an NCCL allreduce): each
rank sums X^T X, X^T y and the column sums of its partitions, the ranks exchange those sums through the simulated
comms handle, and every rank solves the same least-squares system (``_ols``) in NumPy on the CPU.
"""

from __future__ import annotations

import enum
from typing import Any

from cuml.internals.validation import check_inputs
from cuml.linear_model import _ols
from cuml.linear_model.linear_regression import LinearRegression


class Algo(enum.IntEnum):
    """The libcuml solver algorithm (``linear_regression.pyx``)."""

    SVD = 0
    EIG = 1
    QR = 2
    SVD_QR = 3

    @classmethod
    def parse(cls, name: str) -> Algo:
        out = {"svd": cls.SVD, "eig": cls.EIG, "qr": cls.QR, "svd-qr": cls.SVD_QR, "svd-jacobi": cls.SVD}.get(name)
        if out is None:
            raise ValueError(f"algorithm {name!r} is not supported")
        return out


class MGFitMixin:
    """Fit over the partitions one rank holds (``base_mg.py``)."""

    def __init__(self, *, handle: Any, **kwargs: Any) -> None:
        self.handle = handle
        super().__init__(**kwargs)

    def fit(self, input_data: list, n_rows: int, n_cols: int, parts_rank_size: list, rank: int) -> Any:
        """Fit function for MNMG linear regression classes; not part of the public API."""
        self._set_output_type(input_data[0][0])
        Xs, ys = [], []
        dtype: Any = ("float32", "float64")
        try:
            for i, (X, y) in enumerate(input_data):
                X, y = check_inputs(self, X, y, dtype=dtype, reset=(i == 0))
                if i == 0:
                    dtype = X.dtype
                Xs.append(X)
                ys.append(y)
        except Exception as error:
            self.handle.abandon(rank, error)  # peers stop waiting for this rank (a real allreduce would hang)
            raise
        self._fit(Xs, ys, n_cols, dtype, rank)
        return self


class LinearRegressionMG(MGFitMixin, LinearRegression):
    def _fit(self, Xs: list, ys: list, n_cols: int, dtype: Any, rank: int) -> None:
        try:
            Algo.EIG if self.algorithm == "auto" else Algo.parse(self.algorithm)
        except ValueError as error:
            self.handle.abandon(rank, error)
            raise
        local = _ols.Moments.of(Xs[0], ys[0])
        for X, y in zip(Xs[1:], ys[1:], strict=True):
            local = local + _ols.Moments.of(X, y)
        total = self.handle.allreduce(rank, local)
        coef, intercept = _ols.solve(total, self.fit_intercept)
        self.intercept_ = float(dtype.type(intercept[0])) if self.fit_intercept else 0.0
        self.coef_ = coef[:, 0].astype(dtype)
        self.handle.sync()

    def __getstate__(self) -> dict:
        return dict(self.__dict__)
