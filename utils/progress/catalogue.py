"""The course's exercises, read from the notebooks themselves, and which one a ``grade`` call is.

A check knows only what ``grade`` sees: the learner's variable names and the check function. That
pair (``exercise_key``) names each exercise of the course once, and the notebooks' check cells spell
it, so the notebook, the exercise heading and its section are found by reading the ``.ipynb`` files:
this works in JupyterLab (whose kernels also know their notebook, ``JPY_SESSION_NAME``), in
nbclient and nbval runs (which do not), and for a learner's renamed copy of a notebook. How an
exercise is read from a notebook (``Exercise``, ``exercise_key``) is ``utils.notebook_grammar``'s.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path

from utils.notebook_grammar import NOTEBOOKS_DIR, Exercise, is_course_notebook, notebook_exercises

SESSION_ENV_VAR = "JPY_SESSION_NAME"  # set by jupyter_server for a notebook's kernel: the notebook's path


@lru_cache(maxsize=4)
def _catalogue(folder: Path, stamp: tuple[tuple[str, int], ...]) -> tuple[Exercise, ...]:
    exercises: list[Exercise] = []
    for name, _ in stamp:
        try:
            exercises += notebook_exercises(folder / name)
        except (OSError, ValueError, AttributeError):
            continue  # a notebook being saved, or not one: its exercises are recorded by their key
    return tuple(exercises)


def course_exercises(folder: Path | None = None) -> tuple[Exercise, ...]:
    """Every exercise of the course's notebooks, in course order (read again when a notebook changes)."""
    folder = NOTEBOOKS_DIR if folder is None else folder
    try:
        stamp = tuple(sorted((p.name, p.stat().st_mtime_ns) for p in folder.iterdir() if is_course_notebook(p.name)))
    except OSError:
        return ()
    return _catalogue(folder, stamp)


def notebook_hint(session: str | None = None) -> str | None:
    """The notebook a kernel runs, where it knows: IPython's ``__session__`` or ``$JPY_SESSION_NAME``
    (both set for kernels that JupyterLab starts; nbclient and nbval set neither)."""
    path = session or os.environ.get(SESSION_ENV_VAR, "")
    return Path(path).stem if path.strip() else None


def find_exercise(key: str, hint: str | None, exercises: Sequence[Exercise]) -> Exercise | None:
    """The exercise a ``grade`` call is: the notebook the kernel names, else the one course
    exercise with this key (a renamed copy of a notebook still counts for its original)."""
    matches = [exercise for exercise in exercises if exercise.key == key]
    named = [exercise for exercise in matches if exercise.notebook == hint]
    if named:
        return named[0]
    return matches[0] if len(matches) == 1 else None
