"""One partition of synthetic customer transactions, a pure function of ``(seed, partition)``.

Being a pure function is what lets any partition be generated alone, in parallel, and
regenerated identically later. Amounts are drawn in integer cents so the ground truth is exact.

The partitions are time-ordered: the rows are spread over the months of 2024-2025 in proportion
to how active the customers are in each month, partition ``i`` holds the rows
``partition_rows(...)`` of that sequence, so it covers one contiguous time slice, and its rows are
sorted by timestamp (``transaction_id`` increases with time). Who buys, where, what and for how
much follows the customers of ``utils.datagen.customers`` (model: data/README.md).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import pyarrow as pa

from utils.datagen.arrow_columns import from_numpy, labels
from utils.datagen.customers import (
    CENTER_S,
    END_S,
    FAVOURITE_CATEGORY_SHARE,
    FIRST_CUSTOMER_ID,
    HOME_REGION_SHARE,
    HOME_STORE_SHARE,
    N_STORES,
    START_S,
    STORES_PER_REGION,
    YEAR_SECONDS,
    ZIPF_EXPONENT,
    Customers,
    customer_ids,
    customer_world,
)

__all__ = [
    "CATEGORIES", "CATEGORY_PRICE_FACTOR", "FIRST_CUSTOMER_ID", "MONTHS", "N_STORES", "QUARTERS", "SCHEMA",
    "ZIPF_EXPONENT", "Partition", "customer_ids", "generate_partition", "month_row_bounds", "partition_rows",
]

CATEGORIES: tuple[str, ...] = (
    "beauty", "books", "clothing", "electronics", "grocery", "home", "sports", "toys",
)
# Typical basket size differs per category, so per-category questions have distinct answers.
CATEGORY_PRICE_FACTOR = np.array([0.8, 0.5, 1.2, 3.0, 0.6, 1.5, 1.1, 0.7])

# The calendar: 24 months, 2024-01 .. 2025-12 (UTC), and their quarters.
MONTH_STARTS = np.arange("2024-01", "2026-02", dtype="datetime64[M]").astype("datetime64[s]").astype(np.int64)
MONTHS: tuple[str, ...] = tuple(str(m) for m in np.arange("2024-01", "2026-01", dtype="datetime64[M]"))
QUARTERS: tuple[str, ...] = tuple(f"{m[:4]}Q{(int(m[5:]) - 1) // 3 + 1}" for m in MONTHS[::3])
QUARTER_STARTS = MONTH_STARTS[::3]
DAYS = (END_S - START_S) // 86_400
# Seasonality of the whole shop: +15 % in December, -15 % in June.
SEASON = 1 + 0.15 * np.cos(2 * np.pi * (np.arange(len(MONTHS)) % 12 + 1 - 12) / 12)
assert MONTH_STARTS[0] == START_S and MONTH_STARTS[-1] == END_S and len(MONTHS) == 24

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

_PARTITION_STREAM = 0  # SeedSequence spawn key (0, partition); the customers use (1,)


def _choice_table(options: list[tuple[float, np.ndarray]], draws: int) -> np.ndarray:
    """``table[key, x]`` for ``x`` uniform in ``range(draws)``: option ``j`` (a column of values per
    key, or a row of equally likely values) with its exact probability. One gather then picks."""
    columns, used = [], 0
    for share, values in options:
        count = round(share * draws)
        values = np.atleast_2d(values)
        if count % values.shape[1]:
            raise ValueError("each option's draws must split evenly over its values")
        columns.append(np.tile(values, count // values.shape[1]))
        used += count
    if used != draws:
        raise ValueError("the shares must add up to 1")
    return np.concatenate(columns, axis=1)


_STORE_DRAWS = 1_000
_home = np.arange(1, N_STORES + 1)[:, None]
# Row: the customer's home store - 1; column: a uniform draw. Home store / a store of the home
# region / any store, with probabilities HOME_STORE_SHARE / HOME_REGION_SHARE / the rest.
STORE_TABLE = _choice_table(
    [
        (HOME_STORE_SHARE, _home),
        (HOME_REGION_SHARE, (_home - 1) // STORES_PER_REGION * STORES_PER_REGION + np.arange(1, STORES_PER_REGION + 1)),
        (1 - HOME_STORE_SHARE - HOME_REGION_SHARE, np.broadcast_to(np.arange(1, N_STORES + 1), (N_STORES, N_STORES))),
    ],
    _STORE_DRAWS,
).astype(np.int8)
_CATEGORY_DRAWS = 800
# Row: the customer's favourite category; column: a uniform draw. The favourite with probability
# FAVOURITE_CATEGORY_SHARE, otherwise any category.
CATEGORY_TABLE = _choice_table(
    [
        (FAVOURITE_CATEGORY_SHARE, np.arange(len(CATEGORIES))[:, None]),
        (1 - FAVOURITE_CATEGORY_SHARE, np.broadcast_to(np.arange(len(CATEGORIES)), (len(CATEGORIES),) * 2)),
    ],
    _CATEGORY_DRAWS,
).astype(np.int8)
_BLOCK = 1 << 20  # customers per block when summing over all of them (bounds temporary memory)


@dataclass(frozen=True)
class Partition:
    """The generated columns, plus the integer codes the ground truth is summed from."""

    table: pa.Table
    customer_rank: np.ndarray
    store_id: np.ndarray
    category_code: np.ndarray
    cents: np.ndarray
    seconds: np.ndarray  # timestamp, epoch seconds, sorted
    segment_code: np.ndarray
    region_code: np.ndarray


def partition_rows(total_rows: int, partitions: int, partition: int) -> tuple[int, int]:
    """First row and row count of one partition (the first ``rows % partitions`` get one more)."""
    base, extra = divmod(total_rows, partitions)
    start = partition * base + min(partition, extra)
    return start, base + (1 if partition < extra else 0)


def _overlap(world: Customers, lo: int, hi: int, block: slice = slice(None)) -> np.ndarray:
    """Seconds of ``[lo, hi)`` during which each customer (of ``block``) is active."""
    overlap = np.minimum(world.end_s[block], hi)
    overlap -= np.maximum(world.start_s[block], lo)
    return np.maximum(overlap, 0, out=overlap)


@lru_cache(maxsize=2)
def _month_activity(seed: int, customers: int, month: int) -> np.ndarray:
    """Every customer's purchase rate in ``month`` (drift evaluated at the month's middle)."""
    middle = (MONTH_STARTS[month] + MONTH_STARTS[month + 1]) / 2
    return customer_world(seed, customers).activity(middle)


@lru_cache(maxsize=4)
def _month_masses(seed: int, customers: int) -> np.ndarray:
    """Expected share of all purchases in each month (unnormalised): the season times the sum
    over customers of activity x active seconds in the month."""
    world = customer_world(seed, customers)
    masses = np.zeros(len(MONTHS))
    for month in range(len(MONTHS)):
        middle = (MONTH_STARTS[month] + MONTH_STARTS[month + 1]) / 2
        years = (middle - CENTER_S) / YEAR_SECONDS
        total = 0.0
        for first in range(0, customers, _BLOCK):
            block = slice(first, first + _BLOCK)
            rate = world.base[block] * np.exp(world.slope[block] * years)
            total += float((rate * _overlap(world, MONTH_STARTS[month], MONTH_STARTS[month + 1], block)).sum())
        masses[month] = SEASON[month] * total
    return masses


@lru_cache(maxsize=8)
def month_row_bounds(seed: int, customers: int, total_rows: int) -> np.ndarray:
    """``bounds[m]`` .. ``bounds[m + 1]``: the (global) rows that fall in month ``m``."""
    cumulative = np.cumsum(_month_masses(seed, customers))
    bounds = np.zeros(len(MONTHS) + 1, dtype=np.int64)
    bounds[1:] = np.rint(total_rows * cumulative / cumulative[-1]).astype(np.int64)
    bounds[-1] = total_rows
    return bounds


def _draw_slice(
    rng: np.random.Generator, world: Customers, activity: np.ndarray, lo: int, hi: int, n: int
) -> tuple[np.ndarray, np.ndarray]:
    """``n`` purchases in the seconds ``[lo, hi)`` of one month: who (ranks) and when (sorted).

    A customer is chosen with probability proportional to activity x active seconds in the slice;
    a customer who signs up or stops inside the slice gets a time within their active part."""
    weights = activity * _overlap(world, lo, hi)
    cdf = np.cumsum(weights, out=weights)
    total = cdf[-1]
    last = int(np.searchsorted(cdf, total, side="left"))  # the last customer with weight > 0
    # n sorted uniforms (cumulative exponential spacings) make the search cache-friendly; the
    # permutation then puts the customers in random order again.
    spacings = np.cumsum(rng.standard_exponential(n + 1))
    ranks = np.searchsorted(cdf, spacings[:n] * (total / spacings[n]), side="right")
    np.minimum(ranks, last, out=ranks)
    ranks = rng.permutation(ranks)
    seconds = np.sort(rng.integers(lo, hi, n, dtype=np.int64))
    # Times are independent of who buys, except for customers active in part of the slice.
    partial = ((world.start_s > lo) | (world.end_s < hi))[ranks]  # per customer, then per row
    if not partial.any():
        return ranks, seconds
    late_ranks = ranks[partial]
    first = np.maximum(world.start_s[late_ranks], lo)
    span = np.minimum(world.end_s[late_ranks], hi) - first
    late_seconds = first + np.minimum((rng.random(late_ranks.size) * span).astype(np.int64), span - 1)
    order = np.argsort(late_seconds, kind="stable")
    late_ranks, late_seconds = late_ranks[order], late_seconds[order]
    keep = ~partial
    ranks, seconds = ranks[keep], seconds[keep]  # still sorted: dropped positions are random
    where = np.searchsorted(seconds, late_seconds, side="right")
    return np.insert(ranks, where, late_ranks), np.insert(seconds, where, late_seconds)


def generate_partition(
    seed: int, partition: int, total_rows: int, partitions: int, customers: int
) -> Partition:
    """Generate partition ``partition`` of ``partitions``; identical for identical arguments."""
    world = customer_world(seed, customers)
    bounds = month_row_bounds(seed, customers, total_rows)
    start, n = partition_rows(total_rows, partitions, partition)
    rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(_PARTITION_STREAM, partition)))
    ranks, seconds = [], []
    row, stop = start, start + n
    month = int(np.searchsorted(bounds, start, side="right")) - 1
    while row < stop:
        while bounds[month + 1] <= row:  # months without rows (only with very few rows)
            month += 1
        upto = min(stop, int(bounds[month + 1]))
        # This partition's share of the month's rows gets the same share of the month's seconds.
        first, rows_in_month = int(bounds[month]), int(bounds[month + 1] - bounds[month])
        length = int(MONTH_STARTS[month + 1] - MONTH_STARTS[month])
        lo = int(MONTH_STARTS[month]) + length * (row - first) // rows_in_month
        hi = int(MONTH_STARTS[month]) + length * (upto - first) // rows_in_month
        hi = max(hi, lo + 1)
        activity = _month_activity(seed, customers, month)
        r, s = _draw_slice(rng, world, activity, lo, hi, upto - row)
        ranks.append(r)
        seconds.append(s)
        row = upto
    rank = np.concatenate(ranks) if len(ranks) > 1 else ranks[0]
    second = np.concatenate(seconds) if len(seconds) > 1 else seconds[0]

    segment = world.segment[rank]
    region = world.region[rank]
    key = world.home_store[rank].astype(np.int64) - 1
    key *= _STORE_DRAWS
    key += rng.integers(0, _STORE_DRAWS, n, dtype=np.int64)
    store = STORE_TABLE.ravel()[key].astype(np.int64)
    key = world.favourite[rank].astype(np.int64) * _CATEGORY_DRAWS
    key += rng.integers(0, _CATEGORY_DRAWS, n, dtype=np.int64)
    category = CATEGORY_TABLE.ravel()[key]
    dollars = rng.lognormal(3.0, 0.9, n)
    dollars *= CATEGORY_PRICE_FACTOR[category]
    dollars *= world.basket[rank]
    cents = np.maximum(np.rint(dollars * 100.0), 1).astype(np.int64)
    table = pa.Table.from_arrays(
        [
            from_numpy(np.arange(start, start + n, dtype=np.int64)),
            from_numpy(customer_ids(rank, customers)),
            from_numpy(second.astype("datetime64[s]")),
            from_numpy(store),
            labels(category, CATEGORIES),
            from_numpy(cents / 100.0),
        ],
        schema=SCHEMA,
    )
    return Partition(table, rank, store, category, cents, second, segment, region)
