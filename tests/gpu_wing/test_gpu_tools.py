"""The GPU tooling where there is no GPU: ``python -m tools.gpu.check`` refuses in one line, the
``tools.gpu.report`` plugin turns pytest's results into gpu-check.md/json, the GPU tests are
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

from tools.gpu import check as gpu_check
from tools.gpu.report import build_report, render_markdown
from utils.base.paths import REPO_ROOT
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
    done = _python("-m", "tools.gpu.check", "--report-dir", str(tmp_path / "r"))
    line = _assert_refused(done, tmp_path / "r")
    assert "no NVIDIA GPU visible" in line and "gpu-check only runs on a machine with an NVIDIA GPU" in line


def test_empty_cuda_visible_devices_is_refused_on_any_machine(tmp_path):
    done = _python("-m", "tools.gpu.check", "--report-dir", str(tmp_path / "r"), CUDA_VISIBLE_DEVICES="")
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
                   "-p", "tools.gpu.report", f"--gpu-report-dir={tmp_path / 'r'}")
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
    done = subprocess.run([sys.executable, "-S", "-m", "tools.gpu.preflight"], cwd=REPO,
                          env={"PYTHONPATH": str(REPO), "PATH": os.environ.get("PATH", "")},
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 2, done.stdout + done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: preflight: "), lines
    for missing in ("packaging cannot be imported", "import dask: ModuleNotFoundError: No module named 'dask'",
                    "import dask_cuda: ModuleNotFoundError", "import pytest: ModuleNotFoundError",
                    "`dask cuda worker` is unknown"):
        assert missing in lines[0]
    assert "CUDA major unknown" in lines[0], "without NVML, cuda.bindings or nvidia-smi no major can be told"


def test_preflight_versions_carried_wins_machine_ranges_and_markers(tmp_path):
    from tools.gpu import preflight as gpu_preflight

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
    from tools.gpu.preflight import PACKAGES, read_packages

    # by path: tests/repository is on sys.path only where pytest collected it (not when this file runs alone)
    path = REPO / "tests" / "repository" / "test_environment_files.py"
    spec = importlib.util.spec_from_file_location("environment_files", path)
    environment_files = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(environment_files)
    ENVIRONMENTS, _normalise = environment_files.ENVIRONMENTS, environment_files._normalise  # noqa: N806

    packages = read_packages(PACKAGES)
    carried = {_normalise(p.name): p.spec.removeprefix("==") for p in packages if p.kind == "carry"}
    have = {_normalise(p.name) for p in packages if p.kind == "have"}
    assert not carried.keys() & have, "a package is both carried and expected on the machine"
    constraints = ENVIRONMENTS["constraints.txt"]
    for name, version in carried.items():
        if name == "dask-cuda":
            assert "dask-cuda[cu12]==26.10.*" in (REPO / "requirements-gpu.txt").read_text()
            assert version.startswith("26.10.")
        elif name in ("rmm-cu12", "rmm-cu13", "librmm-cu12", "librmm-cu13"):
            # not pinned by the course: cudf-cuNN==26.10.* brings them (rmm-cuNN==26.10.*, librmm-cuNN==26.10.*)
            assert "cudf-cu12==26.10.*" in (REPO / "requirements-gpu.txt").read_text()
            assert version.startswith("26.10."), f"{name}: carried {version}, RAPIDS 26.10 expected"
        elif name == "rapids-logger":
            assert version.startswith("0.3."), "librmm 26.10.0 needs rapids-logger==0.3.*"
        else:
            pinned = constraints.get(name)
            assert pinned == version, f"{name}: carried {version}, constraints.txt {pinned}"


# The CUDA major of the machine, decided before anything is installed ------------------------------------

def test_the_probe_reads_nvidia_smi_banner():
    from tools.gpu.preflight import parse_nvidia_smi

    banner = "| NVIDIA-SMI 580.159.04   Driver Version: 580.159.04   CUDA Version: 13.0     |"
    assert parse_nvidia_smi(banner) == 13000
    assert parse_nvidia_smi("CUDA Version: 12.8") == 12080
    assert parse_nvidia_smi("NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver") is None


@pytest.mark.parametrize(("readings", "override", "major", "said"), [
    ({"NVML, driver 580.159.04": 13000, "cuda.bindings": 13000, "nvidia-smi": 13000}, None, 13,
     "the driver supports CUDA 13.0 (NVML, driver 580.159.04): cu13 builds"),
    ({"NVML, driver 570.1": 12080, "cuda.bindings": "ModuleNotFoundError: x", "nvidia-smi": 12080}, None, 12,
     "CUDA 12.8"),
    ({"NVML": "NVMLError_LibraryNotFound: x", "cuda.bindings": 12090, "nvidia-smi": "FileNotFoundError: x"}, None, 12,
     "(cuda.bindings)"),
    ({"NVML": "no pynvml", "cuda.bindings": "no cuda", "nvidia-smi": 13020}, None, 13, "CUDA 13.2 (nvidia-smi)"),
    ({"NVML": 14000}, None, 13, "newer than any build carried: the cu13 builds run on it"),
    ({"NVML": 13000, "nvidia-smi": 12080}, None, 13, "other sources say 12"),
    ({"NVML": 11080}, None, None, "RAPIDS 26.10 needs a driver for CUDA 12 or 13"),
    ({"NVML": "no pynvml", "cuda.bindings": "no cuda", "nvidia-smi": "not found"}, None, None,
     "could not be read (NVML: unavailable (no pynvml); cuda.bindings: unavailable (no cuda)"),
    ({"NVML": 13000}, "12", 12, "CUDA_MAJOR=12 was given (the driver: NVML: CUDA 13.0)"),
    ({"NVML": 13000}, "11", None, "CUDA_MAJOR='11' is not one of 12, 13"),
])
def test_the_probe_decides_the_cuda_major(readings, override, major, said):
    from tools.gpu.preflight import decide_cuda_major

    decided, reason = decide_cuda_major(readings, override)
    assert decided == major, reason
    assert said in reason, reason


def test_the_probe_on_a_machine_without_a_driver_says_so_and_exits_2():
    done = _python("-m", "tools.gpu.preflight", "--probe-cuda", CUDA_MAJOR="")
    assert done.returncode == 2 and done.stdout == "", done.stdout + done.stderr
    assert "the driver's CUDA version could not be read" in done.stderr
    done = _python("-m", "tools.gpu.preflight", "--probe-cuda", CUDA_MAJOR="13")
    assert (done.returncode, done.stdout) == (0, "13\n"), done.stderr


def test_cuda_lines_apply_to_their_major_only():
    """What fetch-wheels carries (both majors), what the machine must have (one), for which Python."""
    from tools.gpu.preflight import PACKAGES, read_packages, requirements

    packages = read_packages(PACKAGES)
    both = requirements(packages, "carry", "3.12", (12, 13))
    assert {"rmm-cu12==26.10.0", "librmm-cu12==26.10.0", "rmm-cu13==26.10.0", "librmm-cu13==26.10.0",
            "rapids-logger==0.3.0", "dask-cuda==26.10.0"} <= set(both)
    only_13 = requirements(packages, "carry", "3.12", (13,))
    assert "rmm-cu13==26.10.0" in only_13 and not any("cu12" in r for r in only_13)
    have_12 = requirements(packages, "have", "3.12", (12,))
    assert "cupy-cuda12x>=14.0.1,!=14.1.0" in have_12 and "cuda-bindings>=12.9.2,<13" in have_12
    assert not any("cuda13" in r or r.startswith("cuda-bindings>=13") for r in have_12)
    have_13 = requirements(packages, "have", "3.12", (13,))
    assert "cupy-cuda13x>=14.0.1,!=14.1.0" in have_13 and "cuda-bindings>=13.0.1,<14" in have_13
    assert "importlib-metadata>=4.13.0" not in have_13, "a python_version < 3.12 line on the 3.12 machine"
    assert "importlib-metadata>=4.13.0" in requirements(packages, "have", "3.11", (13,))
    done = _python("-m", "tools.gpu.preflight", "--list", "carry", "--python-version", "3.12", "--cuda-major", "12")
    assert done.stdout.split() == requirements(packages, "carry", "3.12", (12,)), done.stderr


def test_preflight_checks_the_lines_of_the_probed_major(tmp_path):
    from tools.gpu import preflight as gpu_preflight

    listing = tmp_path / "packages.txt"
    listing.write_text('have numpy>=1.26; extra == "cu12"\nhave no-such-cu13-package>=1; extra == "cu13"\n')
    packages = gpu_preflight.read_packages(listing)
    lines, problems = gpu_preflight.check_versions(packages, carried=None, skip=set(), cuda_major=12)
    assert problems == [] and lines[1] == '  n/a   have no-such-cu13-package>=1 (only where extra == "cu13")'
    _, problems = gpu_preflight.check_versions(packages, carried=None, skip=set(), cuda_major=13)
    assert problems == ['no-such-cu13-package is not installed (have no-such-cu13-package>=1)']
    lines, problems = gpu_preflight.check_versions(packages, carried=None, skip=set(), cuda_major=None)
    assert problems == [] and all(line.startswith("  n/a") for line in lines), "no major: no CUDA line applies"


# The run report of tools/gpu/device/gpu-check.sh ---------------------------------------------------------

def _pytest_report(tests: dict[str, tuple[str, str]]) -> dict:
    rows = [{"test": f"test_gpu_x.py::{name}", "outcome": outcome, "seconds": 1.0, "reason": reason, "properties": {}}
            for name, (outcome, reason) in tests.items()]
    machine = {"gpus": {"count": 1, "devices": [{"name": "FAKE GPU", "memory_gib": 79.6}]}}
    return build_report(machine, rows, 1 if any(o == "failed" for o, _ in tests.values()) else 0, "pytest tests/gpu")


def test_run_report_says_what_each_step_did_and_which_course_paths_are_proved(tmp_path):
    from tools.gpu import report as gpu_report

    out = tmp_path / "out"
    gpu_report.record_step(out, "probe", "ok", 0, 0.4, "the driver supports CUDA 13.0 (NVML): cu13 builds", 13)
    gpu_report.record_step(out, "install", "ok", 0, 1.0, "14 wheels")
    gpu_report.record_step(out, "preflight", "failed", 2, 6.0, "error: preflight: 1 problem(s): pyarrow 12 ...")
    partial = json.loads((out / "gpu-run.json").read_text())
    assert [s["step"] for s in partial["steps"]] == ["probe", "install", "preflight"]
    assert partial["exit_status"] == 2 and "not reached yet" in (out / "gpu-run.md").read_text()
    cudf_skip = ("skipped", "cudf not installed")
    (out / "single").mkdir()
    (out / "single" / "gpu-check.json").write_text(json.dumps(_pytest_report({
        "test_1a_local_cuda_cluster": ("passed", ""), "test_1b_course_picks": cudf_skip,
        "test_2_dashboard": ("failed", "AssertionError: no GPU metrics"), "test_3_cupy": ("passed", ""),
        "test_4a_cudf": cudf_skip, "test_4b_notebook[01]": ("skipped", "left out on request (--skip-notebooks)"),
        "test_5f_rmm[pool]": ("passed", ""), "test_5f_rmm[async]": ("skipped", "rmm not installed"),
    })))
    gpu_report.record_step(out, "single", "failed", 1, 80.0)
    gpu_report.record_step(out, "shared-cluster", "ok", 0, 3.0, "scheduler at tcp://127.0.0.1:1")
    gpu_report.record_step(out, "shared", "failed", 124, 300.0, "timed out after 300 s (STEP_TIMEOUT);")
    run = gpu_report.write_run(out, json.loads((out / "gpu-run.json").read_text()), final=True)
    assert run["exit_status"] == 2 and run["cuda_major"] == 13
    verdicts = {row["path"]: row for row in run["course_paths"]}
    local = verdicts["dask-cuda's LocalCUDACluster: one worker per GPU, each on its own device"]
    assert local["verdict"] == "proved here"
    dashboard = verdicts["the dashboard's GPU pages plot every worker"]
    assert dashboard["verdict"] == "FAILED: failed: AssertionError: no GPU metrics"
    shared = verdicts["the classroom recipe: two `dask cuda worker` processes sharing GPU 0"]
    assert shared["single"] == "n/a" and shared["verdict"] == "not proved here: its run did not take place"
    for path in gpu_report.COURSE_PATHS:
        if path.needs_cudf:
            assert verdicts[path.what]["verdict"] == gpu_report.NO_CUDF, path
    rmm = verdicts["dask-cuda's RMM options (`rmm_pool_size`, `rmm_async`) read back on the workers"]
    assert rmm["verdict"] == "not proved here: skipped: rmm not installed", "every parameter must pass"
    markdown = (out / "gpu-run.md").read_text()
    single = json.loads((out / "single" / "gpu-check.json").read_text())
    assert markdown == gpu_report.render_run(run, {"single": single}) + "\n"
    assert "Exit status 2: a step could not run or has not finished." in markdown
    assert ("| shared | tools.gpu.check --workers 2 --shared-gpu on that cluster | **failed** | 124 | 300.0 | "
            "timed out after 300 s (STEP_TIMEOUT); |") in markdown
    assert "- CUDA major: 13 (the driver supports CUDA 13.0 (NVML): cu13 builds)" in markdown
    assert "- GPUs: FAKE GPU (79.6 GiB)" in markdown
    assert f"**{gpu_report.NO_CUDF}**" in markdown


@pytest.mark.parametrize(("statuses", "final", "expected"), [
    ({"probe": ("ok", 0), "install": ("ok", 0), "preflight": ("ok", 0), "single": ("ok", 0),
      "shared-cluster": ("ok", 0), "shared": ("ok", 0)}, True, 0),
    ({"probe": ("ok", 0), "install": ("ok", 0), "preflight": ("ok", 0), "single": ("failed", 1),
      "shared-cluster": ("ok", 0), "shared": ("ok", 0)}, True, 1),
    ({"probe": ("ok", 0), "install": ("ok", 0), "preflight": ("ok", 0), "single": ("skipped", None),
      "shared-cluster": ("skipped", None), "shared": ("skipped", None)}, True, 0),  # a dry run
    ({"probe": ("failed", 2), "install": ("ok", 0), "preflight": ("ok", 0), "single": ("ok", 0),
      "shared-cluster": ("ok", 0), "shared": ("ok", 0)}, True, 2),
    ({"probe": ("ok", 0), "install": ("ok", 0)}, False, 0),
    ({"probe": ("ok", 0), "install": ("ok", 0)}, True, 2),  # the run ended before its GPU steps
])
def test_run_exit_status(statuses, final, expected):
    from tools.gpu.report import run_exit_status

    run = {"steps": [{"step": step, "status": status, "exit": code} for step, (status, code) in statuses.items()]}
    assert run_exit_status(run, final) == expected


def test_run_report_command_line_records_the_last_error_line(tmp_path):
    err = tmp_path / "single.err"
    err.write_text("distributed.worker - INFO - noise\nerror: no NVIDIA GPU visible (NVML reports no GPU)\nnoise\n")
    out = tmp_path / "out"
    done = _python("-S", "-m", "tools.gpu.report", "record", str(out), "single", "failed", "--exit", "2",
                   "--detail-file", str(err), PYTHONPATH=str(REPO))
    assert done.returncode == 0, done.stderr
    step = json.loads((out / "gpu-run.json").read_text())["steps"][0]
    assert step["detail"] == "error: no NVIDIA GPU visible (NVML reports no GPU)"
    done = _python("-S", "-m", "tools.gpu.report", "summarize", str(out), "--final", PYTHONPATH=str(REPO))
    assert done.returncode == 2, "python -S: the run report needs the standard library only"
    assert "| probe | " in (out / "gpu-run.md").read_text() and "**not run**" in (out / "gpu-run.md").read_text()


KILLED_TESTS = '''
import os
import signal


def test_first(record_property):
    record_property("summary", "done before the kill")


def test_killed():
    os.kill(os.getpid(), signal.SIGKILL)
'''


def test_a_killed_pytest_run_leaves_the_outcomes_it_reached(tmp_path):
    """A GPU machine's time limit stops the run midway: the report still holds the tests that finished."""
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    (tmp_path / "test_killed.py").write_text(KILLED_TESTS)
    done = _python("-m", "pytest", str(tmp_path / "test_killed.py"), "-p", "no:cacheprovider",
                   "-p", "tools.gpu.report", f"--gpu-report-dir={tmp_path / 'r'}")
    assert done.returncode == -9, done.stdout + done.stderr
    report = json.loads((tmp_path / "r" / "gpu-check.json").read_text())
    assert report["exit_status"] is None and report["counts"]["passed"] == 1
    assert report["tests"][0]["properties"] == {"summary": "done before the kill"}
    assert "pytest had not finished when this was written" in (tmp_path / "r" / "gpu-check.md").read_text()


@pytest.mark.slow
@no_gpu_here
def test_gpu_check_script_never_stops_before_its_report(tmp_path):
    """No wheels, no driver, no dask-cuda: every step is recorded with what went wrong, the run goes
    on to the end, the run report is written and the exit status says it failed."""
    out, wheels = tmp_path / "out", tmp_path / "no-wheels"
    wheels.mkdir()
    env = {**os.environ, "PYTHON": sys.executable, "WHEELS": str(wheels), "SITE": str(tmp_path / "site"),
           "OUT": str(out), "STEP_TIMEOUT": "120", "WORKER_WAIT": "5"}
    env.pop("CUDA_MAJOR", None)
    done = subprocess.run(["bash", "tools/gpu/device/gpu-check.sh"], cwd=REPO, env=env, capture_output=True, text=True,
                          timeout=600, check=False)
    assert done.returncode == 2, done.stdout + done.stderr
    run = json.loads((out / "gpu-run.json").read_text())
    steps = {step["step"]: step for step in run["steps"]}
    assert list(steps) == ["probe", "install", "preflight", "single", "shared-cluster", "shared"], steps
    assert steps["probe"]["status"] == "failed" and "could not be read" in steps["probe"]["detail"]
    assert steps["install"]["status"] == "failed" and "no wheels in" in steps["install"]["detail"]
    assert steps["preflight"]["status"] == "failed" and "error: preflight:" in steps["preflight"]["detail"]
    assert steps["single"]["status"] == "failed" and steps["single"]["detail"].startswith("error: no NVIDIA GPU")
    assert steps["shared"]["status"] == "failed" and steps["shared"]["detail"].startswith("error: dask_cuda")
    assert run["final"] and run["exit_status"] == 2
    assert (out / "gpu-run.md").read_text() in done.stdout, "the report is printed at the end"
    assert (out / "logs.tar.gz").exists() and not (out / "logs").exists()
    address = steps["shared-cluster"]["detail"].removeprefix("scheduler at ")
    assert address.startswith("tcp://127.0.0.1:"), steps["shared-cluster"]
    assert not _listening(address), f"the script left its scheduler running at {address}"


def _listening(address: str) -> bool:
    import socket

    host, port = address.removeprefix("tcp://").rsplit(":", 1)
    with socket.socket() as sock:
        sock.settimeout(2)
        return sock.connect_ex((host, int(port))) == 0


# The GPU backend without cudf (utils.start_client(dataframes=False)): what test 5a runs on a real GPU --------

def test_choose_backend_for_gpu_workers_without_dataframes(monkeypatch):
    from utils import backend as backend_module

    monkeypatch.delenv("COURSE_BACKEND", raising=False)
    monkeypatch.setattr(backend_module, "missing_gpu_packages", lambda: ["cudf", "dask_cudf"])
    with pytest.raises(ValueError, match="cudf, dask_cudf cannot be imported"):
        backend_module.choose_backend("gpu", gpus=1)
    assert backend_module.choose_backend("auto", gpus=1).name == "cpu", "the course's unaided choice is unchanged"
    chosen = backend_module.choose_backend("gpu", gpus=1, dataframes=False)
    assert chosen.name == "gpu"
    auto = backend_module.choose_backend("auto", gpus=1, dataframes=False)
    assert (auto.name, auto.reason) == ("gpu", "1 NVIDIA GPU(s) found and dask-cuda is installed")
    monkeypatch.setattr(backend_module, "missing_gpu_packages", lambda: ["cudf", "dask_cudf", "dask_cuda"])
    with pytest.raises(ValueError, match="dask_cuda cannot be imported"):
        backend_module.choose_backend("gpu", gpus=1, dataframes=False)


WITHOUT_CUDF = '''
import sys

sys.modules["cudf"] = sys.modules["dask_cudf"] = None  # this process: a GPU machine where cudf is not installed

import dask

from utils.backend import missing_gpu_packages
from utils.cluster import describe, shutdown, start_client

if __name__ == "__main__":
    print("missing:", missing_gpu_packages())
    try:
        start_client(backend="gpu", quiet=True)
    except ValueError as error:
        print("dataframes=True:", error)
    client = start_client(backend="gpu", dataframes=False, quiet=True)
    try:
        info = describe(client)
        print("dataframes=False:", type(client.cluster).__name__, client.cluster.enable_cudf_spill,
              dask.config.get("dataframe.backend"), info["gpus"], info["gpu_workers"])
    finally:
        shutdown(client)
'''


@pytest.mark.slow
def test_start_client_gpu_backend_without_cudf_on_the_simulated_stack(tmp_path):
    """dask-cuda's LocalCUDACluster imports cudf when enable_cudf_spill is on (dask_cuda/local_cuda_cluster.py):
    with dataframes=False the course starts it with cudf's spilling off and leaves the DataFrame backend alone.
    The simulated dask-cuda is a port of the released one; cudf is hidden from this process only."""
    script = tmp_path / "without_cudf.py"
    script.write_text(WITHOUT_CUDF)
    path = os.pathsep.join([str(REPO / "gpu_sim"), str(REPO)])
    done = _python(str(script), PYTHONPATH=path, GPU_SIM_DEVICES="1", COURSE_BACKEND="")
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert "missing: ['cudf', 'dask_cudf']" in lines
    assert any(line.startswith("dataframes=True: COURSE_BACKEND=gpu but cudf, dask_cudf cannot be imported")
               for line in lines), lines
    assert "dataframes=False: LocalCUDACluster False pandas ['Simulated GPU'] 1" in lines, lines
