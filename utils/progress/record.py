"""What ``utils.checks.grade`` calls after each check: one record of the outcome, never an error.

Recording is a side effect the learner does not ask for, so it must never change what a check
prints or raises: every problem (an unwritable folder, a notebook that cannot be read) ends in
one warning line, and the check goes on exactly as without it.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from utils.notebook_grammar import exercise_key
from utils.progress.catalogue import course_exercises, find_exercise, notebook_hint
from utils.progress.store import DATA_CHANGED, OUTCOMES, RECORD_VERSION, WRONG, append, warn

REASON_LIMIT = 300  # characters of a wrong answer's (or changed data's) one-line reason kept in the record


def one_line(text: str, limit: int = REASON_LIMIT) -> str:
    """The first line of ``text``, cut to ``limit`` characters."""
    first = (str(text).strip().splitlines() or [""])[0]
    return first if len(first) <= limit else first[: limit - 1] + "…"


def build_record(names: Sequence[str], check_name: str, outcome: str, reason: str | None = None,
                 session: str | None = None) -> dict:
    """The record of one graded exercise: when, which notebook, section and exercise, and the outcome."""
    if outcome not in OUTCOMES:
        raise ValueError(f"outcome must be one of {OUTCOMES}, got {outcome!r}")
    key = exercise_key(names, check_name)
    hint = notebook_hint(session)
    exercise = find_exercise(key, hint, course_exercises())
    return {
        "v": RECORD_VERSION,
        "time": datetime.now().astimezone().isoformat(timespec="seconds"),
        "notebook": exercise.notebook if exercise else hint,
        "section": exercise.section if exercise else None,
        "exercise": exercise.title if exercise else None,
        "key": key,
        "outcome": outcome,
        "reason": one_line(reason) if outcome in (WRONG, DATA_CHANGED) and reason else None,
    }


def record_outcome(names: Sequence[str], check_name: str, outcome: str, reason: str | None = None,
                   session: str | None = None) -> None:
    """Append the outcome of one ``grade`` call to the progress file; never raises."""
    try:
        append(build_record(names, check_name, outcome, reason, session))
    except Exception as error:  # a side effect must not break the learner's check
        warn(f"exercise progress not recorded: {type(error).__name__}: {one_line(str(error), 120)}")
