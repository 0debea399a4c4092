"""A test run leaves nothing behind in $TMPDIR (the datagen memory test once left 28 MB a run in
``mkdtemp`` folders): the test runs it in a child pytest with $TMPDIR pointed at a fresh folder.
Named semaphores in /dev/shm (a notebook kernel that nbval kills takes its resource tracker with it;
notebook 08's left 12 ``sem.loky-*`` a run) are checked by the suite's own plugin at the end of
every pass, for every notebook (tests/support/semaphores.py)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from contextlib import suppress
from pathlib import Path

import psutil
import pytest

from utils.base.paths import REPO_ROOT

MEMORY_TEST = ("tests/generator/test_datagen_reliability.py"
               "::test_memory_constants_are_a_safe_upper_bound_of_the_real_peak")


def run_pytest(temp: Path, *args: str, timeout: float) -> tuple[subprocess.CompletedProcess, set[int]]:
    """``pytest args`` in a child with ``TMPDIR=temp`` (the repository's settings, tests/conftest.py
    loaded); returns its outcome and the pids of every process it started (sampled while it ran), so
    that semaphores named after a pid can be traced to this run and not to another one on the machine."""
    env = {**os.environ, "TMPDIR": str(temp), "COURSE_SCALE": "tiny", "COURSE_BACKEND": "cpu"}
    for name in ("DASK_SCHEDULER_ADDRESS", "COURSE_PROGRESS_FILE", "PYTEST_ADDOPTS"):
        env.pop(name, None)
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/conftest.py", *args]
    out, err = temp.parent / "out.log", temp.parent / "err.log"
    with open(out, "w") as stdout, open(err, "w") as stderr:
        child = subprocess.Popen(command, cwd=REPO_ROOT, env=env, stdout=stdout, stderr=stderr)
    pids, deadline = {child.pid}, time.monotonic() + timeout
    try:
        while child.poll() is None:
            if time.monotonic() > deadline:
                pytest.fail(f"pytest {' '.join(args)} ran longer than {timeout:g} s")
            with suppress(psutil.Error):
                pids |= {p.pid for p in psutil.Process(child.pid).children(recursive=True)}
            time.sleep(0.1)
    finally:
        if child.poll() is None:
            child.kill()
        child.wait()
    done = subprocess.CompletedProcess(command, child.returncode, out.read_text(), err.read_text())
    return done, pids


def leftovers(temp: Path) -> list[str]:
    """What is in ``temp`` after a run, but for pytest's own empty base folder (``pytest-of-<user>``,
    where it keeps the folders of failed runs)."""
    def pytests_empty_base(path: Path) -> bool:
        return path.is_dir() and path.relative_to(temp).parts[0].startswith("pytest-of-") and not any(path.iterdir())

    return sorted(p.relative_to(temp).as_posix() for p in temp.rglob("*") if not pytests_empty_base(p))


def test_the_datagen_memory_test_leaves_nothing_in_tmpdir(tmp_path):
    temp = tmp_path / "tmpdir"
    temp.mkdir()
    done, _ = run_pytest(temp, MEMORY_TEST, timeout=300)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert "1 passed" in done.stdout
    assert leftovers(temp) == []
