"""benchmarks.report turns fresh-process records into the targets table, the agreement with the
standalone script and the summary block: check its arithmetic on hand-made records (no timing is
measured here)."""

from __future__ import annotations

from benchmarks import report

REC, CLUSTER, WORKED = report.RECOMMENDED, report.ON_CLUSTER, report.WORKED_EXAMPLE
SCALES = {10_000_000: "small", 100_000_000: "medium"}


def _processes(engine: str, rows: int, fmt: str, runs: list[list[float]]) -> list[dict]:
    """One record per fresh process, each with its queries' seconds (the first is the cold one)."""
    return [{"engine": engine, "shape": "s", "rows": rows, "scale": SCALES[rows], "format": fmt, "seconds": s,
             "startup_seconds": 1.0, "peak_memory_bytes": 10**6, "load_average_before": 1.0,
             "load_average_after": 1.5, "repeat": i, "checked": True} for i, s in enumerate(runs)]


def _results() -> dict:
    engines = []
    for rows, k in ((10_000_000, 1), (100_000_000, 10)):
        engines += _processes("polars", rows, "parquet", [[9.0 * k, 1.0 * k, 2.0 * k], [9.0 * k, 3.0 * k, 3.0 * k]])
        engines += _processes("DuckDB", rows, "parquet", [[9.0 * k, 0.5 * k, 0.6 * k], [9.0 * k, 4.0 * k, 4.0 * k]])
        engines += _processes(REC, rows, "parquet", [[9.0 * k, 1.5 * k, 1.6 * k], [9.0 * k, 4.0 * k, 5.0 * k]])
        engines += _processes(CLUSTER, rows, "parquet", [[9.0 * k, 2.0 * k, 2.0 * k]] * 2)
        engines += _processes("polars", rows, "csv", [[5.0 * k, 2.0 * k, 2.0 * k]] * 2)
        engines += _processes("DuckDB", rows, "csv", [[5.0 * k, 4.0 * k, 4.0 * k]] * 2)
        engines += _processes(REC, rows, "csv", [[9.0 * k, 7.0 * k, 7.0 * k]] * 2)
        engines += _processes(WORKED, rows, "csv", [[9.0 * k, 14.0 * k, 14.0 * k]] * 2)
    engines.append({"engine": "dask-cudf, LocalCUDACluster", "skipped": "skipped: no NVIDIA GPU visible"})
    return {
        "mode": "full", "repeats": 2, "runs": 3,
        "environment": {"date": "d", "cpu": "cpu", "cores": 2, "memory_bytes": 2**30, "python": "3.11",
                        "packages": {"dask": "1"}, "load_average_start": (1.0, 1.0, 1.0),
                        "load_average_end": (2.0, 2.0, 2.0)},
        "datasets": [{"scale": "small", "rows": 10_000_000, "path": "/d/transactions-small"}],
        "engines": engines,
        "standalone": {"folder": "/d/transactions-small", "rows": 10_000_000, "repeats": 3, "runs": [], "summary": [
            {"engine": "polars", "format": "parquet", "min_s": 0.6, "x_faster_reference": 1.2},
            {"engine": "dask-threads", "format": "parquet", "min_s": 1.25, "x_faster_reference": 2.5},
            {"engine": "dask-cluster", "format": "parquet", "min_s": 2.2, "x_faster_reference": 4.4},
            {"engine": "dask-threads", "format": "csv", "min_s": 7.0, "x_faster_reference": 3.5}]},
        "small_workers": [{"format": "csv", "rows": 100_000_000, "memory_limit": "2GiB", "seconds": [9.0],
                           "workers_restarted": 1, "engine": CLUSTER}],
        "datagen": [{"formats": "csv+parquet", "rows": 10_000_000, "run": i, "seconds": s, "user_s": 4.0,
                     "system_s": 1.0} for i, s in enumerate([3.0, 2.5, 4.0])],
        "datagen_stages": [{"step": "generate", "rows": 500_000, "runs": 5, "ms": 150.0, "ns_per_row": 300.0},
                           {"step": "encode", "rows": 500_000, "runs": 5, "ms": 50.0, "ns_per_row": 100.0}],
    }


def test_warm_is_the_fastest_query_after_the_first_and_ratios_use_the_faster_reference():
    table = report.engine_table(_results()["engines"]).set_index(["rows", "format", "engine"])
    parquet = table.loc[(10_000_000, "parquet", REC)]
    assert parquet["warm_min_s"] == 1.5 and parquet["first_median_s"] == 9.0
    assert parquet["x_best_reference"] == 3.0  # 1.5 s over DuckDB's 0.5 s, the faster reference here
    csv = table.loc[(10_000_000, "csv", REC)]
    assert csv["x_best_reference"] == 3.5 and csv["x_worked_example"] == 0.5  # polars 2 s; one-liner 14 s


def test_targets_compare_with_the_faster_of_polars_and_duckdb():
    results = _results()
    table = report.targets(results, report.engine_table(results["engines"])).set_index("target")
    parquet = table.loc["10 M rows, parquet: recommended <= 2x the faster of polars/DuckDB"]
    assert parquet["measured"].startswith("3.00x DuckDB") and parquet["met"] == "no"
    assert parquet["measured"].endswith("; on the LocalCluster 4.00x")  # reported beside, not the target
    csv = table.loc["100 M rows, csv: recommended <= 3x the faster of polars/DuckDB"]
    assert csv["measured"].startswith("3.50x polars") and csv["met"] == "no"
    per_row = table.loc["time per row, 100 M vs 10 M rows (parquet) <= 1.5x"]
    assert per_row["measured"] == "1.00x" and per_row["met"] == "yes"
    assert table.loc["100 M rows (csv) on 2GiB workers, no restarts"]["met"] == "no"
    assert table.loc["data generation, CSV + Parquet, >= 5 M rows/s"]["measured"].startswith(
        "4.00 M rows/s (median run 3.33;")


def test_agreement_with_the_standalone_script():
    results = _results()
    table = report.engine_table(results["engines"])
    agreement = report.agreement_table(results, table).set_index(["format", "engine"])
    assert list(agreement.index) == [("parquet", REC), ("parquet", CLUSTER), ("csv", REC)]  # not the references
    assert agreement.loc[("parquet", REC), "harness / standalone"] == 3.0 / 2.5
    assert agreement.loc[("parquet", REC), ["harness s", "standalone s"]].tolist() == [1.5, 1.25]
    assert agreement.loc[("parquet", CLUSTER), "harness / standalone"] == 4.0 / 4.4
    assert agreement.loc[("csv", REC), "harness / standalone"] == 1.0
    targets = report.targets(results, table).set_index("target")
    row = targets.loc[f"harness and standalone script agree (ratios within {report.AGREEMENT:g}x)"]
    assert row["measured"] == "at most 1.20x apart (10 M rows)" and row["met"] == "yes"
    results["standalone"]["summary"][2]["x_faster_reference"] = 2.0  # the cluster 2x apart: no agreement
    row = report.targets(results, table).set_index("target").loc[row.name]
    assert row["measured"] == "at most 2.00x apart (10 M rows)" and row["met"] == "no"


def test_missing_scales_are_reported_not_guessed():
    results = _results()
    results["engines"] = [r for r in results["engines"] if r.get("rows") != 100_000_000]
    table = report.targets(results, report.engine_table(results["engines"])).set_index("target")
    assert table.loc["100 M rows, csv: recommended <= 3x the faster of polars/DuckDB"]["measured"] == (
        "not measured in this run")


def test_readme_block_is_replaced_between_markers(tmp_path):
    readme = tmp_path / "README.md"
    readme.write_text(f"intro\n{report.README_START}\nold numbers\n{report.README_END}\nafter\n")
    assert report.update_readme(_results(), readme)
    text = readme.read_text()
    assert "old numbers" not in text and text.startswith("intro\n") and text.endswith("after\n")
    assert "| 100 M rows, parquet: recommended <= 2x the faster of polars/DuckDB | 3.00x DuckDB" in text
    assert "its own fresh Python process" in text
    plain = tmp_path / "plain.md"
    plain.write_text("no markers\n")
    assert not report.update_readme(_results(), plain) and plain.read_text() == "no markers\n"


def test_page_names_skipped_engines_hardware_and_method():
    text = report.page(_results(), ".")
    assert "dask-cudf, LocalCUDACluster: skipped: no NVIDIA GPU visible" in text
    assert "on cpu, 2 cores" in text and "1-minute load average 1.0-2.0" in text
    assert "## The harness against a plain script" in text


def test_generation_ceiling_is_cores_over_the_summed_steps():
    # 300 + 100 ns per row on one core: 2.5 M rows/s per core, 5 M rows/s on the 2 cores recorded.
    assert "would generate 5.00 M rows/s" in report.page(_results(), ".")


def test_timings_have_one_row_per_query():
    frame = report.timings_frame(_results()["engines"])
    assert len(frame) == 2 * 8 * 2 * 3 and set(frame["run"]) == {0, 1, 2}
