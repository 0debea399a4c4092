"""Simulated ``cudf.core`` (class paths as in rapidsai/cudf ``python/cudf/cudf/core``)."""
