"""A pytest plugin over nbval: every exercise's check is graded inside the notebook's own nbval run.

With ``--course-exercises`` (``tools.test_suite`` passes it to the CPU notebook pass), an item is
added right after each exercise's check cell. nbval has just run the answer cell as shipped
(comments only) and the check, in the notebook's one kernel, as Run All does; the added item then
reads that check's output ("not attempted yet"), runs a wrong answer and the check again (it must
fail with ``CheckFailed`` saying what differs), then the notebook's own solution (from its
``<details>`` block) and the check (it must pass with ✓). nbval goes on with the next cell in the
same kernel. So one execution of a notebook proves its checked outputs and grades every exercise
three ways: no second run of the notebook for the exercises.

The wrong answers are in ``tests/notebooks/wrong_answers.py``, keyed by exercise; the exercises are
found by ``utils.notebook_grammar.exercises``.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

import pytest
from nbval.plugin import IPyNbCell, IPyNbFile

OPTION = "--course-exercises"
CHECK_PASSED = "✓"
WRONG_ANSWERS_FILE = "tests/notebooks/wrong_answers.py"
NOT_ATTEMPTED = "not attempted yet"  # utils.checks.grading.NOT_ATTEMPTED (not imported: it loads Dask)


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(OPTION, action="store_true",
                     help="grade every exercise of the notebooks nbval runs: as shipped, wrong, solved")


@dataclass(frozen=True)
class Outcome:
    """What a cell run in the notebook's kernel printed, and the exception it raised, if any."""

    text: str
    error: tuple[str, str] | None  # (ename, evalue)


def _run(notebook: IPyNbFile, source: str) -> Outcome:
    """Run ``source`` in the notebook's kernel; what it printed, and the exception of its execute
    reply. The reply is read, not the iopub ``error`` message nbval reads: the course's checks show a
    ``CheckFailed`` as one ``✗`` line (``utils.checks.grading.install_notebook_display``), so the
    kernel publishes no ``error`` message for it, but the reply still says ``status: error``."""
    kernel = notebook.kernel
    timeout = notebook.config.option.nbval_cell_timeout
    msg_id = kernel.execute_cell_input(source, allow_stdin=False)
    while True:
        reply = kernel.get_message(stream="shell", timeout=timeout)
        if reply["parent_header"].get("msg_id") == msg_id:
            break
    text = []
    while True:
        msg = kernel.get_message(stream="iopub", timeout=timeout)
        if msg["parent_header"].get("msg_id") != msg_id:
            continue
        kind, content = msg["msg_type"], msg["content"]
        if kind == "status" and content["execution_state"] == "idle":
            break
        if kind == "stream":
            text.append(content["text"])
        elif kind in ("display_data", "execute_result"):
            text.append(content["data"].get("text/plain", ""))
    error = None
    if reply["content"]["status"] == "error":
        error = (reply["content"].get("ename", ""), reply["content"].get("evalue", ""))
    return Outcome("".join(text), error)


def _shipped_check(check_item: IPyNbCell) -> str:
    """What the check cell printed in nbval's run of it (nbval keeps the outputs of the cell it ran)."""
    parts = [output.get("text", "") if output.get("output_type") == "stream"
             else output.get("data", {}).get("text/plain", "") for output in check_item.test_outputs or []]
    return "".join(parts)


class ExerciseGrading(pytest.Item):
    """The wrong answer and the solution of one exercise, graded by its check cell, in nbval's kernel."""

    def __init__(self, *, check_item: IPyNbCell, heading: str, check_source: str, wrong_code: str,
                 wrong_message: str, solution: str, **kwargs) -> None:
        super().__init__(**kwargs)
        self.check_item = check_item
        self.heading = heading
        self.check_source = check_source
        self.wrong_code = wrong_code
        self.wrong_message = wrong_message
        self.solution = solution

    def runtest(self) -> None:
        notebook = self.parent
        name = f"{notebook.path.name} {self.heading}"
        assert self.wrong_code is not None, f"{name}: no wrong answer listed for it in {WRONG_ANSWERS_FILE}"
        shipped = _shipped_check(self.check_item)
        assert NOT_ATTEMPTED in shipped, f"{name}: no '{NOT_ATTEMPTED}' message: {shipped!r}"

        _run(notebook, self.wrong_code)
        wrong = _run(notebook, self.check_source)
        assert wrong.error is not None, f"{name}: the check passed a wrong answer: {wrong.text!r}"
        ename, evalue = wrong.error
        assert ename == "CheckFailed", f"{name}: {ename}: {evalue}"
        assert self.wrong_message in evalue, f"{name}: {evalue!r} lacks {self.wrong_message!r}"

        ran = _run(notebook, self.solution)
        assert ran.error is None, f"{name}: the solution raised {ran.error[0]}: {ran.error[1]}"
        solved = _run(notebook, self.check_source)
        assert solved.error is None and CHECK_PASSED in solved.text, (
            f"{name}: the solution did not pass: {solved.error or solved.text!r}")

    def reportinfo(self):
        return self.path, None, f"{self.path.name}::{self.name}"


def grading_items(notebook: IPyNbFile, cells: list[IPyNbCell]) -> dict[int, ExerciseGrading]:
    """The grading item to run after each check cell of ``notebook``, keyed by the check's nbval item."""
    from tests.notebooks.wrong_answers import WRONG_ANSWERS
    from utils.notebook_grammar import exercises, is_course_notebook

    if not is_course_notebook(notebook.path.name):  # the template's example exercise is not graded
        return {}
    nb = notebook.nb
    listed = WRONG_ANSWERS.get(notebook.path.stem, {})
    code_index = {id(cell): i for i, cell in enumerate(c for c in nb.cells if c.cell_type == "code")}
    by_cell_num = {item.cell_num: item for item in cells}
    added = {}
    for exercise in exercises(nb, notebook.path.stem):
        check_item = by_cell_num.get(code_index[id(nb.cells[exercise.check_cell])])
        if check_item is None or not exercise.complete:  # deselected (-k); the format checker reports the rest
            continue
        wrong_code, message = listed.get(exercise.key, (None, ""))
        added[id(check_item)] = ExerciseGrading.from_parent(
            notebook, name=f"{check_item.name}: {exercise.title}, graded empty, wrong and solved",
            check_item=check_item, heading=exercise.title, check_source=nb.cells[exercise.check_cell].source,
            wrong_code=wrong_code, wrong_message=message, solution=exercise.solution)
    return added


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if not config.getoption(OPTION):
        return
    cells_by_notebook: dict[int, list[IPyNbCell]] = defaultdict(list)
    notebooks = {}
    for item in items:
        if isinstance(item, IPyNbCell):
            cells_by_notebook[id(item.parent)].append(item)
            notebooks[id(item.parent)] = item.parent
    added: dict[int, ExerciseGrading] = {}
    for key, cells in cells_by_notebook.items():
        added.update(grading_items(notebooks[key], cells))
    items[:] = [new for item in items for new in ([item, added[id(item)]] if id(item) in added else [item])]
