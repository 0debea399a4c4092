"""Sphinx configuration of the course site. Built by ``python -m tools.site build`` (``make site``),
which gathers the executed notebooks first: MyST-NB only renders the executed copies here."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tools.site.layout import repository_url
from tools.site.readme import split_readme
from utils.base.paths import REPO_ROOT

if TYPE_CHECKING:  # the tests load this file where only the site build's environment has Sphinx
    from sphinx.application import Sphinx

REPOSITORY = repository_url()  # None while pyproject.toml holds the placeholder: no repository or Binder links

project = split_readme((REPO_ROOT / "README.md").read_text()).title
author = "The course's authors"
copyright = "the course's authors, Apache License 2.0"
language = "en"

extensions = ["myst_nb"]
myst_heading_anchors = 4
myst_heading_slug_func = "github"  # the anchors the README and docs/ link to on GitHub work here too
nb_execution_mode = "off"  # the build executed every notebook already (tools/site/execute.py)
nb_merge_streams = True
html_extra_path: list[str] = []  # set by the build: the notebooks as committed (the download links)

html_theme = "sphinx_book_theme"
html_title = project
html_favicon = "_static/favicon.svg"
html_static_path = ["_static"]
html_css_files = ["course.css"]
html_show_sourcelink = False
html_copy_source = False  # the staged sources are executed copies: the downloads serve the committed notebooks
# The theme reads the colour mode from here; left unset, its script logs "invalid theme mode" on every page.
html_context = {"default_mode": "auto"}
# One search box: the sidebar's (the theme's header bar would show a second one).
html_theme_options: dict[str, Any] = {
    "path_to_docs": "",  # the site's pages sit at their repository paths (notebooks/NN_topic.ipynb)
    "use_download_button": True,
    "home_page_in_toc": False,  # the sidebar's title already links the landing page
    "navbar_persistent": [],
    "show_toc_level": 2,
    "navigation_with_keys": False,
}
if REPOSITORY:
    html_theme_options |= {
        "repository_url": REPOSITORY,
        "repository_branch": "HEAD",
        "use_repository_button": True,
        "launch_buttons": {"binderhub_url": "https://mybinder.org", "notebook_interface": "jupyterlab"},
    }


def download_the_committed_notebook(app: Sphinx, pagename: str, templatename: str, context: dict[str, Any],
                                    doctree: Any) -> None:
    """The header's download menu: on a notebook page the notebook as committed (the file the run
    label's link serves, ``notebooks/NN_topic.ipynb`` beside the page), then print to PDF; the
    staged source is an executed copy and is not published."""
    for group in context.get("header_buttons", []):
        if group.get("label") != "download-buttons":
            continue
        buttons = [button for button in group["buttons"] if button.get("type") != "link"]
        if context.get("page_source_suffix") == ".ipynb":
            buttons.insert(0, {"type": "link", "url": context["pathto"](f"{pagename}.ipynb", 1), "text": ".ipynb",
                               "icon": "fas fa-code", "tooltip": "Download the notebook as the course ships it",
                               "label": "download-notebook-button"})
        group["buttons"] = buttons


def setup(app: Sphinx) -> None:
    app.connect("html-page-context", download_the_committed_notebook, priority=900)  # after the theme's buttons
