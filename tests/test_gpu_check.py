"""`python -m utils.gpu_check` without a GPU, and its GPU-free parts: runner, report, helpers.

The GPU path itself is in tests/test_gpu.py (skipped with a reason where no GPU is visible).
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from distributed import Client, LocalCluster

from utils import gpu_check
from utils.backend import gpu_count
from utils.gpu_check import (
    CHECKS,
    FAIL,
    NOT_RUN,
    PASS,
    SKIP,
    Check,
    CheckResult,
    Context,
    NotRun,
    Skipped,
    build_report,
    cli,
    cluster_checks,
    exit_code,
    groupby_checks,
    notebook_check,
    parse_args,
    parse_junit,
    prerequisites,
    render_markdown,
    run_check,
    run_checks,
    write_report,
)

REPO = Path(__file__).resolve().parents[1]


def _run_command(report_dir: Path, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "utils.gpu_check", "--report-dir", str(report_dir)],
        cwd=REPO,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def _assert_one_line_refusal(done: subprocess.CompletedProcess, report_dir: Path) -> str:
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2, done.stderr
    assert len(lines) == 1, f"expected exactly one stderr line, got {lines}"
    assert lines[0].startswith("error:") and "no NVIDIA GPU" in lines[0]
    assert done.stdout == ""
    assert not report_dir.exists(), "no report may be written without a GPU"
    return lines[0]


@pytest.mark.skipif(gpu_count() > 0, reason="this machine has a GPU; the refusal is tested below")
def test_command_without_gpu_fails_at_once_with_one_line(tmp_path):
    line = _assert_one_line_refusal(_run_command(tmp_path / "reports"), tmp_path / "reports")
    assert "gpu-check only runs on a machine with an NVIDIA GPU" in line


def test_empty_cuda_visible_devices_is_refused_on_any_machine(tmp_path):
    done = _run_command(tmp_path / "reports", CUDA_VISIBLE_DEVICES="")
    assert "CUDA_VISIBLE_DEVICES is set and empty" in _assert_one_line_refusal(done, tmp_path / "reports")


def test_gpu_without_dask_cuda_or_cupy_names_the_install_command(monkeypatch, capsys, tmp_path):
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    monkeypatch.setattr(prerequisites, "gpu_count", lambda: 2)
    monkeypatch.setattr(prerequisites, "importable", lambda name: name not in ("dask_cuda", "cupy"))
    assert gpu_check.main(["--report-dir", str(tmp_path / "r")]) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: dask_cuda, cupy cannot be imported")
    assert "pip install -r requirements-gpu.txt" in lines[0]
    assert not (tmp_path / "r").exists()


def test_expected_workers_follow_cuda_visible_devices(monkeypatch):
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0,2,3")
    assert gpu_check.expected_gpu_workers() == 3
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "GPU-aaaa")
    assert gpu_check.expected_gpu_workers() == 1


def test_arguments_defaults_and_validation():
    args = parse_args([])
    assert (args.scale, args.timing_scale, args.rows, args.repeats) == ("tiny", "small", 20_000_000, 3)
    assert args.report_dir == REPO / "reports" and args.partitions is None
    assert parse_args(["--rows", "1_000"]).rows == 1000
    with pytest.raises(SystemExit):
        parse_args(["--rows", "0"])
    with pytest.raises(SystemExit):
        parse_args(["--rows", "10", "--partitions", "11"])


# --- runner: failure isolation and exit codes ---------------------------------------------------


def _fake_checks(ran: list[str]) -> list[Check]:
    def boom(ctx, details):
        ran.append("boom")
        details["partial"] = 1
        raise RuntimeError("boom")

    def fine(ctx, details):
        ran.append("fine")
        details["value"] = np.int64(7)
        return "all good"

    def missing(ctx, details):
        ran.append("missing")
        raise NotRun("cudf not installed")

    def skipped(ctx, details):
        ran.append("skipped")
        raise Skipped("--skip-notebooks was given")

    def wrong(ctx, details):
        ran.append("wrong")
        assert 1 == 2, "1 | 2 differ"

    return [
        Check("1", "boom", "raises", boom),
        Check("2", "fine", "passes", fine),
        Check("3", "missing", "not run", missing),
        Check("4", "skipped", "skipped", skipped),
        Check("5", "wrong", "assertion", wrong),
    ]


def test_a_raising_check_is_recorded_as_fail_and_the_next_still_runs():
    ran: list[str] = []
    lines: list[str] = []
    results = run_checks(_fake_checks(ran), Context(parse_args([])), progress=lines.append)
    assert ran == ["boom", "fine", "missing", "skipped", "wrong"]
    assert [r.status for r in results] == [FAIL, PASS, NOT_RUN, SKIP, FAIL]
    assert results[0].reason == "RuntimeError: boom" and results[0].details == {"partial": 1}
    assert results[1].summary == "all good" and results[1].reason == ""
    assert results[2].reason == "cudf not installed"
    assert results[4].reason.startswith("AssertionError: 1 | 2 differ")
    assert all(r.seconds >= 0 for r in results)
    assert lines[0] == "[1/5] 1 raises ..." and "fail" in lines[1] and "boom" in lines[1]


def test_exit_code_is_1_only_when_a_check_failed():
    def result(status):
        return CheckResult("x", "t", status, 0.0)

    assert exit_code([result(PASS), result(PASS)]) == 0
    assert exit_code([result(PASS), result(SKIP), result(NOT_RUN)]) == 0
    assert exit_code([result(PASS), result(FAIL), result(SKIP)]) == 1


def test_checks_are_labelled_and_in_the_issue_order():
    assert [c.label for c in CHECKS] == ["1a", "1b", "2", "3", "4a", "4b"]
    assert len({c.name for c in CHECKS}) == len(CHECKS)


# --- report -------------------------------------------------------------------------------------

FAKE_ENV = {
    "date_utc": "2026-11-29T12:00:00Z",
    "hostname": "gpu-box",
    "platform": "Linux",
    "python": "3.11.9",
    "cpu_count": 16,
    "cuda_visible_devices": None,
    "gpus": {
        "count": 2,
        "devices": [
            {"index": 0, "name": "FAKE GPU MODEL", "memory_bytes": 2**34},
            {"index": 1, "name": "FAKE GPU MODEL", "memory_bytes": 2**34},
        ],
        "driver_version": "999.1",
        "cuda_driver_version": "12.9",
    },
    "cuda_runtime_version": "12.8",
    "packages": {"dask": "2026.7.1", "cudf": None},
    "options": {"rows": 10},
}


def _results() -> list[CheckResult]:
    ran: list[str] = []
    return run_checks(_fake_checks(ran), Context(parse_args([])))


def test_report_json_round_trip_and_markdown_table(tmp_path):
    report = build_report(FAKE_ENV, _results(), ["--skip-notebooks"])
    json_path, md_path = write_report(report, tmp_path / "reports")
    assert sorted(p.name for p in (tmp_path / "reports").iterdir()) == ["gpu-check.json", "gpu-check.md"]
    loaded = json.loads(json_path.read_text())
    assert loaded == json.loads(json.dumps(report, default=int))
    assert loaded["outcome"] == FAIL and loaded["exit_code"] == 1
    assert loaded["counts"] == {PASS: 1, FAIL: 2, SKIP: 1, NOT_RUN: 1}
    assert loaded["checks"][1]["details"] == {"value": 7}
    assert loaded["command"] == "python -m utils.gpu_check --skip-notebooks"

    md = md_path.read_text()
    assert md == render_markdown(report) + "\n"
    assert "Outcome: **FAIL** (1 pass, 2 fail, 1 skip, 1 not run)" in md
    assert "- Date (UTC): 2026-11-29T12:00:00Z" in md and "- Host: gpu-box" in md
    assert "- GPUs: 2" in md and "GPU 1: FAKE GPU MODEL, 16.0 GiB" in md
    assert "NVIDIA driver: 999.1; CUDA (driver): 12.9; CUDA runtime (CuPy): 12.8" in md
    assert "| cudf | not installed |" in md
    assert "| Check | What | Status | Seconds | Result |" in md
    table = [line for line in md.splitlines() if line.startswith("| ") and "**" in line]
    assert [row.split("|")[1].strip() for row in table] == ["1 boom", "2 fine", "3 missing", "4 skipped", "5 wrong"]
    assert "| **fail** |" in table[0] and "RuntimeError: boom" in table[0]
    assert "| **pass** |" in table[1] and "all good" in table[1]
    assert "| **not run** |" in table[2] and "cudf not installed" in table[2]
    assert "1 \\| 2 differ" in table[4], "pipes inside cells must be escaped"


def test_report_files_are_replaced_whole(tmp_path):
    first = build_report(FAKE_ENV, _results(), [])
    write_report(first, tmp_path)
    second = build_report({**FAKE_ENV, "hostname": "other"}, [], [])
    json_path, _ = write_report(second, tmp_path)
    assert json.loads(json_path.read_text())["environment"]["hostname"] == "other"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["gpu-check.json", "gpu-check.md"]


def test_main_wires_checks_report_and_exit_code(monkeypatch, tmp_path, capsys):
    ran: list[str] = []
    monkeypatch.setattr(cli, "preflight", lambda args: None)
    monkeypatch.setattr(cli, "collect_environment", lambda args: FAKE_ENV)
    monkeypatch.setattr(cli, "CHECKS", tuple(_fake_checks(ran)))
    assert gpu_check.main(["--report-dir", str(tmp_path)]) == 1
    assert len(ran) == 5
    assert json.loads((tmp_path / "gpu-check.json").read_text())["exit_code"] == 1
    monkeypatch.setattr(cli, "CHECKS", tuple(_fake_checks(ran)[1:4]))
    assert gpu_check.main(["--report-dir", str(tmp_path)]) == 0
    assert "report:" in capsys.readouterr().out


# --- junit parsing (the notebooks check) ----------------------------------------------------------

# The shape pytest --junitxml writes for nbval items (captured from a real run, trimmed).
JUNIT = """<?xml version="1.0" encoding="utf-8"?><testsuites name="pytest tests"><testsuite
name="pytest" errors="0" failures="1" skipped="1" tests="5" time="1.154">
<testcase classname="notebooks.01_a.ipynb" name="Cell 0" time="0.414" />
<testcase classname="notebooks.01_a.ipynb" name="Cell 1" time="0.032"><failure
message="#x1B[91mNotebook cell execution failed#x1B[0m&#10;ValueError: boom">tb</failure></testcase>
<testcase classname="notebooks.01_a.ipynb" name="Cell 2" time="0.119" />
<testcase classname="notebooks.02_b.ipynb" name="Cell 0" time="0.550" />
<testcase classname="notebooks.03_c.ipynb" name="Cell 0" time="0.0"><skipped message="x"/></testcase>
</testsuite></testsuites>"""


def test_parse_junit_gives_each_notebook_a_status():
    notebooks = [REPO / "notebooks" / f"{n}.ipynb" for n in ("01_a", "02_b", "03_c")]
    parsed = parse_junit(JUNIT, notebooks)
    assert list(parsed) == ["01_a.ipynb", "02_b.ipynb", "03_c.ipynb"]
    assert parsed["01_a.ipynb"]["status"] == FAIL and parsed["01_a.ipynb"]["failed_cells"] == ["Cell 1"]
    assert parsed["01_a.ipynb"]["cells"] == 3 and parsed["01_a.ipynb"]["seconds"] == pytest.approx(0.565)
    assert parsed["01_a.ipynb"]["first_failure"].startswith("Notebook cell execution failed")
    assert "#x1B" not in parsed["01_a.ipynb"]["first_failure"]
    assert parsed["02_b.ipynb"]["status"] == PASS
    assert parsed["03_c.ipynb"]["status"] == SKIP
    assert set(parse_junit(JUNIT)) == set(parsed), "names also come out without the file list"


# --- the checks against a CPU-only cluster: never a pass ------------------------------------------


@pytest.fixture(scope="module")
def cpu_cluster():
    with LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0",
        silence_logs=logging.ERROR,
    ) as cluster:
        yield cluster


def test_every_check_refuses_a_cpu_cluster(cpu_cluster, monkeypatch):
    """Pointed at CPU-only workers, no check passes: a CPU run is never reported as a GPU run."""
    monkeypatch.delenv("COURSE_BACKEND", raising=False)
    ctx = Context(parse_args(["--scheduler-address", cpu_cluster.scheduler_address, "--rows", "1000"]))
    ctx.metrics_wait_s = 1.0
    try:
        results = {r.name.split()[1]: r for r in run_checks(CHECKS, ctx)}
    finally:
        ctx.release_cluster()
    assert all(r.status != PASS for r in results.values()), {n: r.status for n, r in results.items()}
    assert results["cluster"].status == FAIL
    assert "2 of 2 workers cannot use a GPU" in results["cluster"].reason
    # The GPU pages answer even here, with blank plots: the metrics are what the check requires.
    dashboard = results["dashboard"]
    assert dashboard.status == FAIL and "send no GPU metrics" in dashboard.reason
    assert all(p == {"http_status": 200, "bokeh_document": True} for p in dashboard.details["pages"].values())
    assert results["cupy-groupby"].status == FAIL
    if gpu_check.cudf_missing():
        assert results["backend-choice"].status == NOT_RUN
        assert results["backend-choice"].reason.startswith("cudf not installed")
        assert results["cudf-groupby"].status == NOT_RUN
        assert results["cudf-groupby"].reason.startswith("cudf not installed")
        assert results["notebooks"].status == NOT_RUN
    assert exit_code(list(results.values())) == 1


def test_checks_needing_the_cluster_say_not_run_when_it_never_started():
    ctx = Context(parse_args(["--skip-notebooks"]), cluster_error="the cluster did not start (X)")
    dashboard = run_check(CHECKS[2], ctx)
    assert dashboard.status == NOT_RUN and dashboard.reason == "no cluster: the cluster did not start (X)"
    assert run_check(CHECKS[5], ctx).status == SKIP


def test_bincount_groupby_numpy_twin_equals_ground_truth(cpu_cluster):
    """The graph check 3 runs on CuPy chunks, run here on NumPy chunks: same code, same answer."""
    rows, partitions, customers, seed = 30_001, 3, 500, 7
    expected, truth_rows = gpu_check.ground_truth_cents(rows, partitions, customers, seed)
    assert truth_rows == rows and expected.sum() > 0
    with Client(cpu_cluster) as client:
        ids, amounts = client.persist(list(gpu_check.host_arrays(rows, partitions, customers, seed)))
        assert ids.numblocks == (partitions,)
        placed = gpu_check.partitions_per_worker(client, ids)
        assert sum(placed.values()) == partitions
        result = client.compute(gpu_check.bincount_groupby(ids, amounts, customers, split_every=2), sync=True)
    assert isinstance(result, np.ndarray) and result.shape == (customers,)
    comparison = gpu_check.compare_cents(result, expected)
    assert comparison["matches"] and comparison["mismatched_customers"] == 0

    corrupted = result.copy()
    corrupted[10] += 1  # one cent off for one customer
    bad = gpu_check.compare_cents(corrupted, expected)
    assert not bad["matches"] and bad["mismatched_customers"] == 1
    assert bad["example"]["customer_id"] == 100_010


def test_groupby_sum_timing_helper_on_pandas(cpu_cluster, tiny_dataset):
    from utils.checks import check_customer_totals

    with Client(cpu_cluster) as client:
        result, times, kind = gpu_check.time_groupby(client, tiny_dataset, "pandas", repeats=2)
    assert len(times) == 2 and kind.startswith("pandas")
    check_customer_totals(result, tiny_dataset)


def test_is_bokeh_page():
    assert gpu_check.is_bokeh_page('<script>Bokeh.embed; "root_ids":["p1013"]</script>')
    assert not gpu_check.is_bokeh_page('<script>Bokeh "root_ids":[]</script>')
    assert not gpu_check.is_bokeh_page("<html>404</html>")


def test_notebooks_check_runs_nbval_with_the_gpu_backend_and_reads_junit(monkeypatch, tmp_path):
    """Check 4b end to end on two stand-in notebooks (cudf's presence faked): the subprocess
    gets COURSE_BACKEND=gpu and the scale, and each notebook's outcome comes from the junit XML."""
    import nbformat

    (tmp_path / "pytest.ini").write_text(
        "[pytest]\naddopts = --nbval-lax --nbval-current-env -p no:cacheprovider\n"
    )
    (tmp_path / "notebooks").mkdir()
    cells = {
        "01_env": ["import os", "assert os.environ['COURSE_BACKEND'] == 'gpu'",
                   "assert os.environ['COURSE_SCALE'] == 'tiny'"],
        "02_broken": ["x = 1", "raise ValueError('broken on purpose')"],
    }
    for name, sources in cells.items():
        notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(s) for s in sources])
        nbformat.write(notebook, tmp_path / "notebooks" / f"{name}.ipynb")
    monkeypatch.setattr(notebook_check, "REPO_ROOT", tmp_path)
    monkeypatch.setattr(notebook_check, "cudf_missing", lambda: [])
    monkeypatch.setenv("COURSE_SCALE", "small")  # what `make gpu-check` exports; --scale wins

    result = run_check(CHECKS[5], Context(parse_args([])))
    assert result.status == FAIL and "1 of 2 notebooks failed (02_broken.ipynb)" in result.reason
    per_notebook = result.details["notebooks"]
    assert per_notebook["01_env.ipynb"]["status"] == PASS and per_notebook["01_env.ipynb"]["cells"] == 3
    assert per_notebook["02_broken.ipynb"]["failed_cells"] == ["Cell 1"]
    assert "broken on purpose" in per_notebook["02_broken.ipynb"]["first_failure"]
    assert result.details["command"].startswith("COURSE_BACKEND=gpu COURSE_SCALE=tiny")


def test_gpu_metrics_must_all_be_sent_and_utilization_may_be_none():
    full = {"gpu_utilization": 3, "gpu_memory_used": 10, "gpu-memory-total": 100}
    assert cluster_checks._has_gpu_metrics(full)
    assert cluster_checks._has_gpu_metrics({**full, "gpu_utilization": None}), "MIG slices report None"
    assert not cluster_checks._has_gpu_metrics({"gpu_memory_used": 10, "gpu-memory-total": 100})
    assert not cluster_checks._has_gpu_metrics({})


def test_dashboard_check_passes_when_every_worker_sends_gpu_metrics(cpu_cluster, monkeypatch):
    """The pass branch of check 2, with the GPU metrics faked (a CPU worker sends none)."""
    full = {"gpu_utilization": None, "gpu_memory_used": 1, "gpu-memory-total": 2}
    monkeypatch.setattr(cluster_checks, "gpu_metrics", lambda client, wait_s: {"w1": full, "w2": full})
    ctx = Context(parse_args(["--scheduler-address", cpu_cluster.scheduler_address]))
    ctx.client = Client(cpu_cluster.scheduler_address)
    try:
        result = run_check(CHECKS[2], ctx)
    finally:
        ctx.release_cluster()
    assert result.status == PASS, result.reason
    assert result.summary.endswith("2 worker(s) send GPU metrics")


def test_cudf_groupby_check_logic_with_pandas_standing_in(cpu_cluster, monkeypatch, tiny_dataset):
    """Check 4a's flow (dataset, both backends, ground truth, ratio) with pandas standing in for
    cudf; without the stand-in the cudf run fails here, it never falls back to pandas."""
    real = gpu_check.time_groupby

    def stand_in(client, dataset, backend, repeats):
        result, times, kind = real(client, dataset, "pandas", repeats)
        return result, times, "cudf.core.series.Series" if backend == "cudf" else kind

    monkeypatch.setattr(groupby_checks, "cudf_missing", lambda: [])
    monkeypatch.setattr("utils.datagen.ensure_dataset", lambda scale: tiny_dataset)
    ctx = Context(parse_args(["--scheduler-address", cpu_cluster.scheduler_address, "--repeats", "1"]))
    ctx.client = Client(cpu_cluster.scheduler_address)
    try:
        monkeypatch.setattr(groupby_checks, "time_groupby", stand_in)
        result = run_check(CHECKS[4], ctx)
        assert result.status == PASS, result.reason
        assert result.details["dataset"]["rows"] == tiny_dataset.rows
        assert result.details["pandas"]["ground_truth"].startswith("✓")
        assert result.details["cudf_speedup"] > 0
        monkeypatch.setattr(groupby_checks, "time_groupby", real)
        refused = run_check(CHECKS[4], ctx)
    finally:
        ctx.release_cluster()
    assert refused.status == FAIL and "cudf" in refused.reason, refused.reason
