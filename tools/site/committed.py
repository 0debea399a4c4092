"""The notebooks as the course ships them: the committed version, never a learner's edits.

A learner who solves an exercise in Lab edits ``notebooks/`` in their checkout; the site built
there must still show (and offer for download) the course, not their answers. So the build takes
each notebook from ``HEAD`` (``git show HEAD:notebooks/NN_topic.ipynb``) where the repository is a
git checkout holding it, and from the working tree otherwise (a release tarball, a notebook not
committed yet). These files are executed (or their executed copies reused) and served as the
downloads; an executed copy whose stamp names another source is refused before rendering, and a
file that is not a notebook (not JSON, say) stops the build in one line naming it, before any
notebook runs.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import warnings
from collections.abc import Iterable
from pathlib import Path

import nbformat

from tools.site.execute import SOURCE_HASH, Execution, source_hash


class NotCommitted(RuntimeError):
    """An executed copy was made from another notebook than the committed one."""


class NotANotebook(ValueError):
    """A notebook the course lists is not one (not JSON, or JSON without a notebook's structure)."""


def committed_source(path: Path, root: Path) -> tuple[bytes, bool]:
    """``path`` (inside ``root``) as committed in ``HEAD``, and ``True``; the working-tree file and
    ``False`` where ``root`` is no git checkout, git is missing, or the file is not committed."""
    git = shutil.which("git")
    if git is not None:
        done = subprocess.run([git, "-C", str(root), "show", f"HEAD:./{path.relative_to(root).as_posix()}"],
                              capture_output=True, check=False)
        if done.returncode == 0:
            return done.stdout, True
    return path.read_bytes(), False


def committed_bytes(path: Path, root: Path) -> bytes:
    """``committed_source``'s bytes."""
    return committed_source(path, root)[0]


def notebook_problem(data: bytes) -> str | None:
    """Why ``data`` is not a notebook that nbformat reads (``"not JSON: Expecting value: line 1 column 1
    (char 0)"``), in one line; ``None`` when it is one."""
    try:
        text = data.decode("utf-8")
        value = json.loads(text)
    except UnicodeDecodeError:
        return "not UTF-8 text"
    except json.JSONDecodeError as error:
        return f"not JSON: {error}"
    except RecursionError:
        return "not JSON: nested too deeply"
    if not isinstance(value, dict):
        return f"JSON, but a {type(value).__name__} where a notebook is an object"
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # an old notebook's warnings (cell ids) are no reason to stop
            nbformat.reads(text, as_version=4)
    except Exception as error:  # nbformat raises whatever its converters and validator meet
        detail = (str(error).strip().splitlines() or [type(error).__name__])[0]
        return f"JSON, but nbformat cannot read it: {detail[:200]}"
    return None


def ship(files: Iterable[str], root: Path, folder: Path) -> dict[str, Path]:
    """Write each ``notebooks/<file>`` as committed into ``folder`` (emptied first); file -> its copy.
    A file that is not a notebook is ``NotANotebook``, one line naming it and the fix."""
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    shipped = {}
    for file in files:
        data, committed = committed_source(root / "notebooks" / file, root)
        problem = notebook_problem(data)
        if problem is not None:
            where, fix = ((" as committed (HEAD)", "commit a valid one") if committed else ("", "fix it"))
            raise NotANotebook(f"notebooks/{file}{where} is not a notebook ({problem}): {fix}, or take it out of "
                               "notebooks/index.yml")
        shipped[file] = folder / file
        shipped[file].write_bytes(data)
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
