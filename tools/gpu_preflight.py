"""Preflight of the offline GPU run (``.ci/device/gpu-check.sh``): before any GPU work, import every
module the run needs, print where each comes from and its version, and check the versions against
``.ci/device/packages.txt``; stop with one ``error:`` line naming everything that is missing.

    python -m tools.gpu_preflight [--packages .ci/device/packages.txt] [--carried /tmp/site] [--skip NAME ...]

Time on a GPU machine without network access is short: an import error found there wastes it, so this runs
first and uses only the standard library until it has checked that ``packaging`` is there. Exit
status 0 when everything is in place, 2 otherwise. ``--skip`` leaves out modules or distributions
that a dry run on a machine without CUDA cannot have (``cupy``); the skips are printed.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import sys
import traceback
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
PACKAGES = REPO_ROOT / ".ci" / "device" / "packages.txt"

# Every module the run imports (tools.gpu_check -> pytest tests/gpu -> utils, the Dask stack, the
# dashboard, dask-cuda and its CLI, CuPy and numba.cuda for moving CuPy arrays between workers).
MODULES = (
    "numpy", "pandas", "pyarrow", "yaml", "toolz", "cloudpickle", "fsspec", "click", "packaging", "psutil",
    "msgpack", "sortedcontainers", "jinja2", "markupsafe", "tornado", "zict", "tblib", "partd", "locket",
    "dateutil", "tqdm", "dask", "dask.array", "dask.dataframe", "distributed", "bokeh",
    "distributed.dashboard.scheduler", "pynvml", "cuda.pathfinder", "cuda.bindings", "cuda.core", "numba",
    "numba.cuda", "cupy", "dask_cuda", "dask_cuda.cli", "pytest",
    "utils.dataset", "utils.datagen.build", "utils.cluster", "utils.checks", "utils.profiling",
    "utils.datagen.groundtruth", "utils.datagen.transactions", "tools.gpu_check", "tools.gpu_report",
)
# Imported by pytest itself during the run (the conftest files and the GPU tests).
TEST_FILES = ("conftest.py", "tests/conftest.py", "tests/gpu/conftest.py", "tests/gpu/test_gpu_cluster.py",
              "tests/gpu/test_gpu_groupby.py", "tests/gpu/test_gpu_notebooks.py")


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


def check_versions(packages: list[Package], carried: Path | None, skip: set[str]) -> tuple[list[str], list[str]]:
    """Lines to print and problems: carried pins must be the versions that win on ``sys.path`` (and
    come from ``carried`` when given); the machine's packages must meet their ranges."""
    try:
        from packaging.markers import Marker
        from packaging.specifiers import SpecifierSet
    except ImportError:
        return [], ["packaging cannot be imported, so no version can be checked (it is a 'have' package)"]
    lines, problems = [], []
    for package in packages:
        if _normal(package.name) in skip:
            lines.append(f"  skip  {package.kind} {package.name}{package.spec} (--skip)")
            continue
        if package.marker and not Marker(package.marker).evaluate():
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


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.gpu_preflight", description=__doc__.split("\n\n")[0])
    parser.add_argument("--packages", type=Path, default=PACKAGES, help="default: .ci/device/packages.txt")
    parser.add_argument("--carried", type=Path, help="where the carried wheels were installed (e.g. /tmp/site)")
    parser.add_argument("--skip", action="append", default=[], help="a module or distribution to leave out")
    args = parser.parse_args(argv)
    skip = {_normal(name) for name in args.skip}
    carried = args.carried.resolve() if args.carried else None
    print(f"preflight: Python {sys.version.split()[0]} at {sys.executable}; carried wheels: {carried or 'none'}")
    print(f"preflight: sys.path = {[entry for entry in sys.path if entry]}")
    try:
        packages = read_packages(args.packages)
    except (OSError, ValueError) as error:
        print(f"error: preflight: {error}", file=sys.stderr)
        return 2
    version_lines, version_problems = check_versions(packages, carried, skip)
    import_lines, import_problems = check_imports(skip, carried)
    print("\n".join(version_lines + import_lines), flush=True)
    problems = version_problems + import_problems
    if problems:
        print(f"error: preflight: {len(problems)} problem(s), nothing was run on the GPU: " + " | ".join(problems)
              + f"; carry what is missing ({args.packages})", file=sys.stderr)
        return 2
    print(f"preflight: ok ({len(MODULES) + len(TEST_FILES)} imports, {len(packages)} packages checked)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
