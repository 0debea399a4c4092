"""A join that needs more memory than a small worker has: notebook 05's worker restarted for memory.

The demonstration must make a worker's nanny restart it on every machine and at every course scale,
so its data does not come from the course's dataset (the ``tiny`` one is a megabyte): the workers
make it from a formula, row by row. The exact answer, total cents per region, comes from the same
formula through NumPy and without any join, so the check tests Dask's join, not a copy of it.
"""

from __future__ import annotations

import dask.dataframe as dd
import numpy as np
import pandas as pd

CUSTOMERS = 1_000_000
REGIONS = ("north", "east", "south", "west")
CUSTOMER_STRIDE = 7_919  # a prime: consecutive transactions belong to scattered customers
CENTS_STRIDE, CENTS_MODULUS = 40_503, 9_999  # amounts from 1 cent to $99.99


def customer_of(row: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """The customer of each transaction number (in ``out`` if given: no temporary copies)."""
    out = np.multiply(row, CUSTOMER_STRIDE, out=out)
    return np.remainder(out, CUSTOMERS, out=out)


def cents_of(row: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """The amount of each transaction number, in whole cents (in ``out`` if given)."""
    out = np.multiply(row, CENTS_STRIDE, out=out)
    np.remainder(out, CENTS_MODULUS, out=out)
    return np.add(out, 1, out=out)


def region_code_of(customer: np.ndarray) -> np.ndarray:
    """Each customer's region, as a position in ``REGIONS``."""
    return customer % len(REGIONS)


def transaction_rows(bounds: tuple[int, int]) -> pd.DataFrame:
    """Transactions ``start`` to ``stop - 1``: customer_id and cents, 16 bytes a row. Made in place, so
    that making a partition needs little more than the partition: the join, not this, must overflow."""
    start, stop = bounds
    row = np.arange(start, stop, dtype=np.int64)
    cents = cents_of(row)
    return pd.DataFrame({"customer_id": customer_of(row, out=row), "cents": cents}, copy=False)


def customer_rows(count: int) -> pd.DataFrame:
    """The customers table: customer_id and region (a categorical of four names)."""
    customer = np.arange(count, dtype=np.int64)
    region = pd.Categorical.from_codes(region_code_of(customer), categories=list(REGIONS))
    return pd.DataFrame({"customer_id": customer, "region": region})


def demo_transactions(rows: int, partitions: int) -> dd.DataFrame:
    """``rows`` transactions in ``partitions`` equal partitions, each made by the worker that reads it.
    ``meta`` is given: without it Dask would make the first partition to learn the columns."""
    edges = np.linspace(0, rows, partitions + 1, dtype=np.int64).tolist()
    return dd.from_map(transaction_rows, list(zip(edges[:-1], edges[1:], strict=True)), meta=transaction_rows((0, 0)))


def demo_customers() -> dd.DataFrame:
    """The customers table as one partition: joined to every transactions partition (a broadcast join)."""
    return dd.from_map(customer_rows, [CUSTOMERS], meta=customer_rows(0))


def region_cents(rows: int, chunk_rows: int = 4_000_000) -> pd.Series:
    """The exact answer for ``rows`` transactions: total cents per region, counted with NumPy in chunks
    (no join, no Dask)."""
    totals = np.zeros(len(REGIONS), dtype=np.int64)
    for start in range(0, rows, chunk_rows):
        row = np.arange(start, min(start + chunk_rows, rows), dtype=np.int64)
        codes = region_code_of(customer_of(row))
        for code in range(len(REGIONS)):
            totals[code] += int(cents_of(row[codes == code]).sum())
    return pd.Series(totals, index=pd.Index(REGIONS, name="region"), name="cents")
