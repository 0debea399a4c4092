"""The learner's workspace (tools.workspace): seeded from the course's notebooks, updated without
losing a learner's answers, never written half, ignored by git; `make lab` opens it."""

from __future__ import annotations

import shutil
import subprocess

import nbformat
import pytest

from tools import workspace
from tools.workspace import cell_texts, sync
from utils.base.paths import NOTEBOOKS_DIR, REPO_ROOT, WORKSPACE_DIR
from utils.notebook_grammar import TEMPLATE_NAME, course_notebooks, exercises, learners_answer_cell

NOTEBOOK = "03_groupby_sum.ipynb"


@pytest.fixture
def course(tmp_path):
    folder = tmp_path / "notebooks"
    shutil.copytree(NOTEBOOKS_DIR, folder)
    return folder


def _actions(changes) -> dict[str, str]:
    return {change.notebook: change.action for change in changes}


def _answer(path, text: str | None = None) -> str:
    """The first exercise's answer cell of a notebook: read it, or write ``text`` into it."""
    nb = nbformat.read(path, as_version=4)
    cell = nb.cells[learners_answer_cell(nb.cells, exercises(nb)[0].check_cell)]
    if text is not None:
        cell.source = text
        nbformat.write(nb, path)
    return cell.source


def _course_edit(path, text: str) -> None:
    """A new course version: the first markdown cell gains a sentence."""
    nb = nbformat.read(path, as_version=4)
    next(cell for cell in nb.cells if cell.cell_type == "markdown").source += f"\n\n{text}"
    nbformat.write(nb, path)


def test_seeding_copies_the_course_notebooks_and_nothing_else(course, tmp_path):
    mine = tmp_path / "workspace"
    changes = sync(course, mine)
    assert set(_actions(changes).values()) == {"added"}
    assert [p.name for p in course_notebooks(mine)] == [p.name for p in course_notebooks(course)]
    assert sorted(p.name for p in mine.iterdir() if not p.name.startswith(".")) == sorted(
        p.name for p in course_notebooks(course))
    assert not (mine / TEMPLATE_NAME).exists() and not (mine / "index.yml").exists()
    assert set(_actions(sync(course, mine)).values()) == {"unchanged"}  # a second run changes nothing


def test_a_new_course_version_replaces_a_copy_the_learner_only_ran(course, tmp_path):
    mine = tmp_path / "workspace"
    sync(course, mine)
    ran = nbformat.read(mine / NOTEBOOK, as_version=4)
    ran.metadata["language_info"]["version"] = "3.99.0"  # Lab and a run change metadata and outputs only
    nbformat.write(ran, mine / NOTEBOOK)
    _course_edit(course / NOTEBOOK, "A sentence the course added.")
    assert _actions(sync(course, mine))[NOTEBOOK] == "updated"
    assert "A sentence the course added." in (mine / NOTEBOOK).read_text()
    assert not (mine / workspace.PREVIOUS_FOLDER).exists()


def test_an_update_keeps_the_learners_answer_and_their_whole_earlier_copy(course, tmp_path):
    mine = tmp_path / "workspace"
    sync(course, mine)
    _answer(mine / NOTEBOOK, "by_store = 'my own answer'")
    learners_file = (mine / NOTEBOOK).read_bytes()
    _course_edit(course / NOTEBOOK, "A sentence the course added.")
    [change] = [c for c in sync(course, mine) if c.notebook == NOTEBOOK]
    assert change.action == "merged" and "Exercise 1" in change.detail, change.line()
    assert _answer(mine / NOTEBOOK) == "by_store = 'my own answer'"
    assert "A sentence the course added." in (mine / NOTEBOOK).read_text()
    [previous] = (mine / workspace.PREVIOUS_FOLDER).iterdir()
    assert previous.read_bytes() == learners_file
    assert _actions(sync(course, mine))[NOTEBOOK] == "kept"  # merged once: the next run leaves it


def test_a_learners_edit_stays_while_the_course_has_not_changed(course, tmp_path):
    mine = tmp_path / "workspace"
    sync(course, mine)
    _answer(mine / NOTEBOOK, "by_store = 1")
    before = (mine / NOTEBOOK).read_bytes()
    assert _actions(sync(course, mine))[NOTEBOOK] == "kept"
    assert (mine / NOTEBOOK).read_bytes() == before


def test_a_copy_without_its_course_version_is_merged_not_overwritten(course, tmp_path):
    mine = tmp_path / "workspace"
    sync(course, mine)
    shutil.rmtree(mine / workspace.BASE_FOLDER)  # e.g. a workspace copied by hand
    _answer(mine / NOTEBOOK, "by_store = 2")
    assert _actions(sync(course, mine))[NOTEBOOK] == "merged"
    assert _answer(mine / NOTEBOOK) == "by_store = 2"


def test_a_notebook_the_course_dropped_is_kept(course, tmp_path):
    mine = tmp_path / "workspace"
    sync(course, mine)
    (course / NOTEBOOK).unlink()
    assert _actions(sync(course, mine))[NOTEBOOK] == "kept"
    assert (mine / NOTEBOOK).exists()


def test_a_failed_write_leaves_the_learners_file_whole(course, tmp_path, monkeypatch):
    mine = tmp_path / "workspace"
    sync(course, mine)
    _answer(mine / NOTEBOOK, "by_store = 3")
    before = (mine / NOTEBOOK).read_bytes()
    _course_edit(course / NOTEBOOK, "More.")

    def fail(*_args, **_kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(workspace.nbformat, "write", fail)
    with pytest.raises(OSError, match="disk full"):
        sync(course, mine)
    assert (mine / NOTEBOOK).read_bytes() == before
    assert not [p for p in mine.iterdir() if p.name.endswith(".tmp")]


def test_the_cli_says_what_it_did_and_fails_in_one_line(monkeypatch, tmp_path, capsys):
    monkeypatch.setattr(workspace, "WORKSPACE_DIR", tmp_path / "workspace")
    monkeypatch.setattr(workspace, "sync", lambda: sync(NOTEBOOKS_DIR, tmp_path / "workspace"))
    assert workspace.main([]) == 0
    assert "added     00_environment_check.ipynb" in capsys.readouterr().out
    monkeypatch.setattr(workspace, "sync", lambda: sync(tmp_path / "nowhere", tmp_path / "workspace"))
    assert workspace.main([]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: workspace not updated: no course notebooks in") and err.count("\n") == 1


def test_the_workspace_is_ignored_by_git_and_make_lab_opens_it():
    ignored = subprocess.run(["git", "check-ignore", "-q", f"{WORKSPACE_DIR.name}/{NOTEBOOK}"], cwd=REPO_ROOT,
                             check=False)
    assert ignored.returncode == 0, "workspace/ must be git-ignored: a learner's answers never reach a commit"
    makefile = (REPO_ROOT / "Makefile").read_text()
    assert f"FIRST_NOTEBOOK := {WORKSPACE_DIR.name}/00_environment_check.ipynb" in makefile
    assert "$(BIN)/python -m tools.workspace" in makefile


def test_cell_texts_ignore_outputs_and_metadata():
    nb = nbformat.read(NOTEBOOKS_DIR / NOTEBOOK, as_version=4)
    ran = nbformat.from_dict(nb)
    for cell in ran.cells:
        cell.metadata["tags"] = ["x"]
        if cell.cell_type == "code":
            cell.outputs = [nbformat.v4.new_output("stream", text="ran\n")]
    assert cell_texts(ran) == cell_texts(nb)
