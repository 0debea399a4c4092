"""Turn a harness run (``results.json``) into Markdown tables and matplotlib charts.

    python -m benchmarks.report                     # docs/benchmarks/results.json -> docs/benchmarks.md
    python -m benchmarks.report --out reports/benchmarks

Every number on the page comes from the results file; nothing is typed by hand.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

from benchmarks.datagen_speed import stage_ceiling  # noqa: E402
from benchmarks.datagen_speed import summarize as summarize_datagen  # noqa: E402
from utils.datagen.manifest import REPO_ROOT  # noqa: E402
from utils.datagen.sizes import human_bytes  # noqa: E402

RECOMMENDED = "Dask, the course's recommended pipeline"
REFERENCE = "polars"
# (format, rows, the most the recommended pipeline may take, in multiples of polars' time)
RATIO_TARGETS = [("parquet", 100_000_000, 2.0), ("csv", 100_000_000, 3.0), ("parquet", 10_000_000, 3.0),
                 ("csv", 10_000_000, 3.0)]
PER_ROW_TARGET = 1.5
DATAGEN_TARGET = 5e6


def _rows_label(rows: int) -> str:
    return f"{rows / 1e6:g} M" if rows >= 1e6 else f"{rows:,}"


def engine_table(records: list[dict[str, Any]]) -> pd.DataFrame:
    """min / median seconds, ns per row and peak memory per engine, scale and format."""
    runs = pd.DataFrame([r for r in records if "seconds" in r])
    table = runs.groupby(["rows", "format", "engine"], sort=False).agg(
        shape=("shape", "first"), min_s=("seconds", "min"), median_s=("seconds", "median"),
        runs=("seconds", "size"), peak_memory=("peak_memory_bytes", "max")).reset_index()
    table["ns_per_row"] = table["min_s"] / table["rows"] * 1e9
    reference = table[table["engine"] == REFERENCE].set_index(["rows", "format"])["min_s"]
    table["x_polars"] = [row.min_s / reference.get((row.rows, row.format), float("nan"))
                         for row in table.itertuples()]
    return table


def targets(results: dict[str, Any], table: pd.DataFrame) -> pd.DataFrame:
    """Each target of the performance issue with what this run measured."""
    rows = []
    mins = table.set_index(["rows", "format", "engine"])["min_s"]
    medians = table.set_index(["rows", "format", "engine"])["median_s"]
    for fmt, n, limit in RATIO_TARGETS:
        key, ref = (n, fmt, RECOMMENDED), (n, fmt, REFERENCE)
        if key in mins and ref in mins:
            ratio, ratio_median = mins[key] / mins[ref], medians[key] / medians[ref]
            measured = f"{ratio:.2f}x (medians: {ratio_median:.2f}x)"
            met = "yes" if ratio <= limit else "no"
        else:
            measured, met = "not measured in this run", "-"
        rows.append({"target": f"{_rows_label(n)} rows, {fmt}: recommended <= {limit:g}x polars",
                     "measured": measured, "met": met})
    for fmt in ("parquet", "csv"):
        a, b = (100_000_000, fmt, RECOMMENDED), (10_000_000, fmt, RECOMMENDED)
        if a in mins and b in mins:
            ratio = (mins[a] / 1e8) / (mins[b] / 1e7)
            rows.append({"target": f"time per row, 100 M vs 10 M rows ({fmt}) <= {PER_ROW_TARGET}x",
                         "measured": f"{ratio:.2f}x", "met": "yes" if ratio <= PER_ROW_TARGET else "no"})
    for run in results.get("small_workers", []):
        rows.append({"target": f"{_rows_label(run['rows'])} rows ({run['format']}) on {run['memory_limit']} workers, "
                               "no restarts",
                     "measured": f"{run['seconds']:.1f} s, exact, {run['workers_restarted']} restart(s)",
                     "met": "yes" if run["workers_restarted"] == 0 else "no"})
    both = [r for r in summarize_datagen(results.get("datagen", [])) if r["formats"] == "csv+parquet"]
    if both:
        best, median = both[0]["M rows/s (min)"], both[0]["M rows/s (median)"]
        rows.append({"target": "data generation, CSV + Parquet, >= 5 M rows/s",
                     "measured": f"{best:.2f} M rows/s (median run {median:.2f}; {_rows_label(both[0]['rows'])} rows)",
                     "met": "yes" if best * 1e6 >= DATAGEN_TARGET else "no"})
    return pd.DataFrame(rows)


def _cell(value: Any) -> str:
    """Numbers as people read them: thousands separators, 3 significant digits below 100."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return str(value)
    if isinstance(value, int) or abs(value) >= 100:
        return f"{value:,.0f}"
    return f"{value:.3g}"


def _markdown(frame: pd.DataFrame) -> str:
    """A GitHub table (numbers right-aligned) without the optional ``tabulate`` dependency."""
    if frame.empty:
        return "(nothing measured)"
    numeric = [pd.api.types.is_numeric_dtype(frame[c]) for c in frame.columns]
    lines = ["| " + " | ".join(map(str, frame.columns)) + " |",
             "|" + "|".join("---:" if n else "---" for n in numeric) + "|"]
    for row in frame.itertuples(index=False):
        cells = [_cell(v) for v in row]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _median_table(records: list[dict[str, Any]], by: list[str]) -> pd.DataFrame:
    frame = pd.DataFrame(records)
    if frame.empty:
        return frame
    return frame.groupby(by, sort=False).agg(min_s=("seconds", "min"), median_s=("seconds", "median"),
                                             peak_memory=("peak_memory_bytes", "max")).reset_index()


def charts(out: Path, table: pd.DataFrame, results: dict[str, Any]) -> list[str]:
    """engines.png (seconds per engine), per_row.png (ns per row vs rows), shapes.png, sweep.png."""
    names = []
    formats = list(dict.fromkeys(table["format"]))
    fig, axes = plt.subplots(len(formats), 1, figsize=(9, 4 * len(formats)), squeeze=False)
    for ax, fmt in zip(axes[:, 0], formats, strict=True):
        pivot = table[table["format"] == fmt].pivot(index="engine", columns="rows", values="min_s")
        pivot.columns = [_rows_label(c) for c in pivot.columns]
        pivot.plot.barh(ax=ax, logx=True)
        ax.legend(title="rows", loc="center left", bbox_to_anchor=(1.0, 0.5))
        ax.set_title(f"Total sales per customer from {fmt} (min of runs)")
        ax.set_xlabel("seconds (log scale, lower is better)")
        ax.set_ylabel("")
    fig.tight_layout()
    fig.savefig(out / "engines.png", dpi=110)
    plt.close(fig)
    names.append("engines.png")

    fig, axes = plt.subplots(1, len(formats), figsize=(7 * len(formats), 4.5), squeeze=False)
    for ax, fmt in zip(axes[0], formats, strict=True):
        for engine, rows in table[table["format"] == fmt].groupby("engine", sort=False):
            ax.plot(rows["rows"], rows["ns_per_row"], marker="o", label=engine)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("rows")
        ax.set_ylabel("ns per row (min of runs)")
        ax.set_title(f"Cost per row, {fmt}: flat = linear cost")
    fig.tight_layout(rect=(0, 0.18, 1, 1))
    fig.legend(*axes[0][0].get_legend_handles_labels(), loc="lower center", ncol=3, fontsize=8)
    fig.savefig(out / "per_row.png", dpi=110)
    plt.close(fig)
    names.append("per_row.png")

    shapes = _median_table(results.get("shapes", []), ["workers", "threads_per_worker", "format"])
    if not shapes.empty:
        shapes["cluster"] = shapes["workers"].astype(str) + " x " + shapes["threads_per_worker"].astype(str)
        ax = shapes.pivot(index="cluster", columns="format", values="min_s").plot.bar(rot=0, figsize=(6, 3.5))
        ax.set_ylabel("seconds (min of runs)")
        ax.set_xlabel("workers x threads per worker")
        ax.set_title("Recommended pipeline by cluster shape")
        ax.figure.tight_layout()
        ax.figure.savefig(out / "shapes.png", dpi=110)
        plt.close(ax.figure)
        names.append("shapes.png")

    sweep = pd.DataFrame(results.get("sweep", []))
    if not sweep.empty:
        points = sweep.groupby("partitions")["seconds"].min()
        fig, ax = plt.subplots(figsize=(6, 3.5))
        ax.plot(points.index, points.to_numpy(), marker="o")
        ax.set_xscale("log")
        ax.set_xlabel("partitions (CSV blocksize from 1 MiB to one per file)")
        ax.set_ylabel("seconds (min of runs)")
        ax.set_title("Recommended CSV pipeline by partition count")
        fig.tight_layout()
        fig.savefig(out / "sweep.png", dpi=110)
        plt.close(fig)
        names.append("sweep.png")
    return names


def _memory(frame: pd.DataFrame) -> pd.DataFrame:
    frame = frame.copy()
    frame["peak_memory"] = frame["peak_memory"].map(human_bytes)
    return frame.round(3)


def load_range(results: dict[str, Any]) -> str:
    """The 1-minute load average at the start, the end and (where recorded) after every run."""
    env = results["environment"]
    loads = [env["load_average_start"][0], env["load_average_end"][0]]
    loads += [r["load_average"] for r in results.get("engines", []) if "load_average" in r]
    return f"{min(loads):.1f}-{max(loads):.1f}"


def page(results: dict[str, Any], image_dir: str) -> str:
    env = results["environment"]
    table = engine_table(results["engines"])
    skipped = [r for r in results["engines"] if r.get("skipped")]
    versions = ", ".join(f"{name} {version}" for name, version in env["packages"].items())
    lines = [
        "# Benchmarks: total sales per customer",
        "",
        "<!-- Generated by `python -m benchmarks.report` from results.json; do not edit by hand. -->",
        "",
        f"Measured {env['date']} on {env['cpu']}, {env['cores']} cores, {human_bytes(env['memory_bytes'])} RAM, no GPU"
        f" (Python {env['python']}; {versions}). Mode: {results['mode']}, {results['repeats']} runs per measurement,"
        " engines interleaved so that other work on the machine slows them alike; 1-minute load average"
        f" {load_range(results)} (start, end and after each run where recorded). The machine was shared with other"
        " jobs: compare ratios within this run, not absolute times across runs.",
        "",
        "Reproduce: `make benchmark-full` (or `make benchmark` for the quick mode). Every result below was"
        " checked against the generator's ground truth (each customer's total to the cent).",
        "",
        "## Targets",
        "",
        _markdown(targets(results, table)),
        "",
        "## Engines side by side",
        "",
        "`x_polars`: min time over polars' min time on the same files in the same run. `peak_memory`: the most"
        " resident memory the engine's processes (cluster workers included) added during a run.",
        "",
    ]
    shown = table.assign(rows=table["rows"].map(_rows_label))
    lines += [_markdown(_memory(shown)), ""]
    lines += [f"- {r['engine']}: {r['skipped']}" for r in skipped] + [""]
    lines += [f"![seconds per engine]({image_dir}/engines.png)", "", f"![cost per row]({image_dir}/per_row.png)", ""]
    partials = pd.DataFrame(results.get("partials", []))
    if not partials.empty:
        partials["partials per row"] = partials["mean_partials_per_partition"] / partials["mean_rows_per_partition"]
        lines += ["## What the chunk step leaves for the tree reduction", "",
                  "Rows per partition (Parquet, as the recommended pipeline reads it) and distinct customers in it,"
                  " i.e. the partial sums that the combine steps must move and re-group:", "",
                  _markdown(partials.round(3)), ""]
    shapes = _median_table(results.get("shapes", []), ["workers", "threads_per_worker", "format"])
    if not shapes.empty:
        rows = results["shapes"][0]["rows"]
        lines += ["## Cluster shape: strong scaling, threads vs processes", "",
                  f"The recommended pipeline at {_rows_label(rows)} rows:", "", _markdown(_memory(shapes)), "",
                  f"![cluster shapes]({image_dir}/shapes.png)", ""]
    sweep = pd.DataFrame(results.get("sweep", []))
    if not sweep.empty:
        summary = sweep.groupby(["blocksize", "partitions"], sort=False).agg(
            min_s=("seconds", "min"), median_s=("seconds", "median"), peak_memory=("peak_memory_bytes", "max"))
        lines += ["## Partition size (CSV `blocksize`)", "",
                  f"The recommended CSV pipeline at {_rows_label(sweep['rows'].iloc[0])} rows; a block never spans"
                  " two files, so the largest blocksizes give one partition per file:", "",
                  _markdown(_memory(summary.reset_index())), "", f"![partition sweep]({image_dir}/sweep.png)", ""]
    profile = pd.DataFrame(results.get("profiles", []))
    if not profile.empty:
        top = (profile.sort_values("seconds", ascending=False).groupby(["engine", "format"], sort=False).head(4)
               .sort_values(["engine", "format", "seconds"], ascending=[True, True, False]))
        lines += ["## Profile: where the time goes (task stream)", "",
                  "Seconds of task-stream intervals per task prefix and action, summed over all threads (the four"
                  " largest per run):", "",
                  _markdown(top[["engine", "shape", "format", "wall_seconds", "prefix", "action", "seconds",
                                 "intervals"]].round(3)), ""]
    datagen = pd.DataFrame(summarize_datagen(results.get("datagen", [])))
    if not datagen.empty:
        lines += ["## Data generation (`python -m utils.datagen`, all cores)", "",
                  "Each run is a fresh process, as `make data` runs it. CPU seconds are those of the generator"
                  " and its worker processes together: user is the generator's own work, system is the kernel's"
                  " (mostly copying the files into the page cache).", "",
                  _markdown(datagen.round(2)), ""]
    stages = pd.DataFrame(results.get("datagen_stages", []))
    if not stages.empty:
        cores = results["environment"]["cores"]
        ceiling = stage_ceiling(results["datagen_stages"], cores)
        lines += ["Where a worker's time goes, for one partition of the `small` scale (each step timed alone on one"
                  " core, best of `runs`):", "",
                  _markdown(stages[["step", "rows", "runs", "ms", "ns_per_row"]].round(1)), "",
                  f"These steps alone, back to back on all {cores} cores, would generate {ceiling / 1e6:.2f} M rows/s:"
                  " the ceiling before starting the processes, summing the ground truth across partitions and the"
                  " kernel's work on the files.", ""]
    return "\n".join(lines).rstrip() + "\n"


# The page that holds the summary block between the README_START/README_END markers (the README links to it).
SUMMARY_PAGE = REPO_ROOT / "docs" / "measurements.md"
README_START = "<!-- benchmarks:start (written by python -m benchmarks.report from docs/benchmarks/results.json) -->"
README_END = "<!-- benchmarks:end -->"


def readme_block(results: dict[str, Any]) -> str:
    """The summary in docs/measurements.md: hardware, the targets and the engines at the largest scale."""
    env = results["environment"]
    table = engine_table(results["engines"])
    largest = table[table["rows"] == table["rows"].max()]
    shown = largest[["format", "engine", "shape", "min_s", "median_s", "x_polars", "peak_memory"]]
    rows = _rows_label(int(largest["rows"].iloc[0]))
    return "\n".join([
        README_START, "",
        f"Measured {env['date']} on {env['cpu']}, {env['cores']} cores, {human_bytes(env['memory_bytes'])} RAM, no GPU,"
        f" shared with other jobs (load average {load_range(results)} where recorded):"
        " ratios within the run count, absolute times do not. Min and median of"
        f" {results['repeats']} interleaved runs, every answer checked to the cent.", "",
        _markdown(targets(results, table)), "",
        f"At {rows} rows:", "",
        _markdown(_memory(shown)), "",
        README_END,
    ])


def update_readme(results: dict[str, Any], readme: Path = SUMMARY_PAGE) -> bool:
    """Replace the block between the summary page's benchmark markers; False when it has none."""
    text = readme.read_text()
    if README_START not in text or README_END not in text:
        return False
    before, rest = text.split(README_START, 1)
    after = rest.split(README_END, 1)[1]
    readme.write_text(before + readme_block(results) + after)
    return True


def write(out: Path, markdown: Path) -> Path:
    """Charts into ``out``, the page into ``markdown`` (images linked relative to it)."""
    results = json.loads((out / "results.json").read_text())
    charts(out, engine_table(results["engines"]), results)
    image_dir = Path(os.path.relpath(out.resolve(), markdown.parent.resolve())).as_posix()
    markdown.write_text(page(results, image_dir))
    if results["mode"] == "full" and out.resolve() == (REPO_ROOT / "docs" / "benchmarks").resolve():
        update_readme(results)
    return markdown


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=REPO_ROOT / "docs" / "benchmarks")
    args = parser.parse_args(argv)
    if not (args.out / "results.json").is_file():
        print(f"error: {args.out / 'results.json'} not found; run `python -m benchmarks.run` first", file=sys.stderr)
        return 2
    full = args.out.resolve() == (REPO_ROOT / "docs" / "benchmarks").resolve()
    print(write(args.out, REPO_ROOT / "docs" / "benchmarks.md" if full else args.out / "benchmarks.md"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
