"""Exercise progress: every ``grade`` call records its outcome in the learner's scratch folder without
changing what the check prints or raises; a broken, missing or unwritable file is one warning line;
two kernels can record at once; the learner's table, the export and the instructor's room summary."""

from __future__ import annotations

import errno
import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from tools.notebook_format import check_notebook
from utils.base.paths import REPO_ROOT, SCRATCH_ENV_VAR, scratch_root
from utils.checks import CheckFailed, grade
from utils.checks.grading import blames_changed_data, passed
from utils.dataset import Dataset
from utils.notebook_grammar import course_notebooks, exercise_key, exercises, notebook_exercises
from utils.progress.catalogue import SESSION_ENV_VAR, course_exercises, find_exercise, notebook_hint
from utils.progress.cli import main
from utils.progress.record import build_record, record_outcome
from utils.progress.report import latest_outcomes, per_notebook, progress_table, show
from utils.progress.room import (
    EXPORT_FORMAT,
    EXPORT_VERSION,
    LEARNERS_CSV,
    ROOM_CSV,
    ROOM_PNG,
    collect,
    draw_chart,
    export_summary,
    read_export,
    write_export,
)
from utils.progress.store import (
    DATA_CHANGED,
    NOT_ATTEMPTED,
    PROGRESS_ENV_VAR,
    PROGRESS_NAME,
    RIGHT,
    WRONG,
    append,
    clear,
    progress_file,
    read_records,
)
from utils.review import Quiz

NOTEBOOKS = REPO_ROOT / "notebooks"
IS_ROOT = hasattr(os, "geteuid") and os.geteuid() == 0


@pytest.fixture
def progress(tmp_path, monkeypatch) -> Path:
    """This test's own scratch folder (never the learner's data) and the progress file in it."""
    monkeypatch.delenv(PROGRESS_ENV_VAR, raising=False)
    monkeypatch.delenv(SESSION_ENV_VAR, raising=False)
    monkeypatch.setenv(SCRATCH_ENV_VAR, str(tmp_path / "scratch"))
    return tmp_path / "scratch" / PROGRESS_NAME


def check_double(value, half: int) -> None:
    """A check in the course's shape: one ✓ line when right, ``CheckFailed`` with one line when wrong."""
    if value != 2 * half:
        raise CheckFailed(f"double: yours {value}, expected {2 * half}")
    passed(f"✓ double: {value}")


def grade_answer(answer: int | None = None) -> None:
    """Grade ``answer`` as a notebook cell would: the learner's variable is the caller's (here: a local,
    deleted to play an answer cell that defines nothing)."""
    if answer is None:
        del answer
    grade("answer", check_double, 21)


def outcomes(path: Path) -> list[tuple[str, str | None]]:
    return [(record["outcome"], record["reason"]) for record in read_records(path)]


# ---------------------------------------------------------------- where, and the rule's one home

def test_the_file_lives_in_the_scratch_folder_by_the_scratch_rule(tmp_path, monkeypatch):
    monkeypatch.delenv(PROGRESS_ENV_VAR, raising=False)
    monkeypatch.delenv(SCRATCH_ENV_VAR, raising=False)
    monkeypatch.setenv("COURSE_DATA_DIR", str(tmp_path / "shared-data"))
    assert progress_file() == tmp_path / "shared-data" / "scratch" / PROGRESS_NAME == scratch_root() / PROGRESS_NAME
    monkeypatch.setenv(SCRATCH_ENV_VAR, str(tmp_path / "mine"))
    assert progress_file() == tmp_path / "mine" / PROGRESS_NAME
    monkeypatch.setenv(SCRATCH_ENV_VAR, "relative/scratch")  # as COURSE_DATA_DIR: from the repository root
    assert scratch_root() == REPO_ROOT / "relative" / "scratch"


def test_this_test_run_records_outside_the_repository():
    """The notebooks and checks that the suite runs never add to a learner's progress (root conftest)."""
    path = Path(os.environ[PROGRESS_ENV_VAR]).resolve()
    assert not path.is_relative_to(REPO_ROOT.resolve())


# ---------------------------------------------------------------- recording each outcome

def test_each_outcome_is_recorded_with_time_and_reason(progress, capsys):
    grade_answer()
    with pytest.raises(CheckFailed, match=r"^double: yours 41, expected 42$"):
        grade_answer(41)
    grade_answer(42)
    out = capsys.readouterr()
    assert out.out.splitlines() == [
        "not attempted yet: define `answer` in the exercise cell above, then run this cell again",
        "✓ double: 42",
    ]
    assert out.err == ""
    records = read_records(progress)
    assert outcomes(progress) == [(NOT_ATTEMPTED, None), (WRONG, "double: yours 41, expected 42"), (RIGHT, None)]
    assert all(r["key"] == "check_double(answer)" and r["time"] and r["notebook"] is None for r in records)


def test_a_check_that_raises_something_else_is_recorded_wrong_and_the_error_goes_on(progress):
    def check_broken(value):
        raise KeyError("sales")

    answer = 1  # noqa: F841 -- read by grade from this frame
    with pytest.raises(KeyError):
        grade("answer", check_broken)
    assert outcomes(progress) == [(WRONG, "the check raised KeyError: 'sales'")]


class ChangedData(Dataset):
    """A dataset whose files no longer match their manifest (edited, or regenerated under the notebook)."""

    regenerate_command = "python -m utils.datagen --scale tiny --force"

    def __init__(self) -> None:
        self.path = Path("/data/transactions-tiny")

    def verify(self, checksums: bool = True) -> list[str]:
        return ["csv/part-00001.csv: content changed (checksum differs)"]


@blames_changed_data
def check_total(value, dataset: Dataset) -> None:
    if value != 42:
        raise CheckFailed(f"total: yours {value}, expected 42")


def test_a_check_that_fails_on_changed_data_is_recorded_as_data_changed_not_wrong(progress):
    """The message already blames the data, not the answer: so does the record."""
    answer = 41  # noqa: F841 -- read by grade from this frame
    with pytest.raises(CheckFailed, match=r"^the data files were changed after generation \(csv/part-00001"):
        grade("answer", check_total, ChangedData())
    [(outcome, reason)] = outcomes(progress)
    assert outcome == DATA_CHANGED != WRONG
    assert reason.startswith("the data files were changed after generation") and "--force" in reason


def test_every_status_reads_back_old_and_new(progress):
    """Records written before the data-changed status existed still read, beside the new ones."""
    for outcome in (RIGHT, WRONG, NOT_ATTEMPTED, DATA_CHANGED):
        assert append({"v": 1, "key": f"k-{outcome}", "outcome": outcome, "notebook": None, "time": None,
                       "reason": None}, progress)
    assert [r["outcome"] for r in read_records(progress)] == [RIGHT, WRONG, NOT_ATTEMPTED, DATA_CHANGED]
    assert build_record(["n_rows"], "check_row_count", DATA_CHANGED, "the data files were changed")["reason"]


def test_a_course_exercise_is_found_by_its_check_cell(progress):
    """The variable names and the check name are all grade sees; the notebooks map them to an exercise."""
    record = build_record(["by_store"], "check_grouped", RIGHT)
    assert (record["notebook"], record["exercise"], record["section"]) == (
        "03_groupby_sum", "Exercise 1 · Total sales per store", "Exercises")
    renamed = build_record(["n_rows"], "check_row_count", NOT_ATTEMPTED,
                           session="/home/ada/00_environment_check-Copy1.ipynb")
    assert renamed["notebook"] == "00_environment_check" and renamed["section"] == "5 · A first Dask computation"
    own = build_record(["x"], "check_mine", RIGHT, session="/home/ada/scratchpad.ipynb")
    assert (own["notebook"], own["exercise"]) == ("scratchpad", None)


def test_the_kernel_names_its_notebook_as_jupyterlab_starts_it(monkeypatch):
    monkeypatch.setenv(SESSION_ENV_VAR, "/srv/lab/notebooks/03_groupby_sum.ipynb")
    assert notebook_hint() == "03_groupby_sum"
    assert notebook_hint("/x/01_cluster_setup.ipynb") == "01_cluster_setup"  # IPython's __session__ first
    monkeypatch.delenv(SESSION_ENV_VAR)
    assert notebook_hint() is None


def test_every_course_exercise_is_in_the_catalogue_once():
    """Every graded exercise has its four cells (answer, solution, check) in place, the catalogue
    holds them in course order, and one key each."""
    found = course_exercises()
    expected = []
    for path in course_notebooks(NOTEBOOKS):
        expected += [(path.stem, e.title) for e in exercises(nbformat.read(path, as_version=4)) if e.complete]
    assert [(e.notebook, e.title) for e in found] == expected
    keys = [e.key for e in found]
    assert len(keys) == len(set(keys)), "two exercises share variable names and check: give one other names"
    assert all(find_exercise(e.key, None, found) == e for e in found)


def demo_notebook(path: Path) -> Path:
    cells = [
        nbformat.v4.new_markdown_cell("# 42 · Demo"),
        nbformat.v4.new_markdown_cell("## 1 · Doubling\n\nExplanation."),
        nbformat.v4.new_markdown_cell("### Exercise 1 · Double it\n\nStore it in `answer`."),
        nbformat.v4.new_code_cell("# Your code here"),
        nbformat.v4.new_code_cell('checks.grade("answer", checks.check_double, 21)'),
        nbformat.v4.new_markdown_cell("## Exercises\n\n### Exercise 2 · Again\n\nAs section 1 showed, "
                                      "store `a, b`.\n\n<details><summary>Solution</summary>§9</details>"),
        nbformat.v4.new_code_cell("checks.grade( 'a,b' , checks.check_pair)"),
        nbformat.v4.new_markdown_cell("### Exercise 3 · Alone\n\nNo section named here."),
        nbformat.v4.new_code_cell('checks.grade("c", checks.check_c)'),
    ]
    nbformat.write(nbformat.v4.new_notebook(cells=cells), path)
    return path


def test_the_section_to_revisit_is_named_by_the_prompt_or_holds_the_exercise(tmp_path):
    one, two, three = notebook_exercises(demo_notebook(tmp_path / "42_demo.ipynb"))
    assert (one.key, one.section, one.revisit, one.revisit_section) == (
        "check_double(answer)", "1 · Doubling", "42 §1", "1 · Doubling")
    assert (two.key, two.section, two.revisit) == ("check_pair(a, b)", "Exercises", "42 §1")
    assert (three.revisit, three.revisit_section) == ("42 Exercise 3", "")
    assert exercise_key(["a ", " b"], "check_pair") == two.key


# ---------------------------------------------------------------- corrupt, missing, unwritable

def test_a_missing_file_is_no_progress_and_is_not_created(progress, capsys):
    table = show()
    out = capsys.readouterr()
    assert out.out.startswith("no exercise graded yet") and out.err == ""
    assert not progress.exists()
    assert (table["exercises"] == table[NOT_ATTEMPTED]).all() and table[RIGHT].sum() == 0


def test_a_corrupt_file_keeps_its_good_lines_and_warns_once(progress, capsys):
    record_outcome(["n_rows"], "check_row_count", RIGHT)
    with open(progress, "ab") as handle:
        handle.write(b'{"outcome": "right", "key": 3}\n\xff\xfe garbage\n{"truncated": \n[1, 2]\n')
    record_outcome(["by_store"], "check_grouped", WRONG, "by_store: values off")
    assert outcomes(progress) == [(RIGHT, None), (WRONG, "by_store: values off")]
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and "skipped 4 unreadable lines of" in err[0] and str(progress) in err[0]
    table = progress_table()
    assert dict(table.groupby("outcome").size()) == {RIGHT: 1, WRONG: 1, NOT_ATTEMPTED: len(table) - 2}


def half_then_full(fd: int, data: bytes) -> int:
    """A disk that fills up in the middle of a record: half of it lands, then ENOSPC."""
    REAL_WRITE(fd, bytes(data[: len(data) // 2]))
    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


def lost(fd: int, data: bytes) -> int:
    """A write that reports every byte written and lands none (a lying network file system)."""
    return len(data)


REAL_WRITE = os.write
DAMAGE = {
    "a hand edit without a final newline": None,
    "a disk full in the middle of a record": half_then_full,
    "a write that does not land": lost,
}


@pytest.mark.parametrize("damage", DAMAGE.values(), ids=DAMAGE.keys())
def test_a_record_after_a_broken_last_line_counts_or_is_reported_lost(damage, progress, monkeypatch, capsys):
    """A record is readable after whatever the last line was, and ``append`` says ``True`` only
    for a record that a reader will find."""
    first, lost_one, second = ({"outcome": o, "key": k} for o, k in [(RIGHT, "one"), (WRONG, "lost"), (RIGHT, "two")])
    assert append(first, progress)
    if damage is None:
        with open(progress, "ab") as handle:
            handle.write(b'{"outcome": "wrong", "key": "edited"}')  # saved by an editor without a final newline
    else:
        with monkeypatch.context() as patched:
            patched.setattr(os, "write", damage)
            recorded = append(lost_one, progress)
        assert recorded is False, "a record that cannot be read back was reported recorded"
    assert append(second, progress) is True
    keys = [record["key"] for record in read_records(progress)]
    assert keys == (["one", "edited", "two"] if damage is None else ["one", "two"])
    assert "unreadable" not in capsys.readouterr().err


def test_an_unwritable_scratch_folder_is_one_warning_and_the_check_goes_on(tmp_path, monkeypatch, capsys):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    monkeypatch.delenv(PROGRESS_ENV_VAR, raising=False)
    monkeypatch.setenv(SCRATCH_ENV_VAR, str(blocker / "scratch"))  # a folder inside a file: never writable
    grade_answer()
    grade_answer(42)
    with pytest.raises(CheckFailed, match="^double: yours 1, expected 42$"):
        grade_answer(1)
    out = capsys.readouterr()
    assert out.out.splitlines()[0].startswith("not attempted yet: define `answer`")
    assert out.out.splitlines()[1] == "✓ double: 42"
    warning = out.err.splitlines()
    assert len(warning) == 1, "one line per kernel, not one per check"
    assert warning[0].startswith("⚠ exercise progress not recorded: cannot write") and SCRATCH_ENV_VAR in warning[0]


def test_a_progress_file_that_cannot_be_opened_is_one_warning(progress, capsys):
    progress.mkdir(parents=True)  # a folder where the file should be
    assert append({"outcome": RIGHT, "key": "k"}) is False
    assert read_records() == []
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 2 and all(line.startswith("⚠ exercise progress not") for line in err)


@pytest.mark.skipif(IS_ROOT, reason="root writes to read-only files")
def test_a_read_only_progress_file_is_one_warning(progress, capsys):
    record_outcome(["n_rows"], "check_row_count", RIGHT)
    progress.chmod(0o444)
    grade_answer()
    assert capsys.readouterr().err.count("\n") == 1
    assert outcomes(progress) == [(RIGHT, None)]


# ---------------------------------------------------------------- two kernels at once

WRITER = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    from utils.progress.store import append
    go, who, count = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])
    while not go.exists():
        time.sleep(0.005)
    for i in range(count):
        append({"outcome": "wrong", "key": f"{who}-{i}", "reason": who * 20000})
""")


def test_two_kernels_recording_at_once_lose_nothing_and_corrupt_nothing(progress, tmp_path, capsys):
    go, count = tmp_path / "go", 150
    env = {**os.environ, SCRATCH_ENV_VAR: str(progress.parent)}
    writers = [subprocess.Popen([sys.executable, "-c", WRITER, str(go), who, str(count)], env=env, cwd=REPO_ROOT)
               for who in ("a", "b")]
    go.touch()
    assert [writer.wait(timeout=120) for writer in writers] == [0, 0]
    records = read_records(progress)
    assert capsys.readouterr().err == "", "a line was cut or interleaved"
    assert sorted(r["key"] for r in records) == sorted(f"{who}-{i}" for who in "ab" for i in range(count))
    assert all(r["reason"] == r["key"][0] * 20000 for r in records)


# ---------------------------------------------------------------- the learner's table

def rec(key: str, outcome: str, notebook: str | None = None, reason: str | None = None) -> dict:
    return {"key": key, "outcome": outcome, "notebook": notebook, "time": "2026-01-01T10:00:00+00:00",
            "reason": reason}


def test_the_latest_attempt_counts_and_not_attempted_never_erases_one():
    found = course_exercises()
    n_rows, by_store, top10 = "check_row_count(n_rows)", "check_grouped(by_store)", "check_top_customers(top10)"
    table = latest_outcomes([
        rec(n_rows, RIGHT), rec(n_rows, NOT_ATTEMPTED),
        rec(by_store, RIGHT), rec(by_store, WRONG, reason="by_store: off"),
        rec(top10, WRONG, "03_groupby_sum"), rec(top10, RIGHT, "03_groupby_sum"),
        rec("check_mine(x)", RIGHT, "scratchpad"),
    ], found)
    outcome = dict(zip(table["exercise"], table["outcome"], strict=True))
    assert outcome["Exercise 1 · Count the transactions"] == RIGHT
    assert outcome["Exercise 1 · Total sales per store"] == WRONG
    assert outcome["Exercise 3 · The top 10 customers"] == RIGHT
    assert outcome["check_mine(x)"] == RIGHT and len(table) == len(found) + 1
    notebooks = per_notebook(table)
    row = notebooks.loc["03_groupby_sum"]
    counts = (row["exercises"], row[RIGHT], row[WRONG], row[NOT_ATTEMPTED], row["revisit"])
    assert counts == (4, 1, 1, 2, "03 Exercise 1")
    assert notebooks.loc["00_environment_check", RIGHT] == 1


def test_show_prints_totals_and_each_wrong_one_with_its_reason_and_section(progress, capsys):
    record_outcome(["segment_q2"], "check_segment_quarter", WRONG, "segment_q2: 1 segments missing")
    record_outcome(["n_rows"], "check_row_count", RIGHT)
    table = show()
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith(f"1 of {len(course_exercises())} exercises right, 1 wrong, ")
    assert lines[1] == "Revisit:"
    assert lines[2].startswith("  06_joins_sorting_time, Exercise 1 · Sales per segment in one quarter: "
                               "segment_q2: 1 segments missing → revisit section 2 · ")
    assert table.loc["06_joins_sorting_time", "revisit"] == "06 §2"


def test_the_review_ends_with_the_same_table(progress, capsys):
    record_outcome(["n_rows"], "check_row_count", RIGHT)
    table = Quiz().progress()
    assert list(table.columns) == ["exercises", RIGHT, WRONG, NOT_ATTEMPTED, "revisit"]
    assert table.loc["00_environment_check", RIGHT] == 1
    assert capsys.readouterr().out.startswith("1 of ")


def test_the_review_allows_one_progress_cell_right_after_the_score(tmp_path):
    nb = nbformat.read(NOTEBOOKS / "09_review.ipynb", as_version=4)
    sources = [cell.source for cell in nb.cells]
    assert sources[sources.index("quiz.score()") + 1] == "quiz.progress()"
    path = tmp_path / "09_review.ipynb"
    nbformat.write(nb, path)
    assert check_notebook(path) == []
    nb.cells.insert(3, nbformat.v4.new_code_cell("quiz.progress()"))
    nbformat.write(nb, path)
    assert any("quiz.progress() may come once" in problem for problem in check_notebook(path))


def test_a_kernel_started_as_jupyterlab_does_records_its_notebook(tmp_path):
    """In a real kernel: the check cells print what they always printed, and the records name the
    notebook from the session JupyterLab gives the kernel (nbclient alone gives none)."""
    path = tmp_path / "scratch" / PROGRESS_NAME
    cells = ["from utils import checks",
             'checks.grade("answer", checks.check_scalar, 42, "the answer")',
             "answer = 41",
             'checks.grade("answer", checks.check_scalar, 42, "the answer")',
             "answer = 42",
             'checks.grade("answer", checks.check_scalar, 42, "the answer")']
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(source) for source in cells])
    env = {**os.environ, SESSION_ENV_VAR: str(tmp_path / "my_copy.ipynb"), PROGRESS_ENV_VAR: str(path)}
    NotebookClient(nb, timeout=120, kernel_name="python3", allow_errors=True).execute(env=env)
    printed = ["".join(o.get("text", "") + o.get("evalue", "") for o in nb.cells[i].outputs) for i in (1, 3, 5)]
    assert printed[0].startswith("not attempted yet: define `answer`")
    assert "the answer: yours 41, expected 42" in printed[1]
    assert printed[2].startswith("✓ the answer: 42 matches")
    records = read_records(path)
    assert [r["outcome"] for r in records] == [NOT_ATTEMPTED, WRONG, RIGHT]
    assert {r["notebook"] for r in records} == {"my_copy"}


# ---------------------------------------------------------------- export, collect, reset

def test_the_export_is_anonymous_unless_named_and_replaces_itself(progress, tmp_path):
    record_outcome(["n_rows"], "check_row_count", RIGHT)
    record_outcome(["by_store"], "check_grouped", WRONG, "by_store: off by $3 for customer 17")
    record_outcome(["x"], "check_mine", RIGHT, session="/home/ada.lovelace/private_notes.ipynb")
    out = tmp_path / "share"
    out.mkdir()
    first = write_export(out)
    text = first.read_text()
    data = read_export(first)
    assert data["name"] is None and data["format"] == EXPORT_FORMAT and data["version"] == EXPORT_VERSION
    assert len(data["exercises"]) == len(course_exercises())
    for private in ("ada.lovelace", "private_notes", "off by", str(tmp_path)):
        assert private not in text
    second = write_export(out, name="  Ada  L. ")
    assert second == first and read_export(second)["name"] == "Ada L." and len(list(out.iterdir())) == 1
    assert export_summary()["learner"] == data["learner"]


def export(learner: str, outcomes_by_key: dict[str, str], name: str | None = None,
           exported: str = "2026-01-01") -> dict:
    titles = {e.key: e for e in course_exercises()}
    return {"format": EXPORT_FORMAT, "version": EXPORT_VERSION, "learner": learner, "name": name,
            "exported": exported, "exercises": [
                {"notebook": titles[key].notebook, "exercise": titles[key].title, "outcome": outcome}
                for key, outcome in outcomes_by_key.items()]}


def test_collect_merges_a_room_and_skips_what_is_not_an_export(tmp_path, capsys):
    room = tmp_path / "room"
    room.mkdir()
    n_rows, by_store = "check_row_count(n_rows)", "check_grouped(by_store)"
    exports = {
        "a.json": export("a" * 12, {n_rows: RIGHT, by_store: WRONG}, name="Ada"),
        "b.json": export("b" * 12, {n_rows: RIGHT, by_store: NOT_ATTEMPTED}),
        "c-old.json": export("c" * 12, {n_rows: NOT_ATTEMPTED, by_store: NOT_ATTEMPTED}, exported="2026-01-01"),
        "c-new.json": export("c" * 12, {n_rows: WRONG, by_store: WRONG}, exported="2026-01-02"),
    }
    for name, data in exports.items():
        (room / name).write_text(json.dumps(data))
    (room / "broken.json").write_text('{"format": "dask-course-progress", ')
    (room / "other.json").write_text('{"some": "file"}')
    (room / "binary.json").write_bytes(b"\xff\xd8\xff")
    (room / "notes.txt").write_text("not collected")
    assert main(["collect", str(room), "--out", str(tmp_path / "out")]) == 0
    out = capsys.readouterr()
    *skipped, claimed = out.err.splitlines()
    not_exports = ("binary", "broken", "other")
    assert sorted(line.split(":")[0] for line in skipped) == [f"skipped {n}.json" for n in not_exports]
    assert claimed == f"learner {'c' * 12} claimed by c-new.json, c-old.json: counted c-new.json"
    assert "3 learners, 2 exercises" in out.out and "most often wrong: 03 Exercise 1 · Total sales per store" in out.out
    table = collect(room).exercises
    assert list(table["exercise"]) == ["Exercise 1 · Count the transactions", "Exercise 1 · Total sales per store"]
    assert list(table[RIGHT]) == [2, 0] and list(table[WRONG]) == [1, 2] and list(table[NOT_ATTEMPTED]) == [0, 1]
    assert list(table[f"share {WRONG}"]) == [0.333, 0.667]
    csv = (tmp_path / "out" / ROOM_CSV).read_text().splitlines()
    assert csv[0] == "notebook,exercise,learners,right,wrong,not attempted,share right,share wrong,share not attempted"
    png = (tmp_path / "out" / ROOM_PNG).read_bytes()
    assert png.startswith(b"\x89PNG") and len(png) > 5000
    learners = (tmp_path / "out" / LEARNERS_CSV).read_text()
    assert "Ada" in learners and "03 Exercise 1" in learners


def test_the_chart_has_one_bar_per_exercise_and_outcome(tmp_path):
    room = tmp_path / "room"
    room.mkdir()
    (room / "a.json").write_text(json.dumps(export("a" * 12, {"check_row_count(n_rows)": RIGHT,
                                                              "check_grouped(by_store)": WRONG})))
    merged = collect(room)
    axes = draw_chart(merged.exercises, len(merged.learners)).axes[0]
    assert len(axes.patches) == 2 * 3
    assert [label.get_text() for label in axes.get_yticklabels()] == [
        "00 Exercise 1 · Count the transactions", "03 Exercise 1 · Total sales per store"]
    assert sorted(patch.get_width() for patch in axes.patches if patch.get_width()) == [100.0, 100.0]


def test_reset_forgets_everything(progress, capsys):
    record_outcome(["n_rows"], "check_row_count", RIGHT)
    record_outcome(["by_store"], "check_grouped", WRONG, "off")
    assert main(["reset"]) == 0
    assert capsys.readouterr().out.startswith(f"forgot 2 recorded outcomes ({progress})")
    assert read_records(progress) == [] and clear() == 0


def test_the_command_line(progress, tmp_path, capsys):
    assert main([]) == 0 and "no exercise graded yet" in capsys.readouterr().out
    assert main(["export", "--out", str(tmp_path)]) == 0
    assert capsys.readouterr().out.startswith(f"wrote {tmp_path}/progress-")
    assert main(["export"]) == 0 and f"wrote {progress.parent}/progress-" in capsys.readouterr().out
    for argv, message in [
        (["bogus"], "invalid choice: 'bogus'"),
        (["collect"], "the following arguments are required: folder"),
        (["collect", str(tmp_path / "nowhere")], "is not a folder"),
        (["collect", str(tmp_path / "scratch" / "empty")], "is not a folder"),
        (["export", "--name", "x" * 81], "use at most 80"),
    ]:
        try:
            code = main(argv)
        except SystemExit as done:
            code = done.code
        err = capsys.readouterr().err
        assert code == 2 and err.count("\n") == 1 and err.startswith("error: ") and message in err, (argv, err)
    (tmp_path / "empty").mkdir()
    assert main(["collect", str(tmp_path / "empty")]) == 2
    assert "no progress exports" in capsys.readouterr().err


def _file_under_a_file(tmp_path: Path) -> Path:
    """A scratch folder that cannot be written, even as root (who writes through a chmod 0o555): a
    folder inside a regular file, so creating it or anything in it fails (NotADirectoryError)."""
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    return blocker / "scratch"


def _write_refused(*_args, **_kwargs):
    raise PermissionError(13, "Permission denied")


@pytest.mark.parametrize("how", ["a folder inside a file", "writes refused"])
def test_an_export_to_an_unwritable_scratch_folder_is_one_line_with_the_fix(how, tmp_path, monkeypatch, capsys):
    """Tests run as root, where a read-only folder still takes writes: the refusal is played instead,
    by a scratch folder inside a regular file or by refusing the export's write (PermissionError)."""
    monkeypatch.delenv(PROGRESS_ENV_VAR, raising=False)
    if how == "a folder inside a file":
        scratch = _file_under_a_file(tmp_path)
    else:
        scratch = tmp_path / "scratch"
        scratch.mkdir()
        monkeypatch.setattr("utils.progress.room.tempfile.mkstemp", _write_refused)
    monkeypatch.setenv(SCRATCH_ENV_VAR, str(scratch))
    assert main(["export"]) == 2
    out = capsys.readouterr()
    assert out.out == "" and out.err.count("\n") == 1 and "Traceback" not in out.err, out.err
    assert out.err.startswith(f"error: cannot write the export to {scratch} ("), out.err
    assert out.err.rstrip().endswith(f"pass --out with a folder you can write to, or set {SCRATCH_ENV_VAR} "
                                     "to a folder of your own"), out.err
    if scratch.parent.is_dir():
        assert sorted(p.name for p in scratch.iterdir()) in ([], ["progress.id"]), "a file half-written"


def test_exporting_again_elsewhere_keeps_the_learner_id(progress, tmp_path, capsys):
    out = tmp_path / "share"
    out.mkdir()
    for argv in (["export", "--out", str(out)], ["export", "--out", str(out)], ["export"]):
        assert main(argv) == 0
    written = [line.split()[1] for line in capsys.readouterr().out.splitlines()]
    assert len({Path(path).name for path in written}) == 1, written
    assert len(list(out.iterdir())) == 1


def test_the_learner_id_is_stable_where_the_scratch_folder_cannot_be_written(tmp_path, monkeypatch, capsys):
    """With nowhere to keep an id, exporting again must still replace the earlier file (the room would
    count the learner twice), and another learner (another progress file) still gets another id."""
    monkeypatch.delenv(PROGRESS_ENV_VAR, raising=False)
    monkeypatch.setenv(SCRATCH_ENV_VAR, str(_file_under_a_file(tmp_path)))
    out = tmp_path / "share"
    out.mkdir()
    assert main(["export", "--out", str(out)]) == 0
    assert main(["export", "--out", str(out)]) == 0
    assert len(list(out.iterdir())) == 1, sorted(p.name for p in out.iterdir())
    first = export_summary()["learner"]
    assert export_summary()["learner"] == first
    monkeypatch.setenv(SCRATCH_ENV_VAR, str(tmp_path / "a-file" / "other-scratch"))
    assert export_summary()["learner"] != first
    capsys.readouterr()


def _record(path: Path, key: str, outcome: str, reason: str | None = None) -> None:
    append({"v": 1, "time": "2026-01-01T10:00:00+00:00", "notebook": "42_demo", "key": key,
            "outcome": outcome, "reason": reason}, path)


def test_make_progress_prints_a_plain_table_and_the_next_exercise(progress, tmp_path, monkeypatch, capsys):
    notebooks = tmp_path / "notebooks"
    notebooks.mkdir()
    demo_notebook(notebooks / "42_demo.ipynb")
    monkeypatch.setattr("utils.progress.catalogue.NOTEBOOKS_DIR", notebooks)

    assert main([]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[-1] == "next: notebook 42 §1 Exercise 1 · Double it", out

    _record(progress, "check_double(answer)", RIGHT)
    _record(progress, "check_pair(a, b)", WRONG, "pair: yours 1, expected 2")
    assert main(["show"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("1 of 3 exercises right, 1 wrong, 1 not attempted")
    table = lines[lines.index("") + 1:]
    assert table == [
        "notebook  exercises  right  wrong  not attempted  revisit",
        "42_demo           3      1      1              1  42 §1",
        "",
        "next: notebook 42 Exercise 2 · Again",
    ], "\n".join(lines)
    assert "NaN" not in "\n".join(lines)

    _record(progress, "check_pair(a, b)", RIGHT)
    _record(progress, "check_c(c)", RIGHT)
    assert main([]) == 0
    last = capsys.readouterr().out.splitlines()[-1]
    assert last.startswith("all 3 exercises right: well done") and "next:" not in last


def test_make_progress_says_to_rerun_where_the_data_changed_not_that_it_is_wrong(progress, tmp_path, monkeypatch,
                                                                                 capsys):
    notebooks = tmp_path / "notebooks"
    notebooks.mkdir()
    demo_notebook(notebooks / "42_demo.ipynb")
    monkeypatch.setattr("utils.progress.catalogue.NOTEBOOKS_DIR", notebooks)
    _record(progress, "check_double(answer)", RIGHT)
    _record(progress, "check_pair(a, b)", WRONG, "pair: yours 1, expected 2")
    _record(progress, "check_pair(a, b)", DATA_CHANGED, "the data files were changed after generation (x); "
                                                        "regenerate them with `make data`")
    _record(progress, "check_c(c)", NOT_ATTEMPTED)
    assert main(["show"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("1 of 3 exercises right, 0 wrong, 1 not attempted, 1 data changed"), lines
    assert lines[1] == ("Data changed under these checks, not your answer: regenerate the data as the line says, "
                        "then re-run the notebook from the top:")
    assert lines[2] == ("  42_demo, Exercise 2 · Again: the data files were changed after generation (x); "
                        "regenerate them with `make data`")
    assert "Revisit:" not in lines
    table = lines[lines.index("") + 1:]
    assert table == [
        "notebook  exercises  right  wrong  not attempted  data changed  revisit",
        "42_demo           3      1      0              1             1",
        "",
        "next: notebook 42 Exercise 2 · Again (re-run the notebook from the top: the data changed)",
    ], "\n".join(lines)


def test_the_room_does_not_count_changed_data_as_wrong(tmp_path, capsys):
    room = tmp_path / "room"
    room.mkdir()
    n_rows, by_store = "check_row_count(n_rows)", "check_grouped(by_store)"
    (room / "a.json").write_text(json.dumps(export("a" * 12, {n_rows: DATA_CHANGED, by_store: WRONG})))
    (room / "b.json").write_text(json.dumps(export("b" * 12, {n_rows: DATA_CHANGED, by_store: RIGHT})))
    assert main(["collect", str(room)]) == 0
    out = capsys.readouterr()
    assert out.err == ""
    assert "most often wrong: 03 Exercise 1 · Total sales per store (50 % of the room)" in out.out
    assert ("data changed under 2 learners' checks (not wrong answers: they regenerate the data, then re-run "
            "the notebook from the top)") in out.out
    table = collect(room).exercises
    assert list(table[WRONG]) == [0, 1] and list(table[DATA_CHANGED]) == [2, 0]
    assert list(table[f"share {DATA_CHANGED}"]) == [1.0, 0.0]
    learners = (room / LEARNERS_CSV).read_text().splitlines()
    assert learners[0] == "learner,name,right,wrong,not attempted,data changed,wrong exercises"
    assert learners[1] == f"{'a' * 12},,0,1,0,1,03 Exercise 1"
    axes = draw_chart(table, 2).axes[0]
    assert DATA_CHANGED in [text.get_text() for text in axes.figure.legends[0].get_texts()]


def test_an_export_keeps_the_data_changed_status(progress, tmp_path):
    record_outcome(["n_rows"], "check_row_count", DATA_CHANGED, "the data files were changed after generation")
    data = read_export(write_export(tmp_path))
    assert {row["outcome"] for row in data["exercises"]} == {DATA_CHANGED, NOT_ATTEMPTED}


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
def test_make_progress_runs_the_module():
    done = subprocess.run(["make", "-n", "progress"], cwd=REPO_ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and "/bin/python -m utils.progress" in done.stdout
