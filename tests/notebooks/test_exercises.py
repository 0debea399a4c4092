"""Every exercise's check grades the learner's own answer: with nothing written it says "not
attempted yet" (and Run All goes on), with a wrong answer it fails saying what differs, and with
the notebook's own solution it passes.

The grading runs inside the CPU notebook pass, in each notebook's one nbval run
(``tests/support/exercise_grading.py``, ``--course-exercises``): no notebook is executed a second
time for its exercises. This file holds what can be checked without a kernel: every exercise has
a wrong answer listed, and no wrong answer is listed for an exercise that is gone.
"""

from __future__ import annotations

import nbformat
from wrong_answers import WRONG_ANSWERS  # tests/notebooks/ is on sys.path: pytest's rootdir-less test folder

from utils.base.paths import REPO_ROOT
from utils.notebook_grammar import course_notebooks, exercises

NOTEBOOK_DIR = REPO_ROOT / "notebooks"
NOTEBOOKS = course_notebooks(NOTEBOOK_DIR)


def test_every_notebook_with_exercises_has_wrong_answers_listed() -> None:
    """One wrong answer per exercise, found by its key: none missing, none for an exercise that is gone."""
    found = {p.stem: sorted(e.key for e in exercises(nbformat.read(p, as_version=4)) if e.complete) for p in NOTEBOOKS}
    assert {stem: sorted(answers) for stem, answers in WRONG_ANSWERS.items()} == {s: k for s, k in found.items() if k}
