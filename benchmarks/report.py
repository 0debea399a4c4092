"""Turn a harness run (``results.json``) into Markdown tables and matplotlib charts.

    python -m benchmarks.report                     # docs/benchmarks/results.json -> docs/benchmarks.md
    python -m benchmarks.report --out reports/benchmarks

Every number on the page comes from the results file; nothing is typed by hand.

Vocabulary (each measurement is one fresh process that runs the query several times):
**warm** is the fastest query after the first in a process, **first** the first query of a fresh
process (lazy imports, thread pools and caches warming up), **start-up** the cluster's start before
any query. Tables give the min and the median over processes; ratios divide min by min.
"""

from __future__ import annotations

import argparse
import json
import math
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
from utils.base.paths import REPO_ROOT  # noqa: E402
from utils.base.units import human_bytes  # noqa: E402

# The targets' engine: the recommended pipeline as the course recommends running it on one machine
# with CPUs only (utils.pipeline). The same pipeline on the LocalCluster is reported beside it.
RECOMMENDED = "Dask, recommended pipeline, threaded scheduler"
ON_CLUSTER = "Dask LocalCluster, recommended pipeline"
WORKED_EXAMPLE = "Dask LocalCluster, the worked example's one-liner"
REFERENCES = ("polars", "DuckDB")  # the targets compare with the faster of these, per format and size
# (format, rows, the most the recommended pipeline may take, in multiples of the faster reference)
RATIO_TARGETS = [("parquet", 100_000_000, 2.0), ("csv", 100_000_000, 3.0), ("parquet", 10_000_000, 2.0),
                 ("csv", 10_000_000, 3.0)]
PER_ROW_TARGET = 1.5
DATAGEN_TARGET = 5e6
AGREEMENT = 1.25  # harness and standalone ratios within this factor of each other: agreement within noise
STANDALONE_NAMES = {"polars": "polars", "duckdb": "DuckDB", "dask-threads": RECOMMENDED, "dask-cluster": ON_CLUSTER}


def _rows_label(rows: int) -> str:
    return f"{rows / 1e6:g} M" if rows >= 1e6 else f"{rows:,}"


def measured(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [r for r in records if "seconds" in r and not r.get("skipped")]


def timings_frame(records: list[dict[str, Any]]) -> pd.DataFrame:
    """One row per timed query: engine, rows, format, process (repeat), run in the process, seconds."""
    rows = []
    for r in measured(records):
        for run, seconds in enumerate(r["seconds"]):
            rows.append({"engine": r["engine"], "rows": r["rows"], "format": r["format"], "repeat": r.get("repeat"),
                         "run": run, "seconds": seconds, "startup_seconds": r.get("startup_seconds", 0.0),
                         "load_average_before": r.get("load_average_before"), "pid": r.get("pid")})
    return pd.DataFrame(rows)


def engine_table(records: list[dict[str, Any]]) -> pd.DataFrame:
    """Per rows, format and engine: warm and first-query seconds (min and median over processes),
    start-up, peak memory, and the ratios to the faster reference and to the worked example."""
    runs = pd.DataFrame(measured(records))
    if runs.empty:
        return pd.DataFrame(columns=["rows", "format", "engine", "warm_min_s"])
    runs["warm"] = runs["seconds"].map(lambda s: min(s[1:]) if len(s) > 1 else s[0])
    runs["first"] = runs["seconds"].map(lambda s: s[0])
    runs["load"] = runs[["load_average_before", "load_average_after"]].max(axis=1)
    table = runs.groupby(["rows", "format", "engine"], sort=False).agg(
        shape=("shape", "first"), processes=("warm", "size"), warm_min_s=("warm", "min"),
        warm_median_s=("warm", "median"), first_median_s=("first", "median"),
        startup_median_s=("startup_seconds", "median"), peak_memory=("peak_memory_bytes", "max"),
        load_max=("load", "max")).reset_index()
    table["ns_per_row"] = table["warm_min_s"] / table["rows"] * 1e9
    best = table[table["engine"].isin(REFERENCES)].groupby(["rows", "format"])["warm_min_s"].min()
    example = table[table["engine"] == WORKED_EXAMPLE].set_index(["rows", "format"])["warm_min_s"]
    keys = list(zip(table["rows"], table["format"], strict=True))
    table["x_best_reference"] = [w / best.get(k, math.nan) for w, k in zip(table["warm_min_s"], keys, strict=True)]
    table["x_worked_example"] = [w / example.get(k, math.nan) for w, k in zip(table["warm_min_s"], keys, strict=True)]
    return table


def _ratio(table: pd.DataFrame, rows: int, fmt: str, column: str, engine: str = RECOMMENDED) -> tuple[float, str]:
    """``engine``'s ``column`` over the faster reference's, and which reference that was."""
    here = table[(table["rows"] == rows) & (table["format"] == fmt)].set_index("engine")
    refs = here.loc[here.index.intersection(REFERENCES), column]
    if engine not in here.index or refs.empty:
        return math.nan, ""
    return float(here.loc[engine, column] / refs.min()), str(refs.idxmin())


def targets(results: dict[str, Any], table: pd.DataFrame) -> pd.DataFrame:
    """Each target of the performance issues with what this run measured."""
    rows = []
    for fmt, n, limit in RATIO_TARGETS:
        ratio, reference = _ratio(table, n, fmt, "warm_min_s")
        if math.isnan(ratio):
            shown, met = "not measured in this run", "-"
        else:
            median, _ = _ratio(table, n, fmt, "warm_median_s")
            first, _ = _ratio(table, n, fmt, "first_median_s")
            shown = f"{ratio:.2f}x {reference} (medians {median:.2f}x; first query {first:.2f}x)"
            met = "yes" if ratio <= limit else "no"
            cluster, _ = _ratio(table, n, fmt, "warm_min_s", ON_CLUSTER)
            if not math.isnan(cluster):
                shown += f"; on the LocalCluster {cluster:.2f}x"
        rows.append({"target": f"{_rows_label(n)} rows, {fmt}: recommended <= {limit:g}x the faster of polars/DuckDB",
                     "measured": shown, "met": met})
    mins = table.set_index(["rows", "format", "engine"])["warm_min_s"]
    for fmt in ("parquet", "csv"):
        a, b = (100_000_000, fmt, RECOMMENDED), (10_000_000, fmt, RECOMMENDED)
        if a in mins and b in mins:
            ratio = (mins[a] / 1e8) / (mins[b] / 1e7)
            rows.append({"target": f"time per row, 100 M vs 10 M rows ({fmt}) <= {PER_ROW_TARGET}x",
                         "measured": f"{ratio:.2f}x", "met": "yes" if ratio <= PER_ROW_TARGET else "no"})
    agreement = agreement_table(results, table)
    if not agreement.empty:
        worst = float(agreement["harness / standalone"].map(lambda q: max(q, 1 / q)).max())
        judged = int(results["standalone"].get("rows", 10_000_000)) >= 10_000_000  # below: ms-scale jitter
        rows.append({"target": f"harness and standalone script agree (ratios within {AGREEMENT:g}x)",
                     "measured": f"at most {worst:.2f}x apart ({agreement['rows'].iloc[0]} rows)",
                     "met": ("yes" if worst <= AGREEMENT else "no") if judged else "- (judged at 10 M rows and more)"})
    for run in measured(results.get("small_workers", [])):
        rows.append({"target": f"{_rows_label(run['rows'])} rows ({run['format']}) on {run['memory_limit']} workers, "
                               "no restarts",
                     "measured": f"{run['seconds'][0]:.1f} s, exact, {run['workers_restarted']} restart(s)",
                     "met": "yes" if run["workers_restarted"] == 0 else "no"})
    both = [r for r in summarize_datagen(results.get("datagen", [])) if r["formats"] == "csv+parquet"]
    if both:
        best, median = both[0]["M rows/s (min)"], both[0]["M rows/s (median)"]
        rows.append({"target": "data generation, CSV + Parquet, >= 5 M rows/s",
                     "measured": f"{best:.2f} M rows/s (median run {median:.2f}; {_rows_label(both[0]['rows'])} rows)",
                     "met": "yes" if best * 1e6 >= DATAGEN_TARGET else "no"})
    return pd.DataFrame(rows)


def agreement_table(results: dict[str, Any], table: pd.DataFrame) -> pd.DataFrame:
    """Each Dask engine over the faster reference, by the harness and by the standalone script, on
    the same files in the same rounds: the two must tell the same story. Also each one's own time."""
    standalone = results.get("standalone")
    if not standalone:
        return pd.DataFrame()
    rows_of = {d["path"]: int(d["rows"]) for d in results.get("datasets", [])}
    n = rows_of.get(standalone["folder"])
    mins = table.set_index(["rows", "format", "engine"])["warm_min_s"]
    out = []
    for row in standalone["summary"]:
        engine = STANDALONE_NAMES.get(row["engine"])
        if engine not in (RECOMMENDED, ON_CLUSTER) or n is None:
            continue
        harness, reference = _ratio(table, n, row["format"], "warm_min_s", engine)
        if math.isnan(harness):
            continue
        out.append({"rows": _rows_label(n), "format": row["format"], "engine": engine,
                    "faster reference (harness)": reference, "harness s": float(mins[(n, row["format"], engine)]),
                    "standalone s": row["min_s"], "harness": harness, "standalone script": row["x_faster_reference"],
                    "harness / standalone": harness / row["x_faster_reference"]})
    return pd.DataFrame(out)


def _cell(value: Any) -> str:
    """Numbers as people read them: thousands separators, 3 significant digits below 100."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return str(value)
    if isinstance(value, float) and math.isnan(value):
        return ""
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
        lines.append("| " + " | ".join(_cell(v) for v in row) + " |")
    return "\n".join(lines)


def _memory(frame: pd.DataFrame) -> pd.DataFrame:
    frame = frame.copy()
    if "peak_memory" in frame:
        frame["peak_memory"] = frame["peak_memory"].map(human_bytes)
    return frame.round(3)


def _per_process(records: list[dict[str, Any]], by: list[str]) -> pd.DataFrame:
    """Warm and first-query seconds per group of fresh-process records (shapes, sweep)."""
    frame = pd.DataFrame(measured(records))
    if frame.empty:
        return frame
    frame["warm"] = frame["seconds"].map(lambda s: min(s[1:]) if len(s) > 1 else s[0])
    frame["first"] = frame["seconds"].map(lambda s: s[0])
    return frame.groupby(by, sort=False).agg(warm_min_s=("warm", "min"), warm_median_s=("warm", "median"),
                                             first_median_s=("first", "median"),
                                             peak_memory=("peak_memory_bytes", "max")).reset_index()


def profile_table(records: list[dict[str, Any]]) -> pd.DataFrame:
    """Per profiled run: wall time, the seconds the workers spent in tasks of each step, and the
    share of wall x threads they were busy at all (the rest: graph building, scheduling, idling)."""
    rows = []
    for r in measured(records):
        for run, p in enumerate(r.get("profiles", [])):
            steps = {}
            for step in p["steps"]:
                name = step["prefix"] if step["action"] == "compute" else f"{step['prefix']} ({step['action']})"
                steps[name] = steps.get(name, 0.0) + step["seconds"]
            top = ", ".join(f"{k} {v:.3f}" for k, v in sorted(steps.items(), key=lambda kv: -kv[1])[:5])
            rows.append({"engine": r["engine"], "format": r["format"], "run": "first" if run == 0 else f"warm {run}",
                         "wall_s": p["wall_seconds"], "first_task_to_last_s": p["tasks_span_seconds"],
                         "task_s (all threads)": p["task_seconds"], "busy_share": p["busy_share"],
                         "seconds per step (all threads)": top})
    return pd.DataFrame(rows)


def charts(out: Path, table: pd.DataFrame, results: dict[str, Any]) -> list[str]:
    """engines.png (warm seconds per engine), per_row.png (ns per row vs rows), shapes.png, sweep.png."""
    names = []
    formats = list(dict.fromkeys(table["format"]))
    if not formats:
        return names
    fig, axes = plt.subplots(len(formats), 1, figsize=(9, 4 * len(formats)), squeeze=False)
    for ax, fmt in zip(axes[:, 0], formats, strict=True):
        pivot = table[table["format"] == fmt].pivot(index="engine", columns="rows", values="warm_min_s")
        pivot.columns = [_rows_label(c) for c in pivot.columns]
        pivot.plot.barh(ax=ax, logx=True)
        ax.legend(title="rows", loc="center left", bbox_to_anchor=(1.0, 0.5))
        ax.set_title(f"Total sales per customer from {fmt} (each engine in its own process; warm, min)")
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
        ax.set_ylabel("ns per row (warm, min)")
        ax.set_title(f"Cost per row, {fmt}: flat = linear cost")
    fig.tight_layout(rect=(0, 0.18, 1, 1))
    fig.legend(*axes[0][0].get_legend_handles_labels(), loc="lower center", ncol=3, fontsize=8)
    fig.savefig(out / "per_row.png", dpi=110)
    plt.close(fig)
    names.append("per_row.png")

    shapes = _per_process(results.get("shapes", []), ["workers", "threads_per_worker", "format"])
    if not shapes.empty:
        shapes["cluster"] = shapes["workers"].astype(str) + " x " + shapes["threads_per_worker"].astype(str)
        ax = shapes.pivot(index="cluster", columns="format", values="warm_min_s").plot.bar(rot=0, figsize=(6, 3.5))
        ax.set_ylabel("seconds (warm, min)")
        ax.set_xlabel("workers x threads per worker")
        ax.set_title("Recommended pipeline by cluster shape")
        ax.figure.tight_layout()
        ax.figure.savefig(out / "shapes.png", dpi=110)
        plt.close(ax.figure)
        names.append("shapes.png")

    sweep = _per_process(results.get("sweep", []), ["blocksize"])
    if not sweep.empty:
        fig, ax = plt.subplots(figsize=(6, 3.5))
        ax.bar(sweep["blocksize"], sweep["warm_min_s"])
        ax.set_xlabel("CSV blocksize")
        ax.set_ylabel("seconds (warm, min)")
        ax.set_title("Recommended CSV pipeline by blocksize")
        fig.tight_layout()
        fig.savefig(out / "sweep.png", dpi=110)
        plt.close(fig)
        names.append("sweep.png")
    return names


def load_range(results: dict[str, Any]) -> str:
    """The 1-minute load average at the start, the end and before and after every process."""
    env = results["environment"]
    loads = [env["load_average_start"][0], env.get("load_average_end", env["load_average_start"])[0]]
    for section in ("engines", "shapes", "sweep", "profiles", "small_workers"):
        for r in measured(results.get(section, [])):
            loads += [r.get("load_average_before", math.nan), r.get("load_average_after", math.nan)]
    loads = [x for x in loads if not math.isnan(x)]
    return f"{min(loads):.1f}-{max(loads):.1f}"


def method(results: dict[str, Any]) -> str:
    return (f"Every engine ran in its own fresh Python process (`python -m benchmarks.one_engine`), with nothing"
            f" else of the harness alive: imports first, then the engine's start-up (a Dask cluster starts inside"
            f" that process; its start-up is reported apart), then the query {results['runs']} times, every answer"
            f" checked against the generator's ground truth to the cent after the last one. {results['repeats']}"
            " such processes per engine, format and size, interleaved (every engine once, then again, the order"
            " rotated). **warm**: the fastest query after the first in a process; **first**: the first query of a"
            " fresh process; min and median over the processes. Ratios divide warm min by warm min, measured in"
            " the same run.")


TARGET_NOTE = (f"**recommended**: the course's recommended pipeline (`utils.pipeline`) run the way the course"
               f" recommends on one machine with CPUs only, on Dask's threaded scheduler (\"{RECOMMENDED}\" below)."
               f" The same pipeline on the LocalCluster that notebook 03 starts (\"{ON_CLUSTER}\") is reported"
               " beside it.")


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
        f" (Python {env['python']}; {versions}). Mode: {results['mode']}. 1-minute load average"
        f" {load_range(results)} (at the start, the end, and before and after every process).",
        "",
        method(results),
        "",
        "Reproduce: `make benchmark-full` (or `make benchmark` for the quick mode); check the ratios with the plain"
        " script `python benchmarks/standalone.py <dataset folder>`.",
        "",
        "## Targets",
        "",
        TARGET_NOTE,
        "",
        _markdown(targets(results, table)),
        "",
    ]
    agreement = agreement_table(results, table)
    if not agreement.empty:
        lines += ["## The harness against a plain script", "",
                  "`benchmarks/standalone.py` uses no course code: each engine in its own process, the recommended"
                  " pipeline written out by hand, min of its runs. One round of it ran after each round of the"
                  " harness's engines on the same files. `harness s` and `standalone s`: each one's fastest query"
                  " of the Dask engine; `harness` and `standalone script`: that over the faster of polars and"
                  " DuckDB, as each measured them:", "", _markdown(agreement.round(3)), ""]
    lines += [
        "## Engines side by side",
        "",
        "`x_best_reference`: warm min over the faster of polars' and DuckDB's warm min on the same files."
        " `x_worked_example`: the same over the worked example's one-liner (below 1: faster than it)."
        " `startup_median_s`: the cluster's start before the first query (0 without a cluster)."
        " `peak_memory`: the most resident memory the engine's processes (cluster workers included) added"
        " during a query.",
        "",
    ]
    shown = table.assign(rows=table["rows"].map(_rows_label))
    lines += [_markdown(_memory(shown)), ""]
    lines += [f"- {r['engine']}: {r['skipped']}" for r in skipped] + [""]
    lines += [f"![seconds per engine]({image_dir}/engines.png)", "", f"![cost per row]({image_dir}/per_row.png)", ""]
    profile = profile_table(results.get("profiles", []))
    if not profile.empty:
        rows = measured(results["profiles"])[0]["rows"]
        lines += ["## Profile: where the time goes (task stream)", "",
                  f"Each Dask pipeline at {_rows_label(rows)} rows, every run of one fresh process. `busy_share`:"
                  " the seconds the workers spent in tasks over wall time x threads; the rest is the client"
                  " building and optimising the graph, scheduling, and workers waiting for each other.", "",
                  _markdown(profile.round(3)), ""]
    shapes = _per_process(results.get("shapes", []), ["workers", "threads_per_worker", "format"])
    if not shapes.empty:
        rows = measured(results["shapes"])[0]["rows"]
        lines += ["## Cluster shape: strong scaling, threads vs processes", "",
                  f"The recommended pipeline at {_rows_label(rows)} rows, each shape in its own processes:", "",
                  _markdown(_memory(shapes)), "", f"![cluster shapes]({image_dir}/shapes.png)", ""]
    sweep = _per_process(results.get("sweep", []), ["blocksize"])
    if not sweep.empty:
        rows = measured(results["sweep"])[0]["rows"]
        lines += ["## Partition size (CSV `blocksize`)", "",
                  f"The recommended CSV pipeline at {_rows_label(rows)} rows; a block never spans two files, so the"
                  " rule's blocksize gives one partition per file:", "",
                  _markdown(_memory(sweep)), "", f"![partition sweep]({image_dir}/sweep.png)", ""]
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
    """The summary in docs/measurements.md: hardware, method, the targets and the engines at the largest scale."""
    env = results["environment"]
    table = engine_table(results["engines"])
    largest = table[table["rows"] == table["rows"].max()]
    shown = largest[["format", "engine", "shape", "warm_min_s", "warm_median_s", "first_median_s",
                     "x_best_reference", "x_worked_example", "peak_memory"]]
    rows = _rows_label(int(largest["rows"].iloc[0]))
    return "\n".join([
        README_START, "",
        f"Measured {env['date']} on {env['cpu']}, {env['cores']} cores, {human_bytes(env['memory_bytes'])} RAM, no GPU"
        f" (load average {load_range(results)} where recorded). {method(results)}", "",
        TARGET_NOTE, "",
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
