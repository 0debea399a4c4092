"""Port of rapidsai/dask-cuda ``dask_cuda/is_device_object.py`` (26.10): which objects ``DeviceHostFile`` keeps
in its device level. Deviation: the cudf registration names only cudf's public classes, looked up with
``getattr`` (the simulated cudf may lack some), so it never depends on cudf's internal module layout."""

from __future__ import annotations

from dask.utils import Dispatch

is_device_object = Dispatch(name="is_device_object")


@is_device_object.register(object)
def is_device_object_default(o):
    return hasattr(o, "__cuda_array_interface__")


@is_device_object.register(list)
@is_device_object.register(tuple)
@is_device_object.register(set)
@is_device_object.register(frozenset)
def is_device_object_python_collection(seq):
    return any([is_device_object(s) for s in seq])


@is_device_object.register(dict)
def is_device_object_python_dict(seq):
    return any([is_device_object(s) for s in seq.items()])


@is_device_object.register_lazy("cudf")
def register_cudf():
    import cudf

    classes = [getattr(cudf, name) for name in ("DataFrame", "Series", "Index", "RangeIndex", "MultiIndex")
               if isinstance(getattr(cudf, name, None), type)]

    @is_device_object.register(tuple(classes))
    def is_device_object_cudf(obj):
        return True
