"""Test-wide settings: the tiny data scale, quiet Dask, a progress file of the run's own, and GPU
tests skipped where no GPU is."""

from __future__ import annotations

import os
import shutil
import tempfile

import pytest

# Notebooks run by nbval inherit this environment: the tiny scale keeps each under a minute.
os.environ.setdefault("COURSE_SCALE", "tiny")
os.environ.setdefault("DASK_DISTRIBUTED__LOGGING__DISTRIBUTED", "error")
os.environ.setdefault("PYDEVD_DISABLE_FILE_VALIDATION", "1")  # a debugger warning in kernels
_progress_dir: str | None = None
# nbval, extended: exercises graded inside the notebook's run, executed copies for the site (both opt-in);
# and the semaphores of killed kernels removed at the end of every run.
pytest_plugins = ["tests.support.exercise_grading", "tests.support.executed_copies", "tests.support.semaphores"]

# The simulated RAPIDS stack (gpu_sim/) is collected only inside the simulation: GPU_SIM=1 and gpu_sim
# first on PYTHONPATH (tests/gpu_wing/test_gpu_sim.py, gpu_sim/notebook_pass.py). The default run's
# testpaths never reach it; ignored here as well, a `pytest .` never enters the folder either, so it
# never lands on this process's sys.path, where its `cudf` and `pynvml` would make a CPU run look
# like a GPU machine.
if os.environ.get("GPU_SIM") != "1":
    collect_ignore = ["gpu_sim"]


def pytest_configure(config: pytest.Config) -> None:
    """The checks that the notebooks and tests run record into a temporary progress file, never into
    the learner's (``utils.progress``); a ``COURSE_PROGRESS_FILE`` set by the caller is kept, so a run
    can be inspected. Kernels and pytest-xdist workers inherit it."""
    from utils.progress.store import PROGRESS_ENV_VAR  # after the settings above: it imports Dask

    global _progress_dir
    if not os.environ.get(PROGRESS_ENV_VAR):
        _progress_dir = tempfile.mkdtemp(prefix="course-progress-")
        os.environ[PROGRESS_ENV_VAR] = os.path.join(_progress_dir, "progress.jsonl")


def pytest_unconfigure(config: pytest.Config) -> None:
    if _progress_dir is not None:
        shutil.rmtree(_progress_dir, ignore_errors=True)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Skip tests marked ``gpu`` with a stated reason on machines without an NVIDIA GPU."""
    if not any(item.get_closest_marker("gpu") for item in items):
        return
    from utils.machine import gpu_count

    if gpu_count() > 0:
        return
    skip = pytest.mark.skip(reason="needs an NVIDIA GPU: NVML reports none on this machine")
    for item in items:
        if item.get_closest_marker("gpu"):
            item.add_marker(skip)
