"""JupyterLab as `make lab` starts it, for the browser tests: on 127.0.0.1 with a token, the
course's Dask config and Lab settings, serving copies of notebooks (nothing the browser does can
change the repository), stopped with every kernel it started. Notebooks asked for under
``workspace/`` are served as `make lab` serves them: a copy of the course's ``notebooks/`` folder
and a learner's workspace seeded from it (tools.workspace)."""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

from tools.lab_setup import install_overrides
from tools.workspace import sync
from utils.base.lifetime import die_with_parent
from utils.base.paths import NOTEBOOKS_DIR, REPO_ROOT, WORKSPACE_DIR

LAB_START_TIMEOUT_S = 60


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextlib.contextmanager
def jupyter_lab(
    tmp_path: Path, notebooks: list[str], default: str | None = None, user_settings: dict[str, dict] | None = None
) -> Iterator[tuple[str, str, Path]]:
    """(base URL, token, served root) of a running JupyterLab serving copies of ``notebooks``
    (paths relative to the repository) under the same relative paths; ``user_settings`` maps a
    plugin id (``@jupyterlab/notebook-extension:tracker``) to the settings a user would set."""
    root = tmp_path / "course"
    in_workspace = [Path(notebook).parts[0] == WORKSPACE_DIR.name for notebook in notebooks]
    for notebook, seeded in zip(notebooks, in_workspace, strict=True):
        if not seeded:
            (root / notebook).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(REPO_ROOT / notebook, root / notebook)
    if any(in_workspace):
        shutil.copytree(NOTEBOOKS_DIR, root / NOTEBOOKS_DIR.name, dirs_exist_ok=True)
        sync(root / NOTEBOOKS_DIR.name, root / WORKSPACE_DIR.name)
    settings = install_overrides(tmp_path / "prefix").parent  # what `make lab` installs (tools.lab_setup)
    for plugin, values in (user_settings or {}).items():
        package, name = plugin.split(":")
        path = tmp_path / "user-settings" / package / f"{name}.jupyterlab-settings"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(values))
    port, token = free_port(), secrets.token_hex(16)
    env = {
        **os.environ,
        "DASK_CONFIG": str(REPO_ROOT / "binder" / "dask"),  # as `make lab` sets it
        "JUPYTER_CONFIG_DIR": str(tmp_path / "config"),
        "JUPYTER_RUNTIME_DIR": str(tmp_path / "runtime"),
        "JUPYTERLAB_WORKSPACES_DIR": str(tmp_path / "workspaces"),
        "JUPYTERLAB_SETTINGS_DIR": str(tmp_path / "user-settings"),
    }
    command = [
        sys.executable, "-m", "jupyter", "lab", "--no-browser", "--ip=127.0.0.1", f"--port={port}",
        "--port-retries=0", f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={root}",
        f"--LabApp.default_url=/lab/tree/{default or notebooks[0]}", f"--LabApp.app_settings_dir={settings}",
    ]
    if os.geteuid() == 0:
        command.append("--allow-root")
    log_path = tmp_path / "jupyter-lab.log"
    log = open(log_path, "wb")  # noqa: SIM115 - closed below, after the process
    parent = os.getpid()
    server = subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT,
                              start_new_session=True, preexec_fn=lambda: die_with_parent(parent))
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + LAB_START_TIMEOUT_S
        while True:
            assert server.poll() is None, log_path.read_text()[-2000:]
            with (
                contextlib.suppress(OSError),
                urllib.request.urlopen(f"{base}/api/status?token={token}", timeout=2) as response,
            ):
                if response.status == 200:
                    break
            assert time.monotonic() < deadline, f"jupyter lab did not answer within {LAB_START_TIMEOUT_S} s"
            time.sleep(0.3)
        yield base, token, root
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(server.pid, signal.SIGTERM)  # the server and the kernels it started
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait()
        log.close()
