"""The built site's pages: one per notebook of the index, each rendered from a copy executed from the
notebook as committed and offering that notebook for download, no link to a placeholder URL, and
every internal link and anchor resolving."""

from __future__ import annotations

import hashlib
import re

import nbformat

from tools.course_index import INDEX, load_course
from tools.site.build import SiteError, render
from tools.site.committed import committed_bytes
from tools.site.execute import SOURCE_HASH
from tools.site.labels import LABEL_CLASS
from tools.site.layout import BuildDirs
from tools.site.linkcheck import check_site
from tools.site.toc import notebook_page
from utils.base.paths import REPO_ROOT

COURSE = load_course(REPO_ROOT / INDEX)


def test_every_internal_link_and_anchor_resolves(html):
    report = check_site(html)
    assert report.broken == [], "\n".join(f"{page}: {link} ({why})" for page, link, why in report.broken)
    assert report.internal > 1000 and report.pages >= len(COURSE.notebooks) + 10, report.summary()


def test_every_notebook_is_rendered_from_a_copy_of_the_committed_notebook(site):
    for nb in COURSE.notebooks:
        committed = committed_bytes(REPO_ROOT / "notebooks" / nb.file, REPO_ROOT)
        executed = nbformat.read(site.executed / nb.file, as_version=4)
        assert executed.metadata[SOURCE_HASH] == hashlib.sha256(committed).hexdigest(), (
            f"{nb.file}: the executed copy is not of the committed notebook (a commit, or a run of an edited "
            "notebook, since the site was built): make site again")
        assert (site.html / "notebooks" / nb.file).read_bytes() == committed, f"{nb.file}: the download"
        code = [cell for cell in executed.cells if cell.cell_type == "code"]
        assert all(cell.execution_count for cell in code), f"{nb.file}: a code cell was not executed"
        page = (site.html / f"{notebook_page(nb)}.html").read_text()
        assert LABEL_CLASS in page and "cell_output" in page, nb.file
        assert not (site.html / "_sources" / "notebooks" / nb.file).exists(), f"{nb.file}: a second download"


# A placeholder written for someone to replace (pyproject.toml's YOUR-GITHUB-ORG), or a documentation
# domain (example.com/.org/.net): no page may link to either.
PLACEHOLDER = re.compile(r"YOUR[-_][A-Z][A-Z_-]+")
PLACEHOLDER_HOST = re.compile(r"""(?:href|src)=["'][a-z+]+://(?:[^/"']*\.)?example\.(?:com|org|net)\b""", re.I)


def test_no_page_links_a_placeholder_url(html):
    found = [f"{page.relative_to(html)}: {match.group(0)}" for page in sorted(html.rglob("*.html"))
             for pattern in (PLACEHOLDER, PLACEHOLDER_HOST) for match in pattern.finditer(page.read_text())]
    assert not found, f"{len(found)} placeholder URLs on the site, e.g.:\n" + "\n".join(found[:10])


def test_a_sphinx_warning_fails_the_build(tmp_path):
    dirs = BuildDirs(tmp_path)
    dirs.source.mkdir(parents=True)
    dirs.extra.mkdir()
    (dirs.source / "index.md").write_text("# A page\n\nA link to [nowhere](missing.md).\n")
    try:
        render(dirs)
    except SiteError as error:
        assert "warnings or errors" in str(error) and "missing.md" in str(error)
    else:
        raise AssertionError("a link to a missing page built without failing")


def _render_one_notebook(root) -> str:
    """The page of a one-cell notebook rendered with the site's configuration: its HTML."""
    dirs = BuildDirs(root)
    (dirs.source / "notebooks").mkdir(parents=True)
    dirs.shipped.mkdir(parents=True)
    (dirs.source / "index.md").write_text("# Home\n\n```{toctree}\n:hidden:\n\nnotebooks/00_demo\n```\n")
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("# 00 · Demo"),
                                         nbformat.v4.new_code_cell("1 + 1", execution_count=1)])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, dirs.source / "notebooks" / "00_demo.ipynb")
    nbformat.write(nb, dirs.shipped / "00_demo.ipynb")
    render(dirs)
    return (dirs.html / "notebooks" / "00_demo.html").read_text()


def test_repository_and_binder_links_appear_only_for_a_configured_repository(tmp_path, monkeypatch):
    monkeypatch.setenv("COURSE_REPOSITORY_URL", "https://github.com/rapids-course/dask-multi-gpu-course")
    page = _render_one_notebook(tmp_path / "configured")
    assert 'href="https://github.com/rapids-course/dask-multi-gpu-course"' in page, "the repository icon"
    assert "https://mybinder.org/v2/gh/rapids-course/dask-multi-gpu-course/HEAD" in page, "the launch button"
    monkeypatch.setenv("COURSE_REPOSITORY_URL", "https://github.com/YOUR-GITHUB-ORG/dask-multi-gpu-course")
    page = _render_one_notebook(tmp_path / "placeholder")
    assert "github.com" not in page and "mybinder.org" not in page and "YOUR-GITHUB-ORG" not in page
    assert 'href="00_demo.ipynb"' in page, "the header's download is the notebook beside the page"
