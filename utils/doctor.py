"""Is this machine ready for the course? One line per check, OK / WARN / FAIL, and the fix for
every failure, so a learner (or an instructor before a workshop) learns what to repair before a
notebook breaks in front of a class.

    python -m utils.doctor                  # the scale from $COURSE_SCALE (default: small)
    python -m utils.doctor --scale binder --no-cluster

Exit status: 0 when nothing failed (warnings allowed), 1 when a check failed, 2 for bad
arguments. Notebook 00 shows the same report (``diagnose(client=client)``). Facts about the
machine come from ``utils.machine``; sizes from the data generator's own estimates.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import sys
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

from utils.backend import BACKEND_ENV_VAR, GPU_PACKAGES, choose_backend, missing_gpu_packages, to_pandas
from utils.base.lifetime import remove_orphaned_semaphores
from utils.base.paths import (
    DATA_DIR_ENV_VAR,
    REPO_ROOT,
    SCRATCH_ENV_VAR,
    SCRATCH_NAME,
    CoursePathError,
    default_data_dir,
    scratch_root,
)
from utils.base.units import human_bytes
from utils.cluster import dashboard_address, describe, shutdown, start_client
from utils.datagen.build import remove_stale_temporaries
from utils.datagen.manifest import dataset_dir, is_complete
from utils.datagen.params import make_params
from utils.datagen.scales import SCALES, resolve_scale
from utils.datagen.sizes import available_memory, estimated_bytes, partition_peak_bytes
from utils.machine import GPU_INSTALL_HINT, cpu_count, gpu_count, nvml_gpus, package_version
from utils.processes import remove_stale_cluster_dirs

OK, WARN, FAIL = "OK", "WARN", "FAIL"
PYTHON_MIN = (3, 11)  # pyproject.toml: requires-python
REQUIREMENTS = REPO_ROOT / "requirements.txt"
CONSTRAINTS = REPO_ROOT / "constraints.txt"
INSTALL_FIX = "pip install -r requirements.txt -c constraints.txt in the course checkout (or rerun make venv)"
TROUBLESHOOTING = "see README.md, Troubleshooting"
HOSTED_GPU_PAGE = "docs/hosted-gpu.md"  # running the GPU path on Colab, Kaggle, Brev, Coiled or a cluster
DASHBOARD_TIMEOUT_S = 10
_SHOWN = 4  # mismatches named in one line before "and N more"


@dataclass(frozen=True)
class Check:
    """One line of the report: what was checked, the verdict, what was found, how to fix it."""

    name: str
    status: str
    detail: str
    fix: str = ""

    def line(self) -> str:
        fix = f"; fix: {self.fix}" if self.fix and self.status != OK else ""
        return f"{self.status:<4}  {self.name:<17} {self.detail}{fix}"


# --- versions -------------------------------------------------------------------------------------

def _normalise(name: str) -> str:
    return name.lower().replace("_", "-").replace(".", "-")


TOOLING_HEADING = re.compile(r"^#\s*tests\b", re.I)  # requirements.txt: "# tests and notebook tooling"


def read_pins(path: Path, lines: list[str] | None = None) -> dict[str, tuple[str, str]]:
    """``{normalised name: (name, version)}`` for every ``name==version`` line of a requirements
    or constraints file that applies to this platform (environment markers are evaluated)."""
    from packaging.requirements import InvalidRequirement, Requirement

    pins: dict[str, tuple[str, str]] = {}
    for raw in path.read_text().splitlines() if lines is None else lines:
        line = raw.split(" #", 1)[0].strip()
        if not line or line.startswith(("#", "-")):
            continue
        try:
            requirement = Requirement(line)
        except InvalidRequirement:
            continue
        exact = [spec.version for spec in requirement.specifier if spec.operator == "=="]
        if exact and (requirement.marker is None or requirement.marker.evaluate()):
            pins[_normalise(requirement.name)] = (requirement.name, exact[0])
    return pins


def split_requirements(path: Path) -> tuple[dict[str, tuple[str, str]], dict[str, tuple[str, str]]]:
    """The pins of ``requirements.txt`` in two parts: what the notebooks need, and the test and
    notebook tooling listed under its ``# tests ...`` heading (a conda GPU environment may lack
    those and still run every notebook)."""
    lines = path.read_text().splitlines()
    cut = next((i for i, line in enumerate(lines) if TOOLING_HEADING.match(line.strip())), len(lines))
    return read_pins(path, lines[:cut]), read_pins(path, lines[cut:])


# Distributions that install the same module under another name. requirements.txt pins the CPU
# build ``xgboost-cpu`` on Linux; the conda GPU environment (environment.yml) installs the
# CUDA-enabled ``xgboost`` instead, and either at the pinned version is the right XGBoost.
SAME_MODULE = {"xgboost-cpu": ("xgboost",)}


def installed_version(name: str) -> str | None:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def _version_of_any(name: str, version_of: Callable[[str], str | None]) -> str | None:
    """The installed version of ``name``, or of a distribution that provides the same module."""
    for candidate in (name, *SAME_MODULE.get(_normalise(name), ())):
        version = version_of(candidate)
        if version is not None:
            return version
    return None


def pinned_versions(
    requirements: Path = REQUIREMENTS, version_of: Callable[[str], str | None] = installed_version
) -> list[tuple[str, str | None, str]]:
    """``(package, installed version or None, pinned version)`` for the course's direct
    requirements, in the file's order: the table notebook 00 shows."""
    return [(name, _version_of_any(name, version_of), pin) for name, pin in read_pins(requirements).values()]


def _differences(pins: dict[str, tuple[str, str]], version_of: Callable[[str], str | None]) -> list[str]:
    found = []
    for name, pin in pins.values():
        version = _version_of_any(name, version_of)
        if version is None:
            found.append(f"{name} not installed (pinned {pin})")
        elif version != pin:
            found.append(f"{name} {version} (pinned {pin})")
    return found


def _listing(items: list[str]) -> str:
    more = f" and {len(items) - _SHOWN} more" if len(items) > _SHOWN else ""
    return "; ".join(items[:_SHOWN]) + more


def check_python(version: tuple[int, ...] = tuple(sys.version_info[:3])) -> Check:
    text = ".".join(map(str, version))
    if tuple(version[:2]) < PYTHON_MIN:
        need = ".".join(map(str, PYTHON_MIN))
        fix = f"install Python >= {need} and rerun make venv"
        return Check("python", FAIL, f"{text}; the course needs >= {need}", fix)
    return Check("python", OK, f"{text} (the pins were made on 3.11)")


def check_versions(
    requirements: Path = REQUIREMENTS,
    constraints: Path = CONSTRAINTS,
    version_of: Callable[[str], str | None] = installed_version,
) -> list[Check]:
    """The libraries the notebooks use must be installed at their pins (FAIL otherwise); the test
    tooling and every other pinned package should be (WARN: the notebooks do not notice)."""
    missing_files = [str(p) for p in (requirements, constraints) if not p.is_file()]
    if missing_files:
        return [Check("library versions", WARN, f"not checked: {', '.join(missing_files)} not found",
                      "run the doctor from the course checkout (the folder with requirements.txt)")]
    course, tooling = split_requirements(requirements)
    everything = read_pins(constraints)
    checks = []
    wrong = _differences(course, version_of)
    if wrong:
        checks.append(Check("course libraries", FAIL, _listing(wrong), INSTALL_FIX))
    else:
        named = ", ".join(f"{name} {pin}" for name, pin in list(course.values())[:3])
        detail = f"{len(course)} pinned in requirements.txt, all installed ({named}, ...)"
        checks.append(Check("course libraries", OK, detail))
    if tooling:
        wrong = _differences(tooling, version_of)
        if wrong:
            checks.append(Check("test tools", WARN, f"{_listing(wrong)} (needed for make test, not for the notebooks)",
                                INSTALL_FIX))
        else:
            checks.append(Check("test tools", OK, f"{len(tooling)} pinned in requirements.txt, all installed"))
    direct = {**course, **tooling}
    others = {key: value for key, value in everything.items() if key not in direct}
    wrong = _differences(others, version_of)
    if wrong:
        checks.append(Check("other packages", WARN, _listing(wrong), INSTALL_FIX))
    else:
        checks.append(Check("other packages", OK, f"{len(others)} more pinned in constraints.txt, all installed"))
    return checks


# --- hardware -------------------------------------------------------------------------------------

def check_gpus() -> Check:
    """GPUs this process may use, with the driver and CUDA version where NVML answers."""
    usable = gpu_count()
    if usable == 0:
        return Check("GPUs", OK, f"none usable: the course runs on the CPU (pandas) backend; for its GPU path on a "
                     f"hosted GPU, see {HOSTED_GPU_PAGE}")
    nvml = nvml_gpus()
    names = sorted({device["name"] for device in nvml.get("devices", [])})
    driver = f"driver {nvml['driver']}, CUDA {nvml['cuda_driver']}" if "driver" in nvml else nvml.get("error", "")
    return Check("GPUs", OK, f"{usable} usable ({', '.join(names) or 'unknown model'}); {driver}")


def check_gpu_packages() -> Check:
    """cudf / dask-cudf / dask-cuda serve only the GPU path: without an NVIDIA GPU their absence is
    nothing to fix (OK, no fix); on a GPU machine it leaves the GPU unused (a warning with the fix)."""
    missing = missing_gpu_packages()
    if not missing:
        found = ", ".join(f"{name} {package_version(name)}" for name in GPU_PACKAGES)
        return Check("GPU libraries", OK, found)
    if not gpu_count():
        return Check("GPU libraries", OK, f"{', '.join(missing)} not installed — not needed on this machine "
                     "(no NVIDIA GPU); the CPU path runs every notebook")
    return Check("GPU libraries", WARN, f"{', '.join(missing)} not installed (GPUs are present but the course "
                 "will use the CPU backend)", GPU_INSTALL_HINT)


def check_backend() -> Check:
    """The backend ``start_client`` would choose; an impossible ``$COURSE_BACKEND`` fails here."""
    try:
        backend = choose_backend()
    except ValueError as error:
        return Check("backend", FAIL, str(error).split(";")[0], f"unset {BACKEND_ENV_VAR} or set it to cpu")
    return Check("backend", OK, f"{backend.name} ({backend.dataframe_library}): {backend.reason}")


def check_cpu(usable: int | None = None, host: int | None = None) -> Check:
    """Cores this process may use (Dask's count: after any CPU quota or affinity) next to the host's."""
    usable = cpu_count() if usable is None else usable
    host = (os.cpu_count() or usable) if host is None else host
    detail = f"{usable} usable cores (after any CPU quota or affinity; the host has {host})"
    if usable < 2:
        return Check("CPU", WARN, f"{detail}: parallel speed-ups cannot show with one core",
                     "give the container or VM at least 2 CPUs (the course still runs)")
    return Check("CPU", OK, detail)


# --- data: disk and memory for the chosen scale ------------------------------------------------

def _existing_parent(path: Path) -> Path:
    for candidate in (path, *path.parents):
        if candidate.exists():
            return candidate
    return Path.cwd()


def _dataset_present(scale: str, data_dir: Path) -> bool:
    return is_complete(dataset_dir(data_dir, scale), make_params(scale))


def check_dataset(scale: str, data_dir: Path) -> Check:
    if _dataset_present(scale, data_dir):
        return Check("dataset", OK, f"scale {scale!r} is complete in {data_dir}")
    return Check("dataset", WARN, f"scale {scale!r} not generated yet in {data_dir} (the first notebook generates it)",
                 f"python -m utils.datagen --scale {scale} (or make data)")


READ_ONLY, NOT_A_FOLDER = "read-only", "not a folder"


def _folder_problem(folder: Path) -> tuple[str, str] | None:
    """Why ``folder`` cannot be written or created, as ``(READ_ONLY or NOT_A_FOLDER, what)``, or None.
    The folder that would be written is ``folder`` itself where it exists, else its nearest existing
    parent, in which it would be created."""
    if folder.exists() and not folder.is_dir():
        return NOT_A_FOLDER, f"{folder} is a file, not a folder"
    existing = _existing_parent(folder)
    if not existing.is_dir():
        return NOT_A_FOLDER, f"{folder} cannot be created: {existing} is a file, not a folder"
    if not os.access(existing, os.W_OK):
        created = "" if existing == folder else f", so {folder} cannot be created"
        return READ_ONLY, f"{existing} is read-only{created}"
    return None


def check_folders(scale: str, data_dir: Path, scratch: Path) -> list[Check]:
    """The data folder can hold the ``scale`` data (a read-only one is fine once the data is
    there: a room may share one pre-generated folder), and the learner's scratch folder (the
    notebooks' throw-away copies, the exercise progress) can be written."""
    problem = _folder_problem(data_dir)
    if problem is None:
        data = Check("data folder", OK, f"{data_dir} can be written")
    elif problem[0] == READ_ONLY and _dataset_present(scale, data_dir):
        data = Check("data folder", OK, f"{data_dir} is read-only; the {scale!r} data is already there (only read)")
    elif problem[0] == READ_ONLY:
        data = Check("data folder", FAIL, f"{problem[1]}: the {scale!r} data cannot be generated there",
                     f"set {DATA_DIR_ENV_VAR} (or --data-dir) to a folder you can write "
                     f"(e.g. export {DATA_DIR_ENV_VAR}=~/course-data), or generate the data there as its owner")
    else:
        data = Check("data folder", FAIL, problem[1], f"point {DATA_DIR_ENV_VAR} (or --data-dir) at a folder, "
                     "or unset it to use data/ in the course folder")
    problem = _folder_problem(scratch)
    if problem is None:
        return [data, Check("scratch folder", OK, f"{scratch} can be written")]
    kind, detail = problem
    if kind == READ_ONLY:
        detail += ": the notebooks' copies and your exercise progress go there"
    if scratch == data_dir / SCRATCH_NAME:  # the default, inside the data folder
        fix = f"set {SCRATCH_ENV_VAR} to a folder of your own (e.g. export {SCRATCH_ENV_VAR}=~/course-scratch)"
    else:
        fix = (f"point {SCRATCH_ENV_VAR} at a folder of your own that you can write (e.g. ~/course-scratch), "
               "or unset it to use scratch/ in the data folder")
    return [data, Check("scratch folder", FAIL, detail, fix)]


def check_disk(scale: str, data_dir: Path, free: int | None = None) -> Check:
    """Enough free disk to generate ``scale`` (the generator's own estimate), unless it exists."""
    free = shutil.disk_usage(_existing_parent(data_dir)).free if free is None else free
    if _dataset_present(scale, data_dir):
        return Check("disk", OK, f"{human_bytes(free)} free in {data_dir}; the {scale!r} data is already there")
    need = estimated_bytes(make_params(scale))
    detail = f"scale {scale!r} needs about {human_bytes(need)}, {human_bytes(free)} free in {data_dir}"
    if need > free:
        return Check("disk", FAIL, detail,
                     "free some space, choose a smaller COURSE_SCALE, or set COURSE_DATA_DIR to a bigger disk")
    return Check("disk", OK, detail)


def check_memory(scale: str, available: int | None = None) -> Check:
    """Enough memory to generate ``scale`` with one process (the generator's own rule)."""
    available = available_memory() if available is None else available
    need = partition_peak_bytes(make_params(scale))
    detail = (f"{human_bytes(available)} available; generating scale {scale!r} needs about "
              f"{human_bytes(need)} per process")
    if need > available:
        return Check("memory", FAIL, detail, "close other programs or choose a smaller COURSE_SCALE")
    return Check("memory", OK, detail)


def check_leftovers(data_dir: Path) -> Check:
    """Remove what killed course runs left behind, and say what: the generator's hidden temporary
    folders in ``data_dir`` and the private folders (TLS keys, logs) of external clusters in $TMPDIR.
    Only the course's own names with a dead owner pid are touched (``remove_stale_*``), and the
    multiprocessing semaphores in /dev/shm that no process maps any more."""
    freed = remove_stale_temporaries(data_dir) if data_dir.is_dir() else 0
    clusters = remove_stale_cluster_dirs()
    semaphores = remove_orphaned_semaphores()
    cleaned = []
    if freed:
        cleaned.append(f"temporary data folders of dead generators ({human_bytes(freed)}) in {data_dir}")
    if clusters:
        plural = "s" if len(clusters) > 1 else ""
        cleaned.append(f"{len(clusters)} cluster folder{plural} of dead kernels ({', '.join(clusters[:_SHOWN])})")
    if semaphores:
        cleaned.append(f"{len(semaphores)} orphaned semaphore(s) of killed runs in /dev/shm")
    return Check("leftovers", OK, "removed " + "; ".join(cleaned) if cleaned else "none from killed runs")


# --- a cluster, a computation, the dashboard ------------------------------------------------------

def _tiny_computation(client: Any) -> Check:
    """Sum per key of 0..n-1 by ``i % 7`` on the cluster, against plain Python's answer."""
    import dask.dataframe as dd
    import numpy as np

    n, keys = 10_000, 7
    frame = dd.from_dict({"key": np.arange(n) % keys, "value": np.arange(n)}, npartitions=4)
    result = to_pandas(frame.groupby("key")["value"].sum().compute()).sort_index()
    expected = {key: sum(range(key, n, keys)) for key in range(keys)}
    got = {int(key): int(value) for key, value in result.items()}
    if got != expected:
        return Check("computation", FAIL, f"groupby-sum gave {got}, expected {expected}", TROUBLESHOOTING)
    workers = len(client.scheduler_info(n_workers=-1)["workers"])
    return Check("computation", OK, f"groupby-sum of {n:,} rows on {workers} workers matches plain Python")


def _dashboard(client: Any) -> Check:
    try:
        url = f"{dashboard_address(client)}/status"
        with urllib.request.urlopen(url, timeout=DASHBOARD_TIMEOUT_S) as response:
            status = response.status
            page = response.read(4096).decode("utf-8", "replace")
    except (OSError, RuntimeError) as error:
        return Check("dashboard", FAIL, f"did not answer: {error}",
                     f"install bokeh at its pin ({INSTALL_FIX}); {TROUBLESHOOTING}")
    if status != 200:
        return Check("dashboard", FAIL, f"{url} answered HTTP {status}", TROUBLESHOOTING)
    if "Dask needs bokeh" in page:  # without bokeh, /status is this page (distributed/http/scheduler/missing_bokeh.py)
        return Check("dashboard", FAIL, f"{url} says only \"Dask needs bokeh\": bokeh is not installed here",
                     f"install bokeh at its pin ({INSTALL_FIX})")
    return Check("dashboard", OK, f"{url} answers")


def check_cluster(client: Any = None) -> list[Check]:
    """Start the course's cluster (or use ``client``), run a tiny verified computation, fetch the
    dashboard. A cluster the doctor started is closed again."""
    own = client is None
    if own:
        try:
            client = start_client(quiet=True, replace=False)  # never close a notebook's cluster
        except Exception as error:
            reason = str(error).splitlines()[0] if str(error) else type(error).__name__
            return [Check("cluster", FAIL, f"did not start: {reason}", TROUBLESHOOTING)]
    try:
        info = describe(client)
        where = "external scheduler" if info["external"] else "local cluster"
        checks = [Check("cluster", OK, f"{where} with {info['workers']} workers, {info['threads']} threads, "
                        f"{info['backend']} backend")]
        try:
            checks.append(_tiny_computation(client))
        except Exception as error:
            checks.append(Check("computation", FAIL, f"raised {type(error).__name__}: {error}", TROUBLESHOOTING))
        checks.append(_dashboard(client))
        return checks
    finally:
        if own:
            shutdown(client)


# --- the report -------------------------------------------------------------------------------------

def diagnose(
    scale: str | None = None,
    data_dir: Path | None = None,
    client: Any = None,
    cluster: bool = True,
    requirements: Path = REQUIREMENTS,
    constraints: Path = CONSTRAINTS,
) -> list[Check]:
    """Every check, in the order of the report. ``client``: check that cluster instead of
    starting one; ``cluster=False`` skips the cluster, computation and dashboard checks. A
    ``$COURSE_DATA_DIR`` or ``$COURSE_SCRATCH_DIR`` that cannot be resolved raises ``CoursePathError``
    (one line) before any check runs."""
    name = resolve_scale(scale).name
    data_dir = default_data_dir() if data_dir is None else Path(data_dir)
    scratch = scratch_root(data_dir)
    checks = [check_python(), *check_versions(requirements, constraints), check_cpu(), check_gpus(),
              check_gpu_packages(), check_backend(), *check_folders(name, data_dir, scratch),
              check_dataset(name, data_dir), check_disk(name, data_dir), check_memory(name), check_leftovers(data_dir)]
    if cluster or client is not None:
        checks += check_cluster(client)
    return checks


def report(checks: list[Check]) -> str:
    counts = {status: sum(c.status == status for c in checks) for status in (OK, WARN, FAIL)}
    verdict = "not ready: fix the FAIL lines" if counts[FAIL] else "ready"
    summary = f"{counts[OK]} OK, {counts[WARN]} WARN, {counts[FAIL]} FAIL: {verdict}"
    return "\n".join([*(check.line() for check in checks), summary])


def as_table(checks: list[Check]) -> Any:
    """The checks as a table for notebooks (check, status, detail, fix), every text in full: a
    DataFrame's display cuts cells at 50 characters, and the fix is what a learner looks for."""
    import pandas as pd

    frame = pd.DataFrame([(c.name, c.status, c.detail, c.fix if c.status != OK else "") for c in checks],
                         columns=["check", "status", "detail", "fix"]).set_index("check")
    return frame.style.set_properties(**{"text-align": "left", "white-space": "normal"})


class _Parser(argparse.ArgumentParser):
    """Bad arguments: one ``error: ...`` line and exit 2, without the usage block."""

    def error(self, message: str):
        self.exit(2, f"error: {message}\n")


def main(argv: list[str] | None = None) -> int:
    parser = _Parser(prog="python -m utils.doctor", description="Check that this machine is ready for the course.")
    parser.add_argument("--scale", choices=list(SCALES), help="data size (default: $COURSE_SCALE or small)")
    parser.add_argument("--data-dir", type=Path, help="where the data lives (default: $COURSE_DATA_DIR or data/)")
    parser.add_argument("--no-cluster", action="store_true", help="skip starting a cluster and its dashboard")
    parser.add_argument("--requirements", type=Path, default=REQUIREMENTS, help=argparse.SUPPRESS)
    parser.add_argument("--constraints", type=Path, default=CONSTRAINTS, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    try:
        scale = resolve_scale(args.scale).name
    except ValueError as error:  # a bad $COURSE_SCALE
        parser.error(str(error))
    try:  # a $COURSE_DATA_DIR / $COURSE_SCRATCH_DIR with an unknown ~user: one line, like a bad $COURSE_SCALE
        scratch_root(args.data_dir if args.data_dir is not None else default_data_dir())
    except CoursePathError as error:
        parser.error(str(error))
    print(f"Course readiness for scale {scale!r} ({sys.executable})")
    checks = diagnose(scale, args.data_dir, cluster=not args.no_cluster,
                      requirements=args.requirements, constraints=args.constraints)
    print(report(checks))
    return 1 if any(check.status == FAIL for check in checks) else 0


if __name__ == "__main__":
    sys.exit(main())
