"""Exact answers to the course's questions, summed in integer cents while the data is generated.

Nothing here uses Dask: the ground truth must be independent of the code the learner runs,
so that a wrong Dask answer cannot agree with a wrong reference.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from utils.transactions import CATEGORIES, N_STORES, Partition, customer_ids

FILTER_THRESHOLD_CENTS = 10_000  # the article's filter: sales_amount > 100


@dataclass
class Totals:
    """Running integer totals; ``add`` one partition at a time, in any order."""

    customers: int
    customer_cents: np.ndarray = field(init=False)
    customer_count: np.ndarray = field(init=False)
    cell_cents: np.ndarray = field(init=False)  # [store, category]
    cell_count: np.ndarray = field(init=False)
    over_threshold_cents: int = 0
    over_threshold_count: int = 0

    def __post_init__(self) -> None:
        self.customer_cents = np.zeros(self.customers, dtype=np.int64)
        self.customer_count = np.zeros(self.customers, dtype=np.int64)
        cells = (N_STORES + 1, len(CATEGORIES))
        self.cell_cents = np.zeros(cells, dtype=np.int64)
        self.cell_count = np.zeros(cells, dtype=np.int64)

    def add(self, partial: dict[str, np.ndarray | int]) -> None:
        ranks = partial["ranks"]
        self.customer_cents[ranks] += partial["rank_cents"]
        self.customer_count[ranks] += partial["rank_count"]
        self.cell_cents += partial["cell_cents"]
        self.cell_count += partial["cell_count"]
        self.over_threshold_cents += int(partial["over_cents"])
        self.over_threshold_count += int(partial["over_count"])

    def write(self, directory: Path) -> dict[str, int]:
        """Write the tables as Parquet into ``directory``; return the scalar answers."""
        directory.mkdir(parents=True, exist_ok=True)
        ranks = np.flatnonzero(self.customer_count)
        customers = pd.DataFrame(
            {
                "customer_id": customer_ids(ranks, self.customers),
                "total_cents": self.customer_cents[ranks],
                "transactions": self.customer_count[ranks],
            }
        ).sort_values("customer_id", ignore_index=True)
        customers.to_parquet(directory / "customers.parquet", index=False)
        store, category = np.nonzero(self.cell_count)
        cells = pd.DataFrame(
            {
                "store_id": store.astype(np.int64),
                "product_category": pd.Series(np.asarray(CATEGORIES)[category], dtype="str"),
                "total_cents": self.cell_cents[store, category],
                "transactions": self.cell_count[store, category],
            }
        )
        cells.to_parquet(directory / "store_category.parquet", index=False)
        return {
            "rows": int(self.customer_count.sum()),
            "total_cents": int(self.customer_cents.sum()),
            "customers_with_transactions": int(ranks.size),
            "over_100_count": self.over_threshold_count,
            "over_100_cents": self.over_threshold_cents,
        }


def partial_totals(part: Partition, customers: int) -> dict[str, np.ndarray | int]:
    """One partition's contribution, sparse over customers so it is cheap to send between
    processes even with millions of customers."""
    rank_cents = np.bincount(part.customer_rank, weights=part.cents, minlength=customers)
    rank_count = np.bincount(part.customer_rank, minlength=customers)
    ranks = np.flatnonzero(rank_count)
    cell = part.store_id * len(CATEGORIES) + part.category_code
    n_cells = (N_STORES + 1) * len(CATEGORIES)
    cell_cents = np.bincount(cell, weights=part.cents, minlength=n_cells)
    cell_count = np.bincount(cell, minlength=n_cells)
    over = part.cents > FILTER_THRESHOLD_CENTS
    # bincount sums in float64; exact while a sum stays below 2**53 cents (~90 trillion dollars).
    return {
        "ranks": ranks,
        "rank_cents": np.rint(rank_cents[ranks]).astype(np.int64),
        "rank_count": rank_count[ranks].astype(np.int64),
        "cell_cents": np.rint(cell_cents).astype(np.int64).reshape(N_STORES + 1, -1),
        "cell_count": cell_count.astype(np.int64).reshape(N_STORES + 1, -1),
        "over_cents": int(part.cents[over].sum()),
        "over_count": int(over.sum()),
    }
