"""Prepare JupyterLab for the course, before it starts (``make lab``, Binder's postBuild).

- The learner's workspace (``tools.workspace``): copies of the course's notebooks, which Lab opens,
  so that answers and autosave never change the course's own files; new course versions come in
  with the learner's answers kept.
- The course's Lab settings (``binder/lab/overrides.json``: no Jupyter news toast, no update check)
  go to this environment's ``share/jupyter/lab/settings/overrides.json``, where Lab reads
  defaults that a learner's own settings still override.
- The workspace notebooks' stored Python version becomes this kernel's: JupyterLab writes the kernel's
  ``language_info`` into a notebook when the kernel starts and marks it modified unless it is equal,
  so without this a learner on another Python release would see every notebook change on opening.
- The workspace notebooks are marked trusted for this user (``nbformat.sign``, what ``jupyter trust``
  does), so opening one does not log "Notebook ... is not trusted" and their stored outputs show.

    python -m tools.lab_setup
"""

from __future__ import annotations

import argparse
import platform
import shutil
import sys
from pathlib import Path

import nbformat
from nbformat.sign import NotebookNotary

from tools.workspace import sync
from utils.base.paths import REPO_ROOT, WORKSPACE_DIR
from utils.notebook_grammar import course_notebooks

OVERRIDES = REPO_ROOT / "binder" / "lab" / "overrides.json"


def install_overrides(prefix: Path = Path(sys.prefix)) -> Path:
    target = prefix / "share" / "jupyter" / "lab" / "settings" / "overrides.json"
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(OVERRIDES, target)
    return target


def trust_notebooks(notebooks: list[Path], notary: NotebookNotary | None = None) -> int:
    notary = notary or NotebookNotary()
    for path in notebooks:
        notary.sign(nbformat.read(path, as_version=4))
    return len(notebooks)


def align_python_version(notebooks: list[Path], version: str | None = None) -> list[str]:
    """Set ``language_info.version`` to ``version`` (default: this interpreter's, the course kernel's)
    where it differs; returns the names of the notebooks changed."""
    version = version or platform.python_version()
    changed = []
    for path in notebooks:
        nb = nbformat.read(path, as_version=4)
        info = nb.metadata.setdefault("language_info", {})
        if info.get("version") != version:
            info["version"] = version
            nbformat.write(nb, path)
            changed.append(path.name)
    return changed


def main(argv: list[str] | None = None) -> int:
    argparse.ArgumentParser(prog="python -m tools.lab_setup", description=__doc__.splitlines()[0]).parse_args(argv)
    try:
        return _prepare()
    except OSError as error:  # a read-only clone, a full disk: say what and where, in one line
        where = f" ({error.filename})" if error.filename else ""
        print(f"error: cannot prepare JupyterLab: {error.strerror or error}{where}; "
              "the course folder and the environment must be writable", file=sys.stderr)
        return 2


def _prepare() -> int:
    target = install_overrides()
    for change in sync():
        if change.action != "unchanged":
            print(change.line())
    notebooks = course_notebooks(WORKSPACE_DIR)
    changed = align_python_version(notebooks)
    if changed:
        print(f"{len(changed)} notebooks now record Python {platform.python_version()} (this kernel's), "
              "so JupyterLab opens them unmodified")
    count = trust_notebooks(notebooks)
    print(f"JupyterLab settings: {target}; {count} notebooks in {WORKSPACE_DIR.name}/ trusted, "
          "yours to edit (the course's own stay in notebooks/)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
