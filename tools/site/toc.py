"""The site's table of contents, from the course's order (``notebooks/index.yml``) and nothing else.

A notebook added to the index appears on the site in its place; one removed from it disappears.
The other pages follow the README's order (its sections) and the alphabet (docs/).
"""

from __future__ import annotations

from tools.course_index import Course, Notebook


def notebook_page(notebook: Notebook) -> str:
    """The notebook's document name on the site (its repository path without the suffix)."""
    return f"notebooks/{notebook.file.removesuffix('.ipynb')}"


def notebook_pages(course: Course) -> list[str]:
    return [notebook_page(nb) for nb in course.notebooks]


def toctree(caption: str, pages: list[str]) -> str:
    """A hidden MyST toctree: the sidebar's section ``caption`` with ``pages`` in this order."""
    if not pages:
        raise ValueError(f"the table of contents' section {caption!r} is empty")
    entries = "\n".join(page.removesuffix(".md") for page in pages)
    return f"```{{toctree}}\n:caption: {caption}\n:hidden:\n:maxdepth: 1\n\n{entries}\n```"
