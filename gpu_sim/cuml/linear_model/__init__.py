"""Simulated ``cuml.linear_model``: ``LinearRegression`` only."""

from cuml.linear_model.linear_regression import LinearRegression

__all__ = ["LinearRegression"]
