"""Simulated ``cudf.comm.serialize`` (rapidsai/cudf ``python/cudf/cudf/comm/serialize.py``): distributed
imports it (``register_lazy("cudf")`` in ``distributed/protocol/__init__.py``) to move cudf objects
between workers. The real module serializes device buffers (``cuda``) or host copies (``dask``); here
both families pickle the host data (pickle protocol 5, out-of-band buffers as frames)."""

from __future__ import annotations

import pickle
from typing import Any

import cudf
from cudf.core.index import Index
from cudf.core.multiindex import MultiIndex

_TYPES = (cudf.DataFrame, cudf.Series, Index, MultiIndex)

try:
    from distributed.protocol import dask_deserialize, dask_serialize
    from distributed.protocol.cuda import cuda_deserialize, cuda_serialize
    from distributed.utils import log_errors

    def _host_serialize(x: Any) -> tuple[dict[str, Any], list[Any]]:
        buffers: list[pickle.PickleBuffer] = []
        payload = pickle.dumps(x, protocol=5, buffer_callback=buffers.append)
        return {"cudf-sim": True, "nbuffers": len(buffers)}, [payload, *(b.raw() for b in buffers)]

    def _host_deserialize(header: dict[str, Any], frames: list[Any]) -> Any:
        return pickle.loads(frames[0], buffers=frames[1:])

    @cuda_serialize.register(_TYPES)
    def cuda_serialize_cudf_object(x: Any) -> tuple[dict[str, Any], list[Any]]:
        with log_errors():
            return _host_serialize(x)

    @dask_serialize.register(_TYPES)
    def dask_serialize_cudf_object(x: Any) -> tuple[dict[str, Any], list[Any]]:
        with log_errors():
            return _host_serialize(x)

    @cuda_deserialize.register(_TYPES)
    def cuda_deserialize_cudf_object(header: dict[str, Any], frames: list[Any]) -> Any:
        with log_errors():
            return _host_deserialize(header, frames)

    @dask_deserialize.register(_TYPES)
    def dask_deserialize_cudf_object(header: dict[str, Any], frames: list[Any]) -> Any:
        with log_errors():
            return _host_deserialize(header, frames)

except ImportError:  # distributed is not installed
    pass
