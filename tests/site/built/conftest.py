"""The built site, for the tests that read it: a missing build is an error here, never a skip."""

from __future__ import annotations

from pathlib import Path

import pytest

from tools.site.layout import BUILD_DIR, BuildDirs


@pytest.fixture(scope="session")
def site() -> BuildDirs:
    dirs = BuildDirs(BUILD_DIR)
    assert (dirs.html / "index.html").is_file(), f"no site in {dirs.html}: run make site first"
    return dirs


@pytest.fixture(scope="session")
def html(site: BuildDirs) -> Path:
    return site.html
