"""Every rendered notebook says which backend and scale made its outputs, refuses to say CPU when
the run was not, and offers Binder (the README badge's link, only for a configured repository),
make lab and the notebook as committed."""

from __future__ import annotations

import nbformat
import pytest

from tools.course_index import INDEX, load_course
from tools.site.labels import BUILD_SCALE, DishonestLabel, executed_backend, label, with_label
from tools.site.layout import binder_url, first_notebook, readme_launch_line, repository_url
from utils.base.paths import REPO_ROOT, WORKSPACE_DIR

COURSE = load_course(REPO_ROOT / INDEX)
SETUP_OUTPUT = ("Backend   : {backend} - COURSE_BACKEND was requested\n"
                "Cluster   : local cluster, 2 workers, 2 threads, 3.0 GiB memory limit in total\n")


def _executed(backend: str | None) -> nbformat.NotebookNode:
    cell = nbformat.v4.new_code_cell("client = utils.start_client()")
    if backend:
        cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text=SETUP_OUTPUT.format(backend=backend))]
    return nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("# 03 · Title\n\n**Overview.** x"), cell])


def test_the_label_names_backend_scale_and_that_gpus_differ():
    nb = _executed("cpu (pandas)")
    text = label(COURSE.notebook("03"), nb, "2026-01-02", 20_000, repository_url(), "03.ipynb")
    assert "CPU backend (pandas)" in text and f"`{BUILD_SCALE}` scale" in text and "20,000" in text
    assert "on the cluster its setup cell reports (local cluster, 2 workers, 2 threads" in text
    assert "NVIDIA GPUs (cudf backend" in text and "differ" in text
    assert "`make lab`" in text and '<a href="03.ipynb" download>download the notebook</a>' in text
    assert executed_backend(nb) == "cpu (pandas) - COURSE_BACKEND was requested"


def test_a_run_on_another_backend_is_refused():
    with pytest.raises(DishonestLabel, match="cudf"):
        label(COURSE.notebook("03"), _executed("gpu (cudf)"), "2026-01-02", 20_000, repository_url(), "03.ipynb")


def test_a_notebook_without_a_cluster_says_so():
    text = label(COURSE.notebook("09"), _executed(None), "2026-01-02", 20_000, repository_url(), "09.ipynb")
    assert "starts no cluster" in text


def test_the_binder_link_is_the_readme_badge_link(monkeypatch):
    monkeypatch.setenv("COURSE_REPOSITORY_URL", "https://github.com/rapids-course/dask-multi-gpu-course")
    first, repository = COURSE.notebooks[0], repository_url()
    opened = f"{WORKSPACE_DIR.name}/{first.file}"  # the learner's copy, which `make lab` and Binder open
    assert opened == first_notebook()
    badge = readme_launch_line(repository, opened)
    text = label(first, _executed("cpu (pandas)"), "2026-01-02", 20_000, repository, first.file)
    assert f"[launch it on Binder]({binder_url(repository, opened)})" in text
    assert binder_url(repository, opened) in badge
    assert f"then open `{opened}`" in text
    assert f"a clone of [the repository]({repository})" in text


def test_without_a_repository_the_label_links_neither_binder_nor_the_repository(monkeypatch):
    monkeypatch.setenv("COURSE_REPOSITORY_URL", "https://github.com/YOUR-GITHUB-ORG/dask-multi-gpu-course")
    assert repository_url() is None
    text = label(COURSE.notebook("03"), _executed("cpu (pandas)"), "2026-01-02", 20_000, None, "03.ipynb")
    assert "Binder" not in text and "github.com" not in text and "a clone of the repository" in text


def test_the_label_goes_under_the_title():
    nb = with_label(_executed("cpu (pandas)"), "LABEL")
    assert nb.cells[0].source.splitlines()[:3] == ["# 03 · Title", "", "LABEL"]
    with pytest.raises(ValueError, match="first cell"):
        with_label(nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("no title")]), "LABEL")
