"""The notebooks as the course ships them: the committed version, never a learner's edits.

A learner who solves an exercise in Lab edits ``notebooks/`` in their checkout; the site built
there must still show (and offer for download) the course, not their answers. So the build takes
each notebook from ``HEAD`` (``git show HEAD:notebooks/NN_topic.ipynb``) where the repository is a
git checkout holding it, and from the working tree otherwise (a release tarball, a notebook not
committed yet). These files are executed (or their executed copies reused) and served as the
downloads; an executed copy whose stamp names another source is refused before rendering.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterable
from pathlib import Path

import nbformat

from tools.site.execute import SOURCE_HASH, Execution, source_hash


class NotCommitted(RuntimeError):
    """An executed copy was made from another notebook than the committed one."""


def committed_bytes(path: Path, root: Path) -> bytes:
    """``path`` (inside ``root``) as committed in ``HEAD``; the working-tree file where ``root`` is no
    git checkout, git is missing, or the file is not committed."""
    git = shutil.which("git")
    if git is not None:
        done = subprocess.run([git, "-C", str(root), "show", f"HEAD:./{path.relative_to(root).as_posix()}"],
                              capture_output=True, check=False)
        if done.returncode == 0:
            return done.stdout
    return path.read_bytes()


def ship(files: Iterable[str], root: Path, folder: Path) -> dict[str, Path]:
    """Write each ``notebooks/<file>`` as committed into ``folder`` (emptied first); file -> its copy."""
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    shipped = {}
    for file in files:
        shipped[file] = folder / file
        shipped[file].write_bytes(committed_bytes(root / "notebooks" / file, root))
    return shipped


def refuse_other_sources(executions: Iterable[Execution], shipped: dict[str, Path]) -> None:
    """Raise (one line) unless every executed copy is stamped with its committed notebook's hash."""
    for execution in executions:
        file = execution.notebook.file
        stamped = nbformat.read(execution.path, as_version=4).metadata.get(SOURCE_HASH)
        if stamped != source_hash(shipped[file]):
            raise NotCommitted(f"{execution.path} was executed from a notebooks/{file} that is not the committed "
                               "one (edited in the working tree?); the site shows the course as committed: "
                               "run python -m tools.site build --fresh")
