"""The site's source tree: the repository's pages, laid out as in the repository, links pointed at the site.

``notebooks/NN_topic.ipynb`` (the executed copies, labelled), ``docs/`` (with its charts),
``CONTRIBUTING.md``, ``data/README.md``, the README as ``readme/<section>.md`` and the landing
page ``index.md``. Beside it, ``extra/notebooks/`` holds the notebooks as committed (the pages'
download links; written by the build before it executes them, ``tools/site/committed.py``).
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

import nbformat

from tools.course_index import Course
from tools.site.committed import refuse_other_sources
from tools.site.execute import Execution
from tools.site.labels import label, with_label
from tools.site.landing import landing_page
from tools.site.layout import CONFIG_DIR, BuildDirs
from tools.site.links import README, LinkMap
from tools.site.readme import Readme, split_readme
from utils.base.paths import REPO_ROOT

# Pages besides the notebooks and the README, in the sidebar under these captions.
GUIDES = "Guides and measurements"  # every docs/*.md, alphabetically
PROJECT = "Working on the course"
PROJECT_PAGES = ("data/README.md", "CONTRIBUTING.md")


@dataclass(frozen=True)
class Staged:
    """What went into the source tree: the link map, and the sidebar sections after the notebooks."""

    links: LinkMap
    sections: dict[str, list[str]]


def plan(course: Course, readme: Readme, repository: str | None, root: Path = REPO_ROOT) -> Staged:
    """Which repository file becomes which site page, and the sidebar's sections."""
    links = LinkMap(root, repository)
    for section in readme.sections:
        for anchor in section.anchors():
            links.readme_anchors.setdefault(anchor, section.page)
    docs = sorted(p.relative_to(root).as_posix() for p in (root / "docs").glob("*.md"))
    assets = sorted(p.relative_to(root).as_posix() for p in (root / "docs").rglob("*")
                    if p.is_file() and p.suffix != ".md")
    for path in [*docs, *assets, *PROJECT_PAGES]:
        links.staged[path] = path
    for nb in course.notebooks:
        links.staged[f"notebooks/{nb.file}"] = f"notebooks/{nb.file}"
    sections = {"About the course": [s.page for s in readme.sections], GUIDES: docs, PROJECT: list(PROJECT_PAGES)}
    return Staged(links, sections)


def stage(dirs: BuildDirs, course: Course, executions: list[Execution], repository: str | None, rows: int,
          root: Path = REPO_ROOT) -> Staged:
    """Write the source tree from the executed copies and the repository's pages; every executed copy
    must be of the committed notebook in ``dirs.shipped`` (``committed.NotCommitted`` otherwise)."""
    refuse_other_sources(executions, {execution.notebook.file: dirs.shipped / execution.notebook.file
                                      for execution in executions})
    readme = split_readme((root / README).read_text())
    staged = plan(course, readme, repository, root)
    links = staged.links
    shutil.rmtree(dirs.source, ignore_errors=True)
    dirs.source.mkdir(parents=True)

    def write(page: str, text: str) -> None:
        (dirs.source / page).parent.mkdir(parents=True, exist_ok=True)
        (dirs.source / page).write_text(text)

    landing = landing_page(CONFIG_DIR / "landing.md", course, readme, staged.sections, binder=repository is not None)
    write("index.md", links.rewrite(landing, README, "index.md"))
    for section in readme.sections:
        write(section.page, links.rewrite(section.as_page(), README, section.page))
    for repo_path, page in links.staged.items():
        if repo_path.endswith(".md"):
            write(page, links.rewrite((root / repo_path).read_text(), repo_path, page))
        elif not repo_path.startswith("notebooks/"):
            (dirs.source / page).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(root / repo_path, dirs.source / page)
    for execution in executions:
        page = f"notebooks/{execution.notebook.file}"
        nb = nbformat.read(execution.path, as_version=4)
        for cell in nb.cells:
            if cell.cell_type == "markdown":
                cell.source = links.rewrite(cell.source, page, page)
        # The download beside the page (extra/notebooks/): the file the header's download button serves too.
        nb = with_label(nb, label(execution.notebook, nb, execution.day, rows, repository, execution.notebook.file))
        (dirs.source / page).parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(nb, dirs.source / page)
    return staged
