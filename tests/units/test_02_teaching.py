"""What notebook 02 teaches about partition counts, held to Dask itself: the read tasks of an
optimized plan (``utils.plans.task_counts``/``read_tasks``) and the Parquet file-fusion rule
(``utils.partitions.parquet_fusion``), which must give the number Dask's optimizer gives."""

from __future__ import annotations

import math

import dask
import dask.dataframe as dd
import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest

from utils import backend as backend_module
from utils.partitions import FUSION_MAX_FILES, parquet_fusion
from utils.plans import read_tasks, task_counts

COLUMNS = ["transaction_id", "customer_id", "timestamp", "store_id", "product_category", "sales_amount"]


@pytest.fixture(autouse=True)
def pandas_backend():
    backend_module.reset()
    with dask.config.set({"dataframe.backend": "pandas"}):
        yield
    backend_module.reset()


def test_csv_reads_one_task_per_partition_and_is_never_fused(tiny_dataset):
    frame = dd.read_csv(tiny_dataset.csv_files, **tiny_dataset.csv_kwargs)
    counts = task_counts(frame.sales_amount.sum())
    assert read_tasks(frame.sales_amount.sum()) == frame.npartitions == counts["read-csv"]


def test_a_bare_parquet_read_is_not_fused_but_the_same_read_inside_a_computation_is(tiny_dataset):
    """Fusion happens in the optimizer's tune step, which only rewrites a reader that has a parent."""
    files = len(tiny_dataset.parquet_files)
    two = dd.read_parquet(tiny_dataset.parquet_dir, columns=["customer_id", "sales_amount"])
    assert two.npartitions == two.optimize().npartitions == files
    counts = task_counts(two.groupby("customer_id").sales_amount.sum())
    assert "read_parquet-fused" in counts and counts["read_parquet-fused"] < files


@pytest.mark.parametrize("columns", [None, COLUMNS[-1:], COLUMNS[1:2] + COLUMNS[-1:], COLUMNS[:3], COLUMNS[:4],
                                     COLUMNS[:5], COLUMNS])
def test_the_pandas_fusion_rule_gives_dasks_count_on_the_course_files(tiny_dataset, columns):
    frame = dd.read_parquet(tiny_dataset.parquet_dir, columns=columns)
    rule = parquet_fusion(tiny_dataset.parquet_files, columns, backend="cpu")
    assert read_tasks(frame.map_partitions(len)) == rule.partitions
    assert rule.files == len(tiny_dataset.parquet_files)


@pytest.fixture(scope="module")
def nine_files(tmp_path_factory):
    """9 files of 11 columns: enough files for ceil(1/factor), not the sqrt cap, to decide."""
    folder = tmp_path_factory.mktemp("wide")
    rng = np.random.default_rng(0)
    for index in range(9):
        table = pd.DataFrame({f"c{column}": rng.random(200) for column in range(11)})
        table.to_parquet(folder / f"part-{index:02d}.parquet", index=False)
    return folder


@pytest.mark.parametrize("read", [1, 2, 4, 6, 9, 10])
def test_the_pandas_rule_follows_the_column_share_and_the_sqrt_cap(nine_files, read):
    columns = [f"c{column}" for column in range(read)]
    rule = parquet_fusion(sorted(nine_files.glob("*.parquet")), columns, backend="cpu")
    frame = dd.read_parquet(str(nine_files), columns=columns)
    assert read_tasks(frame.map_partitions(len)) == rule.partitions
    factor = read / 10  # 11 columns stored, minus one
    expected = 1 if factor >= 1 else min(math.ceil(1 / factor), 3, FUSION_MAX_FILES)
    assert rule.files_per_partition == expected
    assert rule.partitions == math.ceil(9 / expected)
    assert str(rule).endswith(f"{rule.partitions} partitions" if factor >= 1 else f"= {rule.partitions}")


def test_the_cudf_rule_divides_the_read_columns_uncompressed_bytes_by_blocksize(nine_files):
    paths = sorted(nine_files.glob("*.parquet"))
    per_file = np.mean([pq.ParquetFile(path).metadata.row_group(0).column(0).total_uncompressed_size
                        for path in paths[:3]])
    for blocksize, expected_per_partition in [(int(per_file * 2), 2), (int(per_file * 100), 3), (int(per_file / 2), 1)]:
        rule = parquet_fusion(paths, ["c0"], backend="gpu", blocksize=blocksize)
        assert rule.factor == pytest.approx(max(per_file / blocksize, 0.001))
        assert rule.files_per_partition == expected_per_partition
        assert rule.partitions == math.ceil(9 / expected_per_partition)
    everything = parquet_fusion(paths, None, backend="gpu", blocksize=int(per_file * 11 * 2))
    assert everything.files_per_partition == 2  # no projection: all columns' bytes count


def test_no_files_is_an_error():
    with pytest.raises(ValueError, match="no Parquet files"):
        parquet_fusion([], ["a"])
