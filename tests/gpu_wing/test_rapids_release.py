"""``tools.gpu.rapids_release``: the pins a RAPIDS release implies, written into the files, and the checklist.

The recorded metadata below is RAPIDS 26.10's as the index serves it (rapids-dask-dependency 26.10.0, cudf-cu12
and cudf-polars-cu12 26.10.2, dask-cuda 26.10.0; runtime requirements only, the extras the tool reads kept), so
these tests run offline; one test asks the real index and skips with the reason when it cannot be reached.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Sequence

import pytest

from tools.gpu import rapids_release as release
from tools.gpu.resolve import index_problem
from utils.base.paths import REPO_ROOT
from utils.review import load_bank

RECORDED_26_10 = {
    "rapids-dask-dependency": {"name": "rapids-dask-dependency", "version": "26.10.0", "requires_dist": [
        "bokeh<3.10", "dask<2026.7.2,>=2026.7.1", "distributed<2026.7.2,>=2026.7.1", 'pytest; extra == "test"']},
    "cudf-cu12": {"name": "cudf-cu12", "version": "26.10.2", "requires_dist": [
        "cuda-bindings<13.0,>=12.9.2", "numpy<3.0,>=2.0", "pandas<3.1.0,>=3.0.0", "pyarrow>=19.0.0",
        "pylibcudf-cu12==26.10.*", "rmm-cu12==26.10.*", 'matplotlib<3.11; extra == "pandas-tests"']},
    "cudf-polars-cu12": {"name": "cudf-polars-cu12", "version": "26.10.2", "requires_dist": [
        "polars<1.45,>=1.35", "pylibcudf-cu12==26.10.*", 'pandas<3.1.0,>=3.0.0; extra == "test"',
        'rapids-dask-dependency==26.10.*; extra == "dask"']},
    "dask-cuda": {"name": "dask-cuda", "version": "26.10.0", "requires_dist": [
        "numpy<3.0,>=2.0", "pandas>=1.3", "rapids-dask-dependency==26.10.*",
        'distributed-ucxx-cu12==0.52.*; extra == "test-cu12"']},
}
PROJECT = {"info": {"version": "26.10.0"},
           "releases": {"26.8.0": [{"yanked": False}], "26.10.0": [{"yanked": False}]}}


def _recorded(metadata: dict) -> Callable[[Sequence[str]], dict[str, dict]]:
    def read(specs: Sequence[str]) -> dict[str, dict]:
        assert any(spec.startswith("rapids-dask-dependency==") for spec in specs)
        return metadata
    return read


def _release_26_12() -> dict:
    """A 26.12 as it could look: Dask 2026.11.0, bokeh cap raised, polars towards 2, UCXX 0.53."""
    metadata = {name: {**meta, "requires_dist": [
        spec.replace("2026.7.2", "2026.11.1").replace("2026.7.1", "2026.11.0").replace("bokeh<3.10", "bokeh<3.11")
        .replace("polars<1.45,>=1.35", "polars<2.1,>=1.45").replace("0.52", "0.53").replace("26.10", "26.12")
        for spec in meta["requires_dist"]], "version": meta["version"].replace("26.10", "26.12")}
        for name, meta in RECORDED_26_10.items()}
    return metadata


def test_26_10_from_recorded_metadata_is_what_the_course_pins():
    proposal = release.propose("26.10", PROJECT, _recorded(RECORDED_26_10), release.current_pins())
    assert proposal.rapids_dask_dependency == "26.10.0"
    assert proposal.pins == {"dask": "2026.7.1", "distributed": "2026.7.1"}
    assert proposal.ranges == {"bokeh": "<3.10", "pandas": "<3.1.0,>=3.0.0", "polars": "<1.45,>=1.35"}
    assert proposal.ucxx == "0.52" and proposal.out_of_range == []
    assert release.edits(proposal) == {}, "the files already pin 26.10"


def test_a_new_release_is_written_into_every_file_that_pins_it(tmp_path):
    for name in (*release.DASK_FILES, *release.SERIES_FILES):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(REPO_ROOT / name, tmp_path / name)
    project = {"info": {"version": "26.12.0"}, "releases": {**PROJECT["releases"], "26.12.0": [{"yanked": False}]}}
    proposal = release.propose("26.12", project, _recorded(_release_26_12()), release.current_pins(tmp_path))
    assert proposal.pins == {"dask": "2026.11.0", "distributed": "2026.11.0"} and proposal.ucxx == "0.53"
    assert proposal.out_of_range == ["polars==1.44.2 is outside <2.1,>=1.45 (what 26.12 accepts): choose a release "
                                     "inside it"]
    for path, text in release.edits(proposal, tmp_path).items():
        path.write_text(text)
    for name in release.DASK_FILES:
        text = (tmp_path / name).read_text()
        assert "dask" in text and "2026.7.1" not in text and "==2026.11.0" in text, name
    gpu = (tmp_path / "requirements-gpu.txt").read_text()
    assert "cudf-cu12==26.12.*" in gpu and "dask-cuda[cu12]==26.12.*" in gpu and "distributed-ucxx-cu12==0.53.*" in gpu
    conda = (tmp_path / "environment.yml").read_text()
    assert "  - cudf=26.12\n" in conda and "  - rapids-dask-dependency=26.12\n" in conda
    assert "  - distributed-ucxx=0.53" in conda and "  - dask==2026.11.0\n" in conda
    assert "cupy=14.2.0" in conda and "conda-forge::xgboost==3.2.0" in conda, "pins RAPIDS does not decide stay"
    for name in ("tools/gpu/device/packages.txt", "tests/repository/test_environment_files.py"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(REPO_ROOT / name, tmp_path / name)
    stale = release.stale_mentions("26.10", {}, tmp_path)
    assert any(s.startswith("tools/gpu/device/packages.txt:") for s in stale), "rmm-cu12==26.10.0 is left to choose"
    gpu_lines = (tmp_path / "requirements-gpu.txt").read_text().splitlines()
    left = [gpu_lines[int(s.split(":")[1]) - 1] for s in stale if s.startswith("requirements-gpu.txt:")]
    assert left and all("#" in line.split("26.10")[0] for line in left), f"only comments still say 26.10: {left}"


def test_a_release_not_on_the_index_is_one_line():
    with pytest.raises(release.ReleaseError, match=r"^rapids-dask-dependency has no 26.12 release on the index "
                                                   r"\(newest: 26.10.0\)$"):
        release.propose("26.12", PROJECT, _recorded(RECORDED_26_10), release.current_pins())
    yanked = {"info": {}, "releases": {"26.12.0": [{"yanked": True}]}}
    with pytest.raises(release.ReleaseError, match="no 26.12 release"):
        release.release_version(yanked, "26.12")


def test_the_checklist_reads_each_list_from_its_home():
    lines = "\n".join(release.checklist())
    assert "\n  1. Download the new wheels" in lines and "\n  7. Check the size budget" in lines
    assert "rapidsai/dask-cuda `dask_cuda/local_cuda_cluster.py`" in lines
    outdated = [(q.id, o.letter) for q in load_bank().questions for o in q.options if o.outdated]
    assert outdated and all(f"\n  {qid} {letter}: " in lines for qid, letter in outdated)
    assert "notebooks/08_distributed_training.ipynb: cells" in lines


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "tools.gpu.rapids_release", *args], cwd=REPO_ROOT,
                          capture_output=True, text=True, timeout=300, check=False, env=dict(os.environ))


def test_a_release_that_is_not_yy_mm_is_refused_in_one_line():
    done = _cli("26.12.0")
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr == "error: release '26.12.0' is not YY.MM (e.g. 26.12)\n"


offline_index = index_problem()


@pytest.mark.skipif(offline_index is not None, reason=f"needs the package index: {offline_index}")
def test_dry_run_against_26_10_on_the_index_proposes_the_current_pins():
    done = _cli("26.10")
    assert done.returncode == 0, done.stderr
    assert "RAPIDS 26.10: rapids-dask-dependency 26.10." in done.stdout
    assert "\n  dask==2026.7.1\n" in done.stdout and "\n  bokeh<3.10  (accepted range)\n" in done.stdout
    assert "the files already pin this release" in done.stdout and "would change" not in done.stdout
