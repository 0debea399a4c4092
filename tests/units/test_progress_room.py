"""``collect`` over a folder that learners can write to (a shared JupyterHub folder): whatever a
learner plants there (links, pipes, devices, huge or deeply nested files, escape sequences,
spreadsheet formulas, exercises the course does not have, another learner's id) is skipped or
neutralised with one line, and the room table, the chart and the files outside stay as they were."""

from __future__ import annotations

import csv
import json
import os
import signal
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from utils.progress.catalogue import course_exercises
from utils.progress.cli import main
from utils.progress.room import EXPORT_FORMAT, EXPORT_VERSION, LEARNERS_CSV, ROOM_CSV, ROOM_PNG
from utils.progress.store import RIGHT, WRONG

GOOD, THIEF = "a" * 12, "b" * 12
N_ROWS = "check_row_count(n_rows)"
OUTSIDE_TEXT = "the instructor's own file\n"
SECONDS = 20  # far more than collect needs; a read that blocks or never ends fails the test instead of hanging it


def export(learner: str, rows: list[tuple[str, str, str]], name: str | None = None,
           exported: str = "2026-01-01T09:00:00+00:00") -> str:
    return json.dumps({"format": EXPORT_FORMAT, "version": EXPORT_VERSION, "learner": learner, "name": name,
                       "exported": exported,
                       "exercises": [{"notebook": nb, "exercise": ex, "outcome": o} for nb, ex, o in rows]})


def course_row(key: str, outcome: str) -> tuple[str, str, str]:
    exercise = next(e for e in course_exercises() if e.key == key)
    return exercise.notebook, exercise.title, outcome


@dataclass
class Case:
    plant: Callable[[Path, Path], None]  # (room, outside)
    err: str  # a line of stderr contains it
    room_right: int = 1  # learners counted right for N_ROWS


def link(target: str | Path, name: str) -> Callable[[Path, Path], None]:
    def plant(room: Path, outside: Path) -> None:
        (room / name).symlink_to(outside / target if isinstance(target, str) else target)
    return plant


def write(name: str, text: str) -> Callable[[Path, Path], None]:
    def plant(room: Path, outside: Path) -> None:
        (room / name).write_text(text, encoding="utf-8")
    return plant


def fifo(room: Path, outside: Path) -> None:
    os.mkfifo(room / "x.json")


def sparse(room: Path, outside: Path) -> None:
    with open(room / "big.json", "wb") as handle:
        handle.truncate(1 << 30)  # 1 GiB that takes no disk


CASES = {
    "link as room-learners.csv": Case(link("secret.txt", LEARNERS_CSV), ""),
    "dangling link as room-progress.csv": Case(link("created.csv", ROOM_CSV), ""),
    "named pipe": Case(fifo, "skipped x.json: not a regular file"),
    "link to /dev/zero": Case(link(Path("/dev/zero"), "zero.json"), "skipped zero.json: a link"),
    "1 GiB sparse file": Case(sparse, "skipped big.json: larger than 1 MiB"),
    "deeply nested JSON": Case(write("deep.json", "[" * 200_000), "skipped deep.json: not JSON"),
    "escapes in a file name": Case(write("\x1b[2J\x1b[31mred.json", "{}"), "skipped \\x1b[2J\\x1b[31mred.json: "),
    "escapes in an exercise title": Case(
        write("t.json", export("c" * 12, [("03_groupby_sum", "\x1b[2J\x1b]0;owned\x07PWNED", WRONG)])),
        "t.json: 1 exercise the course does not have (\\x1b[2J\\x1b]0;owned\\x07PWNED) left out"),
    "an exercise the course does not have": Case(
        write("p.json", export("c" * 12, [("03_groupby_sum", "PWNED", WRONG), course_row(N_ROWS, RIGHT)])),
        "p.json: 1 exercise the course does not have (PWNED) left out", room_right=2),
    "formulas as names": Case(write("f.json", export("c" * 12, [], name="@SUM(1+1)*cmd|' /C calc'!A0")), ""),
    "a 5,000-character name": Case(write("long.json", export("c" * 12, [], name="x" * 5000)),
                                   "skipped long.json: a name of 5000 characters (at most 80)"),
    "another learner's id with a future date": Case(
        write("stolen.json", export(GOOD, [course_row(N_ROWS, WRONG)], exported="2999-01-01T00:00:00+00:00")),
        f"learner {GOOD} claimed by good.json, stolen.json: counted good.json; "
        "stolen.json says it was exported in the future (2999-01-01T00:00:00+00:00)"),
}


@pytest.fixture
def deadline() -> Iterator[None]:
    """A collect that blocks (a pipe) or reads for ever (a device) raises instead of hanging the suite."""
    def expire(signum, frame):
        raise TimeoutError(f"collect still running after {SECONDS} s")
    previous = signal.signal(signal.SIGALRM, expire)
    signal.alarm(SECONDS)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, previous)


def snapshot(folder: Path) -> dict[str, str]:
    return {path.name: path.read_text() for path in folder.iterdir()}


@pytest.mark.parametrize("case", CASES.values(), ids=CASES.keys())
def test_collect_over_a_folder_learners_can_write_to(case, tmp_path, capsys, deadline):
    room, outside = tmp_path / "room", tmp_path / "outside"
    room.mkdir()
    outside.mkdir()
    (outside / "secret.txt").write_text(OUTSIDE_TEXT)
    (room / "good.json").write_text(export(GOOD, [course_row(N_ROWS, RIGHT)], name="=HYPERLINK(\"http://x\")"))
    case.plant(room, outside)
    before = snapshot(outside)

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        code = main(["collect", str(room)])
    out = capsys.readouterr()

    assert code == 0, out.err
    assert case.err in out.err, out.err
    assert all(ch == "\n" or ch.isprintable() for ch in out.out + out.err), "raw control characters printed"
    assert [str(w.message) for w in caught] == []
    assert snapshot(outside) == before, "a file outside the folder was written"
    for name in (ROOM_CSV, ROOM_PNG, LEARNERS_CSV):
        assert (room / name).is_file() and not (room / name).is_symlink()
    with open(room / ROOM_CSV, newline="", encoding="utf-8") as handle:
        table = list(csv.DictReader(handle))
    assert {(row["notebook"], row["exercise"]) for row in table} <= {(e.notebook, e.title) for e in course_exercises()}
    assert [int(row[RIGHT]) for row in table if row["exercise"] == course_row(N_ROWS, RIGHT)[1]] == [case.room_right]
    with open(room / LEARNERS_CSV, newline="", encoding="utf-8") as handle:
        names = {row["learner"]: row["name"] for row in csv.DictReader(handle)}
    assert names[GOOD] == "'=HYPERLINK(\"http://x\")"
    assert not any(name.startswith(("=", "+", "-", "@", "\t", "\r")) for name in names.values())
    assert all(len(name) <= 80 for name in names.values())
