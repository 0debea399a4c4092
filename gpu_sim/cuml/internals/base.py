"""``cuml.internals.base.Base`` (cuml 26.10.0 ``cuml/internals/base.py``): keyword-only ``verbose`` and
``output_type``, ``get_params``/``set_params`` from ``_get_param_names``, the scikit-learn-style ``repr``."""

from __future__ import annotations

import inspect
from typing import Any

OUTPUT_TYPES = (None, "input", "cupy", "numpy", "cudf", "pandas")


def infer_output_type(obj: Any) -> str:
    """The output type an input implies (``cuml/internals/outputs.py``), with NumPy standing in for CuPy."""
    import cudf
    import pandas as pd

    if isinstance(obj, (cudf.DataFrame, cudf.Series)):
        return "cudf"
    if isinstance(obj, (pd.DataFrame, pd.Series)):
        return "pandas"
    return "numpy"


class Base:
    """Base class of every cuML estimator."""

    def __init__(self, *, verbose: Any = False, output_type: str | None = None) -> None:
        self.verbose = verbose
        self.output_type = output_type
        self._input_type: str | None = None

    @classmethod
    def _get_param_names(cls) -> list[str]:
        return ["verbose", "output_type"]

    def get_params(self, deep: bool = True) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self._get_param_names()}

    def set_params(self, **params: Any) -> Base:
        if not params:
            return self
        valid_params = self._get_param_names()
        for key, value in params.items():
            if key not in valid_params:
                raise ValueError(f"Invalid parameter {key!r} for `{type(self).__name__}`")
            setattr(self, key, value)
        return self

    def _set_output_type(self, inp: Any) -> None:
        self._input_type = infer_output_type(inp)

    def _get_output_type(self) -> str:
        output_type = self.output_type
        if output_type in (None, "input"):
            output_type = self._input_type
        return output_type or "numpy"

    def __repr__(self) -> str:
        # Only parameters that differ from the constructor default, sorted by name (Base.__repr__).
        init_params = inspect.signature(type(self).__init__).parameters
        changed = {}
        for key, value in self.get_params(deep=False).items():
            if key not in init_params:
                continue
            default = init_params[key].default
            if default is inspect.Parameter.empty or repr(value) != repr(default):
                changed[key] = value
        body = ", ".join(f"{key}={value!r}" for key, value in sorted(changed.items()))
        return f"{type(self).__name__}({body})"
