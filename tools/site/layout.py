"""Where the site's pieces live, and the repository URL its launch links are built from.

The URL's one home is ``[project.urls] Repository`` in ``pyproject.toml``. Until it names a real
repository (it ships as the placeholder ``https://github.com/YOUR-GITHUB-ORG/...``), nothing links
to it: no Binder badge or button, no repository icon, no link to a repository file. The variable
``COURSE_REPOSITORY_URL`` stands in for it (a fork's build, and the tests that build both ways).

The build never writes outside ``build/site/`` (git-ignored) except the link report in
``reports/``; the notebooks in ``notebooks/`` are only read.
"""

from __future__ import annotations

import os
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from utils.base.paths import REPO_ROOT

CONFIG_DIR = REPO_ROOT / "site"  # conf.py, the landing page's text, templates and CSS (committed)
BUILD_DIR = REPO_ROOT / "build" / "site"
REPORTS_DIR = REPO_ROOT / "reports" / "site"
FIRST_NOTEBOOK_VARIABLE = "FIRST_NOTEBOOK"
REPOSITORY_ENV_VAR = "COURSE_REPOSITORY_URL"
# Text written for someone to replace: YOUR-GITHUB-ORG and the like, or a documentation domain.
PLACEHOLDER = re.compile(r"YOUR[-_][A-Z]|://(?:[^/]*\.)?example\.(?:com|org|net)(?:[:/]|$)")
# The README's first lines while no repository is configured (the badge's place; see readme_launch_line).
BINDER_HINT = ("To launch on Binder, set `[project.urls] Repository` in `pyproject.toml` to your fork, then "
               "replace this line with the badge that `python -m tools.site badge` prints.")


@dataclass(frozen=True)
class BuildDirs:
    """The folders of one build: executed copies, the Sphinx source tree, its output."""

    root: Path

    @property
    def run(self) -> Path:  # the notebooks' working folder while they execute (reports they write land here)
        return self.root / "run"

    @property
    def executed(self) -> Path:
        return self.root / "executed"

    @property
    def extra(self) -> Path:  # copied as is into the site
        return self.root / "extra"

    @property
    def shipped(self) -> Path:  # the notebooks as committed (tools/site/committed.py): executed, and the downloads
        return self.extra / "notebooks"

    @property
    def source(self) -> Path:
        return self.root / "src"

    @property
    def html(self) -> Path:
        return self.root / "html"

    @property
    def doctrees(self) -> Path:
        return self.root / "doctrees"


def repository_url(pyproject: Path = REPO_ROOT / "pyproject.toml") -> str | None:
    """``[project.urls] Repository`` (or ``$COURSE_REPOSITORY_URL``), None while it is absent or a
    placeholder: a link to a placeholder is a dead link on every page."""
    url = os.environ.get(REPOSITORY_ENV_VAR) or (
        tomllib.loads(pyproject.read_text()).get("project", {}).get("urls", {}).get("Repository"))
    if not url or PLACEHOLDER.search(url):
        return None
    url = url.removesuffix(".git").rstrip("/")
    github_repo(url)  # a URL that mybinder.org's gh/ provider cannot open fails here, not on the site
    return url


def github_repo(url: str) -> tuple[str, str]:
    """(owner, name) of a GitHub URL; mybinder.org's ``gh/`` provider and the theme need both."""
    parts = urlsplit(url)
    if parts.scheme != "https" or parts.netloc != "github.com" or parts.path.strip("/").count("/") != 1:
        raise ValueError(f"[project.urls] Repository must be https://github.com/OWNER/NAME, not {url!r}")
    owner, name = parts.path.strip("/").split("/")
    return owner, name


def binder_url(url: str, notebook: str) -> str:
    """The mybinder.org link that opens ``notebook`` (a repository path) in JupyterLab, as the README's badge."""
    owner, name = github_repo(url)
    return f"https://mybinder.org/v2/gh/{owner}/{name}/HEAD?urlpath=lab/tree/{notebook}"


def first_notebook(makefile: Path = REPO_ROOT / "Makefile") -> str:
    """The notebook ``make lab`` opens (the Makefile's ``FIRST_NOTEBOOK``): the Binder badge opens it too."""
    found = re.search(rf"^{FIRST_NOTEBOOK_VARIABLE}\s*:=\s*(\S+)", makefile.read_text(), re.M)
    if found is None:
        raise ValueError(f"{makefile.name} sets no {FIRST_NOTEBOOK_VARIABLE}")
    return found.group(1)


def readme_launch_line(url: str | None, notebook: str) -> str:
    """The README's first line after its title: the Binder badge opening ``notebook``, or while no
    repository is configured, how to get one."""
    if url is None:
        return BINDER_HINT
    return f"[![Launch on Binder](https://mybinder.org/badge_logo.svg)]({binder_url(url, notebook)})"


def file_url(url: str, path: str, directory: bool = False) -> str:
    """A repository file's (or folder's) page on GitHub, for links to what the site does not hold."""
    return f"{url}/{'tree' if directory else 'blob'}/HEAD/{path}"
