"""``make clean-data`` deletes only what the course made: ``$COURSE_DATA_DIR`` may be a folder that
also holds the learner's own files (the README suggests a bigger disk)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from utils.base.paths import REPO_ROOT, SCRATCH_ENV_VAR
from utils.datagen import clean


def course_and_user_files(data: Path) -> tuple[list[str], list[str]]:
    """A data folder with what the course makes next to what a learner keeps there; returns the
    paths (relative to ``data``) that must go and those that must stay."""
    made = {
        "transactions-tiny/csv/part-00000.csv": "a,b\n",
        "transactions-tiny/manifest.json": json.dumps({"params": {"scale": "tiny"}}),
        ".transactions-tiny.tmp-999999999-0123abcd/csv/part-00000.csv": "a,b\n",  # no such pid
        "parquet-copy-k3j_9x2a/part.0.parquet": "PAR1",
        "scratch/parquet-copy/part.0.parquet": "PAR1",
        "scratch/parquet-copy/part.1.parquet": "PAR1",
        "scratch/dask-report-04.html": "<html></html>",
        "scratch/dashboard-04-status.png": "png",
        "scratch/06_cudf_pandas/monthly_by_region.py": "print()\n",
    }
    kept = {
        "scratch/paper/thesis.tex": "\\documentclass{article}\n",
        "scratch/progress.jsonl": "{}\n",
        "scratch/progress.id": "abc\n",
        "scratch/parquet-copy-notes.txt": "mine\n",
        "transactions-notes/2025.txt": "my notes\n",
        "transactions-small/results.csv": "no manifest: not the generator's\n",
        "transactions-medium/manifest.json": json.dumps({"params": {"scale": "tiny"}}),  # not its scale
        ".transactions-tiny.tmp-1-xyz/keep.txt": "not the generator's exact name\n",
        "parquet-copy-old/notes.md": "not a mkdtemp name\n",
        "parquet-copy-abcd1234/part.0.parquet": "PAR1",
        "parquet-copy-abcd1234/draft.docx": "the learner's file among parts\n",
        "README.md": "mine\n",
    }
    for rel, text in {**made, **kept}.items():
        path = data / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return sorted(made), sorted(kept)


def files_under(folder: Path) -> list[str]:
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())


def env_for(data: Path) -> dict[str, str]:
    env = {**os.environ, "COURSE_DATA_DIR": str(data)}
    env.pop(SCRATCH_ENV_VAR, None)
    return env


def test_make_clean_data_deletes_only_what_the_course_made(tmp_path):
    if shutil.which("make") is None:
        pytest.skip("make is not installed")
    data = tmp_path / "big-disk"
    made, kept = course_and_user_files(data)
    done = subprocess.run(["make", "-s", "clean-data"], cwd=REPO_ROOT, capture_output=True, text=True,
                          env=env_for(data), timeout=120)
    assert done.returncode == 0, done.stderr
    assert files_under(data) == kept
    lines = done.stdout.splitlines()
    listed = [line.strip().split("  (")[0] for line in lines if line.startswith("  ")]
    assert {Path(p).relative_to(data).as_posix() for p in listed} == {
        "transactions-tiny", ".transactions-tiny.tmp-999999999-0123abcd", "parquet-copy-k3j_9x2a",
        "scratch/parquet-copy", "scratch/dask-report-04.html", "scratch/dashboard-04-status.png",
        "scratch/06_cudf_pandas",
    }
    assert len(listed) == 7 and lines[-1].startswith("deleted 7 item(s)")


def test_each_item_is_listed_before_anything_is_deleted(tmp_path, capsys, monkeypatch):
    data = tmp_path / "data"
    made, kept = course_and_user_files(data)
    monkeypatch.delenv(SCRATCH_ENV_VAR, raising=False)
    events: list[str] = []
    monkeypatch.setattr(clean, "delete", lambda item: events.append(f"delete {item.path}"))
    monkeypatch.setattr(clean, "print", lambda *a, **k: events.append(" ".join(map(str, a))), raising=False)
    assert clean.main(["--data-dir", str(data)]) == 0
    deletes = [i for i, e in enumerate(events) if e.startswith("delete ")]
    listing = [i for i, e in enumerate(events) if e.startswith("  ")]
    assert len(listing) == len(deletes) == 7
    assert max(listing) < min(deletes)
    assert files_under(data) == sorted(made + kept)  # deleting was stubbed out


def test_dry_run_lists_and_deletes_nothing(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv(SCRATCH_ENV_VAR, raising=False)
    data = tmp_path / "data"
    course_and_user_files(data)
    before = files_under(data)
    assert clean.main(["--data-dir", str(data), "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "would delete 7 item(s)" in out and str(data / "transactions-tiny") in out
    assert f"keeping {data / 'transactions-notes'}" in out  # a look-alike says why it stays
    assert files_under(data) == before


def test_a_running_generators_temporary_is_kept(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv(SCRATCH_ENV_VAR, raising=False)
    running = tmp_path / f".transactions-tiny.tmp-{os.getpid()}-0123abcd"
    (running / "csv").mkdir(parents=True)
    assert clean.main(["--data-dir", str(tmp_path)]) == 0
    assert running.is_dir()
    assert "still running" in capsys.readouterr().out


def test_the_learners_scratch_folder_is_cleaned_too(tmp_path, capsys, monkeypatch):
    own = tmp_path / "own-scratch"
    (own / "parquet-copy").mkdir(parents=True)
    (own / "parquet-copy" / "part.0.parquet").write_text("PAR1")
    (own / "progress.jsonl").write_text("{}\n")
    monkeypatch.setenv(SCRATCH_ENV_VAR, str(own))
    assert clean.main(["--data-dir", str(tmp_path / "data")]) == 0
    assert files_under(own) == ["progress.jsonl"]


def test_an_empty_scratch_folder_goes_and_a_missing_data_folder_is_nothing_to_do(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv(SCRATCH_ENV_VAR, raising=False)
    (tmp_path / "scratch" / "parquet-copy").mkdir(parents=True)
    assert clean.main(["--data-dir", str(tmp_path)]) == 0
    assert list(tmp_path.iterdir()) == []
    assert clean.main(["--data-dir", str(tmp_path / "absent")]) == 0
    assert "nothing to delete" in capsys.readouterr().out


def test_a_data_folder_that_is_a_file_is_one_line(tmp_path):
    target = tmp_path / "data"
    target.write_text("not a folder")
    done = subprocess.run([sys.executable, "-m", "utils.datagen.clean", "--data-dir", str(target)],
                          cwd=REPO_ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        f"error: the data folder {target} is a file, not a folder; check $COURSE_DATA_DIR"
    ]
    assert target.read_text() == "not a folder"
