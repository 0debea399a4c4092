"""The engines the harness compares on total sales per customer, each ``run(dataset, fmt)`` returning
one total per customer as a pandas Series indexed by ``customer_id``.

The Dask engines call the same code the notebooks teach: ``utils.pipeline`` for the recommended
pipeline, and the worked example's line with ``ds.csv_kwargs`` for notebook 03 as it stood before
``utils.pipeline`` (the baseline the issue measured). polars and DuckDB are single-machine
references from requirements-bench.txt; they are not part of the learners' environment.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import dask
import dask.dataframe as dd
import pandas as pd

import utils
from utils import pipeline
from utils.backend import Backend, configure_dask, shuffle_method
from utils.dataset import Dataset
from utils.machine import cpu_count, gpu_count, installed

KEY, VALUE = pipeline.COLUMNS


@dataclass
class Engine:
    """One way to compute the answer; ``client`` when it runs on a Dask cluster."""

    name: str
    run: Callable[[Dataset, str], pd.Series]
    client: Any = None
    shape: str = ""
    skipped: str = ""  # why this engine cannot run here (then ``run`` is never called)
    notes: dict[str, Any] = field(default_factory=dict)

    def close(self) -> None:
        if self.client is not None:
            utils.shutdown(self.client)
            self.client = None


def _as_series(frame: pd.DataFrame) -> pd.Series:
    return frame.set_index(KEY)[VALUE]


def pandas_one_process(dataset: Dataset, fmt: str) -> pd.Series:
    """pandas alone: read the two columns of every part file (its fastest reader), then group."""
    if fmt == "parquet":
        frame = pd.read_parquet([str(p) for p in dataset.parquet_files], columns=list(pipeline.COLUMNS))
    else:
        kwargs = dataset.fast_csv_kwargs(pipeline.COLUMNS, backend="cpu")
        frame = pd.concat([pd.read_csv(path, **kwargs) for path in dataset.csv_files], ignore_index=True)
    return frame.groupby(KEY)[VALUE].sum()


def polars_engine(dataset: Dataset, fmt: str) -> pd.Series:
    import polars as pl

    if fmt == "parquet":
        scan = pl.scan_parquet([str(p) for p in dataset.parquet_files])
    else:
        scan = pl.scan_csv([str(p) for p in dataset.csv_files], schema_overrides={KEY: pl.Int64, VALUE: pl.Float64})
    result = scan.select(list(pipeline.COLUMNS)).group_by(KEY).agg(pl.col(VALUE).sum()).collect()
    return _as_series(result.to_pandas())


def duckdb_engine(dataset: Dataset, fmt: str) -> pd.Series:
    import duckdb

    files = [str(p) for p in (dataset.parquet_files if fmt == "parquet" else dataset.csv_files)]
    source = "read_parquet($files)" if fmt == "parquet" else "read_csv($files, header = true)"
    with duckdb.connect() as connection:
        connection.execute(f"SET threads = {cpu_count()}")
        query = f"SELECT {KEY}, sum({VALUE}) AS {VALUE} FROM {source} GROUP BY {KEY}"
        return _as_series(connection.execute(query, {"files": files}).df())


def dask_threaded(dataset: Dataset, fmt: str) -> pd.Series:
    """The recommended pipeline on Dask's threaded scheduler: no cluster, no dashboard."""
    query = pipeline.total_sales_per_customer(dataset, fmt)
    return query.compute(scheduler="threads", num_workers=cpu_count())


def notebook03_query(dataset: Dataset, fmt: str) -> dd.Series:
    """The worked example as notebook 03 taught it before ``utils.pipeline``: every column, the
    C parser (``ds.csv_kwargs``), the default ``split_out``."""
    if fmt == "parquet":
        frame = dd.read_parquet(dataset.parquet_dir)
    else:
        frame = dd.read_csv(dataset.csv_files, **dataset.csv_kwargs)
    return frame.groupby(KEY)[VALUE].sum()


def _describe(client: Any) -> str:
    workers = client.scheduler_info(n_workers=-1)["workers"].values()
    threads = sorted({w["nthreads"] for w in workers})
    return f"{len(workers)} worker(s) x {'/'.join(map(str, threads))} thread(s)"


def start_notebook03_cluster() -> Engine:
    client = utils.start_client(local=True, quiet=True)  # start_client's default shape
    def run(dataset: Dataset, fmt: str) -> pd.Series:
        return client.compute(notebook03_query(dataset, fmt), sync=True)

    return Engine("Dask LocalCluster, notebook 03 before", run, client=client, shape=_describe(client))


def start_recommended_cluster(**shape: Any) -> Engine:
    client = utils.start_client(local=True, quiet=True, **(shape or pipeline.cluster_shape("cpu")))

    def run(dataset: Dataset, fmt: str) -> pd.Series:
        return client.compute(pipeline.total_sales_per_customer(dataset, fmt, client), sync=True)

    return Engine("Dask, the course's recommended pipeline", run, client=client, shape=_describe(client))


def start_gpu_cluster() -> Engine:
    """dask-cudf on LocalCUDACluster: the recommended pipeline with the cudf backend, or skipped."""
    name = "dask-cudf, LocalCUDACluster"
    missing = [module for module in ("cudf", "dask_cudf", "dask_cuda") if not installed(module)]
    if gpu_count() == 0 or missing:
        why = "no NVIDIA GPU visible" if gpu_count() == 0 else f"{', '.join(missing)} not installed"
        return Engine(name, lambda ds, fmt: pd.Series(dtype="float64"), skipped=f"skipped: {why}")
    client = utils.start_client(local=True, quiet=True, backend="gpu")
    gpu_config = {"dataframe.backend": "cudf", "dataframe.shuffle.method": shuffle_method("gpu")}
    configure_dask(Backend("cpu", "the other engines of this harness run on pandas"))

    def run(dataset: Dataset, fmt: str) -> pd.Series:
        with dask.config.set(gpu_config):
            return utils.to_pandas(client.compute(pipeline.total_sales_per_customer(dataset, fmt, client), sync=True))

    return Engine(name, run, client=client, shape=_describe(client))


IN_PROCESS: dict[str, Callable[[Dataset, str], pd.Series]] = {
    "pandas, one process": pandas_one_process,
    "polars": polars_engine,
    "DuckDB": duckdb_engine,
    "Dask threaded scheduler (recommended pipeline)": dask_threaded,
}


def all_engines() -> list[Engine]:
    """Every engine, clusters started (start-up is not timed); close them with ``Engine.close``."""
    engines = [Engine(name, run, shape=f"1 process, {cpu_count()} cores") for name, run in IN_PROCESS.items()]
    engines += [start_notebook03_cluster(), start_recommended_cluster(), start_gpu_cluster()]
    return engines


def worker_pids(client: Any) -> dict[str, int]:
    """Worker address -> process id: unchanged before and after a run means no worker restarted."""
    return client.run(os.getpid)
