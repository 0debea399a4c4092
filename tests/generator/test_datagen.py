"""The generator: determinism, schema, exact ground truth, idempotence, atomic publish, bad input."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from utils.datagen import build, writers
from utils.datagen.params import make_params
from utils.datagen.transactions import CATEGORIES, N_STORES, generate_partition
from utils.dataset import Dataset, ensure_dataset


def _files(ds: Dataset) -> dict[str, bytes]:
    return {
        str(p.relative_to(ds.path)): p.read_bytes()
        for p in sorted(ds.path.rglob("*"))
        if p.is_file() and p.name != "manifest.json"
    }


def test_partition_is_a_pure_function_of_seed_and_index():
    a = generate_partition(7, 2, 10_000, 4, 300)
    b = generate_partition(7, 2, 10_000, 4, 300)
    c = generate_partition(7, 3, 10_000, 4, 300)
    d = generate_partition(8, 2, 10_000, 4, 300)
    assert a.table.equals(b.table)
    assert not a.table.equals(c.table)
    assert not a.table["customer_id"].equals(d.table["customer_id"])


def test_parallel_and_serial_generation_write_identical_files(tmp_path):
    serial = ensure_dataset("tiny", tmp_path / "serial", workers=1)
    parallel = ensure_dataset("tiny", tmp_path / "parallel", workers=2)
    assert _files(serial) == _files(parallel)
    assert serial.answers() == parallel.answers()


def test_one_partition_generated_alone_matches_the_full_dataset(tiny_dataset):
    params = tiny_dataset.manifest["params"]
    alone = generate_partition(params["seed"], 2, params["rows"], params["partitions"], params["customers"])
    written = pd.read_parquet(tiny_dataset.path / "parquet" / "part-00002.parquet")
    assert written["transaction_id"].tolist() == alone.table["transaction_id"].to_pylist()
    assert written["customer_id"].tolist() == alone.table["customer_id"].to_pylist()
    np.testing.assert_array_equal(written["sales_amount"].to_numpy(), alone.table["sales_amount"].to_numpy())


def test_schema_and_value_ranges(tiny_dataset):
    df = pd.read_parquet(tiny_dataset.parquet_dir)
    assert list(df.columns) == [
        "transaction_id", "customer_id", "timestamp", "store_id", "product_category", "sales_amount",
    ]
    assert str(df["transaction_id"].dtype) == "int64" and str(df["customer_id"].dtype) == "int64"
    assert str(df["store_id"].dtype) == "int64" and str(df["sales_amount"].dtype) == "float64"
    assert str(df["timestamp"].dtype) == "datetime64[ns]"
    assert pd.api.types.is_string_dtype(df["product_category"])
    assert len(df) == tiny_dataset.rows == 20_000
    assert df["transaction_id"].is_unique
    assert sorted(df["transaction_id"]) == list(range(20_000))
    assert (df["sales_amount"] > 0).all()
    cents = df["sales_amount"] * 100
    assert np.allclose(cents, np.round(cents), atol=1e-6), "amounts must have 2 decimals"
    assert df["store_id"].between(1, N_STORES).all()
    assert set(df["product_category"]) == set(CATEGORIES)
    assert df["timestamp"].dt.year.isin([2024, 2025]).all()


def test_customers_are_zipf_skewed(tiny_dataset):
    counts = tiny_dataset.customer_totals_cents()["transactions"].sort_values(ascending=False)
    top_share = counts.iloc[: max(1, len(counts) // 100)].sum() / counts.sum()
    assert top_share > 0.2, f"top 1% of customers make only {top_share:.0%} of transactions"
    assert counts.iloc[0] > 20 * counts.median()


def test_ground_truth_equals_an_independent_pandas_groupby_of_the_csv(tiny_dataset):
    frames = [pd.read_csv(p) for p in tiny_dataset.csv_files]
    df = pd.concat(frames, ignore_index=True)
    df["cents"] = (df["sales_amount"] * 100).round().astype("int64")
    by_customer = df.groupby("customer_id")["cents"].agg(["sum", "size"])
    truth = tiny_dataset.customer_totals_cents().set_index("customer_id")
    assert by_customer.index.equals(truth.index)
    assert (by_customer["sum"] == truth["total_cents"]).all()
    assert (by_customer["size"] == truth["transactions"]).all()
    cells = df.groupby(["store_id", "product_category"])["cents"].agg(["sum", "size"])
    cell_truth = tiny_dataset.totals_by("store_id", "product_category")
    assert (cells["sum"].to_numpy() == cell_truth["total_cents"].to_numpy()).all()
    assert (cells["size"].to_numpy() == cell_truth["transactions"].to_numpy()).all()
    over = df[df["sales_amount"] > 100]
    answers = tiny_dataset.answers()
    assert answers["over_100_count"] == len(over)
    assert answers["over_100_cents"] == over["cents"].sum()
    assert answers["total_cents"] == df["cents"].sum()
    assert answers["rows"] == len(df)


def test_manifest_lists_every_file_and_the_schema(tiny_dataset):
    manifest = tiny_dataset.manifest
    assert manifest["rows"] == sum(p["rows"] for p in manifest["partitions"])
    assert set(manifest["schema"]) >= {"customer_id", "sales_amount", "product_category"}
    for part in manifest["partitions"]:
        for fmt, rel in part["files"].items():
            assert (tiny_dataset.path / rel).stat().st_size == part["bytes"][fmt]


def test_existing_complete_dataset_is_reused(tmp_path):
    first = ensure_dataset("tiny", tmp_path)
    stamp = (first.path / "manifest.json").stat().st_mtime_ns
    again = ensure_dataset("tiny", tmp_path)
    assert (again.path / "manifest.json").stat().st_mtime_ns == stamp
    subset = ensure_dataset("tiny", tmp_path, formats=["parquet"])
    assert (subset.path / "manifest.json").stat().st_mtime_ns == stamp


def test_different_parameters_regenerate(tmp_path):
    first = ensure_dataset("tiny", tmp_path)
    before = first.answers()
    second = ensure_dataset("tiny", tmp_path, seed=43)
    assert second.manifest["params"]["seed"] == 43
    assert second.answers() != before
    assert not list(tmp_path.glob(".transactions-tiny.*")), "old copy or temporary left behind"


def test_incomplete_directory_is_regenerated(tmp_path):
    ds = ensure_dataset("tiny", tmp_path)
    (ds.path / "csv" / "part-00001.csv").unlink()
    again = ensure_dataset("tiny", tmp_path)
    assert (again.path / "csv" / "part-00001.csv").is_file()


def test_failed_generation_leaves_nothing_and_keeps_the_old_dataset(tmp_path, monkeypatch):
    good = ensure_dataset("tiny", tmp_path)
    good_files = _files(good)
    real = writers.write_partition

    def fail_on_third(directory, params, index):
        if index == 2:
            raise RuntimeError("simulated crash while writing partition 2")
        return real(directory, params, index)

    monkeypatch.setattr(build, "write_partition", fail_on_third)
    with pytest.raises(RuntimeError, match="simulated crash"):
        ensure_dataset("tiny", tmp_path, force=True, workers=1)
    assert _files(Dataset(good.path)) == good_files, "the complete dataset must survive a failed rebuild"
    assert [p.name for p in tmp_path.iterdir()] == ["transactions-tiny"]
    with pytest.raises(RuntimeError):
        ensure_dataset("tiny", tmp_path / "fresh", workers=1)
    assert not (tmp_path / "fresh").exists(), "a failed first run must leave no directory (not even its --data-dir)"


def test_stale_temporary_of_a_dead_generator_is_removed(tmp_path):
    stale = tmp_path / ".transactions-tiny.tmp-999999999-deadbeef"
    (stale / "csv").mkdir(parents=True)
    ensure_dataset("tiny", tmp_path)
    assert not stale.exists()


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"rows": 0}, "rows must be a positive integer, got 0"),
        ({"rows": -5}, "rows must be a positive integer, got -5"),
        ({"partitions": 0}, "partitions must be a positive integer"),
        ({"customers": -1}, "customers must be a positive integer"),
        ({"rows": 3, "partitions": 4}, "partitions (4) cannot exceed rows (3)"),
        ({"scale": "huge"}, "unknown scale 'huge'"),
        ({"formats": ["xlsx"]}, "formats must be among csv, parquet"),
        ({"seed": -1}, "seed must be a non-negative integer"),
    ],
)
def test_bad_parameters_raise_a_clear_value_error(kwargs, message):
    with pytest.raises(ValueError) as error:
        make_params(**{"scale": "tiny", **kwargs})
    assert message in str(error.value)
    assert "\n" not in str(error.value)


def test_unwritable_data_directory(tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    with pytest.raises(ValueError, match="cannot write to data directory"):
        ensure_dataset("tiny", blocker / "data")


def test_not_enough_disk(tmp_path, monkeypatch):
    usage = shutil.disk_usage(tmp_path)
    monkeypatch.setattr(build.shutil, "disk_usage", lambda _: usage._replace(free=1000))
    with pytest.raises(ValueError, match=r"not enough free disk .* choose a smaller --scale"):
        ensure_dataset("tiny", tmp_path)
    assert not [p for p in tmp_path.iterdir()], "nothing may be written when the disk is too small"


def test_scale_comes_from_the_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("COURSE_SCALE", "tiny")
    assert ensure_dataset(data_dir=tmp_path).scale == "tiny"
    monkeypatch.setenv("COURSE_SCALE", "nope")
    with pytest.raises(ValueError, match="unknown scale 'nope'"):
        ensure_dataset(data_dir=tmp_path)


def _cli(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "utils.datagen", *args],
        capture_output=True, text=True, env={**os.environ, **(env or {})}, timeout=120,
    )


def test_cli_generates_and_reports(tmp_path):
    done = _cli("--scale", "tiny", "--data-dir", str(tmp_path))
    assert done.returncode == 0, done.stderr
    assert "20,000 rows ready" in done.stdout
    assert json.loads((tmp_path / "transactions-tiny" / "manifest.json").read_text())["rows"] == 20_000
    assert done.stderr == ""


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--rows", "-3"], "error: rows must be a positive integer, got -3"),
        (["--rows", "0"], "error: rows must be a positive integer, got 0"),
        (["--formats", "json"], "error: formats must be among csv, parquet"),
    ],
)
def test_cli_bad_input_exits_2_with_one_line(tmp_path, args, message):
    done = _cli("--scale", "tiny", "--data-dir", str(tmp_path / "d"), *args)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [done.stderr.strip()]
    assert done.stderr.startswith(message)
    assert not (tmp_path / "d" / "transactions-tiny").exists()


def test_cli_unknown_scale_and_unwritable_dir_exit_2(tmp_path):
    unknown = _cli("--data-dir", str(tmp_path), env={"COURSE_SCALE": "enormous"})
    assert unknown.returncode == 2 and "unknown scale 'enormous'" in unknown.stderr
    blocker = tmp_path / "file"
    blocker.write_text("x")
    unwritable = _cli("--scale", "tiny", "--data-dir", str(blocker / "sub"))
    assert unwritable.returncode == 2
    assert unwritable.stderr.startswith("error: cannot write to data directory")
    assert len(unwritable.stderr.strip().splitlines()) == 1


def test_dataset_handle_rejects_an_incomplete_directory(tmp_path):
    (tmp_path / "half").mkdir()
    with pytest.raises(ValueError, match="not a complete dataset"):
        Dataset(Path(tmp_path / "half"))


def test_concurrent_requests_generate_once(tmp_path, monkeypatch):
    """Two notebooks asking at the same moment: one generates, the other waits and reuses it."""
    import threading

    calls = []
    real = build.generate

    def counting_generate(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(build, "generate", counting_generate)
    results, errors = [], []

    def request():
        try:
            results.append(ensure_dataset("tiny", tmp_path, workers=1))
        except Exception as error:  # reported below, not swallowed
            errors.append(error)

    threads = [threading.Thread(target=request) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert errors == []
    assert len(results) == 3 and len(calls) == 1
    assert [p.name for p in tmp_path.iterdir()] == ["transactions-tiny"]
