"""The executed copies of the notebooks that the site shows: the test suite's, else run here.

The test suite's CPU notebook pass (``tools.test_suite``) writes every notebook it executed under
nbval into ``build/site/executed/`` (``tests/support/executed_copies.py``), stamped with the hash of
the notebook it ran, the scale and whether a local cluster ran it. The site reuses such a copy when
it is of the notebook as committed (``tools/site/committed.py``: a learner's edits are never shown)
and it ran as the site's label says (the tiny scale, a local cluster, the CPU backend): after
``make test`` on a clean checkout, ``make site`` executes nothing.

A notebook without such a copy runs here, top to bottom, one at a time: nbclient, the course's
kernel, the tiny scale, and a temporary progress file so that no learner's progress is written.
The backend is forced to the CPU (pandas) so the site's label is true on any machine, and no
``DASK_SCHEDULER_ADDRESS`` from the shell reaches the notebooks. Each runs in its own working
folder under the build folder.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import date
from pathlib import Path

import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

from tools.course_index import Notebook
from tools.site.labels import BUILD_SCALE, CPU_BACKEND_LINE, executed_backend

CELL_TIMEOUT_S = 600  # nbval's limit in the test suite (pyproject.toml)
KERNEL = "python3"  # the course's kernel, "Python 3 (course)", installed into the environment
KERNEL_LOG = "kernel.log"
# Notebook metadata of an executed copy: which notebook ran, when, how long, at which scale, on what cluster.
SOURCE_HASH = "course_site_source_sha256"
EXECUTED_DAY = "course_site_executed"
EXECUTED_SECONDS = "course_site_seconds"
EXECUTED_SCALE = "course_site_scale"
EXECUTED_CLUSTER = "course_site_cluster"  # "local" (the notebooks start their own) or "external"
ENVIRONMENT = {
    "COURSE_SCALE": BUILD_SCALE,
    "COURSE_BACKEND": "cpu",
    "DASK_DISTRIBUTED__LOGGING__DISTRIBUTED": "error",
    "PYDEVD_DISABLE_FILE_VALIDATION": "1",
}


class NotebookFailed(RuntimeError):
    """A cell raised: the site would show a broken notebook."""


@dataclass(frozen=True)
class Execution:
    """One executed copy and what the site's label says about it."""

    notebook: Notebook
    path: Path
    seconds: float | None
    reused: bool  # an earlier execution of exactly this notebook (the test suite's, or an earlier build's)
    backend: str | None  # the setup cell's "Backend : ..." line, None where no cluster is started
    day: str


@contextlib.contextmanager
def build_environment() -> Iterator[None]:
    """The variables the kernels inherit while the notebooks run; the caller's are restored after."""
    from utils.progress.store import PROGRESS_ENV_VAR  # imports Dask: only when executing

    saved = dict(os.environ)
    with tempfile.TemporaryDirectory(prefix="course-site-progress-") as progress:
        os.environ.update(ENVIRONMENT)
        os.environ[PROGRESS_ENV_VAR] = str(Path(progress) / "progress.jsonl")
        os.environ.pop("DASK_SCHEDULER_ADDRESS", None)
        try:
            yield
        finally:
            os.environ.clear()
            os.environ.update(saved)


def source_hash(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def stamp(nb: nbformat.NotebookNode, source: Path, seconds: float, scale: str, cluster: str) -> None:
    """Record in ``nb`` (an executed copy of ``source``) what ran it, for ``reusable``."""
    nb.metadata.update({SOURCE_HASH: source_hash(source), EXECUTED_DAY: date.today().isoformat(),
                        EXECUTED_SECONDS: round(seconds, 1), EXECUTED_SCALE: scale, EXECUTED_CLUSTER: cluster})


def execute(notebook: Notebook, source: Path, target: Path, workdir: Path) -> Execution:
    """Execute ``source`` with its stored outputs cleared, write the result to ``target``."""
    nb = nbformat.read(source, as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
    workdir.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    client = NotebookClient(nb, timeout=CELL_TIMEOUT_S, kernel_name=KERNEL,
                            resources={"metadata": {"path": str(workdir)}})
    # What the kernel and its cluster's processes print to the terminal (not to the notebook) goes
    # to a log beside the notebook's working folder, not into the build's output.
    with open(workdir / KERNEL_LOG, "wb") as log:
        try:
            client.execute(stdout=log, stderr=log)
        except CellExecutionError as error:
            raise NotebookFailed(f"{source.name} failed (kernel log: {workdir / KERNEL_LOG}):\n{error}") from error
    seconds = time.perf_counter() - started
    stamp(nb, source, seconds, BUILD_SCALE, "local")
    target.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, target)
    return Execution(notebook, target, seconds, False, executed_backend(nb), nb.metadata[EXECUTED_DAY])


def reusable(source: Path, target: Path) -> nbformat.NotebookNode | None:
    """An executed copy of exactly this notebook, made as the site's label says: at the site's scale,
    on a local cluster, on the CPU backend (or starting no cluster); else None."""
    if not target.exists():
        return None
    try:
        nb = nbformat.read(target, as_version=4)
    except Exception:  # a copy cut short or from another nbformat: execute again
        return None
    backend = executed_backend(nb)
    if (nb.metadata.get(SOURCE_HASH) != source_hash(source) or nb.metadata.get(EXECUTED_SCALE) != BUILD_SCALE
            or nb.metadata.get(EXECUTED_CLUSTER) != "local"
            or not (backend is None or backend.startswith(CPU_BACKEND_LINE))):
        return None
    return nb


def execute_all(notebooks: list[tuple[Notebook, Path]], executed: Path, run: Path, reuse: bool = True,
                log: Callable[[str], None] = print) -> list[Execution]:
    """Execute the notebooks in course order, one at a time (each starts its own cluster), except those
    with a ``reusable`` copy (unless ``reuse`` is False)."""
    results = []
    with build_environment():
        for notebook, source in notebooks:
            target = executed / source.name
            old = reusable(source, target) if reuse else None
            if old is not None:
                results.append(Execution(notebook, target, old.metadata.get(EXECUTED_SECONDS), True,
                                         executed_backend(old), str(old.metadata.get(EXECUTED_DAY, ""))))
                log(f"  {source.name}: the copy executed on {results[-1].day} in {results[-1].seconds} s "
                    "(the notebook has not changed since)")
                continue
            result = execute(notebook, source, target, run / source.stem)
            results.append(result)
            log(f"  {source.name}: executed in {result.seconds:.0f} s ({result.backend or 'no cluster'})")
    return results
