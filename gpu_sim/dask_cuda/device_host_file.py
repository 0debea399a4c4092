"""Port of rapidsai/dask-cuda ``dask_cuda/device_host_file.py`` (26.10): the worker's ``data`` mapping with three
LRU levels (device -> host -> disk). ``device_buffer.n`` is the worker's ``device_memory_limit`` (what
``dask_cuda.utils.get_worker_config`` reports as "device-memory-limit").

Device objects are those ``is_device_object`` recognises (cudf frames, objects with
``__cuda_array_interface__``); everything else goes to the host level, which spills to disk above the host
memory limit, as real. Serialising a "device" object to host uses distributed's ``dask``/``pickle`` serializers
as real; on the simulated cudf that copies host memory to host memory.
"""

from __future__ import annotations

import itertools
import logging
import os
import time

import dask
import numpy
from distributed.protocol import (
    dask_deserialize,
    dask_serialize,
    deserialize,
    deserialize_bytes,
    serialize,
    serialize_bytelist,
)
from distributed.sizeof import safe_sizeof
from distributed.spill import AnyKeyFile as KeyAsStringFile
from distributed.utils import nbytes
from zict import Buffer, Func
from zict.common import ZictBase

from .is_device_object import is_device_object
from .is_spillable_object import is_spillable_object
from .utils import nvtx_annotate


def _serialize_bytelist(x, **kwargs):
    kwargs["on_error"] = "raise"
    compression = dask.config.get("distributed.worker.memory.spill-compression")
    return serialize_bytelist(x, compression=compression, **kwargs)


class LoggedBuffer(Buffer):
    """zict.Buffer that logs every spill to the ``distributed.worker`` logger."""

    def __init__(self, *args, fast_name="Fast", slow_name="Slow", addr=None, **kwargs):
        self.addr = "Unknown Address" if addr is None else addr
        self.fast_name = fast_name
        self.slow_name = slow_name
        self.msg_template = "Worker at <%s>: Spilled key %s with %s bytes from %s to %s in %s seconds"
        self.logger = logging.getLogger("distributed.worker")
        super().__init__(*args, **kwargs)
        self.total_time_fast_to_slow = 0.0
        self.total_time_slow_to_fast = 0.0

    def fast_to_slow(self, key, value):
        start = time.time()
        ret = super().fast_to_slow(key, value)
        total = time.time() - start
        self.total_time_fast_to_slow += total
        self.logger.info(self.msg_template % (self.addr, key, safe_sizeof(value), self.fast_name, self.slow_name,
                                              total))
        return ret

    def slow_to_fast(self, key):
        start = time.time()
        ret = super().slow_to_fast(key)
        total = time.time() - start
        self.total_time_slow_to_fast += total
        self.logger.info(self.msg_template % (self.addr, key, safe_sizeof(ret), self.slow_name, self.fast_name, total))
        return ret

    def set_address(self, addr):
        self.addr = addr

    def get_total_spilling_time(self):
        return {
            f"Total spilling time from {self.fast_name} to {self.slow_name}": self.total_time_fast_to_slow,
            f"Total spilling time from {self.slow_name} to {self.fast_name}": self.total_time_slow_to_fast,
        }


class DeviceSerialized:
    """A device object stored on the host: a msgpack-encodable header and host frames."""

    def __init__(self, header, frames):
        self.header = header
        self.frames = frames

    def __sizeof__(self):
        return sum(map(nbytes, self.frames))

    def __reduce_ex__(self, protocol):
        header, frames = device_serialize(self)
        frames = [(numpy.asarray(f) if isinstance(f, memoryview) else f) for f in frames]
        return device_deserialize, (header, frames)


@dask_serialize.register(DeviceSerialized)
def device_serialize(obj):
    return {"obj-header": obj.header}, obj.frames


@dask_deserialize.register(DeviceSerialized)
def device_deserialize(header, frames):
    return DeviceSerialized(header["obj-header"], frames)


@nvtx_annotate("SPILL_D2H", color="red", domain="dask_cuda")
def device_to_host(obj: object) -> DeviceSerialized:
    header, frames = serialize(obj, serializers=("dask", "pickle"), on_error="raise")
    return DeviceSerialized(header, frames)


@nvtx_annotate("SPILL_H2D", color="green", domain="dask_cuda")
def host_to_device(s: DeviceSerialized) -> object:
    return deserialize(s.header, s.frames)


class DeviceHostFile(ZictBase):
    """Device, host and disk LRU caches. ``worker_local_directory`` is so named that distributed passes the
    worker's local directory when it builds this from the ``data`` spec."""

    def __init__(self, worker_local_directory, *, device_memory_limit=None, memory_limit=None, log_spilling=False):
        self.disk_func_path = os.path.join(worker_local_directory, "storage")
        os.makedirs(self.disk_func_path, exist_ok=True)

        if memory_limit == 0:
            memory_limit = None

        self.host_func = dict()
        self.disk_func = Func(_serialize_bytelist, deserialize_bytes, KeyAsStringFile(self.disk_func_path))

        host_buffer_kwargs = {}
        device_buffer_kwargs = {}
        buffer_class = Buffer
        if log_spilling is True:
            buffer_class = LoggedBuffer
            host_buffer_kwargs = {"fast_name": "Host", "slow_name": "Disk"}
            device_buffer_kwargs = {"fast_name": "Device", "slow_name": "Host"}

        if memory_limit is None:
            self.host_buffer = self.host_func
        else:
            self.host_buffer = buffer_class(
                self.host_func, self.disk_func, memory_limit, weight=lambda k, v: safe_sizeof(v), **host_buffer_kwargs
            )

        self.device_keys = set()
        self.device_func = dict()
        self.device_host_func = Func(device_to_host, host_to_device, self.host_buffer)
        if device_memory_limit is None:
            self.device_buffer = self.device_func
        else:
            self.device_buffer = Buffer(
                self.device_func,
                self.device_host_func,
                device_memory_limit,
                weight=lambda k, v: safe_sizeof(v),
                **device_buffer_kwargs,
            )

        self.device = self.device_buffer if device_memory_limit is None else self.device_buffer.fast.d
        self.host = self.host_buffer if memory_limit is None else self.host_buffer.fast.d
        self.disk = None if memory_limit is None else self.host_buffer.slow.d

        # For Worker compatibility only, where `fast` is host memory buffer
        self.fast = self.host_buffer if memory_limit is None else self.host_buffer.fast

        # Dict of objects that will not be spilled by DeviceHostFile.
        self.others = {}

    def __setitem__(self, key, value):
        if key in self.device_buffer:
            del self[key]  # Make sure we register the removal of an existing key
        if is_spillable_object(value):
            self.others[key] = value
        elif is_device_object(value):
            self.device_keys.add(key)
            self.device_buffer[key] = value
        else:
            self.host_buffer[key] = value

    def __getitem__(self, key):
        if key in self.others:
            return self.others[key]
        elif key in self.device_keys:
            return self.device_buffer[key]
        elif key in self.host_buffer:
            return self.host_buffer[key]
        raise KeyError(key)

    def __len__(self):
        return len(self.device_buffer) + len(self.others)

    def __iter__(self):
        return itertools.chain(self.device_buffer, self.others)

    def __delitem__(self, key):
        self.device_keys.discard(key)
        if key in self.others:
            del self.others[key]
        elif isinstance(self.device_buffer, dict) and key not in self.device_buffer:
            # If `self.device_buffer` is a dictionary, host `key`s are inserted directly into `self.host_buffer`.
            del self.host_buffer[key]
        else:
            del self.device_buffer[key]

    def evict(self):
        """Evict the least recently used host object (distributed.spill.ManualEvictProto)."""
        try:
            _, _, weight = self.host_buffer.fast.evict()
            return weight
        except Exception:  # We catch all `Exception`s, just like zict.LRU
            return -1

    def set_address(self, addr):
        if isinstance(self.host_buffer, LoggedBuffer):
            self.host_buffer.set_address(addr)
        self.device_buffer.set_address(addr)

    def get_total_spilling_time(self):
        ret = {}
        if isinstance(self.device_buffer, LoggedBuffer):
            ret = {**ret, **self.device_buffer.get_total_spilling_time()}
        if isinstance(self.host_buffer, LoggedBuffer):
            ret = {**ret, **self.host_buffer.get_total_spilling_time()}
        return ret
