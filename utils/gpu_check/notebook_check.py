"""Check 4b: every notebook under nbval with the cudf backend, in a subprocess, read from junit XML."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from utils.gpu_check.defaults import REPO_ROOT
from utils.gpu_check.prerequisites import cudf_missing
from utils.gpu_check.runner import FAIL, PASS, SKIP, Context, NotRun, Skipped

_ANSI = re.compile(r"(?:\x1b|#x1B)\[[0-9;]*m")


def _notebook_key(path: Path) -> str:
    """The junit ``classname`` pytest gives a notebook's cells (``notebooks.01_x.ipynb``)."""
    relative = path.resolve().relative_to(REPO_ROOT) if path.is_absolute() else path
    return ".".join(relative.with_suffix("").parts) + ".ipynb"


def parse_junit(xml_text: str, notebooks: Sequence[Path] = ()) -> dict[str, dict[str, Any]]:
    """Per-notebook outcome from pytest's junit XML (one testcase per notebook cell)."""
    names = {_notebook_key(p): p.name for p in notebooks}
    out: dict[str, dict[str, Any]] = {}
    for case in ET.fromstring(xml_text).iter("testcase"):
        key = case.get("classname", "")
        name = names.get(key, key.rsplit(".", 2)[-2] + ".ipynb" if key.endswith(".ipynb") else key)
        entry = out.setdefault(
            name, {"status": PASS, "cells": 0, "failed_cells": [], "skipped_cells": 0, "seconds": 0.0}
        )
        entry["cells"] += 1
        entry["seconds"] = round(entry["seconds"] + float(case.get("time") or 0.0), 3)
        problem = case.find("failure")
        if problem is None:
            problem = case.find("error")
        if problem is not None:
            entry["status"] = FAIL
            entry["failed_cells"].append(case.get("name", "?"))
            if "first_failure" not in entry:
                message = _ANSI.sub("", problem.get("message") or problem.text or "")
                entry["first_failure"] = message.strip()[:500]
        elif case.find("skipped") is not None:
            entry["skipped_cells"] += 1
    for entry in out.values():
        if entry["status"] == PASS and entry["cells"] == entry["skipped_cells"]:
            entry["status"] = SKIP
    return out


def check_notebooks(ctx: Context, details: dict[str, Any]) -> str:
    if ctx.args.skip_notebooks:
        raise Skipped("--skip-notebooks was given")
    missing = cudf_missing()
    if missing:
        raise NotRun(f"cudf not installed ({', '.join(missing)} cannot be imported)")
    notebooks = sorted((REPO_ROOT / "notebooks").glob("*.ipynb"))
    if not notebooks:
        raise NotRun("no notebooks in notebooks/")
    ctx.release_cluster()  # the notebooks start their own LocalCUDACluster on the same GPUs
    env = {**os.environ, "COURSE_BACKEND": "gpu", "COURSE_SCALE": ctx.args.scale}
    env.pop("DASK_SCHEDULER_ADDRESS", None)
    if ctx.args.scheduler_address:
        env["DASK_SCHEDULER_ADDRESS"] = ctx.args.scheduler_address
    with tempfile.TemporaryDirectory(prefix="gpu-check-") as tmp:
        junit = Path(tmp) / "notebooks.xml"
        command = [sys.executable, "-m", "pytest", "notebooks", f"--junitxml={junit}", "-q"]
        details["command"] = f"COURSE_BACKEND=gpu COURSE_SCALE={ctx.args.scale} python -m pytest notebooks"
        try:
            done = subprocess.run(
                command, cwd=REPO_ROOT, env=env, capture_output=True, text=True,
                timeout=ctx.args.notebook_timeout, check=False,
            )
        except subprocess.TimeoutExpired:
            raise AssertionError(f"the notebooks took longer than {ctx.args.notebook_timeout} s") from None
        details["pytest_exit_code"] = done.returncode
        xml_text = junit.read_text() if junit.is_file() else ""
    if not xml_text:
        details["output_tail"] = (done.stdout + done.stderr)[-3000:]
        raise AssertionError(f"pytest wrote no junit report (exit code {done.returncode})")
    per_notebook = parse_junit(xml_text, notebooks)
    details["notebooks"] = per_notebook
    failed = sorted(n for n, r in per_notebook.items() if r["status"] == FAIL)
    not_collected = sorted({p.name for p in notebooks} - set(per_notebook))
    if not_collected:
        details["not_collected"] = not_collected
    if failed or done.returncode != 0 or not_collected:
        details["output_tail"] = _ANSI.sub("", done.stdout + done.stderr)[-3000:]
        raise AssertionError(
            f"{len(failed)} of {len(notebooks)} notebooks failed ({', '.join(failed) or 'none'}); "
            f"not collected: {', '.join(not_collected) or 'none'}; pytest exit code {done.returncode}"
        )
    return f"all {len(notebooks)} notebooks pass under nbval with the cudf backend (scale {ctx.args.scale})"
