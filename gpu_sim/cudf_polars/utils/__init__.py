"""Simulated ``cudf_polars.utils``: versions and configuration."""
