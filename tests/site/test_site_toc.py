"""The site's table of contents and landing page come from notebooks/index.yml and the README,
never from a list kept by hand."""

from __future__ import annotations

import re
import shutil

import yaml

from tools.course_index import INDEX, load_course
from tools.course_index.render import duration
from tools.site.landing import landing_page
from tools.site.layout import CONFIG_DIR
from tools.site.readme import split_readme
from tools.site.toc import notebook_pages
from utils.base.paths import REPO_ROOT

README = split_readme((REPO_ROOT / "README.md").read_text())


def _toctree_entries(text: str, caption: str) -> list[str]:
    block = re.search(rf"```{{toctree}}\n:caption: {re.escape(caption)}\n(?::[^\n]*\n)*\n(.*?)\n```", text, re.S)
    assert block, f"no toctree {caption!r}"
    return block.group(1).splitlines()


def test_the_notebooks_are_listed_in_the_index_order():
    course = load_course(REPO_ROOT / INDEX)
    text = landing_page(CONFIG_DIR / "landing.md", course, README, {"More": ["docs/a.md"]})
    assert _toctree_entries(text, "Notebooks") == [f"notebooks/{nb.file.removesuffix('.ipynb')}"
                                                  for nb in course.notebooks]
    assert _toctree_entries(text, "More") == ["docs/a"]
    for nb in course.notebooks:
        assert f"| [{nb.label}](notebooks/{nb.file}) | {nb.learn} | {nb.teaching} + {nb.exercises} |" in text
    assert duration(sum(nb.minutes for nb in course.notebooks)) in text
    assert "make lab" in text and "make test" in text
    assert README.section("For whom").body.strip() in text


def test_an_edit_of_the_index_is_what_the_site_shows(tmp_path):
    """Drop the last notebook from a copy of the index and rename one: the table of contents follows."""
    raw = yaml.safe_load((REPO_ROOT / INDEX).read_text())
    raw["notebooks"] = raw["notebooks"][:-1]
    raw["notebooks"][1]["title"] = "A renamed notebook"
    raw["schedules"] = {}
    index = tmp_path / "index.yml"
    index.write_text(yaml.safe_dump(raw, allow_unicode=True))
    course = load_course(index)
    text = landing_page(CONFIG_DIR / "landing.md", course, README, {})
    assert _toctree_entries(text, "Notebooks") == notebook_pages(course)
    assert len(notebook_pages(course)) == len(load_course(REPO_ROOT / INDEX).notebooks) - 1
    assert f"[{raw['notebooks'][1]['number']} · A renamed notebook]" in text


def test_the_landing_template_names_only_what_the_build_fills_in(tmp_path):
    shutil.copy(CONFIG_DIR / "landing.md", tmp_path / "landing.md")
    placeholders = set(re.findall(r"\$(\w+)", (tmp_path / "landing.md").read_text()))
    assert placeholders == {"title", "lead", "start", "intro", "outline", "launch", "for_whom", "commands"}


def test_the_landing_page_starts_with_a_button_to_notebook_00_and_keeps_the_map_below_its_mention():
    course = load_course(REPO_ROOT / INDEX)
    text = landing_page(CONFIG_DIR / "landing.md", course, README, {})
    first = course.notebooks[0]
    start = text.index(f"```{{container}} course-start\n[Start here: {first.label}](notebooks/{first.file})\n```")
    assert start < text.index("## Who it is for"), "the button sits near the top, before the sections"
    assert "the map below" in README.section("For whom").body
    assert text.index("## Who it is for") < text.index("## The course at a glance"), "the map is below its mention"
    assert text.count(README.title) == 1, "the title once: the page's heading"
