"""``make test``: the whole test suite, its independent passes run side by side.

    python -m tools.test_suite                  # every pass (what `make test` runs)
    python -m tools.test_suite --only notebooks gpu-2
    python -m tools.test_suite --jobs 1         # one pass at a time (default 3)

Each notebook is executed once per mode: the CPU pass (nbval's checked outputs, every exercise
graded empty, wrong and solved in the same run, the executed copies the site renders), the
external-cluster pass, and the GPU-mode passes on the simulated RAPIDS stack (1 and 2 GPUs, two
workers sharing one). The unit, repository and site tests are one more pass; the browser tests
(JupyterLab's Run All) and the GPU wing's tests (the simulated stack's own suite, the GPU
environments resolved against the package index) two more, so that no serial chain is the
longest alone. The passes share
nothing but the tiny dataset, which is generated first: each has its own scratch folder
(``COURSE_SCRATCH_DIR``), progress file and clusters on free ports, and no cell's check depends on
an idle machine. Each pass writes its whole output to ``build/test-logs/<pass>.log``; this prints a
line as each one ends, and the end of the log of any that failed. Every pass process dies with
this one (``utils.base.lifetime.launcher_command``).
"""

from __future__ import annotations

import argparse
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from utils.base.lifetime import launcher_command
from utils.base.paths import REPO_ROOT

SCALE = "tiny"
LOG_DIR = REPO_ROOT / "build" / "test-logs"
EXECUTED_DIR = REPO_ROOT / "build" / "site" / "executed"  # tools.site.layout.BuildDirs(BUILD_DIR).executed
GPU_PASS = "gpu_sim/notebook_pass.py"
# Parts of tests/ that run as passes of their own: long serial chains (JupyterLab's Run All, the simulated
# stack's nested pytest, waits on the package index) that would otherwise make the tests pass the longest.
BROWSER_TESTS = ("tests/notebooks/test_dashboard_browser.py", "tests/notebooks/test_lab_run_all.py")
GPU_WING_TESTS = "tests/gpu_wing"
PYTEST_RESULT = re.compile(r"^=*\s*(\d+ (passed|failed|error).*?)\s*=*$")
FAILED_LOG_LINES = 60
SLOWEST_SHOWN = 15  # the tests pass's log ends with its slowest tests: where its time goes
# On 2 cores the passes together keep both cores busy (1,212 CPU seconds in 10 min 42 s with 3 at a
# time, docs/measurements.md); all 6 at once took longer on the same machine (13 min 54 s).
DEFAULT_JOBS = 3


@dataclass(frozen=True)
class Pass:
    """One independent part of the suite: a command, what it checks, extra environment."""

    name: str
    what: str
    command: tuple[str, ...]
    env: dict[str, str] = field(default_factory=dict)


def passes() -> list[Pass]:
    """Every pass of ``make test``, the longest first (so that the short ones fill in beside them)."""
    python = sys.executable
    own_passes = [f"--ignore={path}" for path in (*BROWSER_TESTS, GPU_WING_TESTS)]
    return [
        Pass("tests", "unit, repository, generator and site tests",
             (python, "-m", "pytest", "tests", *own_passes, f"--durations={SLOWEST_SHOWN}")),
        Pass("notebooks", "every notebook under nbval on the CPU, every exercise graded, copies for the site",
             (python, "-m", "pytest", "notebooks", "--course-exercises", f"--course-executed-dir={EXECUTED_DIR}"),
             {"COURSE_BACKEND": "cpu"}),
        Pass("gpu-shared", "GPU mode, 2 workers sharing 1 simulated GPU", (python, GPU_PASS, "--shared-gpu")),
        Pass("gpu-1", "GPU mode, 1 simulated GPU", (python, GPU_PASS, "--gpus", "1")),
        Pass("gpu-2", "GPU mode, 2 simulated GPUs", (python, GPU_PASS, "--gpus", "2")),
        Pass("external", "every notebook against an external scheduler and 2 workers",
             (python, "-m", "tools.external_pass")),
        Pass("gpu-wing", "the simulated stack's own tests, the GPU tools, the GPU environments against the index",
             (python, "-m", "pytest", GPU_WING_TESTS)),
        Pass("browser", "the dashboard and JupyterLab in headless Chromium", (python, "-m", "pytest", *BROWSER_TESTS)),
    ]


@dataclass
class Running:
    spec: Pass
    process: subprocess.Popen
    log: Path
    scratch: tempfile.TemporaryDirectory
    started: float
    cpu_seconds: float = 0.0  # user + system time of the pass and the processes it waited for

    def finished(self) -> bool:
        """Reap the pass if it ended (``os.wait4``: its exit code and the CPU time it used)."""
        if self.process.returncode is not None:
            return True
        pid, status, usage = os.wait4(self.process.pid, os.WNOHANG)
        if pid == 0:
            return False
        self.process.returncode = os.waitstatus_to_exitcode(status)
        self.cpu_seconds = usage.ru_utime + usage.ru_stime
        return True


def _minutes(seconds: float) -> str:
    minutes, rest = divmod(round(seconds), 60)
    return f"{minutes} min {rest:02d} s" if minutes else f"{rest} s"


def _result_line(log: Path) -> str:
    """The last pytest result line of a pass's log ("368 passed, 2 skipped in 118.58s"), if any."""
    found = ""
    for line in log.read_text(errors="replace").splitlines():
        if match := PYTEST_RESULT.match(line.strip()):
            found = match.group(1)
    return found


def _start(spec: Pass) -> Running:
    scratch = tempfile.TemporaryDirectory(prefix=f"course-{spec.name}-")
    env = {**os.environ, "COURSE_SCALE": SCALE, "COURSE_SCRATCH_DIR": scratch.name, **spec.env}
    env.pop("DASK_SCHEDULER_ADDRESS", None)  # each pass chooses its own cluster
    log = LOG_DIR / f"{spec.name}.log"
    with open(log, "wb") as out:
        process = subprocess.Popen(launcher_command(list(spec.command)), cwd=REPO_ROOT, env=env, stdout=out,
                                   stderr=subprocess.STDOUT, start_new_session=True)
    return Running(spec, process, log, scratch, time.perf_counter())


def _stop(running: Running) -> None:
    """The pass's whole process group: pytest, its kernels, their clusters."""
    if running.process.poll() is None:
        for sig in (signal.SIGTERM, signal.SIGKILL):
            try:
                os.killpg(running.process.pid, sig)
                running.process.wait(timeout=10)
                break
            except (ProcessLookupError, subprocess.TimeoutExpired):
                continue
    running.scratch.cleanup()


@dataclass(frozen=True)
class CpuClock:
    """Every core's CPU time since boot, busy and idle, in seconds (Linux ``/proc/stat``)."""

    busy: float
    idle: float


def cpu_clock(stat: str | None = None) -> CpuClock | None:
    """The machine's CPU counters, or None where there are none (not Linux).

    Why: a pass's own figure counts only the processes it waited for; kernels and the worker
    processes of their clusters that end otherwise are missed (by about a third in the run that
    docs/measurements.md breaks down), so the whole run's cost is read from the machine."""
    if stat is None:
        try:
            stat = Path("/proc/stat").read_text()
        except OSError:
            return None
    fields = stat.split("\n", 1)[0].split()
    if len(fields) < 8 or fields[0] != "cpu":
        return None
    user, nice, system, idle, iowait, irq, softirq = (int(value) for value in fields[1:8])
    hertz = os.sysconf("SC_CLK_TCK")
    return CpuClock(busy=(user + nice + system + irq + softirq) / hertz, idle=(idle + iowait) / hertz)


def cpu_summary(before: CpuClock | None, after: CpuClock | None) -> str:
    """One line: how busy the machine's cores were between two readings (whatever ran on them)."""
    if before is None or after is None:
        return ""
    busy, idle = after.busy - before.busy, after.idle - before.idle
    share = busy / (busy + idle) if busy + idle > 0 else 0.0
    return (f"the machine's {os.cpu_count()} cores: {busy:.0f} CPU seconds busy, {idle:.0f} idle ({share:.0%} busy); "
            "a pass's own figure counts only the processes it waited for")


def generate_data() -> int:
    """The tiny dataset every pass reads, made once before they start (never by two at a time)."""
    command = [sys.executable, "-m", "utils.datagen", "--scale", SCALE]
    return subprocess.call(command, cwd=REPO_ROOT, env={**os.environ, "COURSE_SCALE": SCALE},
                           stdout=subprocess.DEVNULL)


def run(chosen: Sequence[Pass], jobs: int) -> int:
    """Run the passes, ``jobs`` at a time; 0 when every one passed."""
    LOG_DIR.mkdir(parents=True, exist_ok=True)
    started, clock = time.perf_counter(), cpu_clock()
    if generate_data() != 0:
        print("error: the tiny dataset could not be generated (python -m utils.datagen --scale tiny)",
              file=sys.stderr)
        return 1
    waiting, running, failed = list(chosen), [], []
    print(f"{len(chosen)} passes, {jobs} at a time; logs in {LOG_DIR.relative_to(REPO_ROOT)}/", flush=True)
    try:
        while waiting or running:
            while waiting and len(running) < jobs:
                running.append(_start(waiting.pop(0)))
            time.sleep(0.5)
            for job in [job for job in running if job.finished()]:
                running.remove(job)
                job.scratch.cleanup()
                code = job.process.returncode
                mark = "✓" if code == 0 else "✗"
                result = _result_line(job.log) or f"exit {code}"
                print(f"{mark} {job.spec.name} ({job.spec.what}): {result}, "
                      f"{_minutes(time.perf_counter() - job.started)} ({job.cpu_seconds:.0f} s of CPU)", flush=True)
                if code != 0:
                    failed.append(job.spec.name)
                    tail = job.log.read_text(errors="replace").splitlines()[-FAILED_LOG_LINES:]
                    print("\n".join(f"    {line}" for line in tail), flush=True)
    except KeyboardInterrupt:
        print("interrupted: stopping every pass", file=sys.stderr)
        failed.append("interrupted")
    finally:
        for job in running:
            _stop(job)
    total = _minutes(time.perf_counter() - started)
    if summary := cpu_summary(clock, cpu_clock()):
        print(summary)
    if failed:
        print(f"test suite FAILED in {total}: {', '.join(failed)} (logs in {LOG_DIR.relative_to(REPO_ROOT)}/)")
        return 1
    print(f"test suite passed in {total}: {len(chosen)} passes")
    return 0


def main(argv: list[str] | None = None) -> int:
    every = passes()
    names = [spec.name for spec in every]
    parser = argparse.ArgumentParser(prog="python -m tools.test_suite", description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=DEFAULT_JOBS,
                        help=f"passes at a time (default {DEFAULT_JOBS}; the suite is CPU-bound on 2 cores)")
    parser.add_argument("--only", nargs="+", choices=names, metavar="PASS",
                        help=f"run only these passes ({', '.join(names)})")
    args = parser.parse_args(argv)
    if args.jobs < 1:
        parser.error(f"--jobs must be at least 1, got {args.jobs}")
    chosen = [spec for spec in every if not args.only or spec.name in args.only]
    return run(chosen, args.jobs)


if __name__ == "__main__":
    sys.exit(main())
