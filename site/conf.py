"""Sphinx configuration of the course site. Built by ``python -m tools.site build`` (``make site``),
which gathers the executed notebooks first: MyST-NB only renders the executed copies here."""

from tools.site.layout import github_repo, repository_url
from tools.site.readme import split_readme
from utils.base.paths import REPO_ROOT

REPOSITORY = repository_url()
OWNER, NAME = github_repo(REPOSITORY)

project = split_readme((REPO_ROOT / "README.md").read_text()).title
author = "The course's authors"
copyright = "the course's authors, Apache License 2.0"
language = "en"

extensions = ["myst_nb"]
myst_heading_anchors = 4
myst_heading_slug_func = "github"  # the anchors the README and docs/ link to on GitHub work here too
nb_execution_mode = "off"  # the build executed every notebook already (tools/site/execute.py)
nb_merge_streams = True
html_extra_path: list[str] = []  # set by the build: the notebooks as the course ships them (download links)

html_theme = "sphinx_book_theme"
html_title = project
html_static_path = ["_static"]
html_css_files = ["course.css"]
html_show_sourcelink = False
html_theme_options = {
    "repository_url": REPOSITORY,
    "repository_branch": "HEAD",
    "path_to_docs": "",  # the site's pages sit at their repository paths (notebooks/NN_topic.ipynb)
    "use_repository_button": True,
    "use_download_button": True,
    "launch_buttons": {"binderhub_url": "https://mybinder.org", "notebook_interface": "jupyterlab"},
    "home_page_in_toc": True,
    "show_toc_level": 2,
    "navigation_with_keys": False,
}
