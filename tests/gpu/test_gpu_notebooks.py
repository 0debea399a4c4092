"""Check 4b: every notebook passes under nbval with ``COURSE_BACKEND=gpu``, so a missing GPU or
cudf is an error in the notebook, never a silent CPU run. Each notebook runs in its own pytest
process (with the project's nbval options) at the tiny scale CI uses, so the stored outputs
compare; ``$DASK_SCHEDULER_ADDRESS``, when set, is passed on."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from utils.base.paths import NOTEBOOKS_DIR, REPO_ROOT

pytestmark = pytest.mark.gpu

NOTEBOOKS = sorted(NOTEBOOKS_DIR.glob("*.ipynb"))


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda path: path.name)
def test_4b_notebook_passes_with_the_gpu_backend(notebook, record_property):
    if os.environ.get("GPU_CHECK_SKIP_NOTEBOOKS"):
        pytest.skip("left out on request (--skip-notebooks)")
    pytest.importorskip("cudf", reason="cudf not installed")
    pytest.importorskip("nbval", reason="nbval not installed")
    env = {**os.environ, "COURSE_BACKEND": "gpu", "COURSE_SCALE": "tiny"}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", str(notebook.relative_to(REPO_ROOT)), "-q", "-p", "no:cacheprovider"],
        cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=3600, check=False,
    )
    lines = done.stdout.strip().splitlines()
    record_property("summary", lines[-1] if lines else f"pytest exit status {done.returncode}")
    assert done.returncode == 0, (done.stdout + done.stderr)[-3000:]
