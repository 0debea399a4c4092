"""pytest plugin: ``gpu-check.md`` and ``gpu-check.json`` from pytest's own results; and the report of
the offline GPU run (``tools/gpu/device/gpu-check.sh``), ``gpu-run.md`` and ``gpu-run.json``.

    python -m pytest tests/gpu -p tools.gpu.report [--gpu-report-dir reports]
    python -m tools.gpu.report record OUT STEP ok|failed|skipped [--exit N] [--seconds S] [--detail TEXT]
    python -m tools.gpu.report summarize OUT [--final]

The header names the machine (date, host, CPU, Python, GPUs with the NVIDIA driver and CUDA
versions from NVML, CuPy's CUDA runtime, library versions); then one row per test with pytest's
outcome, seconds and the reason for a skip or failure; then what each test recorded with
``record_property`` (sizes, timings, result types). Both files are rewritten after every test, so a
run that is killed (a time limit on the GPU machine) still leaves the outcomes it reached.

The run report has one row per step of gpu-check.sh, written as each step ends (whatever the later
steps do), and one table of the course's GPU paths: proved here, failed, or not proved here and why
(everything that needs a cudf DataFrame: cudf cannot be carried to a machine without network).
This module imports only the standard library at the top, so the run report is written even where the
carried packages could not be installed.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import socket
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pytest

PACKAGES = ("dask", "distributed", "dask_cuda", "cupy", "cudf", "dask_cudf", "rmm", "pynvml", "numba",
            "numpy", "pandas", "pyarrow", "bokeh", "pytest", "nbval")
OUTCOMES = ("passed", "failed", "error", "skipped")


def machine() -> dict[str, Any]:
    """Everything the report says about the machine, so a reader can tell which run it was."""
    from utils.machine import cpu_count, cpu_name, cuda_version, nvml_gpus, package_version

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


def build_report(machine: dict[str, Any], tests: list[dict[str, Any]], exit_status: int | None, command: str) -> dict:
    counts = {outcome: sum(test["outcome"] == outcome for test in tests) for outcome in OUTCOMES}
    return {"command": command, "exit_status": exit_status, "counts": counts, "machine": machine, "tests": tests}


def _cell(value: Any) -> str:
    return str(value).replace("|", "\\|").replace("\n", " ")


def render_markdown(report: dict[str, Any]) -> str:
    """The report for people (and for docs/gpu-validation.md)."""
    m, gpus = report["machine"], report["machine"]["gpus"]
    devices = "; ".join(f"{d['name']} ({d['memory_gib']} GiB)" for d in gpus.get("devices", []))
    cluster = f"existing scheduler {m['scheduler_address']}" if m["scheduler_address"] else "started by the tests"
    status = report["exit_status"]
    ended = f"pytest exit status {status}" if status is not None else "pytest had not finished when this was written"
    lines = [
        "# GPU check report", "",
        f"`{report['command']}`: {', '.join(f'{n} {o}' for o, n in report['counts'].items())} ({ended}).", "",
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


def _write_atomically(path: Path, text: str) -> None:
    """Never a half-written report: a partial file, then a rename."""
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f".{path.name}.partial")
    partial.write_text(text + "\n", encoding="utf-8")
    partial.replace(path)


class GpuReport:
    """Each test's outcome over its setup, call and teardown; both files rewritten after each test."""

    def __init__(self, directory: Path) -> None:
        self.directory, self.machine = directory, machine()
        self.tests: dict[str, dict[str, Any]] = {}
        self.command = "pytest"

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
        if report.when == "teardown":  # what is known so far, in case the run is killed before its end
            self._write(None)

    def pytest_sessionstart(self, session: pytest.Session) -> None:
        self.command = " ".join(["pytest", *session.config.invocation_params.args])

    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        self._write(int(exitstatus))

    def _write(self, exit_status: int | None) -> None:
        report = build_report(self.machine, list(self.tests.values()), exit_status, self.command)
        _write_atomically(self.directory / "gpu-check.json", json.dumps(report, indent=1, default=str))
        _write_atomically(self.directory / "gpu-check.md", render_markdown(report))

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        terminalreporter.write_line(f"gpu-check report: {self.directory / 'gpu-check.md'} and gpu-check.json")


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--gpu-report-dir", default="reports", help="where gpu-check.md and gpu-check.json go")


def pytest_configure(config: pytest.Config) -> None:
    config.pluginmanager.register(GpuReport(Path(config.getoption("gpu_report_dir"))), "gpu-report")


# The report of tools/gpu/device/gpu-check.sh -----------------------------------------------------

RUN_JSON, RUN_MD = "gpu-run.json", "gpu-run.md"
# Each step of gpu-check.sh, in order, and what it does.
RUN_STEPS = {
    "probe": "the driver's CUDA major (tools.gpu.preflight --probe-cuda)",
    "install": "the carried wheels of that major, into the site folder",
    "preflight": "every module imports; carried versions win; the machine's packages meet their ranges",
    "single": "tools.gpu.check on LocalCUDACluster (one worker per GPU)",
    "shared-cluster": "a scheduler and two `dask cuda worker` processes on GPU 0",
    "shared": "tools.gpu.check --workers 2 --shared-gpu on that cluster",
}
SETUP_STEPS = ("probe", "install", "preflight", "shared-cluster")  # a failure there: exit status 2
RUNS = {"single": "LocalCUDACluster", "shared": "2 workers on GPU 0"}
NO_CUDF = "not proved here: needs cudf, which cannot be carried (libcudf alone is a 667 MB wheel)"


@dataclass(frozen=True)
class CoursePath:
    """A GPU code path of the course, the test that proves it, and in which runs that test proves it."""

    what: str
    test: str | None  # the test function's name up to its number, e.g. "test_3_"; None: no test can here
    runs: tuple[str, ...] = ("single", "shared")
    needs_cudf: bool = False


COURSE_PATHS = (
    CoursePath("dask-cuda's LocalCUDACluster: one worker per GPU, each on its own device", "test_1a_", ("single",)),
    CoursePath("the classroom recipe: two `dask cuda worker` processes sharing GPU 0", "test_1a_", ("shared",)),
    CoursePath("the dashboard's GPU pages plot every worker", "test_2_"),
    CoursePath("total sales per customer on CuPy chunks, exact against the generator's ground truth", "test_3_"),
    CoursePath("CuPy chunks moving between workers (distributed's CuPy serializers)", "test_3_", ("shared",)),
    CoursePath("`utils.start_client(backend=\"gpu\", dataframes=False)`: LocalCUDACluster, cudf spilling off, "
               "the course's worker plugin", "test_5a_", ("single",)),
    CoursePath("`utils.cluster.describe` / `workers_hardware` on dask-cuda workers", "test_5b_"),
    CoursePath("a CUDA context on every worker, made by dask-cuda's preload", "test_5c_"),
    CoursePath("`utils.partitions` advice from a real device's memory", "test_5d_"),
    CoursePath("notebook 05's device-memory budget: dask-cuda moves CuPy chunks to host memory and back",
               "test_5e_", ("single",)),
    CoursePath("dask-cuda's RMM options (`rmm_pool_size`, `rmm_async`) read back on the workers", "test_5f_",
               ("single",)),
    CoursePath("CuPy through distributed's serializers on a device (host frames and back)", "test_5g_"),
    CoursePath("the course picks LocalCUDACluster and cudf by itself (`start_client()` unaided)", "test_1b_",
               ("single",), needs_cudf=True),
    CoursePath("the article's groupby-sum on cudf from CSV, exact, timed against pandas", "test_4a_",
               needs_cudf=True),
    CoursePath("every notebook in GPU mode (cudf partitions, dask_cudf readers, XGBoost/cuML on cudf)", "test_4b_",
               needs_cudf=True),
    CoursePath("cudf's own spilling (`enable_cudf_spill=True`)", None, needs_cudf=True),
)


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _load(path: Path) -> dict[str, Any] | None:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _shorten(text: str, limit: int = 2000) -> str:
    """A step's detail in the report: its beginning (an ``error:`` line names its problems first)."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def record_step(out: Path, step: str, status: str, exit_status: int | None = None, seconds: float | None = None,
                detail: str = "", cuda_major: int | None = None) -> dict[str, Any]:
    """Add (or replace) ``step`` in ``out/gpu-run.json`` and rewrite both run files at once, so what
    ran is on disk whatever the next step does."""
    if step not in RUN_STEPS or status not in ("ok", "failed", "skipped"):
        raise ValueError(f"unknown step {step!r} or status {status!r}")
    run = _load(out / RUN_JSON) or {"started_utc": _now(), "host": socket.gethostname(), "steps": []}
    run["steps"] = [s for s in run["steps"] if s["step"] != step] + [{
        "step": step, "status": status, "exit": exit_status,
        "seconds": None if seconds is None else round(seconds, 1), "detail": _shorten(detail.strip())}]
    if cuda_major is not None:
        run["cuda_major"] = cuda_major
    return write_run(out, run)


def _outcomes(out: Path) -> dict[str, dict[str, Any]]:
    """The pytest report of each run (``out/single``, ``out/shared``) that exists."""
    return {name: report for name in RUNS if (report := _load(out / name / "gpu-check.json")) is not None}


def _cell_of(report: dict[str, Any] | None, test: str | None) -> tuple[str, str]:
    """(outcome, text) of the tests named ``test`` in one pytest report: every parameter must pass."""
    if report is None:
        return "absent", "not run"
    found = [t for t in report["tests"] if test and t["test"].split("::")[-1].startswith(test)]
    if not found:
        return "absent", "not in this run"
    for outcome in ("failed", "error", "skipped"):
        hit = [t for t in found if t["outcome"] == outcome]
        if hit:
            return outcome, f"{outcome}: {hit[0]['reason']}"
    return "passed", "passed"


def course_paths(out: Path, final: bool = False) -> list[dict[str, str]]:
    """One row per course path: its outcome in each run and the verdict (proved here, FAILED, or not
    proved here with the reason)."""
    reports = _outcomes(out)
    rows = []
    for path in COURSE_PATHS:
        cells = {name: _cell_of(reports.get(name), path.test) if name in path.runs else ("n/a", "n/a")
                 for name in RUNS}
        counted = [cells[name] for name in path.runs]
        outcomes = {outcome for outcome, _ in counted}
        if outcomes & {"failed", "error"}:
            verdict = "FAILED: " + next(text for outcome, text in counted if outcome in ("failed", "error"))
        elif "passed" in outcomes:
            verdict = "proved here"
        elif path.needs_cudf:
            verdict = NO_CUDF
        elif "skipped" in outcomes:
            verdict = "not proved here: " + next(text for outcome, text in counted if outcome == "skipped")
        else:
            verdict = "not proved here: its run did not take place" if final else "not run yet"
        rows.append({"path": path.what, "test": (path.test or "").rstrip("_") or "none possible here",
                     **{name: text for name, (_, text) in cells.items()}, "verdict": verdict})
    return rows


def run_exit_status(run: dict[str, Any], final: bool = False) -> int:
    """0: every step ran and passed (or was left out on purpose); 1: a test failed; 2: a step could
    not run (the setup steps, a refusal, a timeout, or a step the run never reached)."""
    steps = {s["step"]: s for s in run["steps"]}
    if final and any(step not in steps for step in RUN_STEPS):
        return 2
    failed = [s for s in steps.values() if s["status"] == "failed"]
    if any(s["step"] in SETUP_STEPS or (s["exit"] or 2) >= 2 for s in failed):
        return 2
    return 1 if failed else 0


def write_run(out: Path, run: dict[str, Any], final: bool = False) -> dict[str, Any]:
    """Both run files from ``run`` (the steps so far) and the pytest reports under ``out``."""
    run.update(updated_utc=_now(), final=final, exit_status=run_exit_status(run, final),
               course_paths=course_paths(out, final))
    _write_atomically(out / RUN_JSON, json.dumps(run, indent=1, default=str))
    _write_atomically(out / RUN_MD, render_run(run, _outcomes(out)))
    return run


def render_run(run: dict[str, Any], reports: dict[str, dict[str, Any]]) -> str:
    """The run report for people: the steps, then the course's GPU paths, proved here or not."""
    steps = {s["step"]: s for s in run["steps"]}
    meaning = {0: "every step passed", 1: "a GPU test failed", 2: "a step could not run or has not finished"}
    gpus = next((r["machine"]["gpus"] for r in reports.values() if r["machine"]["gpus"].get("devices")), None)
    devices = "; ".join(f"{d['name']} ({d['memory_gib']} GiB)" for d in gpus["devices"]) if gpus else "see the steps"
    probe = steps.get("probe", {}).get("detail", "not probed")
    lines = [
        "# GPU run report (`tools/gpu/device/gpu-check.sh`)", "",
        f"Exit status {run['exit_status']}: {meaning[run['exit_status']]}"
        + ("" if run["final"] else " (the run is still going: this file is rewritten after every step)") + ".", "",
        f"- Started (UTC): {run['started_utc']}; last written: {run['updated_utc']}; host: {run['host']}",
        f"- CUDA major: {run.get('cuda_major', 'unknown')} ({_cell(probe)})",
        f"- GPUs: {devices}", "",
        "## Steps", "", "| Step | What it does | Outcome | Exit | Seconds | Detail |", "|---|---|---|---:|---:|---|",
    ]
    for step, what in RUN_STEPS.items():
        s = steps.get(step)
        if s is None:
            lines.append(f"| {step} | {_cell(what)} | **not run** |  |  | "
                         f"{'the run ended before this step' if run['final'] else 'not reached yet'} |")
            continue
        seconds = "" if s["seconds"] is None else f"{s['seconds']:.1f}"
        lines.append(f"| {step} | {_cell(what)} | **{s['status']}** | {'' if s['exit'] is None else s['exit']} | "
                     f"{seconds} | {_cell(s['detail'])} |")
    for name, report in reports.items():
        counts = ", ".join(f"{n} {o}" for o, n in report["counts"].items())
        lines.append(f"\n`{name}/gpu-check.md` ({RUNS[name]}): {counts}.")
    lines += ["", "## Course paths: proved here or not", "",
              f"| Course path | Test | {RUNS['single']} | {RUNS['shared']} | Verdict |", "|---|---|---|---|---|"]
    lines += [f"| {_cell(r['path'])} | {r['test']} | {_cell(r['single'])} | {_cell(r['shared'])} | "
              f"**{_cell(r['verdict'])}** |" for r in run["course_paths"]]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.gpu.report", description="The run report of "
                                     "tools/gpu/device/gpu-check.sh (the pytest plugin is `-p tools.gpu.report`).")
    commands = parser.add_subparsers(dest="command", required=True)
    record = commands.add_parser("record", help="add a step's outcome and rewrite gpu-run.md/json")
    record.add_argument("out", type=Path)
    record.add_argument("step", choices=list(RUN_STEPS))
    record.add_argument("status", choices=("ok", "failed", "skipped"))
    record.add_argument("--exit", type=int, dest="exit_status")
    record.add_argument("--seconds", type=float)
    record.add_argument("--detail", default="")
    record.add_argument("--detail-file", type=Path, help="take the detail from this file's last error line")
    record.add_argument("--cuda-major", type=int)
    summarize = commands.add_parser("summarize", help="rewrite gpu-run.md/json; exit with the run's status")
    summarize.add_argument("out", type=Path)
    summarize.add_argument("--final", action="store_true", help="the run has ended: steps not run count as such")
    args = parser.parse_args(argv)
    if args.command == "record":
        detail = args.detail
        if args.detail_file is not None:
            detail = " ".join(filter(None, [detail, last_error_line(args.detail_file)]))
        record_step(args.out, args.step, args.status, args.exit_status, args.seconds, detail, args.cuda_major)
        return 0
    run = _load(args.out / RUN_JSON) or {"started_utc": _now(), "host": socket.gethostname(), "steps": []}
    return int(write_run(args.out, run, final=args.final)["exit_status"])


def last_error_line(path: Path) -> str:
    """The last ``error:`` line of a step's stderr (the one-line refusals of the tools), else its last line."""
    try:
        lines = [line.strip() for line in path.read_text(encoding="utf-8", errors="replace").splitlines()]
    except OSError:
        return ""
    lines = [line for line in lines if line]
    errors = [line for line in lines if line.startswith("error:")]
    return (errors or lines or [""])[-1]


if __name__ == "__main__":
    sys.exit(main())
