"""Where the course's folders are: the repository, its notebooks, the data and a learner's scratch.

A relative ``$COURSE_DATA_DIR`` or ``$COURSE_SCRATCH_DIR`` is taken relative to the repository root
(the folder with ``pyproject.toml``), not to the current directory: notebooks run in ``notebooks/``
and the commands in the root, and both must find the same folders.
"""

from __future__ import annotations

import os
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS_DIR = REPO_ROOT / "notebooks"
WORKSPACE_DIR = REPO_ROOT / "workspace"  # the learner's copies of the notebooks (tools.workspace), git-ignored
DATA_DIR_ENV_VAR = "COURSE_DATA_DIR"
SCRATCH_ENV_VAR = "COURSE_SCRATCH_DIR"  # a learner's own scratch folder when the data folder is shared
SCRATCH_NAME = "scratch"


class CoursePathError(ValueError):
    """``$COURSE_DATA_DIR`` or ``$COURSE_SCRATCH_DIR`` names a folder that this machine cannot resolve."""


# For each variable: an example of a full path, and the folder used while it is unset (its error's fix).
_FOLDER_HINTS = {DATA_DIR_ENV_VAR: ("/home/you/course-data", "data/ in the course folder"),
                 SCRATCH_ENV_VAR: ("/home/you/course-scratch", "scratch/ in the data folder")}


def from_repo_root(value: str, variable: str | None = None) -> Path:
    """``value`` (a folder named by the environment variable ``variable``) as a path: ``~`` expanded,
    and a relative one taken relative to the repository root. A ``~user`` this machine does not
    know is a one-line ``CoursePathError`` naming the variable (pathlib's own error is a bare
    ``RuntimeError: Could not determine home directory.``)."""
    try:
        path = Path(value).expanduser()
    except RuntimeError:
        home = Path(value).parts[0]
        why = "$HOME is not set and this user has no home folder" if home == "~" else "no such user"
        example, default = _FOLDER_HINTS.get(variable or "", ("/home/you/folder", ""))
        named = f"{variable}={value!r}" if variable else repr(value)
        unset = f", or unset {variable} to use {default}" if variable and default else ""
        raise CoursePathError(
            f"{named} starts with {home!r}, a home folder this machine does not know ({why}); "
            f"write the folder out in full (e.g. {example}) or relative to the course folder{unset}"
        ) from None
    return path if path.is_absolute() else Path(os.path.normpath(REPO_ROOT / path))


def default_data_dir() -> Path:
    """``$COURSE_DATA_DIR``, else the repository's ``data/`` folder (git-ignored). A value that
    cannot be resolved is a ``CoursePathError`` (a ``ValueError``)."""
    env = os.environ.get(DATA_DIR_ENV_VAR)
    return from_repo_root(env, DATA_DIR_ENV_VAR) if env else REPO_ROOT / "data"


def scratch_root(data_dir: Path | None = None) -> Path:
    """A learner's own writable folder: ``$COURSE_SCRATCH_DIR``, else ``<data dir>/scratch`` (``data_dir``,
    default ``default_data_dir()``). The one rule for the notebooks' throw-away copies and the exercise
    progress (``utils.progress``), so a room that shares one read-only data folder moves both with one
    variable. Creates nothing; a value that cannot be resolved is a ``CoursePathError``."""
    env = os.environ.get(SCRATCH_ENV_VAR, "").strip()
    if env:
        return from_repo_root(env, SCRATCH_ENV_VAR)
    return (default_data_dir() if data_dir is None else data_dir) / SCRATCH_NAME
