"""The simulation's unit tests: a private tiny dataset, and isolation between tests that share one
process across many clusters.

A ``LocalCUDACluster`` with cudf spilling on sets ``cudf.set_option("spill", True)`` in the client process
too (dask-cuda ``local_cuda_cluster.py``), and while it is on, dask-cuda's lazy serialization hook skips
cudf's serializers (dask-cuda ``__init__.py``, ``_register_cudf_spill_aware``) and is then gone from
distributed's registry. A later test whose workers send cudf objects with cudf's Dask serializer would
find no deserializer here ("No dispatch for <class 'cudf.core.series.Series'>"). A learner's kernel
runs one cluster; this process runs dozens, so after each test the option comes back and the hook's
decision is taken again with spilling off, as a fresh process would take it.
"""

from __future__ import annotations

import importlib
import sys

import pytest

from utils.dataset import Dataset, ensure_dataset


@pytest.fixture(scope="session")
def tiny_dataset(tmp_path_factory: pytest.TempPathFactory) -> Dataset:
    """A private tiny dataset (not the repository's data/), generated once per test run."""
    return ensure_dataset("tiny", tmp_path_factory.mktemp("data"))


@pytest.fixture(autouse=True)
def fresh_cudf_serialization_state():
    cudf = sys.modules.get("cudf")
    before = cudf.get_option("spill") if cudf is not None else False
    yield
    cudf = sys.modules.get("cudf")
    if cudf is None:
        return
    cudf.set_option("spill", before)
    from distributed.protocol.serialize import dask_deserialize

    if not before and "cudf" not in dask_deserialize._lazy:
        importlib.import_module("cudf.comm.serialize")  # what distributed's hook imports (protocol/__init__.py)
