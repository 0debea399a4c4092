"""The data's world: the customers table, two time-ordered calendar years, behaviour that persists
and drifts, and every new ground truth, each compared with an independent pandas computation over
the written files (CSV and Parquet, joined with the written customers table)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest

from utils import checks
from utils.datagen.customers import FIRST_CUSTOMER_ID, REGIONS, SEGMENTS, STORES_PER_REGION, customer_world, ranks_by_id
from utils.datagen.manifest import FORMAT_VERSION, is_complete
from utils.datagen.transactions import generate_partition
from utils.dataset import TOTALS_KEYS, Dataset, ensure_dataset

START, END = pd.Timestamp("2024-01-01"), pd.Timestamp("2026-01-01")


def _cents(amounts: pd.Series) -> pd.Series:
    return (amounts * 100).round().astype("int64")


@pytest.fixture(scope="module")
def customers(tiny_dataset: Dataset) -> pd.DataFrame:
    return pd.read_parquet(tiny_dataset.customers_parquet)


@pytest.fixture(scope="module")
def from_csv(tiny_dataset: Dataset) -> pd.DataFrame:
    """Every transaction read from the CSV files, joined with the customers CSV, plain pandas."""
    df = pd.concat([pd.read_csv(p, **tiny_dataset.csv_kwargs) for p in tiny_dataset.csv_files], ignore_index=True)
    people = pd.read_csv(tiny_dataset.customers_csv, **tiny_dataset.customers_csv_kwargs)
    df = df.merge(people, on="customer_id", how="left", validate="many_to_one")
    df["cents"] = _cents(df["sales_amount"])
    df["month"] = df["timestamp"].dt.strftime("%Y-%m")
    df["quarter"] = df["timestamp"].dt.to_period("Q").astype("str")
    return df


@pytest.fixture(scope="module")
def from_parquet(tiny_dataset: Dataset, customers: pd.DataFrame) -> pd.DataFrame:
    """The same from the Parquet files and the customers Parquet file."""
    df = pd.read_parquet(tiny_dataset.parquet_dir).merge(customers, on="customer_id", how="left")
    df["cents"] = _cents(df["sales_amount"])
    df["month"] = df["timestamp"].dt.strftime("%Y-%m")
    df["quarter"] = df["timestamp"].dt.to_period("Q").astype("str")
    return df


# --- the customers table --------------------------------------------------------------------------

def test_customers_table_in_both_formats_with_the_documented_schema(tiny_dataset, customers):
    assert list(customers.columns) == ["customer_id", "segment", "region", "signup_date"]
    assert str(customers["customer_id"].dtype) == "int64"
    assert pd.api.types.is_string_dtype(customers["segment"]) and pd.api.types.is_string_dtype(customers["region"])
    assert str(customers["signup_date"].dtype) == "datetime64[ns]"
    assert (customers["signup_date"] == customers["signup_date"].dt.normalize()).all(), "day resolution"
    assert len(customers) == tiny_dataset.customer_count == tiny_dataset.manifest["params"]["customers"] == 500
    assert customers["customer_id"].tolist() == list(range(FIRST_CUSTOMER_ID, FIRST_CUSTOMER_ID + 500))
    assert set(customers["segment"]) == set(SEGMENTS) and set(customers["region"]) == set(REGIONS)
    from_csv = pd.read_csv(tiny_dataset.customers_csv, **tiny_dataset.customers_csv_kwargs)
    assert from_csv["customer_id"].equals(customers["customer_id"])
    assert (from_csv[["segment", "region"]].to_numpy() == customers[["segment", "region"]].to_numpy()).all()
    assert (from_csv["signup_date"].to_numpy() == customers["signup_date"].to_numpy()).all()
    for rel in ("customers/customers.parquet", "customers/customers.csv"):
        assert rel in tiny_dataset.manifest["files"], "the checksums must cover the customers table"


def test_every_buyer_is_a_customer_and_some_customers_never_buy(from_parquet, customers):
    assert from_parquet["segment"].notna().all(), "a transaction whose customer is not in the table"
    buyers = from_parquet["customer_id"].nunique()
    inner = from_parquet[["customer_id"]].drop_duplicates().merge(customers, on="customer_id", how="inner")
    left = customers.merge(from_parquet[["customer_id", "cents"]], on="customer_id", how="left")
    assert len(inner) == buyers
    assert left["cents"].isna().sum() == len(customers) - buyers > 0, "inner and left joins must differ"


def test_no_purchase_before_signup(from_parquet):
    first = from_parquet.groupby("customer_id").agg(first=("timestamp", "min"), signup=("signup_date", "first"))
    assert (first["first"] >= first["signup"]).all()
    assert (first["signup"] > START).any(), "some customers sign up during the two years"


def test_customers_depend_on_the_seed_only(tmp_path, tiny_dataset):
    other = ensure_dataset("tiny", tmp_path, rows=9_000, partitions=3)
    assert other.customers_parquet.read_bytes() == tiny_dataset.customers_parquet.read_bytes()
    reseeded = ensure_dataset("tiny", tmp_path / "b", seed=43, formats=["parquet"])
    assert reseeded.customers_parquet.read_bytes() != tiny_dataset.customers_parquet.read_bytes()
    assert reseeded.customers_csv.is_file(), "the customers table comes in both formats"


# --- time ---------------------------------------------------------------------------------------

def test_two_calendar_years_time_ordered_within_and_across_partitions(tiny_dataset):
    previous_last, previous_id = None, -1
    for number, path in enumerate(tiny_dataset.parquet_files):
        part = pd.read_parquet(path)
        assert part["timestamp"].is_monotonic_increasing, f"partition {number} is not sorted by time"
        assert part["transaction_id"].is_monotonic_increasing and part["transaction_id"].iloc[0] == previous_id + 1
        if previous_last is not None:
            assert part["timestamp"].iloc[0] > previous_last, f"partition {number} overlaps the one before"
        stats = pq.ParquetFile(path).metadata.row_group(0).column(2).statistics
        assert stats.has_min_max and stats.min == part["timestamp"].iloc[0]
        manifest = tiny_dataset.manifest["partitions"][number]["timestamps"]
        assert [pd.Timestamp(t).tz_localize(None) for t in manifest] == [part["timestamp"].iloc[0],
                                                                          part["timestamp"].iloc[-1]]
        previous_last, previous_id = part["timestamp"].iloc[-1], part["transaction_id"].iloc[-1]
    df = pd.read_parquet(tiny_dataset.parquet_dir)
    assert df["timestamp"].min() >= START and df["timestamp"].max() < END
    assert df["timestamp"].dt.to_period("M").nunique() == 24, "every month of 2024 and 2025 has transactions"
    csv = pd.read_csv(tiny_dataset.csv_files[1], **tiny_dataset.csv_kwargs)
    assert csv["timestamp"].is_monotonic_increasing


def test_one_partition_alone_has_the_same_time_slice(tiny_dataset):
    params = tiny_dataset.manifest["params"]
    alone = generate_partition(params["seed"], 3, params["rows"], params["partitions"], params["customers"])
    written = pq.read_table(tiny_dataset.parquet_files[3])
    for column in ("store_id", "product_category", "sales_amount", "customer_id"):
        assert written[column].equals(alone.table[column])
    assert (written["timestamp"].to_numpy() == alone.table["timestamp"].to_numpy()).all()


# --- behaviour that persists and drifts (what the training notebook learns) ----------------------

@pytest.fixture(scope="module")
def mid_size(tmp_path_factory) -> Dataset:
    """300 k rows, 3,000 customers: big enough for per-customer statistics, generated in ~0.2 s."""
    return ensure_dataset("tiny", tmp_path_factory.mktemp("mid"), rows=300_000, customers=3_000,
                          formats=["parquet"], workers=1)


def _wide(ds: Dataset, value: str) -> pd.DataFrame:
    table = ds.customer_quarter_totals().pivot(index="customer_id", columns="quarter", values=value)
    return table.reindex(index=pd.read_parquet(ds.customers_parquet)["customer_id"]).fillna(0)


def test_spend_next_quarter_follows_this_quarter(mid_size):
    spend, count = _wide(mid_size, "total_cents"), _wide(mid_size, "transactions")
    quarters = list(spend.columns)
    assert quarters == ["2024Q1", "2024Q2", "2024Q3", "2024Q4", "2025Q1", "2025Q2", "2025Q3", "2025Q4"]
    for this, following in zip(quarters[:-1], quarters[1:], strict=True):
        pearson = spend[this].corr(spend[following])
        spearman = spend[this].rank().corr(spend[following].rank())
        busy = count[this] >= 10
        spearman_busy = spend[this][busy].rank().corr(spend[following][busy].rank())
        assert pearson > 0.9 and spearman > 0.5 and spearman_busy > 0.7, (this, pearson, spearman, spearman_busy)


def test_drift_is_personal_and_matches_the_customers_slope(mid_size):
    spend, count = _wide(mid_size, "total_cents"), _wide(mid_size, "transactions")
    first, second = spend.iloc[:, :4].sum(axis=1), spend.iloc[:, 4:].sum(axis=1)
    heavy = (count.iloc[:, :4].sum(axis=1) >= 200) & (second > 0)
    log_ratio = np.log(second[heavy] / first[heavy])
    params = mid_size.manifest["params"]
    slope = customer_world(params["seed"], params["customers"]).slope[ranks_by_id(params["customers"])]
    slope = pd.Series(slope, index=spend.index)[log_ratio.index]
    assert heavy.sum() > 30
    assert log_ratio.std() > 0.2, "customers must change at different rates"
    assert log_ratio.corr(slope) > 0.6


def test_segment_sets_basket_size_and_region_sets_stores(mid_size):
    df = pd.read_parquet(mid_size.parquet_dir).merge(pd.read_parquet(mid_size.customers_parquet), on="customer_id")
    basket = df.groupby("segment")["sales_amount"].mean()
    assert basket["budget"] < basket["standard"] < basket["premium"] < basket["business"]
    assert 2 < basket["premium"] / basket["budget"] < 4.5
    store_region = np.asarray(REGIONS)[(df["store_id"].to_numpy() - 1) // STORES_PER_REGION]
    assert (store_region == df["region"].to_numpy()).mean() > 0.8


def test_customers_are_zipf_skewed_over_the_whole_period(mid_size):
    counts = mid_size.customer_totals_cents()["transactions"].sort_values(ascending=False)
    assert counts.iloc[:30].sum() / counts.sum() > 0.4, "the top 1 % of customers make a large share"


# --- ground truth against independent pandas ------------------------------------------------------

CUBE_KEYS = ["month", "segment", "region", "store_id", "product_category"]


@pytest.mark.parametrize("source", ["from_csv", "from_parquet"])
def test_cube_equals_pandas_over_the_written_files(tiny_dataset, source, request):
    df = request.getfixturevalue(source)
    expected = df.groupby(CUBE_KEYS)["cents"].agg(total_cents="sum", transactions="size")
    cube = pd.read_parquet(tiny_dataset.path / "ground_truth" / "cube.parquet").set_index(CUBE_KEYS).sort_index()
    assert cube.index.equals(expected.index)
    assert (cube.to_numpy() == expected.to_numpy()).all()


@pytest.mark.parametrize(
    "by",
    [("segment",), ("region",), ("month",), ("quarter",), ("quarter", "segment"), ("store_id", "month"),
     ("region", "product_category"), ("product_category", "region", "quarter"), tuple(TOTALS_KEYS)],
)
def test_totals_by_any_keys_equals_pandas(tiny_dataset, from_csv, by):
    expected = from_csv.groupby(list(by))["cents"].agg(total_cents="sum", transactions="size")
    truth = tiny_dataset.totals_by(*by)
    assert list(truth.index.names) == list(by) and list(truth.columns) == ["total_cents", "transactions"]
    assert truth.index.is_monotonic_increasing
    assert truth.index.equals(expected.index)
    assert (truth.to_numpy() == expected.to_numpy()).all()


def test_store_category_and_customer_totals_still_match(tiny_dataset, from_parquet):
    cells = from_parquet.groupby(["store_id", "product_category"])["cents"].agg(["sum", "size"])
    stored = pd.read_parquet(tiny_dataset.path / "ground_truth" / "store_category.parquet")
    assert (stored[["total_cents", "transactions"]].to_numpy() == cells.to_numpy()).all()
    people = from_parquet.groupby("customer_id")["cents"].agg(["sum", "size"])
    truth = tiny_dataset.customer_totals_cents().set_index("customer_id")
    assert (truth.to_numpy() == people.to_numpy()).all() and truth.index.equals(people.index)


@pytest.mark.parametrize("source", ["from_csv", "from_parquet"])
def test_customer_quarter_totals_equal_pandas(tiny_dataset, source, request):
    df = request.getfixturevalue(source)
    expected = df.groupby(["customer_id", "quarter"])["cents"].agg(total_cents="sum", transactions="size")
    truth = tiny_dataset.customer_quarter_totals()
    assert list(truth.columns) == ["customer_id", "quarter", "total_cents", "transactions"]
    assert str(truth["customer_id"].dtype) == "int64" and (truth["transactions"] > 0).all()
    truth = truth.set_index(["customer_id", "quarter"])
    assert truth.index.equals(expected.index)
    assert (truth.to_numpy() == expected.to_numpy()).all()
    assert truth.groupby(level="customer_id")["total_cents"].sum().equals(
        tiny_dataset.customer_totals_cents().set_index("customer_id")["total_cents"]
    )


def test_daily_totals_equal_pandas(tiny_dataset, from_parquet):
    expected = from_parquet.groupby(from_parquet["timestamp"].dt.normalize())["cents"].agg(["sum", "size"])
    truth = tiny_dataset.daily_totals()
    assert truth.index.equals(expected.index.rename("date"))
    assert (truth.to_numpy() == expected.to_numpy()).all()


def test_totals_by_rejects_unknown_empty_and_repeated_keys(tiny_dataset):
    for bad in [(), ("customer_id",), ("month", "month"), ("week",)]:
        with pytest.raises(ValueError, match="group by a non-empty subset of"):
            tiny_dataset.totals_by(*bad)


@pytest.mark.parametrize("by", [["segment"], ["quarter", "segment"], ["month", "store_id"], ["region"]])
def test_check_grouped_grades_the_new_keys(from_parquet, tiny_dataset, by, capsys):
    result = from_parquet.groupby(by)["sales_amount"].sum()
    checks.check_grouped(result, tiny_dataset, by, "sum")
    assert capsys.readouterr().out.startswith("✓")
    with pytest.raises(checks.CheckFailed):
        checks.check_grouped(result * 1.01, tiny_dataset, by, "sum")


# --- the format version -------------------------------------------------------------------------

def test_a_dataset_from_the_previous_format_is_regenerated(tmp_path):
    ds = ensure_dataset("tiny", tmp_path)
    manifest = json.loads((ds.path / "manifest.json").read_text())
    manifest["params"]["format_version"] = FORMAT_VERSION - 1
    (ds.path / "manifest.json").write_text(json.dumps(manifest))
    assert not is_complete(ds.path)
    again = ensure_dataset("tiny", tmp_path)
    assert again.manifest["params"]["format_version"] == FORMAT_VERSION == 3
    assert again.customers_parquet.is_file() and again.verify() == []


def test_an_old_dataset_read_directly_says_to_regenerate(tmp_path):
    ds = ensure_dataset("tiny", tmp_path, formats=["parquet"])
    manifest = json.loads((ds.path / "manifest.json").read_text())
    manifest["params"]["format_version"] = 2
    del manifest["customers"]
    (ds.path / "manifest.json").write_text(json.dumps(manifest))
    old = Dataset(ds.path)
    for read in (lambda: old.totals_by("segment"), lambda: old.customer_count, old.customer_quarter_totals):
        with pytest.raises(ValueError, match=r"older generator \(format 2\).*--force`$"):
            read()
