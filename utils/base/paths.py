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


def from_repo_root(value: str) -> Path:
    """``value`` (a folder named by an environment variable) as a path: ``~`` expanded, and a
    relative one taken relative to the repository root."""
    path = Path(value).expanduser()
    return path if path.is_absolute() else Path(os.path.normpath(REPO_ROOT / path))


def default_data_dir() -> Path:
    """``$COURSE_DATA_DIR``, else the repository's ``data/`` folder (git-ignored)."""
    env = os.environ.get(DATA_DIR_ENV_VAR)
    return from_repo_root(env) if env else REPO_ROOT / "data"


def scratch_root(data_dir: Path | None = None) -> Path:
    """A learner's own writable folder: ``$COURSE_SCRATCH_DIR``, else ``<data dir>/scratch`` (``data_dir``,
    default ``default_data_dir()``). The one rule for the notebooks' throw-away copies and the exercise
    progress (``utils.progress``), so a room that shares one read-only data folder moves both with one
    variable. Creates nothing."""
    env = os.environ.get(SCRATCH_ENV_VAR, "").strip()
    if env:
        return from_repo_root(env)
    return (default_data_dir() if data_dir is None else data_dir) / SCRATCH_NAME
