"""Where pandas meets a cudf object it was *given*: what real pandas does with one, reproduced.

The simulated cudf classes subclass pandas, so pandas would take them in as its own. Real cudf
objects are not pandas objects: pandas receiving one as a new column goes through
``sanitize_array`` (pandas ``core/construction.py``: ``np.array(data)`` for anything with
``__array__``), which cudf refuses (``core/frame.py`` ``Frame.__array__``); ``pd.concat`` refuses any
object that is not a pandas Series or DataFrame (pandas ``core/reshape/concat.py``
``_clean_keys_and_objs``). A mixed-backend Dask operation (a pandas-backed collection given a
cudf-backed column) meets exactly these on a GPU. The simulation itself and cudf objects' own methods
pass, as in ``frame.host_copy_allowed``.
"""

from __future__ import annotations

import functools
from typing import Any

import pandas as pd

from cudf.core.frame import ARRAY_MESSAGE, host_copy_allowed

_INSTALLED: dict[str, Any] = {}


def _is_cudf(obj: Any) -> bool:
    return type(obj).__module__.partition(".")[0] == "cudf" and isinstance(obj, (pd.Series, pd.DataFrame))


def _setitem(original: Any) -> Any:
    @functools.wraps(original)
    def __setitem__(self: pd.DataFrame, key: Any, value: Any) -> None:
        if _is_cudf(value) and not _is_cudf(self) and not host_copy_allowed(value):
            raise TypeError(ARRAY_MESSAGE)
        return original(self, key, value)

    return __setitem__


def _concat(original: Any) -> Any:
    @functools.wraps(original)
    def concat(objs: Any, *args: Any, **kwargs: Any) -> Any:
        items = list(objs.values()) if isinstance(objs, dict) else list(objs)
        if any(_is_cudf(obj) for obj in items) and not host_copy_allowed(items[0]):
            foreign = next(obj for obj in items if _is_cudf(obj))
            raise TypeError(f"cannot concatenate object of type '{type(foreign)}'; only Series and DataFrame "
                            "objs are valid")
        return original(objs if not isinstance(objs, (list, tuple)) else items, *args, **kwargs)

    return concat


def install() -> None:
    """Patch pandas once per process (the simulated ``cudf`` calls this on import)."""
    if _INSTALLED:
        return
    _INSTALLED["setitem"] = pd.DataFrame.__setitem__
    _INSTALLED["concat"] = pd.concat
    pd.DataFrame.__setitem__ = _setitem(pd.DataFrame.__setitem__)  # type: ignore[method-assign]
    pd.concat = _concat(pd.concat)
