"""pytest plugin: ``gpu-check.md`` and ``gpu-check.json`` from pytest's own results.

    python -m pytest tests/gpu -p tools.gpu_report [--gpu-report-dir reports]

The header names the machine (date, host, CPU, Python, GPUs with the NVIDIA driver and CUDA
versions from NVML, CuPy's CUDA runtime, library versions); then one row per test with pytest's
outcome, seconds and the reason for a skip or failure; then what each test recorded with
``record_property`` (sizes, timings, result types).
"""

from __future__ import annotations

import json
import os
import platform
import socket
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from utils.machine import cpu_count, cpu_name, cuda_version, nvml_gpus, package_version

PACKAGES = ("dask", "distributed", "dask_cuda", "cupy", "cudf", "dask_cudf", "rmm", "pynvml", "numba",
            "numpy", "pandas", "pyarrow", "bokeh", "pytest", "nbval")
OUTCOMES = ("passed", "failed", "error", "skipped")


def machine() -> dict[str, Any]:
    """Everything the report says about the machine, so a reader can tell which run it was."""
    try:
        import cupy

        cuda_runtime = cuda_version(cupy.cuda.runtime.runtimeGetVersion())
    except Exception:
        cuda_runtime = None
    return {
        "date_utc": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"), "host": socket.gethostname(),
        "platform": platform.platform(), "python": platform.python_version(),
        "cpu": f"{cpu_name()}, {cpu_count()} usable cores", "gpus": nvml_gpus(), "cuda_runtime_cupy": cuda_runtime,
        "cuda_visible_devices": os.environ.get("CUDA_VISIBLE_DEVICES"),
        "scheduler_address": os.environ.get("DASK_SCHEDULER_ADDRESS"),
        "packages": {name: package_version(name) for name in PACKAGES},
    }


def _reason(report: Any) -> str:
    """A skip's reason, or the first line of a failure's message."""
    if report.skipped and isinstance(report.longrepr, tuple):
        return str(report.longrepr[2]).removeprefix("Skipped: ")
    crash = getattr(report.longrepr, "reprcrash", None)
    lines = (crash.message if crash is not None else report.longreprtext).strip().splitlines()
    return (lines[0] if crash is not None else lines[-1]) if lines else ""


def build_report(machine: dict[str, Any], tests: list[dict[str, Any]], exit_status: int, command: str) -> dict:
    counts = {outcome: sum(test["outcome"] == outcome for test in tests) for outcome in OUTCOMES}
    return {"command": command, "exit_status": exit_status, "counts": counts, "machine": machine, "tests": tests}


def _cell(value: Any) -> str:
    return str(value).replace("|", "\\|").replace("\n", " ")


def render_markdown(report: dict[str, Any]) -> str:
    """The report for people (and for docs/gpu-validation.md)."""
    m, gpus = report["machine"], report["machine"]["gpus"]
    devices = "; ".join(f"{d['name']} ({d['memory_gib']} GiB)" for d in gpus.get("devices", []))
    cluster = f"existing scheduler {m['scheduler_address']}" if m["scheduler_address"] else "started by the tests"
    lines = [
        "# GPU check report", "",
        f"`{report['command']}`: {', '.join(f'{n} {o}' for o, n in report['counts'].items())} "
        f"(pytest exit status {report['exit_status']}).", "",
        f"- Date (UTC): {m['date_utc']}", f"- Host: {m['host']} ({m['platform']})", f"- CPU: {m['cpu']}",
        f"- Python: {m['python']}", f"- GPUs: {gpus['count']}" + (f": {devices}" if devices else f" ({gpus['error']})"),
        f"- NVIDIA driver: {gpus.get('driver', '?')}; CUDA (driver): {gpus.get('cuda_driver', '?')}; "
        f"CUDA runtime (CuPy): {m['cuda_runtime_cupy'] or '?'}",
        f"- CUDA_VISIBLE_DEVICES: {m['cuda_visible_devices']}; cluster: {cluster}", "",
        "| Library | Version |", "|---|---|",
        *(f"| {name} | {version or 'not installed'} |" for name, version in m["packages"].items()),
        "", "## Tests", "", "| Test | Outcome | Seconds | Result or reason |", "|---|---|---:|---|",
        *(f"| {_cell(t['test'])} | **{t['outcome']}** | {t['seconds']:.1f} | "
          f"{_cell(t['reason'] or t['properties'].get('summary', ''))} |" for t in report["tests"]),
        "", "## Recorded by the tests",
    ]
    for test in (t for t in report["tests"] if t["properties"]):
        lines += ["", f"### {test['test']}", ""]
        lines += [f"- `{key}`: {json.dumps(value, default=str)}" for key, value in test["properties"].items()]
    return "\n".join(lines)


class GpuReport:
    """Each test's outcome over its setup, call and teardown; both files written at the end."""

    def __init__(self, directory: Path) -> None:
        self.directory, self.machine = directory, machine()
        self.tests: dict[str, dict[str, Any]] = {}

    def pytest_report_header(self) -> str:
        gpus = self.machine["gpus"]
        names = ", ".join(d["name"] for d in gpus.get("devices", []))
        return f"gpu-check: {gpus['count']} GPU(s) {names}; driver {gpus.get('driver', '?')}; {self.machine['cpu']}"

    def _record(self, report: Any, outcome: str | None = None) -> None:
        nodeid = report.nodeid or "collection"
        entry = self.tests.setdefault(nodeid, {
            "test": nodeid.removeprefix("tests/gpu/"), "outcome": "passed", "seconds": 0.0, "reason": "",
            "properties": {}})
        entry["seconds"] = round(entry["seconds"] + getattr(report, "duration", 0.0), 3)
        entry["properties"].update(dict(getattr(report, "user_properties", ())))
        if report.failed:
            entry.update(outcome=outcome, reason=_reason(report), failure=report.longreprtext[-4000:])
        elif report.skipped and entry["outcome"] == "passed":
            entry.update(outcome="skipped", reason=_reason(report))

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        if report.failed:
            self._record(report, "error")

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        self._record(report, "failed" if report.when == "call" else "error")

    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        command = " ".join(["pytest", *session.config.invocation_params.args])
        report = build_report(self.machine, list(self.tests.values()), int(exitstatus), command)
        self.directory.mkdir(parents=True, exist_ok=True)
        for name, text in (("gpu-check.json", json.dumps(report, indent=1, default=str)),
                           ("gpu-check.md", render_markdown(report))):
            partial = self.directory / f".{name}.partial"
            partial.write_text(text + "\n", encoding="utf-8")
            partial.replace(self.directory / name)  # never a half-written report

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        terminalreporter.write_line(f"gpu-check report: {self.directory / 'gpu-check.md'} and gpu-check.json")


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--gpu-report-dir", default="reports", help="where gpu-check.md and gpu-check.json go")


def pytest_configure(config: pytest.Config) -> None:
    config.pluginmanager.register(GpuReport(Path(config.getoption("gpu_report_dir"))), "gpu-report")
