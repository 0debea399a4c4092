"""A handle on one generated dataset: where its files are and what the right answers are.

``ensure_dataset()`` is the one line a notebook calls: it has the generator (``utils.datagen``)
build the dataset when needed and returns a ``Dataset`` over its manifest.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from utils.backend import Backend, as_backend, current_backend
from utils.base.paths import SCRATCH_ENV_VAR, scratch_root
from utils.datagen.build import ensure_generated
from utils.datagen.manifest import (
    MANIFEST_NAME,
    WORLD_FORMAT,
    file_problems,
    read_manifest,
    regenerate_command,
)

if TYPE_CHECKING:  # pandas is imported by the methods that read ground truth
    import pandas as pd

# Keyword arguments that pandas.read_csv and cudf.read_csv both accept with the same meaning,
# so the same `dd.read_csv(ds.csv_files, **ds.csv_kwargs)` works on either backend.
CSV_DTYPES = {
    "transaction_id": "int64",
    "customer_id": "int64",
    "store_id": "int64",
    "product_category": "str",
    "sales_amount": "float64",
}
CUSTOMER_CSV_DTYPES = {"customer_id": "int64", "segment": "str", "region": "str"}
TIMESTAMP_COLUMN = "timestamp"
CSV_COLUMNS = ("transaction_id", "customer_id", TIMESTAMP_COLUMN, "store_id", "product_category", "sales_amount")
# The fastest CSV reader per backend (measured in benchmarks/): pandas' pyarrow engine parses a
# part file 3-4x faster than its default C engine. ``engine=`` is a pandas-only argument that
# cudf.read_csv rejects, so only ``Dataset.fast_csv_kwargs`` adds it, and only for pandas.
PANDAS_FAST_CSV = {"engine": "pyarrow"}
# Keys ``Dataset.totals_by`` groups by: the ground-truth cube's axes, plus the quarter of a month.
TOTALS_KEYS = ("month", "quarter", "segment", "region", "store_id", "product_category")
T = TypeVar("T")


class Dataset:
    """Paths and ground truth of a complete dataset directory (see ``utils.datagen.manifest``).

    One rule for what is called and what is read: **ground truth is a method**, computed from the
    manifest and the generator's files, so calling it is honest (``ds.answers()``,
    ``ds.customer_totals()``, ``ds.totals_by("segment")``, ``ds.cube_cents()``, ...); **metadata is a
    property**, a plain fact about the files (``ds.scale``, ``ds.rows``, ``ds.csv_files``,
    ``ds.csv_kwargs``, ...). The files behind a ground-truth method are read once per ``Dataset``.
    """

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
        return read_manifest(self.path)

    @property
    def scale(self) -> str:
        return self.manifest["params"]["scale"]

    @property
    def rows(self) -> int:
        return self.manifest["rows"]

    @property
    def partitions(self) -> int:
        return len(self.manifest["partitions"])

    def _part_files(self, fmt: str) -> list[Path]:
        parts = sorted(self.manifest["partitions"], key=lambda p: p["index"])
        return [self.path / p["files"][fmt] for p in parts if fmt in p["files"]]

    @property
    def csv_files(self) -> list[Path]:
        """The CSV part files the manifest lists, in partition order."""
        return self._part_files("csv")

    @property
    def parquet_files(self) -> list[Path]:
        """The Parquet part files the manifest lists, in partition order."""
        return self._part_files("parquet")

    @property
    def parquet_dir(self) -> str:
        return str(self.path / "parquet")

    @property
    def csv_kwargs(self) -> dict:
        """``read_csv`` arguments valid for both pandas and cudf (no engine=, assume_missing=)."""
        return {"dtype": dict(CSV_DTYPES), "parse_dates": ["timestamp"]}

    @property
    def parquet_kwargs(self) -> dict:
        """``read_parquet`` arguments that keep one partition per Parquet file on the backend Dask
        is configured for now. dask_cudf fuses small files when the plan is optimized (``_tune_up`` of
        its Parquet readers, rapidsai/cudf python/dask_cudf/dask_cudf/io/parquet.py): ``min(⌈blocksize
        ÷ uncompressed bytes read per file⌉, ⌈√files⌉, 100)`` files per partition, ``blocksize``
        1/32 of one GPU's memory by default (notebook 02 §8 and ``utils.partitions.parquet_fusion``
        work it out), so partition counts after
        ``optimize()`` differ from pandas unless ``blocksize=None``, which switches fusion off;
        the pandas backend takes no such argument (it fuses only after a column projection, which
        ``blocksize`` does not switch off)."""
        return {"blocksize": None} if current_backend().is_gpu else {}

    def fast_csv_kwargs(
        self, columns: list[str] | tuple[str, ...] | None = None, backend: Backend | str | None = None
    ) -> dict:
        """``read_csv`` arguments that read only ``columns`` (default: all) as fast as ``backend``
        (a ``Backend`` or ``"cpu"``/``"gpu"``; default: ``current_backend()``) allows: ``usecols`` and those columns'
        dtypes on both; on pandas also the pyarrow engine (``timestamp`` as a ``datetime64[us]``
        dtype, the same values and unit as ``parse_dates``); cudf gets only arguments it accepts."""
        on_gpu = as_backend(backend).is_gpu
        wanted = list(columns) if columns is not None else list(CSV_COLUMNS)
        unknown = [name for name in wanted if name not in CSV_COLUMNS]
        if unknown or not wanted:
            raise ValueError(f"columns must be a non-empty subset of {list(CSV_COLUMNS)}, got {wanted!r}")
        dtype = {name: CSV_DTYPES[name] for name in wanted if name in CSV_DTYPES}
        kwargs: dict = {"usecols": wanted, "dtype": dtype}
        if not on_gpu:
            if TIMESTAMP_COLUMN in wanted:
                dtype[TIMESTAMP_COLUMN] = "datetime64[us]"
            return {**kwargs, **PANDAS_FAST_CSV}
        if TIMESTAMP_COLUMN in wanted:
            kwargs["parse_dates"] = [TIMESTAMP_COLUMN]
        return kwargs

    # --- the customers table ------------------------------------------------------------------

    @property
    def customers_parquet(self) -> Path:
        """The customers table (customer_id, segment, region, signup_date) as one Parquet file."""
        return self.path / "customers" / "customers.parquet"

    @property
    def customers_csv(self) -> Path:
        """The customers table as one CSV file (read it with ``customers_csv_kwargs``)."""
        return self.path / "customers" / "customers.csv"

    @property
    def customers_csv_kwargs(self) -> dict:
        """``read_csv`` arguments for ``customers_csv``, valid for both pandas and cudf."""
        return {"dtype": dict(CUSTOMER_CSV_DTYPES), "parse_dates": ["signup_date"]}

    @property
    def customer_count(self) -> int:
        """Rows of the customers table: every customer, with or without transactions."""
        self._require_world()
        return self.manifest["customers"]["rows"]

    def _require_world(self) -> None:
        """One line instead of a missing-file error on a dataset from before the customers table."""
        version = self.manifest.get("params", {}).get("format_version", 1)
        if version < WORLD_FORMAT:
            raise ValueError(
                f"{self.path} was made by an older generator (format {version}) without customers, "
                f"months or the ground-truth cube; regenerate with `{self.regenerate_command}`"
            )

    def _read_once(self, name: str, read: Callable[[], T]) -> T:
        """``read()`` the first time ground truth ``name`` is asked for, then the same object."""
        cache = self.__dict__.setdefault("_ground_truth_cache", {})
        if name not in cache:
            cache[name] = read()
        return cache[name]

    def size_bytes(self, fmt: str) -> int:
        return sum(p["bytes"].get(fmt, 0) for p in self.manifest["partitions"])

    @property
    def scratch_dir(self) -> Path:
        """``<data dir>/scratch`` (``scratch_root``): the one place notebooks write throw-away copies
        (created on access; ``make clean-data`` empties it but keeps the exercise progress). Overwrite
        a fixed subfolder rather than adding new ones.
        ``$COURSE_SCRATCH_DIR`` replaces it: a room that shares one read-only data folder gives each
        learner a folder of their own, so nobody overwrites anybody's copies."""
        scratch = scratch_root(self.path.parent)
        try:
            scratch.mkdir(parents=True, exist_ok=True)
            if not os.access(scratch, os.W_OK):
                raise PermissionError(13, "not writable")
        except OSError as error:
            raise PermissionError(
                f"cannot write scratch copies to {scratch} ({error.strerror or error}); set "
                f"{SCRATCH_ENV_VAR} to a folder of your own (e.g. export {SCRATCH_ENV_VAR}=~/course-scratch)"
            ) from None
        return scratch

    # --- integrity ----------------------------------------------------------------------------

    def verify(self, checksums: bool = True) -> list[str]:
        """Problems with the files (missing, extra, resized, changed content), one phrase each such
        as ``"csv/part-00001.csv: content changed (checksum differs)"``; empty when every file is
        exactly as generated. ``checksums=False`` checks only the file list and sizes (instant)."""
        return file_problems(self.path, self.manifest, checksums)

    @property
    def regenerate_command(self) -> str:
        """The shell command that rebuilds this dataset from scratch."""
        return regenerate_command(self.path, self.manifest)

    # --- ground truth (exact, integer cents, computed without Dask) ---------------------------

    def answers(self) -> dict[str, int]:
        """Scalar answers: rows, total_cents, over_100_count, over_100_cents, ..."""
        return self.manifest["ground_truth"]

    def customer_totals_cents(self) -> pd.DataFrame:
        """customer_id, total_cents, transactions — one row per customer who bought anything."""
        import pandas as pd
        return self._read_once("customers", lambda: pd.read_parquet(self.path / "ground_truth" / "customers.parquet"))

    def customer_totals(self) -> pd.Series:
        """Total sales per customer in dollars, indexed by customer_id (the course's answer)."""
        import pandas as pd
        frame = self.customer_totals_cents()
        return pd.Series(
            frame["total_cents"].to_numpy() / 100.0,
            index=pd.Index(frame["customer_id"], name="customer_id"),
            name="sales_amount",
        )

    def store_category_cents(self) -> pd.DataFrame:
        """store_id, product_category, total_cents, transactions — every (store, category) cell."""
        import pandas as pd
        return self._read_once("store_category",
                               lambda: pd.read_parquet(self.path / "ground_truth" / "store_category.parquet"))

    def cube_cents(self) -> pd.DataFrame:
        """month ("2024-01"), segment, region, store_id, product_category, total_cents,
        transactions: every nonzero cell; ``region`` is the customer's region."""
        import pandas as pd
        self._require_world()
        return self._read_once("cube", lambda: pd.read_parquet(self.path / "ground_truth" / "cube.parquet"))

    def totals_by(self, *columns: str) -> pd.DataFrame:
        """Exact ``total_cents`` and ``transactions`` grouped by any of month ("2024-01"),
        quarter ("2024Q1"), segment, region (the customer's), store_id and product_category,
        indexed by ``columns`` in the order given, sorted; groups without transactions are absent."""
        if not columns or not set(columns) <= set(TOTALS_KEYS) or len(set(columns)) != len(columns):
            raise ValueError(f"group by a non-empty subset of {list(TOTALS_KEYS)} (each once), got {columns!r}")
        cube = self.cube_cents()
        if "quarter" in columns:
            number = (cube["month"].str.slice(5, 7).astype("int64") - 1) // 3 + 1
            cube = cube.assign(quarter=cube["month"].str.slice(0, 4) + "Q" + number.astype("str"))
        grouped = cube.groupby(list(columns), sort=True)
        return grouped[["total_cents", "transactions"]].sum()

    def customer_quarter_totals(self) -> pd.DataFrame:
        """customer_id, quarter ("2024Q1"), total_cents, transactions: one row per customer and
        quarter with transactions, sorted by customer_id then quarter."""
        import pandas as pd
        self._require_world()
        frame = pd.read_parquet(self.path / "ground_truth" / "customer_quarter.parquet")
        return frame.sort_values(["customer_id", "quarter"], ignore_index=True)

    def daily_totals(self) -> pd.DataFrame:
        """total_cents and transactions per calendar day (UTC), indexed by ``date``; days
        without transactions are absent."""
        import pandas as pd
        self._require_world()
        return pd.read_parquet(self.path / "ground_truth" / "daily.parquet").set_index("date")


def ensure_dataset(
    scale: str | None = None,
    data_dir: str | Path | None = None,
    *,
    force: bool = False,
    workers: int | None = None,
    progress: bool | None = None,
    **overrides,
) -> Dataset:
    """Return the dataset for ``scale`` (default: ``$COURSE_SCALE``, else ``small``), generating
    it only when it is missing, incomplete or made with other parameters (``overrides``: rows,
    partitions, customers, seed, formats)."""
    return Dataset(
        ensure_generated(scale, data_dir, force=force, workers=workers, progress=progress, **overrides)
    )
