"""``cuml/dask/common/input_utils.py`` (cuml 26.10.0) ``DistributedDataHandler``: which inputs are accepted
("cudf" for any Dask DataFrame or Series, pandas- or cudf-backed; "cupy" for Dask arrays), where their partitions
live, rows per worker, and workers without rows dropped with cuML's warning."""

from __future__ import annotations

import warnings
from collections import OrderedDict
from collections.abc import Sequence
from functools import reduce
from typing import Any

from dask.dataframe import DataFrame as daskDataFrame
from dask.dataframe import Series as daskSeries
from dask.distributed import default_client
from toolz import first

from cuml.dask.common.part_utils import _extract_partitions
from cuml.dask.common.utils import get_client


def validate_dask_array(darray: Any, client: Any = None) -> None:
    """``cuml/dask/common/dask_arr_utils.py``: 1-D or 2-D, one chunk along the columns."""
    if len(darray.chunks) > 2:
        raise ValueError("Input array cannot have more than two dimensions")
    elif len(darray.chunks) == 2 and len(darray.chunks[1]) > 1:
        raise ValueError("Input array cannot be chunked along axis 1")


def _get_datatype_from_inputs(data: Any) -> tuple[str, bool]:
    multiple = isinstance(data, Sequence)
    if isinstance(first(data) if multiple else data, (daskSeries, daskDataFrame)):
        datatype = "cudf"
    else:
        datatype = "cupy"
        for d in data if multiple else [data]:
            validate_dask_array(d)
    return datatype, multiple


def _workers_to_parts(futures: list) -> OrderedDict:
    w_to_p_map: OrderedDict = OrderedDict()
    for w, p in futures:
        w_to_p_map.setdefault(w, []).append(p)
    return w_to_p_map


def _get_rows(objs: list, multiple: bool) -> tuple[list[int], int]:
    total = [(x[0] if multiple else x).shape[0] for x in objs]
    return total, reduce(lambda a, b: a + b, total)


class DistributedDataHandler:
    """Metadata about distributed data (never the data): placement, ranks, rows."""

    def __init__(self, gpu_futures: list | None = None, workers: tuple | None = None, datatype: str | None = None,
                 multiple: bool = False, client: Any = None) -> None:
        self.client = get_client(client)
        self.gpu_futures = gpu_futures
        self.worker_to_parts = _workers_to_parts(gpu_futures)
        self.workers = workers
        self.datatype = datatype
        self.multiple = multiple
        self.worker_info: dict | None = None
        self.total_rows: int | None = None
        self.ranks: dict | None = None
        self.parts_to_sizes: dict | None = None
        self._worker_sizes: dict | None = None

    @classmethod
    def get_client(cls, client: Any = None) -> Any:
        return default_client() if client is None else client

    @classmethod
    def create(cls, data: Any, client: Any = None) -> DistributedDataHandler:
        client = cls.get_client(client)
        datatype, multiple = _get_datatype_from_inputs(data)
        gpu_futures = client.sync(_extract_partitions, data, client)
        workers = tuple({w for w, _ in gpu_futures})
        handler = DistributedDataHandler(gpu_futures=gpu_futures, workers=workers, datatype=datatype,
                                         multiple=multiple, client=client)
        handler._fetch_worker_sizes()
        return handler

    def calculate_worker_and_rank_info(self, comms: Any) -> None:
        self.worker_info = comms.worker_info(comms.worker_addresses)
        self.ranks = {w: self.worker_info[w]["rank"] for w in self.worker_to_parts}

    def _fetch_worker_sizes(self) -> None:
        """Fetch per-partition row counts and drop workers with zero rows."""
        if self._worker_sizes is not None:
            return
        if not self.worker_to_parts:
            self._worker_sizes = {}
            return
        parts = [(w, self.client.submit(_get_rows, p, self.multiple, workers=[w], pure=False))
                 for w, p in self.worker_to_parts.items()]
        wfs, sizes_futures = zip(*parts, strict=True)
        all_sizes = self.client.compute(sizes_futures, sync=True)
        self._worker_sizes = dict(zip(wfs, all_sizes, strict=True))
        empty_workers = {w for w, (_, total) in self._worker_sizes.items() if total == 0}
        if empty_workers:
            warnings.warn(f"Data was not split among all workers. {len(empty_workers)} worker(s) have no data and "
                          "will not participate in training. This can happen when there are more workers than data "
                          "partitions.", UserWarning, stacklevel=2)
            for w in empty_workers:
                del self.worker_to_parts[w]
                del self._worker_sizes[w]
            self.gpu_futures = [(w, f) for w, f in self.gpu_futures if w not in empty_workers]
            self.workers = tuple(w for w in self.workers if w not in empty_workers)
            if not self.workers:
                raise ValueError("All workers have zero rows after pruning empty partitions. Cannot proceed with an "
                                 "empty dataset.")

    def calculate_parts_to_sizes(self, comms: Any = None) -> None:
        if self.worker_info is None and comms is not None:
            self.calculate_worker_and_rank_info(comms)
        if self._worker_sizes is None:
            self._fetch_worker_sizes()
        self.total_rows = 0
        self.parts_to_sizes = {}
        for w, (sizes, total) in self._worker_sizes.items():
            self.parts_to_sizes[self.worker_info[w]["rank"]] = sizes
            self.total_rows += total
