"""The notebook grammar (``utils.notebook_grammar``) is the one home of what a course notebook looks
like: it parses without Dask, it reads names and exercises as the checker and the catalogue need,
and no other module writes its patterns or its ``Exercise`` type again."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from utils.base.paths import REPO_ROOT
from utils.notebook_grammar import (
    NOTEBOOK_STEM,
    REVIEW_FILE,
    TEMPLATE_NAME,
    course_notebooks,
    exercises,
    is_course_notebook,
    solution_code,
    solution_markdown,
)

GRAMMAR = REPO_ROOT / "utils" / "notebook_grammar.py"
# Fragments of the grammar's regular expressions and globs: a string holding one is a second copy of
# a pattern that utils.notebook_grammar owns (import the pattern, or course_notebooks(), instead).
PATTERN_FRAGMENTS = {
    r"Exercise \d": "the exercise heading (EXERCISE_HEADING)",
    r"\d\d_": "the notebook file name (NOTEBOOK_FILE, NOTEBOOK_STEM, REVIEW_FILE)",
    "[0-9][0-9]_": "a glob for the course's notebooks (course_notebooks())",
    r"(\d\d|NN)": "the title (TITLE)",
    r"grade\(": "the grade call (GRADE_CALL)",
    r"<summary>\s*Solution": "the solution block (SOLUTION)",
}


def searched_files() -> list[Path]:
    """The Python files of utils/, tools/, benchmarks/ and tests/ (not the simulated RAPIDS stack,
    the grammar itself, or this test, which spells the fragments it looks for)."""
    files = [p for folder in ("utils", "tools", "benchmarks", "tests") for p in (REPO_ROOT / folder).rglob("*.py")]
    return sorted(p for p in files if "gpu_sim" not in p.parts and p not in (GRAMMAR, Path(__file__).resolve()))


def second_homes(path: Path) -> list[str]:
    """Where ``path`` defines an ``Exercise`` class or spells one of the grammar's patterns."""
    found = []
    where = path.relative_to(REPO_ROOT) if path.is_relative_to(REPO_ROOT) else path
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ClassDef) and node.name == "Exercise":
            found.append(f"{where}:{node.lineno} defines class Exercise (use utils.notebook_grammar.Exercise)")
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            found += [f"{where}:{node.lineno} spells {what}" for fragment, what in PATTERN_FRAGMENTS.items()
                      if fragment in node.value]
    return found


def test_the_grammar_has_one_home():
    assert [problem for path in searched_files() for problem in second_homes(path)] == []


@pytest.mark.parametrize("source", [
    "from dataclasses import dataclass\n\n@dataclass\nclass Exercise:\n    heading: str\n",
    'import re\nHEADING = re.compile(r"^### Exercise \\d+ · \\S.*")\n',
    'NOTEBOOKS = sorted(folder.glob("[0-9][0-9]_*.ipynb"))\n',
    'import re\nNAME = re.compile(r"^\\d\\d_[a-z0-9_]+$")\n',
])
def test_a_second_home_is_caught(tmp_path, source):
    path = tmp_path / "module.py"
    path.write_text(source)
    assert len(second_homes(path)) == 1


def test_the_grammar_imports_nothing_heavy():
    """Parse-only: the catalogue and the checker read notebooks without Dask, pandas or nbformat."""
    code = "import sys, utils.notebook_grammar\nprint(' '.join(sorted(sys.modules)))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd=REPO_ROOT)
    assert done.returncode == 0, done.stderr
    heavy = {"dask", "distributed", "pandas", "numpy", "pyarrow", "nbformat", "yaml"}
    assert heavy & {name.split(".")[0] for name in done.stdout.split()} == set()


def test_file_names():
    names = [p.name for p in course_notebooks()]
    assert names and TEMPLATE_NAME not in names and all(is_course_notebook(name) for name in names)
    assert [name for name in names if REVIEW_FILE.match(name)] == ["09_review.ipynb"]
    assert not is_course_notebook("03_groupby_sum-Copy1.ipynb") and not is_course_notebook(TEMPLATE_NAME)
    assert NOTEBOOK_STEM.match("03_groupby_sum").group("number") == "03"


def test_an_exercise_without_its_answer_cell_and_solution_is_incomplete():
    md, code = nbformat.v4.new_markdown_cell, nbformat.v4.new_code_cell
    nb = nbformat.v4.new_notebook(cells=[
        md("# 42 · Demo"),
        md("## 1 · Doubling\n\n### Exercise 1 · Double it"),
        code("# Your code here"),
        md(solution_markdown("answer = 42")),
        code('checks.grade("answer", checks.check_double, 21)'),
        md("### Exercise 2 · Alone"),
        code('checks.grade("a, b", checks.check_pair)'),
    ])
    one, two = exercises(nb, "42_demo")
    assert (one.title, one.key, one.answer_cell, one.solution_cell, one.check_cell, one.complete) == (
        "Exercise 1 · Double it", "check_double(answer)", 2, 3, 4, True)
    assert one.solution.strip() == "answer = 42" == solution_code(solution_markdown("answer = 42")).strip()
    assert (two.key, two.answer_cell, two.solution, two.complete, two.revisit) == (
        "check_pair(a, b)", None, None, False, "42 §1")
