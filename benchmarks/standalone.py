"""A plain side-by-side, as a skeptic would write it: no course code, each engine in its own fresh
Python process, interleaved, min of the runs. The harness (benchmarks.run) must agree with it.

    python benchmarks/standalone.py data/transactions-small [--repeats 3]

dask-threads is the course's recommended pipeline written out and run as the course recommends on
one machine (Dask's threaded scheduler); dask-cluster is the same on a LocalCluster of one
single-threaded worker process per core.
"""
import argparse
import json
import os
import subprocess
import sys
import time

ENGINES = ("polars", "duckdb", "dask-threads", "dask-cluster")


def files(folder, fmt):
    with open(os.path.join(folder, "manifest.json")) as file:
        manifest = json.load(file)
    return [os.path.join(folder, p["files"][fmt]) for p in sorted(manifest["partitions"], key=lambda p: p["index"])]


def child(engine, fmt, folder, runs=3):
    paths = files(folder, fmt)
    if engine == "polars":
        import polars as pl
        scan = pl.scan_parquet(paths) if fmt == "parquet" else pl.scan_csv(
            paths, schema_overrides={"customer_id": pl.Int64, "sales_amount": pl.Float64})
        query = lambda: scan.group_by("customer_id").agg(pl.col("sales_amount").sum()).collect().to_pandas()  # noqa: E731
    elif engine == "duckdb":
        import duckdb
        reader = "read_parquet" if fmt == "parquet" else "read_csv"
        sql = f"SELECT customer_id, sum(sales_amount) AS sales_amount FROM {reader}($p) GROUP BY customer_id"
        query = lambda: duckdb.execute(sql, {"p": paths}).df()  # noqa: E731
    else:
        import dask.dataframe as dd
        from pyarrow.fs import LocalFileSystem
        scheduler = {"scheduler": "threads"}
        if engine == "dask-cluster":
            from distributed import Client, LocalCluster
            client = Client(LocalCluster(n_workers=os.cpu_count(), threads_per_worker=1, host="127.0.0.1",
                                         dashboard_address="127.0.0.1:0"))
            print(client.dashboard_link, file=sys.stderr)
            scheduler = {}
        columns = ["customer_id", "sales_amount"]
        def query():
            if fmt == "parquet":
                frame = dd.read_parquet(paths, columns=columns, filesystem=LocalFileSystem())
            else:
                frame = dd.read_csv(paths, usecols=columns, dtype={"customer_id": "int64", "sales_amount": "float64"},
                                    engine="pyarrow", blocksize=None)
            totals = frame.groupby("customer_id")["sales_amount"].sum(split_out=1)
            return totals.compute(**scheduler).reset_index()
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        result = query()
        times.append(time.perf_counter() - start)
    print(json.dumps({"engine": engine, "format": fmt, "times": times, "customers": len(result),
                      "total_cents": int(round(result["sales_amount"].sum() * 100))}))


def summarize(runs):
    """Per format and engine: the fastest run, and that over the faster of polars' and DuckDB's."""
    answers = {(r["customers"], r["total_cents"]) for r in runs}
    assert len(answers) == 1, f"the engines disagree: {answers}"
    summary = []
    for fmt in ("parquet", "csv"):
        best = {e: min(min(r["times"]) for r in runs if r["engine"] == e and r["format"] == fmt) for e in ENGINES}
        for engine in ENGINES:
            summary.append({"engine": engine, "format": fmt, "min_s": best[engine],
                            "x_faster_reference": best[engine] / min(best["polars"], best["duckdb"])})
    return summary


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("folder")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    runs = []
    for _ in range(args.repeats):
        for engine in ENGINES:
            for fmt in ("parquet", "csv"):
                out = subprocess.run([sys.executable, __file__, "--child", engine, fmt, args.folder],
                                     capture_output=True, text=True, check=True).stdout
                runs.append(json.loads(out.strip().splitlines()[-1]))
    summary = summarize(runs)
    if args.json:
        print(json.dumps({"folder": args.folder, "repeats": args.repeats, "runs": runs, "summary": summary}))
    else:
        for row in summary:
            print(f"{row['format']:8} {row['engine']:12} {row['min_s']:8.3f} s {row['x_faster_reference']:6.2f}x")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--child"]:
        child(*sys.argv[2:5])
    else:
        main()
