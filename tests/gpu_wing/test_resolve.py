"""``tools.gpu.resolve``: the pip GPU environments resolve against the package index, and a failure is one line.

The parsing and checking tests need no network. The two that ask the real index (a deliberately wrong dask pin,
and a metadata read) skip with the reason when it cannot be reached; CI runs the full resolution as its own step
(``python -m tools.gpu.resolve cu12 cu13`` in .ci/run).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from packaging.requirements import Requirement

from tools.gpu import resolve
from utils.base.paths import REPO_ROOT

# pip 26.3's own words for the two failures the course has met (trimmed to the lines the parser reads).
RAPIDS_REFUSES_DASK = """\
ERROR: Cannot install dask-cuda==26.10.0 and dask[dataframe]==2026.8.0 because these package versions have conflicting \
dependencies.

The conflict is caused by:
    The user requested dask==2026.8.0
    The user requested (constraint) dask==2026.8.0
    dask[dataframe] 2026.8.0 depends on dask 2026.8.0 (from https://files.pythonhosted.org/packages/f8/3a/\
dask-2026.8.0-py3-none-any.whl (from https://pypi.org/simple/dask/) (requires-python:>=3.10))
    rapids-dask-dependency 26.10.0 depends on dask<2026.7.2 and >=2026.7.1

To fix this you could try to:
1. loosen the range of package versions you've specified
2. remove package versions to allow pip to attempt to solve the dependency conflict

ERROR: ResolutionImpossible: for help visit https://pip.pypa.io/en/latest/topics/dependency-resolution/
"""
PYTHON_TOO_OLD = """\
ERROR: Cannot install nbconvert because these package versions have conflicting dependencies.

The conflict is caused by:
    beautifulsoup4 4.15.0 depends on soupsieve>=1.6.1
    The user requested (constraint) soupsieve==4.1.3

Additionally, some packages in these conflicts have no matching distributions available for your environment:
    soupsieve

ERROR: ResolutionImpossible: for help visit https://pip.pypa.io/en/latest/topics/dependency-resolution/
"""
NO_WHEEL = """\
ERROR: Could not find a version that satisfies the requirement cudf-cu12==26.12.* (from versions: 26.8.1, 26.10.0, \
26.10.2)
ERROR: No matching distribution found for cudf-cu12==26.12.*
"""
offline_index = resolve.index_problem()


def test_a_conflict_is_one_line_naming_the_package_and_each_side():
    line = resolve.conflict_line(RAPIDS_REFUSES_DASK)
    assert "\n" not in line
    assert line.startswith("dask cannot be resolved: ")
    assert "rapids-dask-dependency 26.10.0 depends on dask<2026.7.2 and >=2026.7.1" in line
    assert "The user requested (constraint) dask==2026.8.0" in line
    assert "dask[dataframe] 2026.8.0 depends on dask 2026.8.0;" in line and "http" not in line


def test_a_pin_without_a_wheel_for_the_target_says_so():
    line = resolve.conflict_line(PYTHON_TOO_OLD)
    assert line.startswith("soupsieve cannot be resolved: ")
    assert line.endswith("(pip: no distribution of soupsieve matches for this platform and Python)")


def test_a_release_missing_from_the_index_names_what_the_index_has():
    assert resolve.conflict_line(NO_WHEEL) == (
        "cudf-cu12==26.12.*: no matching wheel; the index has 26.8.1, 26.10.0, 26.10.2")


def test_cu13_is_the_gpu_file_with_the_cuda_13_names():
    text = resolve.variant_text("cu13", resolve.REQUIREMENTS.read_text(), REPO_ROOT)
    requirements = [line for line in text.splitlines() if line and not line.startswith("#")]
    assert not [line for line in requirements if "cu12" in line.split("#")[0] or "cuda12x" in line]
    for spec in ("cudf-cu13==26.10.*", "dask-cuda[cu13]==26.10.*", "cuml-cu13[dask]==26.10.*", "cupy-cuda13x==",
                 "distributed-ucxx-cu13==", "\nxgboost-cu13=="):
        assert spec in text
    assert not re.search(r"^xgboost==", text, re.M), "xgboost==3.2.0 on Linux is the CUDA 12 build"
    assert f"-r {REPO_ROOT / 'requirements.txt'}" in text, "-r made absolute for a file in a temporary folder"
    assert resolve.variant_text("cu12", "cudf-cu12==1\n", REPO_ROOT) == "cudf-cu12==1\n"


def test_the_gpu_file_header_names_every_cuda_13_rename():
    """Learners read the CUDA 13 spelling from the file's header; the resolver resolves exactly that spelling."""
    header = " ".join(line for line in resolve.REQUIREMENTS.read_text().splitlines() if line.startswith("#"))
    for _, name in resolve.CU13_NAMES:
        assert name.removeprefix("^").rstrip("=") in header, f"the header does not name {name}"


def test_the_target_platform_takes_every_older_manylinux_wheel():
    tags = resolve.platforms()
    assert tags[0] == "manylinux_2_28_x86_64" and "manylinux_2_17_x86_64" in tags and "manylinux2014_x86_64" in tags
    command = resolve.pip_command(Path("r.txt"), Path("c.txt"), Path("out.json"), "3.11", resolve.INDEX_URL)
    assert "--dry-run" in command and "--isolated" in command and "--only-binary=:all:" in command
    assert command[command.index("--python-version") + 1].startswith("3.11.")


def _report(**versions: str) -> dict:
    rapids = ["bokeh<3.10", "dask<2026.7.2,>=2026.7.1", "distributed<2026.7.2,>=2026.7.1", 'pytest; extra == "test"']
    return {"install": [{"metadata": {"name": name, "version": version,
                                      "requires_dist": rapids if name == "rapids-dask-dependency" else []}}
                        for name, version in versions.items()]}


def test_the_report_is_held_to_the_pins_and_to_rapids_dask_dependency():
    pins = [Requirement("cudf-cu12==26.10.*"), Requirement("dask==2026.7.1")]
    right = _report(**{"cudf-cu12": "26.10.2", "dask": "2026.7.1", "distributed": "2026.7.1", "bokeh": "3.9.2",
                       "rapids-dask-dependency": "26.10.0"})
    versions, problems = resolve.check_report(right, pins)
    assert problems == [] and versions["cudf-cu12"] == "26.10.2"
    wrong = _report(**{"cudf-cu12": "26.8.1", "dask": "2026.7.1", "distributed": "2026.7.1", "bokeh": "3.10.0",
                       "rapids-dask-dependency": "26.10.0"})
    assert resolve.check_report(wrong, pins)[1] == [
        "cudf-cu12 resolved to 26.8.1, not the pinned ==26.10.*",
        "rapids-dask-dependency 26.10.0 requires bokeh<3.10, resolved 3.10.0",
    ]
    assert "rapids-dask-dependency is not in the resolution" in resolve.check_report(_report(dask="1"), [])[1]


def test_a_package_of_the_other_cuda_major_is_a_problem():
    versions = {"cudf-cu13": "26.10.2", "nvidia-nccl-cu12": "2.32.3", "cupy-cuda12x": "14.2.0", "xgboost": "3.2.0"}
    assert resolve.other_cuda("cu13", versions) == ["cupy-cuda12x 14.2.0 is built for CUDA 12",
                                                    "nvidia-nccl-cu12 2.32.3 is built for CUDA 12"]
    assert resolve.other_cuda("cu12", {"cudf-cu12": "26.10.2", "nvidia-nccl-cu12": "2.32.3"}) == []


def test_the_pins_include_the_cpu_file_with_markers_evaluated():
    names = {r.name for r in resolve.pinned_requirements(resolve.REQUIREMENTS.read_text(), REPO_ROOT)}
    assert {"cudf-cu12", "dask", "bokeh", "xgboost"} <= names
    assert ("xgboost-cpu" in names) == sys.platform.startswith("linux")


def test_a_whole_wheel_download_stops_the_run():
    """An index without PEP 658 files or range requests would make pip download the CUDA wheels to read them."""
    printer = [sys.executable, "-c", "print('Collecting libcudf-cu12'); "
               "print('  Downloading libcudf_cu12-26.10.0-py3-none-manylinux_2_28_x86_64.whl (666.0 MB)'); "
               "import time; time.sleep(30)"]
    with pytest.raises(resolve.ResolveError, match=r"stopped before downloading 666.0 MB"):
        resolve.run_pip(printer)
    small = [sys.executable, "-c", "print('  Downloading six-1.17.0-py2.py3-none-any.whl.metadata (2.3 kB)')"]
    assert "six" in resolve.run_pip(small)


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "tools.gpu.resolve", *args], cwd=REPO_ROOT, capture_output=True,
                          text=True, timeout=900, check=False, env={**os.environ, "PYTHONWARNINGS": "ignore"})


def test_bad_input_is_one_line_and_exit_2(tmp_path):
    cases = ((["cu11"], "unknown variant cu11"), (["--constraints", str(tmp_path / "no")], "no such file"))
    for args, message in cases:
        done = _cli(*args)
        assert done.returncode == 2 and done.stdout == ""
        assert len(done.stderr.splitlines()) == 1 and message in done.stderr, done.stderr


@pytest.mark.skipif(offline_index is not None, reason=f"needs the package index: {offline_index}")
def test_a_dask_pin_that_rapids_refuses_fails_in_one_line(tmp_path):
    """A maintainer bumps dask to the next release before RAPIDS does: the real index refuses it in one line."""
    for name in ("requirements.txt", "constraints.txt", "requirements-gpu.txt"):
        text = (REPO_ROOT / name).read_text()
        text = re.sub(r"^(dask(?:\[dataframe\])?|distributed)==2026\.7\.1$", r"\1==2026.8.0", text, flags=re.M)
        (tmp_path / name).write_text(text)
    done = _cli("cu12", "--requirements", str(tmp_path / "requirements-gpu.txt"),
                "--constraints", str(tmp_path / "constraints.txt"))
    assert done.returncode == 2, done.stdout + done.stderr
    assert len(done.stderr.splitlines()) == 1, done.stderr
    line = done.stderr.strip()
    assert line.startswith("error: cu12: dask cannot be resolved: ")
    assert "rapids-dask-dependency 26.10.0 depends on dask" in line and "2026.8.0" in line



def test_only_linux_x86_64_with_the_course_python_may_resolve(monkeypatch, tmp_path):
    """pip evaluates markers for the running interpreter: elsewhere the answer would be another machine's."""
    assert resolve.course_python() == "3.11"
    monkeypatch.setattr(resolve.platform, "system", lambda: "Darwin")
    assert "run this on Linux x86_64 with Python 3.11" in resolve.interpreter_problem("3.11")
    monkeypatch.setattr(resolve.platform, "system", lambda: "Linux")
    monkeypatch.setattr(resolve.platform, "machine", lambda: "x86_64")
    running = f"{sys.version_info.major}.{sys.version_info.minor}"
    assert resolve.interpreter_problem(running) is None and resolve.interpreter_problem("3.99") is not None
    (tmp_path / "c.txt").write_text("dask==1\n")
    with pytest.raises(resolve.ResolveError, match="does not name its Python"):
        resolve.course_python(tmp_path / "c.txt")
