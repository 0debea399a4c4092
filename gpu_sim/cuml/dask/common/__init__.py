"""Simulated ``cuml.dask.common``: the estimator base, data placement and comms behind ``cuml.dask``."""

from cuml.dask.common.part_utils import parts_to_ranks, workers_to_parts
from cuml.dask.common.utils import raise_exception_from_futures

__all__ = ["parts_to_ranks", "raise_exception_from_futures", "workers_to_parts"]
