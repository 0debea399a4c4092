"""benchmarks.report turns raw runs into the targets table and the README block: check its
arithmetic on hand-made runs (no timing is measured here)."""

from __future__ import annotations

from benchmarks import report

REC, REF = report.RECOMMENDED, report.REFERENCE


def _runs(engine: str, rows: int, fmt: str, seconds: list[float]) -> list[dict]:
    return [{"engine": engine, "shape": "s", "rows": rows, "format": fmt, "seconds": s, "peak_memory_bytes": 10**6,
             "repeat": i} for i, s in enumerate(seconds)]


def _results() -> dict:
    engines = []
    for rows, scale in ((10_000_000, 1), (100_000_000, 10)):
        engines += _runs(REF, rows, "parquet", [1.0 * scale, 2.0 * scale, 3.0 * scale])
        engines += _runs(REC, rows, "parquet", [1.5 * scale, 4.0 * scale, 5.0 * scale])
        engines += _runs(REF, rows, "csv", [2.0 * scale] * 3)
        engines += _runs(REC, rows, "csv", [7.0 * scale] * 3)
    engines.append({"engine": "dask-cudf, LocalCUDACluster", "skipped": "skipped: no NVIDIA GPU visible"})
    return {
        "mode": "full", "repeats": 3,
        "environment": {"date": "d", "cpu": "cpu", "cores": 2, "memory_bytes": 2**30, "python": "3.11",
                        "packages": {"dask": "1"}, "load_average_start": (1.0, 1.0, 1.0),
                        "load_average_end": (2.0, 2.0, 2.0)},
        "engines": engines,
        "small_workers": [{"format": "csv", "rows": 100_000_000, "memory_limit": "2GiB", "seconds": 9.0,
                           "workers_restarted": 1}],
        "datagen": [{"formats": "csv+parquet", "rows": 10_000_000, "run": i, "seconds": s, "user_s": 4.0,
                     "system_s": 1.0} for i, s in enumerate([3.0, 2.5, 4.0])],
        "datagen_stages": [{"step": "generate", "rows": 500_000, "runs": 5, "ms": 150.0, "ns_per_row": 300.0},
                           {"step": "encode", "rows": 500_000, "runs": 5, "ms": 50.0, "ns_per_row": 100.0}],
    }


def test_targets_use_min_over_min_in_the_same_run():
    results = _results()
    table = report.targets(results, report.engine_table(results["engines"])).set_index("target")
    parquet_100m = table.loc["100 M rows, parquet: recommended <= 2x polars"]
    assert parquet_100m["measured"].startswith("1.50x (medians: 2.00x)") and parquet_100m["met"] == "yes"
    csv_10m = table.loc["10 M rows, csv: recommended <= 3x polars"]
    assert csv_10m["measured"].startswith("3.50x") and csv_10m["met"] == "no"
    per_row = table.loc["time per row, 100 M vs 10 M rows (parquet) <= 1.5x"]
    assert per_row["measured"] == "1.00x" and per_row["met"] == "yes"
    restarts = table.loc["100 M rows (csv) on 2GiB workers, no restarts"]
    assert restarts["met"] == "no"
    assert table.loc["data generation, CSV + Parquet, >= 5 M rows/s"]["measured"].startswith(
        "4.00 M rows/s (median run 3.33;"
    )


def test_missing_scales_are_reported_not_guessed():
    results = _results()
    results["engines"] = [r for r in results["engines"] if r.get("rows") != 100_000_000]
    table = report.targets(results, report.engine_table(results["engines"])).set_index("target")
    assert table.loc["100 M rows, csv: recommended <= 3x polars"]["measured"] == "not measured in this run"


def test_readme_block_is_replaced_between_markers(tmp_path):
    readme = tmp_path / "README.md"
    readme.write_text(f"intro\n{report.README_START}\nold numbers\n{report.README_END}\nafter\n")
    assert report.update_readme(_results(), readme)
    text = readme.read_text()
    assert "old numbers" not in text and text.startswith("intro\n") and text.endswith("after\n")
    assert "| 100 M rows, parquet: recommended <= 2x polars | 1.50x" in text
    plain = tmp_path / "plain.md"
    plain.write_text("no markers\n")
    assert not report.update_readme(_results(), plain) and plain.read_text() == "no markers\n"


def test_page_names_skipped_engines_and_hardware():
    text = report.page(_results(), ".")
    assert "dask-cudf, LocalCUDACluster: skipped: no NVIDIA GPU visible" in text
    assert "on cpu, 2 cores" in text


def test_generation_ceiling_is_cores_over_the_summed_steps():
    # 300 + 100 ns per row on one core: 2.5 M rows/s per core, 5 M rows/s on the 2 cores recorded.
    assert "would generate 5.00 M rows/s" in report.page(_results(), ".")
