"""Every exercise's check grades the learner's own answer: with nothing written it says "not
attempted yet" (and Run All goes on), with a wrong answer it fails saying what differs, and with
the notebook's own solution it passes.

Each notebook runs top to bottom in one kernel, as Run All does. At every exercise the answer
cell is executed three times before its check: as shipped (comments only), with a wrong answer
from ``WRONG_ANSWERS`` (``wrong_answers.py``, found by the exercise's key) and with the solution
taken from the notebook's ``<details>`` block (the single source of each solution), so CI also
executes every solution with its check.
"""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError
from wrong_answers import WRONG_ANSWERS  # tests/notebooks/ is on sys.path: pytest's rootdir-less test folder

from utils.datagen.manifest import REPO_ROOT
from utils.notebook_grammar import course_notebooks, exercises

NOTEBOOK_DIR = REPO_ROOT / "notebooks"
NOTEBOOKS = course_notebooks(NOTEBOOK_DIR)



def _text(cell) -> str:
    parts = []
    for output in cell.get("outputs", []):
        if output.get("output_type") == "stream":
            parts.append(output["text"])
        elif "data" in output:
            parts.append(output["data"].get("text/plain", ""))
    return "".join(parts)


def _run(client: NotebookClient, cell, index: int, source: str | None = None):
    if source is not None:
        cell = nbformat.v4.new_code_cell(source)
    client.execute_cell(cell, index)
    return cell


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_every_exercise_grades_the_learner(path: Path) -> None:
    nb = nbformat.read(path, as_version=4)
    found = [exercise for exercise in exercises(nb) if exercise.complete]
    wrong = WRONG_ANSWERS.get(path.stem, {})
    keys = sorted(exercise.key for exercise in found)
    assert keys == sorted(wrong), f"{path.name}: exercises {keys}, wrong answers listed for {sorted(wrong)}"
    by_answer_cell = {exercise.answer_cell: (exercise, wrong[exercise.key]) for exercise in found}
    client = NotebookClient(nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(NOTEBOOK_DIR)}})
    with client.setup_kernel():
        index = 0
        while index < len(nb.cells):
            cell = nb.cells[index]
            if index not in by_answer_cell:
                if cell.cell_type == "code":
                    _run(client, cell, index)
                index += 1
                continue
            exercise, (wrong_code, message) = by_answer_cell[index]
            check = nb.cells[exercise.check_cell]
            name = f"{path.name} {exercise.title}"

            _run(client, cell, index)
            untouched = _run(client, check, exercise.check_cell, check.source)
            assert "not attempted yet" in _text(untouched), f"{name}: no 'not attempted' message: {_text(untouched)!r}"

            _run(client, cell, index, wrong_code)
            with pytest.raises(CellExecutionError) as failure:
                _run(client, check, exercise.check_cell, check.source)
            assert failure.value.ename == "CheckFailed", f"{name}: {failure.value.ename}: {failure.value.evalue}"
            assert message in failure.value.evalue, f"{name}: {failure.value.evalue!r} lacks {message!r}"

            _run(client, cell, index, exercise.solution)
            solved = _run(client, check, exercise.check_cell, check.source)
            assert "✓" in _text(solved), f"{name}: the solution did not pass: {_text(solved)!r}"
            index = exercise.check_cell + 1


def test_every_notebook_with_exercises_has_wrong_answers_listed() -> None:
    """One wrong answer per exercise, found by its key: none missing, none for an exercise that is gone."""
    found = {p.stem: sorted(e.key for e in exercises(nbformat.read(p, as_version=4)) if e.complete) for p in NOTEBOOKS}
    assert {stem: sorted(answers) for stem, answers in WRONG_ANSWERS.items()} == {s: k for s, k in found.items() if k}
