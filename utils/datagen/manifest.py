"""The contract between the generator and its readers: where datasets live, what a complete one
holds, and how to rebuild it.

The generator writes ``manifest.json`` last, listing every file with its size and SHA-256;
``utils.dataset.Dataset`` reads it, and a directory counts as a dataset only when its files match
that list. Everything that both sides must agree on is defined here, once.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict
from pathlib import Path

from utils.base.paths import default_data_dir
from utils.datagen.params import Params
from utils.datagen.scales import SCALES

MANIFEST_NAME = "manifest.json"
FORMAT_VERSION = 3  # 2: every file with its SHA-256 in the manifest; 3: customers table, 2024-2025, cube
WORLD_FORMAT = 3  # the format that added the customers table, the two years and the cube
DEFAULT_SEED = 42


def dataset_dir(data_dir: Path, scale: str) -> Path:
    """The folder of one scale's dataset inside a data directory."""
    return data_dir / f"transactions-{scale}"


def sha256_file(path: Path) -> str:
    with open(path, "rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


class DamagedManifest(ValueError):
    """A ``manifest.json`` that is not what the generator writes (edited by hand, cut short): one
    line that says what is wrong and the command that makes the data again."""

    def __init__(self, directory: Path, problem: str, command: str):
        self.problem = problem
        super().__init__(
            f"the manifest {directory / MANIFEST_NAME} is damaged ({problem}): run `{command}` to make the data again"
        )


def read_manifest(directory: Path) -> dict:
    """The manifest of ``directory``, checked to have the shape the generator writes (the keys its
    readers use, with their types); ``DamagedManifest`` otherwise. A missing or unreadable file
    raises the ``OSError``."""
    content = (directory / MANIFEST_NAME).read_bytes()
    try:
        manifest = json.loads(content)
    except ValueError as error:  # not JSON, or not text
        manifest, problem = None, f"not valid JSON: {error}"
    else:
        problem = manifest_problem(manifest)
        if problem is None:
            return manifest
    params_readable = _is(manifest, dict) and _params_problem(manifest.get("params")) is None
    command = regenerate_command(directory, manifest) if params_readable else _rebuild_by_name(directory)
    raise DamagedManifest(directory, problem, command)


_KINDS = {dict: "an object", list: "a list", int: "a whole number", str: "a string"}
# What each part of a manifest must be: required keys, then keys that older formats lack.
_TOP_REQUIRED = {"params": dict, "rows": int, "partitions": list, "ground_truth": dict}
_TOP_OPTIONAL = {"files": dict, "customers": dict}
_PARAMS_REQUIRED = {"scale": str, "rows": int, "partitions": int, "seed": int, "formats": list}
_PARAMS_OPTIONAL = {"customers": int, "format_version": int}
_PART_REQUIRED = {"index": int, "rows": int, "files": dict, "bytes": dict}
_FILE_REQUIRED = {"bytes": int, "sha256": str}


def _is(value: object, kind: type) -> bool:
    return isinstance(value, kind) and not isinstance(value, bool)


def _shape_problem(where: str, value: object, required: dict, optional: dict | None = None) -> str | None:
    """The first key of ``value`` (an object, named ``where``) that is missing or of the wrong type."""
    if not _is(value, dict):
        return f"{where} is not an object"
    for name, kind in {**required, **(optional or {})}.items():
        if name not in value:
            if name in required:
                return f"{where}.{name} is missing"
        elif not _is(value[name], kind):
            return f"{where}.{name} is not {_KINDS[kind]}"
    return None


def manifest_problem(manifest: object) -> str | None:
    """What makes ``manifest`` (parsed JSON) differ in shape from what the generator writes, in a
    few words (``params is not an object``), or None."""
    if not _is(manifest, dict):
        return "it is not a JSON object"
    problem = _shape_problem("manifest", manifest, _TOP_REQUIRED, _TOP_OPTIONAL)
    if problem is not None:
        return problem.removeprefix("manifest.")
    problem = _params_problem(manifest["params"])
    for index, part in enumerate(manifest["partitions"]):
        problem = problem or _shape_problem(f"partitions[{index}]", part, _PART_REQUIRED)
    for rel, entry in (manifest.get("files") or {}).items():
        problem = problem or _shape_problem(f"files[{rel!r}]", entry, _FILE_REQUIRED)
    if problem is None and "customers" in manifest:
        problem = _shape_problem("customers", manifest["customers"], {"rows": int})
    return problem


def _params_problem(params: object) -> str | None:
    problem = _shape_problem("params", params, _PARAMS_REQUIRED, _PARAMS_OPTIONAL)
    if problem is None and not all(_is(fmt, str) for fmt in params["formats"]):
        return "params.formats is not a list of strings"
    return problem


def _rebuild_by_name(directory: Path) -> str:
    """The command that makes the dataset in ``directory`` again when its manifest no longer says
    with which parameters: the scale from the folder's name (``transactions-<scale>``)."""
    scale = directory.name.removeprefix("transactions-")
    command = "python -m utils.datagen" + (f" --scale {scale}" if scale in SCALES else "")
    return command + _data_dir_flag(directory) + " --force"


def _data_dir_flag(directory: Path) -> str:
    if directory.parent.resolve() != default_data_dir().resolve():
        return f" --data-dir {directory.parent}"
    return ""


def file_problems(directory: Path, manifest: dict, checksums: bool) -> list[str]:
    """What differs between ``directory`` and the files its manifest lists: missing, extra, resized
    and (with ``checksums``) changed files, one short phrase each; empty when they agree."""
    listed = manifest.get("files")
    if not isinstance(listed, dict) or not listed:
        return [f"{MANIFEST_NAME} lists no file checksums (written by an older generator)"]
    on_disk = {
        p.relative_to(directory).as_posix()
        for p in directory.rglob("*")
        if p.is_file() and p.name != MANIFEST_NAME
    }
    problems = [f"{rel}: not part of the dataset (extra file)" for rel in sorted(on_disk - set(listed))]
    for rel, entry in sorted(listed.items()):
        if rel not in on_disk:
            problems.append(f"{rel}: missing")
            continue
        size = (directory / rel).stat().st_size
        if size != entry["bytes"]:
            problems.append(f"{rel}: size changed ({entry['bytes']:,} -> {size:,} bytes)")
        elif checksums and sha256_file(directory / rel) != entry["sha256"]:
            problems.append(f"{rel}: content changed (checksum differs)")
    return problems


def is_complete(directory: Path, params: Params | None = None) -> bool:
    """True when the manifest exists, matches ``params`` (if given) and the directory holds exactly
    the files it lists, at their recorded sizes (checksums: ``Dataset.verify()``)."""
    return why_incomplete(directory, params) is None


def why_incomplete(directory: Path, params: Params | None = None) -> str | None:
    """What keeps ``directory`` from being a complete dataset for ``params``, in a few words, or
    None when it is complete (see ``is_complete``)."""
    try:
        manifest = read_manifest(directory)
    except FileNotFoundError:
        return "it has no manifest (an interrupted run?)" if directory.exists() else "it does not exist"
    except DamagedManifest as error:
        return f"its manifest is damaged ({error.problem})"
    except (OSError, ValueError) as error:
        return f"its manifest cannot be read ({error})"
    stored = dict(manifest.get("params", {}))
    version = stored.pop("format_version", None)
    if version != FORMAT_VERSION:
        return f"it was made by an older generator (format {version or 1}, current {FORMAT_VERSION})"
    if params is not None:
        stored_formats = set(stored.pop("formats", []))
        wanted = asdict(params)
        wanted_formats = set(wanted.pop("formats"))
        if stored != wanted or not wanted_formats <= stored_formats:
            changed = [name for name in wanted if stored.get(name) != wanted[name]] or ["formats"]
            return f"it was made with other parameters ({', '.join(changed)})"
    try:
        problems = file_problems(directory, manifest, checksums=False)
    except (OSError, KeyError, TypeError) as error:
        return f"its files cannot be checked ({error})"
    if problems:
        more = f" and {len(problems) - 1} more" if len(problems) > 1 else ""
        return f"its files do not match the manifest ({problems[0]}{more})"
    return None


def regenerate_command(directory: Path, manifest: dict) -> str:
    """The shell command that rebuilds the dataset in ``directory`` from scratch."""
    params = manifest["params"]
    command = f"python -m utils.datagen --scale {params['scale']}"
    preset = SCALES.get(params["scale"])
    if preset is not None:
        for name in ("rows", "partitions", "customers"):
            if params.get(name) not in (None, getattr(preset, name)):
                command += f" --{name} {params[name]}"
    if params.get("seed", DEFAULT_SEED) != DEFAULT_SEED:
        command += f" --seed {params['seed']}"
    if sorted(params.get("formats", ())) != ["csv", "parquet"]:
        command += f" --formats {','.join(params['formats'])}"
    return command + _data_dir_flag(directory) + " --force"
