"""Simulated ``cuml.internals``: the estimator base class and input validation."""
