"""The site renders the test suite's executed copy of a notebook only when that copy is what the
site's label says: the same notebook, the tiny scale, a local cluster, the CPU backend."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest

from tools.site.execute import reusable, stamp
from tools.site.labels import BUILD_SCALE


def _copy(tmp_path: Path, backend_line: str = "Backend   : cpu (pandas) - no NVIDIA GPU found",
          scale: str = BUILD_SCALE, cluster: str = "local") -> tuple[Path, Path]:
    source = tmp_path / "03_demo.ipynb"
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("client = utils.start_client()")]),
                   source)
    executed = nbformat.read(source, as_version=4)
    executed.cells[0].outputs = [nbformat.v4.new_output("stream", name="stdout", text=backend_line + "\n")]
    stamp(executed, source, 12.5, scale, cluster)
    target = tmp_path / "executed" / source.name
    target.parent.mkdir()
    nbformat.write(executed, target)
    return source, target


def test_the_suites_copy_of_an_unchanged_notebook_is_reused(tmp_path):
    source, target = _copy(tmp_path)
    assert reusable(source, target) is not None


@pytest.mark.parametrize(("made_by", "why"), [
    ({"scale": "small"}, "another scale"),
    ({"cluster": "external"}, "an external cluster"),
    ({"backend_line": "Backend   : gpu (cudf) - 2 NVIDIA GPU(s) found"}, "the GPU backend"),
])
def test_a_copy_made_otherwise_is_executed_again(tmp_path, made_by, why):
    source, target = _copy(tmp_path, **made_by)
    assert reusable(source, target) is None, why


def test_an_edited_notebook_is_executed_again(tmp_path):
    source, target = _copy(tmp_path)
    source.write_text(source.read_text().replace("start_client()", "start_client(backend='cpu')"))
    assert reusable(source, target) is None


def test_a_copy_cut_short_is_executed_again(tmp_path):
    source, target = _copy(tmp_path)
    target.write_text(target.read_text()[:40])
    assert reusable(source, target) is None
