"""Fixtures shared by the unit tests, and what this test run must not collect."""

from __future__ import annotations

import os

import pytest

from utils.dataset import Dataset, ensure_dataset

# The simulated RAPIDS stack is collected only inside the simulation (GPU_SIM=1 and tests/gpu_sim
# first on PYTHONPATH: tests/gpu_path/test_gpu_sim.py, tests/gpu_sim/notebook_pass.py). Ignored here, pytest
# never enters the folder, so it never lands on this process's sys.path, where its `cudf` and
# `pynvml` would make a CPU run look like a GPU machine.
if os.environ.get("GPU_SIM") != "1":
    collect_ignore = ["gpu_sim"]


@pytest.fixture(scope="session")
def tiny_dataset(tmp_path_factory: pytest.TempPathFactory) -> Dataset:
    """A private tiny dataset (not the repository's data/), generated once per test run."""
    return ensure_dataset("tiny", tmp_path_factory.mktemp("data"))
