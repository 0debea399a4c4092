"""Binder: the README's launch badge is built from the repository URL kept in one place
(pyproject.toml, [project.urls] Repository), and the Binder image pins exactly the CPU
environment the tests run."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from urllib.parse import urlsplit

from utils.doctor import read_pins

ROOT = Path(__file__).resolve().parents[1]
FIRST_NOTEBOOK = re.search(r"^FIRST_NOTEBOOK\s*:=\s*(\S+)", (ROOT / "Makefile").read_text(), re.M).group(1)


def repository_url() -> str:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["urls"]["Repository"]


def expected_badge() -> str:
    """The badge line for README.md, from the repository URL (GitHub: owner/name)."""
    parts = urlsplit(repository_url())
    owner, name = parts.path.strip("/").removesuffix(".git").split("/")
    assert parts.scheme == "https" and parts.netloc == "github.com", "mybinder.org's gh/ provider needs a GitHub URL"
    link = f"https://mybinder.org/v2/gh/{owner}/{name}/HEAD?urlpath=lab/tree/{FIRST_NOTEBOOK}"
    return f"[![Launch on Binder](https://mybinder.org/badge_logo.svg)]({link})"


def test_the_readme_badge_is_built_from_the_repository_url():
    top = (ROOT / "README.md").read_text().splitlines()[:5]
    badge = expected_badge()
    assert badge in top, f"README.md's first lines must hold the Binder badge for {repository_url()}:\n{badge}"


def test_binder_pins_the_full_cpu_environment():
    binder, constraints = read_pins(ROOT / "binder" / "requirements.txt"), read_pins(ROOT / "constraints.txt")
    missing = sorted(set(constraints) - set(binder))
    different = {name: (binder[name][1], pin) for name, (_, pin) in constraints.items()
                 if name in binder and binder[name][1] != pin}
    extra = sorted(set(binder) - set(constraints))
    assert not (missing or different or extra), f"binder vs constraints: missing {missing}, {different}, extra {extra}"
    assert "jupyter-server-proxy" in binder  # routes the dashboard through the Binder URL
