"""``Dataset`` speaks one style: ground truth (computed from the manifest and the generator's files)
is always a method, metadata always a property."""

from __future__ import annotations

import inspect
from functools import cached_property

import pytest

from utils.dataset import Dataset

GROUND_TRUTH = ("answers", "customer_totals_cents", "customer_totals", "store_category_cents", "cube_cents",
                "totals_by", "customer_quarter_totals", "daily_totals")
METADATA = ("manifest", "scale", "rows", "partitions", "csv_files", "parquet_files", "parquet_dir", "csv_kwargs",
            "parquet_kwargs", "customers_parquet", "customers_csv", "customers_csv_kwargs", "customer_count",
            "scratch_dir", "regenerate_command")


@pytest.mark.parametrize("name", GROUND_TRUTH)
def test_every_ground_truth_accessor_is_a_method(name):
    static = inspect.getattr_static(Dataset, name)
    assert not isinstance(static, property | cached_property), f"Dataset.{name} is a property; make it a method"
    assert callable(static), f"Dataset.{name} is not callable"


@pytest.mark.parametrize("name", METADATA)
def test_metadata_stays_a_property(name):
    assert isinstance(inspect.getattr_static(Dataset, name), property | cached_property), name


def test_ground_truth_is_called_and_agrees_with_itself(tiny_dataset):
    ds = tiny_dataset
    assert ds.answers()["rows"] == ds.rows
    cents = ds.customer_totals_cents()
    assert ds.customer_totals().sum() == pytest.approx(cents["total_cents"].sum() / 100)
    assert ds.store_category_cents()["total_cents"].sum() == ds.answers()["total_cents"]
    assert ds.cube_cents()["total_cents"].sum() == ds.totals_by("segment")["total_cents"].sum()
    assert ds.customer_quarter_totals()["total_cents"].sum() == ds.daily_totals()["total_cents"].sum()
    assert ds.cube_cents() is ds.cube_cents(), "read once per Dataset, like the files it reads"
