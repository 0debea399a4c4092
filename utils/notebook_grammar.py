"""What a course notebook looks like, written once: its file name, title, section headings and
exercises (COURSE_DESIGN.md section 6, CONTRIBUTING.md).

Every reader of the notebooks takes its patterns from here: the template checker
(``tools.notebook_format``), the exercise catalogue of ``utils.progress``, the review's question
bank (``utils.review``), the course index and the site (``tools.course_index``, ``tools.site``) and
the tests. It only parses (``re``, ``json``): no Dask, no nbformat, nothing a kernel waits for.

An exercise is four cells: a markdown prompt under ``### Exercise N · Title``, an answer cell that
starts with ``# Your code here``, a markdown cell holding the solution in a collapsed
``<details><summary>Solution ...`` block, and a check cell that calls
``checks.grade("names", checks.check_x, ...)``. The variable names and the check (``key``) name
the exercise: they do not change when another exercise is inserted before it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from utils.base.paths import NOTEBOOKS_DIR

# --- file names: 03_groupby_sum.ipynb, 09_review.ipynb, _template.ipynb ------------------------------
_STEM = r"(?P<number>\d\d)_(?P<topic>[a-z0-9_]+)"
NOTEBOOK_STEM = re.compile(rf"^{_STEM}$")  # "03_groupby_sum": how the review's bank names a notebook
NOTEBOOK_FILE = re.compile(rf"^{_STEM}\.ipynb$")  # the course's notebooks: the lessons and the review
REVIEW_FILE = re.compile(r"^\d\d_review\.ipynb$")  # the quiz (tools.notebook_format.check_review)
TEMPLATE_NAME = "_template.ipynb"  # the template new notebooks start from; not a course notebook

# --- headings -------------------------------------------------------------------------------------
TITLE = re.compile(r"^# (\d\d|NN) · \S.*")  # the first line of the first cell; NN in the template
HEADER_FIELDS = ("Overview", "Prerequisites", "Time", "Exam domains")  # the header cell's **Field.** lines
# What "Exam domains" may name: the six domains of NVIDIA-Certified Professional: Accelerated Data
# Science as COURSE_DESIGN.md lists them (published by third parties). The review's bank maps each
# question to one of them too.
EXAM_DOMAINS = ("Data Analysis", "Data Manipulation and Software Literacy", "Data Preparation",
                "GPU and Cloud Computing", "Machine Learning", "MLOps")
SUMMARY_HEADING = "## Summary"
REVIEW_QUESTIONS_HEADING = "## Review questions"
WHATS_NEXT_HEADING = "## What's next"
CLOSING_HEADING = "## When you are done"  # the last cell: how to close the cluster
FOOTER_SECTIONS = (SUMMARY_HEADING, REVIEW_QUESTIONS_HEADING, WHATS_NEXT_HEADING)
SECTION = re.compile(r"^## (\d+ · \S.*|Exercises|Summary|Review questions|What's next|When you are done)$")
NUMBERED_SECTION = re.compile(r"^(\d+) · \S.*$")  # a section heading's text after "## ": "3 · Title"
SECTION_REFERENCE = re.compile(r"\b[Ss]ection (\d+)\b|§ ?(\d+)")  # a prompt's "section 3 measured ...", "§3"
EXERCISE_PREFIX = "### Exercise"  # a line that starts so must be a whole exercise heading
EXERCISE_HEADING = re.compile(r"^### (Exercise \d+ · \S.*)$")

# --- an exercise's cells --------------------------------------------------------------------------
ANSWER_MARK = "# Your code here"  # an answer cell starts with it and holds only comments
GRADE_PREFIX = "checks.grade("  # how a check cell spells the call
GRADE_CALL = re.compile(r"""\bgrade\(\s*(["'])(?P<names>.+?)\1\s*,\s*(?:\w+\.)*(?P<check>\w+)""")
SOLUTION = re.compile(r"<details>\s*<summary>\s*Solution.*?</summary>.*?```python\n(.*?)```", re.S)
DETAILS = re.compile(r"<details>.*?</details>", re.S)  # any collapsed block (solutions, "Going further")


@dataclass(frozen=True)
class Exercise:
    """One exercise of a notebook: where its cells are, its solution, and what names it."""

    notebook: str  # the notebook's stem, "03_groupby_sum" ("" when parsed without one)
    title: str  # "Exercise 2 · Per store and category" (the key when the exercise has no heading)
    section: str  # the ``##`` heading it sits under: "5 · A first Dask computation" or "Exercises"
    key: str  # exercise_key(...): "check_grouped(by_store)", stable when exercises are inserted
    revisit: str  # short, as the review's score writes it: "03 §2", or "03 Exercise 2" without a section
    revisit_section: str  # that section's heading, "2 · How it runs: ..." ("" when it is the exercise itself)
    check_cell: int  # the cell calling checks.grade(...)
    answer_cell: int | None = None  # the "# Your code here" cell, two before the check (None: not there)
    solution_cell: int | None = None  # the markdown <details> solution right before the check
    solution: str | None = None  # the solution's Python code

    @property
    def complete(self) -> bool:
        """All four cells in their places: prompt, answer cell, solution block, check cell."""
        return self.answer_cell is not None


def cell_source(cell: Mapping[str, Any]) -> str:
    """A cell's source as one string (notebook JSON may store it as a list of lines)."""
    text = cell.get("source", "")
    return "".join(text) if isinstance(text, list) else str(text)


def is_answer_cell(cell: Mapping[str, Any]) -> bool:
    return cell.get("cell_type") == "code" and cell_source(cell).lstrip().startswith(ANSWER_MARK)


def solution_code(markdown: str) -> str | None:
    """The Python code of a collapsed ``<details><summary>Solution`` block, if the cell has one."""
    match = SOLUTION.search(markdown)
    return match.group(1) if match else None


def solution_markdown(code: str) -> str:
    """The markdown cell that holds an exercise's solution, collapsed until the learner clicks."""
    return f"<details><summary>Solution (click to show)</summary>\n\n```python\n{code.strip()}\n```\n\n</details>"


def exercise_key(names: Sequence[str], check_name: str) -> str:
    """``check_grouped(by_store)``: the check and the variables it grades, as the check cell spells them."""
    return f"{check_name}({', '.join(name.strip() for name in names)})"


def grade_key(code: str) -> str | None:
    """The exercise key of a check cell's ``grade("names", check, ...)`` call, if it has one."""
    call = GRADE_CALL.search(code)
    return exercise_key(call.group("names").split(","), call.group("check")) if call else None


def is_course_notebook(name: str) -> bool:
    """``03_groupby_sum.ipynb`` or ``09_review.ipynb``; not the template, not ``03_x-Copy1.ipynb``."""
    return NOTEBOOK_FILE.match(name) is not None


def course_notebooks(folder: Path | None = None) -> list[Path]:
    """The course's notebooks in ``folder`` (``notebooks/``), in course order."""
    folder = NOTEBOOKS_DIR if folder is None else folder
    return sorted(path for path in folder.glob("*.ipynb") if is_course_notebook(path.name))


def numbered_sections(cells: Sequence[Mapping[str, Any]]) -> dict[str, str]:
    """Section number -> its heading's text (``"2" -> "2 · How it runs"``), first heading wins."""
    sections: dict[str, str] = {}
    for cell in cells:
        for line in cell_source(cell).splitlines() if cell.get("cell_type") == "markdown" else ():
            if line.startswith("## ") and (match := NUMBERED_SECTION.match(line[3:])):
                sections.setdefault(match.group(1), line[3:].strip())
    return sections


def _revisit(notebook: str, title: str, section: str, prompt: str, sections: dict[str, str]) -> tuple[str, str]:
    """The section the prompt names ("section 3 measured ..."), else the numbered one the exercise
    sits in, else the exercise itself (its prompt and its solution are the place to read again)."""
    number = next((a or b for a, b in SECTION_REFERENCE.findall(prompt) if (a or b) in sections), None)
    if number is None and (match := NUMBERED_SECTION.match(section)):
        number = match.group(1)
    if number is not None:
        return f"{notebook[:2]} §{number}", sections.get(number, number)
    return f"{notebook[:2]} {title.split(' · ')[0]}", ""


def learners_answer_cell(cells: Sequence[Mapping[str, Any]], check: int) -> int | None:
    """The answer cell before a check cell as a learner left it (their code may have replaced the
    mark): the code cell before the solution block, which sits right before the check."""
    answer, solution = check - 2, check - 1
    if answer < 1 or cells[answer].get("cell_type") != "code" or cells[solution].get("cell_type") != "markdown":
        return None
    return answer if solution_code(cell_source(cells[solution])) is not None else None


def _answer_and_solution(cells: Sequence[Mapping[str, Any]], check: int) -> tuple[int | None, int | None, str | None]:
    """The answer cell and solution block right before a check cell, when both are in place."""
    answer, solution = check - 2, check - 1
    if answer < 1 or not is_answer_cell(cells[answer]) or cells[solution].get("cell_type") != "markdown":
        return None, None, None
    code = solution_code(cell_source(cells[solution]))
    return (answer, solution, code) if code is not None else (None, None, None)


def exercises(nb: Mapping[str, Any], notebook: str = "") -> list[Exercise]:
    """Every graded exercise of a notebook (an nbformat notebook or its JSON), in order: each check
    cell's ``grade`` call with the exercise heading and section above it and, when the four cells
    are in place (``Exercise.complete``), its answer cell and solution."""
    cells = nb.get("cells", [])
    sections = numbered_sections(cells)
    found: list[Exercise] = []
    section, title, prompt = "", "", ""
    for index, cell in enumerate(cells):
        text = cell_source(cell)
        if cell.get("cell_type") == "markdown":
            for line in text.splitlines():
                if line.startswith("## "):
                    section = line[3:].strip()
                elif match := EXERCISE_HEADING.match(line):
                    title, prompt = match.group(1).strip(), ""
                prompt += line + "\n"
            continue
        key = grade_key(text) if cell.get("cell_type") == "code" else None
        if key is None:
            continue
        shown = title or key
        revisit, revisit_section = _revisit(notebook, shown, section, prompt.split("<details>")[0], sections)
        answer, solution_cell, solution = _answer_and_solution(cells, index)
        found.append(Exercise(notebook, shown, section, key, revisit, revisit_section, index, answer,
                              solution_cell, solution))
    return found


def notebook_exercises(path: Path) -> list[Exercise]:
    """The exercises of the notebook file at ``path`` (read as JSON: no nbformat needed)."""
    return exercises(json.loads(path.read_text(encoding="utf-8")), path.stem)
