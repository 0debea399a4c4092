"""XGBoost's CUDA data path on the simulated cudf: the released ``xgboost`` (3.2.0; the CPU build has the same Python
sources as the CUDA build) runs on simulated cudf partitions, with only the steps that need a device substituted.

Why: the GPU-mode notebooks hand cudf partitions to ``xgboost.dask``. The CPU build cannot read device memory, so
without this module those cells could only be skipped, and a course defect in what reaches XGBoost (dtypes, column
names, a pandas ``meta`` over cudf partitions, two workers on one GPU) would show first on a real GPU.

Substituted, each where the device is first needed (everything else is the released code):

1. ``xgboost/data.py`` ``CudfTransformed.__init__`` (``push_series``): each cudf column's ``__cuda_array_interface__``
   becomes the array interface of its host copy, kept alive in ``temporary_buffers`` as the real keeps its buffers.
   ``_transform_cudf_df``'s own checks (dtypes, bool to uint8, categorical handling, feature names) run before it.
2. ``xgboost/data.py`` ``_meta_from_cudf_series`` (labels, weights): ``check_cudf_meta`` refuses a column with a null
   mask, then the column's device interface is read; here the same refusal on the host copy (the simulated cudf does
   not tell NaN from null), then its host interface.
3. libxgboost's CUDA columnar entry points become their host twins, which take the same C arguments (v3.2.0
   ``include/xgboost/c_api.h``). The CPU build raises "XGBoost version not compiled with GPU support." in them.
4. ``xgboost/core.py`` ``_prediction_output(..., is_cuda=True)`` wraps the output in CuPy; the host twin of 3 wrote
   host memory, so NumPy.
5. ``xgboost/dask/data.py`` ``_make_empty(True)`` (``cupy.empty((0, 0))`` for a worker without partitions): NumPy.

``device="cuda"`` is not substituted: the build does it itself. Without a visible GPU, v3.2.0 ``src/context.cc``
(``MakeDeviceOrd``, ``CUDAOrdinal``) makes the device the CPU and warns "Device is changed from GPU to CPU as we
couldn't find any available GPU on the system."; the booster's config then says ``"device": "cpu"``, so nothing
trained here reports a GPU.

6. Refused as NCCL refuses it: on a GPU, device data (``xgboost/dask/data.py`` ``_get_is_cuda``; its quantile
   sketches are merged on the device whatever ``device`` says, v3.2.0 ``src/data/quantile_dmatrix.cu``,
   ``src/common/quantile.cu`` ``SketchContainer::AllReduce``) or a CUDA device in the training parameters
   (``xgboost/dask/__init__.py`` ``worker_train``) opens XGBoost's NCCL communicator, whose constructor (v3.2.0
   ``src/collective/comm.cu`` ``NCCLComm::NCCLComm``) allgathers every rank's device UUID and fails when two ranks
   share a device. Here the ranks allgather the UUID of their first ``CUDA_VISIBLE_DEVICES``
   entry (simulated NVML) through XGBoost's collective and raise the same ``XGBoostError``.

Installed by the simulated ``cudf`` (the last lines of ``cudf/__init__.py``) in every process that imports it:
XGBoost modules already imported are patched at once, the others by a ``sys.meta_path`` finder right after they run.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import os
import sys
import time
from collections.abc import Callable, Sequence
from types import ModuleType
from typing import Any

import numpy as np

# libxgboost's CUDA columnar entry points and their host twins (v3.2.0 include/xgboost/c_api.h: same arguments).
HOST_TWINS = {
    "XGDMatrixCreateFromCudaColumnar": "XGDMatrixCreateFromColumnar",  # xgboost/data.py _from_cudf_df
    "XGProxyDMatrixSetDataCudaColumnar": "XGProxyDMatrixSetDataColumnar",  # core.py _ref_data_from_cuda_columnar
    "XGBoosterPredictFromCudaColumnar": "XGBoosterPredictFromColumnar",  # core.py Booster.inplace_predict
}
# v3.2.0 src/collective/comm.cu NCCLComm::NCCLComm, a CHECK_EQ (dmlc-core logging: "Check failed: x == y (a vs. b) : ").
NCCL_SHARED_DEVICE = ("Check failed: n_uniques == root.World() ({unique} vs. {world}) : Multiple processes within "
                      "communication group running on same CUDA device is not supported. {uuid}\n")
UUID_BYTES = 16  # curt::kUuidLength
_PATCHED = "_gpu_sim_device_patched"


def host_copy(column: Any) -> np.ndarray:
    """A cudf column's values in host memory, contiguous: what the simulation hands XGBoost instead of the
    device buffer. Nulls become NaN, which XGBoost reads as missing (as it reads a null mask on a GPU)."""
    values = column.to_pandas().to_numpy()
    return np.ascontiguousarray(values if values.dtype.kind in "iuf" else values.astype(np.float64))


# --- 1. xgboost/data.py CudfTransformed.__init__ --------------------------------------------------------------


def cudf_transformed_init(self: Any, columns: list[Any], ref_categories: Any) -> None:
    """``CudfTransformed.__init__`` with host interfaces: ``push_series`` reads ``__cuda_array_interface__`` of
    each column (``cuda_array_interface_dict``, which first refuses object dtypes); here the host copy's."""
    from xgboost._data_utils import TransformedDf, _is_df_cat, array_hasobject, array_interface_dict

    self.columns = columns
    aitfs: list[Any] = []
    temporary_buffers: list[tuple[np.ndarray]] = []
    for column in columns:
        if _is_df_cat(column):
            raise NotImplementedError("GPU simulation: categorical cudf columns are not handed to XGBoost "
                                      "(xgboost/_data_utils.py cudf_cat_inf needs CuPy and a device)")
        if array_hasobject(column):
            raise ValueError("Input data contains `object` dtype.  Expecting numeric data.")
        host = host_copy(column)
        temporary_buffers.append((host,))
        aitfs.append(array_interface_dict(host))
    TransformedDf.__init__(self, ref_categories=ref_categories, aitfs=aitfs, temporary_buffers=temporary_buffers)


# --- 2. xgboost/data.py _meta_from_cudf_series ------------------------------------------------------------------


def meta_from_cudf_series(data: Any, field: str, handle: Any) -> None:
    """``_meta_from_cudf_series``: ``check_cudf_meta`` refuses a null mask ("Missing value is not allowed for:"),
    then the column's interface is set as the field; here from the host copy."""
    from xgboost._data_utils import array_interface
    from xgboost.core import _LIB, _check_call, c_str

    if bool(data.isna().any()):
        raise ValueError(f"Missing value is not allowed for: {field}")
    host = host_copy(data)
    _check_call(_LIB.XGDMatrixSetInfoFromInterface(handle, c_str(field), array_interface(host)))


# --- 3 and 4. libxgboost's CUDA columnar entry points, xgboost/core.py _prediction_output -----------------------


def use_host_twins(lib: Any) -> None:
    """Point the CUDA columnar entry points of the loaded ``libxgboost`` at their host twins."""
    for cuda_name, host_name in HOST_TWINS.items():
        _replace(lib, cuda_name, getattr(lib, host_name))


def host_prediction_output(original: Callable[..., Any]) -> Callable[..., Any]:
    """``_prediction_output`` for the host twin's output: a NumPy array, never CuPy."""

    def prediction_output(shape: Any, dims: Any, predts: Any, is_cuda: bool) -> Any:
        return original(shape, dims, predts, False)

    return prediction_output


# --- 5. xgboost/dask/data.py _make_empty ---------------------------------------------------------------------------


def make_empty(is_cuda: bool) -> np.ndarray:
    """``_make_empty``: the empty input of a worker that holds no partition (``cupy.empty((0, 0))`` when the other
    workers' data is on a device); NumPy here."""
    return np.empty((0, 0))


# --- 6. what NCCL refuses: two ranks on one device ----------------------------------------------------------------


def device_uuid() -> str:
    """The UUID of the device this process computes on: its first ``CUDA_VISIBLE_DEVICES`` entry (an index or a
    UUID), device 0 when unset, as ``Context`` picks ordinal 0 of the visible devices for ``device="cuda"``."""
    import pynvml

    entry = os.environ.get("CUDA_VISIBLE_DEVICES", "0").split(",")[0].strip() or "0"
    pynvml.nvmlInit()
    try:
        if entry.startswith(("GPU-", "MIG-")):
            handle = pynvml.nvmlDeviceGetHandleByUUID(entry)
        else:
            handle = pynvml.nvmlDeviceGetHandleByIndex(int(entry))
        uuid = pynvml.nvmlDeviceGetUUID(handle)
    finally:
        pynvml.nvmlShutdown()
    return uuid.decode() if isinstance(uuid, bytes) else str(uuid)


def uuid_bytes(uuid: str) -> np.ndarray:
    """The 16 bytes of ``GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx`` (curt::GetUuid), as int64 for the allreduce."""
    digits = uuid.split("-", 1)[1].replace("-", "")
    return np.frombuffer(bytes.fromhex(digits.ljust(2 * UUID_BYTES, "0")[: 2 * UUID_BYTES]), dtype=np.uint8).astype(
        np.int64)


def refuse_shared_device() -> None:
    """NCCLComm's constructor: every rank's device UUID, allgathered (here an allreduce of one row per rank); two
    ranks on one device fail on every rank. One rank (not distributed) opens no NCCL communicator."""
    from xgboost import collective
    from xgboost.core import XGBoostError

    world = collective.get_world_size()
    if world < 2:
        return
    uuid = device_uuid()
    rows = np.zeros((world, UUID_BYTES), dtype=np.int64)
    rows[collective.get_rank()] = uuid_bytes(uuid)
    gathered = collective.allreduce(rows.ravel(), collective.Op.SUM).reshape(world, UUID_BYTES)
    unique = len({row.tobytes() for row in gathered})
    if unique != world:
        stamp = time.strftime("%H:%M:%S")
        raise XGBoostError(f"[{stamp}] src/collective/comm.cu:80: "
                           + NCCL_SHARED_DEVICE.format(unique=unique, world=world, uuid=uuid))


def wants_cuda(params: Any) -> bool:
    """Whether training parameters ask for a CUDA device (``cuda``, ``cuda:<n>``, ``gpu``, ``gpu:<n>``)."""
    device = str(dict(params or {}).get("device") or "cpu")
    return device.startswith(("cuda", "gpu"))


def checked_is_cuda(original: Callable[..., bool]) -> Callable[..., bool]:
    """``_get_is_cuda`` (an allreduce: the same answer on every rank), then NCCL's check when the data is on a
    device, since the quantile sketches of device data are merged over NCCL."""

    def get_is_cuda(parts: Any) -> bool:
        is_cuda = original(parts)
        if is_cuda:
            refuse_shared_device()
        return is_cuda

    return get_is_cuda


def checked_worker_train(original: Callable[..., Any]) -> Callable[..., Any]:
    """``worker_train`` (``xgboost.training.train`` on each Dask worker): NCCL's check when the parameters ask for a
    CUDA device, since gradients are then summed over NCCL."""

    def worker_train(*args: Any, **kwargs: Any) -> Any:
        params = kwargs.get("params", args[0] if args else None)
        if wants_cuda(params):
            refuse_shared_device()
        return original(*args, **kwargs)

    return worker_train


# --- installing the substitutions -----------------------------------------------------------------------------------


def _replace(owner: object, name: str, new: object) -> None:
    """Replace ``owner.name``, which must exist: a name a new XGBoost release renamed fails here, loudly,
    instead of adding an attribute nothing calls."""
    if not hasattr(owner, name):
        raise AttributeError(f"xgboost {getattr(owner, '__name__', owner)!s} has no {name}: re-read the "
                             "substitution against this XGBoost release (gpu_sim/README.md)")
    setattr(owner, name, new)


def _patch_core(module: ModuleType) -> None:
    use_host_twins(module._LIB)
    _replace(module, "_prediction_output", host_prediction_output(module._prediction_output))


def _patch_data(module: ModuleType) -> None:
    _replace(module.CudfTransformed, "__init__", cudf_transformed_init)
    _replace(module, "_meta_from_cudf_series", meta_from_cudf_series)


def _patch_dask_data(module: ModuleType) -> None:
    _replace(module, "_make_empty", make_empty)
    _replace(module, "_get_is_cuda", checked_is_cuda(module._get_is_cuda))


def _patch_dask(module: ModuleType) -> None:
    _replace(module, "worker_train", checked_worker_train(module.worker_train))


PATCHES: dict[str, Callable[[ModuleType], None]] = {
    "xgboost.core": _patch_core,
    "xgboost.data": _patch_data,
    "xgboost.dask.data": _patch_dask_data,
    "xgboost.dask": _patch_dask,
}


def patch(module: ModuleType) -> None:
    """Apply this module's substitutions to one XGBoost module, once."""
    if getattr(module, _PATCHED, False):
        return
    PATCHES[module.__name__](module)
    setattr(module, _PATCHED, True)


class _PatchingLoader(importlib.abc.Loader):
    """Runs the module's own loader, then patches the module."""

    def __init__(self, inner: importlib.abc.Loader) -> None:
        self.inner = inner

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return self.inner.create_module(spec)

    def exec_module(self, module: ModuleType) -> None:
        self.inner.exec_module(module)
        patch(module)

    def __getattr__(self, name: str) -> Any:  # get_source, get_resource_reader, ... of the real loader
        return getattr(self.inner, name)


class PostImportFinder(importlib.abc.MetaPathFinder):
    """A ``sys.meta_path`` entry that finds nothing itself: for the XGBoost modules it patches, it asks the finders
    after it and wraps the loader they return."""

    def find_spec(self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None) -> Any:
        if fullname not in PATCHES:
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(fullname, path, target)
            if spec is not None:
                if spec.loader is not None and hasattr(spec.loader, "exec_module"):
                    spec.loader = _PatchingLoader(spec.loader)
                return spec
        return None


def install() -> None:
    """Patch the XGBoost modules this process has imported, and the others as they are imported."""
    for name in PATCHES:
        module = sys.modules.get(name)
        initializing = getattr(getattr(module, "__spec__", None), "_initializing", False)
        if module is not None and not initializing:
            patch(module)
    if not any(isinstance(finder, PostImportFinder) for finder in sys.meta_path):
        sys.meta_path.insert(0, PostImportFinder())
