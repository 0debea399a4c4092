"""tools.run_times stores measured times in notebooks/index.yml without touching anything else."""

from __future__ import annotations

import shutil

import pytest

from tools import run_times
from tools.course_index import INDEX, load_course


def test_write_replaces_only_the_measured_numbers_and_the_date(tmp_path, monkeypatch):
    copy = tmp_path / "index.yml"
    shutil.copy(INDEX, copy)
    monkeypatch.setattr(run_times, "INDEX", copy)
    before = {nb.number: nb for nb in load_course(copy).notebooks}
    run_times.write("small", {"05": 123, "09": 4}, "a test machine")
    after = {nb.number: nb for nb in load_course(copy).notebooks}
    assert (after["05"].small_seconds, after["09"].small_seconds) == (123, 4)
    assert after["05"].tiny_seconds == before["05"].tiny_seconds
    assert {n: nb for n, nb in after.items() if n not in ("05", "09")} == {
        n: nb for n, nb in before.items() if n not in ("05", "09")}
    assert "on a test machine (" in copy.read_text()
    assert copy.read_text().count("\n") == INDEX.read_text().count("\n")


def test_unknown_notebook_is_a_one_line_error(capsys):
    assert run_times.main(["--scale", "tiny", "42"]) == 2
    assert capsys.readouterr().err.startswith("error: no notebook numbered 42")


def test_an_entry_without_run_seconds_is_refused(tmp_path, monkeypatch):
    copy = tmp_path / "index.yml"
    copy.write_text(INDEX.read_text().replace("run_seconds", "seconds_run"))
    monkeypatch.setattr(run_times, "INDEX", copy)
    with pytest.raises(SystemExit, match="no run_seconds for notebook 05"):
        run_times.write("tiny", {"05": 1}, "x")
