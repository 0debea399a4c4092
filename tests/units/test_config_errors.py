"""Settings a learner gets wrong end in one line that says what is wrong and how to fix it: a
dashboard address Dask cannot bind, a worker memory limit that is no size, a data or scratch folder
whose ``~user`` is unknown; and the doctor fails a data or scratch folder that cannot be written."""

from __future__ import annotations

import math
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from utils import doctor
from utils.base.paths import (
    DATA_DIR_ENV_VAR,
    REPO_ROOT,
    SCRATCH_ENV_VAR,
    CoursePathError,
    default_data_dir,
    scratch_root,
)
from utils.cluster import DashboardAddressError, dashboard_bind_address, start_client

UNKNOWN_HOME = "~nosuchuser/x"  # no such user: pathlib cannot expand it ("Could not determine home directory.")


def _one_line(text: str) -> str:
    lines = text.strip().splitlines()
    assert len(lines) == 1, f"expected one line, got:\n{text}"
    return lines[0]


def _python_m(module: str, *args: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", module, *args], capture_output=True, text=True, cwd=REPO_ROOT,
                          env={**os.environ, **env}, timeout=120)


# --- $COURSE_DASHBOARD_ADDRESS: only what Dask's dashboard can bind -------------------------------

@pytest.mark.parametrize(
    ("value", "problem"),
    [  # distributed's clean_dashboard_address splits a string on ':', so no IPv6 address gets through
        ("[::1]:0", "IPv6"), ("[::1]:8787", "IPv6"), ("::1:0", "IPv6"), ("[::]:8787", "IPv6"),
        # str.isdigit() is True for superscripts, which int() refuses
        ("127.0.0.1:²", "expected PORT or HOST:PORT"), ("²", "expected PORT or HOST:PORT"),
        (":¹²", "expected PORT or HOST:PORT"),
    ],
)
def test_a_dashboard_address_dask_cannot_bind_is_one_line_with_the_accepted_forms(monkeypatch, value, problem):
    monkeypatch.setenv("COURSE_DASHBOARD_ADDRESS", value)
    with pytest.raises(DashboardAddressError) as error:
        dashboard_bind_address()
    message = _one_line(str(error.value))
    assert message.startswith(f"COURSE_DASHBOARD_ADDRESS={value!r} is not a dashboard address") and problem in message
    assert "127.0.0.1:8787" in message and "unset COURSE_DASHBOARD_ADDRESS" in message
    started = time.monotonic()
    with pytest.raises(DashboardAddressError):
        start_client(quiet=True, local=True, backend="cpu")
    assert time.monotonic() - started < 2  # refused before any cluster starts


# --- memory_limit: a size, a fraction, 'auto', or 0/None for no limit -------------------------------

@pytest.mark.parametrize("limit", [-1, -0.5, "-1", "-1GiB", "-2 GB", "lots", math.nan, math.inf, "nan"])
def test_a_memory_limit_that_is_no_size_is_one_line_without_negative_bytes(limit):
    started = time.monotonic()
    with pytest.raises(ValueError) as error:
        start_client(n_workers=1, memory_limit=limit, local=True, backend="cpu", quiet=True)
    message = _one_line(str(error.value))
    assert message.startswith(f"memory_limit={limit!r} is not a size") and "'2GiB'" in message and "'auto'" in message
    computed = message.replace(repr(limit), "")  # what the course adds to the value it was given
    assert not re.search(r"-\d+(\.\d+)? ?[KMGT]?i?B\b", computed), message  # no negative byte counts
    assert time.monotonic() - started < 2  # refused before any process starts


@pytest.mark.parametrize("limit", [0, "0", 0.0, None, "auto", "2GiB", 0.5])
def test_what_distributed_takes_as_a_limit_or_no_limit_is_accepted(limit):
    """distributed's LocalCluster: None or 0 is no limit, a float a fraction of the machine's memory."""
    from utils.cluster import check_worker_memory

    assert check_worker_memory(limit, 1) is None


# --- $COURSE_DATA_DIR / $COURSE_SCRATCH_DIR with a ~user this machine does not know --------------

@pytest.mark.parametrize(("variable", "resolve"), [(DATA_DIR_ENV_VAR, default_data_dir),
                                                     (SCRATCH_ENV_VAR, scratch_root)])
def test_an_unknown_home_folder_is_one_line_naming_the_variable(monkeypatch, variable, resolve):
    monkeypatch.setenv(variable, UNKNOWN_HOME)
    with pytest.raises(CoursePathError) as error:
        resolve()
    assert isinstance(error.value, ValueError)
    message = _one_line(str(error.value))
    assert message.startswith(f"{variable}={UNKNOWN_HOME!r} ") and "'~nosuchuser'" in message
    assert "write the folder out in full" in message and f"unset {variable}" in message


def test_datagen_with_an_unknown_home_in_the_data_dir_is_one_error_line_and_exit_2():
    result = _python_m("utils.datagen", "--scale", "tiny", env={DATA_DIR_ENV_VAR: UNKNOWN_HOME})
    assert result.returncode == 2, result.stderr
    assert _one_line(result.stderr).startswith(f"error: {DATA_DIR_ENV_VAR}={UNKNOWN_HOME!r} ")


def test_datagen_verify_blames_the_variable_not_the_dataset(tiny_dataset):
    """--verify of a complete dataset compares its folder with $COURSE_DATA_DIR's (the rebuild
    command): the variable's error must not read as "no complete dataset"."""
    result = _python_m("utils.datagen", "--verify", "--scale", "tiny", "--data-dir", str(tiny_dataset.path.parent),
                       env={DATA_DIR_ENV_VAR: UNKNOWN_HOME})
    assert result.returncode == 2, result.stderr
    assert _one_line(result.stderr).startswith(f"error: {DATA_DIR_ENV_VAR}={UNKNOWN_HOME!r} ")


@pytest.mark.parametrize("variable", [DATA_DIR_ENV_VAR, SCRATCH_ENV_VAR])
def test_the_doctor_with_an_unknown_home_is_one_error_line_and_exit_2(variable):
    result = _python_m("utils.doctor", "--no-cluster", "--scale", "tiny", env={variable: UNKNOWN_HOME})
    assert result.returncode == 2, result.stdout + result.stderr
    assert _one_line(result.stderr).startswith(f"error: {variable}={UNKNOWN_HOME!r} ")


# --- the doctor: a data or scratch folder that is a file, or cannot be written -----------------------

def _line(output: str, name: str) -> str:
    lines = [line for line in output.splitlines() if line[6:].startswith(name)]
    assert len(lines) == 1, f"no single {name!r} line in:\n{output}"
    return lines[0]


def _no_writes_under(monkeypatch: pytest.MonkeyPatch, root: Path) -> None:
    """Make ``root`` and everything below it read-only in the eyes of ``os.access``. The tests run as
    root, for whom ``os.access`` says writable whatever the mode bits (chmod would prove nothing)."""
    real_access = os.access

    def access(path, mode, *args, **kwargs):
        if mode & os.W_OK and Path(os.path.abspath(path)).is_relative_to(root):
            return False
        return real_access(path, mode, *args, **kwargs)

    monkeypatch.setattr(os, "access", access)


@pytest.mark.parametrize(("variable", "name"), [(DATA_DIR_ENV_VAR, "data folder"), (SCRATCH_ENV_VAR, "scratch folder")])
@pytest.mark.parametrize("below", [False, True])
def test_the_doctor_fails_a_folder_that_is_a_file(tmp_path, monkeypatch, capsys, variable, name, below):
    a_file = tmp_path / "a-file"
    a_file.write_text("not a folder")
    monkeypatch.setenv(variable, str(a_file / "course" if below else a_file))
    assert doctor.main(["--no-cluster", "--scale", "tiny"]) == 1
    out = capsys.readouterr().out
    line = _line(out, name)
    assert line.startswith("FAIL") and f"{a_file} is a file" in line and f"fix: point {variable}" in line
    assert out.splitlines()[-1].endswith("not ready: fix the FAIL lines")


def test_the_doctor_fails_a_read_only_course_folder(monkeypatch, capsys):
    """The default: data/ (and its scratch/) in the course folder, which cannot be written here."""
    monkeypatch.delenv(DATA_DIR_ENV_VAR, raising=False)
    monkeypatch.delenv(SCRATCH_ENV_VAR, raising=False)
    _no_writes_under(monkeypatch, REPO_ROOT)
    assert doctor.main(["--no-cluster", "--scale", "small"]) == 1
    out = capsys.readouterr().out
    scratch = _line(out, "scratch folder")
    assert scratch.startswith("FAIL") and "read-only" in scratch and f"fix: set {SCRATCH_ENV_VAR}" in scratch
    data = _line(out, "data folder")
    if doctor._dataset_present("small", REPO_ROOT / "data"):  # reading a dataset that is there needs no writes
        assert data.startswith("OK") and "read-only" in data
    else:
        assert data.startswith("FAIL") and "read-only" in data and f"fix: set {DATA_DIR_ENV_VAR}" in data


def test_a_read_only_data_folder_fails_only_where_the_data_must_still_be_generated(tmp_path, monkeypatch):
    course = tmp_path / "course"
    course.mkdir()
    _no_writes_under(monkeypatch, course)
    checks = {c.name: c for c in doctor.check_folders("tiny", course / "data", course / "data" / "scratch")}
    assert checks["data folder"].status == doctor.FAIL and str(course) in checks["data folder"].detail
    assert checks["scratch folder"].status == doctor.FAIL


def test_a_shared_read_only_dataset_with_a_scratch_of_ones_own_is_ready(tiny_dataset, tmp_path, monkeypatch):
    """A room shares one pre-generated, read-only data folder; each learner sets COURSE_SCRATCH_DIR."""
    data_dir = tiny_dataset.path.parent
    _no_writes_under(monkeypatch, data_dir)
    checks = doctor.check_folders("tiny", data_dir, tmp_path / "ada" / "scratch")
    assert [c.status for c in checks] == [doctor.OK, doctor.OK], [c.line() for c in checks]
    assert "read-only" in checks[0].detail


@pytest.mark.parametrize(
    ("module", "args", "variable"),
    [("utils.datagen.clean", ("--dry-run",), DATA_DIR_ENV_VAR),
     ("utils.datagen.clean", ("--dry-run",), SCRATCH_ENV_VAR),
     ("utils.progress", ("show",), "COURSE_PROGRESS_FILE"),
     ("utils.progress", ("collect", "~nosuchuser/room"), None)],
    ids=["clean-data-dir", "clean-scratch", "progress-file", "collect-folder"],
)
def test_other_commands_with_an_unknown_home_are_one_error_line(tmp_path, module, args, variable):
    """`make clean-data` and `python -m utils.progress` (before: pathlib's bare RuntimeError traceback)."""
    env = {**os.environ, "COURSE_SCRATCH_DIR": str(tmp_path)}
    env.pop(DATA_DIR_ENV_VAR, None)
    if variable:
        env[variable] = "~nosuchuser/x"
    done = _python_m(module, *args, env=env)
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr and done.stderr.startswith("error: "), done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and "~nosuchuser" in done.stderr, done.stderr
