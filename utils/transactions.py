"""One partition of synthetic customer transactions, a pure function of ``(seed, partition)``.

Being a pure function is what lets any partition be generated alone, in parallel, and
regenerated identically later. Amounts are drawn in integer cents so the ground truth is exact.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import pyarrow as pa

CATEGORIES: tuple[str, ...] = (
    "beauty", "books", "clothing", "electronics", "grocery", "home", "sports", "toys",
)
# Typical basket size differs per category, so per-category questions have distinct answers.
CATEGORY_PRICE_FACTOR = np.array([0.8, 0.5, 1.2, 3.0, 0.6, 1.5, 1.1, 0.7])
N_STORES = 50
FIRST_CUSTOMER_ID = 100_000
ZIPF_EXPONENT = 1.1
YEAR_START_S = 1_735_689_600  # 2025-01-01T00:00:00Z
YEAR_SECONDS = 365 * 86_400

SCHEMA = pa.schema(
    [
        ("transaction_id", pa.int64()),
        ("customer_id", pa.int64()),
        ("timestamp", pa.timestamp("s")),
        ("store_id", pa.int64()),
        ("product_category", pa.string()),
        ("sales_amount", pa.float64()),
    ]
)


@dataclass(frozen=True)
class Partition:
    """The generated columns, plus the integer-cent amounts the ground truth is summed from."""

    table: pa.Table
    customer_rank: np.ndarray
    store_id: np.ndarray
    category_code: np.ndarray
    cents: np.ndarray


@lru_cache(maxsize=4)
def _zipf_cdf(customers: int) -> np.ndarray:
    weights = 1.0 / np.arange(1, customers + 1, dtype=np.float64) ** ZIPF_EXPONENT
    cdf = np.cumsum(weights)
    return cdf / cdf[-1]


def _id_multiplier(customers: int) -> int:
    """A multiplier coprime with ``customers``: rank -> id is then a bijection that scatters
    the heaviest customers over the id range instead of giving them ids 0, 1, 2."""
    multiplier = 2_654_435_761 % customers or 1
    while np.gcd(multiplier, customers) != 1:
        multiplier += 1
    return multiplier


def customer_ids(ranks: np.ndarray, customers: int) -> np.ndarray:
    """Map Zipf ranks (0 = busiest customer) to their customer ids."""
    return FIRST_CUSTOMER_ID + (ranks * _id_multiplier(customers) + 7) % customers


def partition_rows(total_rows: int, partitions: int, partition: int) -> tuple[int, int]:
    """First row and row count of one partition (the first ``rows % partitions`` get one more)."""
    base, extra = divmod(total_rows, partitions)
    start = partition * base + min(partition, extra)
    return start, base + (1 if partition < extra else 0)


def generate_partition(
    seed: int, partition: int, total_rows: int, partitions: int, customers: int
) -> Partition:
    """Generate partition ``partition`` of ``partitions``; identical for identical arguments."""
    start, n = partition_rows(total_rows, partitions, partition)
    rng = np.random.default_rng([seed, partition])
    rank = np.searchsorted(_zipf_cdf(customers), rng.random(n), side="right")
    np.minimum(rank, customers - 1, out=rank)
    category = rng.integers(0, len(CATEGORIES), n, dtype=np.int8)
    store = rng.integers(1, N_STORES + 1, n, dtype=np.int64)
    dollars = rng.lognormal(3.0, 0.9, n) * CATEGORY_PRICE_FACTOR[category]
    cents = np.maximum(np.rint(dollars * 100.0), 1).astype(np.int64)
    seconds = YEAR_START_S + rng.integers(0, YEAR_SECONDS, n, dtype=np.int64)
    table = pa.Table.from_arrays(
        [
            pa.array(np.arange(start, start + n, dtype=np.int64)),
            pa.array(customer_ids(rank, customers)),
            pa.array(seconds.astype("datetime64[s]")),
            pa.array(store),
            pa.DictionaryArray.from_arrays(pa.array(category), pa.array(CATEGORIES)).cast(
                pa.string()
            ),
            pa.array(cents / 100.0),
        ],
        schema=SCHEMA,
    )
    return Partition(table, rank, store, category, cents)
