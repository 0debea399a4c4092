"""Where the site's pieces live, and the repository URL its launch links are built from.

The build never writes outside ``build/site/`` (git-ignored) except the link report in
``reports/``; the notebooks in ``notebooks/`` are only read.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from utils.base.paths import REPO_ROOT

CONFIG_DIR = REPO_ROOT / "site"  # conf.py, the landing page's text, templates and CSS (committed)
BUILD_DIR = REPO_ROOT / "build" / "site"
REPORTS_DIR = REPO_ROOT / "reports" / "site"
FIRST_NOTEBOOK_VARIABLE = "FIRST_NOTEBOOK"


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
    def extra(self) -> Path:  # copied as is into the site: the notebooks as the course ships them
        return self.root / "extra"

    @property
    def source(self) -> Path:
        return self.root / "src"

    @property
    def html(self) -> Path:
        return self.root / "html"

    @property
    def doctrees(self) -> Path:
        return self.root / "doctrees"


def repository_url(pyproject: Path = REPO_ROOT / "pyproject.toml") -> str:
    """``[project.urls] Repository``: the one place for the public URL (the README's badge uses it too)."""
    return tomllib.loads(pyproject.read_text())["project"]["urls"]["Repository"].removesuffix(".git").rstrip("/")


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


def file_url(url: str, path: str, directory: bool = False) -> str:
    """A repository file's (or folder's) page on GitHub, for links to what the site does not hold."""
    return f"{url}/{'tree' if directory else 'blob'}/HEAD/{path}"
