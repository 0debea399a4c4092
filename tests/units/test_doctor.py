"""The readiness doctor passes on a working machine and fails clearly, with the fix, when
something is broken: a missing package, a wrong pin, too little disk or memory, an impossible
backend, a cluster that cannot start, a dashboard that does not answer."""

from __future__ import annotations

import collections
import os
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pandas
import pytest

from utils import doctor
from utils.base.paths import REPO_ROOT
from utils.cluster import shutdown, start_client


def _pin_files(tmp_path: Path, direct: str, extra: str = "") -> tuple[Path, Path]:
    requirements, constraints = tmp_path / "requirements.txt", tmp_path / "constraints.txt"
    requirements.write_text(f"# test pins\n{direct}\n")
    constraints.write_text(f"# test pins\n{direct}\n{extra}\n")
    return requirements, constraints


def _run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "utils.doctor", *args], capture_output=True, text=True,
                          cwd=REPO_ROOT, env={**os.environ, **(env or {})}, timeout=120)


def _line(output: str, name: str) -> str:
    lines = [line for line in output.splitlines() if line[6:].startswith(name)]
    assert len(lines) == 1, f"no single {name!r} line in:\n{output}"
    return lines[0]


def test_the_doctor_passes_here_with_a_cluster_and_its_dashboard():
    result = _run("--scale", "tiny")
    assert result.returncode == 0, result.stdout + result.stderr
    for name in ("python", "course libraries", "other packages", "cluster", "computation", "dashboard"):
        assert _line(result.stdout, name).startswith("OK "), result.stdout
    assert "0 FAIL: ready" in result.stdout.splitlines()[-1]


def test_a_missing_package_fails_with_the_install_command(tmp_path):
    requirements, constraints = _pin_files(tmp_path, "pandas==" + pandas.__version__ + "\nno-such-course-package==1.0")
    result = _run("--no-cluster", "--scale", "tiny", "--requirements", str(requirements),
                  "--constraints", str(constraints))
    assert result.returncode == 1, result.stdout
    line = _line(result.stdout, "course libraries")
    assert line.startswith("FAIL")
    assert "no-such-course-package not installed (pinned 1.0)" in line
    assert "fix: pip install -r requirements.txt -c constraints.txt" in line
    assert "pandas" not in line  # the installed, correctly pinned one is not blamed
    assert "not ready" in result.stdout.splitlines()[-1]


def test_a_pin_mismatch_names_both_versions(tmp_path):
    requirements, constraints = _pin_files(tmp_path, "pandas==0.0.1")
    checks = doctor.check_versions(requirements, constraints)
    assert checks[0].status == doctor.FAIL
    assert f"pandas {pandas.__version__} (pinned 0.0.1)" in checks[0].detail


def test_the_cuda_xgboost_of_a_conda_gpu_environment_satisfies_the_xgboost_cpu_pin(tmp_path):
    """environment.yml installs the CUDA-enabled ``xgboost`` where requirements.txt pins ``xgboost-cpu``."""
    requirements, constraints = _pin_files(tmp_path, "xgboost-cpu==3.2.0", "xgboost-cpu==3.2.0")
    conda_gpu = {"xgboost": "3.2.0"}.get
    checks = {c.name: c for c in doctor.check_versions(requirements, constraints, version_of=conda_gpu)}
    assert checks["course libraries"].status == doctor.OK, checks["course libraries"]
    assert checks["other packages"].status == doctor.OK, checks["other packages"]
    assert doctor.pinned_versions(requirements, version_of=conda_gpu) == [("xgboost-cpu", "3.2.0", "3.2.0")]
    wrong = {c.name: c for c in doctor.check_versions(requirements, constraints, version_of={"xgboost": "3.1.0"}.get)}
    assert wrong["course libraries"].status == doctor.FAIL
    assert "xgboost-cpu 3.1.0 (pinned 3.2.0)" in wrong["course libraries"].detail


def test_missing_test_tools_only_warn(tmp_path):
    numpy_version = metadata.version("numpy")
    pins = f"numpy=={numpy_version}\n# tests and notebook tooling\nno-such-tool==2.0"
    requirements, constraints = _pin_files(tmp_path, pins)
    checks = {c.name: c for c in doctor.check_versions(requirements, constraints)}
    assert checks["course libraries"].status == doctor.OK and "1 pinned" in checks["course libraries"].detail
    tools = checks["test tools"]
    assert tools.status == doctor.WARN and "no-such-tool not installed (pinned 2.0)" in tools.detail


def test_the_real_requirements_split_into_libraries_and_tools():
    course, tooling = doctor.split_requirements(REPO_ROOT / "requirements.txt")
    assert {"dask", "distributed", "pandas", "bokeh"} <= set(course) and not {"pytest", "playwright"} & set(course)
    assert {"pytest", "nbval", "playwright"} <= set(tooling)


def test_other_packages_off_their_pins_only_warn(tmp_path):
    numpy_version = metadata.version("numpy")
    requirements, constraints = _pin_files(tmp_path, f"numpy=={numpy_version}", "zict==0.0.1")
    checks = {c.name: c for c in doctor.check_versions(requirements, constraints)}
    assert checks["course libraries"].status == doctor.OK
    assert checks["other packages"].status == doctor.WARN
    assert "zict" in checks["other packages"].detail and "(pinned 0.0.1)" in checks["other packages"].detail


def test_pins_for_other_platforms_are_not_checked(tmp_path):
    requirements, _ = _pin_files(tmp_path, 'not-for-this-os==1.0 ; sys_platform == "plan9"\nplaywright==1.63.0  # note')
    assert doctor.read_pins(requirements) == {"playwright": ("playwright", "1.63.0")}


def test_the_real_pins_cover_the_course_libraries():
    names = {name for name, _, _ in doctor.pinned_versions()}
    assert {"dask", "distributed", "pandas", "bokeh"} <= names


def test_too_little_disk_fails_with_the_sizes_and_the_fix(tmp_path, monkeypatch, capsys):
    usage = collections.namedtuple("usage", "total used free")
    monkeypatch.setattr(doctor.shutil, "disk_usage", lambda path: usage(10**9, 10**9 - 10**6, 10**6))
    assert doctor.main(["--no-cluster", "--scale", "small", "--data-dir", str(tmp_path / "nowhere")]) == 1
    line = _line(capsys.readouterr().out, "disk")
    assert line.startswith("FAIL")
    assert "scale 'small' needs about" in line and "1.0 MB free" in line
    assert "choose a smaller COURSE_SCALE, or set COURSE_DATA_DIR" in line


def test_enough_disk_passes_and_an_existing_dataset_needs_none(tiny_dataset):
    assert doctor.check_disk("small", tiny_dataset.path.parent, free=10**12).status == doctor.OK
    present = doctor.check_disk("tiny", tiny_dataset.path.parent, free=0)
    assert present.status == doctor.OK and "already there" in present.detail
    assert doctor.check_dataset("tiny", tiny_dataset.path.parent).status == doctor.OK
    missing = doctor.check_dataset("binder", tiny_dataset.path.parent)
    assert missing.status == doctor.WARN and "python -m utils.datagen --scale binder" in missing.fix


def test_too_little_memory_fails():
    check = doctor.check_memory("large", available=100 * 10**6)
    assert check.status == doctor.FAIL and "100 MB available" in check.detail and "smaller COURSE_SCALE" in check.fix


def test_an_old_python_fails():
    check = doctor.check_python((3, 10, 4))
    assert check.status == doctor.FAIL and "3.10.4" in check.detail and "Python >= 3.11" in check.fix


def test_one_core_warns_and_usable_cores_are_reported_next_to_the_host():
    assert doctor.check_cpu(usable=1, host=16).status == doctor.WARN
    check = doctor.check_cpu(usable=2, host=16)
    assert check.status == doctor.OK and "2 usable cores" in check.detail and "host has 16" in check.detail


def test_gpu_backend_without_a_gpu_fails(monkeypatch):
    from utils.machine import gpu_count

    if gpu_count():
        pytest.skip("this machine has a GPU")
    monkeypatch.setenv("COURSE_BACKEND", "gpu")
    check = doctor.check_backend()
    assert check.status == doctor.FAIL and "no NVIDIA GPU is visible" in check.detail
    assert doctor.check_gpus().status == doctor.OK  # no GPU is fine: the CPU path is the course too


def test_without_a_gpu_the_gpus_line_points_to_the_hosted_gpu_page(monkeypatch):
    monkeypatch.setattr(doctor, "gpu_count", lambda: 0)
    check = doctor.check_gpus()
    assert check.status == doctor.OK and doctor.HOSTED_GPU_PAGE in check.detail
    page = REPO_ROOT / doctor.HOSTED_GPU_PAGE
    assert page.is_file() and "Not executed by the course's tests" in page.read_text()


def _gpu_machine(monkeypatch, gpus: int, missing: list[str]) -> None:
    """Play a machine with ``gpus`` NVIDIA GPUs on which the GPU packages ``missing`` cannot be imported."""
    monkeypatch.setattr(doctor, "gpu_count", lambda: gpus)
    monkeypatch.setattr(doctor, "missing_gpu_packages", lambda: list(missing))


def test_missing_gpu_libraries_on_a_gpu_machine_warn_with_the_fix(monkeypatch):
    _gpu_machine(monkeypatch, gpus=2, missing=["cudf", "dask_cudf"])
    check = doctor.check_gpu_packages()
    assert check.status == doctor.WARN and "cudf, dask_cudf not installed" in check.detail
    assert "fix: install the GPU stack" in check.line() and "requirements-gpu.txt" in check.fix


def test_missing_gpu_libraries_without_a_gpu_need_no_fix(monkeypatch):
    _gpu_machine(monkeypatch, gpus=0, missing=["cudf", "dask_cudf", "dask_cuda"])
    line = doctor.check_gpu_packages().line()
    assert line.startswith("OK    GPU libraries ") and "fix:" not in line and "WARN" not in line, line
    assert "not needed on this machine (no NVIDIA GPU); the CPU path runs every notebook" in line, line


def test_a_cluster_that_cannot_start_fails(monkeypatch):
    monkeypatch.setenv("DASK_SCHEDULER_ADDRESS", "not-a-scheduler")
    [check] = doctor.check_cluster()
    assert check.status == doctor.FAIL and "did not start" in check.detail and "not a scheduler address" in check.detail


def test_a_dashboard_that_does_not_answer_fails():
    client = start_client(n_workers=1, threads_per_worker=1, local=True, quiet=True, dashboard_address=None)
    try:
        checks = {c.name: c for c in doctor.check_cluster(client)}
    finally:
        shutdown(client)
    assert checks["cluster"].status == doctor.OK and checks["computation"].status == doctor.OK
    assert checks["dashboard"].status == doctor.FAIL and "did not answer" in checks["dashboard"].detail
    assert "404" in checks["dashboard"].detail and "bokeh" in checks["dashboard"].fix


def test_bad_arguments_exit_2_with_one_line():
    result = _run("--scale", "huge")
    assert result.returncode == 2
    assert result.stderr.strip().count("\n") == 0 and "invalid choice: 'huge'" in result.stderr
    result = _run("--no-cluster", env={"COURSE_SCALE": "huge"})
    assert result.returncode == 2 and result.stderr.startswith("error: unknown scale 'huge'")


def test_a_dashboard_that_only_says_dask_needs_bokeh_fails(monkeypatch):
    """Without bokeh the scheduler still answers /status with HTTP 200, a page saying "Dask needs
    bokeh" (distributed/http/scheduler/missing_bokeh.py): that is no dashboard."""
    import http.server
    import threading

    from distributed.versions import BOKEH_REQUIREMENT

    class MissingBokeh(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            body = f"<p>Dask needs {BOKEH_REQUIREMENT} for the dashboard.</p>".encode()
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), MissingBokeh)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        monkeypatch.setattr(doctor, "dashboard_address", lambda client: f"http://127.0.0.1:{server.server_address[1]}")
        check = doctor._dashboard(client=None)
    finally:
        server.shutdown()
    assert check.status == doctor.FAIL and "bokeh" in check.detail and "bokeh" in check.fix


def test_the_notebook_table_shows_every_fix_in_full():
    """A DataFrame's display cuts text at 50 characters with an ellipsis; the fix must be whole."""
    fix = "free some space, choose a smaller COURSE_SCALE, or set COURSE_DATA_DIR to a bigger disk"
    html = doctor.as_table([doctor.Check("disk", doctor.FAIL, "x" * 80, fix)])._repr_html_()  # what Jupyter shows
    assert fix in html and "x" * 80 in html and "..." not in html
