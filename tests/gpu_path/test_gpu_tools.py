"""The GPU tooling where there is no GPU: ``python -m tools.gpu_check`` refuses in one line, the
``tools.gpu_report`` plugin turns pytest's results into gpu-check.md/json, the GPU tests are
collected and skipped with a reason, and check 3's graph is exact on NumPy chunks.

The GPU tests themselves are in tests/gpu/ (every one marked ``gpu``).
"""

from __future__ import annotations

import importlib.util
import json
import os
import platform
import subprocess
import sys
from pathlib import Path

import dask
import pytest

from tools import gpu_check
from tools.gpu_report import build_report, render_markdown
from utils.datagen.manifest import REPO_ROOT
from utils.machine import GPU_INSTALL_HINT, gpu_count

REPO = REPO_ROOT
no_gpu_here = pytest.mark.skipif(gpu_count() > 0, reason="this machine has a GPU: the GPU tests would run")


def _python(*args: str, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, *args], cwd=REPO, env={**os.environ, **env},
                          capture_output=True, text=True, timeout=300, check=False)


def _assert_refused(done: subprocess.CompletedProcess, report_dir: Path) -> str:
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2, done.stderr
    assert len(lines) == 1 and lines[0].startswith("error: "), f"expected one error line, got {lines}"
    assert done.stdout == ""
    assert not report_dir.exists(), "no report may be written without a GPU"
    return lines[0]


@no_gpu_here
def test_gpu_check_refuses_without_a_gpu_in_one_line(tmp_path):
    done = _python("-m", "tools.gpu_check", "--report-dir", str(tmp_path / "r"))
    line = _assert_refused(done, tmp_path / "r")
    assert "no NVIDIA GPU visible" in line and "gpu-check only runs on a machine with an NVIDIA GPU" in line


def test_empty_cuda_visible_devices_is_refused_on_any_machine(tmp_path):
    done = _python("-m", "tools.gpu_check", "--report-dir", str(tmp_path / "r"), CUDA_VISIBLE_DEVICES="")
    assert "CUDA_VISIBLE_DEVICES is set and empty" in _assert_refused(done, tmp_path / "r")


def test_gpu_without_dask_cuda_or_cupy_is_refused(monkeypatch, capsys, tmp_path):
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    monkeypatch.setattr(gpu_check, "gpu_count", lambda: 2)
    monkeypatch.setattr(gpu_check, "installed", lambda module: module not in ("dask_cuda", "cupy"))
    assert gpu_check.main(["--report-dir", str(tmp_path / "r")]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and err.startswith("error: dask_cuda, cupy cannot be imported")
    assert GPU_INSTALL_HINT in err and not (tmp_path / "r").exists()


FAKE_TESTS = '''
import pytest

@pytest.fixture
def cluster():
    raise RuntimeError("the cluster did not start")

def test_exact(record_property):
    record_property("gpu_seconds", [0.5, 0.4])
    record_property("summary", "exact | fast")

def test_wrong():
    assert 1 == 2, "totals differ"

def test_needs_cudf():
    pytest.importorskip("a_module_that_is_not_installed", reason="cudf not installed")

def test_on_the_cluster(cluster):
    pass
'''


def test_report_comes_from_pytest_results(tmp_path):
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    (tmp_path / "test_fake.py").write_text(FAKE_TESTS)
    done = _python("-m", "pytest", str(tmp_path / "test_fake.py"), "-p", "no:cacheprovider",
                   "-p", "tools.gpu_report", f"--gpu-report-dir={tmp_path / 'r'}")
    assert done.returncode == 1, done.stdout + done.stderr
    report = json.loads((tmp_path / "r" / "gpu-check.json").read_text())
    assert report["counts"] == {"passed": 1, "failed": 1, "error": 1, "skipped": 1}
    assert report["exit_status"] == 1
    tests = {test["test"]: test for test in report["tests"]}
    assert tests["test_fake.py::test_exact"]["properties"] == {"gpu_seconds": [0.5, 0.4], "summary": "exact | fast"}
    assert tests["test_fake.py::test_wrong"]["outcome"] == "failed"
    assert tests["test_fake.py::test_wrong"]["reason"] == "AssertionError: totals differ"
    assert tests["test_fake.py::test_needs_cudf"]["outcome"] == "skipped", "a skip is never a pass"
    assert tests["test_fake.py::test_needs_cudf"]["reason"] == "cudf not installed"
    assert tests["test_fake.py::test_on_the_cluster"]["outcome"] == "error"
    assert "the cluster did not start" in tests["test_fake.py::test_on_the_cluster"]["reason"]
    assert report["machine"]["python"] == platform.python_version() and report["machine"]["packages"]["pytest"]
    markdown = (tmp_path / "r" / "gpu-check.md").read_text()
    assert markdown == render_markdown(report) + "\n"
    assert "1 passed, 1 failed, 1 error, 1 skipped (pytest exit status 1)" in markdown
    assert "| test_fake.py::test_needs_cudf | **skipped** |" in markdown
    assert "| exact \\| fast |" in markdown, "pipes inside table cells are escaped"
    assert "gpu-check report:" in done.stdout


def test_markdown_header_names_the_machine():
    machine = {
        "date_utc": "2026-11-30T12:00:00Z", "host": "gpu-box", "platform": "Linux", "python": "3.12.3",
        "cpu": "FAKE CPU, 16 usable cores", "cuda_visible_devices": None, "scheduler_address": None,
        "gpus": {"count": 2, "devices": [{"name": "FAKE GPU", "memory_gib": 80.0}] * 2, "driver": "999.1",
                 "cuda_driver": "12.9"},
        "cuda_runtime_cupy": "12.8", "packages": {"dask": "2026.7.1", "cudf": None},
    }
    test = {"test": "test_gpu_groupby.py::test_3", "outcome": "passed", "seconds": 2.5, "reason": "",
            "properties": {"summary": "exact; GPU 0.1 s, NumPy 1.0 s", "gpu_seconds": [0.1]}}
    markdown = render_markdown(build_report(machine, [test], 0, "pytest tests/gpu"))
    assert "- GPUs: 2: FAKE GPU (80.0 GiB); FAKE GPU (80.0 GiB)" in markdown
    assert "- NVIDIA driver: 999.1; CUDA (driver): 12.9; CUDA runtime (CuPy): 12.8" in markdown
    assert "- CPU: FAKE CPU, 16 usable cores" in markdown and "- Python: 3.12.3" in markdown
    assert "| dask | 2026.7.1 |" in markdown and "| cudf | not installed |" in markdown
    assert "| test_gpu_groupby.py::test_3 | **passed** | 2.5 | exact; GPU 0.1 s, NumPy 1.0 s |" in markdown
    assert '- `gpu_seconds`: [0.1]' in markdown


@no_gpu_here
def test_gpu_tests_are_collected_and_skipped_with_the_reason():
    done = _python("-m", "pytest", "tests/gpu", "-q", "-rs", "-p", "no:cacheprovider")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "needs an NVIDIA GPU" in done.stdout
    summary = done.stdout.strip().splitlines()[-1]
    assert " skipped in " in summary and "passed" not in summary and "failed" not in summary, summary


def test_numpy_twin_of_the_gpu_groupby_is_exact():
    """Check 3's graph on NumPy chunks (the GPU test runs the same graph on CuPy chunks)."""
    spec = importlib.util.spec_from_file_location("gpu_groupby", REPO / "tests" / "gpu" / "test_gpu_groupby.py")
    twin = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(twin)
    rows, partitions, customers, seed = 30_001, 3, 500, 7
    expected = twin.ground_truth_cents(rows, partitions, customers, seed)
    ids, amounts = twin.host_arrays(rows, partitions, customers, seed)
    with dask.config.set(scheduler="sync"):
        result = twin.bincount_groupby(ids, amounts, customers, split_every=2).compute()
    twin.assert_exact(result, expected, "NumPy twin")
    result[10] += 1  # one cent off for one customer
    with pytest.raises(AssertionError, match="1 of 500 customers differ, e.g. customer 100010"):
        twin.assert_exact(result, expected, "NumPy twin")


def test_the_gpu_environments_install_the_ucx_transport_for_distributed():
    """protocol="ucx" needs the UCXX-based package for distributed; without it a GPU learner's
    LocalCUDACluster(protocol="ucx") fails at start-up."""
    import yaml

    pip = (REPO / "requirements-gpu.txt").read_text()
    assert "distributed-ucxx-cu12==0.52.*" in pip
    conda = [d for d in yaml.safe_load((REPO / "environment.yml").read_text())["dependencies"] if isinstance(d, str)]
    assert any(d.startswith("distributed-ucxx=0.52") for d in conda), conda


def test_gpu_check_waits_for_the_workers_it_was_promised():
    """--workers N: the shared-GPU step waits for its workers instead of sleeping, and says in one
    line how many came (checked here on a CPU cluster: the waiting is not GPU-specific)."""
    from distributed import LocalCluster

    with LocalCluster(n_workers=1, threads_per_worker=1, processes=False, dashboard_address=None) as cluster:
        assert gpu_check.wait_for_workers(cluster.scheduler_address, 1, timeout=10) is None
        line = gpu_check.wait_for_workers(cluster.scheduler_address, 2, timeout=1)
    assert line == (f"error: 1 of 2 workers joined the scheduler at {cluster.scheduler_address} within 1 s; "
                    "see the workers' logs")


def test_gpu_check_worker_options_need_a_scheduler(capsys, tmp_path):
    assert gpu_check.main(["--report-dir", str(tmp_path / "r"), "--workers", "2"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and "give --scheduler-address too" in err


def test_preflight_without_the_stack_stops_in_one_line_naming_what_is_missing(tmp_path):
    """`python -S` with only the repository on the path: nothing of the Dask stack is importable."""
    done = subprocess.run([sys.executable, "-S", "-m", "tools.gpu_preflight"], cwd=REPO,
                          env={"PYTHONPATH": str(REPO), "PATH": os.environ.get("PATH", "")},
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 2, done.stdout + done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: preflight: "), lines
    for missing in ("packaging cannot be imported", "import dask: ModuleNotFoundError: No module named 'dask'",
                    "import dask_cuda: ModuleNotFoundError", "import pytest: ModuleNotFoundError",
                    "`dask cuda worker` is unknown"):
        assert missing in lines[0]
    assert "nothing was run on the GPU" in lines[0]


def test_preflight_versions_carried_wins_machine_ranges_and_markers(tmp_path):
    from tools import gpu_preflight

    listing = tmp_path / "packages.txt"
    listing.write_text("# comment\ncarry pandas==0.0.1\nhave numpy>=1.26  # ok\nhave pytest>=99\n"
                       "have no-such-package-here>=1\nhave pyarrow>=1; python_version < '3'\n")
    packages = gpu_preflight.read_packages(listing)
    assert packages[1] == gpu_preflight.Package("have", "numpy", ">=1.26")
    assert packages[4].marker == "python_version < '3'"
    lines, problems = gpu_preflight.check_versions(packages, carried=None, skip=set())
    assert any(line.startswith("  ok    have numpy>=1.26: ") for line in lines)
    assert "  n/a   have pyarrow>=1 (only where python_version < '3')" in lines
    assert problems == [
        f"pandas {metadata_version('pandas')} does not meet ==0.0.1",
        f"pytest {metadata_version('pytest')} does not meet >=99",
        "no-such-package-here is not installed (have no-such-package-here>=1)",
    ]
    # a carried pin that is met, but by the machine's copy rather than the carried wheels
    listing.write_text(f"carry pandas=={metadata_version('pandas')}\n")
    _, problems = gpu_preflight.check_versions(gpu_preflight.read_packages(listing), carried=tmp_path, skip=set())
    assert len(problems) == 1 and "not from the carried wheels" in problems[0]
    listing.write_text("carry pandas>=3\n")
    with pytest.raises(ValueError, match="expected 'carry NAME==VERSION'"):
        gpu_preflight.read_packages(listing)


def metadata_version(name: str) -> str:
    from importlib import metadata

    return metadata.version(name)


def test_the_carried_versions_are_the_course_pins():
    """What the offline run carries is what learners install: constraints.txt / requirements-gpu.txt."""
    from test_environment_files import ENVIRONMENTS, _normalise

    from tools.gpu_preflight import PACKAGES, read_packages

    packages = read_packages(PACKAGES)
    carried = {_normalise(p.name): p.spec.removeprefix("==") for p in packages if p.kind == "carry"}
    have = {_normalise(p.name) for p in packages if p.kind == "have"}
    assert not carried.keys() & have, "a package is both carried and expected on the machine"
    constraints = ENVIRONMENTS["constraints.txt"]
    for name, version in carried.items():
        if name == "dask-cuda":
            assert "dask-cuda[cu12]==26.10.*" in (REPO / "requirements-gpu.txt").read_text()
            assert version.startswith("26.10.")
        else:
            pinned = constraints.get(name)
            assert pinned == version, f"{name}: carried {version}, constraints.txt {pinned}"
