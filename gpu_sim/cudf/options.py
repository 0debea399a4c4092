"""Simulated ``cudf.options``: the same option names, defaults, environment variables and validators
as rapidsai/cudf ``python/cudf/cudf/options.py`` (26.10), so that ``dask_cuda`` (``enable_cudf_spill``
calls ``cudf.set_option("spill", True)``) and course code see cudf's contract. Setting an option changes
nothing else here: there is no device memory to spill."""

from __future__ import annotations

import os
import textwrap
from collections.abc import Callable, Container
from contextlib import ContextDecorator
from dataclasses import dataclass
from typing import Any


@dataclass
class Option:
    default: Any
    value: Any
    description: str
    validator: Callable[[Any], Any]


_OPTIONS: dict[str, Option] = {}


def _env_get_int(name: str, default: Any) -> Any:
    try:
        return int(os.getenv(name, default))
    except (ValueError, TypeError):
        return default


def _env_get_bool(name: str, default: bool) -> bool:
    env = os.getenv(name)
    if env is None:
        return default
    as_a_int = _env_get_int(name, None)
    env = env.lower().strip()
    if env in ("true", "on") or as_a_int:
        return True
    if env in ("false", "off") or as_a_int == 0:
        return False
    return default


def _register_option(name: str, default_value: Any, description: str, validator: Callable[[Any], Any]) -> None:
    validator(default_value)
    _OPTIONS[name] = Option(default_value, default_value, description, validator)


def get_option(name: str) -> Any:
    """The value of option ``name``; ``KeyError('"name" does not exist.')`` like cudf."""
    try:
        return _OPTIONS[name].value
    except KeyError:
        raise KeyError(f'"{name}" does not exist.') from None


def set_option(name: str, val: Any) -> None:
    """Validate and set option ``name`` (cudf's validators and messages)."""
    try:
        option = _OPTIONS[name]
    except KeyError:
        raise KeyError(f'"{name}" does not exist.') from None
    option.validator(val)
    option.value = val


def describe_option(name: str | None = None) -> None:
    names = list(_OPTIONS) if name is None else [name]
    for key in names:
        opt = _OPTIONS[key]
        print(f"{key}:\n\t{opt.description}\n\t[Default: {opt.default}] [Current: {opt.value}]")  # noqa: T201


def _make_contains_validator(valid_options: Container[Any]) -> Callable[[Any], None]:
    def _validator(val: Any) -> None:
        if val not in valid_options:
            raise ValueError(f"{val} is not a valid option. Must be one of {set(valid_options)}.")  # type: ignore[arg-type]

    return _validator


def _spill_validator(val: Any) -> None:
    if val not in {False, True}:
        raise ValueError(f"{val} is not a valid option. Must be one of {{False, True}}.")


def _integer_validator(val: Any) -> bool:
    try:
        int(val)
        return True
    except ValueError:
        raise ValueError(f"{val} is not a valid option. Must be an integer.") from None


def _integer_and_none_validator(val: Any) -> None:
    try:
        if val is None or int(val):
            return
    except ValueError:
        raise ValueError(f"{val} is not a valid option. Must be an integer or None.") from None


_BOOL = _make_contains_validator([False, True])
_register_option("default_integer_bitwidth", None, "Default bitwidth of inferred integers.",
                 _make_contains_validator([None, 32, 64]))
_register_option("default_float_bitwidth", None, "Default bitwidth of inferred floats.",
                 _make_contains_validator([None, 32, 64]))
_register_option("spill", _env_get_bool("CUDF_SPILL", False), "Enables spilling.", _spill_validator)
_register_option("spill_on_demand", _env_get_bool("CUDF_SPILL_ON_DEMAND", True),
                 "Enables spilling on demand using an RMM out-of-memory error handler.", _BOOL)
_register_option("spill_device_limit", _env_get_int("CUDF_SPILL_DEVICE_LIMIT", None),
                 "Enforce a device memory limit in bytes.", _integer_and_none_validator)
_register_option("spill_stats", _env_get_int("CUDF_SPILL_STATS", 0),
                 textwrap.dedent("""If not 0, enables statistics at the specified level."""), _integer_validator)
_register_option("mode.pandas_compatible", False, "pandas compatibility mode.", _BOOL)
_register_option("memory_profiling", _env_get_bool("CUDF_MEMORY_PROFILING", False), "Memory profiling.", _BOOL)
_register_option("io.parquet.low_memory", False, "Read parquet in chunks.", _BOOL)
_register_option("io.json.low_memory", False, "Read json in chunks.", _BOOL)
_register_option("kvikio_remote_io", _env_get_bool("CUDF_KVIKIO_REMOTE_IO", False),
                 "Whether to use KvikIO's remote IO backend.", _BOOL)


class option_context(ContextDecorator):  # noqa: N801 - cudf's name
    """Temporarily set options: ``option_context(name, value, [name, value, ...])``."""

    def __init__(self, *args: Any) -> None:
        if len(args) % 2 != 0:
            raise ValueError("Need to invoke as option_context(pat, val, [(pat, val), ...]).")
        self.ops = tuple(zip(args[::2], args[1::2], strict=True))
        self.undo = tuple((pat, get_option(pat)) for pat, _ in self.ops)

    def __enter__(self) -> None:
        for pat, val in self.ops:
            set_option(pat, val)

    def __exit__(self, *args: Any) -> None:
        for pat, val in self.undo:
            set_option(pat, val)
