"""The site shows the course as committed: a learner's edit to a notebook in the working tree (an
exercise solved in Lab) reaches neither a page nor a download, and an executed copy of an edited
notebook is refused before rendering."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import nbformat
import pytest

from tools.course_index import INDEX, Course, load_course
from tools.site.committed import NotCommitted, committed_bytes, refuse_other_sources, ship
from tools.site.execute import Execution, execute_all, stamp
from tools.site.labels import BUILD_SCALE
from tools.site.layout import BuildDirs
from utils.base.paths import REPO_ROOT

NOTEBOOK = load_course(REPO_ROOT / INDEX).notebook("03")
ANSWER = "totals = learner_answer()"
pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(root), "-c", "user.name=course", "-c", "user.email=course@localhost",
                    *args], check=True, capture_output=True)


def _notebook(answer: str = "# Your code here") -> nbformat.NotebookNode:
    return nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("# 03 · Title"),
                                           nbformat.v4.new_code_cell(answer)])


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    """A git checkout whose notebook 03 is committed, then solved in the working tree."""
    root = tmp_path / "course"
    (root / "notebooks").mkdir(parents=True)
    nbformat.write(_notebook(), root / "notebooks" / NOTEBOOK.file)
    _git(root, "init", "-q")
    _git(root, "add", ".")
    _git(root, "commit", "-q", "-m", "course")
    nbformat.write(_notebook(ANSWER), root / "notebooks" / NOTEBOOK.file)
    return root


def _executed_copy(source: Path, target: Path) -> None:
    """An executed copy of ``source`` as the test suite's CPU pass stamps it."""
    nb = nbformat.read(source, as_version=4)
    nb.cells[1].execution_count = 1
    stamp(nb, source, 1.0, BUILD_SCALE, "local")
    target.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, target)


def test_an_edited_notebook_does_not_reach_the_site(checkout, tmp_path, monkeypatch):
    dirs = BuildDirs(tmp_path / "site")
    shipped = ship([NOTEBOOK.file], checkout, dirs.shipped)
    committed = subprocess.run(["git", "-C", str(checkout), "show", f"HEAD:notebooks/{NOTEBOOK.file}"],
                               capture_output=True, check=True).stdout
    assert shipped[NOTEBOOK.file].read_bytes() == committed, "the download is the committed notebook"
    # The learner ran the tests after solving: the suite's copy is of the edited notebook. The build
    # must not reuse it, and executes the committed notebook instead.
    _executed_copy(checkout / "notebooks" / NOTEBOOK.file, dirs.executed / NOTEBOOK.file)
    ran: list[Path] = []

    def execute(notebook, source, target, workdir):  # the kernel's part: a copy of what it was given
        ran.append(source)
        _executed_copy(source, target)
        return Execution(notebook, target, 1.0, False, None, "2026-01-02")

    monkeypatch.setattr("tools.site.execute.execute", execute)
    executions = execute_all([(NOTEBOOK, shipped[NOTEBOOK.file])], dirs.executed, dirs.run, log=lambda line: None)
    assert ran == [shipped[NOTEBOOK.file]]
    refuse_other_sources(executions, shipped)
    assert ANSWER not in executions[0].path.read_text(), "the page is rendered from the committed notebook"


def test_an_executed_copy_of_an_edited_notebook_is_refused_in_one_line(checkout, tmp_path):
    dirs = BuildDirs(tmp_path / "site")
    shipped = ship([NOTEBOOK.file], checkout, dirs.shipped)
    _executed_copy(checkout / "notebooks" / NOTEBOOK.file, dirs.executed / NOTEBOOK.file)
    edited = Execution(NOTEBOOK, dirs.executed / NOTEBOOK.file, 1.0, True, None, "2026-01-02")
    with pytest.raises(NotCommitted, match=f"notebooks/{NOTEBOOK.file} that is not the committed one") as error:
        refuse_other_sources([edited], shipped)
    assert "\n" not in str(error.value)


def test_the_build_command_reports_a_refusal_in_one_line_and_fails(monkeypatch, capsys):
    from tools.site import __main__ as cli
    from tools.site.build import SiteError

    def refused(dirs, reuse):
        raise SiteError(str(NotCommitted("build/site/executed/03.ipynb was executed from a notebooks/03.ipynb "
                                         "that is not the committed one")))

    monkeypatch.setattr(cli, "build", refused)
    assert cli.main(["build"]) == 1
    assert capsys.readouterr().err.count("\n") == 1


def test_outside_a_git_checkout_the_working_tree_is_the_course(tmp_path):
    root = tmp_path / "tarball"
    (root / "notebooks").mkdir(parents=True)
    nbformat.write(_notebook(ANSWER), root / "notebooks" / NOTEBOOK.file)
    path = root / "notebooks" / NOTEBOOK.file
    assert committed_bytes(path, root) == path.read_bytes()


def test_a_notebook_not_yet_committed_comes_from_the_working_tree(checkout):
    new = checkout / "notebooks" / "10_new.ipynb"
    nbformat.write(_notebook(), new)
    assert committed_bytes(new, checkout) == new.read_bytes()


def _broken_build(root: Path, tmp_path: Path, monkeypatch) -> int:
    """``python -m tools.site build`` on a course of one notebook in ``root``, built under ``tmp_path``;
    executing a notebook fails the test (a file that is not a notebook must stop the build before)."""
    from tools.site import __main__ as cli

    def no_execution(*_args, **_kwargs):
        raise AssertionError("a notebook was executed although one is not a notebook")

    monkeypatch.setattr("tools.site.build.REPO_ROOT", root)
    monkeypatch.setattr("tools.site.build.load_course", lambda _path: Course((NOTEBOOK,), (), ""))
    monkeypatch.setattr("tools.site.build.execute_all", no_execution)
    monkeypatch.setattr(cli, "BUILD_DIR", tmp_path / "site")
    return cli.main(["build"])


def test_a_committed_notebook_that_is_not_json_stops_the_build_in_one_line(checkout, tmp_path, monkeypatch, capsys):
    (checkout / "notebooks" / NOTEBOOK.file).write_text("not json\n")
    _git(checkout, "commit", "-q", "-a", "-m", "broken")
    assert _broken_build(checkout, tmp_path, monkeypatch) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    assert err.startswith(f"error: notebooks/{NOTEBOOK.file} as committed (HEAD) is not a notebook (not JSON: "), err
    assert err.rstrip().endswith("commit a valid one, or take it out of notebooks/index.yml"), err


NOT_NOTEBOOKS = {"text": "not json\n", "empty": "", "a list": "[1, 2]\n", "cells not a list": '{"cells": 1}\n'}


@pytest.mark.parametrize("text", NOT_NOTEBOOKS.values(), ids=NOT_NOTEBOOKS.keys())
def test_a_working_tree_file_that_is_not_a_notebook_stops_the_build_in_one_line(text, tmp_path, monkeypatch, capsys):
    root = tmp_path / "tarball"
    (root / "notebooks").mkdir(parents=True)
    (root / "notebooks" / NOTEBOOK.file).write_text(text)
    assert _broken_build(root, tmp_path, monkeypatch) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    assert err.startswith(f"error: notebooks/{NOTEBOOK.file} is not a notebook ("), err
    assert err.rstrip().endswith("fix it, or take it out of notebooks/index.yml"), err
