"""A handle on one generated dataset: where its files are and what the right answers are."""

from __future__ import annotations

import json
import os
from functools import cached_property
from pathlib import Path

import pandas as pd

MANIFEST_NAME = "manifest.json"
DATA_DIR_ENV_VAR = "COURSE_DATA_DIR"

# Keyword arguments that pandas.read_csv and cudf.read_csv both accept with the same meaning,
# so the same `dd.read_csv(ds.csv_glob, **ds.csv_kwargs)` works on either backend.
CSV_DTYPES = {
    "transaction_id": "int64",
    "customer_id": "int64",
    "store_id": "int64",
    "product_category": "str",
    "sales_amount": "float64",
}


def default_data_dir() -> Path:
    """``$COURSE_DATA_DIR``, else the repository's ``data/`` folder (git-ignored)."""
    env = os.environ.get(DATA_DIR_ENV_VAR)
    return Path(env) if env else Path(__file__).resolve().parents[1] / "data"


class Dataset:
    """Paths and ground truth of a complete dataset directory (see ``utils.datagen``)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        if not (self.path / MANIFEST_NAME).is_file():
            raise ValueError(
                f"{self.path} is not a complete dataset (no {MANIFEST_NAME}); "
                "run `python -m utils.datagen` to generate it"
            )

    def __repr__(self) -> str:
        return f"Dataset({str(self.path)!r}, rows={self.rows:,}, partitions={self.partitions})"

    @cached_property
    def manifest(self) -> dict:
        return json.loads((self.path / MANIFEST_NAME).read_text())

    @property
    def scale(self) -> str:
        return self.manifest["params"]["scale"]

    @property
    def rows(self) -> int:
        return self.manifest["rows"]

    @property
    def partitions(self) -> int:
        return len(self.manifest["partitions"])

    @property
    def csv_glob(self) -> str:
        """All CSV part files, as the glob string ``dd.read_csv`` takes."""
        return str(self.path / "csv" / "*.csv")

    @property
    def csv_files(self) -> list[Path]:
        return sorted((self.path / "csv").glob("*.csv"))

    @property
    def parquet_dir(self) -> str:
        return str(self.path / "parquet")

    @property
    def csv_kwargs(self) -> dict:
        """``read_csv`` arguments valid for both pandas and cudf (no engine=, assume_missing=)."""
        return {"dtype": dict(CSV_DTYPES), "parse_dates": ["timestamp"]}

    def size_bytes(self, fmt: str) -> int:
        return sum(p["bytes"].get(fmt, 0) for p in self.manifest["partitions"])

    # --- ground truth (exact, integer cents, computed without Dask) ---------------------------

    @property
    def answers(self) -> dict[str, int]:
        """Scalar answers: rows, total_cents, over_100_count, over_100_cents, ..."""
        return self.manifest["ground_truth"]

    @cached_property
    def customer_totals_cents(self) -> pd.DataFrame:
        """customer_id, total_cents, transactions — one row per customer who bought anything."""
        return pd.read_parquet(self.path / "ground_truth" / "customers.parquet")

    def customer_totals(self) -> pd.Series:
        """Total sales per customer in dollars, indexed by customer_id (the course's answer)."""
        frame = self.customer_totals_cents
        return pd.Series(
            frame["total_cents"].to_numpy() / 100.0,
            index=pd.Index(frame["customer_id"], name="customer_id"),
            name="sales_amount",
        )

    @cached_property
    def store_category_cents(self) -> pd.DataFrame:
        """store_id, product_category, total_cents, transactions — every (store, category) cell."""
        return pd.read_parquet(self.path / "ground_truth" / "store_category.parquet")

    def totals_by(self, *columns: str) -> pd.DataFrame:
        """Exact ``total_cents`` and ``transactions`` grouped by store_id and/or product_category."""
        allowed = {"store_id", "product_category"}
        if not columns or not set(columns) <= allowed:
            raise ValueError(f"group by a non-empty subset of {sorted(allowed)}, got {columns!r}")
        grouped = self.store_category_cents.groupby(list(columns), sort=True)
        return grouped[["total_cents", "transactions"]].sum()
