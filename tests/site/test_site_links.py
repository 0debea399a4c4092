"""Repository links become site links: README sections are pages, files the site does not hold
are on the repository's web page (plain text while no repository is configured), and a link to
nothing stops the build with its name."""

from __future__ import annotations

import nbformat
import pytest

from tools.course_index import INDEX, load_course
from tools.site.layout import repository_url
from tools.site.links import BrokenLink, LinkMap, rewrite_targets
from tools.site.readme import split_readme
from tools.site.stage import plan
from utils.base.paths import REPO_ROOT

REPO = "https://github.com/owner/course"


@pytest.fixture
def links(tmp_path) -> LinkMap:
    (tmp_path / "LICENSE").write_text("license")
    (tmp_path / "tests").mkdir()
    links = LinkMap(tmp_path, REPO)
    links.staged.update({"docs/guide.md": "docs/guide.md", "notebooks/01_a.ipynb": "notebooks/01_a.ipynb"})
    links.readme_anchors.update({"for-whom": "readme/for-whom.md", "troubleshooting": "readme/troubleshooting.md"})
    return links


def test_links_between_pages_stay_relative(links):
    assert links.target("docs/guide.md#setup", "README.md", "index.md") == "docs/guide.md#setup"
    assert links.target("../docs/guide.md", "notebooks/01_a.ipynb", "notebooks/01_a.ipynb") == "../docs/guide.md"
    assert links.target("#here", "docs/guide.md", "docs/guide.md") == "#here"
    assert links.target("https://dask.org", "README.md", "index.md") == "https://dask.org"


def test_readme_anchors_go_to_the_section_pages(links):
    troubleshooting = links.target("#troubleshooting", "README.md", "readme/for-whom.md")
    assert troubleshooting == "troubleshooting.md#troubleshooting"
    assert links.target("#for-whom", "README.md", "readme/for-whom.md") == "#for-whom"
    assert links.target("../README.md#for-whom", "notebooks/01_a.ipynb", "notebooks/01_a.ipynb") == (
        "../readme/for-whom.md#for-whom")
    assert links.target("../README.md", "docs/guide.md", "docs/guide.md") == "../index.md"


def test_files_the_site_does_not_hold_link_to_the_repository(links):
    assert links.target("LICENSE", "README.md", "index.md") == f"{REPO}/blob/HEAD/LICENSE"
    assert links.target("../tests", "docs/guide.md", "docs/guide.md") == f"{REPO}/tree/HEAD/tests"


def test_without_a_repository_a_file_the_site_does_not_hold_is_plain_text(tmp_path):
    (tmp_path / "LICENSE").write_text("license")
    (tmp_path / "gpu_sim").mkdir()
    (tmp_path / "gpu_sim" / "README.md").write_text("simulation")
    links = LinkMap(tmp_path, None)
    links.staged["docs/guide.md"] = "docs/guide.md"
    text = ("See [LICENSE](LICENSE), [the [simulated] stack's `gpu_sim/`](gpu_sim/README.md#budget), "
            "[![badge](https://img.shields.io/b.svg)](LICENSE) and [the guide](docs/guide.md).")
    assert links.rewrite(text, "README.md", "index.md") == (
        "See LICENSE, the [simulated] stack's `gpu_sim/`, ![badge](https://img.shields.io/b.svg) and "
        "[the guide](docs/guide.md).")


@pytest.mark.parametrize(("link", "message"), [
    ("docs/missing.md", "no file docs/missing.md"),
    ("#no-such-section", "no section with the anchor #no-such-section"),
])
def test_a_link_to_nothing_is_named(links, link, message):
    with pytest.raises(BrokenLink, match=message):
        links.target(link, "README.md", "index.md")


def test_code_is_not_rewritten():
    text = "[a](x.md) `[b](x.md)`\n\n```python\nd[i](x.md)\n```\n[c](x.md \"title\")"
    expected = "[a](Y) `[b](x.md)`\n\n```python\nd[i](x.md)\n```\n[c](Y \"title\")"
    assert rewrite_targets(text, lambda link: "Y") == expected


def test_every_link_of_the_course_resolves():
    """What the build rewrites, checked without building: the README, docs/, the project pages, the
    landing page's template and every notebook's markdown."""
    course = load_course(REPO_ROOT / INDEX)
    readme = split_readme((REPO_ROOT / "README.md").read_text())
    links = plan(course, readme, repository_url()).links
    for section in readme.sections:
        links.rewrite(section.as_page(), "README.md", section.page)
    links.rewrite(readme.intro, "README.md", "index.md")
    links.rewrite((REPO_ROOT / "site" / "landing.md").read_text(), "README.md", "index.md")
    for nb in course.notebooks:
        links.rewrite(nb.learn, "README.md", "index.md")
        for cell in nbformat.read(REPO_ROOT / "notebooks" / nb.file, as_version=4).cells:
            if cell.cell_type == "markdown":
                links.rewrite(cell.source, f"notebooks/{nb.file}", f"notebooks/{nb.file}")
    for repo_path, page in links.staged.items():
        if repo_path.endswith(".md"):
            links.rewrite((REPO_ROOT / repo_path).read_text(), repo_path, page)
