"""Every notebook follows the course template; the checker itself catches violations."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest

from utils.notebook_format import check_notebook, fix_notebook

NOTEBOOKS = sorted((Path(__file__).resolve().parents[1] / "notebooks").glob("[0-9][0-9]_*.ipynb"))
SETUP = "import utils\nclient = utils.start_client()"
CORE = ("00_environment_check", "01_cluster_setup", "02_loading_transactions", "03_groupby_sum", "04_profiling")


def test_the_core_sequence_exists():
    names = {p.stem for p in NOTEBOOKS}
    missing = [n for n in CORE if n not in names]
    assert not missing, f"missing notebooks: {missing}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_follows_the_template(path):
    assert check_notebook(path) == []


def _conforming() -> nbformat.NotebookNode:
    md, code = nbformat.v4.new_markdown_cell, nbformat.v4.new_code_cell
    solution = code("# Solution\nanswer = 1")
    solution.metadata["jupyter"] = {"source_hidden": True}
    return nbformat.v4.new_notebook(cells=[
        md("# 07 · Example\n\n**Overview** ...\n**Prerequisites** ...\n**Time** ...\n**Exam domains** ..."),
        code("import utils\nclient = utils.start_client()"),
        md("### Exercise\nDo it."),
        code("# Your code here\n"),
        solution,
        code("utils.checks.check_scalar(answer, 1, 'answer')"),
        md("## Summary\n- a"),
        md("## Review questions\n1. b"),
        md("## What's next\nc"),
        code("utils.shutdown(client)"),
    ])


def test_checker_accepts_a_conforming_notebook(tmp_path):
    path = tmp_path / "07_example.ipynb"
    nbformat.write(_conforming(), path)
    assert check_notebook(path) == []


@pytest.mark.parametrize(
    ("break_it", "problem"),
    [
        (lambda nb: nb.cells.pop(0), "first cell must be markdown"),
        (lambda nb: nb.cells[4].metadata.pop("jupyter"), "followed by a hidden solution"),
        (lambda nb: nb.cells.pop(5), "self-check cell"),
        (lambda nb: nb.cells.pop(7), "missing a '## Review questions' heading"),
        (lambda nb: nb.cells.pop(), "last code cell must close the cluster"),
        (lambda nb: nb.cells[1].outputs.append(nbformat.v4.new_output("stream", text="x")), "stored outputs"),
        (lambda nb: setattr(nb.cells[1], "source", "import sys\nsys.path.insert(0, '..')\n" + SETUP), "sys.path"),
        (lambda nb: setattr(nb.cells[1], "source", "import cudf\n" + SETUP), "imports cudf at top level"),
    ],
)
def test_checker_reports_violations(tmp_path, break_it, problem):
    nb = _conforming()
    break_it(nb)
    path = tmp_path / "07_example.ipynb"
    nbformat.write(nb, path)
    assert any(problem in p for p in check_notebook(path)), check_notebook(path)


def test_fix_strips_unchecked_outputs_only(tmp_path):
    nb = _conforming()
    nb.cells[1].outputs = [nbformat.v4.new_output("stream", text="noise")]
    nb.cells[5].source = "# NBVAL_CHECK_OUTPUT\n" + nb.cells[5].source
    nb.cells[5].outputs = [nbformat.v4.new_output("stream", text="✓ answer")]
    path = tmp_path / "07_example.ipynb"
    nbformat.write(nb, path)
    fix_notebook(path)
    fixed = nbformat.read(path, as_version=4)
    assert fixed.cells[1].outputs == []
    assert fixed.cells[5].outputs[0]["text"] == "✓ answer"
    assert check_notebook(path) == []
