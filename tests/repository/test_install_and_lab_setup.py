"""What a newcomer sees while installing and when Lab opens: one line per install step with its
time (and the step's own output only when it fails), no Jupyter news toast, trusted notebooks."""

from __future__ import annotations

import json
import os
import shutil
import subprocess

import nbformat
import pytest
from nbformat.sign import NotebookNotary

from tools.lab_setup import align_python_version, install_overrides, trust_notebooks
from utils.base.paths import NOTEBOOKS_DIR, REPO_ROOT

STEP = REPO_ROOT / "tools" / "install_step.sh"


def _step(*command: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(STEP), "doing it", *command], capture_output=True, text=True, timeout=30, check=False)


def test_a_step_prints_one_line_with_its_time():
    done = _step("sh", "-c", "echo chatter; echo more chatter >&2")
    assert done.returncode == 0
    assert done.stdout.startswith("doing it ... done in ") and done.stdout.endswith(" s\n")
    assert done.stdout.count("\n") == 1 and "chatter" not in done.stdout + done.stderr


def test_a_failing_step_shows_its_output_and_keeps_its_exit_status():
    done = _step("sh", "-c", "echo the reason >&2; exit 3")
    assert done.returncode == 3
    assert "doing it ... failed (exit 3)" in done.stdout and "the reason" in done.stderr


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
@pytest.mark.parametrize("conda", [{}, {"CONDA_PREFIX": "/opt/conda/envs/gpu", "CONDA_DEFAULT_ENV": "gpu"}],
                         ids=["venv", "conda"])
def test_every_install_command_is_a_timed_step(conda, tmp_path):
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("CONDA_", "MAKE")) and k != "VENV"}
    done = subprocess.run(["make", "-n", "venv", f"VENV={tmp_path / '.venv'}"], cwd=REPO_ROOT,
                          env={**clean, **conda}, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    installs = [line for line in done.stdout.splitlines() if "pip install" in line or "ipykernel install" in line]
    assert installs and all("tools/install_step.sh" in line for line in installs), installs
    assert all('PYTHONWARNINGS="ignore:Editable installation"' in line for line in installs)


def test_the_lab_settings_switch_the_news_toast_off(tmp_path):
    target = install_overrides(tmp_path)
    assert target == tmp_path / "share" / "jupyter" / "lab" / "settings" / "overrides.json"
    notification = json.loads(target.read_text())["@jupyterlab/apputils-extension:notification"]
    assert notification == {"fetchNews": "false", "checkForUpdates": False}


def test_the_course_notebooks_are_trusted_after_setup(tmp_path):
    notary = NotebookNotary(data_dir=str(tmp_path), db_file=str(tmp_path / "signatures.db"))
    first = sorted(NOTEBOOKS_DIR.glob("*.ipynb"))[0]
    assert not notary.check_signature(nbformat.read(first, as_version=4))
    assert trust_notebooks([first], notary) == 1
    assert notary.check_signature(nbformat.read(first, as_version=4))


def test_the_stored_python_version_follows_the_kernel(tmp_path):
    copy = tmp_path / "00.ipynb"
    shutil.copy(sorted(NOTEBOOKS_DIR.glob("*.ipynb"))[0], copy)
    assert align_python_version([copy], "3.99.1") == ["00.ipynb"]
    assert nbformat.read(copy, as_version=4).metadata["language_info"]["version"] == "3.99.1"
    before = copy.read_bytes()
    assert align_python_version([copy], "3.99.1") == []  # equal: the file is not touched
    assert copy.read_bytes() == before
