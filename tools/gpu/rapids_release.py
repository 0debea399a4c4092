"""``python -m tools.gpu.rapids_release 26.12 [--write]``: the course's pins for a new RAPIDS release, read from
the package index, and the checklist of what to re-verify by hand.

RAPIDS decides the Dask the course can teach: ``rapids-dask-dependency`` pins dask and distributed exactly and caps
bokeh, cudf accepts one pandas range and cudf-polars one polars range, dask-cuda names its UCXX series. This reads
those from the release's own metadata (the index's JSON API for the release, pip's dry run for each wheel's
METADATA, as ``tools.gpu.resolve`` reads it), prints the proposal, and with ``--write`` writes it into the
requirements, constraints and environment files. Docs: docs/upgrading.md.

Exit 0 with the proposal and the checklist; 2 with one ``error:`` line (no such release on the index, the index
unreachable, metadata that does not say what the course needs).
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
import urllib.error
import urllib.request
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from tools.gpu.resolve import INDEX_URL, course_python, pip_command
from utils.base.paths import REPO_ROOT
from utils.notebook_grammar import course_notebooks

JSON_API = "https://pypi.org/pypi/{name}/json"
# The packages whose metadata decides the pins (CUDA 12 names; the CUDA 13 builds declare the same ranges).
SOURCES = ("rapids-dask-dependency", "cudf-cu12", "cudf-polars-cu12", "dask-cuda")
# Files the pins live in; dask/distributed are pinned identically in each (tests/repository/test_environment_files.py).
DASK_FILES = ("requirements.txt", "constraints.txt", "binder/requirements.txt", "environment.yml")
SERIES_FILES = ("requirements-gpu.txt", "environment.yml")
# Strings that mark a version-sensitive notebook cell or page, and the link targets the 26.12 move may break.
VERSION_MARKS = (r"26\.10", r"2026\.7\.1", r"\bucxx\b", r"xgboost")
LINK = re.compile(r"https?://(?:docs\.rapids\.ai|github\.com/rapidsai|rapids\.ai)[^\s)\"'>\]]*")


class ReleaseError(Exception):
    """One line saying why no proposal can be made."""


@dataclass
class Proposal:
    """The pins a release implies and the course pins it leaves out of range."""

    release: str
    rapids_dask_dependency: str
    pins: dict[str, str]  # exact pins: dask, distributed
    ranges: dict[str, str]  # what the release accepts: bokeh, pandas, polars
    ucxx: str  # the distributed-ucxx series, e.g. "0.52"
    out_of_range: list[str] = field(default_factory=list)


def fetch_json(url: str) -> dict:
    """The index's JSON API (project pages only: the per-release pages are not served by every index)."""
    try:
        with urllib.request.urlopen(url, timeout=30) as response:
            return json.load(response)
    except urllib.error.HTTPError as error:
        raise ReleaseError(f"{url}: HTTP {error.code}") from None
    except (urllib.error.URLError, OSError) as error:
        raise ReleaseError(f"the package index cannot be reached ({getattr(error, 'reason', error)})") from None


def release_version(project: dict, release: str) -> str:
    """The newest non-yanked version of ``release`` (``26.12`` -> ``26.12.0``, ``26.12.1``, ...) on the index."""
    found = []
    for version, files in project.get("releases", {}).items():
        if (version == release or version.startswith(release + ".")) and any(not f.get("yanked") for f in files):
            try:
                found.append(Version(version))
            except InvalidVersion:
                continue
    if not found:
        latest = project.get("info", {}).get("version", "none")
        raise ReleaseError(f"rapids-dask-dependency has no {release} release on the index (newest: {latest})")
    return str(max(found))


def fetch_metadata(specs: Sequence[str], index_url: str = INDEX_URL) -> dict[str, dict]:
    """Each wheel's metadata for Linux x86_64 and the course's Python, through pip's dry run (PEP 658 files or
    range requests: no wheel is downloaded)."""
    with tempfile.TemporaryDirectory(prefix="rapids-release-") as folder:
        requirements, report = Path(folder) / "requirements.txt", Path(folder) / "report.json"
        requirements.write_text("\n".join(specs) + "\n")
        empty = Path(folder) / "constraints.txt"
        empty.write_text("")
        command = pip_command(requirements, empty, report, course_python(), index_url) + ["--no-deps"]
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        if not report.exists():
            errors = [line for line in done.stdout.splitlines() + done.stderr.splitlines() if line.startswith("ERROR")]
            raise ReleaseError(f"pip could not read the release's metadata: {(errors or ['no message'])[-1]}")
        items = json.loads(report.read_text())["install"]
    return {canonicalize_name(item["metadata"]["name"]): item["metadata"] for item in items}


def _requirement(metadata: dict, package: str, name: str) -> Requirement:
    """``name``'s requirement in ``package``'s metadata (extras left out: the course needs the runtime ones)."""
    for spec in metadata[package].get("requires_dist") or []:
        requirement = Requirement(spec)
        if canonicalize_name(requirement.name) == name and (requirement.marker is None
                                                            or "extra" not in str(requirement.marker)):
            return requirement
    raise ReleaseError(f"{package} {metadata[package]['version']} does not require {name}")


def _extra_requirement(metadata: dict, package: str, prefix: str) -> Requirement:
    for spec in metadata[package].get("requires_dist") or []:
        requirement = Requirement(spec)
        if requirement.name.startswith(prefix):
            return requirement
    raise ReleaseError(f"{package} {metadata[package]['version']} names no {prefix}* requirement")


def _exact(requirement: Requirement) -> str:
    """The one version a ``>=X,<X+1`` or ``==X`` requirement allows (how rapids-dask-dependency pins Dask)."""
    for spec in requirement.specifier:
        if spec.operator in ("==", "==="):
            return spec.version
    lower = [spec.version for spec in requirement.specifier if spec.operator == ">="]
    if not lower:
        raise ReleaseError(f"{requirement} does not pin one version")
    return lower[0]


def propose(release: str, project: dict, metadata_for: Callable[[Sequence[str]], dict[str, dict]],
            current: dict[str, str]) -> Proposal:
    """The proposal for ``release``; ``current`` holds the course's pins (package -> version) to compare."""
    version = release_version(project, release)
    metadata = metadata_for([f"rapids-dask-dependency=={version}", f"cudf-cu12=={release}.*",
                             f"cudf-polars-cu12=={release}.*", f"dask-cuda=={release}.*"])
    missing = [name for name in SOURCES if name not in metadata]
    if missing:
        raise ReleaseError(f"no metadata for {', '.join(missing)} {release} on the index")
    pins = {name: _exact(_requirement(metadata, "rapids-dask-dependency", name)) for name in ("dask", "distributed")}
    ranges = {
        "bokeh": str(_requirement(metadata, "rapids-dask-dependency", "bokeh").specifier),
        "pandas": str(_requirement(metadata, "cudf-cu12", "pandas").specifier),
        "polars": str(_requirement(metadata, "cudf-polars-cu12", "polars").specifier),
    }
    ucxx_spec = _extra_requirement(metadata, "dask-cuda", "distributed-ucxx").specifier
    ucxx = next((s.version.removesuffix(".*") for s in ucxx_spec if s.operator == "=="), "")
    if not ucxx:
        raise ReleaseError(f"dask-cuda {metadata['dask-cuda']['version']} names no distributed-ucxx series")
    out = [f"{name}=={current[name]} is outside {spec} (what {release} accepts): choose a release inside it"
           for name, spec in ranges.items() if name in current
           and not SpecifierSet(spec).contains(current[name], prereleases=True)]
    return Proposal(release, version, pins, ranges, ucxx, out)


def current_pins(root: Path = REPO_ROOT) -> dict[str, str]:
    """The course's exact pins in requirements.txt (the CPU environment every other file agrees with)."""
    pins = {}
    for line in (root / "requirements.txt").read_text().splitlines():
        match = re.match(r"^([A-Za-z0-9_.-]+)(?:\[[^\]]*\])?==([^\s;#]+)", line)
        if match:
            pins[canonicalize_name(match.group(1))] = match.group(2)
    return pins


def current_series(root: Path = REPO_ROOT) -> tuple[str, str]:
    """The RAPIDS series and the UCXX series requirements-gpu.txt pins now (``26.10``, ``0.52``)."""
    text = (root / "requirements-gpu.txt").read_text()
    rapids = re.search(r"^cudf-cu12==(\d+\.\d+)\.\*", text, re.M)
    ucxx = re.search(r"^distributed-ucxx-cu12==(\d+\.\d+)\.\*", text, re.M)
    if not rapids or not ucxx:
        raise ReleaseError("requirements-gpu.txt pins no cudf-cu12==X.Y.* or distributed-ucxx-cu12==X.Y.*")
    return rapids.group(1), ucxx.group(1)


def edits(proposal: Proposal, root: Path = REPO_ROOT) -> dict[Path, str]:
    """The new text of every file the proposal changes (files it leaves alone are not in the result)."""
    old_pins = current_pins(root)
    old_series, old_ucxx = current_series(root)
    changed = {}
    for relative in dict.fromkeys(DASK_FILES + SERIES_FILES):
        path = root / relative
        text = new = path.read_text()
        if relative in DASK_FILES:
            for name, version in proposal.pins.items():
                new = re.sub(rf"^(\s*-?\s*{name}(?:\[[^\]]*\])?)=={re.escape(old_pins[name])}\b",
                             rf"\g<1>=={version}", new, flags=re.M)
        if relative in SERIES_FILES:
            new = re.sub(rf"==({re.escape(old_series)})\.\*", f"=={proposal.release}.*", new)
            new = re.sub(rf"(\s-\s[a-z-]+)={re.escape(old_series)}\b", rf"\g<1>={proposal.release}", new)
            new = re.sub(rf"(ucxx\S*)==?{re.escape(old_ucxx)}\b", lambda m: m.group(0).replace(old_ucxx, proposal.ucxx),
                         new)
        if new != text:
            changed[path] = new
    return changed


def copied_sources(readme: str) -> dict[str, int]:
    """The "Copied from" column of the simulation's tables: each source and how many behaviours copy it."""
    sources: dict[str, int] = {}
    column = None
    for line in readme.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")] if line.startswith("|") else []
        if not cells:
            column = None
        elif column is None:
            column = next((at for at, cell in enumerate(cells) if cell.startswith("Copied from")), None)
        elif len(cells) > column and not set(cells[column]) <= set("-: "):
            sources[cells[column]] = sources.get(cells[column], 0) + 1
    return sources


def checklist(root: Path = REPO_ROOT) -> list[str]:
    """What a maintainer re-verifies by hand, read from where each list lives (never copied here)."""
    lines = ["The simulation (gpu_sim/README.md, \"At each RAPIDS release\"):"]
    readme = (root / "gpu_sim" / "README.md").read_text()
    section = re.search(r"^## At each RAPIDS release.*?$(.*?)^## ", readme, re.M | re.S)
    for step in re.findall(r"^(\d+\. .*?)(?=\n\d+\. |\Z)", section.group(1).strip() if section else "", re.M | re.S):
        lines.append("  " + " ".join(step.split())[:160])
    lines.append("  the copied contracts, by the source each copies (re-read them in the new release):")
    lines += [f"    {source}  ({count} table rows)" for source, count in copied_sources(readme).items()]
    lines.append("Version-sensitive notebook cells (they name a pinned version or a version-bound API):")
    for notebook in course_notebooks(root / "notebooks"):
        cells = json.loads(notebook.read_text())["cells"]
        hits = [str(at) for at, cell in enumerate(cells)
                if any(re.search(mark, "".join(cell["source"])) for mark in VERSION_MARKS)]
        if hits:
            lines.append(f"  {notebook.relative_to(root)}: cells {', '.join(hits)}")
    lines.append("Outdated answers in the review bank (utils/review_bank.yaml): still outdated, or now removed?")
    from utils.review import load_bank  # the bank's own reader (validation included)

    for question in load_bank().questions:
        for option in question.options:
            if option.outdated:
                lines.append(f"  {question.id} {option.letter}: {option.text[:100]}")
    links: dict[str, int] = {}
    pages = [root / "README.md", root / "gpu_sim" / "README.md", root / "utils" / "review_bank.yaml",
             *sorted((root / "docs").glob("*.md")), *sorted((root / "notebooks").glob("*.ipynb"))]
    for path in pages:
        found = LINK.findall(path.read_text())
        if found:
            links[str(path.relative_to(root))] = len(found)
    lines.append("External RAPIDS links (docs.rapids.ai, github.com/rapidsai) that the move to NVIDIA may break:")
    lines += [f"  {name}: {count}" for name, count in sorted(links.items())] or ["  none found"]
    lines += ["Then: python -m tools.gpu.resolve cu12 cu13; rebuild .venv and make constraints (copy the freeze to",
              "  binder/requirements.txt); tools/gpu/device/packages.txt's carried versions; make test."]
    return lines


# Files that name the release in prose or in their own checks: after --write, what still names the old one.
MENTIONS = (*dict.fromkeys(DASK_FILES + SERIES_FILES), "tools/gpu/device/packages.txt",
            "tests/repository/test_environment_files.py")


def stale_mentions(old_series: str, texts: dict[Path, str], root: Path = REPO_ROOT) -> list[str]:
    """``file:line`` of every line that still names ``old_series`` once ``texts`` (the new file texts) are written:
    comments and exact versions the tool cannot decide (``rmm-cu12==26.10.0``), each for a maintainer to read."""
    found = []
    for relative in MENTIONS:
        path = root / relative
        text = texts.get(path, path.read_text())
        found += [f"{relative}:{number}" for number, line in enumerate(text.splitlines(), 1)
                  if re.search(rf"(?<![\d.]){re.escape(old_series)}(?![\d])", line)]
    return found


def render(proposal: Proposal) -> list[str]:
    lines = [f"RAPIDS {proposal.release}: rapids-dask-dependency {proposal.rapids_dask_dependency}"]
    lines += [f"  {name}=={version}" for name, version in proposal.pins.items()]
    lines += [f"  {name}{spec}  (accepted range)" for name, spec in proposal.ranges.items()]
    lines.append(f"  RAPIDS packages =={proposal.release}.*, distributed-ucxx =={proposal.ucxx}.*")
    lines += [f"  to choose: {problem}" for problem in proposal.out_of_range]
    return lines


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:
        self.exit(2, f"error: {message}\n")


def main(argv: Sequence[str] | None = None) -> int:
    parser = _Parser(description=__doc__.split("\n\n")[0])
    parser.add_argument("release", help="the RAPIDS release, YY.MM (e.g. 26.12)")
    parser.add_argument("--write", action="store_true", help="write the pins into the files (default: print them)")
    args = parser.parse_args(argv)
    if not re.fullmatch(r"\d{2}\.\d{2}", args.release):
        parser.error(f"release {args.release!r} is not YY.MM (e.g. 26.12)")
    try:
        project = fetch_json(JSON_API.format(name="rapids-dask-dependency"))
        proposal = propose(args.release, project, fetch_metadata, current_pins())
        old_series = current_series()[0]
        changed = edits(proposal)
    except ReleaseError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    print("\n".join(render(proposal)))
    for path, text in changed.items():
        if args.write:
            path.write_text(text)
        print(f"{'wrote' if args.write else 'would change'} {path.relative_to(REPO_ROOT)}")
    if not changed:
        print("the files already pin this release")
    elif stale := stale_mentions(old_series, changed):
        print(f"still naming {old_series} (comments, exact versions to choose, the tests' own pins): "
              + ", ".join(stale))
    print("\n".join(checklist()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
