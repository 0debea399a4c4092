"""The Makefile's two routes, read from `make -n` (what make would run, nothing run): the pinned
CPU .venv by default and in conda's base environment, and an activated non-base conda environment
(e.g. the GPU one from environment.yml) used as it is, with only the course package and kernel
installed into it."""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from utils.base.paths import REPO_ROOT

REPO = REPO_ROOT
CONDA = "/opt/conda/envs/dask-gpu-course"
pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")


def _make(*args: str, dry: bool = True, **env: str) -> subprocess.CompletedProcess:
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("CONDA_", "MAKE")) and k != "VENV"}
    return subprocess.run(["make", *(["-n"] if dry else []), *args], cwd=REPO, env={**clean, **env},
                          capture_output=True, text=True, timeout=60, check=False)


def _commands(done: subprocess.CompletedProcess) -> str:
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


@pytest.mark.parametrize("target", ["lab", "test", "gpu-check"])
def test_an_active_conda_environment_is_used_as_it_is(target):
    out = _commands(_make(target, CONDA_PREFIX=CONDA, CONDA_DEFAULT_ENV="dask-gpu-course"))
    assert f"using the active conda environment {CONDA}" in out
    assert ".venv" not in out.replace("to use .venv", ""), out
    assert "-m venv" not in out and "requirements.txt" not in out, "no CPU environment inside the GPU one"
    assert f"{CONDA}/bin/python -m pip install --quiet --no-deps -e ." in out
    kernel = '-m ipykernel install --sys-prefix --name python3 --display-name "Python 3 (course)"'
    assert f"{CONDA}/bin/python {kernel}" in out
    expected = {"lab": f"{CONDA}/bin/jupyter lab", "test": f"COURSE_SCALE=tiny {CONDA}/bin/python -m pytest",
                "gpu-check": f"{CONDA}/bin/python -m tools.gpu_check"}[target]
    assert expected in out


@pytest.mark.parametrize("conda", [{}, {"CONDA_PREFIX": "/opt/conda", "CONDA_DEFAULT_ENV": "base"}],
                         ids=["no conda", "conda base"])
def test_otherwise_the_pinned_venv(conda, tmp_path):
    venv = tmp_path / ".venv"  # not created yet, so make shows how it would be built
    out = _commands(_make("test", VENV=str(venv), **conda))
    assert "using the active conda environment" not in out
    assert f"-m venv {venv}" in out and f"{venv}/bin/python -m pip install --quiet -r requirements.txt" in out
    assert f"COURSE_SCALE=tiny {venv}/bin/python -m pytest" in out


def test_constraints_are_never_frozen_from_a_conda_environment():
    done = _make("constraints", dry=False, CONDA_PREFIX="/nonexistent-env", CONDA_DEFAULT_ENV="gpu")
    assert done.returncode == 2
    assert "error: constraints.txt pins the CPU .venv" in done.stderr
