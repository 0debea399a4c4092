"""``cuml/dask/common/part_utils.py`` (cuml 26.10.0): where each partition lives and how many rows it has. X and y
are co-located by computing one future per (X partition, y partition) pair."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from functools import reduce
from typing import Any

import numpy as np
from dask.array.core import Array as daskArray
from dask.dataframe import DataFrame as daskDataFrame
from dask.dataframe import Series as daskSeries
from dask.distributed import default_client, futures_of
from distributed.client import _wait
from toolz import first


def workers_to_parts(futures: list) -> OrderedDict:
    w_to_p_map: OrderedDict = OrderedDict()
    for w, p in futures:
        w_to_p_map.setdefault(w, []).append(p)
    return w_to_p_map


def _func_get_rows(df: Any) -> int:
    return df[0].shape[0] if isinstance(df, tuple) else df.shape[0]


def parts_to_ranks(client: Any, worker_info: dict, part_futures: list) -> tuple[list, int]:
    """[(rank, rows)] in the order of ``part_futures``, and the total."""
    futures = [(worker_info[w]["rank"], client.submit(_func_get_rows, f, workers=[w], pure=False))
               for w, f in part_futures]
    sizes = client.compute([f for _, f in futures], sync=True)
    total = reduce(lambda a, b: a + b, sizes)
    return [(futures[idx][0], size) for idx, size in enumerate(sizes)], total


async def _extract_partitions(dask_obj: Any, client: Any = None) -> list:
    """[(worker address, future)] for each partition (or each tuple of co-located partitions)."""
    client = default_client() if client is None else client
    if isinstance(dask_obj, (daskArray, daskSeries, daskDataFrame)):
        persisted = client.persist(dask_obj)
        parts = futures_of(persisted)
    elif isinstance(dask_obj, Sequence):
        dela = [np.asarray(d.to_delayed()) for d in dask_obj]
        raveled = [d.ravel() for d in dela]
        parts = client.compute([p for p in zip(*raveled)])  # noqa: B905 (zip truncates, as in cuML)
    await _wait(parts)
    key_to_part = [(part.key, part) for part in parts]
    who_has = await client.scheduler.who_has(keys=[key for key, _ in key_to_part])
    return [(first(who_has[key]), part) for key, part in key_to_part]
