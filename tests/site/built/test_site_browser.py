"""The built site in headless Chromium, as a learner opens it: the landing page's "Start here"
button, outline and two commands, and on notebook pages a rendered plot, a collapsed solution, the
run label, the download links and the Binder launch button (only for a configured repository). No
page logs a console error or lacks its favicon. Screenshots go to reports/site/ (git-ignored)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tools.course_index import INDEX, load_course
from tools.site.labels import LABEL_CLASS
from tools.site.layout import REPORTS_DIR, binder_url, repository_url
from tools.site.serve import serving
from tools.site.toc import notebook_page
from utils.base.paths import REPO_ROOT
from utils.snapshot import browser_page

COURSE = load_course(REPO_ROOT / INDEX)
SHOTS = REPORTS_DIR / "screenshots"
TIMEOUT_MS = 30_000


@pytest.fixture(scope="module")
def served(html) -> Iterator[str]:
    """The base URL of the site served on 127.0.0.1 for this module only."""
    SHOTS.mkdir(parents=True, exist_ok=True)
    with serving(html) as base:
        yield base


@pytest.fixture
def browse(served) -> Iterator[tuple[str, Any]]:
    """(base URL, page) in a fresh browser, as a first visit: a console error that the theme logs only
    once (then remembers in local storage) or a favicon Chromium fetches only once shows in every test.
    A console error or an uncaught exception fails the test (``_open``)."""
    with browser_page(viewport={"width": 1280, "height": 900}) as page:
        errors: list[str] = []
        page.on("console", lambda message: errors.append(f"console: {message.text}") if message.type == "error"
                else None)
        page.on("pageerror", lambda error: errors.append(f"uncaught: {error}"))
        page.course_errors = errors
        yield served, page


def _open(page: Any, url: str) -> None:
    page.course_errors.clear()
    response = page.goto(url, timeout=TIMEOUT_MS, wait_until="load")
    assert response is not None and response.status == 200, f"{url}: {response and response.status}"
    page.wait_for_load_state("networkidle", timeout=TIMEOUT_MS)
    assert page.course_errors == [], f"{url} logged errors in the browser console: {page.course_errors}"
    icon = page.locator('link[rel="icon"]')
    assert icon.count() == 1, f"{url}: no favicon link"
    favicon = page.request.get(page.evaluate("document.querySelector('link[rel=icon]').href"))
    assert favicon.status == 200, f"{url}: the favicon answers HTTP {favicon.status}"


@pytest.mark.parametrize("page_name", ["index", notebook_page(COURSE.notebook("03"))])
def test_a_page_shows_one_search_box(browse, page_name):
    base, page = browse
    _open(page, f"{base}/{page_name}.html")
    boxes = [box for box in page.locator(".search-button-field").all() if box.is_visible()]
    assert len(boxes) == 1, f"{len(boxes)} search boxes on {page_name}"


def test_the_landing_page_has_a_start_here_button_above_the_fold(browse):
    base, page = browse
    _open(page, f"{base}/index.html")
    button = page.locator(".course-start a").first
    assert button.is_visible() and button.inner_text().startswith("Start here"), "no Start here button"
    box = button.bounding_box()
    assert box is not None and box["y"] + box["height"] < 900, f"the button is below the first screen: {box}"
    button.click()
    page.wait_for_load_state("load")
    assert page.url.endswith(f"{notebook_page(COURSE.notebooks[0])}.html"), page.url


def test_the_two_commands_do_not_scroll_sideways(browse):
    base, page = browse
    _open(page, f"{base}/index.html")
    block = page.locator("section#the-two-commands pre").first
    widths = block.evaluate("pre => [pre.scrollWidth, pre.clientWidth]")
    assert widths[0] <= widths[1], f"the two commands scroll sideways: {widths}"
    assert page.evaluate("document.documentElement.scrollWidth") <= 1280


def test_the_landing_page_shows_the_outline_in_course_order(browse):
    base, page = browse
    _open(page, f"{base}/index.html")
    rows = page.locator("section#the-course-at-a-glance table").first.locator("tbody tr")
    titles = [rows.nth(i).locator("td").first.inner_text().strip() for i in range(rows.count())]
    assert titles == [nb.label for nb in COURSE.notebooks]
    minutes = rows.nth(0).locator("td").last.inner_text().strip()
    first = COURSE.notebooks[0]
    assert minutes == f"{first.teaching} + {first.exercises}"
    body = page.locator("article").inner_text()
    assert "make lab" in body and "make test" in body, "the two commands"
    assert "Who it is for" in body
    sidebar = page.locator("nav.bd-links").inner_text()
    positions = [sidebar.find(nb.label) for nb in COURSE.notebooks]
    assert -1 not in positions and positions == sorted(positions), f"the sidebar's order: {positions}"
    page.screenshot(path=str(SHOTS / "landing.png"), full_page=False)


@pytest.mark.parametrize("number", ["00", "03"])
def test_a_notebook_page_has_outputs_a_collapsed_solution_the_label_and_the_launch_button(browse, number):
    base, page = browse
    notebook = COURSE.notebook(number)
    _open(page, f"{base}/{notebook_page(notebook)}.html")
    assert page.locator("h1").first.inner_text().strip().rstrip("#").strip() == notebook.label

    label = page.locator(f".{LABEL_CLASS}").first
    assert label.is_visible()
    assert "CPU backend (pandas)" in label.inner_text() and "tiny" in label.inner_text()
    assert "GPUs" in label.inner_text(), "the label says that GPU outputs differ"
    assert page.locator(".cell_output").count() > 0, "executed outputs are rendered"

    solution = page.locator("details", has=page.locator("summary", has_text="Solution (click to show)")).first
    assert solution.count() == 1 and solution.get_attribute("open") is None, "the solution starts collapsed"
    code = solution.locator("pre").first
    assert not code.is_visible(), "a collapsed solution's code is hidden"
    page.screenshot(path=str(SHOTS / f"notebook-{number}.png"), full_page=False)
    solution.scroll_into_view_if_needed(timeout=TIMEOUT_MS)
    page.screenshot(path=str(SHOTS / f"notebook-{number}-solution.png"), full_page=False)
    solution.locator("summary").click()
    code.wait_for(state="visible", timeout=TIMEOUT_MS)

    downloads = {link.get_attribute("href") for link in page.locator("a[href$='.ipynb']:not([href^='http'])").all()}
    assert downloads == {notebook.file}, f"the label's and the header's downloads differ: {downloads}"

    repository = repository_url()
    launch = page.locator(".dropdown-launch-buttons")
    if repository is None:  # pyproject.toml's placeholder: no button may lead to it
        # (links to other projects, e.g. an upstream issue a notebook cites, are not the repository)
        assert launch.count() == 0 and page.locator("a[href*='YOUR-'], a[href*='mybinder.org']").count() == 0
        return
    launch.locator("button").first.click()
    binder = launch.locator("a", has_text="Binder").first
    binder.wait_for(state="visible", timeout=TIMEOUT_MS)
    assert binder.get_attribute("href") == binder_url(repository, f"notebooks/{notebook.file}")
    page.screenshot(path=str(SHOTS / f"notebook-{number}-launch.png"), full_page=False)


def test_a_section_heading_is_not_lighter_than_its_subheadings(browse):
    base, page = browse
    _open(page, f"{base}/{notebook_page(COURSE.notebook('03'))}.html")
    heading = page.locator("h2", has_text="Exercises").first
    exercise = page.locator("h3", has_text="Exercise 1").first
    weights = [int(h.evaluate("h => getComputedStyle(h).fontWeight")) for h in (heading, exercise)]
    assert weights[0] >= weights[1], f"'Exercises' is lighter than 'Exercise 1': {weights}"


def test_a_plot_is_rendered_as_an_image(browse):
    base, page = browse
    _open(page, f"{base}/{notebook_page(COURSE.notebook('03'))}.html")
    image = page.locator(".cell_output img").first
    image.scroll_into_view_if_needed(timeout=TIMEOUT_MS)
    width = image.evaluate("img => img.complete ? img.naturalWidth : 0")
    assert width > 100, f"the plot did not load (natural width {width})"
    image.screenshot(path=str(SHOTS / "notebook-03-plot.png"))
