"""The real GPU path of ``utils.gpu_check``: runs only where an NVIDIA GPU is visible.

Every test here is marked ``gpu``; conftest.py skips them with a reason on machines without a GPU,
so the normal suite stays green in CI. On a GPU machine (with requirements-gpu.txt installed):

    .venv/bin/python -m pytest tests/test_gpu.py -ra
"""

from __future__ import annotations

import pytest

from utils import gpu_check
from utils.gpu_check import CHECKS, PASS, Context, parse_args, run_check

pytestmark = pytest.mark.gpu

CHECK = {c.name: c for c in CHECKS}


@pytest.fixture(scope="module")
def gpu_context():
    """Check 1a's LocalCUDACluster, shared by the tests of this module."""
    ctx = Context(
        parse_args(["--rows", "2_000_000", "--repeats", "1", "--skip-notebooks"]),
        expected_gpus=gpu_check.expected_gpu_workers(),
    )
    result = run_check(CHECK["cluster"], ctx)
    yield ctx, result
    ctx.release_cluster()


def test_local_cuda_cluster_has_one_worker_per_gpu(gpu_context):
    ctx, result = gpu_context
    assert result.status == PASS, result.reason
    assert result.details["workers"] == ctx.expected_gpus > 0
    assert result.details["distinct_gpus"] == ctx.expected_gpus
    assert result.details["cluster"] == "LocalCUDACluster"


def test_dashboard_gpu_pages_answer_with_data(gpu_context):
    ctx, _ = gpu_context
    result = run_check(CHECK["dashboard"], ctx)
    assert result.status == PASS, result.reason
    assert all(page["http_status"] == 200 for page in result.details["pages"].values())


def test_cupy_bincount_groupby_equals_ground_truth(gpu_context):
    ctx, _ = gpu_context
    result = run_check(CHECK["cupy-groupby"], ctx)
    assert result.status == PASS, result.reason
    assert result.details["gpu_result_type"].startswith("cupy")
    assert result.details["gpu_vs_ground_truth"]["mismatched_customers"] == 0
    assert result.details["cpu_vs_ground_truth"]["matches"]


def test_backend_choice_is_gpu_when_cudf_is_installed(gpu_context):
    ctx, _ = gpu_context
    if gpu_check.cudf_missing():
        pytest.skip("cudf / dask_cudf not installed: the course's backend choice cannot pick the GPU")
    result = run_check(CHECK["backend-choice"], ctx)
    assert result.status == PASS, result.reason
