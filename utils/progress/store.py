"""The learner's progress file: one JSON line per graded exercise, appended, never rewritten.

It lives in the learner's scratch folder (``utils.base.paths.scratch_root``: ``$COURSE_SCRATCH_DIR``,
else ``<data dir>/scratch``, which git ignores), so a room that shares one read-only data folder
keeps it with each learner's own files; ``$COURSE_PROGRESS_FILE`` names another file (the test
suite's notebook runs use a temporary one, so they never add to a learner's record). Nothing here
sends anything anywhere.

Two kernels may grade at the same moment: each record is one ``write`` of one line to a file
opened for appending, under an exclusive ``flock``, so no record is lost or interleaved; a record
starts a new line when the file does not end with one (a full disk or a hand edit left a partial
line) and counts as recorded only when it reads back. Readers take a shared lock and skip, with one
warning line, a line they cannot parse. Nothing here raises into a notebook: a file that cannot be
written or read is one line on stderr.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import sys
from pathlib import Path
from typing import Any

from utils.base.paths import SCRATCH_ENV_VAR, CoursePathError, scratch_root

try:
    import fcntl
except ImportError:  # Windows has no fcntl: there each record is one unlocked append of one line
    fcntl = None  # type: ignore[assignment]

PROGRESS_ENV_VAR = "COURSE_PROGRESS_FILE"
PROGRESS_NAME = "progress.jsonl"
RIGHT, WRONG, NOT_ATTEMPTED = "right", "wrong", "not attempted"
# The check could not judge the answer: the dataset's files no longer match their manifest (edited,
# or regenerated under the notebook). The learner regenerates the data and re-runs the notebook.
DATA_CHANGED = "data changed"
OUTCOMES = (RIGHT, WRONG, NOT_ATTEMPTED, DATA_CHANGED)  # every one reads; older records use the first three
RECORD_VERSION = 1
_warned: set[str] = set()


def progress_file() -> Path:
    """``$COURSE_PROGRESS_FILE``, else ``progress.jsonl`` in the learner's scratch folder."""
    env = os.environ.get(PROGRESS_ENV_VAR, "").strip()
    if not env:
        return scratch_root() / PROGRESS_NAME
    try:
        return Path(env).expanduser()
    except RuntimeError:  # pathlib's bare "Could not determine home directory." for an unknown ~user
        raise CoursePathError(f"{PROGRESS_ENV_VAR}={env!r} starts with a home folder this machine does not know; "
                              f"write the path out in full, or unset {PROGRESS_ENV_VAR}") from None


def warn(message: str) -> None:
    """One line on stderr, once per process: a kernel that grades twenty times warns once."""
    if message not in _warned:
        _warned.add(message)
        print(f"⚠ {message}", file=sys.stderr)


def _lock(fd: int, exclusive: bool) -> None:
    if fcntl is not None:
        fcntl.flock(fd, fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)


def append(record: dict[str, Any], path: Path | None = None) -> bool:
    """Append ``record`` as one line and read it back; ``False`` (and one warning) when it cannot be
    written or read back, so a caller never counts a record that a reader will not find."""
    path = progress_file() if path is None else path
    line = (json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            _lock(fd, exclusive=True)
            _append_line(fd, line)
        finally:
            os.close(fd)  # closing releases the lock
    except OSError as error:
        warn(f"exercise progress not recorded: cannot write {path} ({error.strerror or error}); "
             f"set {SCRATCH_ENV_VAR} to a folder of your own")
        return False
    return True


def _append_line(fd: int, line: bytes) -> None:
    """Under the writers' lock: start a new line when the file does not end with one (a full disk or
    a hand edit left a partial line, which would swallow this record), write, sync and compare the
    bytes on disk; on any failure cut the file back to where it was, so it ends with a newline again."""
    start = os.fstat(fd).st_size
    if start and _read_at(fd, start - 1, 1) != b"\n":
        line = b"\n" + line
    try:
        view = memoryview(line)
        while view:
            view = view[os.write(fd, view):]
        os.fsync(fd)  # a full disk may only say so here (delayed allocation, network file systems)
        if _read_at(fd, start, len(line)) != line:
            raise OSError(errno.EIO, "the record written does not read back")
    except OSError:
        if fcntl is not None:  # only under the lock: unlocked, the bytes after ``start`` may be another writer's
            with contextlib.suppress(OSError):
                os.ftruncate(fd, start)
        raise


def _read_at(fd: int, offset: int, size: int) -> bytes:
    """Up to ``size`` bytes at ``offset`` (the file is opened for appending: writes still go to its end)."""
    os.lseek(fd, offset, os.SEEK_SET)
    chunks = []
    while size > 0 and (chunk := os.read(fd, size)):
        chunks.append(chunk)
        size -= len(chunk)
    return b"".join(chunks)


def is_record(value: Any) -> bool:
    """Whether a parsed line has what a reader relies on: an outcome and an exercise key."""
    return (isinstance(value, dict) and value.get("outcome") in OUTCOMES and isinstance(value.get("key"), str)
            and all(isinstance(value.get(field), (str, type(None))) for field in ("notebook", "time", "reason")))


def read_records(path: Path | None = None) -> list[dict[str, Any]]:
    """Every readable record, oldest first; a missing file is no records, a broken line is skipped."""
    path = progress_file() if path is None else path
    if not path.exists():
        return []
    try:
        with open(path, "rb") as handle:
            _lock(handle.fileno(), exclusive=False)
            text = handle.read().decode("utf-8", errors="replace")
    except OSError as error:
        warn(f"exercise progress not read: cannot read {path} ({error.strerror or error})")
        return []
    records, broken = [], 0
    for line in text.splitlines():
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except ValueError:
            value = None
        if is_record(value):
            records.append(value)
        else:
            broken += 1
    if broken:
        warn(f"skipped {broken} unreadable line{'s' if broken > 1 else ''} of {path} (the other records count)")
    return records


def clear(path: Path | None = None) -> int:
    """Forget every record (the file is emptied under the writers' lock); returns how many lines it had."""
    path = progress_file() if path is None else path
    if not path.exists():
        return 0
    with open(path, "r+b") as handle:
        _lock(handle.fileno(), exclusive=True)
        lines = sum(1 for line in handle.read().splitlines() if line.strip())
        handle.seek(0)
        handle.truncate()
    return lines
