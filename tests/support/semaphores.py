"""A pytest plugin for every pass of the suite (registered in the root conftest.py): at the end of a
run, remove the named semaphores that killed notebook kernels left in /dev/shm.

nbval stops each notebook's kernel by SIGKILL to its process group, which takes the kernel's
multiprocessing resource tracker with it, so the semaphores of the kernel's nannies stay behind
(12 a run from notebook 08) until the machine restarts.
"""

from __future__ import annotations

import os
import re
from contextlib import suppress
from pathlib import Path

import psutil
import pytest

SHARED_MEMORY = Path("/dev/shm")
# multiprocessing's named semaphores: ``sem.mp-<random>``, or ``sem.loky-<creator pid>-<random>`` in a
# process that imported joblib (loky renames them all, distributed's nanny queues included).
SEMAPHORE = re.compile(r"sem\.(?:mp-[\w-]+|loky-(?P<pid>\d+)-[\w-]+)")
SEMAPHORES_AT_START = pytest.StashKey[set[str]]()


def semaphore_names() -> set[str]:
    """The named semaphores in /dev/shm now (none where it does not exist)."""
    if not SHARED_MEMORY.is_dir():
        return set()
    return {path.name for path in SHARED_MEMORY.iterdir() if SEMAPHORE.fullmatch(path.name)}


def mapped_shared_memory() -> set[int] | None:
    """Inodes of the /dev/shm files that this user's processes map (a semaphore in use is always
    mapped; glibc maps it under a temporary name, so inodes, not names); None where the map of a
    Python process cannot be read, so that nothing is called unused."""
    mapped: set[int] = set()
    uid = os.getuid()
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            if proc.stat().st_uid != uid:
                continue
            text = (proc / "maps").read_text()
        except FileNotFoundError:
            continue  # it ended meanwhile
        except OSError:  # e.g. a container's init: only a Python process can hold these semaphores
            with suppress(OSError):
                if b"python" not in (proc / "cmdline").read_bytes().lower():
                    continue
            return None
        for line in text.splitlines():
            fields = line.split(maxsplit=5)  # address perms offset device inode pathname
            if len(fields) == 6 and fields[5].startswith(f"{SHARED_MEMORY}/"):
                mapped.add(int(fields[4]))
    return mapped


def pytest_sessionstart(session: pytest.Session) -> None:
    session.config.stash[SEMAPHORES_AT_START] = semaphore_names()


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """nbval stops each notebook's kernel by SIGKILL to its process group, which takes the kernel's
    multiprocessing resource tracker with it, so the semaphores of the kernel's nannies stay in
    /dev/shm (12 a run from notebook 08). Those that appeared during this run, whose creator is gone
    and that no process maps, can never be used again: they are removed."""
    before = session.config.stash.get(SEMAPHORES_AT_START, None)
    if before is None:
        return
    new = semaphore_names() - before
    if not new:
        return
    mapped = mapped_shared_memory()
    if mapped is None:
        return
    for name in sorted(new):
        owner = SEMAPHORE.fullmatch(name)["pid"]
        if owner is not None and psutil.pid_exists(int(owner)):
            with suppress(psutil.Error):
                if psutil.Process(int(owner)).status() != psutil.STATUS_ZOMBIE:
                    continue
        path = SHARED_MEMORY / name
        with suppress(FileNotFoundError):
            if path.stat().st_ino not in mapped:
                path.unlink()

