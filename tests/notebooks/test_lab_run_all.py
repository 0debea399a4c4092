"""A newcomer's first minutes, in a real JupyterLab driven through its UI in headless Chromium:
Lab lands in the learner's workspace, whose file browser lists only the course's notebooks;
notebooks open unmodified (judged by Lab itself), Run All from the Run menu ends without an error
and with the cluster still up (its dashboard link answers, the Dask sidebar connects), an exercise
shows its three states: not attempted, wrong, right; and the saved answer lands in the workspace
copy while the course's own notebooks stay byte for byte as they were.

One Lab serves a copy of the course and a workspace seeded from it, as `make lab` prepares them
(tools.lab_setup, tools.workspace), at tiny scale as CI runs every notebook. Screenshots go to
reports/browser/.
"""

from __future__ import annotations

import re
import time
import urllib.request

import nbformat
import pytest
from support.lab import jupyter_lab

from tools.lab_setup import align_python_version
from utils.base.paths import NOTEBOOKS_DIR, REPO_ROOT, WORKSPACE_DIR
from utils.notebook_grammar import exercises, is_course_notebook
from utils.snapshot import browser_page, unavailable

ARTEFACTS = REPO_ROOT / "reports" / "browser"
NOTEBOOKS = [f"{WORKSPACE_DIR.name}/00_environment_check.ipynb", f"{WORKSPACE_DIR.name}/03_groupby_sum.ipynb"]
RUN_ALL_TIMEOUT_S = 300
RUN_ALL_RECLICK_S = 60
DASHBOARD = re.compile(r"http://127\.0\.0\.1:\d+/status")
# Lab draws only the cells near the viewport by default; every cell drawn lets the test read every
# prompt and output (it changes what is drawn, nothing in the notebook or the kernel).
ALL_CELLS_DRAWN = {"@jupyterlab/notebook-extension:tracker": {"windowingMode": "none"}}

pytestmark = pytest.mark.skipif(unavailable() is not None, reason=f"no headless browser: {unavailable()}")


def _kernel_idle(page, timeout_s: float = 120) -> None:
    visible = ".jp-NotebookPanel:not(.lm-mod-hidden)"  # the open tab's toolbar, not a hidden tab's
    page.locator(f'{visible} .jp-Notebook-ExecutionIndicator[data-status="idle"]').first.wait_for(
        timeout=timeout_s * 1000
    )


def _dirty_tabs(page) -> list[str]:
    return page.locator(".lm-TabBar-tab.jp-mod-dirty").all_inner_texts()


def _cell(page, index: int):
    return page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook .jp-Cell").nth(index)


def _output_text(cell) -> str:
    return "\n".join(cell.locator(".jp-OutputArea-output").all_inner_texts())


def _click_run_all(page) -> None:
    page.locator(".lm-MenuBar-itemLabel", has_text=re.compile(r"^Run$")).first.click()
    page.locator(".lm-Menu-itemLabel", has_text=re.compile(r"^Run All Cells$")).first.click()


def _run_all(page) -> None:
    prompts = page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-CodeCell .jp-InputArea-prompt")
    before = [text.strip() for text in prompts.all_inner_texts()]
    _click_run_all(page)
    started = time.monotonic()
    deadline = started + RUN_ALL_TIMEOUT_S
    clicks = 1
    while True:
        texts = [text.strip() for text in prompts.all_inner_texts()]
        if texts and all(re.fullmatch(r"\[\d+\]:", text) for text in texts):
            break
        assert time.monotonic() < deadline, f"Run All did not finish in {RUN_ALL_TIMEOUT_S} s: prompts {texts}"
        # Every prompt as before the click a minute on (none queued, "[*]:", none run): the menu lost
        # the click, as it did twice on a loaded 2-core machine. Ask once more, as a learner would;
        # a Run All that never runs still fails above.
        if clicks == 1 and time.monotonic() - started > RUN_ALL_RECLICK_S and texts == before:
            print(f"Run All queued no cell in {RUN_ALL_RECLICK_S} s: clicked it again")
            _click_run_all(page)
            clicks += 1
        page.wait_for_timeout(500)
    _kernel_idle(page)


def _errors(page) -> list[str]:
    stderr = '.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"]'
    return page.locator(f".jp-NotebookPanel:not(.lm-mod-hidden) {stderr}").all_inner_texts()


def _prompt(cell) -> str:
    return cell.locator(".jp-InputArea-prompt").first.inner_text().strip()


def _run_cell(page, cell) -> None:
    """Run a code cell with Shift+Enter from its editor and wait until its new result is in."""
    before = _prompt(cell)
    cell.locator(".cm-content").click()
    page.keyboard.press("Shift+Enter")
    deadline = time.monotonic() + 120
    while (now := _prompt(cell)) == before or not re.fullmatch(r"\[\d+\]:", now):
        assert time.monotonic() < deadline, f"the cell did not run (prompt {now!r})"
        page.wait_for_timeout(200)
    _kernel_idle(page)


def _type_into(page, cell, code: str) -> None:
    """Replace a code cell's text the way a learner does (click, select all, type), then run it."""
    cell.locator(".cm-content").click()
    page.keyboard.press("Control+A")
    page.keyboard.insert_text(code)  # no auto-indent or auto-closed brackets on the way
    assert cell.locator(".cm-content").inner_text().strip() == code.strip()
    _run_cell(page, cell)


def test_a_newcomer_opens_runs_all_and_does_an_exercise(tmp_path):
    ARTEFACTS.mkdir(parents=True, exist_ok=True)
    with jupyter_lab(tmp_path, NOTEBOOKS, user_settings=ALL_CELLS_DRAWN) as (base, token, root), browser_page() as page:
        copies = [root / name for name in NOTEBOOKS]
        align_python_version(copies)  # what `make lab` does first (tools.lab_setup)
        stored = {path: path.read_bytes() for path in copies}
        course = {path: path.read_bytes() for path in (root / NOTEBOOKS_DIR.name).iterdir()}

        # 1. Opened and idle: Lab itself says whether the notebook changed (its dirty mark), and
        # autosave would write any change to disk.
        page.goto(f"{base}/lab/tree/{NOTEBOOKS[0]}?token={token}", timeout=60_000)
        page.locator(".jp-Notebook").first.wait_for(timeout=60_000)
        _kernel_idle(page)
        page.wait_for_timeout(3000)
        assert _dirty_tabs(page) == [], "the notebook turned modified on opening, with no edit"
        assert copies[0].read_bytes() == stored[copies[0]]
        assert page.locator(".jp-toast-message, .Toastify__toast").count() == 0, "a notification toast is shown"
        listed = page.locator(".jp-DirListing-content .jp-DirListing-itemText").all_inner_texts()
        assert listed and all(is_course_notebook(name.strip()) for name in listed), f"the file browser lists {listed}"
        page.screenshot(path=str(ARTEFACTS / "lab-00-opened.png"))

        # 2. Run All from the Run menu: no error output, and the cluster is still up afterwards.
        _run_all(page)
        assert _errors(page) == []
        outputs = "\n".join(page.locator(".jp-OutputArea-output").all_inner_texts())
        link = DASHBOARD.search(outputs)
        assert link, "the setup cell printed no dashboard link"
        with urllib.request.urlopen(link.group(0), timeout=10) as response:
            assert response.status == 200, "the dashboard link refuses connections after Run All"

        # 3. The Dask sidebar connects to that dashboard.
        page.locator('.jp-SideBar [data-id="dask-dashboard-launcher"]').first.click(timeout=15_000)
        sidebar = page.locator(".dask-DaskDashboardLauncher").first
        sidebar.wait_for(state="visible", timeout=15_000)
        sidebar.locator(".dask-URLInput input").first.fill(link.group(0))
        sidebar.locator(".dask-URLInput input").first.press("Enter")
        sidebar.locator(".dask-DashboardListing-item").filter(has_text="Task Stream").first.wait_for(timeout=30_000)

        # 4. The exercise's three states, graded from what the learner typed.
        exercise = exercises(nbformat.read(copies[0], as_version=4))[0]
        check = _cell(page, exercise.check_cell)
        assert "not attempted yet" in _output_text(check)
        _type_into(page, _cell(page, exercise.answer_cell), "n_rows = df.npartitions")
        _run_cell(page, check)
        assert "✗ number of rows: yours" in _output_text(check)
        _type_into(page, _cell(page, exercise.answer_cell), exercise.solution)
        _run_cell(page, check)
        assert "✓ number of rows" in _output_text(check)
        page.screenshot(path=str(ARTEFACTS / "lab-00-exercise-right.png"))
        page.keyboard.press("Control+s")
        deadline = time.monotonic() + 30
        while exercise.solution.strip() not in copies[0].read_text():
            assert time.monotonic() < deadline, "the answer was not saved into the workspace copy"
            page.wait_for_timeout(300)
        changed = [path.name for path, data in course.items() if path.read_bytes() != data]
        assert changed == [], f"the learner's work changed the course's own files: {changed}"

        # 5. The worked example's notebook, opened next to it: unmodified when idle, Run All clean.
        page.goto(f"{base}/lab/tree/{NOTEBOOKS[1]}?token={token}", timeout=60_000)
        page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook").first.wait_for(timeout=60_000)
        _kernel_idle(page)
        page.wait_for_timeout(3000)
        assert not any("03_groupby_sum" in tab for tab in _dirty_tabs(page)), "03 turned modified on opening"
        assert copies[1].read_bytes() == stored[copies[1]]
        _run_all(page)
        assert _errors(page) == []
        page.screenshot(path=str(ARTEFACTS / "lab-03-run-all.png"))
