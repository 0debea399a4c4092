"""A pytest plugin over nbval: each notebook nbval ran, written with its outputs, for the site.

With ``--course-executed-dir DIR`` (``tools.test_suite`` gives it ``build/site/executed`` for the
CPU notebook pass), each notebook whose cells all passed is written to ``DIR/<name>.ipynb`` with the
outputs nbval received, stamped (``tools.site.execute.stamp``) with the hash of the notebook that
ran, the scale, the seconds its cells took and whether it ran against an external scheduler.
``make site`` then renders these copies instead of executing the notebooks again. A notebook with a
failed cell gets no copy (and an older copy of it is removed), so the site never shows a broken run.
"""

from __future__ import annotations

import copy
import os
from collections import defaultdict
from pathlib import Path

import nbformat
import pytest
from nbval.plugin import IPyNbCell

OPTION = "--course-executed-dir"
SCHEDULER_ENV_VAR = "DASK_SCHEDULER_ADDRESS"  # utils.cluster.SCHEDULER_ENV_VAR (not imported: it loads Dask)


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(OPTION, metavar="DIR", default=None,
                     help="write each notebook nbval ran, with its outputs, into DIR (for the course site)")


class ExecutedCopies:
    """Collects each notebook's outputs and timings as its items run; writes it after its last item."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.seconds: dict[str, float] = defaultdict(float)  # by the notebook's node id
        self.failed: set[str] = set()

    @pytest.hookimpl
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        notebook = report.nodeid.split("::")[0]
        if notebook.endswith(".ipynb"):
            self.seconds[notebook] += report.duration
            if report.failed:
                self.failed.add(notebook)

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(self, item: pytest.Item, nextitem: pytest.Item | None):
        yield
        notebook = item.parent if isinstance(item.parent, pytest.File) else None
        if notebook is None or notebook.path.suffix != ".ipynb":
            return
        if nextitem is not None and nextitem.parent is notebook:
            return
        target = self.folder / notebook.path.name
        if notebook.nodeid in self.failed or not hasattr(notebook, "nb"):
            target.unlink(missing_ok=True)
            return
        cells = [child for child in item.session.items if isinstance(child, IPyNbCell) and child.parent is notebook]
        self.write(notebook, cells, target)

    def write(self, notebook: pytest.File, cells: list[IPyNbCell], target: Path) -> None:
        """``notebook`` with the outputs nbval's items received; a deselected cell keeps none."""
        from tools.site.execute import stamp

        nb = copy.deepcopy(notebook.nb)
        outputs = {item.cell_num: item.test_outputs for item in cells if item.cell_num >= 0}
        count = 0
        for cell_num, cell in enumerate(cell for cell in nb.cells if cell.cell_type == "code"):
            ran = outputs.get(cell_num)
            cell.outputs = [nbformat.NotebookNode(output) for output in ran or []]
            count += ran is not None
            cell.execution_count = count if ran is not None else None
            for output in cell.outputs:
                if output.output_type == "execute_result":
                    output.execution_count = cell.execution_count
        nbformat.validate(nb)
        cluster = "external" if os.environ.get(SCHEDULER_ENV_VAR) else "local"
        stamp(nb, notebook.path, self.seconds[notebook.nodeid], os.environ.get("COURSE_SCALE", ""), cluster)
        target.parent.mkdir(parents=True, exist_ok=True)
        partial = target.with_suffix(".ipynb.partial")
        nbformat.write(nb, partial)
        partial.replace(target)  # never a half-written copy for the site


def pytest_configure(config: pytest.Config) -> None:
    folder = config.getoption(OPTION)
    if folder:
        config.pluginmanager.register(ExecutedCopies(Path(folder).resolve()), "course-executed-copies")
