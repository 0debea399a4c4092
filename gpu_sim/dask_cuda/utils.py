"""Port of rapidsai/dask-cuda ``dask_cuda/utils.py`` (26.10): the helpers ``LocalCUDACluster``, ``dask cuda
worker`` and the plugins use, answered through NVML (the simulated ``pynvml`` next to this package).

Ported unchanged in behaviour: ``unpack_bitmask``, ``get_cpu_count``, ``get_gpu_count`` (memoized per process,
as real), ``get_gpu_handle``, ``get_gpu_count_mig``, ``get_cpu_affinity``, ``get_n_gpus``,
``get_device_total_memory``, ``has_device_memory_resource``, ``get_ucx_config``, ``get_preload_options``,
``get_rmm_log_file_name``, ``wait_workers``, ``parse_cuda_visible_device``, ``cuda_visible_devices``,
``nvml_device_index``, ``parse_device_bytes``, ``parse_device_memory_limit``, ``get_gpu_uuid``,
``get_worker_config``, ``get_cluster_configuration``, ``print_cluster_config``, ``CommaSeparatedChoice``.
Left out: ``all_to_all``, ``get_rmm_device_memory_usage`` and the ``rich`` pretty printers' styling.
"""

from __future__ import annotations

import math
import os
import pickle
import time
import warnings
from contextlib import contextmanager, suppress
from multiprocessing import cpu_count
from typing import Any

import click
import dask
import numpy as np
import pynvml
import toolz
from dask.config import canonical_name
from dask.utils import parse_bytes
from distributed.comm import parse_address


@contextmanager
def nvtx_annotate(message: str | None = None, color: str = "blue", domain: str | None = None):
    """dask-cuda's fallback when ``nvtx`` is not installed: yields only."""
    yield


def unpack_bitmask(x: list[int], mask_bits: int = 64) -> list[int]:
    """CPU indices set in a list of ``mask_bits``-wide bitmasks (``unpack_bitmask([1 + 2 + 8]) == [0, 1, 3]``)."""
    res: list[int] = []
    for i, mask in enumerate(x):
        if not isinstance(mask, int):
            raise TypeError("All elements of the list `x` must be integers")
        cpu_offset = i * mask_bits
        bytestr = np.frombuffer(bytes(np.binary_repr(mask, width=mask_bits), "utf-8"), "u1")
        bits = np.flip(bytestr - ord("0")).astype(bool)
        unpacked = np.where(bits, np.arange(mask_bits) + cpu_offset, np.full(mask_bits, -1))
        res += unpacked[(unpacked >= 0)].tolist()
    return res


@toolz.memoize
def get_cpu_count() -> int:
    return cpu_count()


@toolz.memoize
def get_gpu_count() -> int:
    pynvml.nvmlInit()
    return pynvml.nvmlDeviceGetCount()


def get_gpu_handle(device_id: int | str = 0):
    """NVML handle from a device index or UUID; ``ValueError`` for an invalid one."""
    pynvml.nvmlInit()
    try:
        if device_id and not str(device_id).isnumeric():
            # This means device_id is UUID (GPU or MIG).
            handle = pynvml.nvmlDeviceGetHandleByUUID(str.encode(device_id))
            if pynvml.nvmlDeviceIsMigDeviceHandle(handle):
                handle = pynvml.nvmlDeviceGetDeviceHandleFromMigDeviceHandle(handle)
        else:
            handle = pynvml.nvmlDeviceGetHandleByIndex(device_id)
        return handle
    except pynvml.NVMLError:
        raise ValueError(f"Invalid device index or UUID: {device_id}")  # noqa: B904 (as real)


@toolz.memoize
def get_gpu_count_mig(return_uuids: bool = False):
    """Number (and optionally UUIDs) of the MIG instances available."""
    pynvml.nvmlInit()
    uuids = []
    for index in range(get_gpu_count()):
        handle = pynvml.nvmlDeviceGetHandleByIndex(index)
        try:
            is_mig_mode = pynvml.nvmlDeviceGetMigMode(handle)[0]
        except pynvml.NVMLError:
            continue  # not a MIG device, i.e. a normal GPU
        if is_mig_mode:
            for i in range(pynvml.nvmlDeviceGetMaxMigDeviceCount(handle)):
                with suppress(pynvml.NVMLError):
                    mighandle = pynvml.nvmlDeviceGetMigDeviceHandleByIndex(device=handle, index=i)
                    uuids.append(pynvml.nvmlDeviceGetUUID(mighandle))
    if return_uuids:
        return len(uuids), uuids
    return len(uuids)


def get_cpu_affinity(device_index: int | str | None = None) -> list[int]:
    """CPU indices to which a GPU is directly connected; every CPU (with a warning) when NVML cannot say."""
    try:
        handle = get_gpu_handle(device_index)
        # Result is a list of 64-bit integers, thus ceil(get_cpu_count() / 64)
        affinity = pynvml.nvmlDeviceGetCpuAffinity(handle, math.ceil(get_cpu_count() / 64))
        return unpack_bitmask(affinity)
    except (pynvml.NVMLError, ValueError):
        warnings.warn(
            "Cannot get CPU affinity for device with index %d, setting default affinity" % device_index,  # noqa: UP031
            stacklevel=2,
        )
        return list(range(get_cpu_count()))


def get_n_gpus() -> int:
    try:
        return len(os.environ["CUDA_VISIBLE_DEVICES"].split(","))
    except KeyError:
        return get_gpu_count()


def get_device_total_memory(device_index: int | str = 0) -> int | None:
    """Total memory of a device; None for devices without dedicated memory (SoC)."""
    handle = get_gpu_handle(device_index)
    try:
        return pynvml.nvmlDeviceGetMemoryInfo(handle).total
    except pynvml.NVMLError_NotSupported:
        return None


def has_device_memory_resource(device_index: int | str = 0) -> bool:
    handle = get_gpu_handle(device_index)
    try:
        pynvml.nvmlDeviceGetMemoryInfo(handle).total  # noqa: B018 (as real: only whether it raises matters)
    except pynvml.NVMLError_NotSupported:
        return False
    return True


def get_ucx_config(enable_tcp_over_ucx=None, enable_infiniband=None, enable_nvlink=None, enable_rdmacm=None):
    """The ``distributed-ucxx`` configuration, or None when distributed-ucxx is not installed (always, here)."""
    try:
        import distributed_ucxx
    except ImportError:
        return None

    distributed_ucxx.config.setup_config()
    ucx_config = dask.config.get("distributed-ucxx")
    ucx_config[canonical_name("create-cuda-context", ucx_config)] = True
    opts = [enable_tcp_over_ucx, enable_infiniband, enable_nvlink]
    if any(opt is False for opt in opts) and not any(opt is True for opt in opts):
        if enable_tcp_over_ucx is None:
            enable_tcp_over_ucx = True
        if enable_nvlink is None:
            enable_nvlink = True
        if enable_infiniband is None:
            enable_infiniband = True
    ucx_config[canonical_name("tcp", ucx_config)] = enable_tcp_over_ucx
    ucx_config[canonical_name("infiniband", ucx_config)] = enable_infiniband
    ucx_config[canonical_name("nvlink", ucx_config)] = enable_nvlink
    ucx_config[canonical_name("rdmacm", ucx_config)] = enable_rdmacm
    if enable_tcp_over_ucx or enable_infiniband or enable_nvlink:
        ucx_config[canonical_name("cuda-copy", ucx_config)] = True
    else:
        ucx_config[canonical_name("cuda-copy", ucx_config)] = None
    return ucx_config


def get_preload_options(protocol=None, create_cuda_context=None, enable_tcp_over_ucx=None, enable_infiniband=None,
                        enable_nvlink=None, enable_rdmacm=None) -> dict[str, list[str]]:
    """``preload``/``preload_argv`` that create the CUDA context and pass the UCX flags to workers."""
    preload_options: dict[str, list[str]] = {"preload": ["dask_cuda.initialize"], "preload_argv": []}
    if create_cuda_context:
        preload_options["preload_argv"].append("--create-cuda-context")
    if protocol in ("ucx", "ucxx"):
        if enable_tcp_over_ucx:
            preload_options["preload_argv"].append("--enable-tcp-over-ucx")
        if enable_infiniband:
            preload_options["preload_argv"].append("--enable-infiniband")
        if enable_rdmacm:
            preload_options["preload_argv"].append("--enable-rdmacm")
        if enable_nvlink:
            preload_options["preload_argv"].append("--enable-nvlink")
    return preload_options


def get_rmm_log_file_name(dask_worker, logging: bool = False, log_directory: str | None = None) -> str | None:
    if not logging:
        return None
    if hasattr(dask_worker, "name"):
        name = dask_worker.name.split("/")[-1] if isinstance(dask_worker.name, str) else dask_worker.name
    else:
        name = "scheduler"
    return os.path.join(log_directory, f"rmm_log_{name}.txt")


def wait_workers(client, min_timeout=10, seconds_per_gpu=2, n_gpus=None, timeout_callback=None) -> bool:
    """Wait until ``n_gpus`` (default ``get_n_gpus()``) workers are connected; False on timeout."""
    min_timeout_env = os.environ.get("DASK_CUDA_WAIT_WORKERS_MIN_TIMEOUT", None)
    min_timeout = min_timeout if min_timeout_env is None else int(min_timeout_env)
    n_gpus = n_gpus or get_n_gpus()
    timeout = max(min_timeout, seconds_per_gpu * n_gpus)
    start = time.time()
    while True:
        if len(client.scheduler_info(n_workers=-1)["workers"]) == n_gpus:
            return True
        elif time.time() - start > timeout:
            if callable(timeout_callback):
                timeout_callback()
            return False
        else:
            time.sleep(0.1)


def parse_cuda_visible_device(dev: int | str) -> int | str:
    """An index (int or numeric string) as int, a ``GPU-``/``MIG-`` UUID as is; anything else is an error."""
    try:
        return int(dev)
    except ValueError:
        if any(dev.startswith(prefix) for prefix in ["GPU-", "MIG-"]):
            return dev
        raise ValueError(  # noqa: B904 (as real)
            "Devices in CUDA_VISIBLE_DEVICES must be comma-separated integers "
            "or strings beginning with 'GPU-' or 'MIG-' prefixes."
        )


def cuda_visible_devices(i: int, visible=None) -> str:
    """Cycling values for CUDA_VISIBLE_DEVICES: ``cuda_visible_devices(3, range(8)) == '3,4,5,6,7,0,1,2'``."""
    if visible is None:
        try:
            visible = map(parse_cuda_visible_device, os.environ["CUDA_VISIBLE_DEVICES"].split(","))
        except KeyError:
            visible = range(get_n_gpus())
    visible = list(visible)
    rotated = visible[i:] + visible[:i]
    return ",".join(map(str, rotated))


def nvml_device_index(i: int, CUDA_VISIBLE_DEVICES: str | list) -> int | str:  # noqa: N803 (dask-cuda's name)
    """The i-th device of ``CUDA_VISIBLE_DEVICES`` (str or list) as NVML addresses it (physical index or UUID)."""
    if isinstance(CUDA_VISIBLE_DEVICES, str):
        ith_elem = CUDA_VISIBLE_DEVICES.split(",")[i]
        if ith_elem.isnumeric():
            return int(ith_elem)
        return ith_elem
    elif isinstance(CUDA_VISIBLE_DEVICES, list):
        return CUDA_VISIBLE_DEVICES[i]
    raise ValueError("`CUDA_VISIBLE_DEVICES` must be `str` or `list`")


def parse_device_bytes(device_bytes, device_index: int | str = 0, alignment_size: int = 1) -> int | None:
    """Bytes relative to a device: int, float fraction of its memory, string (``"5GB"``); 0/None -> None."""

    def _align(size: int, alignment_size: int) -> int:
        return size // alignment_size * alignment_size

    def parse_fractional(v):
        # int(1) and str("1") are not fractional, float(1) is; fractionals are 0.0 < v <= 1.0.
        def is_one(x):
            return not isinstance(x, float) and (x == 1 or x == "1")

        if not is_one(v):
            with suppress(ValueError, TypeError):
                v = float(v)
                if 0.0 < v <= 1.0:
                    return v
        raise ValueError("The value is not fractional")

    # Special case for fractional limit. This comes before `0` special cases because
    # the `float` may be passed in a `str`, e.g., from `CUDAWorker`.
    try:
        fractional_device_bytes = parse_fractional(device_bytes)
    except ValueError:
        pass
    else:
        if not has_device_memory_resource():
            raise ValueError(
                "Fractional of total device memory not supported in devices without a dedicated memory resource."
            )
        return _align(int(get_device_total_memory(device_index) * fractional_device_bytes), alignment_size)

    # Special cases that evaluate to `None` or `0`
    if (
        device_bytes is None
        or device_bytes == 0.0
        or (not isinstance(device_bytes, float) and parse_bytes(device_bytes) == 0)
    ):
        return None

    if isinstance(device_bytes, str):
        return _align(parse_bytes(device_bytes), alignment_size)
    return _align(int(device_bytes), alignment_size)


def parse_device_memory_limit(device_memory_limit, device_index: int | str = 0, alignment_size: int = 1) -> int | None:
    """Like ``parse_device_bytes``, plus ``"auto"`` (all device memory) and ``"default"`` (80 %; None on devices
    without dedicated memory)."""
    if device_memory_limit in ["auto", "default"]:
        if not has_device_memory_resource():
            return None
        if device_memory_limit == "auto":
            device_memory_limit = get_device_total_memory(device_index)
        else:
            device_memory_limit = 0.8
    return parse_device_bytes(device_bytes=device_memory_limit, device_index=device_index,
                              alignment_size=alignment_size)


def get_gpu_uuid(device_index: int | str = 0) -> str:
    handle = get_gpu_handle(device_index)
    try:
        return pynvml.nvmlDeviceGetUUID(handle).decode("utf-8")
    except AttributeError:
        return pynvml.nvmlDeviceGetUUID(handle)


def get_worker_config(dask_worker) -> dict[str, Any]:
    """Run on a worker: its plugins' settings, memory fractions, device memory limit, protocol."""
    ret: dict[str, Any] = {}
    for p in dask_worker.plugins.values():
        config = {v: getattr(p, v) for v in dir(p) if not (v.startswith("_") or v in {"setup", "cores"})}
        try:
            pickle.dumps(config)
        except TypeError:
            config = "UNKNOWN CONFIG"
        ret[f"[plugin] {type(p).__name__}"] = config
    for mem in ["memory_limit", "memory_pause_fraction", "memory_spill_fraction", "memory_target_fraction"]:
        ret[mem] = getattr(dask_worker.memory_manager, mem)
    # get optional device-memory-limit
    has_device = hasattr(dask_worker.data, "device_buffer")
    if has_device and hasattr(dask_worker.data.device_buffer, "n"):
        # If `n` is not an attribute, device spilling is disabled/unavailable.
        ret["device-memory-limit"] = dask_worker.data.device_buffer.n
    protocol, _ = parse_address(dask_worker.scheduler.address)
    ret["protocol"] = protocol
    if protocol in ("ucx", "ucxx"):
        import ucxx

        ret["ucx-transports"] = ucxx.get_active_transports()
    ret["distributed.comm.timeouts"] = dask.config.get("distributed.comm.timeouts")
    return ret


async def get_scheduler_configuration(client) -> dict[str, Any]:
    worker_ttl = await client.run_on_scheduler(lambda dask_scheduler: dask_scheduler.worker_ttl)
    extensions = list(await client.run_on_scheduler(lambda dask_scheduler: dask_scheduler.extensions.keys()))
    return {"distributed.scheduler.worker-ttl": worker_ttl, "active-extensions": extensions}


async def _get_cluster_configuration(client) -> dict[str, Any]:
    worker_config = await client.run(get_worker_config)
    ret = await get_scheduler_configuration(client)
    if worker_config:
        ret.update(list(worker_config.values())[0])
        workers = client.scheduler_info(n_workers=-1).get("workers", {})
        ret["nworkers"] = len(workers)
        ret["nthreads"] = sum(w["nthreads"] for w in workers.values())
    return ret


def get_cluster_configuration(client) -> dict[str, Any]:
    return client.sync(_get_cluster_configuration, client=client, asynchronous=client.asynchronous)


def print_cluster_config(client) -> None:
    """Print the cluster configuration as a ``rich`` table (``rich`` is optional, as real)."""
    if client.asynchronous:
        print("Printing cluster configuration works only with synchronous Dask clients")
    data = get_cluster_configuration(client)
    try:
        from rich.console import Console
        from rich.pretty import Pretty
    except ModuleNotFoundError as e:
        raise ModuleNotFoundError(
            "Please install rich `python -m pip install rich` "
            "to print a table of the current Dask Cluster Configuration"
        ) from e
    Console().print(Pretty(data))


class CommaSeparatedChoice(click.Choice):
    def convert(self, value, param, ctx):
        values = [v.strip() for v in value.split(",")]
        for v in values:
            if v not in self.choices:
                choices_str = ", ".join(f"'{c}'" for c in self.choices)
                self.fail(f"invalid choice(s): {v}. (choices are: {choices_str})")
        return values
