"""Processes that never outlive their owner, and what dead ones left behind.

The one home of "die with the parent process": the generator's worker processes and the course's
``dask scheduler``/``dask worker`` commands (``utils.processes``) both ask the kernel to kill them
when the process that started them dies, so a killed notebook kernel leaves no orphans. What a
``kill -9`` still leaves (a dead run's folders, multiprocessing's named semaphores) is recognised
here by its owner's pid or by nobody using it.
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys
import threading
import time
from collections.abc import Collection
from contextlib import suppress
from pathlib import Path

PR_SET_PDEATHSIG = 1  # prctl(2): the signal this process gets when its parent thread dies


def die_with_parent(parent_pid: int) -> None:
    """Ask the kernel (Linux) to SIGKILL this process when its parent dies, even by ``kill -9``;
    exit at once if the parent ``parent_pid`` is already gone (it died before the request took
    effect). Elsewhere only the check runs: callers that need more watch the parent themselves."""
    if sys.platform.startswith("linux"):
        with suppress(OSError, AttributeError):
            ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != parent_pid:
        os._exit(1)


def exit_when_orphaned(parent_pid: int, name: str) -> None:
    """On every platform: a daemon thread that ends this process once ``parent_pid`` is no longer
    its parent (the kernel request above covers Linux at once; this covers the rest)."""

    def watch() -> None:
        while os.getppid() == parent_pid:
            time.sleep(0.2)
        os._exit(1)

    threading.Thread(target=watch, name=name, daemon=True).start()


def launcher_command(argv: list[str]) -> list[str]:
    """``argv`` run through a tiny Python launcher that first calls ``die_with_parent`` with this
    process's pid, then becomes ``argv[0]`` (``os.execv``): the command dies with its starter."""
    code = (
        "import os, sys\n"
        "from utils.base.lifetime import die_with_parent\n"
        "die_with_parent(int(sys.argv[1]))\n"
        "os.execv(sys.argv[2], sys.argv[2:])\n"
    )
    return [sys.executable, "-c", code, str(os.getpid()), *argv]


def process_alive(pid: int, since: float | None = None) -> bool:
    """Whether ``pid`` runs and, given ``since`` (a time the owner's folder existed at), started
    no later than that: a recycled pid of a younger process does not keep a dead run's folder."""
    import psutil  # the one third-party package here, loaded by the one function that needs it

    try:
        process = psutil.Process(pid)
        if process.status() == psutil.STATUS_ZOMBIE:
            return False
        return since is None or process.create_time() <= since + 1
    except psutil.NoSuchProcess:
        return False
    except psutil.AccessDenied:
        return True


SHARED_MEMORY = Path("/dev/shm")
ORPHAN_SEMAPHORE_AGE_S = 600  # a semaphore in use is mapped at once; this only adds a margin


def _mapped_shared_memory() -> set[int] | None:
    """Inodes of the /dev/shm files mapped by this user's processes, from /proc/PID/maps; None where
    the map of a Python process cannot be read (then nothing can be called unused). Inodes, not
    names: glibc's ``sem_open`` maps a temporary file and then links it under the semaphore's name,
    so the map shows the temporary name, "(deleted)"."""
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
            continue  # the process ended meanwhile
        except OSError:  # e.g. a container's init: fine unless it is a Python process (sem.mp-* are Python's)
            with suppress(OSError):
                if b"python" not in (proc / "cmdline").read_bytes().lower():
                    continue
            return None
        for line in text.splitlines():
            fields = line.split(maxsplit=5)  # address perms offset device inode pathname
            if len(fields) == 6 and fields[5].startswith(f"{SHARED_MEMORY}/"):
                mapped.add(int(fields[4]))
    return mapped


# multiprocessing's named semaphores: ``sem.mp-<random>``; a process that imported joblib names them
# ``sem.loky-<pid>-<random>`` (loky renames them all, distributed's nanny queues included).
SEMAPHORE_PATTERNS = ("sem.mp-*", "sem.loky-*")


def semaphore_names() -> set[str]:
    """The names of multiprocessing's semaphores in /dev/shm now (none where it does not exist)."""
    if not SHARED_MEMORY.is_dir():
        return set()
    return {path.name for pattern in SEMAPHORE_PATTERNS for path in SHARED_MEMORY.glob(pattern)}


def remove_orphaned_semaphores(min_age_s: float = ORPHAN_SEMAPHORE_AGE_S,
                               among: Collection[str] | None = None) -> list[str]:
    """Delete the named semaphores (``/dev/shm/sem.mp-*``, ``sem.loky-*``) that multiprocessing left
    when a process was SIGKILLed with its resource tracker (a notebook kernel stopped by nbval, a
    killed run): this user's, older than ``min_age_s``, among the names ``among`` if given, and mapped
    by no process (an open POSIX semaphore is always mapped by the processes using it, so an unmapped
    one can never be waited on again). Returns the names removed; does nothing where /dev/shm or /proc
    cannot be read (not Linux)."""
    if not SHARED_MEMORY.is_dir() or not Path("/proc/self/maps").exists():
        return []
    now, uid = time.time(), os.getuid()
    candidates = []
    for name in semaphore_names() if among is None else semaphore_names() & set(among):
        path = SHARED_MEMORY / name
        with suppress(OSError):
            info = path.stat()
            if info.st_uid == uid and now - info.st_mtime >= min_age_s:
                candidates.append(path)
    if not candidates:
        return []
    mapped = _mapped_shared_memory()
    if mapped is None:
        return []
    removed = []
    for path in candidates:
        with suppress(FileNotFoundError):
            if path.stat().st_ino not in mapped:
                path.unlink()
                removed.append(path.name)
    return removed

