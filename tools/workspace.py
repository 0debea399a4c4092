"""The learner's workspace: the copies of the course's notebooks that JupyterLab opens.

A learner's answers, and JupyterLab's autosave, must never change the course's own files: then
``git pull`` never conflicts with them, and the tests and the site use the course as committed.
So ``make lab`` opens ``workspace/`` (ignored by git), seeded from ``notebooks/``, and this brings
new course versions in without losing answers:

- a notebook missing from the workspace is copied in;
- a notebook the learner has not edited (its cells' text equal to the course version it was copied
  from) is replaced by the new course version;
- a notebook the learner edited, whose course version changed, becomes the new course version with
  the learner's answers (the ``# Your code here`` cells) carried into the same exercises; the
  learner's whole earlier copy is kept in ``workspace/.previous/`` first.

Running a notebook is not an edit: outputs and metadata are ignored when comparing. The course
version each copy started from is kept in ``workspace/.course/`` (hidden in JupyterLab).

    python -m tools.workspace             # make lab runs it; after a git pull: make workspace
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import nbformat

from utils.base.paths import NOTEBOOKS_DIR, WORKSPACE_DIR
from utils.notebook_grammar import cell_source, course_notebooks, exercises, learners_answer_cell

BASE_FOLDER = ".course"  # the course version each workspace copy started from
PREVIOUS_FOLDER = ".previous"  # a learner's earlier copies, kept before an update merges answers


@dataclass(frozen=True)
class Change:
    """What happened to one notebook of the workspace, in words a learner reads."""

    notebook: str
    action: str  # "added", "updated", "merged", "kept" or "unchanged"
    detail: str = ""

    def line(self) -> str:
        return f"{self.action:9} {self.notebook}" + (f": {self.detail}" if self.detail else "")


def cell_texts(nb: Any) -> list[tuple[str, str]]:
    """What a learner edits in a notebook: each cell's type and text (not outputs, not metadata)."""
    return [(cell.get("cell_type", ""), cell_source(cell)) for cell in nb.get("cells", [])]


def _write_atomically(nb: Any, target: Path) -> None:
    """Write a notebook so that a crash leaves either the old file or the new one, never half of one."""
    target.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            nbformat.write(nb, stream)
        os.replace(temporary, target)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def _copy_atomically(source: Path, target: Path) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    temporary = target.with_name(f".{target.name}.tmp")
    shutil.copyfile(source, temporary)
    os.replace(temporary, target)


def carry_answers(course: Any, mine: Any) -> tuple[Any, list[str]]:
    """The ``course`` notebook with ``mine``'s answer cells in the same exercises (matched by the
    exercise's check, then by its title), and the titles of the exercises whose answers were carried.
    An answer the learner left as the course wrote it is not carried (the course's stands)."""
    merged = nbformat.from_dict(course)
    theirs = {exercise.key: exercise for exercise in exercises(mine)}
    theirs_by_title = {exercise.title: exercise for exercise in exercises(mine)}
    carried = []
    for exercise in exercises(merged):
        old = theirs.get(exercise.key) or theirs_by_title.get(exercise.title)
        old_answer = None if old is None else learners_answer_cell(mine["cells"], old.check_cell)
        if exercise.answer_cell is None or old_answer is None:
            continue
        answer = cell_source(mine["cells"][old_answer])
        if answer != cell_source(merged.cells[exercise.answer_cell]):
            merged.cells[exercise.answer_cell]["source"] = answer
            carried.append(exercise.title)
    return merged, carried


def sync_notebook(course_path: Path, workspace: Path, stamp: str) -> Change:
    """Bring one course notebook into ``workspace`` (the rules are in the module's docstring)."""
    name = course_path.name
    mine_path, base_path = workspace / name, workspace / BASE_FOLDER / name
    if not mine_path.exists():
        _copy_atomically(course_path, mine_path)
        _copy_atomically(course_path, base_path)
        return Change(name, "added")
    course = nbformat.read(course_path, as_version=4)
    mine = nbformat.read(mine_path, as_version=4)
    base = nbformat.read(base_path, as_version=4) if base_path.exists() else None
    if cell_texts(mine) == cell_texts(course):
        _copy_atomically(course_path, base_path)
        return Change(name, "unchanged")
    if base is not None and cell_texts(course) == cell_texts(base):
        return Change(name, "kept", "your edits; the course has not changed it")
    if base is not None and cell_texts(mine) == cell_texts(base):
        _copy_atomically(course_path, mine_path)
        _copy_atomically(course_path, base_path)
        return Change(name, "updated", "new course version (you had not edited it)")
    previous = workspace / PREVIOUS_FOLDER / f"{mine_path.stem}.{stamp}.ipynb"
    _copy_atomically(mine_path, previous)
    merged, carried = carry_answers(course, mine)
    _write_atomically(merged, mine_path)
    _copy_atomically(course_path, base_path)
    answers = f"your answers to {', '.join(carried)} kept" if carried else "no answers to carry"
    earlier = previous.relative_to(workspace.parent)
    return Change(name, "merged", f"new course version, {answers}; your earlier copy: {earlier}")


def sync(course: Path = NOTEBOOKS_DIR, workspace: Path = WORKSPACE_DIR) -> list[Change]:
    """Seed or update ``workspace`` from the course's notebooks in ``course``; one ``Change`` each,
    plus a "kept" one for each workspace notebook the course no longer has (never deleted)."""
    stamp = time.strftime("%Y%m%d-%H%M%S")
    notebooks = course_notebooks(course)
    if not notebooks:
        raise FileNotFoundError(f"no course notebooks in {course}: run this from a clone of the course")
    changes = [sync_notebook(path, workspace, stamp) for path in notebooks]
    names = {path.name for path in notebooks}
    changes += [Change(path.name, "kept", "no longer in the course; yours to keep or delete")
                for path in course_notebooks(workspace) if path.name not in names]
    return changes


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.workspace", description=__doc__.split("\n\n")[0])
    parser.add_argument("--quiet", action="store_true", help="print only what changed")
    args = parser.parse_args(argv)
    try:
        changes = sync()
    except (OSError, ValueError) as error:
        print(f"error: workspace not updated: {error}", file=sys.stderr)
        return 2
    for change in changes:
        if not (args.quiet and change.action == "unchanged"):
            print(change.line())
    counts = {action: sum(c.action == action for c in changes) for action in ("added", "updated", "merged")}
    print(f"workspace: {WORKSPACE_DIR} ({len(changes)} notebooks; "
          + ", ".join(f"{n} {action}" for action, n in counts.items()) + ")")
    return 0


if __name__ == "__main__":
    sys.exit(main())
