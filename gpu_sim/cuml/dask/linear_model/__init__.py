"""Simulated ``cuml.dask.linear_model``: ``LinearRegression`` only."""

from cuml.dask.linear_model.linear_regression import LinearRegression

__all__ = ["LinearRegression"]
