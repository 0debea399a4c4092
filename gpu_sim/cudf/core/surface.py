"""cudf 26.10.2's public API surface, enforced: the simulated classes accept exactly the public
methods, properties and keywords that the released cudf defines, and refuse the rest the way Python
and cudf would (an unknown attribute -> ``AttributeError``, an unknown keyword -> ``TypeError``).

The surface is not typed by hand: ``gpu_sim/cudf_api_surface.json`` is generated from the
released wheels by ``gpu_sim/generate_api_surface.py`` (``ast``, no import of cudf). The
simulated classes subclass pandas, whose far larger surface would otherwise leak through: every
public pandas name the file lacks becomes ``Absent`` (pandas' own internal use still passes, see
``frame._from_library``); every method the file has checks its arguments against cudf's signature
before running; a member cudf has and the simulation does not implement raises
``NotImplementedError`` that says so (never a silent pandas fallback).
"""

from __future__ import annotations

import functools
import inspect
import json
import types
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from cudf.core.frame import TRANSPARENT, Absent, _from_library

SURFACE_FILE = Path(__file__).resolve().parents[2] / "cudf_api_surface.json"
METHOD_KINDS = frozenset({"method", "classmethod", "staticmethod"})
_NO_DEFAULT = inspect.Parameter.empty


@functools.cache
def surface() -> dict[str, Any]:
    """The generated surface file (read once per process)."""
    return json.loads(SURFACE_FILE.read_text())


def members(class_name: str) -> dict[str, dict[str, Any]]:
    """Public members of cudf's ``class_name`` (a key of the file's ``classes``), by name."""
    return surface()["classes"][class_name]["members"]


def call_params(spec: dict[str, Any]) -> list[dict[str, Any]]:
    """The parameters a call meets: a mixin-generated method's are its base operation's at run time
    (``runtime_params``), not the ``.pyi`` stub's."""
    generated = spec.get("generated_by")
    return generated["runtime_params"] if generated else spec.get("params", [])


def signature_of(spec: dict[str, Any], bound: bool = True) -> inspect.Signature:
    """The ``inspect.Signature`` the file records (``self`` first when ``bound``; defaults kept as
    cudf's source text, which is all a reader needs to compare)."""
    parameters = [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)] if bound else []
    for param in call_params(spec):
        default = _NO_DEFAULT if param["default"] is None else _SourceText(param["default"])
        parameters.append(inspect.Parameter(param["name"], getattr(inspect.Parameter, param["kind"]), default=default))
    return inspect.Signature(parameters)


class _SourceText(str):
    """A default value as cudf's source writes it (shown unquoted in signatures)."""

    def __repr__(self) -> str:
        return str(self)


def checked(owner: str, name: str, method: Callable[..., Any], spec: dict[str, Any],
            bound: bool = True) -> Callable[..., Any]:
    """``method`` behind cudf's signature: a call from outside pandas and the simulation that cudf
    would refuse raises Python's ``TypeError`` first, as calling the real method would."""
    generated = spec.get("generated_by")
    # A method cudf's mixins generate is ``partialmethod(base_operation, op=name)`` at run time
    # (cudf/core/mixins/mixin_factory.py): its real signature is the base operation's, and any
    # positional argument lands on ``op`` ("got multiple values for argument 'op'").
    signature = signature_of(spec, bound)
    leading = 1 if bound else 0

    @functools.wraps(method)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if not _from_library():
            if generated and len(args) > leading:
                raise TypeError(f"{owner}.{generated['base_operation']}() got multiple values for argument 'op'")
            try:
                signature.bind(*args, **kwargs)
            except TypeError as error:
                raise TypeError(f"{owner}.{name}() {error}") from None
        try:
            return method(*args, **kwargs)
        except TypeError as error:
            if "unexpected keyword argument" in str(error) and not _from_library():
                raise NotImplementedError(
                    f"the simulated cudf does not implement this keyword of {owner}.{name}() (cudf accepts it; "
                    f"pandas underneath does not): {error}") from error
            raise

    TRANSPARENT.add(wrapper.__code__)
    wrapper.__signature__ = signature  # type: ignore[attr-defined]
    wrapper.__cudf_surface__ = spec  # type: ignore[attr-defined]
    return wrapper


class NotSimulated:
    """A member real cudf has that the simulation does not implement: present (``hasattr`` is
    True, as on a GPU), and any use raises ``NotImplementedError`` naming it."""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, obj: Any, owner: type | None = None) -> Any:
        owner_name = (owner or type(obj)).__name__
        raise NotImplementedError(f"cudf's {owner_name}.{self.name} exists in cudf 26.10.2 but the simulated cudf "
                                  "does not implement it")


def _pandas_public_names(cls: type) -> set[str]:
    return {name for base in cls.__mro__[1:] if base.__module__.partition(".")[0] == "pandas"
            for name in vars(base) if not name.startswith("_")}


def _own_names(cls: type) -> set[str]:
    """Names the simulation defines itself (its classes and mixins outside pandas)."""
    return {name for klass in cls.__mro__ if klass.__module__.partition(".")[0] not in ("pandas", "builtins")
            for name, value in vars(klass).items() if not isinstance(value, Absent)}


def enforce(class_name: str, keep: Iterable[str] = ()) -> Callable[[type], type]:
    """Class decorator: give the simulated class exactly cudf's public surface for ``class_name``.
    ``keep`` names public helpers the simulation's own modules call that cudf lacks; they stay
    reachable from the simulation and pandas only (``Absent``'s rule)."""

    def decorate(cls: type) -> type:
        accepted = members(class_name)
        pandas_names = _pandas_public_names(cls)
        for name in pandas_names | _own_names(cls):
            if name.startswith("_") or name in accepted:
                continue
            if name not in pandas_names and name not in keep:
                raise TypeError(f"simulated {cls.__name__}.{name} is not part of cudf's {class_name}: remove it "
                                "or name it in keep=")
            own = vars(cls).get(name) if name in keep else None
            absent = LibraryOnly(own) if own is not None else Absent()
            absent.__set_name__(cls, name)
            setattr(cls, name, absent)
        for name, spec in accepted.items():
            attr = inspect.getattr_static(cls, name, None)
            if attr is None or isinstance(attr, Absent):
                stub = NotSimulated()
                stub.__set_name__(cls, name)
                setattr(cls, name, stub)
            elif spec["kind"] in METHOD_KINDS and isinstance(attr, types.FunctionType):
                setattr(cls, name, checked(class_name, name, attr, spec))
            elif spec["kind"] == "classmethod" and isinstance(attr, classmethod):
                setattr(cls, name, classmethod(checked(class_name, name, attr.__func__, spec)))
        cls.__cudf_surface__ = class_name  # type: ignore[attr-defined]
        return cls

    return decorate


class LibraryOnly(Absent):
    """A helper the simulation's own modules (and pandas) call that cudf lacks: absent for
    everybody else, like a pandas name cudf does not have."""

    def __init__(self, implementation: Any) -> None:
        self.implementation = implementation

    def __get__(self, obj: Any, owner: type | None = None) -> Any:
        if _from_library():
            return self.implementation.__get__(obj, owner or type(obj))
        raise AttributeError(f"'{(owner or type(obj)).__name__}' object has no attribute '{self.name}'")


def accepted_names(cls: type) -> set[str]:
    """Public names the simulated class answers (``NotSimulated`` ones included), for tests."""
    return {name for name in dir(cls) if not name.startswith("_")
            and not isinstance(inspect.getattr_static(cls, name), Absent)}


def check_own_methods(class_name: str) -> Callable[[type], type]:
    """Class decorator for the simulated accessors: their own public methods take cudf's signature
    (the rest goes through the accessor's ``__getattr__``, which checks names and keywords)."""

    def decorate(cls: type) -> type:
        accepted = members(class_name)
        for name, value in list(vars(cls).items()):
            if name.startswith("_") or not isinstance(value, types.FunctionType):
                continue
            if name not in accepted:
                raise TypeError(f"simulated {cls.__name__}.{name} is not part of cudf's {class_name}")
            setattr(cls, name, checked(class_name, name, value, accepted[name]))
        return cls

    return decorate
