"""The built site's pages: one per notebook of the index, each rendered from a copy executed by the
build from the notebook as it is now, and every internal link and anchor resolving."""

from __future__ import annotations

import nbformat

from tools.course_index import INDEX, load_course
from tools.site.build import SiteError, render
from tools.site.execute import SOURCE_HASH, source_hash
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


def test_every_notebook_is_rendered_from_a_copy_the_build_executed(site):
    for nb in COURSE.notebooks:
        executed = nbformat.read(site.executed / nb.file, as_version=4)
        assert executed.metadata[SOURCE_HASH] == source_hash(REPO_ROOT / "notebooks" / nb.file), (
            f"{nb.file} changed after the site was built: make site again")
        code = [cell for cell in executed.cells if cell.cell_type == "code"]
        assert all(cell.execution_count for cell in code), f"{nb.file}: a code cell was not executed"
        page = (site.html / f"{notebook_page(nb)}.html").read_text()
        assert LABEL_CLASS in page and "cell_output" in page, nb.file
        assert (site.html / "notebooks" / nb.file).is_file(), f"{nb.file}: the download link's file"


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
