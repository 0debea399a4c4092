"""The landing page: a "Start here" button to the first notebook, who it is for, the course's outline
and times (from ``notebooks/index.yml``), the two commands (quoted from the README), and the site's
table of contents. Who it is for comes before the outline: the README's text says "the map below".

Its wording lives in ``site/landing.md`` (a ``string.Template``); what it quotes is read at build
time, so it never says something the index or the README no longer says.
"""

from __future__ import annotations

from pathlib import Path
from string import Template

from tools.course_index import Course
from tools.course_index.render import duration
from tools.site.readme import Readme, first_code_block
from tools.site.toc import notebook_page, notebook_pages, toctree

FOR_WHOM = "For whom"
COMMANDS = "The two commands"


def outline(course: Course) -> str:
    """The notebooks in course order with what each teaches and its teaching + exercise minutes."""
    rows = [f"| [{nb.label}]({notebook_page(nb)}.ipynb) | {nb.learn} | {nb.teaching} + {nb.exercises} |"
            for nb in course.notebooks]
    total = sum(nb.minutes for nb in course.notebooks)
    teaching = sum(nb.teaching for nb in course.notebooks)
    return "\n".join([
        "| notebook | what you learn | teach + exercise (min) |",
        "|---|---|---:|",
        *rows,
        "",
        f"In all {duration(total)}: {duration(teaching)} of teaching and {duration(total - teaching)} of exercises "
        f"({len(course.notebooks)} notebooks).",
    ])


def start_here(course: Course) -> str:
    """The link to the first notebook's page (a button: ``.course-start`` in ``site/_static/course.css``)."""
    first = course.notebooks[0]
    return f"[Start here: {first.label}]({notebook_page(first)}.ipynb)"


def landing_page(template: Path, course: Course, readme: Readme, other_pages: dict[str, list[str]],
                 binder: bool = True) -> str:
    """The landing page's MyST source, README-relative links still to be rewritten; ``other_pages``
    maps a sidebar caption to its pages, placed after the notebooks; ``binder``: the notebook pages
    offer Binder (a repository is configured)."""
    lead, _, intro = readme.intro.partition("\n\n")  # the button follows the intro's first paragraph
    text = Template(template.read_text()).substitute(
        title=readme.title,
        lead=lead,
        intro=intro,
        start=start_here(course),
        launch="Binder," if binder else "",
        outline=outline(course),
        for_whom=readme.section(FOR_WHOM).body.strip(),
        commands=first_code_block(readme.section(COMMANDS).body),
    )
    trees = [toctree("Notebooks", notebook_pages(course))]
    trees += [toctree(caption, pages) for caption, pages in other_pages.items()]
    return text.rstrip() + "\n\n" + "\n\n".join(trees) + "\n"
