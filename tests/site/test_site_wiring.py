"""How the site is built and served: warnings are errors, the server is this machine's only, the
Makefile and CI run it after the tests, and the site's requirements are pinned."""

from __future__ import annotations

import re
import urllib.request

import pytest

from tools.site.build import sphinx_command
from tools.site.layout import BUILD_DIR, BuildDirs
from tools.site.serve import HOST, serving
from utils.base.paths import REPO_ROOT


def test_sphinx_runs_with_warnings_as_errors():
    command = sphinx_command(BuildDirs(BUILD_DIR))
    assert "-W" in command and "--keep-going" in command and "-E" in command


def test_the_server_answers_on_localhost_and_stops(tmp_path):
    (tmp_path / "index.html").write_text("<p>site</p>")
    with serving(tmp_path) as base:
        assert base.startswith(f"http://{HOST}:") and HOST == "127.0.0.1"
        with urllib.request.urlopen(f"{base}/index.html", timeout=5) as response:
            assert response.read() == b"<p>site</p>"
    with pytest.raises(OSError):
        urllib.request.urlopen(f"{base}/index.html", timeout=2)


def test_no_site_no_server(tmp_path):
    with pytest.raises(FileNotFoundError, match="make site"), serving(tmp_path):
        pass


def test_ci_builds_and_tests_the_site_after_the_tests():
    steps = [line.strip() for line in (REPO_ROOT / ".ci" / "run").read_text().splitlines()
             if line.strip().startswith("make ")]
    steps = [step.split(" 2>&1")[0] for step in steps]
    assert steps == ["make venv", "make test", "make site", "make test-site"]
    # CI fails when make site executes a notebook itself: it must render the test suite's copies.
    ci = (REPO_ROOT / ".ci" / "run").read_text()
    assert 'grep -q ": executed in" build/site-build.log' in ci
    assert ': executed in {result.seconds:.0f} s' in (REPO_ROOT / "tools" / "site" / "execute.py").read_text()
    makefile = (REPO_ROOT / "Makefile").read_text()
    for target in ("site", "site-serve", "test-site"):
        assert re.search(rf"^{target}:", makefile, re.M) and target in re.search(r"^\.PHONY:(.*)$", makefile, re.M)[1]
    assert "COURSE_SITE_TESTS=1" in makefile


def test_the_site_requirements_are_exactly_pinned():
    lines = [line.split("#")[0].strip() for line in (REPO_ROOT / "requirements-site.txt").read_text().splitlines()]
    pins = [line for line in lines if line]
    assert pins and all(re.fullmatch(r"[A-Za-z0-9_.-]+==[0-9][^\s]*", line) for line in pins), pins
    assert {"sphinx", "myst-nb", "sphinx-book-theme"} <= {line.split("==")[0].lower() for line in pins}


def test_the_sphinx_configuration_loads_and_names_the_course():
    """conf.py runs only inside Sphinx (``make site``); a broken import there would first show in CI."""
    import runpy

    conf = runpy.run_path(str(REPO_ROOT / "site" / "conf.py"))
    assert conf["project"] and conf["project"] in (REPO_ROOT / "README.md").read_text()
