"""Preflight of the offline GPU run (``tools/gpu/device/gpu-check.sh``): before any GPU work, import every
module the run needs, print where each comes from and its version, and check the versions against
``tools/gpu/device/packages.txt``; end with one ``error:`` line naming everything that is missing.

    python -m tools.gpu.preflight [--packages tools/gpu/device/packages.txt] [--carried /tmp/site] [--skip NAME ...]
                                  [--cuda-major 12|13]
    python -m tools.gpu.preflight --probe-cuda       # the CUDA major of the driver: 12 or 13 on stdout
    python -m tools.gpu.preflight --list carry|have [--python-version 3.12] [--cuda-major N ...]

Time on a GPU machine without network access is short: an import error found there wastes it, so this runs
first and uses only the standard library until it has checked that ``packaging`` is there. Exit
status 0 when everything is in place, 2 otherwise. ``--skip`` leaves out modules or distributions
that a dry run on a machine without CUDA cannot have (``cupy``); the skips are printed.

CUDA-specific lines of packages.txt carry the marker ``extra == "cu12"`` or ``extra == "cu13"`` (pip's
own spelling for dask-cuda's ``[cu12]``/``[cu13]`` extras): they apply on a machine whose driver has
that CUDA major, which ``--probe-cuda`` reads from the driver (NVML, then ``cuda.bindings``, then
``nvidia-smi``) before anything is installed.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import os
import re
import subprocess
import sys
import traceback
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from utils.base.paths import REPO_ROOT

PACKAGES = Path(__file__).resolve().parent / "device" / "packages.txt"

# Every module the run imports (tools.gpu.check -> pytest tests/gpu -> utils, the Dask stack, the
# dashboard, dask-cuda and its CLI, CuPy and numba.cuda for moving CuPy arrays between workers).
MODULES = (
    "numpy", "pandas", "pyarrow", "yaml", "toolz", "cloudpickle", "fsspec", "click", "packaging", "psutil",
    "msgpack", "sortedcontainers", "jinja2", "markupsafe", "tornado", "zict", "tblib", "partd", "locket",
    "dateutil", "tqdm", "dask", "dask.array", "dask.dataframe", "distributed", "bokeh",
    "distributed.dashboard.scheduler", "pynvml", "cuda.pathfinder", "cuda.bindings", "cuda.core", "numba",
    "numba.cuda", "cupy", "dask_cuda", "dask_cuda.cli", "dask_cuda.utils", "pytest",
    # rmm: dask-cuda's RMM options, and distributed's deserializer of CuPy frames (rmm.DeviceBuffer;
    # distributed/protocol/cupy.py falls back to numba's device arrays only where rmm is missing)
    "rmm", "rmm.mr", "rmm.allocators.cupy", "distributed.protocol.rmm",
    "utils.dataset", "utils.datagen.build", "utils.cluster", "utils.checks", "utils.profiling", "utils.memory",
    "utils.partitions", "utils.datagen.groundtruth", "utils.datagen.transactions", "tools.gpu.check",
    "tools.gpu.report",
)
# Imported by pytest itself during the run (the conftest files and the GPU tests).
TEST_FILES = ("conftest.py", "tests/conftest.py", "tests/gpu/conftest.py", "tests/gpu/test_gpu_cluster.py",
              "tests/gpu/test_gpu_course.py", "tests/gpu/test_gpu_groupby.py", "tests/gpu/test_gpu_notebooks.py")
# The CUDA majors that RAPIDS 26.10 builds for (rmm-cu12/-cu13, cupy-cuda12x/-cuda13x).
CUDA_MAJORS = (12, 13)
CUDA_MAJOR_ENV_VAR = "CUDA_MAJOR"


@dataclass(frozen=True)
class Package:
    kind: str  # "carry" or "have"
    name: str
    spec: str  # "==2026.7.1", ">=0.5.1,<2", or ""
    marker: str = ""  # an environment marker, e.g. 'python_version < "3.12"'


def read_packages(path: Path) -> list[Package]:
    """``carry NAME==VERSION`` and ``have NAME[SPEC][; MARKER]`` lines; anything else is an error."""
    packages = []
    for number, raw in enumerate(path.read_text().splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        kind, _, requirement = line.partition(" ")
        requirement, _, marker = requirement.partition(";")
        requirement = requirement.strip()
        cut = next((i for i, c in enumerate(requirement) if c in "<>=!~"), len(requirement))
        name, spec = requirement[:cut].strip(), requirement[cut:].strip()
        if kind not in ("carry", "have") or not name or (kind == "carry" and not spec.startswith("==")):
            raise ValueError(f"{path}:{number}: expected 'carry NAME==VERSION' or 'have NAME[SPEC]', got {raw!r}")
        packages.append(Package(kind, name, spec, marker.strip()))
    return packages


def _normal(name: str) -> str:
    return name.lower().replace("_", "-").replace(".", "-")


def _installed(name: str) -> list[metadata.Distribution]:
    """Every installed copy of distribution ``name``, in ``sys.path`` order (the first one wins)."""
    return [d for d in metadata.distributions() if _normal(d.metadata["Name"] or "") == _normal(name)]


def _where(dist: metadata.Distribution) -> Path:
    return Path(str(dist.locate_file(""))).resolve()


def _origin(path: Path, carried: Path | None) -> str:
    if carried is not None and (path == carried or carried in path.parents):
        return "carried"
    if REPO_ROOT in path.parents and "site-packages" not in path.parts:
        return "repository"
    return "machine"


def _marker_class():
    """``packaging``'s Marker, or pip's copy of it where ``packaging`` itself is not installed (the
    machine that fetches the wheels needs only pip)."""
    try:
        from packaging.markers import Marker
    except ImportError:
        from pip._vendor.packaging.markers import Marker
    return Marker


def applies(package: Package, python_version: str | None = None, cuda_major: int | None = None) -> bool:
    """Whether ``package``'s marker holds for this Python (or ``python_version``, e.g. ``"3.12"`` for
    the GPU machine) on a machine of CUDA major ``cuda_major`` (the marker's ``extra``: ``cu12``/``cu13``;
    with None, no CUDA-specific line applies)."""
    if not package.marker:
        return True
    environment = {"extra": f"cu{cuda_major}" if cuda_major else ""}
    if python_version:
        environment.update(python_version=python_version, python_full_version=f"{python_version}.0")
    return bool(_marker_class()(package.marker).evaluate(environment))


def requirements(packages: list[Package], kind: str, python_version: str | None,
                 cuda_majors: Sequence[int]) -> list[str]:
    """``NAME<SPEC>`` of every ``kind`` line that applies to one of ``cuda_majors`` (for fetching
    wheels for both majors, or installing the machine's packages in a dry run), in file order."""
    found: list[str] = []
    for package in packages:
        wanted = package.kind == kind and any(applies(package, python_version, m) for m in cuda_majors)
        if wanted and f"{package.name}{package.spec}" not in found:
            found.append(f"{package.name}{package.spec}")
    return found


def check_versions(packages: list[Package], carried: Path | None, skip: set[str],
                   cuda_major: int | None = None) -> tuple[list[str], list[str]]:
    """Lines to print and problems: carried pins must be the versions that win on ``sys.path`` (and
    come from ``carried`` when given); the machine's packages must meet their ranges. Lines for
    another CUDA major (or, with ``cuda_major`` None, every CUDA-specific line) are ``n/a``."""
    try:
        from packaging.specifiers import SpecifierSet
    except ImportError:
        return [], ["packaging cannot be imported, so no version can be checked (it is a 'have' package)"]
    lines, problems = [], []
    for package in packages:
        if _normal(package.name) in skip:
            lines.append(f"  skip  {package.kind} {package.name}{package.spec} (--skip)")
            continue
        if not applies(package, cuda_major=cuda_major):
            lines.append(f"  n/a   {package.kind} {package.name}{package.spec} (only where {package.marker})")
            continue
        copies = _installed(package.name)
        if not copies:
            problems.append(f"{package.name} is not installed ({package.kind} {package.name}{package.spec})")
            continue
        used, version = copies[0], copies[0].version
        origin = _origin(_where(used), carried)
        ok = SpecifierSet(package.spec).contains(version, prereleases=True) if package.spec else True
        note = "".join(f"; shadows the machine's {package.name} {other.version}" for other in copies[1:])
        lines.append(f"  {'ok' if ok else 'BAD':<4}  {package.kind} {package.name}{package.spec}: "
                     f"{version} ({origin}){note}")
        if not ok:
            problems.append(f"{package.name} {version} does not meet {package.spec}")
        elif package.kind == "carry" and carried is not None and origin != "carried":
            problems.append(f"{package.name} {version} comes from {_where(used)}, not from the carried wheels")
    return lines, problems


def _import(name: str, path: Path | None = None):
    if path is None:
        return importlib.import_module(name)
    spec = importlib.util.spec_from_file_location(f"preflight_{path.parent.name}_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def check_imports(skip: set[str], carried: Path | None = None) -> tuple[list[str], list[str]]:
    """Import every module of the run; a line per module and a problem per failure."""
    lines, problems = [], []
    targets = [(name, None) for name in MODULES] + [(name, REPO_ROOT / name) for name in TEST_FILES]
    for name, path in targets:
        if _normal(name) in skip:
            lines.append(f"  skip  import {name} (--skip)")
            continue
        try:
            module = _import(name, path)
        except BaseException as error:  # noqa: BLE001 (an import may raise anything; report it)
            where = ""
            if not isinstance(error, ModuleNotFoundError):
                last = traceback.extract_tb(error.__traceback__)[-1]
                where = f" ({Path(last.filename).name}:{last.lineno})"
            problems.append(f"import {name}: {type(error).__name__}: {error}{where}")
            continue
        origin = _origin(Path(module.__file__).resolve(), carried) if getattr(module, "__file__", None) else "built in"
        lines.append(f"  ok    import {name} ({origin})")
    try:
        entry = [e for e in metadata.entry_points(group="dask_cli") if e.name == "cuda"]
        if not entry:
            problems.append("`dask cuda worker` is unknown: dask-cuda's 'dask_cli' entry point was not found")
        else:
            entry[0].load()
            lines.append("  ok    `dask cuda` command (entry point dask_cli:cuda)")
    except Exception as error:
        problems.append(f"`dask cuda` command: {type(error).__name__}: {error}")
    return lines, problems


def parse_nvidia_smi(text: str) -> int | None:
    """The driver's CUDA version from ``nvidia-smi``'s banner (``CUDA Version: 13.0`` -> 13000, the
    encoding NVML and the CUDA driver API use), or None."""
    match = re.search(r"CUDA Version:\s*(\d+)\.(\d+)", text)
    return int(match[1]) * 1000 + int(match[2]) * 10 if match else None


def read_cuda_driver_versions() -> dict[str, int | str]:
    """What each source says about the CUDA version the driver supports (13000 for 13.0), or why it
    said nothing: NVML (nvidia-ml-py), the CUDA driver API (cuda.bindings), ``nvidia-smi``. Runs before
    the carried wheels are installed, with the machine's own packages."""
    readings: dict[str, int | str] = {}
    try:
        import pynvml

        pynvml.nvmlInit()
        try:
            driver_version = pynvml.nvmlSystemGetDriverVersion()
            driver_version = driver_version.decode() if isinstance(driver_version, bytes) else driver_version
            readings[f"NVML, driver {driver_version}"] = int(pynvml.nvmlSystemGetCudaDriverVersion())
        finally:
            pynvml.nvmlShutdown()
    except Exception as error:  # noqa: BLE001 (no driver, no bindings: each says why)
        readings["NVML"] = f"{type(error).__name__}: {error}"
    try:
        from cuda.bindings import driver

        status, version = driver.cuDriverGetVersion()
        readings["cuda.bindings"] = int(version) if int(status) == 0 else f"cuDriverGetVersion: {status}"
    except Exception as error:  # noqa: BLE001
        readings["cuda.bindings"] = f"{type(error).__name__}: {error}"
    try:
        done = subprocess.run(["nvidia-smi"], capture_output=True, text=True, timeout=60, check=False)
        version = parse_nvidia_smi(done.stdout)
        readings["nvidia-smi"] = version or f"no 'CUDA Version' in its output (exit status {done.returncode})"
    except (OSError, subprocess.SubprocessError) as error:
        readings["nvidia-smi"] = f"{type(error).__name__}: {error}"
    return readings


def _version_text(value: int | str) -> str:
    return f"CUDA {value // 1000}.{value % 1000 // 10}" if isinstance(value, int) else f"unavailable ({value})"


def decide_cuda_major(readings: dict[str, int | str], override: str | None = None) -> tuple[int | None, str]:
    """The CUDA major whose builds (``rmm-cuNN``, ``cupy-cudaNNx``) this machine runs, and why: the
    first source that read the driver's version decides (a driver runs builds of its own CUDA major
    and older ones, so a newer driver than 13 takes the cu13 builds); ``override`` (``$CUDA_MAJOR``)
    wins. None where no source answered or the driver is older than CUDA 12."""
    found = "; ".join(f"{source}: {_version_text(value)}" for source, value in readings.items()) or "no source"
    if override:
        if override.strip() not in {str(m) for m in CUDA_MAJORS}:
            return None, f"{CUDA_MAJOR_ENV_VAR}={override!r} is not one of {', '.join(map(str, CUDA_MAJORS))}"
        return int(override), f"{CUDA_MAJOR_ENV_VAR}={override.strip()} was given (the driver: {found})"
    versions = [(source, value) for source, value in readings.items() if isinstance(value, int) and value > 0]
    if not versions:
        return None, f"the driver's CUDA version could not be read ({found}); set {CUDA_MAJOR_ENV_VAR}=12 or 13"
    source, version = versions[0]
    driver_major = version // 1000
    others = sorted({value // 1000 for _, value in versions} - {driver_major})
    note = f"; other sources say {', '.join(map(str, others))}" if others else ""
    if driver_major < min(CUDA_MAJORS):
        return None, (f"the driver supports {_version_text(version)} only ({source}); RAPIDS 26.10 needs a driver "
                      f"for CUDA {' or '.join(map(str, CUDA_MAJORS))}")
    major = min(driver_major, max(CUDA_MAJORS))
    newer = f", newer than any build carried: the cu{major} builds run on it" if driver_major > major else ""
    return major, f"the driver supports {_version_text(version)} ({source}{note}){newer}: cu{major} builds"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.gpu.preflight", description=__doc__.split("\n\n")[0])
    parser.add_argument("--packages", type=Path, default=PACKAGES, help="default: tools/gpu/device/packages.txt")
    parser.add_argument("--carried", type=Path, help="where the carried wheels were installed (e.g. /tmp/site)")
    parser.add_argument("--skip", action="append", default=[], help="a module or distribution to leave out")
    parser.add_argument("--cuda-major", type=int, action="append", choices=CUDA_MAJORS,
                        help="the machine's CUDA major (default: probed); with --list, may be repeated [both]")
    parser.add_argument("--probe-cuda", action="store_true", help="print the driver's CUDA major (12 or 13) and "
                        f"say why on stderr; ${CUDA_MAJOR_ENV_VAR} overrides; exit 2 where it cannot be told")
    parser.add_argument("--list", choices=("carry", "have"), help="print the requirements of these lines that apply")
    parser.add_argument("--python-version", help="with --list: the Python the lines are for, e.g. 3.12 [this one]")
    args = parser.parse_args(argv)
    if args.probe_cuda:
        major, reason = decide_cuda_major(read_cuda_driver_versions(), os.environ.get(CUDA_MAJOR_ENV_VAR))
        print(reason, file=sys.stderr)
        if major is None:
            return 2
        print(major)
        return 0
    try:
        packages = read_packages(args.packages)
    except (OSError, ValueError) as error:
        print(f"error: preflight: {error}", file=sys.stderr)
        return 2
    if args.list:
        print("\n".join(requirements(packages, args.list, args.python_version, args.cuda_major or CUDA_MAJORS)))
        return 0
    return preflight(packages, args)


def preflight(packages: list[Package], args: argparse.Namespace) -> int:
    """Versions and imports, printed; one ``error: preflight:`` line with every problem."""
    skip = {_normal(name) for name in args.skip}
    carried = args.carried.resolve() if args.carried else None
    problems: list[str] = []
    if args.cuda_major:
        cuda_major, reason = args.cuda_major[0], f"--cuda-major {args.cuda_major[0]}"
    else:
        cuda_major, reason = decide_cuda_major(read_cuda_driver_versions(), os.environ.get(CUDA_MAJOR_ENV_VAR))
        if cuda_major is None:
            problems.append(f"CUDA major unknown, so no cu12/cu13 line applies: {reason}")
    print(f"preflight: Python {sys.version.split()[0]} at {sys.executable}; carried wheels: {carried or 'none'}")
    print(f"preflight: CUDA major {cuda_major or 'unknown'} ({reason})")
    print(f"preflight: sys.path = {[entry for entry in sys.path if entry]}")
    version_lines, version_problems = check_versions(packages, carried, skip, cuda_major)
    import_lines, import_problems = check_imports(skip, carried)
    print("\n".join(version_lines + import_lines), flush=True)
    problems += version_problems + import_problems
    if problems:
        print(f"error: preflight: {len(problems)} problem(s): " + " | ".join(problems)
              + f"; carry what is missing ({args.packages})", file=sys.stderr)
        return 2
    print(f"preflight: ok ({len(MODULES) + len(TEST_FILES)} imports, {len(packages)} packages checked)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
