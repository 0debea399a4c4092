"""Ordinary least squares from sufficient statistics, the solver every simulated ``LinearRegression`` shares.

A stand-in for libcuml's solvers (``olsFit`` eig/svd/qr on one GPU, ``ML::OLS::opg::fit`` across GPUs): the same
model, computed in float64 NumPy on the CPU from X^T X, X^T y and the column sums, so that partial sums from several
workers add up to the single-process answer. Not cuML's algorithm; singular systems get the minimum-norm solution.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass
class Moments:
    """Sums over rows: n, sum(x), sum(y), X^T X, X^T y (y as a column matrix)."""

    n: int
    sx: np.ndarray
    sy: np.ndarray
    xtx: np.ndarray
    xty: np.ndarray

    @classmethod
    def of(cls, X: np.ndarray, y: np.ndarray) -> Moments:
        X = np.asarray(X, dtype=np.float64)
        Y = np.asarray(y, dtype=np.float64).reshape(len(X), -1)
        return cls(len(X), X.sum(axis=0), Y.sum(axis=0), X.T @ X, X.T @ Y)

    def __add__(self, other: Moments) -> Moments:
        return Moments(self.n + other.n, self.sx + other.sx, self.sy + other.sy, self.xtx + other.xtx,
                       self.xty + other.xty)


def solve(m: Moments, fit_intercept: bool) -> tuple[np.ndarray, np.ndarray]:
    """Coefficients (n_features, n_targets) and intercepts (n_targets,) of the least-squares fit."""
    if fit_intercept:
        xtx = m.xtx - np.outer(m.sx, m.sx) / m.n
        xty = m.xty - np.outer(m.sx, m.sy) / m.n
    else:
        xtx, xty = m.xtx, m.xty
    coef = np.linalg.lstsq(xtx, xty, rcond=None)[0]
    intercept = (m.sy - m.sx @ coef) / m.n if fit_intercept else np.zeros(coef.shape[1])
    return coef, intercept
