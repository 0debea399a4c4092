"""Exact answers to the course's questions, summed in integer cents while the data is generated.

Nothing here uses Dask: the ground truth must be independent of the code the learner runs,
so that a wrong Dask answer cannot agree with a wrong reference.

Per partition, ``partial_totals`` sums one partition (sparse over customers, so it is cheap to
send between processes); ``Totals`` adds the partitions up in partition order and writes:

- ``customers.parquet``: customer_id, total_cents, transactions (customers who bought anything)
- ``customer_quarter.parquet``: customer_id, quarter ("2024Q1"), total_cents, transactions
  (only nonzero; one row group per quarter, sorted by quarter then customer_id)
- ``cube.parquet``: month ("2024-01"), segment, region, store_id, product_category, total_cents,
  transactions (only nonzero cells); every total per month / quarter / segment / region / store /
  category, and any combination of them, is a sum over this cube
- ``store_category.parquet``: store_id, product_category, total_cents, transactions
- ``daily.parquet``: date, total_cents, transactions (days with transactions)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from utils.datagen.arrow_columns import from_numpy, labels
from utils.datagen.customers import REGIONS, SEGMENTS, customer_ids, ranks_by_id
from utils.datagen.transactions import (
    CATEGORIES,
    DAYS,
    MONTH_STARTS,
    MONTHS,
    N_STORES,
    QUARTER_STARTS,
    QUARTERS,
    START_S,
    Partition,
)

FILTER_THRESHOLD_CENTS = 10_000  # the article's filter: sales_amount > 100
# The cube's axes after the month: segment x region x store (1..50) x category.
CUBE_SHAPE = (len(SEGMENTS), len(REGIONS), N_STORES, len(CATEGORIES))
CUBE_CELLS = int(np.prod(CUBE_SHAPE))


def _exact(sums: np.ndarray) -> np.ndarray:
    # bincount sums in float64; exact while a sum stays below 2**53 cents (~90 trillion dollars).
    return np.rint(sums).astype(np.int64)


def partial_totals(part: Partition, customers: int) -> dict:
    """One partition's contribution: per customer per quarter (sparse), per cube cell for each
    month it touches, per day, and the rows over the article's $100 threshold.

    The rows are sorted by time, so each quarter, month and day is one contiguous run of rows."""
    seconds, cents, ranks = part.seconds, part.cents, part.customer_rank
    quarters = []
    cuts = np.searchsorted(seconds, QUARTER_STARTS, side="left")
    for quarter in range(len(QUARTERS)):
        lo, hi = cuts[quarter], cuts[quarter + 1]
        if lo == hi:
            continue
        rank_cents = np.bincount(ranks[lo:hi], weights=cents[lo:hi], minlength=customers)
        rank_count = np.bincount(ranks[lo:hi], minlength=customers)
        present = np.flatnonzero(rank_count)
        quarters.append((quarter, present, _exact(rank_cents[present]), rank_count[present].astype(np.int64)))
    cell = np.ravel_multi_index(
        (part.segment_code, part.region_code, part.store_id - 1, part.category_code), CUBE_SHAPE
    )
    cuts = np.searchsorted(seconds, MONTH_STARTS, side="left")
    touched = np.flatnonzero(np.diff(cuts))
    first_month = int(touched[0]) if touched.size else 0
    months = int(touched[-1]) - first_month + 1 if touched.size else 0
    cube_cents = np.zeros((months, CUBE_CELLS), dtype=np.int64)
    cube_count = np.zeros((months, CUBE_CELLS), dtype=np.int64)
    for month in touched:
        lo, hi = cuts[month], cuts[month + 1]
        cube_cents[month - first_month] = _exact(np.bincount(cell[lo:hi], weights=cents[lo:hi], minlength=CUBE_CELLS))
        cube_count[month - first_month] = np.bincount(cell[lo:hi], minlength=CUBE_CELLS)
    first_day = int((seconds[0] - START_S) // 86_400) if seconds.size else 0
    last_day = int((seconds[-1] - START_S) // 86_400) if seconds.size else -1
    day_cuts = np.searchsorted(seconds, START_S + 86_400 * np.arange(first_day, last_day + 2), side="left")
    day_count = np.diff(day_cuts)
    day_cents = np.zeros(day_count.size, dtype=np.int64)
    busy = np.flatnonzero(day_count)
    if busy.size:
        day_cents[busy] = np.add.reduceat(cents, day_cuts[busy])
    over = cents > FILTER_THRESHOLD_CENTS
    return {
        "quarters": quarters,
        "first_month": first_month,
        "cube_cents": cube_cents,
        "cube_count": cube_count,
        "first_day": first_day,
        "day_cents": day_cents,
        "day_count": day_count.astype(np.int64),
        "over_cents": int(cents[over].sum()),
        "over_count": int(over.sum()),
    }


@dataclass
class Totals:
    """Running integer totals; ``add`` one partition at a time, in partition (= time) order.

    A quarter's per-customer totals are dense while partitions of that quarter arrive and are
    kept sparse once a later quarter starts, so memory stays about two dense quarters."""

    customers: int
    customer_cents: np.ndarray = field(init=False)  # per rank, whole period
    customer_count: np.ndarray = field(init=False)
    cube_cents: np.ndarray = field(init=False)  # [month, cube cell]
    cube_count: np.ndarray = field(init=False)
    day_cents: np.ndarray = field(init=False)
    day_count: np.ndarray = field(init=False)
    over_threshold_cents: int = 0
    over_threshold_count: int = 0
    _open: dict = field(init=False, default_factory=dict)  # quarter -> (cents, count), dense
    _closed: dict = field(init=False, default_factory=dict)  # quarter -> (ranks, cents, count)

    def __post_init__(self) -> None:
        self.customer_cents = np.zeros(self.customers, dtype=np.int64)
        self.customer_count = np.zeros(self.customers, dtype=np.int64)
        self.cube_cents = np.zeros((len(MONTHS), CUBE_CELLS), dtype=np.int64)
        self.cube_count = np.zeros((len(MONTHS), CUBE_CELLS), dtype=np.int64)
        self.day_cents = np.zeros(DAYS, dtype=np.int64)
        self.day_count = np.zeros(DAYS, dtype=np.int64)

    def _close(self, quarter: int) -> None:
        """Keep a finished quarter sparse, in customer-id order: (ids, cents, count)."""
        cents, count = self._open.pop(quarter)
        by_id = ranks_by_id(self.customers)
        present = by_id[np.flatnonzero(count[by_id])]
        self._closed[quarter] = (customer_ids(present, self.customers), cents[present], count[present])

    def add(self, partial: dict) -> None:
        quarters = partial["quarters"]
        if quarters:
            earliest = quarters[0][0]
            for quarter in [q for q in self._open if q < earliest]:
                self._close(quarter)
        for quarter, ranks, cents, count in quarters:
            if quarter in self._closed:
                raise ValueError(f"partition totals must be added in partition order ({QUARTERS[quarter]} was closed)")
            if quarter not in self._open:
                self._open[quarter] = (
                    np.zeros(self.customers, dtype=np.int64), np.zeros(self.customers, dtype=np.int64),
                )
            dense_cents, dense_count = self._open[quarter]
            dense_cents[ranks] += cents
            dense_count[ranks] += count
            self.customer_cents[ranks] += cents
            self.customer_count[ranks] += count
        months = partial["cube_cents"].shape[0]
        first = partial["first_month"]
        self.cube_cents[first:first + months] += partial["cube_cents"]
        self.cube_count[first:first + months] += partial["cube_count"]
        days = partial["day_cents"].size
        self.day_cents[partial["first_day"]:partial["first_day"] + days] += partial["day_cents"]
        self.day_count[partial["first_day"]:partial["first_day"] + days] += partial["day_count"]
        self.over_threshold_cents += int(partial["over_cents"])
        self.over_threshold_count += int(partial["over_count"])

    def write(self, directory: Path) -> dict[str, int]:
        """Write the tables as Parquet into ``directory``; return the scalar answers."""
        directory.mkdir(parents=True, exist_ok=True)
        for quarter in list(self._open):
            self._close(quarter)
        by_id = ranks_by_id(self.customers)
        ranks = by_id[np.flatnonzero(self.customer_count[by_id])]  # buyers, in customer-id order
        _write(
            directory / "customers.parquet",
            customer_id=customer_ids(ranks, self.customers),
            total_cents=self.customer_cents[ranks],
            transactions=self.customer_count[ranks],
        )
        self._write_customer_quarters(directory / "customer_quarter.parquet")
        pq.write_table(self._cube_table(), directory / "cube.parquet")
        store_cents = self.cube_cents.reshape(-1, *CUBE_SHAPE).sum(axis=(0, 1, 2))  # [store, category]
        store_count = self.cube_count.reshape(-1, *CUBE_SHAPE).sum(axis=(0, 1, 2))
        store, category = np.nonzero(store_count)
        _write(
            directory / "store_category.parquet",
            store_id=(store + 1).astype(np.int64),
            product_category=labels(category, CATEGORIES),
            total_cents=store_cents[store, category],
            transactions=store_count[store, category],
        )
        days = np.flatnonzero(self.day_count)
        _write(
            directory / "daily.parquet",
            date=((START_S // 86_400 + days) * 86_400).astype("datetime64[s]").astype("datetime64[ns]"),
            total_cents=self.day_cents[days],
            transactions=self.day_count[days],
        )
        return {
            "rows": int(self.customer_count.sum()),
            "total_cents": int(self.customer_cents.sum()),
            "customers_with_transactions": int(ranks.size),
            "over_100_count": self.over_threshold_count,
            "over_100_cents": self.over_threshold_cents,
        }

    def _write_customer_quarters(self, path: Path) -> None:
        schema = pa.schema(
            [("customer_id", pa.int64()), ("quarter", pa.string()),
             ("total_cents", pa.int64()), ("transactions", pa.int64())]
        )
        with pq.ParquetWriter(path, schema) as writer:
            for quarter in sorted(self._closed):
                ids, cents, count = self._closed[quarter]
                label = labels(np.zeros(ids.size, dtype=np.int8), [QUARTERS[quarter]])
                writer.write_table(
                    pa.Table.from_arrays([from_numpy(ids), label, from_numpy(cents), from_numpy(count)], schema=schema)
                )
            if not self._closed:
                writer.write_table(schema.empty_table())

    def _cube_table(self) -> pa.Table:
        month, cell = np.nonzero(self.cube_count)
        segment, region, store, category = np.unravel_index(cell, CUBE_SHAPE)
        return _table(
            month=labels(month, MONTHS),
            segment=labels(segment, SEGMENTS),
            region=labels(region, REGIONS),
            store_id=(store + 1).astype(np.int64),
            product_category=labels(category, CATEGORIES),
            total_cents=self.cube_cents[month, cell],
            transactions=self.cube_count[month, cell],
        )


def _table(**columns: np.ndarray | pa.Array) -> pa.Table:
    return pa.table({name: from_numpy(c) if isinstance(c, np.ndarray) else c for name, c in columns.items()})


def _write(path: Path, **columns: np.ndarray | pa.Array) -> None:
    pq.write_table(_table(**columns), path)
