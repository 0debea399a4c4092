"""Pictures of the Dask dashboard taken with a headless Chromium, so that an executed notebook
shows the dashboard without a live kernel (the browser tests drive the same browser).

The browser is Playwright driving the system's Chromium (Debian's ``chromium`` package, or the
program named by ``$COURSE_CHROMIUM``): Playwright's own browser downloads are not needed.
Where Playwright or Chromium is missing, ``unavailable()`` says which and how to install it, and
``snapshot_or_skip`` prints that instead of failing, so a notebook runs the same either way.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from utils.cluster import dashboard_address
from utils.machine import installed

CHROMIUM_ENV_VAR = "COURSE_CHROMIUM"
CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
VIEWPORT = {"width": 1400, "height": 900}
LOAD_TIMEOUT_S = 30.0
INSTALL_HINT = {
    "playwright": "pip install -r requirements.txt -c constraints.txt (it pins playwright)",
    "chromium": f"install Chromium (Debian/Ubuntu: apt-get install chromium) or set {CHROMIUM_ENV_VAR} to its path",
}

_BOKEH_READY_JS = "() => !!(window.Bokeh && Bokeh.documents && Bokeh.documents.length > 0 && Bokeh.index)"


class BrowserUnavailable(RuntimeError):
    """Playwright or Chromium is missing; the message says which and how to install it."""


def chromium_executable() -> str | None:
    """``$COURSE_CHROMIUM`` if set, else the first Chromium on ``PATH``."""
    explicit = os.environ.get(CHROMIUM_ENV_VAR, "").strip()
    if explicit:
        return shutil.which(explicit) or (explicit if Path(explicit).is_file() else None)
    return next((path for name in CHROMIUM_NAMES if (path := shutil.which(name))), None)


def unavailable() -> str | None:
    """Why no browser can be started here (with the fix), or None when one can."""
    if not installed("playwright"):
        return f"Playwright is not installed: {INSTALL_HINT['playwright']}"
    if chromium_executable() is None:
        return f"no Chromium found: {INSTALL_HINT['chromium']}"
    return None


@contextmanager
def browser_page(viewport: dict[str, int] | None = None) -> Iterator[Any]:
    """A Playwright ``Page`` in a headless Chromium, closed (browser and driver) on exit."""
    reason = unavailable()
    if reason:
        raise BrowserUnavailable(reason)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium_executable(), headless=True)
        try:
            yield browser.new_page(viewport=viewport or VIEWPORT)
        finally:
            browser.close()


def open_dashboard(page: Any, url: str, timeout_s: float = LOAD_TIMEOUT_S) -> None:
    """Go to a dashboard page and wait until Bokeh has built its plots."""
    page.goto(url, timeout=timeout_s * 1000)
    page.wait_for_function(_BOKEH_READY_JS, timeout=timeout_s * 1000)


def save_dashboard_png(
    client: Any,
    path: str | Path,
    page: str = "status",
    while_open: Callable[[], Any] | None = None,
    settle_s: float = 1.5,
) -> Path:
    """Save a PNG of dashboard ``page`` of ``client``'s cluster and return its path.

    The page is fetched from the scheduler directly (``utils.cluster.dashboard_address``), not
    through a JupyterHub proxy. ``while_open`` runs after the page has loaded (e.g. a computation,
    so the live plots have something to draw); ``settle_s`` lets the plots catch up before the
    picture is taken. Raises ``BrowserUnavailable`` where Playwright or Chromium is missing.
    Runs in a thread of its own: Playwright's synchronous API refuses to run inside an asyncio
    event loop, and a Jupyter kernel's main thread has one."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    url = f"{dashboard_address(client)}/{page.lstrip('/')}"

    def take() -> None:
        with browser_page() as tab:
            open_dashboard(tab, url)
            if while_open is not None:
                while_open()
            tab.wait_for_timeout(settle_s * 1000)
            tab.screenshot(path=str(target))

    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="dashboard-snapshot") as pool:
        pool.submit(take).result()
    return target


def snapshot_or_skip(client: Any, path: str | Path, page: str = "status", **kwargs: Any) -> Path | None:
    """``save_dashboard_png`` for notebooks: where no browser exists, print why and return None."""
    reason = unavailable()
    if reason:
        print(f"dashboard snapshot skipped: {reason}")
        return None
    saved = save_dashboard_png(client, path, page, **kwargs)
    print(f"dashboard snapshot of /{page.lstrip('/')} saved to {saved}")
    return saved
