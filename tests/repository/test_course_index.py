"""notebooks/index.yml is the one home of the course's order: the README's notebook map, the
instructor guide's schedules, the exam map's notebook table and every notebook's What's next are
written from it, and each notebook's hand-written header must agree with it. These tests fail when
anything drifts, and show on a copy of the repository that the check does report drift."""

from __future__ import annotations

import hashlib
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import nbformat
import pytest
import yaml

from tools import course_index
from tools.course_index import EXAM_MAP, GUIDE, INDEX, README, CourseIndexError, check, load_course, write
from tools.course_index.__main__ import main
from utils.base.paths import REPO_ROOT
from utils.notebook_grammar import course_notebooks

COURSE = load_course(REPO_ROOT / INDEX)
# sha256 of https://www.apache.org/licenses/LICENSE-2.0.txt, the unmodified Apache License 2.0.
APACHE_2_0_SHA256 = "cfc7749b96f63bd31c3c42b5c471bf756814053e847c10f3eb003417bc523d30"


def test_nothing_drifted_from_the_index():
    assert check(REPO_ROOT) == [], "run python -m tools.course_index --write (or fix the notebook header it names)"


@pytest.mark.parametrize("nb", COURSE.notebooks, ids=lambda nb: nb.number)
def test_minutes_agree_with_the_notebooks_time_line(nb):
    header = nbformat.read(REPO_ROOT / "notebooks" / nb.file, as_version=4).cells[0].source
    time = course_index.header_fields(header)["Time"]
    assert [int(m) for m in re.findall(r"(\d+) minutes", time)[:2]] == [nb.teaching, nb.exercises], time


def test_every_notebook_is_in_the_index_and_every_entry_has_its_notebook():
    on_disk = [p.name for p in course_notebooks(REPO_ROOT / "notebooks")]
    assert on_disk == [nb.file for nb in COURSE.notebooks]


# --- the check reports drift: on a copy of the files it reads --------------------------------------


@pytest.fixture
def copy(tmp_path: Path) -> Path:
    for page in (README, GUIDE, EXAM_MAP, INDEX):
        (tmp_path / page).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(REPO_ROOT / page, tmp_path / page)
    for nb in COURSE.notebooks:
        shutil.copy(REPO_ROOT / "notebooks" / nb.file, tmp_path / "notebooks" / nb.file)
    assert check(tmp_path) == []
    return tmp_path


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, f"{old!r} is not in {path}"
    path.write_text(text.replace(old, new, 1))


def test_a_hand_edited_generated_row_is_reported_and_write_repairs_it(copy):
    first = load_course(copy / INDEX).notebooks[0]  # its measured times change with each measurement
    times = f"| {first.teaching} + {first.exercises} | {first.tiny_seconds} s | {first.small_seconds} s |"
    _edit(copy / README, times, times.replace(f"| {first.tiny_seconds} s |", f"| {first.tiny_seconds + 1} s |", 1))
    _edit(copy / GUIDE, "| 00 · Environment check | 10 + 5 | 15 |", "| 00 · Environment check | 10 + 5 | 20 |")
    problems = check(copy)
    assert any(p.startswith("README.md: generated block (notebook-map) differs") for p in problems), problems
    assert any(p.startswith("docs/instructor-guide.md: generated block (notebook-minutes)") for p in problems)
    assert sorted(map(str, write(copy))) == ["README.md", "docs/instructor-guide.md"]
    assert check(copy) == []
    assert (copy / README).read_text() == (REPO_ROOT / README).read_text()


def test_prose_outside_the_fences_is_kept(copy):
    _edit(copy / GUIDE, "**Half day**: the core", "**Half day**: still the core")
    _edit(copy / INDEX, "{what: lunch, minutes: 60}", "{what: lunch, minutes: 45}")
    assert any("(schedule-full-day) differs" in p for p in check(copy))
    write(copy)
    text = (copy / GUIDE).read_text()
    assert "**Half day**: still the core" in text and "| 13:15 | 05 · Bigger than memory" in text
    assert check(copy) == []


def test_minutes_that_disagree_with_the_time_line_are_reported(copy):
    _edit(copy / INDEX, "minutes: {teaching: 25, exercises: 15}", "minutes: {teaching: 30, exercises: 15}")
    write(copy)  # the generated blocks follow the index; the notebook's own header does not
    assert check(copy) == ["notebooks/01_cluster_setup.ipynb: **Time.** says [25, 15] minutes (teaching, "
                           "exercises); notebooks/index.yml says [30, 15]"]


def test_a_notebook_the_index_lacks_and_an_entry_without_a_notebook_are_reported(copy):
    shutil.copy(copy / "notebooks" / "09_review.ipynb", copy / "notebooks" / "10_extra.ipynb")
    (copy / "notebooks" / "08_distributed_training.ipynb").unlink()
    problems = check(copy)
    assert "notebooks/10_extra.ipynb is not in notebooks/index.yml" in problems
    assert "notebooks/index.yml lists 08_distributed_training.ipynb, which is not in notebooks/" in problems


def test_an_edited_whats_next_and_a_changed_title_are_reported(copy):
    path = copy / "notebooks" / "02_loading_transactions.ipynb"
    nb = nbformat.read(path, as_version=4)
    cell = next(c for c in nb.cells if "## What's next" in c.source)
    cell.source = cell.source.replace("[03 · Multi-GPU groupby-sum: total sales per customer]", "[03 · Groupby-sum]")
    nb.cells[0].source = nb.cells[0].source.replace("# 02 · Loading transactions", "# 02 · Loading data", 1)
    nbformat.write(nb, path)
    problems = check(copy)
    assert any(p.startswith("notebooks/02_loading_transactions.ipynb: generated block (whats-next) differs")
               for p in problems), problems
    assert ("notebooks/02_loading_transactions.ipynb: title is '# 02 · Loading data'; notebooks/index.yml says "
            "'# 02 · Loading transactions'") in problems


def test_write_changes_only_the_whats_next_cell(copy):
    path = copy / "notebooks" / "05_bigger_than_memory.ipynb"
    before = nbformat.read(path, as_version=4)
    _edit(copy / INDEX, "enriches the transactions", "joins the transactions")
    assert write(copy) == [Path("notebooks/05_bigger_than_memory.ipynb")]
    after = nbformat.read(path, as_version=4)
    changed = [i for i, (a, b) in enumerate(zip(before.cells, after.cells, strict=True)) if a != b]
    assert len(changed) == 1 and "## What's next" in after.cells[changed[0]].source
    assert [c.id for c in before.cells] == [c.id for c in after.cells] and before.metadata == after.metadata
    assert "[06 · Joins, sorting and time](06_joins_sorting_time.ipynb) joins the transactions" in after.cells[
        changed[0]].source


def test_a_missing_fence_is_reported(copy):
    text = (copy / EXAM_MAP).read_text()
    (copy / EXAM_MAP).write_text(text.replace("do not edit (exam-domains)", "do not edit (exam-domain)"))
    problems = check(copy)
    assert "docs/exam-map.md: unknown generated block (exam-domain)" in problems
    assert any(p.startswith("docs/exam-map.md: no generated block (exam-domains)") for p in problems)


@pytest.mark.parametrize(("old", "new", "message"), [
    ('prerequisites: ["01", "02"]', 'prerequisites: ["01", "04"]', "are not earlier notebooks"),
    ("- {notebook: \"02\"}\n      - {notebook: \"03\"}", "- {notebook: \"03\"}\n      - {notebook: \"02\"}",
     "03 comes before its prerequisites ['02']"),
    ("exam_domains: [Machine Learning, GPU", "exam_domains: [Deep Learning, GPU", "are not exam domains"),
    ("file: 04_profiling.ipynb", "file: 05_profiling.ipynb", "is not '04_topic.ipynb'"),
])
def test_a_self_contradicting_index_is_refused(copy, old, new, message):
    _edit(copy / INDEX, old, new)
    with pytest.raises(CourseIndexError, match=re.escape(message)):
        load_course(copy / INDEX)
    assert message in check(copy)[0]


# --- the command line --------------------------------------------------------------------------


@pytest.mark.parametrize("args", [[], ["--bogus"], ["--check", "--write"], ["--check", "extra"]])
def test_bad_arguments_exit_2_with_one_line(args):
    done = subprocess.run([sys.executable, "-m", "tools.course_index", *args], cwd=REPO_ROOT, capture_output=True,
                          text=True, timeout=60, check=False)
    assert done.returncode == 2
    assert done.stdout == "" and len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert done.stderr.startswith("python -m tools.course_index: error:")


def test_check_exits_0_when_nothing_drifted(capsys):
    assert main(["--check"]) == 0
    assert "agrees with notebooks/index.yml" in capsys.readouterr().out


# --- LICENSE and CITATION.cff ------------------------------------------------------------------


def test_license_is_the_unmodified_apache_2_0_text():
    text = (REPO_ROOT / "LICENSE").read_bytes()
    assert hashlib.sha256(text).hexdigest() == APACHE_2_0_SHA256
    pyproject = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())["project"]
    assert pyproject["license"] == "Apache-2.0" and pyproject["license-files"] == ["LICENSE"]


def test_citation_parses_and_agrees_with_pyproject():
    citation = yaml.safe_load((REPO_ROOT / "CITATION.cff").read_text())
    project = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())["project"]
    assert citation["cff-version"] == "1.2.0" and citation["type"] == "software"
    assert citation["license"] == project["license"]
    assert str(citation["version"]) == project["version"]
    assert citation["title"] and citation["message"] and citation["authors"]
    assert all(author.get("name") or author.get("family-names") for author in citation["authors"])
    assert str(citation["date-released"]) == "2026-12-02"
