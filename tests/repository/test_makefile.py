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
    expected = {"lab": f"{CONDA}/bin/jupyter lab", "test": f"{CONDA}/bin/python -m tools.test_suite",
                "gpu-check": f"{CONDA}/bin/python -m tools.gpu.check"}[target]
    assert expected in out


@pytest.mark.parametrize("conda", [{}, {"CONDA_PREFIX": "/opt/conda", "CONDA_DEFAULT_ENV": "base"}],
                         ids=["no conda", "conda base"])
def test_otherwise_the_pinned_venv(conda, tmp_path):
    venv = tmp_path / ".venv"  # not created yet, so make shows how it would be built
    out = _commands(_make("test", VENV=str(venv), **conda))
    assert "using the active conda environment" not in out
    assert f"-m venv {venv}" in out and f"{venv}/bin/python -m pip install --quiet -r requirements.txt" in out
    assert f"{venv}/bin/python -m tools.test_suite" in out


def test_constraints_are_never_frozen_from_a_conda_environment():
    done = _make("constraints", dry=False, CONDA_PREFIX="/nonexistent-env", CONDA_DEFAULT_ENV="gpu")
    assert done.returncode == 2
    assert "error: constraints.txt pins the CPU .venv" in done.stderr


@pytest.mark.parametrize("target", ["test", "test-gpu-sim", "gpu-check", "test-external", "lint"])
def test_every_script_and_module_a_target_runs_exists(target):
    """After a move (the simulation to gpu_sim/, the GPU tools to tools/gpu/), what the targets name
    is still there: each ``python path.py`` a file, each ``python -m module`` a module of this repository
    or an installed one, each folder ruff lints a folder."""
    out = _commands(_make(target, VENV=str(REPO / ".venv")))
    missing = []
    for line in out.splitlines():
        words = line.split()
        for i, word in enumerate(words):
            if word.endswith((".py", ".sh")) and not word.startswith("-") and not (REPO / word).is_file():
                missing.append(word)
            if word == "-m" and i + 1 < len(words) and words[i + 1].split(".")[0] in ("tools", "utils", "benchmarks"):
                module = REPO.joinpath(*words[i + 1].split("."))
                if not (module.with_suffix(".py").is_file() or (module / "__init__.py").is_file()):
                    missing.append(words[i + 1])
        if "ruff check" in line:
            missing += [word for word in line.split("ruff check", 1)[1].split() if not (REPO / word).exists()]
    assert missing == [], f"make {target} names what does not exist"


def test_the_gpu_mode_passes_and_the_lint_cover_the_simulation():
    """``make test`` (``tools.test_suite``) and ``make test-gpu-sim`` run the simulation's pass in its
    three modes, with a script that exists; ``make lint`` lints it."""
    from tools.test_suite import passes

    suite = [" ".join(spec.command[1:]) for spec in passes() if "notebook_pass.py" in " ".join(spec.command)]
    alone = _commands(_make("test-gpu-sim", VENV=str(REPO / ".venv")))
    alone_runs = [line.split("python ", 1)[1] for line in alone.splitlines() if "notebook_pass.py" in line]
    modes = [f"gpu_sim/notebook_pass.py {mode}" for mode in ("--gpus 1", "--gpus 2", "--shared-gpu")]
    assert sorted(suite) == sorted(modes) and alone_runs == modes
    assert (REPO / "gpu_sim" / "notebook_pass.py").is_file()
    assert "gpu_sim" in _commands(_make("lint", VENV=str(REPO / ".venv"))).split("ruff check", 1)[1].split()
