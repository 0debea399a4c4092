"""A pytest plugin for every pass of the suite (registered in the root conftest.py): at the end of a
run, remove the named semaphores that the run's killed notebook kernels left in /dev/shm, then fail
the run if one named after a process of this run is still there.

nbval stops each notebook's kernel by SIGKILL to its process group, which takes the kernel's
multiprocessing resource tracker with it, so the semaphores of the kernel's nannies stay behind
(12 a run from notebook 08) until the machine restarts. Only semaphores that appeared during the run
and that no process maps go (``utils.base.lifetime.remove_orphaned_semaphores``).

The check after the removal does not trust it: joblib names its semaphores ``sem.loky-<pid>-...``,
so every one named after a process this run started (sampled after each test, notebook cells
included) whose process has ended must be gone. A separate run of notebook 08 used to prove this for
that notebook alone; the check now covers every notebook of every pass.
"""

from __future__ import annotations

import re
from contextlib import suppress

import psutil
import pytest

from utils.base.lifetime import remove_orphaned_semaphores, semaphore_names

SEMAPHORES_AT_START = pytest.StashKey[set[str]]()
LOKY_SEMAPHORE = re.compile(r"sem\.loky-(\d+)-[\w-]+")
_started: set[int] = set()  # every process this run started, sampled after each test


def pytest_sessionstart(session: pytest.Session) -> None:
    session.config.stash[SEMAPHORES_AT_START] = semaphore_names()


def pytest_runtest_teardown(item: pytest.Item) -> None:
    with suppress(psutil.Error):
        _started.update(child.pid for child in psutil.Process().children(recursive=True))


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    before = session.config.stash.get(SEMAPHORES_AT_START, None)
    if before is None:
        return
    remove_orphaned_semaphores(min_age_s=0, among=semaphore_names() - before)
    left = sorted(name for name in semaphore_names() - before
                  if (match := LOKY_SEMAPHORE.fullmatch(name)) and int(match[1]) in _started
                  and not psutil.pid_exists(int(match[1])))
    if left:
        session.config.get_terminal_writer().line(
            f"error: {len(left)} semaphores of this run's ended processes stay in /dev/shm: {', '.join(left[:3])} ...",
            red=True)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
