"""The simulated RAPIDS stack's own unit tests (``gpu_sim/tests``), all of them in one child
process with the simulation first on ``PYTHONPATH``, as the GPU-mode notebook pass runs it. The
stack keeps process-wide state as the real one does (cudf's options; dask-cuda replaces
distributed's lazy cudf serializers on import): ``gpu_sim/tests/conftest.py`` puts it back after
every test, so one process holds them all. This process never imports a stand-in
(``tests/gpu_wing/test_cluster_gpu_workers.py`` checks that premise)."""

from __future__ import annotations

import os
import subprocess
import sys

from utils.base.paths import REPO_ROOT

REPO = REPO_ROOT
SIM = REPO / "gpu_sim"
TEST_FILES = sorted((SIM / "tests").glob("test_*.py"))


def test_the_simulation_has_unit_tests():
    assert {path.name for path in TEST_FILES} >= {"test_pynvml.py", "test_dask_cuda.py", "test_dask_cuda_cli.py",
                                                 "test_cudf.py", "test_dask_cudf.py", "test_course_gpu_path.py"}


def test_simulated_stack_unit_tests_pass():
    path = os.pathsep.join(filter(None, [str(SIM), os.environ.get("PYTHONPATH")]))
    env = {**os.environ, "GPU_SIM": "1", "PYTHONPATH": path}
    for name in ("COURSE_BACKEND", "DASK_SCHEDULER_ADDRESS", "CUDA_VISIBLE_DEVICES", "GPU_SIM_DEVICES"):
        env.pop(name, None)
    done = subprocess.run(
        [sys.executable, "-m", "pytest", str(SIM / "tests"), "-q", "-p", "no:cacheprovider"],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=600, check=False,
    )
    assert done.returncode == 0, (done.stdout + done.stderr)[-4000:]
    assert " passed" in done.stdout.splitlines()[-1], done.stdout[-2000:]
