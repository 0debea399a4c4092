"""``python -m utils.datagen.clean`` (``make clean-data``): delete what the course made in the data
folder, and nothing else.

``$COURSE_DATA_DIR`` may name a folder that also holds the learner's own files (the README suggests
a bigger disk), so nothing goes by a name pattern alone: a dataset folder must hold the generator's
``manifest.json``, a temporary folder must carry the generator's exact name (its owner's pid and a
random suffix) and belong to a generator that has stopped, and a scratch copy must have the name a
notebook gives it and only the files that notebook writes. Everything to delete is listed, one
line each, before anything is deleted. The learner's exercise progress (``progress.*`` in the
scratch folder) is kept. The standard library is enough, so it runs before the environment exists.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from utils.base.lifetime import process_alive
from utils.base.paths import SCRATCH_NAME, CoursePathError, default_data_dir, scratch_root
from utils.base.units import human_bytes
from utils.datagen.manifest import MANIFEST_NAME

# A temporary of ``build.generate``: ``.transactions-<scale>.tmp-<pid>-<8 hex>`` (``.old-`` while swapping).
TEMPORARY = re.compile(r"\.transactions-[A-Za-z0-9_]+\.(?:tmp|old)-(?P<pid>\d+)-[0-9a-f]{8}")
# The folder older versions of notebook 02 made with ``tempfile.mkdtemp(prefix="parquet-copy-")``.
OLD_PARQUET_COPY = re.compile(r"parquet-copy-[A-Za-z0-9_]{8}")
# What ``DataFrame.to_parquet`` writes into a folder.
PARQUET_PART = re.compile(r"part\.\d+\.parquet|_metadata|_common_metadata")


@dataclass(frozen=True)
class Item:
    """One thing to delete and, in a few words, why it is the course's."""

    path: Path
    what: str


def size_of(path: Path) -> int:
    """Bytes in ``path`` (a file, or a folder's files), for the listing."""
    if path.is_file():
        return path.stat().st_size
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file() and not p.is_symlink())


def real_dir(path: Path) -> bool:
    """A folder that is not a link: the course never makes links, and deleting through one would
    reach a folder elsewhere."""
    return path.is_dir() and not path.is_symlink()


def holds_only(folder: Path, name_ok: Callable[[str], bool]) -> bool:
    """Whether every entry of ``folder`` is a plain file whose name ``name_ok`` accepts."""
    return all(p.is_file() and not p.is_symlink() and name_ok(p.name) for p in folder.iterdir())


def is_generated_dataset(folder: Path) -> bool:
    """``transactions-<scale>`` with the generator's manifest for that scale."""
    try:
        manifest = json.loads((folder / MANIFEST_NAME).read_text())
        return folder.name == f"transactions-{manifest['params']['scale']}"
    except (OSError, ValueError, KeyError, TypeError):
        return False


def owner_running(pid: int, since: float) -> bool:
    """Whether the generator that named a temporary after its pid still runs (then it is writing it).
    Without psutil (the command runs before the environment exists) a live pid counts as the owner."""
    try:
        return process_alive(pid, since)
    except ImportError:
        pass
    try:
        os.kill(pid, 0)
    except (ProcessLookupError, OverflowError):
        return False
    except PermissionError:
        return True
    return True


# The files the notebooks write into the scratch folder (``Dataset.scratch_dir``): a name and a test
# of its contents each. The progress files (``utils.progress``) are not listed: they are kept.
SCRATCH_FILES = {
    "dask-report-04.html": "notebook 04's performance report",
    "dashboard-04-status.png": "notebook 04's dashboard snapshot",
}
SCRATCH_FOLDERS: dict[str, tuple[str, Callable[[str], bool]]] = {
    "parquet-copy": ("notebook 02's Parquet copy", lambda name: PARQUET_PART.fullmatch(name) is not None),
    "06_cudf_pandas": ("notebook 06's cudf.pandas script", lambda name: name == "monthly_by_region.py"),
}


def in_data_dir(data_dir: Path, keep: Callable[[str], None]) -> Iterator[Item]:
    """The datasets, the stopped generators' temporaries and old notebooks' copies in ``data_dir``."""
    for path in sorted(data_dir.iterdir()):
        name = path.name
        if name.startswith("transactions-") and real_dir(path):
            if is_generated_dataset(path):
                yield Item(path, "dataset")
            else:
                keep(f"keeping {path}: no {MANIFEST_NAME} from the course's generator in it")
        elif (match := TEMPORARY.fullmatch(name)) and real_dir(path):
            if owner_running(int(match["pid"]), path.stat().st_mtime):
                keep(f"keeping {path}: the generator writing it (pid {match['pid']}) is still running")
            else:
                yield Item(path, "temporary of a stopped generator")
        elif OLD_PARQUET_COPY.fullmatch(name) and real_dir(path):
            if holds_only(path, lambda part: PARQUET_PART.fullmatch(part) is not None):
                yield Item(path, "Parquet copy of an older notebook 02")
            else:
                keep(f"keeping {path}: it holds files that notebook 02 does not write")


def in_scratch(scratch: Path, keep: Callable[[str], None]) -> Iterator[Item]:
    """The notebooks' throw-away files in the scratch folder ``scratch``, by name and contents."""
    for name, what in SCRATCH_FILES.items():
        path = scratch / name
        if path.is_file() and not path.is_symlink():
            yield Item(path, what)
    for name, (what, name_ok) in SCRATCH_FOLDERS.items():
        path = scratch / name
        if real_dir(path):
            if holds_only(path, name_ok):
                yield Item(path, what)
            else:
                keep(f"keeping {path}: it holds files that the notebook does not write")


def course_items(data_dir: Path, keep: Callable[[str], None]) -> list[Item]:
    """Everything ``make clean-data`` deletes for ``data_dir``; ``keep`` hears, one line each, of
    look-alikes that stay and why."""
    items = list(in_data_dir(data_dir, keep)) if real_dir(data_dir) else []
    scratches = [data_dir / SCRATCH_NAME, scratch_root(data_dir)]
    for scratch in dict.fromkeys(scratches):  # the two are one folder unless $COURSE_SCRATCH_DIR is set
        if real_dir(scratch):
            items.extend(in_scratch(scratch, keep))
    return items


def delete(item: Item) -> None:
    """Remove one listed item (a folder with its files, or a file)."""
    if real_dir(item.path):
        shutil.rmtree(item.path)
    else:
        item.path.unlink()


class OneLineParser(argparse.ArgumentParser):
    """Bad arguments: one ``error: ...`` line and exit 2, as ``python -m utils.datagen`` does."""

    def error(self, message: str):
        self.exit(2, f"error: {message}\n")


def main(argv: list[str] | None = None) -> int:
    parser = OneLineParser(
        prog="python -m utils.datagen.clean",
        description="Delete the course's datasets, generator temporaries and notebook scratch copies "
        "(listed first); keep everything else, and the exercise progress.",
    )
    parser.add_argument("--data-dir", type=Path, help="the data folder (default: $COURSE_DATA_DIR or data/)")
    parser.add_argument("--dry-run", action="store_true", help="list what would be deleted; delete nothing")
    args = parser.parse_args(argv)
    try:
        data_dir = args.data_dir if args.data_dir is not None else default_data_dir()
        scratch_root(data_dir)  # resolved here, so that a bad $COURSE_SCRATCH_DIR is one line, not a traceback
    except CoursePathError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    if data_dir.exists() and not data_dir.is_dir():
        print(f"error: the data folder {data_dir} is a file, not a folder; check $COURSE_DATA_DIR", file=sys.stderr)
        return 2
    try:
        items = course_items(data_dir, print)
        sized = [(item, size_of(item.path)) for item in items]
    except OSError as error:
        print(f"error: cannot read {error.filename or data_dir}: {error.strerror or error}", file=sys.stderr)
        return 2
    if not items:
        print(f"nothing to delete: no dataset, temporary or scratch copy of the course in {data_dir}")
        return 0
    print(f"{'would delete' if args.dry_run else 'deleting'} {len(items)} item(s) the course made:")
    for item, size in sized:
        print(f"  {item.path}  ({item.what}, {human_bytes(size)})")
    if args.dry_run:
        return 0
    sys.stdout.flush()
    for item, _ in sized:
        try:
            delete(item)
        except OSError as error:
            print(f"error: cannot delete {error.filename or item.path}: {error.strerror or error}; "
                  "the items listed before it are deleted, the rest are kept", file=sys.stderr)
            return 2
    scratch = data_dir / SCRATCH_NAME
    if real_dir(scratch) and not any(scratch.iterdir()):
        scratch.rmdir()  # an empty scratch folder goes, as the notebooks recreate it
    print(f"deleted {len(items)} item(s), {human_bytes(sum(size for _, size in sized))}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
