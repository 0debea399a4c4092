"""A pytest plugin for every pass of the suite (registered in the root conftest.py): at the end of a
run, remove the named semaphores that the run's killed notebook kernels left in /dev/shm.

nbval stops each notebook's kernel by SIGKILL to its process group, which takes the kernel's
multiprocessing resource tracker with it, so the semaphores of the kernel's nannies stay behind
(12 a run from notebook 08) until the machine restarts. Only semaphores that appeared during the run
and that no process maps go (``utils.base.lifetime.remove_orphaned_semaphores``).
"""

from __future__ import annotations

import pytest

from utils.base.lifetime import remove_orphaned_semaphores, semaphore_names

SEMAPHORES_AT_START = pytest.StashKey[set[str]]()


def pytest_sessionstart(session: pytest.Session) -> None:
    session.config.stash[SEMAPHORES_AT_START] = semaphore_names()


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    before = session.config.stash.get(SEMAPHORES_AT_START, None)
    if before is not None:
        remove_orphaned_semaphores(min_age_s=0, among=semaphore_names() - before)
