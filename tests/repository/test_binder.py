"""Binder: the README's first line is built from the repository URL kept in one place
(pyproject.toml, [project.urls] Repository): the launch badge once it names a real repository, how
to get one while it is a placeholder (never a dead link); and the Binder image pins exactly the CPU
environment the tests run."""

from __future__ import annotations

import re

from tools.site.layout import first_notebook, readme_launch_line, repository_url
from utils.base.paths import REPO_ROOT
from utils.doctor import read_pins

FIRST_NOTEBOOK = first_notebook()


def test_the_readme_launch_line_is_built_from_the_repository_url():
    top = (REPO_ROOT / "README.md").read_text().splitlines()[:5]
    line = readme_launch_line(repository_url(), FIRST_NOTEBOOK)
    assert line in top, f"README.md's first lines must hold (python -m tools.site badge prints it):\n{line}"


def test_the_launch_line_is_the_badge_only_for_a_real_repository(monkeypatch):
    monkeypatch.setenv("COURSE_REPOSITORY_URL", "https://github.com/YOUR-GITHUB-ORG/dask-multi-gpu-course")
    assert "mybinder.org" not in readme_launch_line(repository_url(), FIRST_NOTEBOOK)
    monkeypatch.setenv("COURSE_REPOSITORY_URL", "https://github.com/rapids-course/dask-multi-gpu-course.git")
    assert readme_launch_line(repository_url(), FIRST_NOTEBOOK) == (
        "[![Launch on Binder](https://mybinder.org/badge_logo.svg)](https://mybinder.org/v2/gh/rapids-course/"
        f"dask-multi-gpu-course/HEAD?urlpath=lab/tree/{FIRST_NOTEBOOK})")


def test_an_absent_or_placeholder_repository_url_is_none(tmp_path, monkeypatch):
    monkeypatch.delenv("COURSE_REPOSITORY_URL", raising=False)
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text('[project]\nname = "course"\n')
    assert repository_url(pyproject) is None
    for url in ("https://github.com/YOUR-GITHUB-ORG/course", "https://example.com/course"):
        pyproject.write_text(f'[project]\nname = "course"\n[project.urls]\nRepository = "{url}"\n')
        assert repository_url(pyproject) is None, url
    pyproject.write_text('[project]\nname = "course"\n[project.urls]\nRepository = "https://github.com/o/course/"\n')
    assert repository_url(pyproject) == "https://github.com/o/course"


# A placeholder written for someone to replace (pyproject.toml's YOUR-GITHUB-ORG), or a documentation
# domain: the README links neither (a learner would meet a dead link on its first lines).
PLACEHOLDER_URL = re.compile(r"[a-z+]+://[^\s)\]>\"']*(?:YOUR[-_][A-Z]|\bexample\.(?:com|org|net)\b)[^\s)\]>\"']*")


def test_the_readme_links_no_placeholder_url():
    found = PLACEHOLDER_URL.findall((REPO_ROOT / "README.md").read_text())
    assert not found, f"README.md links placeholder URLs: {found}"


def test_binder_pins_the_full_cpu_environment():
    binder, constraints = read_pins(REPO_ROOT / "binder" / "requirements.txt"), read_pins(REPO_ROOT / "constraints.txt")
    missing = sorted(set(constraints) - set(binder))
    different = {name: (binder[name][1], pin) for name, (_, pin) in constraints.items()
                 if name in binder and binder[name][1] != pin}
    extra = sorted(set(binder) - set(constraints))
    assert not (missing or different or extra), f"binder vs constraints: missing {missing}, {different}, extra {extra}"
    assert "jupyter-server-proxy" in binder  # routes the dashboard through the Binder URL


# --- the Dask sidebar's "+ NEW" cluster (dask-labextension) binds to localhost ---------------------

# What `PUT /dask/clusters` runs in the Jupyter server: dask_labextension/manager.py `make_cluster`
# builds the cluster from `labextension.factory` in Dask's config, whose defaults
# dask_labextension/config.py adds when the server extension is imported. No workers: only where the
# scheduler and its dashboard listen matters here.
_SIDEBAR_CLUSTER = r"""
import asyncio, json
import dask, psutil
import dask_labextension  # noqa: F401  (loads its config defaults, as the server extension does)
from dask_labextension.manager import make_cluster

async def main():
    with dask.config.set({"labextension.factory.kwargs.n_workers": 0}):
        cluster, _ = await make_cluster({})
    try:
        return sorted({f"{c.laddr.ip}" for c in psutil.Process().net_connections("inet")
                       if c.status == psutil.CONN_LISTEN})
    finally:
        await cluster.close()

print(json.dumps(asyncio.run(main())))
"""


def _sidebar_cluster_hosts(dask_config: str) -> list[str]:
    import json
    import os
    import subprocess
    import sys

    env = {key: value for key, value in os.environ.items() if not key.startswith("DASK_")}
    env["DASK_CONFIG"] = dask_config
    done = subprocess.run([sys.executable, "-c", _SIDEBAR_CLUSTER], env=env, cwd=REPO_ROOT, capture_output=True,
                          text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def _dask_config_of_make_lab() -> str:
    import shutil
    import subprocess

    if shutil.which("make") is None:
        import pytest

        pytest.skip("make is not installed")
    done = subprocess.run(["make", "-n", "lab"], cwd=REPO_ROOT, capture_output=True, text=True, timeout=60, check=False)
    found = re.search(r"DASK_CONFIG=\"?([^\s\"]+)\"?\s+\S*jupyter lab", done.stdout)
    assert found, f"`make lab` must start JupyterLab with DASK_CONFIG set:\n{done.stdout}"
    return found.group(1)


def _dask_config_of_binder_start() -> str:
    import subprocess

    done = subprocess.run(["bash", str(REPO_ROOT / "binder" / "start"), "env"], cwd="/", capture_output=True,
                          text=True, timeout=30, check=False)
    found = re.search(r"^DASK_CONFIG=(.+)$", done.stdout, re.M)
    assert found, "binder/start must export DASK_CONFIG for the Jupyter server"
    return found.group(1)


def test_sidebar_clusters_of_make_lab_and_binder_listen_on_localhost_only():
    configs = {_dask_config_of_make_lab(), _dask_config_of_binder_start()}
    assert len(configs) == 1, f"make lab and binder/start use different Dask configs: {configs}"
    hosts = _sidebar_cluster_hosts(configs.pop())
    assert hosts and set(hosts) == {"127.0.0.1"}, f"a sidebar cluster listens on {hosts}"
