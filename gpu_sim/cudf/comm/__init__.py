"""Simulated ``cudf.comm``."""
