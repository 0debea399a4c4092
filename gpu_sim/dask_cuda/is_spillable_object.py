"""Port of rapidsai/dask-cuda ``dask_cuda/is_spillable_object.py`` (26.10): objects cudf spills itself (when
its spilling is on) stay out of ``DeviceHostFile``'s LRU levels. Deviations, to use only cudf's public API:
the registration names cudf's public frame and index classes instead of ``cudf.core.frame.Frame``, and the
spilling status is ``cudf.get_option("spill")`` instead of ``cudf.core.buffer.spill_manager.get_global_manager()
is not None`` (cudf creates that manager exactly when the option is switched on)."""

from __future__ import annotations

from dask.utils import Dispatch

is_spillable_object = Dispatch(name="is_spillable_object")


@is_spillable_object.register(list)
@is_spillable_object.register(tuple)
@is_spillable_object.register(set)
@is_spillable_object.register(frozenset)
def _(seq):
    return any([is_spillable_object(s) for s in seq])


@is_spillable_object.register(dict)
def _(seq):
    return any([is_spillable_object(s) for s in seq.items()])


@is_spillable_object.register(object)
def _(o):
    return False


@is_spillable_object.register_lazy("cudf")
def register_cudf():
    import cudf

    classes = [getattr(cudf, name) for name in ("DataFrame", "Series", "Index", "RangeIndex", "MultiIndex")
               if isinstance(getattr(cudf, name, None), type)]

    @is_spillable_object.register(tuple(classes))
    def is_device_object_cudf(obj):
        return cudf_spilling_status()


def cudf_spilling_status() -> bool | None:
    """True if cudf's own spilling is on, False if off, None if cudf is not available."""
    try:
        import cudf
    except ImportError:
        return None
    try:
        return bool(cudf.get_option("spill"))
    except Exception:
        return None
