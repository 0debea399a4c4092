"""The engines the harness compares on total sales per customer. ``benchmarks.one_engine`` starts
one of them in a fresh process; each returns one total per customer as a pandas Series indexed
by ``customer_id``.

The Dask engines call the code the notebooks teach: ``utils.pipeline`` for the recommended
pipeline (on one machine with Dask's threaded scheduler, as the course recommends there, and on the
LocalCluster notebook 03 starts), and the worked example's one-liner with ``ds.csv_kwargs`` as notebook 03 shows it
("before"). polars and DuckDB are single-machine references from requirements-bench.txt; they are
not part of the learners' environment.

Each engine imports its libraries when it starts, not when this module is imported: a polars
process never loads Dask, and a Dask process never loads DuckDB.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from utils.dataset import Dataset
from utils.machine import cpu_count, gpu_count, installed

KEY, VALUE = COLUMNS = ("customer_id", "sales_amount")  # utils.pipeline.COLUMNS, without importing Dask


@dataclass
class Options:
    """What the driver may vary for the Dask cluster engines (``None``: the course's choice)."""

    n_workers: int | None = None
    threads_per_worker: int | None = None
    memory_limit: str | None = None
    blocksize: int | None = None  # CSV blocksize instead of the partition rule's


@dataclass
class Session:
    """A started engine: ``run(dataset, fmt)`` computes the answer; ``client`` when on a cluster."""

    run: Callable[[Dataset, str], pd.Series]
    shape: str
    startup_seconds: float = 0.0
    client: Any = None
    notes: dict[str, Any] = field(default_factory=dict)

    def close(self) -> None:
        if self.client is not None:
            import utils

            utils.shutdown(self.client)
            self.client = None


@dataclass(frozen=True)
class Engine:
    """One way to compute the answer: a short ``key`` for the command line, a ``label`` for tables."""

    key: str
    label: str
    start: Callable[[Options], Session]
    kind: str  # "reference" (single-machine engines), "dask" or "gpu"

    def skipped(self) -> str:
        """Why this engine cannot run here ("" when it can)."""
        if self.kind != "gpu":
            return ""
        missing = [module for module in ("cudf", "dask_cudf", "dask_cuda") if not installed(module)]
        if gpu_count() == 0:
            return "skipped: no NVIDIA GPU visible"
        return f"skipped: {', '.join(missing)} not installed" if missing else ""


def _as_series(frame: pd.DataFrame) -> pd.Series:
    return frame.set_index(KEY)[VALUE]


def _one_process() -> str:
    return f"1 process, {cpu_count()} cores"


# --- single-machine references ------------------------------------------------------------------

def _start_pandas(options: Options) -> Session:
    def run(dataset: Dataset, fmt: str) -> pd.Series:
        """pandas alone: the two columns of every part file (its fastest reader), then group."""
        if fmt == "parquet":
            frame = pd.read_parquet([str(p) for p in dataset.parquet_files], columns=list(COLUMNS))
        else:
            kwargs = dataset.fast_csv_kwargs(COLUMNS, backend="cpu")
            frame = pd.concat([pd.read_csv(path, **kwargs) for path in dataset.csv_files], ignore_index=True)
        return frame.groupby(KEY)[VALUE].sum()

    return Session(run, _one_process())


def _start_polars(options: Options) -> Session:
    import polars as pl

    def run(dataset: Dataset, fmt: str) -> pd.Series:
        if fmt == "parquet":
            scan = pl.scan_parquet([str(p) for p in dataset.parquet_files])
        else:
            scan = pl.scan_csv([str(p) for p in dataset.csv_files],
                               schema_overrides={KEY: pl.Int64, VALUE: pl.Float64})
        result = scan.select(list(COLUMNS)).group_by(KEY).agg(pl.col(VALUE).sum()).collect()
        return _as_series(result.to_pandas())

    return Session(run, _one_process())


def _start_duckdb(options: Options) -> Session:
    import duckdb

    connection = duckdb.connect()
    connection.execute(f"SET threads = {cpu_count()}")

    def run(dataset: Dataset, fmt: str) -> pd.Series:
        files = [str(p) for p in (dataset.parquet_files if fmt == "parquet" else dataset.csv_files)]
        source = "read_parquet($files)" if fmt == "parquet" else "read_csv($files, header = true)"
        query = f"SELECT {KEY}, sum({VALUE}) AS {VALUE} FROM {source} GROUP BY {KEY}"
        return _as_series(connection.execute(query, {"files": files}).df())

    return Session(run, _one_process())


# --- Dask ---------------------------------------------------------------------------------------

def notebook03_query(dataset: Dataset, fmt: str) -> Any:
    """The worked example's one-liner as notebook 03 shows it before the recommended pipeline:
    every column, ``ds.csv_kwargs`` (pandas' C parser), the default ``split_out``."""
    import dask.dataframe as dd

    if fmt == "parquet":
        frame = dd.read_parquet(dataset.parquet_dir)
    else:
        frame = dd.read_csv(dataset.csv_files, **dataset.csv_kwargs)
    return frame.groupby(KEY)[VALUE].sum()


def describe_cluster(client: Any) -> str:
    workers = client.scheduler_info(n_workers=-1)["workers"].values()
    threads = sorted({w["nthreads"] for w in workers})
    return f"{len(workers)} worker(s) x {'/'.join(map(str, threads))} thread(s)"


def _started_client(**kwargs: Any) -> tuple[Any, float]:
    import utils

    started = time.perf_counter()
    client = utils.start_client(local=True, quiet=True, **kwargs)
    return client, time.perf_counter() - started


def _start_worked_example(options: Options) -> Session:
    """The one-liner on the cluster the course's setup cell starts by default (``start_client()``)."""
    shape = {k: v for k, v in (("n_workers", options.n_workers),
                               ("threads_per_worker", options.threads_per_worker)) if v is not None}
    client, startup = _started_client(**shape)

    def run(dataset: Dataset, fmt: str) -> pd.Series:
        return client.compute(notebook03_query(dataset, fmt), sync=True)

    return Session(run, describe_cluster(client), startup, client)


def recommended_query(dataset: Dataset, fmt: str, client: Any, options: Options) -> Any:
    """``utils.pipeline.total_sales_per_customer``; with ``options.blocksize``, the same pipeline
    with that CSV blocksize instead of the partition rule's (the partition sweep)."""
    import dask.dataframe as dd

    from utils import pipeline

    if fmt == "csv" and options.blocksize is not None:
        frame = dd.read_csv(dataset.csv_files, blocksize=options.blocksize,
                            **dataset.fast_csv_kwargs(pipeline.COLUMNS, backend="cpu"))
        return pipeline.customer_totals(frame)
    return pipeline.total_sales_per_customer(dataset, fmt, client)


def _start_cluster(options: Options) -> Session:
    """The recommended pipeline on the cluster shape the course starts for it (``pipeline.cluster_shape``):
    what notebook 03 runs, with the dashboard and task stream."""
    from utils import pipeline

    shape = pipeline.cluster_shape("cpu")
    shape.update({k: v for k, v in (("n_workers", options.n_workers),
                                    ("threads_per_worker", options.threads_per_worker)) if v is not None})
    if options.memory_limit:
        shape["memory_limit"] = options.memory_limit
    client, startup = _started_client(**shape)

    def run(dataset: Dataset, fmt: str) -> pd.Series:
        return client.compute(recommended_query(dataset, fmt, client, options), sync=True)

    return Session(run, describe_cluster(client), startup, client)


def _start_threaded(options: Options) -> Session:
    """The recommended pipeline as the course recommends running it on one machine with CPUs only:
    Dask's threaded scheduler in this process, no cluster, no dashboard."""
    from utils import pipeline

    threads = options.threads_per_worker or cpu_count()

    def run(dataset: Dataset, fmt: str) -> pd.Series:
        query = pipeline.total_sales_per_customer(dataset, fmt)
        return query.compute(scheduler="threads", num_workers=threads)

    return Session(run, f"1 process, {threads} threads")


def _start_gpu(options: Options) -> Session:
    """dask-cudf on LocalCUDACluster: the recommended pipeline with the cudf backend."""
    import dask

    import utils
    from utils import pipeline

    client, startup = _started_client(backend="gpu")
    gpu_config = utils.current_backend().dask_config()  # what start_client set: cudf, the tasks shuffle

    def run(dataset: Dataset, fmt: str) -> pd.Series:
        with dask.config.set(gpu_config):
            return utils.to_pandas(client.compute(pipeline.total_sales_per_customer(dataset, fmt, client), sync=True))

    return Session(run, describe_cluster(client), startup, client)


ENGINES: dict[str, Engine] = {e.key: e for e in (
    Engine("pandas", "pandas, one process", _start_pandas, "reference"),
    Engine("polars", "polars", _start_polars, "reference"),
    Engine("duckdb", "DuckDB", _start_duckdb, "reference"),
    Engine("threaded", "Dask, recommended pipeline, threaded scheduler", _start_threaded, "dask"),
    Engine("worked-example", "Dask LocalCluster, the worked example's one-liner", _start_worked_example, "dask"),
    Engine("cluster", "Dask LocalCluster, recommended pipeline", _start_cluster, "dask"),
    Engine("dask-cudf", "dask-cudf, LocalCUDACluster", _start_gpu, "gpu"),
)}
REFERENCES = ("polars", "duckdb")  # the targets compare with the faster of these, per format
