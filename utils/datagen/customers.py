"""The customers of the synthetic shop: who they are (segment, region, signup date) and how active
they are at any moment. A pure function of ``(seed, customers)``, so every generator process
computes the same customers without talking to the others.

Customers are indexed by their *rank*: rank 0 has the highest base activity (Zipf-skewed, as in
real retail), and ``customer_ids`` scatters the ranks over the id range. The behaviour model is
written out in data/README.md ("How customers behave"); the constants below are its parameters.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import pyarrow as pa

from utils.datagen.arrow_columns import from_numpy, labels

FIRST_CUSTOMER_ID = 100_000
ZIPF_EXPONENT = 1.1

SEGMENTS: tuple[str, ...] = ("budget", "standard", "premium", "business")
SEGMENT_SHARES = np.array([0.30, 0.40, 0.20, 0.10])
SEGMENT_BASKET = np.array([0.6, 1.0, 1.8, 2.5])  # basket size relative to "standard"
REGIONS: tuple[str, ...] = ("north", "south", "east", "west", "central")
REGION_SHARES = np.array([0.26, 0.22, 0.20, 0.18, 0.14])
N_STORES = 50
STORES_PER_REGION = N_STORES // len(REGIONS)  # stores 1-10 are in the north, 11-20 south, ...
N_CATEGORIES = 8

DAY = 86_400
YEAR_SECONDS = 365.25 * DAY
START_S = 1_704_067_200  # 2024-01-01T00:00:00Z: the first second with transactions
END_S = 1_767_225_600  # 2026-01-01T00:00:00Z: the first second after them
CENTER_S = 1_735_689_600  # 2025-01-01: drift is measured in years from here
EARLY_SIGNUP_FROM_S = 1_609_459_200  # 2021-01-01
LATE_SIGNUP_SHARE = 0.30  # sign up during the two years; the others during 2021-2023
MEAN_LIFETIME_YEARS = 12.0  # exponential time from signup until a customer stops buying
SLOPE_SD = 0.35  # personal drift: activity x exp(slope * years), slope ~ Normal(0, SLOPE_SD) ...
SLOPE_LIMIT = 0.7  # ... clipped to +-2 SD, so no customer more than doubles or halves in a year
LOYAL_SHARE = 0.01  # the busiest 1 % (at least one) signed up before 2024 and never stop
BASKET_SD = 0.3  # personal basket size: lognormal around the segment's, mean 1
HOME_STORE_SHARE = 0.50  # purchases in the customer's home store ...
HOME_REGION_SHARE = 0.35  # ... in any store of their region (home store included) ...
#                           ... and the rest in any of the 50 stores
FAVOURITE_CATEGORY_SHARE = 0.35  # purchases in the favourite category; the rest uniform
NEVER_S = 2**62  # end of activity for customers who never stop

_CUSTOMER_STREAM = 1  # SeedSequence spawn key of the customers (partitions use (0, partition))


@dataclass(frozen=True)
class Customers:
    """Per-rank arrays (index = rank) describing every customer."""

    count: int
    base: np.ndarray  # Zipf base activity, (rank + 1) ** -1.1
    slope: np.ndarray  # personal drift per year
    start_s: np.ndarray  # signup (midnight UTC), epoch seconds
    end_s: np.ndarray  # first second without activity (NEVER_S: never stops)
    segment: np.ndarray  # int8 index into SEGMENTS
    region: np.ndarray  # int8 index into REGIONS
    home_store: np.ndarray  # int8, 1..50, in the customer's region
    favourite: np.ndarray  # int8 index into the product categories
    basket: np.ndarray  # basket-size multiplier (segment x personal)

    def activity(self, seconds: float) -> np.ndarray:
        """Relative purchase rate of every customer at ``seconds``, ignoring signup and lapse."""
        years = (seconds - CENTER_S) / YEAR_SECONDS
        return self.base * np.exp(self.slope * years)


def _id_multiplier(customers: int) -> int:
    """A multiplier coprime with ``customers``: rank -> id is then a bijection that scatters
    the heaviest customers over the id range instead of giving them ids 0, 1, 2."""
    multiplier = 2_654_435_761 % customers or 1
    while np.gcd(multiplier, customers) != 1:
        multiplier += 1
    return multiplier


def customer_ids(ranks: np.ndarray, customers: int) -> np.ndarray:
    """Map ranks (0 = busiest customer) to their customer ids."""
    return FIRST_CUSTOMER_ID + (np.asarray(ranks, dtype=np.int64) * _id_multiplier(customers) + 7) % customers


@lru_cache(maxsize=2)
def ranks_by_id(customers: int) -> np.ndarray:
    """The ranks in customer-id order: ``customer_ids(ranks_by_id(n), n)`` is sorted."""
    ranks = np.empty(customers, dtype=np.int64)
    ranks[customer_ids(np.arange(customers), customers) - FIRST_CUSTOMER_ID] = np.arange(customers)
    ranks.flags.writeable = False  # cached: shared by every caller
    return ranks


@lru_cache(maxsize=2)
def customer_world(seed: int, customers: int) -> Customers:
    """Every customer's attributes, drawn from one stream keyed on the seed alone."""
    rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(_CUSTOMER_STREAM,)))
    n = customers
    base = np.arange(1, n + 1, dtype=np.float64) ** -ZIPF_EXPONENT
    segment = rng.choice(len(SEGMENTS), n, p=SEGMENT_SHARES).astype(np.int8)
    region = rng.choice(len(REGIONS), n, p=REGION_SHARES).astype(np.int8)
    home_store = (region * STORES_PER_REGION + 1 + rng.integers(0, STORES_PER_REGION, n)).astype(np.int8)
    favourite = rng.integers(0, N_CATEGORIES, n, dtype=np.int8)
    slope = np.clip(rng.normal(0.0, SLOPE_SD, n), -SLOPE_LIMIT, SLOPE_LIMIT)
    basket = SEGMENT_BASKET[segment] * np.exp(rng.normal(-BASKET_SD**2 / 2, BASKET_SD, n))
    late = rng.random(n) < LATE_SIGNUP_SHARE
    early_days = (START_S - EARLY_SIGNUP_FROM_S) // DAY
    late_days = (END_S - START_S) // DAY
    signup_day = np.where(
        late,
        START_S // DAY + rng.integers(0, late_days, n),
        EARLY_SIGNUP_FROM_S // DAY + rng.integers(0, early_days, n),
    )
    lifetime_days = np.ceil(rng.exponential(MEAN_LIFETIME_YEARS * 365.25, n)).astype(np.int64)
    start_s = signup_day * DAY
    end_s = start_s + lifetime_days * DAY
    # The busiest customers are long-standing ones who never stop: no single sign-up or departure
    # reshapes the shop's monthly totals, and every moment has at least one active customer
    # whatever the seed and however few customers there are.
    loyal = max(1, int(n * LOYAL_SHARE))
    start_s[:loyal] = np.where(late[:loyal], EARLY_SIGNUP_FROM_S + (start_s[:loyal] - START_S), start_s[:loyal])
    end_s[:loyal] = NEVER_S
    return Customers(n, base, slope, start_s, end_s, segment, region, home_store, favourite, basket)


CUSTOMERS_SCHEMA = pa.schema(
    [
        ("customer_id", pa.int64()),
        ("segment", pa.string()),
        ("region", pa.string()),
        ("signup_date", pa.timestamp("ns")),
    ]
)


def customers_table(seed: int, customers: int) -> pa.Table:
    """The customers table, one row per customer, sorted by customer_id: ``customer_id``,
    ``segment``, ``region``, ``signup_date`` (midnight UTC, nanoseconds like the transactions)."""
    world = customer_world(seed, customers)
    order = ranks_by_id(customers)
    return pa.Table.from_arrays(
        [
            from_numpy(np.arange(FIRST_CUSTOMER_ID, FIRST_CUSTOMER_ID + customers, dtype=np.int64)),
            labels(world.segment[order], SEGMENTS),
            labels(world.region[order], REGIONS),
            from_numpy(world.start_s[order].astype("datetime64[s]").astype("datetime64[ns]")),
        ],
        schema=CUSTOMERS_SCHEMA,
    )
