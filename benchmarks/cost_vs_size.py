"""Cost per row of the course's groupby-sum as the data grows, on one cluster, side by side.

    python benchmarks/cost_vs_size.py                 # 1 M, 10 M and 100 M rows (about 7 GB of disk)
    python benchmarks/cost_vs_size.py --quick         # 1 M and 3 M rows, for development

For each size it generates the transactions (CSV + Parquet, into a scratch folder that is removed
afterwards), then times total sales per customer (``split_out=1``) from Parquet and from CSV read
with the course's partition rule, each checked against the generator's ground truth. Prints a
table naming the hardware. Nothing is asserted: timings are reported, not tested.
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time
from pathlib import Path

import dask.dataframe as dd
import pandas as pd

import utils
from utils.checks import check_customer_totals
from utils.dataset import REPO_ROOT, human_bytes
from utils.machine import hardware_label
from utils.partitions import advice_for_client

FULL = (1_000_000, 10_000_000, 100_000_000)
QUICK = (1_000_000, 3_000_000)
ROWS_PER_PARTITION = 500_000  # part files of about 35 MB of CSV, like the course's scales


def timed_groupby(frame: dd.DataFrame, dataset: utils.Dataset) -> float:
    start = time.perf_counter()
    totals = frame.groupby("customer_id")["sales_amount"].sum(split_out=1).compute()
    seconds = time.perf_counter() - start
    check_customer_totals(utils.to_pandas(totals), dataset)
    return seconds


def measure(rows: int, client, root: Path) -> dict:
    partitions = max(4, rows // ROWS_PER_PARTITION)
    start = time.perf_counter()
    dataset = utils.ensure_dataset("small", root, rows=rows, partitions=partitions, customers=max(500, rows // 100),
                                   progress=False)
    generate_seconds = time.perf_counter() - start
    first = dataset.csv_files[0]
    memory_per_csv_byte = pd.read_csv(first, **dataset.csv_kwargs).memory_usage(deep=True).sum() / first.stat().st_size
    blocksize = advice_for_client(client).blocksize(memory_per_csv_byte)
    csv = dd.read_csv(dataset.csv_files, blocksize=blocksize, **dataset.csv_kwargs)
    parquet = dd.read_parquet(dataset.parquet_dir, columns=["customer_id", "sales_amount"])
    result = {
        "rows": rows,
        "data on disk (CSV + Parquet)": human_bytes(dataset.size_bytes("csv") + dataset.size_bytes("parquet")),
        "generate s": generate_seconds,
        "Parquet s": timed_groupby(parquet, dataset),
        "CSV s": timed_groupby(csv, dataset),
        "CSV partitions": csv.npartitions,
    }
    result["Parquet ns/row"] = result["Parquet s"] / rows * 1e9
    result["CSV ns/row"] = result["CSV s"] / rows * 1e9
    shutil.rmtree(dataset.path)
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="1 M and 3 M rows only")
    parser.add_argument("--rows", type=int, nargs="+", help="row counts to measure (default 1 M, 10 M, 100 M)")
    args = parser.parse_args(argv)
    sizes = args.rows or (QUICK if args.quick else FULL)
    client = utils.start_client(quiet=True, local=True)
    scratch = Path(tempfile.mkdtemp(prefix="cost-vs-size-", dir=REPO_ROOT / "data"))
    try:
        table = pd.DataFrame([measure(rows, client, scratch) for rows in sizes])
        print(f"Hardware: {hardware_label(client)}")
        print(table.round(2).to_string(index=False))
    finally:
        utils.shutdown(client)
        shutil.rmtree(scratch, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
