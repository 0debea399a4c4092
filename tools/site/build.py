"""``make site``: execute the notebooks, lay out the pages, render them with Sphinx (warnings are
errors) and check every internal link of the result."""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass

from tools.course_index import INDEX, load_course
from tools.site.committed import NotANotebook, NotCommitted, ship
from tools.site.execute import Execution, NotebookFailed, execute_all
from tools.site.labels import BUILD_SCALE
from tools.site.layout import BUILD_DIR, CONFIG_DIR, REPORTS_DIR, BuildDirs, repository_url
from tools.site.linkcheck import LinkReport, check_site, write_report
from tools.site.stage import stage
from utils.base.paths import REPO_ROOT
from utils.datagen.scales import resolve_scale

LINK_REPORT = REPORTS_DIR / "links.txt"


class SiteError(RuntimeError):
    """The site did not build, or built with warnings or broken links."""


@dataclass(frozen=True)
class BuildResult:
    executions: list[Execution]
    links: LinkReport
    seconds: dict[str, float]


def sphinx_command(dirs: BuildDirs) -> list[str]:
    """Sphinx on the staged tree: every warning fails the build (after all of them are printed)."""
    return [sys.executable, "-m", "sphinx", "-b", "html", "-W", "--keep-going", "-E", "-q",
            "-c", str(CONFIG_DIR), "-d", str(dirs.doctrees), "-D", f"html_extra_path={dirs.extra}",
            str(dirs.source), str(dirs.html)]


def render(dirs: BuildDirs) -> None:
    for old in (dirs.html, dirs.doctrees, dirs.root / "jupyter_execute"):
        shutil.rmtree(old, ignore_errors=True)
    done = subprocess.run(sphinx_command(dirs), cwd=REPO_ROOT, capture_output=True, text=True, check=False)
    output = (done.stdout + done.stderr).strip()
    if output:
        print(output)
    if done.returncode != 0 or "warning" in output.lower():
        problems = [line for line in output.splitlines() if "WARNING" in line or "ERROR" in line]
        raise SiteError(f"Sphinx reported warnings or errors (exit {done.returncode}); the site is not built:\n"
                        + "\n".join(problems[:20]))


def build(dirs: BuildDirs | None = None, reuse: bool = True, log: Callable[[str], None] = print) -> BuildResult:
    """The whole site into ``dirs.html`` (default ``build/site/``) from the notebooks as committed;
    ``reuse`` takes the executed copies of those notebooks that the test suite (or an earlier build)
    made as the site's label says."""
    dirs = dirs or BuildDirs(BUILD_DIR)
    course = load_course(REPO_ROOT / INDEX)
    repository = repository_url()
    try:
        shipped = ship([nb.file for nb in course.notebooks], REPO_ROOT, dirs.shipped)
    except NotANotebook as error:  # before any notebook runs
        raise SiteError(str(error)) from error
    seconds: dict[str, float] = {}
    started = time.perf_counter()
    log(f"the executed notebooks (COURSE_SCALE={BUILD_SCALE}, CPU backend): the test suite's copies of "
        "unchanged notebooks, the others executed now, one at a time")
    try:
        executions = execute_all([(nb, shipped[nb.file]) for nb in course.notebooks],
                                 dirs.executed, dirs.run, reuse=reuse, log=log)
    except NotebookFailed as error:
        raise SiteError(str(error)) from error
    seconds["execute"] = time.perf_counter() - started
    mark = time.perf_counter()
    try:
        stage(dirs, course, executions, repository, resolve_scale(BUILD_SCALE).rows)
    except NotCommitted as error:
        raise SiteError(str(error)) from error
    render(dirs)
    seconds["render"] = time.perf_counter() - mark
    report = check_site(dirs.html)
    write_report(report, LINK_REPORT)
    log(f"link check: {report.summary()} (list: {LINK_REPORT.relative_to(REPO_ROOT)})")
    if report.broken:
        for page, link, why in report.broken:
            log(f"  broken: {page}: {link} ({why})")
        raise SiteError(f"{len(report.broken)} broken internal links")
    seconds["total"] = time.perf_counter() - started
    log(f"site built in {seconds['total']:.0f} s (notebooks {seconds['execute']:.0f} s, pages "
        f"{seconds['render']:.0f} s): {dirs.html.relative_to(REPO_ROOT)}/index.html")
    return BuildResult(executions, report, seconds)
