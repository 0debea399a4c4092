"""The learner's own view: each exercise's latest outcome, and a table per notebook.

An exercise counts as right or wrong by its latest graded attempt. A later "not attempted" (the
check run again after the answer cell was emptied, e.g. in a fresh copy of the notebook) does not
erase an attempt: the table says what the learner has done, not what the last Run All saw. "Data
changed" is an attempt the check could not judge (the dataset's files changed since generation):
never shown or counted as wrong, it says to regenerate the data and re-run the notebook from the
top. Its column shows only where some exercise has it, so the usual table keeps its columns.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from utils.notebook_grammar import NUMBERED_SECTION, Exercise
from utils.progress.catalogue import course_exercises, find_exercise
from utils.progress.store import DATA_CHANGED, NOT_ATTEMPTED, OUTCOMES, RIGHT, WRONG, progress_file, read_records

UNKNOWN_NOTEBOOK = "unknown notebook"
EXERCISE_COLUMNS = ["notebook", "exercise", "outcome", "time", "revisit", "reason"]
NOTEBOOK_COLUMNS = ["exercises", RIGHT, WRONG, NOT_ATTEMPTED, "revisit"]  # and DATA_CHANGED where any has it
RERUN = "re-run the notebook from the top"


def latest_outcomes(records: Sequence[dict[str, Any]], exercises: Sequence[Exercise]) -> pd.DataFrame:
    """One row per course exercise (course order), then one per recorded exercise the course's
    notebooks do not have (a renamed check, a notebook of the learner's own)."""
    known = {(exercise.notebook, exercise.key): exercise for exercise in exercises}
    latest: dict[tuple[str, str], dict[str, Any]] = {}
    for record in records:
        exercise = known.get((record.get("notebook"), record["key"])) or find_exercise(
            record["key"], record.get("notebook"), exercises)
        target = (exercise.notebook, exercise.key) if exercise else (record.get("notebook") or UNKNOWN_NOTEBOOK,
                                                                      record["key"])
        if record["outcome"] != NOT_ATTEMPTED or target not in latest:
            latest[target] = record
    rows = []
    for target in [*known, *(t for t in latest if t not in known)]:
        exercise, record = known.get(target), latest.get(target, {})
        outcome = record.get("outcome", NOT_ATTEMPTED)
        rows.append({
            "notebook": target[0],
            "exercise": exercise.title if exercise else record.get("exercise") or target[1],
            "outcome": outcome,
            "time": record.get("time") or "",
            "revisit": (exercise.revisit if exercise else target[0]) if outcome == WRONG else "",
            "reason": (record.get("reason") or "") if outcome in (WRONG, DATA_CHANGED) else "",
            "section": exercise.revisit_section if exercise else "",
        })
    return pd.DataFrame(rows, columns=[*EXERCISE_COLUMNS, "section"])


def per_notebook(table: pd.DataFrame) -> pd.DataFrame:
    """Exercises right, wrong and not attempted per notebook (and with changed data, where any), and
    the sections to revisit."""
    rows = []
    for notebook, group in table.groupby("notebook", sort=False):
        counts = group["outcome"].value_counts()
        rows.append({
            "notebook": notebook,
            "exercises": len(group),
            **{outcome: int(counts.get(outcome, 0)) for outcome in OUTCOMES},
            "revisit": ", ".join(dict.fromkeys(r for r in group["revisit"] if r)),
        })
    columns = list(NOTEBOOK_COLUMNS)
    if (table["outcome"] == DATA_CHANGED).any():
        columns.insert(columns.index(NOT_ATTEMPTED) + 1, DATA_CHANGED)
    return pd.DataFrame(rows, columns=["notebook", *columns]).set_index("notebook")


def summary_text(table: pd.DataFrame, path: Path) -> str:
    """The totals, for each wrong exercise where to read again and why it was wrong, and for each
    exercise whose data changed what the check said (how to regenerate the data)."""
    counts = table["outcome"].value_counts()
    if not (table["time"] != "").any():
        return f"no exercise graded yet (nothing recorded in {path}): run an exercise's check cell, then this again"
    changed = table[table["outcome"] == DATA_CHANGED]
    also = f", {len(changed)} {DATA_CHANGED}" if len(changed) else ""
    lines = [f"{counts.get(RIGHT, 0)} of {len(table)} exercises right, {counts.get(WRONG, 0)} wrong, "
             f"{counts.get(NOT_ATTEMPTED, 0)} not attempted{also} (recorded in {path})"]
    wrong = table[table["outcome"] == WRONG]
    if len(wrong):
        lines.append("Revisit:")
        lines += [f"  {row.notebook}, {row.exercise}: {row.reason or 'wrong'}"
                  + (f" → revisit section {row.section}" if row.section else "") for row in wrong.itertuples()]
    if len(changed):
        lines.append(f"Data changed under these checks, not your answer: regenerate the data as the line says, "
                     f"then {RERUN}:")
        lines += [f"  {row.notebook}, {row.exercise}: {row.reason or 'the data files were changed after generation'}"
                  for row in changed.itertuples()]
    return "\n".join(lines)


def notebooks_text(notebooks: pd.DataFrame) -> str:
    """``per_notebook``'s table as plain aligned text: a header of what each column counts, one line
    per notebook, numbers right-aligned, nothing for an empty cell (no index name row, no ``NaN``)."""
    header = ["notebook", *notebooks.columns]
    rows = [[str(name), *("" if pd.isna(value) else str(value) for value in row)]
            for name, row in zip(notebooks.index, notebooks.itertuples(index=False), strict=True)]
    widths = [max(len(line[i]) for line in [header, *rows]) for i in range(len(header))]
    numeric = {i for i, column in enumerate(header) if column in ("exercises", *OUTCOMES)}

    def line(cells: list[str]) -> str:
        shown = [cell.rjust(width) if i in numeric else cell.ljust(width)
                 for i, (cell, width) in enumerate(zip(cells, widths, strict=True))]
        return "  ".join(shown).rstrip()

    return "\n".join(line(cells) for cells in [header, *rows])


def next_step(table: pd.DataFrame, exercises: Sequence[Exercise]) -> str:
    """One line naming the first course exercise not yet right, in course order, and where it sits
    (``notebook 03 §2`` under a numbered section), or the congratulation when every one is right."""
    outcomes = dict(zip(zip(table["notebook"], table["exercise"], strict=True), table["outcome"], strict=True))
    for exercise in exercises:
        if outcomes.get((exercise.notebook, exercise.title)) != RIGHT:
            number = exercise.notebook.split("_", 1)[0]
            section = NUMBERED_SECTION.match(exercise.section)
            where = f"notebook {number} §{section.group(1)}" if section else f"notebook {number}"
            changed = outcomes.get((exercise.notebook, exercise.title)) == DATA_CHANGED
            return f"next: {where} {exercise.title}" + (f" ({RERUN}: the data changed)" if changed else "")
    return (f"all {len(exercises)} exercises right: well done — the review notebook's questions go over "
            "the whole course")


def progress_text(path: Path | None = None, notebooks: Path | None = None) -> str:
    """``make progress``: the totals and what to revisit, the table per notebook, then the next step."""
    path = progress_file() if path is None else path
    exercises = course_exercises(notebooks)
    table = latest_outcomes(read_records(path), exercises)
    parts = [summary_text(table, path), notebooks_text(per_notebook(table))]
    return "\n\n".join([*parts, next_step(table, exercises)] if exercises else parts)


def progress_table(path: Path | None = None, notebooks: Path | None = None) -> pd.DataFrame:
    """Each exercise's latest outcome from the progress file (default: this learner's)."""
    path = progress_file() if path is None else path
    return latest_outcomes(read_records(path), course_exercises(notebooks))


def show(path: Path | None = None, notebooks: Path | None = None) -> pd.DataFrame:
    """Print the totals and what to revisit; return the table per notebook (``make progress``,
    and notebook 09 beside the review's own score)."""
    path = progress_file() if path is None else path
    table = progress_table(path, notebooks)
    print(summary_text(table, path))
    return per_notebook(table)
