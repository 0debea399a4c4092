"""``python -m tools.gpu.resolve [cu12] [cu13]``: ask pip's resolver whether the pip GPU environments resolve
against the package index, for Linux x86_64 and the course's Python, without installing or downloading them.

    python -m tools.gpu.resolve [cu12] [cu13] [--requirements FILE] [--constraints FILE] [--index-url URL]

CI has no GPU and never installs the GPU stack (libcudf alone is a 667 MB wheel), yet a pin that RAPIDS refuses
(dask outside rapids-dask-dependency's range, bokeh above its cap, a pandas cudf does not accept) only shows when
pip resolves the whole set. ``pip install --dry-run --report`` resolves from wheel metadata alone and downloads
nothing it would install; ``--use-feature=fast-deps`` reads a wheel's METADATA with HTTP range requests where the
index serves no PEP 658 metadata file. A wheel pip would still download whole (an index without range requests)
stops the run: metadata only, never the CUDA wheels.

``cu12`` is ``requirements-gpu.txt`` as written; ``cu13`` is the same file with the CUDA 13 names its header tells
learners to use (``-cu13``, ``[cu13]``, ``cupy-cuda13x``, ``xgboost-cu13``). Both take ``-c constraints.txt``.

Exit 0 when every variant resolved with each pinned package at its pin and rapids-dask-dependency's own
requirements met; 2 with one ``error:`` line per failing variant, naming the package and the conflict.
"""

from __future__ import annotations

import argparse
import json
import platform
import re
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections import Counter
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from packaging.markers import default_environment
from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

from utils.base.paths import REPO_ROOT

INDEX_URL = "https://pypi.org/simple"
REQUIREMENTS = REPO_ROOT / "requirements-gpu.txt"
CONSTRAINTS = REPO_ROOT / "constraints.txt"
VARIANTS = ("cu12", "cu13")
# The CUDA 13 spelling of the GPU file, as its header tells learners (xgboost==3.2.0's Linux wheel is the CUDA 12
# build, with nvidia-nccl-cu12; xgboost-cu13==3.2.0 is the CUDA 13 one, with nvidia-nccl-cu13).
CU13_NAMES = ((r"-cu12\b", "-cu13"), (r"\[cu12\]", "[cu13]"), (r"\bcupy-cuda12x\b", "cupy-cuda13x"),
              (r"^xgboost==", "xgboost-cu13=="))
# RAPIDS 26.10's Linux wheels are manylinux_2_28: the oldest glibc a GPU machine may have. pip does not widen
# --platform to older manylinux tags itself, so every compatible tag is named.
GLIBC_MINOR = 28
LARGEST_DOWNLOAD_MB = 20.0  # anything pip downloads whole above this is a wheel instead of its metadata
# The headline versions printed for a resolved variant.
HEADLINE = ("rapids-dask-dependency", "dask", "distributed", "bokeh", "pandas", "polars", "xgboost", "xgboost-cu13")
DOWNLOADING = re.compile(r"Downloading (\S+) \(([\d.]+) (kB|MB|GB)\)")
UNIT_MB = {"kB": 1e-3, "MB": 1.0, "GB": 1e3}


class ResolveError(Exception):
    """One line that says why a variant could not be resolved or checked."""


@dataclass(frozen=True)
class Resolved:
    variant: str
    seconds: float
    versions: dict[str, str]


def course_python(constraints: Path = CONSTRAINTS) -> str:
    """The Python (major.minor) the constraints were frozen on, from their header: the one home of that fact."""
    match = re.search(r"on Python (\d+\.\d+), Linux x86_64", constraints.read_text())
    if not match:
        raise ResolveError(f"{constraints.name} does not name its Python (\"on Python 3.X, Linux x86_64\")")
    return match.group(1)


def interpreter_problem(python: str) -> str | None:
    """pip evaluates environment markers for the interpreter that runs it, not for --platform/--python-version,
    so only Linux x86_64 with the course's Python gives the answer a GPU machine would get."""
    here = f"{platform.system()} {platform.machine()}, Python {sys.version_info.major}.{sys.version_info.minor}"
    if (platform.system(), platform.machine()) != ("Linux", "x86_64") or here.rsplit(" ", 1)[1] != python:
        return f"run this on Linux x86_64 with Python {python} (pip evaluates markers for the running one): {here}"
    return None


def platforms(glibc_minor: int = GLIBC_MINOR) -> list[str]:
    """Every manylinux tag a machine with glibc 2.``glibc_minor`` accepts, newest first, with the legacy aliases."""
    tags = [f"manylinux_2_{minor}_x86_64" for minor in range(glibc_minor, 4, -1)]
    return tags + ["manylinux2014_x86_64", "manylinux2010_x86_64", "manylinux1_x86_64"]


def variant_text(variant: str, text: str, requirements_dir: Path) -> str:
    """The variant's requirements file: the CUDA 13 names for ``cu13``, and ``-r`` made absolute so that the
    file can live in a temporary folder."""
    if variant not in VARIANTS:
        raise ResolveError(f"unknown variant {variant!r}: choose from {', '.join(VARIANTS)}")
    if variant == "cu13":
        for pattern, name in CU13_NAMES:
            text = re.sub(pattern, name, text, flags=re.M)
    return re.sub(r"^-r\s+(\S+)", lambda m: f"-r {(requirements_dir / m.group(1)).resolve()}", text, flags=re.M)


def pip_command(requirements: Path, constraints: Path, report: Path, python: str, index_url: str) -> list[str]:
    """pip's resolver for another machine: wheels only, every manylinux tag of the GPU floor, the course's Python
    (its patch level as here: some pins need e.g. >=3.11.5), nothing from this machine's pip configuration."""
    version = f"{python}.{sys.version_info.micro}"
    command = [sys.executable, "-m", "pip", "--isolated", "install", "--dry-run", "--ignore-installed",
               "--report", str(report), "--only-binary=:all:", "--python-version", version,
               "--implementation", "cp", "--abi", "cp" + python.replace(".", ""), "--use-feature=fast-deps",
               "--no-cache-dir", "--progress-bar", "off", "--disable-pip-version-check", "--no-input",
               "--index-url", index_url, "-r", str(requirements), "-c", str(constraints)]
    for tag in platforms():
        command += ["--platform", tag]
    return command


def conflict_line(output: str) -> str:
    """pip's failure as one line: the package in conflict and what each side requires."""
    causes = _block(output, "The conflict is caused by:")
    if causes:
        names = Counter(name for cause in causes if (name := _required_name(cause)))
        package = names.most_common(1)[0][0] if names else "the requirements"
        line = f"{package} cannot be resolved: " + "; ".join(causes)
        missing = _block(output, "no matching distributions available for your environment:")
        if missing:
            line += f" (pip: no distribution of {', '.join(missing)} matches for this platform and Python)"
        return line
    match = re.search(r"Could not find a version that satisfies the requirement (\S+)(?: \(from versions: ([^)]*)\))?",
                      output)
    if match:
        versions = [v for v in (match.group(2) or "").split(", ") if v and v != "none"]
        known = f"; the index has {', '.join(versions[-3:])}" if versions else "; the index has none for this platform"
        return f"{match.group(1)}: no matching wheel{known}"
    errors = [line.removeprefix("ERROR: ") for line in output.splitlines() if line.startswith("ERROR: ")]
    return errors[-1] if errors else (output.strip().splitlines() or ["pip failed without a message"])[-1]


def _block(output: str, heading: str) -> list[str]:
    """The indented lines under ``heading`` in pip's error message."""
    lines = output.splitlines()
    for at, line in enumerate(lines):
        if line.strip().endswith(heading):
            block = []
            for item in lines[at + 1:]:
                if not item.startswith("    ") or not item.strip():
                    break
                block.append(item.strip().split(" (from http", 1)[0])  # a candidate's URL says nothing more
            return block
    return []


def _required_name(cause: str) -> str | None:
    """The package a cause is about: ``X 1.0 depends on NAME...``, ``The user requested (constraint) NAME...``."""
    match = re.search(r"(?:depends on|requested(?: \(constraint\))?) ([A-Za-z0-9][A-Za-z0-9._-]*)", cause)
    return canonicalize_name(match.group(1)) if match else None


def pinned_requirements(text: str, requirements_dir: Path) -> list[Requirement]:
    """Every requirement the file names, with those of files it includes, that applies here (markers evaluated)."""
    found = []
    for raw in text.splitlines():
        line = raw.split(" #", 1)[0].strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("-r "):
            included = Path(line[3:].strip())
            path = included if included.is_absolute() else requirements_dir / included
            found += pinned_requirements(path.read_text(), path.parent)
            continue
        try:
            requirement = Requirement(line)
        except InvalidRequirement as error:
            raise ResolveError(f"cannot read the requirement {line!r}: {error}") from None
        if requirement.marker is None or requirement.marker.evaluate():
            found.append(requirement)
    return found


def check_report(report: dict, requirements: Sequence[Requirement]) -> tuple[dict[str, str], list[str]]:
    """The resolved versions and what disagrees with the pins or with rapids-dask-dependency's own requirements
    (pip honours both; saying it here makes the claim the run proves explicit)."""
    items = {canonicalize_name(item["metadata"]["name"]): item["metadata"] for item in report.get("install", [])}
    versions = {name: meta["version"] for name, meta in items.items()}
    problems = []
    for requirement in requirements:
        name = canonicalize_name(requirement.name)
        if name not in versions:
            problems.append(f"{name} is pinned but not in the resolution")
        elif not requirement.specifier.contains(versions[name], prereleases=True):
            problems.append(f"{name} resolved to {versions[name]}, not the pinned {requirement.specifier}")
    rapids = items.get("rapids-dask-dependency")
    if rapids is None:
        problems.append("rapids-dask-dependency is not in the resolution")
    else:
        environment = {**default_environment(), "extra": ""}
        for spec in rapids.get("requires_dist") or []:
            needed = Requirement(spec)
            if needed.marker is not None and not needed.marker.evaluate(environment):
                continue
            have = versions.get(canonicalize_name(needed.name))
            if have is None or not needed.specifier.contains(have, prereleases=True):
                problems.append(f"rapids-dask-dependency {rapids['version']} requires {spec}, resolved {have}")
    return versions, problems


def other_cuda(variant: str, versions: dict[str, str]) -> list[str]:
    """Packages built for the other CUDA major (``nvidia-nccl-cu12`` in a CUDA 13 environment): they install, and
    fail only on the GPU."""
    other = "12" if variant == "cu13" else "13"
    return [f"{name} {version} is built for CUDA {other}" for name, version in sorted(versions.items())
            if re.search(rf"-cu{other}$|^cupy-cuda{other}x$", name)]


def resolve(variant: str, constraints: Path = CONSTRAINTS, index_url: str = INDEX_URL,
            requirements: Path = REQUIREMENTS) -> Resolved:
    """Resolve one variant; :class:`ResolveError` with one line when it does not resolve or disagrees with a pin."""
    python = course_python(constraints)
    text = variant_text(variant, requirements.read_text(), requirements.parent)
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix=f"resolve-{variant}-") as folder:
        variant_file, report_file = Path(folder) / f"requirements-gpu-{variant}.txt", Path(folder) / "report.json"
        variant_file.write_text(text)
        try:
            output = run_pip(pip_command(variant_file, constraints.resolve(), report_file, python, index_url))
        except ResolveError as error:
            raise ResolveError(f"{variant}: {error}") from None
        if not report_file.exists():
            raise ResolveError(f"{variant}: {conflict_line(output)}")
        report = json.loads(report_file.read_text())
    versions, problems = check_report(report, pinned_requirements(text, requirements.parent))
    problems += other_cuda(variant, versions)
    if problems:
        raise ResolveError(f"{variant}: " + "; ".join(problems))
    return Resolved(variant, time.monotonic() - started, versions)


def run_pip(command: list[str]) -> str:
    """pip's output; stops pip at the first wheel it would download whole instead of reading its metadata."""
    lines = []
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) as process:
        assert process.stdout is not None
        for line in process.stdout:
            lines.append(line)
            match = DOWNLOADING.search(line)
            if match and float(match.group(2)) * UNIT_MB[match.group(3)] > LARGEST_DOWNLOAD_MB:
                process.kill()
                raise ResolveError(f"the index served neither metadata nor range requests for {match.group(1)}: "
                                   f"stopped before downloading {match.group(2)} {match.group(3)}")
    return "".join(lines)


def index_problem(index_url: str = INDEX_URL, timeout: float = 15.0) -> str | None:
    """Why the package index cannot be reached, or None: the resolution needs it (tests skip on this reason)."""
    try:
        with urllib.request.urlopen(index_url.rstrip("/") + "/pip/", timeout=timeout):
            return None
    except (urllib.error.URLError, OSError) as error:
        return f"the package index {index_url} cannot be reached ({getattr(error, 'reason', error)})"


def summary(resolved: Resolved) -> str:
    """One line per resolved variant: time, package count and the headline versions."""
    headline = ", ".join(f"{name} {resolved.versions[name]}" for name in HEADLINE if name in resolved.versions)
    gpu = sorted(name for name in resolved.versions if name.startswith(("cudf-cu", "cuml-cu", "dask-cuda")))
    gpu_versions = ", ".join(f"{name} {resolved.versions[name]}" for name in gpu)
    return (f"{resolved.variant}: resolved {len(resolved.versions)} packages in {resolved.seconds:.0f} s: "
            f"{gpu_versions}; {headline}")


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line, exit 2, like every refusal of this module
        self.exit(2, f"error: {message}\n")


def main(argv: Sequence[str] | None = None) -> int:
    parser = _Parser(description=__doc__.split("\n\n")[0])
    parser.add_argument("variants", nargs="*", default=list(VARIANTS), metavar="VARIANT",
                        help=f"which of {', '.join(VARIANTS)} (default: both)")
    parser.add_argument("--requirements", type=Path, default=REQUIREMENTS,
                        help="the CUDA 12 GPU file; -r paths in it are relative to it [requirements-gpu.txt]")
    parser.add_argument("--constraints", type=Path, default=CONSTRAINTS, help="constraints file [constraints.txt]")
    parser.add_argument("--index-url", default=INDEX_URL, help=f"package index [{INDEX_URL}]")
    args = parser.parse_args(argv)
    unknown = [v for v in args.variants if v not in VARIANTS]
    if unknown:
        parser.error(f"unknown variant {', '.join(unknown)}: choose from {', '.join(VARIANTS)}")
    for given in (args.requirements, args.constraints):
        if not given.is_file():
            parser.error(f"no such file: {given}")
    try:
        problem = interpreter_problem(course_python(args.constraints)) or index_problem(args.index_url)
    except ResolveError as error:
        problem = str(error)
    if problem:
        print(f"error: {problem}", file=sys.stderr)
        return 2
    failed = False
    with ThreadPoolExecutor(max_workers=len(args.variants)) as pool:  # network-bound: side by side
        futures = [pool.submit(resolve, variant, args.constraints, args.index_url, args.requirements)
                   for variant in dict.fromkeys(args.variants)]
        for future in futures:
            try:
                print(summary(future.result()), flush=True)
            except ResolveError as error:
                print(f"error: {error}", file=sys.stderr, flush=True)
                failed = True
    return 2 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
