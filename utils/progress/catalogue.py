"""The course's exercises, read from the notebooks themselves, and which one a ``grade`` call is.

A check knows only what ``grade`` sees: the learner's variable names and the check function. That
pair (``exercise_key``) names each exercise of the course once, and the notebooks' check cells spell
it, so the notebook, the exercise heading and its section are found by reading the ``.ipynb`` files:
this works in JupyterLab (whose kernels also know their notebook, ``JPY_SESSION_NAME``), in
nbclient and nbval runs (which do not), and for a learner's renamed copy of a notebook.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from utils.base.paths import NOTEBOOKS_DIR

NOTEBOOK_FILE = re.compile(r"^\d\d_\w+\.ipynb$")  # the course's notebooks (not _template.ipynb)
GRADE_CALL = re.compile(r"""\bgrade\(\s*(["'])(?P<names>.+?)\1\s*,\s*(?:\w+\.)*(?P<check>\w+)""")
EXERCISE_HEADING = re.compile(r"^### (Exercise \d+ · \S.*)$")
NUMBERED_SECTION = re.compile(r"^(\d+) · \S")
SECTION_REFERENCE = re.compile(r"\b[Ss]ection (\d+)\b|§ ?(\d+)")  # "section 3 measured ...", "§3"
SESSION_ENV_VAR = "JPY_SESSION_NAME"  # set by jupyter_server for a notebook's kernel: the notebook's path


@dataclass(frozen=True)
class Exercise:
    """One exercise of the course, and where a learner who got it wrong should read again."""

    notebook: str  # "03_groupby_sum"
    title: str  # "Exercise 2 · Per store and category"
    section: str  # the ``##`` heading it sits under: "5 · A first Dask computation" or "Exercises"
    key: str  # exercise_key(...)
    revisit: str  # short, as the review's score writes it: "03 §2", or "03 Exercise 2" without a section
    revisit_section: str  # that section's heading, "2 · How it runs: ..." ("" when it is the exercise itself)


def exercise_key(names: Sequence[str], check_name: str) -> str:
    """``check_grouped(by_store)``: the check and the variables it grades, as the check cell spells them."""
    return f"{check_name}({', '.join(name.strip() for name in names)})"


def _source(cell: dict) -> str:
    text = cell.get("source", "")
    return "".join(text) if isinstance(text, list) else str(text)


def _revisit(notebook: str, title: str, section: str, prompt: str, sections: dict[str, str]) -> tuple[str, str]:
    """The section the prompt names ("section 3 measured ..."), else the numbered one the exercise
    sits in, else the exercise itself (its prompt and its solution are the place to read again)."""
    number = next((a or b for a, b in SECTION_REFERENCE.findall(prompt) if (a or b) in sections), None)
    if number is None and (match := NUMBERED_SECTION.match(section)):
        number = match.group(1)
    if number is not None:
        return f"{notebook[:2]} §{number}", sections.get(number, number)
    return f"{notebook[:2]} {title.split(' · ')[0]}", ""


def notebook_exercises(path: Path) -> list[Exercise]:
    """The exercises of one notebook, in order: each check cell's ``grade`` call with the exercise
    heading and the section above it."""
    cells = json.loads(path.read_text(encoding="utf-8")).get("cells", [])
    notebook = path.stem
    sections: dict[str, str] = {}
    for cell in cells:
        for line in _source(cell).splitlines() if cell.get("cell_type") == "markdown" else ():
            if line.startswith("## ") and (match := NUMBERED_SECTION.match(line[3:])):
                sections.setdefault(match.group(1), line[3:].strip())
    found: list[Exercise] = []
    section, title, prompt = "", "", ""
    for cell in cells:
        text = _source(cell)
        if cell.get("cell_type") == "markdown":
            for line in text.splitlines():
                if line.startswith("## "):
                    section = line[3:].strip()
                elif match := EXERCISE_HEADING.match(line):
                    title, prompt = match.group(1).strip(), ""
                prompt += line + "\n"
            continue
        call = GRADE_CALL.search(text) if cell.get("cell_type") == "code" else None
        if call is None:
            continue
        key = exercise_key(call.group("names").split(","), call.group("check"))
        shown = title or key
        revisit, heading = _revisit(notebook, shown, section, prompt.split("<details>")[0], sections)
        found.append(Exercise(notebook, shown, section, key, revisit, heading))
    return found


@lru_cache(maxsize=4)
def _catalogue(folder: Path, stamp: tuple[tuple[str, int], ...]) -> tuple[Exercise, ...]:
    exercises: list[Exercise] = []
    for name, _ in stamp:
        try:
            exercises += notebook_exercises(folder / name)
        except (OSError, ValueError, AttributeError):
            continue  # a notebook being saved, or not one: its exercises are recorded by their key
    return tuple(exercises)


def course_exercises(folder: Path | None = None) -> tuple[Exercise, ...]:
    """Every exercise of the course's notebooks, in course order (read again when a notebook changes)."""
    folder = NOTEBOOKS_DIR if folder is None else folder
    try:
        stamp = tuple(sorted((p.name, p.stat().st_mtime_ns) for p in folder.iterdir() if NOTEBOOK_FILE.match(p.name)))
    except OSError:
        return ()
    return _catalogue(folder, stamp)


def notebook_hint(session: str | None = None) -> str | None:
    """The notebook a kernel runs, where it knows: IPython's ``__session__`` or ``$JPY_SESSION_NAME``
    (both set for kernels that JupyterLab starts; nbclient and nbval set neither)."""
    path = session or os.environ.get(SESSION_ENV_VAR, "")
    return Path(path).stem if path.strip() else None


def find_exercise(key: str, hint: str | None, exercises: Sequence[Exercise]) -> Exercise | None:
    """The exercise a ``grade`` call is: the notebook the kernel names, else the one course
    exercise with this key (a renamed copy of a notebook still counts for its original)."""
    matches = [exercise for exercise in exercises if exercise.key == key]
    named = [exercise for exercise in matches if exercise.notebook == hint]
    if named:
        return named[0]
    return matches[0] if len(matches) == 1 else None
