"""The index's data model: ``notebooks/index.yml`` read, checked for contradictions, as dataclasses."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import yaml

from utils.notebook_grammar import EXAM_DOMAINS, NOTEBOOK_FILE

INDEX = Path("notebooks/index.yml")


class CourseIndexError(ValueError):
    """notebooks/index.yml is malformed or contradicts itself."""


@dataclass(frozen=True)
class Notebook:
    """One entry of the index: what the rest of the repository says about a notebook."""

    number: str
    file: str
    title: str
    teaching: int
    exercises: int
    exam_domains: tuple[str, ...]
    prerequisites: tuple[str, ...]
    tiny_seconds: int
    small_seconds: int
    learn: str
    teaser: str | None

    @property
    def label(self) -> str:
        return f"{self.number} · {self.title}"

    @property
    def minutes(self) -> int:
        return self.teaching + self.exercises


@dataclass(frozen=True)
class Row:
    """A schedule row: a notebook (``notebook`` set) or a break, lunch, questions."""

    what: str
    minutes: int
    notebook: str | None = None


@dataclass(frozen=True)
class Schedule:
    key: str
    start: str
    rows: tuple[Row, ...]
    end: str


@dataclass(frozen=True)
class Course:
    notebooks: tuple[Notebook, ...]
    schedules: tuple[Schedule, ...]
    run_times: str

    def notebook(self, number: str) -> Notebook:
        return next(nb for nb in self.notebooks if nb.number == number)



def load_course(path: Path) -> Course:
    """Read and validate the index; every mistake is a CourseIndexError naming the entry."""
    try:
        raw = yaml.safe_load(path.read_text())
    except (OSError, yaml.YAMLError) as error:
        raise CourseIndexError(f"{path.name}: cannot read it: {error}") from error
    if not isinstance(raw, dict) or not isinstance(raw.get("notebooks"), list):
        raise CourseIndexError(f"{path.name}: needs a top-level 'notebooks' list")
    notebooks = tuple(_notebook(entry, i) for i, entry in enumerate(raw["notebooks"]))
    _check_order(notebooks)
    course = Course(notebooks, (), str(raw.get("run_times", "")).strip())
    schedules = tuple(_schedule(key, value, course) for key, value in (raw.get("schedules") or {}).items())
    return Course(notebooks, schedules, course.run_times)


def _notebook(entry: object, i: int) -> Notebook:
    where = f"notebooks[{i}]"
    if not isinstance(entry, dict):
        raise CourseIndexError(f"{where} is not a mapping")
    missing = [key for key in ("number", "file", "title", "minutes", "exam_domains", "prerequisites",
                               "run_seconds", "learn") if key not in entry]
    if missing:
        raise CourseIndexError(f"{where} lacks {', '.join(missing)}")
    number, file = str(entry["number"]), str(entry["file"])
    match = NOTEBOOK_FILE.match(file)
    if not match or match.group("number") != number:
        raise CourseIndexError(f"{where}: file {file!r} is not '{number}_topic.ipynb'")
    minutes, seconds = entry["minutes"], entry["run_seconds"]
    domains = tuple(entry["exam_domains"])
    unknown = [d for d in domains if d not in EXAM_DOMAINS]
    if unknown:
        raise CourseIndexError(f"{number}: {unknown} are not exam domains {EXAM_DOMAINS}")
    try:
        return Notebook(number, file, str(entry["title"]), int(minutes["teaching"]), int(minutes["exercises"]),
                        domains, tuple(str(p) for p in entry["prerequisites"]), int(seconds["tiny"]),
                        int(seconds["small"]), str(entry["learn"]).strip(),
                        str(entry["teaser"]).strip() if entry.get("teaser") else None)
    except (KeyError, TypeError, ValueError) as error:
        raise CourseIndexError(f"{number}: minutes need teaching and exercises, run_seconds tiny and small "
                               f"(whole numbers): {error!r}") from error


def _check_order(notebooks: tuple[Notebook, ...]) -> None:
    numbers = [nb.number for nb in notebooks]
    if not numbers:
        raise CourseIndexError("no notebooks")
    if numbers != [f"{i:02d}" for i in range(int(numbers[0]), int(numbers[0]) + len(numbers))]:
        raise CourseIndexError(f"notebook numbers must count up by one: {numbers}")
    for nb in notebooks:
        later = [p for p in nb.prerequisites if p not in numbers or p >= nb.number]
        if later:
            raise CourseIndexError(f"{nb.number}: prerequisites {later} are not earlier notebooks")
        if nb.teaser is None and nb is not notebooks[0]:
            raise CourseIndexError(f"{nb.number}: needs a teaser (the previous notebook's What's next shows it)")


def _schedule(key: str, value: dict, course: Course) -> Schedule:
    rows = []
    for row in value.get("rows", []):
        if "notebook" in row:
            number = str(row["notebook"])
            if number not in {nb.number for nb in course.notebooks}:
                raise CourseIndexError(f"schedule {key}: no notebook {number}")
            nb = course.notebook(number)
            note = f" ({row['note']})" if row.get("note") else ""
            rows.append(Row(nb.label + note, nb.minutes, number))
        elif "what" in row and "minutes" in row:
            rows.append(Row(str(row["what"]), int(row["minutes"])))
        else:
            raise CourseIndexError(f"schedule {key}: a row is {{notebook: NN}} or {{what: ..., minutes: N}}: {row}")
    placed = [r.notebook for r in rows if r.notebook]
    for i, number in enumerate(placed):
        after = [p for p in course.notebook(number).prerequisites if p in placed[i + 1:]]
        if after:
            raise CourseIndexError(f"schedule {key}: {number} comes before its prerequisites {after}")
    end = re.sub(r"\{(\d\d)\}", lambda m: course.notebook(m.group(1)).label, str(value.get("end", "")))
    if not re.fullmatch(r"\d{1,2}:\d\d", str(value.get("start", ""))):
        raise CourseIndexError(f"schedule {key}: start must be a time like 9:00 or 09:00")
    return Schedule(key, str(value["start"]), tuple(rows), end)

