"""The test suite leaves nothing behind when it passes: pytest's temporary folders of a passing
run (a tiny dataset, cluster folders) are removed, those of a failing run kept for a look."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from utils.base.paths import REPO_ROOT

REPO = REPO_ROOT


def _run(tmp_path: Path, body: str) -> Path:
    """Run a one-test session with the repository's pytest settings; return its temporary root."""
    test = f"def test_one(tmp_path):\n    (tmp_path / 'data').write_text('x')\n{body}\n"
    (tmp_path / "test_one.py").write_text(test)
    root = tmp_path / "temp-root"
    root.mkdir()
    env = {**os.environ, "PYTEST_DEBUG_TEMPROOT": str(root)}
    subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-c", str(REPO / "pyproject.toml"),
                    "--rootdir", str(tmp_path), str(tmp_path / "test_one.py")],
                   cwd=tmp_path, env=env, capture_output=True, check=False,
                   timeout=120)
    return root


def test_a_passing_run_removes_its_temporary_folders(tmp_path):
    root = _run(tmp_path, "    assert True")
    leftovers = list(root.rglob("data"))
    assert not leftovers, leftovers


def test_a_failing_run_keeps_them_for_a_look(tmp_path):
    root = _run(tmp_path, "    assert False")
    assert list(root.rglob("data")), "the failing test's folder should stay"


def test_no_test_makes_folders_that_pytest_does_not_remove():
    """``tempfile.mkdtemp()`` folders outlive the run (28 MB a run from one test once); ``tmp_path`` does not."""
    offenders = [f"{path.relative_to(REPO)}:{number}" for path in sorted((REPO / "tests").rglob("*.py"))
                 if path.name != "test_suite_cleanup.py"
                 for number, line in enumerate(path.read_text().splitlines(), 1) if "mkdtemp(" in line]
    assert offenders == []
