"""A test run leaves nothing behind in $TMPDIR (the datagen memory test once left 28 MB a run in
``mkdtemp`` folders): the test runs it in a child pytest with $TMPDIR pointed at a fresh folder.
Named semaphores in /dev/shm (a notebook kernel that nbval kills takes its resource tracker with it;
notebook 08's left 12 ``sem.loky-*`` a run) are checked by the suite's own plugin at the end of
every pass, for every notebook (tests/support/semaphores.py)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from utils.base.paths import REPO_ROOT

MEMORY_TEST = ("tests/generator/test_datagen_reliability.py"
               "::test_memory_constants_are_a_safe_upper_bound_of_the_real_peak")


def run_pytest(temp: Path, *args: str, timeout: float) -> subprocess.CompletedProcess:
    """``pytest args`` in a child with ``TMPDIR=temp`` (the repository's settings, tests/conftest.py
    loaded); its outcome, or a failure when it runs longer than ``timeout`` seconds."""
    env = {**os.environ, "TMPDIR": str(temp), "COURSE_SCALE": "tiny", "COURSE_BACKEND": "cpu"}
    for name in ("DASK_SCHEDULER_ADDRESS", "COURSE_PROGRESS_FILE", "PYTEST_ADDOPTS"):
        env.pop(name, None)
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/conftest.py", *args]
    try:
        return subprocess.run(command, cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        pytest.fail(f"pytest {' '.join(args)} ran longer than {timeout:g} s")


def leftovers(temp: Path) -> list[str]:
    """What is in ``temp`` after a run, but for pytest's own empty base folder (``pytest-of-<user>``,
    where it keeps the folders of failed runs)."""
    def pytests_empty_base(path: Path) -> bool:
        return path.is_dir() and path.relative_to(temp).parts[0].startswith("pytest-of-") and not any(path.iterdir())

    return sorted(p.relative_to(temp).as_posix() for p in temp.rglob("*") if not pytests_empty_base(p))


def test_the_datagen_memory_test_leaves_nothing_in_tmpdir(tmp_path):
    temp = tmp_path / "tmpdir"
    temp.mkdir()
    done = run_pytest(temp, MEMORY_TEST, timeout=300)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert "1 passed" in done.stdout
    assert leftovers(temp) == []
