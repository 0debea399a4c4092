"""The benchmark harness measures each engine in a fresh process that checks its own answers, and
never launches one while anything of an earlier measurement is alive. No timing is asserted."""

from __future__ import annotations

import ast
import json
import os
import shutil
import subprocess
import sys
import textwrap

import pandas as pd
import pytest

from benchmarks import run
from benchmarks import standalone as plain
from benchmarks.engines import ENGINES
from benchmarks.one_engine import WRONG_ANSWER
from utils.base.paths import REPO_ROOT
from utils.datagen.manifest import MANIFEST_NAME, sha256_file


@pytest.fixture
def dataset_copy(tiny_dataset, tmp_path):
    """A private copy of the tiny dataset whose ground truth a test may change."""
    return shutil.copytree(tiny_dataset.path, tmp_path / tiny_dataset.path.name)


def one_engine(engine: str, fmt: str, folder) -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", "benchmarks.one_engine", "--engine", engine, "--format", fmt,
               "--dataset", str(folder), "--runs", "2"]
    return subprocess.run(command, cwd=REPO_ROOT, capture_output=True, text=True, timeout=300)


def off_by_one_cent(folder) -> None:
    """One customer's expected total one cent higher, recorded in the manifest as the generator
    would (so the check blames the answer, not edited files): every engine is now one cent off."""
    name = "ground_truth/customers.parquet"
    truth = pd.read_parquet(folder / name)
    truth.loc[0, "total_cents"] += 1
    truth.to_parquet(folder / name, index=False)
    manifest = json.loads((folder / MANIFEST_NAME).read_text())
    manifest["files"][name] = {"bytes": (folder / name).stat().st_size, "sha256": sha256_file(folder / name)}
    (folder / MANIFEST_NAME).write_text(json.dumps(manifest))


SET_BY_CLUSTERS = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MALLOC_TRIM_THRESHOLD_")


def in_fresh_process(code: str, folder) -> None:
    """Run ``code`` as the driver would run, in a Python process of its own: the driver refuses to
    measure while anything else lives under its process (another test's cluster, a resource tracker),
    so it is never tried inside the test session's process."""
    prelude = ("import subprocess, sys, pytest\nfrom pathlib import Path\nfrom benchmarks import run\n"
               f"folder = Path({str(folder)!r})\n")
    # As from a fresh shell: without what an earlier test's cluster set in this process's environment
    # (distributed's pre-spawn variables, distributed/distributed.yaml "pre-spawn-environ").
    env = {name: value for name, value in os.environ.items() if name not in SET_BY_CLUSTERS}
    done = subprocess.run([sys.executable, "-c", prelude + textwrap.dedent(code)], cwd=REPO_ROOT,
                          capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_child_checks_every_answer_and_fails_on_a_wrong_one(dataset_copy):
    right = one_engine("pandas", "csv", dataset_copy)
    assert right.returncode == 0, right.stderr
    record = json.loads(right.stdout.splitlines()[-1])
    assert record["checked"] is True and len(record["seconds"]) == 2 and record["rows"] == 20_000
    assert record["first_seconds"] == record["seconds"][0] and record["warm_seconds"] == record["seconds"][1]

    off_by_one_cent(dataset_copy)
    wrong = one_engine("pandas", "csv", dataset_copy)
    assert wrong.returncode == WRONG_ANSWER
    record = json.loads(wrong.stdout.splitlines()[-1])
    assert record["checked"] is False and "values off for 1 of" in record["error"]
    in_fresh_process("""
        with pytest.raises(run.WrongAnswer, match="values off"):
            run.launch("pandas", "parquet", folder, 2)
    """, dataset_copy)


def test_a_cluster_runs_in_the_child_and_nothing_outlives_it(dataset_copy):
    in_fresh_process("""
        record = run.launch("cluster", "parquet", folder, 2)
        assert record["checked"] is True and record["workers_restarted"] == 0, record
        assert record["startup_seconds"] > 0 and record["shape"].endswith("thread(s)"), record
        assert record["omp_num_threads"] is None, record  # no cluster settings leaked in from the driver
        assert run.settle() == []  # no worker, nanny or child left behind
    """, dataset_copy)


def test_the_driver_refuses_to_measure_while_a_cluster_is_alive(dataset_copy):
    in_fresh_process("""
        from distributed import Client, LocalCluster
        with LocalCluster(n_workers=1, processes=False, dashboard_address="127.0.0.1:0") as cluster, \\
                Client(cluster):
            assert any("Dask client" in what for what in run.nothing_alive())
            with pytest.raises(RuntimeError, match="refusing to measure"):
                run.launch("pandas", "parquet", folder, 2, settle_timeout=0.5)
        assert run.nothing_alive() == []
    """, dataset_copy)


def test_the_driver_refuses_to_measure_while_a_child_process_is_alive(dataset_copy):
    in_fresh_process("""
        sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
        try:
            assert any(str(sleeper.pid) in what for what in run.nothing_alive())
            with pytest.raises(RuntimeError, match="refusing to measure"):
                run.launch("pandas", "parquet", folder, 2, timeout=60, settle_timeout=0.5)
        finally:
            sleeper.kill()
            sleeper.wait()
        assert run.nothing_alive() == []
    """, dataset_copy)


def test_engines_are_interleaved_and_rotated():
    keys = ["a", "b", "c"]
    assert [run.rotated(keys, i) for i in range(4)] == [["a", "b", "c"], ["b", "c", "a"], ["c", "a", "b"],
                                                        ["a", "b", "c"]]


def test_every_engine_the_driver_names_exists():
    assert set(run.ENGINE_ORDER) == set(ENGINES)
    assert {ENGINES[key].label for key in ("polars", "duckdb")} == set(run.report.REFERENCES)
    assert ENGINES["threaded"].label == run.report.RECOMMENDED
    assert ENGINES["cluster"].label == run.report.ON_CLUSTER
    assert set(plain.ENGINES) == set(run.report.STANDALONE_NAMES)
    assert ENGINES["worked-example"].label == run.report.WORKED_EXAMPLE


def test_the_standalone_script_uses_no_course_code():
    tree = ast.parse((REPO_ROOT / "benchmarks" / "standalone.py").read_text())
    imported = {alias.name.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.Import)
                for alias in node.names}
    imported |= {node.module.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    assert imported <= {"argparse", "json", "os", "subprocess", "sys", "time", "polars", "duckdb", "dask",
                        "distributed", "pyarrow"}


def test_the_standalone_summary_takes_each_engines_fastest_run_and_refuses_disagreeing_answers():
    def runs(engine: str, fmt: str, times: list[float], cents: int = 100) -> dict:
        return {"engine": engine, "format": fmt, "times": times, "customers": 3, "total_cents": cents}

    rounds = [runs(e, f, [t, t / 2]) for e, t in zip(plain.ENGINES, (1.0, 2.0, 3.0, 8.0), strict=True)
              for f in ("parquet", "csv")]
    rounds += [runs("dask-threads", "csv", [0.6])]  # a second round, faster
    summary = {(r["engine"], r["format"]): r for r in plain.summarize(rounds)}
    assert summary[("dask-threads", "csv")]["min_s"] == 0.6
    assert summary[("dask-threads", "csv")]["x_faster_reference"] == 0.6 / 0.5  # polars' 0.5 s
    assert summary[("dask-cluster", "parquet")]["x_faster_reference"] == 4.0 / 0.5
    with pytest.raises(AssertionError, match="the engines disagree"):
        plain.summarize(rounds + [runs("duckdb", "csv", [1.0], cents=101)])
