"""Every notebook follows the course template and opens unmodified in the course kernel; the
checker itself catches violations."""

from __future__ import annotations

import json
import re
from pathlib import Path

import nbformat
import pytest

from tools.notebook_format import (
    CLOSING_CELL,
    KERNELSPEC,
    MAX_OPEN_WORDS,
    check_notebook,
    fix_notebook,
    open_words,
)
from utils.base.paths import REPO_ROOT
from utils.notebook_grammar import TEMPLATE_NAME, course_notebooks, exercises, solution_markdown
from utils.review import load_bank

ROOT = REPO_ROOT
NOTEBOOKS = course_notebooks()
TEMPLATE = ROOT / "notebooks" / TEMPLATE_NAME
SETUP = "import utils\nclient = utils.start_client()"
CORE = ("00_environment_check", "01_cluster_setup", "02_loading_transactions", "03_groupby_sum", "04_profiling")


def test_the_core_sequence_exists():
    names = {p.stem for p in NOTEBOOKS}
    missing = [n for n in CORE if n not in names]
    assert not missing, f"missing notebooks: {missing}"


@pytest.mark.parametrize("path", [*NOTEBOOKS, TEMPLATE], ids=[p.name for p in [*NOTEBOOKS, TEMPLATE]])
def test_notebook_follows_the_template(path):
    assert check_notebook(path) == []


def test_notebooks_store_the_kernel_make_lab_installs():
    """JupyterLab rewrites a notebook whose kernelspec differs from the running kernel's, and asks
    the learner to save on close; the Makefile's display name must be the stored one."""
    display_name = re.search(r'--display-name\s+"([^"]+)"', (REPO_ROOT / "Makefile").read_text()).group(1)
    name = re.search(r"ipykernel install .*--name\s+(\S+)", (REPO_ROOT / "Makefile").read_text()).group(1)
    assert (KERNELSPEC["display_name"], KERNELSPEC["name"]) == (display_name, name)
    for path in [*NOTEBOOKS, TEMPLATE]:
        metadata = json.loads(path.read_text())["metadata"]
        assert metadata["kernelspec"] == KERNELSPEC, path.name
        assert metadata["language_info"]["version"], f"{path.name}: Lab would add the Python version on open"


def _conforming() -> nbformat.NotebookNode:
    md, code = nbformat.v4.new_markdown_cell, nbformat.v4.new_code_cell
    nb = nbformat.v4.new_notebook(cells=[
        md("# 07 · Example\n\n**Overview.** ...\n**Prerequisites.** ...\n**Time.** ...\n**Exam domains.** ..."),
        code("import utils\nfrom utils import checks\n\nclient = utils.start_client()"),
        md("## 1 · A section\n\n### Exercise 1 · Do it\nDefine `answer`."),
        code("# Your code here\n# define answer"),
        md(solution_markdown("answer = 1")),
        code('checks.grade("answer", checks.check_scalar, 1, "answer")'),
        md("## Summary\n- a"),
        md("## Review questions\n1. b"),
        md("## What's next\nc"),
        md(CLOSING_CELL),
    ])
    nb.metadata = {"kernelspec": dict(KERNELSPEC)}
    return nb


def _write(nb, tmp_path) -> Path:
    path = tmp_path / "07_example.ipynb"
    nbformat.write(nb, path)
    fix_notebook(path)
    return path


def test_checker_accepts_a_conforming_notebook(tmp_path):
    path = _write(_conforming(), tmp_path)
    assert check_notebook(path) == []
    found = exercises(nbformat.read(path, as_version=4))
    assert [(e.title, e.answer_cell, e.check_cell, e.solution.strip()) for e in found] == [
        ("Exercise 1 · Do it", 3, 5, "answer = 1")
    ]


def _hide(cell):
    cell.metadata["jupyter"] = {"source_hidden": True}


@pytest.mark.parametrize(
    ("break_it", "problem"),
    [
        (lambda nb: nb.cells.pop(0), "first cell must be markdown"),
        (lambda nb: setattr(nb.cells[3], "source", "# Your code here\nanswer = 1"), "must hold only comments"),
        (lambda nb: setattr(nb.cells[4], "source", "The answer is 1."), "<details><summary>Solution block"),
        (lambda nb: nb.cells.insert(4, nbformat.v4.new_code_cell("# Solution\nanswer = 1")), "<details>"),
        (lambda nb: _hide(nb.cells[1]), "hidden code cell"),
        (lambda nb: nb.cells.pop(5), "checks.grade("),
        (lambda nb: setattr(nb.cells[5], "source", "# NBVAL_CHECK_OUTPUT\n" + nb.cells[5].source), "depends on"),
        (lambda nb: nb.cells.pop(7), "missing a '## Review questions' heading"),
        (lambda nb: nb.cells.pop(), "the last cell must be the markdown '## When you are done'"),
        (lambda nb: setattr(nb.cells[2], "source", "## 1. A section"), "is not '## N · Title'"),
        (lambda nb: setattr(nb.cells[2], "source", "### Exercise — do it"), "is not '### Exercise N · Title'"),
        (lambda nb: nb.cells[1].outputs.append(nbformat.v4.new_output("stream", text="x")), "stored outputs"),
        (lambda nb: setattr(nb.cells[1], "source", "import sys\nsys.path.insert(0, '..')\n" + SETUP), "sys.path"),
        (lambda nb: setattr(nb.cells[1], "source", "import cudf\n" + SETUP), "imports cudf at top level"),
        (lambda nb: setattr(nb.cells[1], "source", SETUP + "\nclient.course_backend"), "private attribute"),
        (lambda nb: setattr(nb.cells[1], "source", SETUP + "\nx.explain()"), "graphviz"),
    ],
)
def test_checker_reports_violations(tmp_path, break_it, problem):
    nb = _conforming()
    break_it(nb)
    path = tmp_path / "07_example.ipynb"
    nbformat.write(nb, path)
    problems = check_notebook(path)
    assert any(problem in p for p in problems), problems


def test_checker_reports_a_foreign_kernelspec(tmp_path):
    path = _write(_conforming(), tmp_path)
    nb = nbformat.read(path, as_version=4)
    nb.metadata["kernelspec"]["display_name"] = "Python 3 (ipykernel)"
    nb.metadata["language_info"]["pygments_lexer"] = "python3"
    nbformat.write(nb, path)
    problems = check_notebook(path)
    assert any("is not the course kernel" in p for p in problems), problems
    assert any("language_info" in p for p in problems), problems


def _with_open_words(words: int) -> nbformat.NotebookNode:
    """The conforming notebook with one more markdown cell that brings its open reading to `words`,
    plus a collapsed 'Going further' block whose words do not count."""
    nb = _conforming()
    missing = words - open_words(nb.cells)
    going_further = "<details><summary>Going further: more</summary>\n\n" + "detail " * 500 + "\n\n</details>"
    nb.cells.insert(6, nbformat.v4.new_markdown_cell(" ".join(["word"] * missing) + "\n\n" + going_further))
    assert open_words(nb.cells) == words
    return nb


@pytest.mark.parametrize("extra", [0, 1])
def test_checker_limits_the_open_reading_of_a_lesson(tmp_path, extra):
    """Reading fits the teaching minutes: at most MAX_OPEN_WORDS words outside collapsed blocks."""
    path = _write(_with_open_words(MAX_OPEN_WORDS + extra), tmp_path)
    problems = check_notebook(path)
    reported = [p for p in problems if "outside collapsed <details> blocks" in p]
    if extra:
        assert reported == [f"07_example.ipynb: {MAX_OPEN_WORDS + 1} words of markdown outside collapsed "
                            f"<details> blocks (at most {MAX_OPEN_WORDS}: move reference detail into a "
                            "'Going further' block)"], problems
    else:
        assert problems == []


def test_fix_strips_unchecked_outputs_only_and_adds_ids(tmp_path):
    nb = _conforming()
    nb.cells[1].outputs = [nbformat.v4.new_output("stream", text="noise")]
    nb.cells.insert(2, nbformat.v4.new_code_cell("# NBVAL_CHECK_OUTPUT\nprint('✓ answer')"))
    nb.cells[2].outputs = [nbformat.v4.new_output("stream", text="✓ answer")]
    path = tmp_path / "07_example.ipynb"
    nbformat.write(nb, path)
    fix_notebook(path)
    fixed = nbformat.read(path, as_version=4)
    assert fixed.cells[1].outputs == []
    assert fixed.cells[2].outputs[0]["text"] == "✓ answer"
    assert (fixed.nbformat, fixed.nbformat_minor) == (4, 5) and all("id" in cell for cell in fixed.cells)
    assert check_notebook(path) == []


# ---------------------------------------------------------------- the review notebook's own rules

REVIEW = REPO_ROOT / "notebooks" / "09_review.ipynb"
FIRST_ANSWER = 'quiz.answer("scheduler-role", "")'


def _code_index(nb, text: str) -> int:
    return next(i for i, cell in enumerate(nb.cells) if cell.cell_type == "code" and cell.source.endswith(text))


def _review_problems(tmp_path, break_it=None, name="09_review.ipynb") -> list[str]:
    nb = nbformat.read(REVIEW, as_version=4)
    if break_it is not None:
        break_it(nb)
    path = tmp_path / name
    nbformat.write(nb, path)
    return check_notebook(path)


def test_the_review_is_exempt_from_the_lesson_rules_only(tmp_path):
    """As a review it conforms; the same cells as a lesson lack a cluster, exercises and a footer."""
    assert _review_problems(tmp_path) == []
    as_lesson = _review_problems(tmp_path, name="09_quiz.ipynb")
    for problem in ("start_client", "no exercise", "## Summary", "When you are done"):
        assert any(problem in p for p in as_lesson), (problem, as_lesson)


def _swap(nb, i: int, j: int) -> None:
    nb.cells[i], nb.cells[j] = nb.cells[j], nb.cells[i]


def _set_heading(nb, old: str, new: str) -> None:
    cell = next(c for c in nb.cells if c.cell_type == "markdown" and c.source.startswith(old))
    cell.source = cell.source.replace(old, new, 1)


@pytest.mark.parametrize(
    ("break_it", "problem"),
    [
        (lambda nb: setattr(nb.cells[_code_index(nb, FIRST_ANSWER)], "source", FIRST_ANSWER.replace('""', '"b"')),
         "ships the answer \"b\""),
        (lambda nb: nb.cells.pop(_code_index(nb, FIRST_ANSWER)),
         "'scheduler-role' is asked 1 and answered 0 times"),
        (lambda nb: nb.cells.insert(3, nbformat.v4.new_code_cell('quiz.ask("scheduler-role")')),
         "'scheduler-role' is asked 2"),
        (lambda nb: _swap(nb, _code_index(nb, FIRST_ANSWER), _code_index(nb, FIRST_ANSWER) - 1),
         "must follow its quiz.ask cell"),
        (lambda nb: nb.cells.insert(4, nbformat.v4.new_code_cell('quiz.ask("no-such-question")')),
         "'no-such-question' is not in the bank"),
        (lambda nb: nb.cells.pop(_code_index(nb, "quiz.score()")), "no quiz.score() cell"),
        (lambda nb: nb.cells.insert(4, nbformat.v4.new_code_cell("print(quiz)")), "a review code cell is"),
        (lambda nb: _set_heading(nb, "## 1 · Cluster set-up and roles", "## 1 · Clusters"),
         "not its topic's heading '1 · Cluster set-up and roles'"),
        (lambda nb: _set_heading(nb, "## What's next", "## Summary"), "is not '## N · Topic'"),
        (lambda nb: nb.cells[_code_index(nb, FIRST_ANSWER)].outputs.append(
            nbformat.v4.new_output("stream", text="✓ right (b)")), "stored outputs"),
        (lambda nb: nb.metadata["kernelspec"].update(display_name="Python 3 (ipykernel)"), "is not the course kernel"),
        (lambda nb: setattr(nb.cells[0], "source", nb.cells[0].source.replace("**Time.**", "Time:")),
         "header cell lacks '**Time.**'"),
        (lambda nb: setattr(nb.cells[0], "source", re.sub(r"\d+ questions", "2 questions", nb.cells[0].source)),
         f"the header says 2 questions; the bank has {len(load_bank().questions)}"),
    ],
)
def test_the_review_checker_reports_violations(tmp_path, break_it, problem):
    problems = _review_problems(tmp_path, break_it)
    assert any(problem in p for p in problems), problems


@pytest.mark.parametrize(
    ("break_it", "problem"),
    [
        (lambda nb: nb.cells.pop(), "the last cell must be the markdown '## When you are done'"),
        (lambda nb: nb.cells.append(nbformat.v4.new_code_cell("utils.shutdown(client)")),
         "the last cell must be the markdown '## When you are done'"),
        (lambda nb: nb.cells.insert(-1, nbformat.v4.new_code_cell("utils.shutdown(client)")),
         "no code cell after What's next"),
        (lambda nb: setattr(nb.cells[-1], "source", "## When you are done\n\nBye."), "utils.shutdown(client)"),
    ],
)
def test_run_all_must_leave_the_cluster_running(tmp_path, break_it, problem):
    """Run All ends with the cluster up (dashboard link, sidebar, exercises); closing it is the
    learner's step, shown in the last (markdown) cell."""
    nb = _conforming()
    path = _write(nb, tmp_path)
    assert check_notebook(path) == []
    broken = nbformat.read(path, as_version=4)
    break_it(broken)
    nbformat.write(broken, path)
    assert any(problem in p for p in check_notebook(path)), check_notebook(path)


def test_every_notebook_stores_the_same_language_info_as_a_kernel_reports():
    """JupyterLab writes the kernel's language_info into the notebook when the kernel starts, and
    leaves the notebook unmodified only when it is equal (the browser test checks that in Lab)."""
    from ipykernel.ipkernel import IPythonKernel

    stored = {json.dumps(json.loads(path.read_text())["metadata"]["language_info"], sort_keys=True)
              for path in [*NOTEBOOKS, TEMPLATE]}
    assert len(stored) == 1, "one Python version across the course's notebooks"
    reported = dict(IPythonKernel.language_info)
    info = json.loads(stored.pop())
    assert set(info) == set(reported)
    assert {k: v for k, v in info.items() if k != "version"} == {k: v for k, v in reported.items() if k != "version"}
