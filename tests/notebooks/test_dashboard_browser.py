"""The dashboard and JupyterLab in a real (headless) browser: what a learner sees, not only what
the Python APIs return. Screenshots are kept in reports/browser/ (git-ignored) as test artefacts.

Skipped, with the reason, only where Playwright or Chromium is missing; CI installs both.
"""

from __future__ import annotations

import dask.array as da
import pytest
from support.clusters import course_client
from support.dashboard import wait_for_task_stream
from support.lab import jupyter_lab

from tools.site.layout import first_notebook
from utils.base.paths import REPO_ROOT
from utils.cluster import dashboard_address
from utils.snapshot import browser_page, open_dashboard, unavailable

ARTEFACTS = REPO_ROOT / "reports" / "browser"
LAB_START_TIMEOUT_S = 60

pytestmark = pytest.mark.skipif(unavailable() is not None, reason=f"no headless browser: {unavailable()}")


def test_dashboard_draws_the_task_stream_and_lists_the_workers():
    ARTEFACTS.mkdir(parents=True, exist_ok=True)
    chunks, n = 100, 1_000_000
    with course_client(n_workers=2, threads_per_worker=1, local=True, quiet=True) as client, browser_page() as page:
        open_dashboard(page, f"{dashboard_address(client)}/status")
        # Computed while the page is open: the live task stream only draws tasks it has seen run.
        total = da.arange(n, chunks=n // chunks).sum().compute()
        assert total == n * (n - 1) // 2
        drawing = wait_for_task_stream(page, minimum=chunks)
        page.screenshot(path=str(ARTEFACTS / "dashboard-status.png"))
        assert drawing.glyph == "Rect"
        assert drawing.rectangles >= chunks, drawing  # at least one rectangle per chunk's task
        assert drawing.coloured_pixels > 1000, drawing  # and they are visible in the picture

        workers = sorted(client.scheduler_info(n_workers=-1)["workers"])
        assert len(workers) == 2
        open_dashboard(page, f"{dashboard_address(client)}/workers")
        for address in workers:
            page.get_by_text(address, exact=True).first.wait_for(timeout=15_000)
        page.screenshot(path=str(ARTEFACTS / "dashboard-workers.png"))
    for name in ("dashboard-status.png", "dashboard-workers.png"):
        assert (ARTEFACTS / name).stat().st_size > 10_000, f"{name} looks empty"


def test_jupyterlab_renders_the_course_and_the_dask_sidebar(tmp_path):
    ARTEFACTS.mkdir(parents=True, exist_ok=True)
    notebook = first_notebook()
    with (
        course_client(n_workers=1, threads_per_worker=1, local=True, quiet=True) as client,
        jupyter_lab(tmp_path, [notebook]) as (base, token, _),
        browser_page() as page,
    ):
        page.goto(f"{base}/?token={token}", timeout=60_000)  # redirected to the default_url `make lab` sets
        page.locator(".jp-Notebook").first.wait_for(timeout=60_000)
        heading = page.locator(".jp-RenderedMarkdown h1").first
        heading.wait_for(timeout=30_000)
        assert heading.inner_text().startswith("00 · Environment check")
        page.get_by_text("Python 3 (course)").first.wait_for(timeout=30_000)  # the course's kernel

        # The Dask sidebar (dask-labextension): connect it to a running cluster's dashboard, as
        # notebook 04 tells learners to, and wait for the list of dashboard panes.
        page.locator('.jp-SideBar [data-id="dask-dashboard-launcher"]').first.click(timeout=15_000)
        sidebar = page.locator(".dask-DaskDashboardLauncher").first
        sidebar.wait_for(state="visible", timeout=15_000)
        sidebar.locator(".dask-URLInput input").first.fill(f"{dashboard_address(client)}/status")
        sidebar.locator(".dask-URLInput input").first.press("Enter")
        items = sidebar.locator(".dask-DashboardListing-item")
        items.filter(has_text="Task Stream").first.wait_for(timeout=30_000)
        names = items.all_inner_texts()
        assert {"TASK STREAM", "PROGRESS", "WORKERS MEMORY"} <= {name.strip().upper() for name in names}, names
        page.screenshot(path=str(ARTEFACTS / "jupyterlab-dask-sidebar.png"))
    assert (ARTEFACTS / "jupyterlab-dask-sidebar.png").stat().st_size > 10_000
