"""Write cudf's public API surface (``cudf_api_surface.json``) from the released cudf and dask-cudf wheels.

Why it exists: the simulated cudf in this folder runs on pandas, and pandas has many methods and keywords that
real cudf does not. A learner's code that passes in the simulation must not fail on a GPU, so the simulation
refuses whatever the released cudf does not define. That list must come from the release itself, never from
memory, so this script reads the wheels' Python sources with ``ast`` straight from the zip files: nothing is
imported, nothing is extracted, no GPU is needed. It follows cudf's imports across modules, linearises each
class's bases (C3, as Python does), and reproduces the methods cudf's delegating mixins generate at class
creation (``cudf/core/mixins/mixin_factory.py``: ``_create_delegating_mixin``, ``_should_define_operation``)
with the signatures of their ``.pyi`` stubs.

A maintainer refreshes the file at each RAPIDS release (a maintainer's step; CI never downloads wheels)::

    pip download --no-deps --only-binary=:all: --python-version 3.11 \\
        --platform manylinux_2_28_x86_64 cudf-cu12==X dask-cudf-cu12==X -d /tmp/wheels
    python gpu_sim/generate_api_surface.py /tmp/wheels/cudf_cu12-X-*.whl \\
        /tmp/wheels/dask_cudf_cu12-X-*.whl --output gpu_sim/cudf_api_surface.json

Bad input (not a wheel, another distribution, a missing cudf or dask-cudf wheel) prints one ``error: ...``
line and exits with status 2; the output is written atomically (a temporary file, then ``os.replace``).
"""

from __future__ import annotations

import argparse
import ast
import builtins
import email.parser
import hashlib
import json
import os
import re
import sys
import tempfile
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

GENERATOR = "gpu_sim/generate_api_surface.py"
DEFAULT_OUTPUT = Path(__file__).with_name("cudf_api_surface.json")
PACKAGES = {"cudf": re.compile(r"^cudf-cu\d+$"), "dask_cudf": re.compile(r"^dask-cudf-cu\d+$")}

# The classes whose members the file lists. Each key is fixed (the simulation looks them up by key); where the
# class is found is read from the sources: a public name, a module's class, the class a property returns (for
# ``Series.dt`` the branch taken for datetime64 data, dtype kind "M"), or a class attribute (``resample``
# builds ``self.__class__._resampler``).
TARGETS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("DataFrame", ("name", "cudf", "DataFrame")),
    ("Series", ("name", "cudf", "Series")),
    ("Index", ("name", "cudf", "Index")),
    ("RangeIndex", ("name", "cudf", "RangeIndex")),
    ("DatetimeIndex", ("name", "cudf", "DatetimeIndex")),
    ("TimedeltaIndex", ("name", "cudf", "TimedeltaIndex")),
    ("CategoricalIndex", ("name", "cudf", "CategoricalIndex")),
    ("MultiIndex", ("name", "cudf", "MultiIndex")),
    ("DataFrameGroupBy", ("name", "cudf.core.groupby.groupby", "DataFrameGroupBy")),
    ("SeriesGroupBy", ("name", "cudf.core.groupby.groupby", "SeriesGroupBy")),
    ("DatetimeProperties", ("returned_by", "Series", "dt", "M")),
    ("TimedeltaProperties", ("returned_by", "Series", "dt", "m")),
    ("StringMethods", ("returned_by", "Series", "str", "")),
    ("DataFrameResampler", ("class_attribute", "DataFrame", "_resampler")),
    ("SeriesResampler", ("class_attribute", "Series", "_resampler")),
)

# Decorators outside cudf whose effect is known from the standard library's documentation.
EXTERNAL_DECORATORS = {
    "functools.cached_property": "property",
    "functools.cache": "preserve",  # functools.wraps-style wrapper: same parameters
    "functools.lru_cache": "preserve",
    "abc.abstractmethod": "preserve",
    "typing.overload": "overload",
    "typing_extensions.overload": "overload",
}
BUILTIN_DECORATORS = {"property": "property", "classmethod": "classmethod", "staticmethod": "staticmethod"}
PARAM_KINDS = ("POSITIONAL_ONLY", "POSITIONAL_OR_KEYWORD", "VAR_POSITIONAL", "KEYWORD_ONLY", "VAR_KEYWORD")
MAX_DEPTH = 40
NOT_DUNDERS = {"__doc__", "__module__", "__qualname__"}  # every class has them; patching __doc__ adds nothing


class InputError(Exception):
    """Bad input: reported as one ``error:`` line and exit status 2."""


# --------------------------------------------------------------------------------------------------- wheels


@dataclass
class Wheel:
    """One wheel: what the file records about it and the package sources it holds."""

    file: str
    distribution: str
    version: str
    sha256: str
    package: str
    sources: dict[str, str]


def read_wheel(path: Path) -> Wheel:
    """The wheel's metadata and its package's .py/.pyi sources, read from the zip without extracting it."""
    if not path.is_file():
        raise InputError(f"{path}: no such file")
    if path.suffix != ".whl" or not zipfile.is_zipfile(path):
        raise InputError(f"{path.name}: not a wheel (a .whl zip file)")
    with zipfile.ZipFile(path) as archive:
        names = archive.namelist()
        metadata = [n for n in names if re.fullmatch(r"[^/]+\.dist-info/METADATA", n)]
        if len(metadata) != 1:
            raise InputError(f"{path.name}: not a wheel (no single .dist-info/METADATA)")
        headers = email.parser.Parser().parsestr(archive.read(metadata[0]).decode("utf-8"), headersonly=True)
        distribution = re.sub(r"[-_.]+", "-", headers.get("Name", "")).lower()
        version = headers.get("Version", "")
        package = next((pkg for pkg, pattern in PACKAGES.items() if pattern.match(distribution)), None)
        if package is None:
            raise InputError(f"{path.name}: distribution {distribution!r} is neither cudf-cuNN nor dask-cudf-cuNN")
        sources = {
            n: archive.read(n).decode("utf-8")
            for n in names
            if n.startswith(f"{package}/") and n.endswith((".py", ".pyi"))
        }
    if f"{package}/__init__.py" not in sources:
        raise InputError(f"{path.name}: no {package}/__init__.py in the wheel")
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    return Wheel(path.name, distribution, version, digest, package, sources)


def check_wheels(wheels: list[Wheel]) -> list[Wheel]:
    """Exactly one cudf and one dask-cudf wheel of the same release (major.minor), cudf first."""
    by_package: dict[str, list[Wheel]] = {pkg: [w for w in wheels if w.package == pkg] for pkg in PACKAGES}
    for package, found in by_package.items():
        if len(found) != 1:
            what = "missing" if not found else f"given {len(found)} times"
            raise InputError(f"the {package.replace('_', '-')} wheel is {what}")
    cudf_wheel, dask_wheel = by_package["cudf"][0], by_package["dask_cudf"][0]
    if cudf_wheel.version.split(".")[:2] != dask_wheel.version.split(".")[:2]:
        raise InputError(f"cudf {cudf_wheel.version} and dask-cudf {dask_wheel.version} are different releases")
    return [cudf_wheel, dask_wheel]


# --------------------------------------------------------------------------------------------------- symbols


@dataclass(frozen=True)
class ModuleRef:
    name: str


@dataclass(frozen=True)
class External:
    dotted: str


@dataclass(frozen=True)
class FuncRef:
    module: str
    node: ast.FunctionDef | ast.AsyncFunctionDef


@dataclass(frozen=True)
class ClassRef:
    module: str
    node: ast.ClassDef


@dataclass(frozen=True)
class MixinRef:
    """A class built by ``_create_delegating_mixin(name, doc, category, base_operation, supported)``."""

    module: str
    name: str
    category: str
    base_operation: str
    supported: frozenset[str]


@dataclass(frozen=True)
class ValueRef:
    module: str
    name: str
    node: ast.expr


Symbol = ModuleRef | External | FuncRef | ClassRef | MixinRef | ValueRef


@dataclass
class Module:
    name: str
    path: str
    is_package: bool
    tree: ast.Module
    stub: ast.Module | None
    bindings: dict[str, ast.AST] | None = None


def _runtime_statements(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """Statements that run at import time, in order (the ``else`` branch of ``if TYPE_CHECKING``; a ``try``
    body after its handlers, so that the successful import wins)."""
    for stmt in body:
        if isinstance(stmt, ast.If):
            test = ast.unparse(stmt.test)
            if test in ("TYPE_CHECKING", "typing.TYPE_CHECKING"):
                yield from _runtime_statements(stmt.orelse)
            else:
                yield from _runtime_statements(stmt.body)
                yield from _runtime_statements(stmt.orelse)
        elif isinstance(stmt, ast.Try):
            for handler in stmt.handlers:
                yield from _runtime_statements(handler.body)
            yield from _runtime_statements(stmt.body)
            yield from _runtime_statements(stmt.orelse)
        else:
            yield stmt


class Sources:
    """The modules of the cudf and dask_cudf packages, parsed lazily, and name resolution across them."""

    def __init__(self, files: dict[str, str]):
        self.files = files
        self.modules: dict[str, Module] = {}
        self.notes: set[str] = set()
        for path in files:
            if not path.endswith(".py"):
                continue
            parts = path[:-3].split("/")
            is_package = parts[-1] == "__init__"
            name = ".".join(parts[:-1] if is_package else parts)
            self.modules[name] = None  # type: ignore[assignment]  # parsed on first use

    def has_module(self, name: str) -> bool:
        return name in self.modules

    def module(self, name: str) -> Module:
        found = self.modules.get(name)
        if found is None:
            path = name.replace(".", "/")
            is_package = f"{path}/__init__.py" in self.files
            path = f"{path}/__init__.py" if is_package else f"{path}.py"
            stub_path = path[:-3] + ".pyi"
            try:
                tree = ast.parse(self.files[path], filename=path)
                stub = ast.parse(self.files[stub_path], filename=stub_path) if stub_path in self.files else None
            except SyntaxError as exc:
                raise InputError(f"{path}: cannot be parsed ({exc.msg}, line {exc.lineno})") from exc
            found = self.modules[name] = Module(name, path, is_package, tree, stub)
        return found

    # ----- bindings of a module's namespace

    def bindings(self, name: str) -> dict[str, ast.AST]:
        """Name -> the statement (or import alias) that binds it last at module level, ``del`` honoured."""
        mod = self.module(name)
        if mod.bindings is not None:
            return mod.bindings
        bound: dict[str, ast.AST] = {}
        for stmt in _runtime_statements(mod.tree.body):
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                bound[stmt.name] = stmt
            elif isinstance(stmt, ast.Import):
                for alias in stmt.names:
                    bound[alias.asname or alias.name.split(".")[0]] = ast.Import(names=[alias])
            elif isinstance(stmt, ast.ImportFrom):
                for alias in stmt.names:
                    if alias.name != "*":
                        bound[alias.asname or alias.name] = ast.ImportFrom(stmt.module, [alias], stmt.level)
            elif isinstance(stmt, ast.Assign):
                for target in stmt.targets:
                    if isinstance(target, ast.Name):
                        bound[target.id] = stmt
            elif isinstance(stmt, ast.AnnAssign) and stmt.value is not None and isinstance(stmt.target, ast.Name):
                bound[stmt.target.id] = stmt
            elif isinstance(stmt, ast.Delete):
                for target in stmt.targets:
                    if isinstance(target, ast.Name):
                        bound.pop(target.id, None)
        mod.bindings = bound
        return bound

    def absolute(self, module: str, level: int, target: str | None) -> str:
        """The absolute module name of a (possibly relative) ``from`` import inside ``module``."""
        if level == 0:
            return target or ""
        mod = self.module(module)
        parts = module.split(".")
        base = parts if mod.is_package else parts[:-1]
        base = base[: len(base) - (level - 1)]
        return ".".join(base + ([target] if target else []))

    def resolve_name(self, module: str, name: str, depth: int = 0) -> Symbol | None:
        """What ``name`` refers to in ``module``'s namespace (None: not bound there)."""
        if depth > MAX_DEPTH:
            self.notes.add(f"import cycle while resolving {module}.{name}")
            return None
        if not self.has_module(module):
            return External(f"{module}.{name}")
        node = self.bindings(module).get(name)
        if node is None:
            submodule = f"{module}.{name}"
            return ModuleRef(submodule) if self.has_module(submodule) else None
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return FuncRef(module, node)
        if isinstance(node, ast.ClassDef):
            return ClassRef(module, node)
        if isinstance(node, ast.Import):
            alias = node.names[0]
            dotted = alias.name if alias.asname else alias.name.split(".")[0]
            return ModuleRef(dotted) if self.has_module(dotted) else External(dotted)
        if isinstance(node, ast.ImportFrom):
            source = self.absolute(module, node.level, node.module)
            imported = node.names[0].name
            if not self.has_module(source):
                return External(f"{source}.{imported}")
            if source != module and imported in self.bindings(source):
                return self.resolve_name(source, imported, depth + 1)
            submodule = f"{source}.{imported}"
            return ModuleRef(submodule) if self.has_module(submodule) else None
        assert isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None
        mixin = self._mixin(module, name, node.value, depth)
        if mixin is not None:
            return mixin
        if isinstance(node.value, (ast.Name, ast.Attribute)):
            target = self.resolve_expr(module, node.value, depth + 1)
            if target is not None and not isinstance(target, tuple):
                return target
        return ValueRef(module, name, node.value)

    def resolve_expr(self, module: str, expr: ast.expr, depth: int = 0) -> Symbol | tuple | None:
        """A Name/Attribute/Subscript expression in ``module``; ``(ClassRef, attribute)`` for a class member."""
        if depth > MAX_DEPTH:
            return None
        if isinstance(expr, ast.Name):
            found = self.resolve_name(module, expr.id, depth + 1)
            if found is None and hasattr(builtins, expr.id):
                return External(f"builtins.{expr.id}")
            return found
        if isinstance(expr, ast.Subscript):
            return self.resolve_expr(module, expr.value, depth + 1)
        if isinstance(expr, ast.Attribute):
            owner = self.resolve_expr(module, expr.value, depth + 1)
            if isinstance(owner, ModuleRef):
                return self.resolve_name(owner.name, expr.attr, depth + 1)
            if isinstance(owner, External):
                return External(f"{owner.dotted}.{expr.attr}")
            if isinstance(owner, (ClassRef, MixinRef)):
                return (owner, expr.attr)
        return None

    def _mixin(self, module: str, name: str, value: ast.expr, depth: int) -> MixinRef | None:
        """``Name = _create_delegating_mixin("Name", doc, "CATEGORY", "_base_op", {ops})`` (mixin_factory.py)."""
        if not (isinstance(value, ast.Call) and len(value.args) == 5):
            return None
        func = self.resolve_expr(module, value.func, depth + 1)
        if not (isinstance(func, FuncRef) and func.node.name == "_create_delegating_mixin"):
            return None
        _, _, category, base_operation, supported = value.args
        ops = self.literal_set(module, supported)
        if not isinstance(category, ast.Constant) or not isinstance(base_operation, ast.Constant) or ops is None:
            self.notes.add(f"{module}.{name}: delegating mixin with arguments that are not literals; skipped")
            return None
        return MixinRef(module, name, category.value, base_operation.value, frozenset(ops))

    def literal_set(self, module: str, expr: ast.expr) -> set[str] | None:
        """A set of strings written as a literal, ``set()``/``frozenset(...)``, a union/difference of those, or a
        reference to a mixin's supported set (``BinaryOperand._SUPPORTED_BINARY_OPERATIONS``)."""
        if isinstance(expr, (ast.Set, ast.List, ast.Tuple)):
            items = [e.value for e in expr.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
            return set(items) if len(items) == len(expr.elts) else None
        if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name) and expr.func.id in ("set", "frozenset"):
            return set() if not expr.args else self.literal_set(module, expr.args[0])
        if isinstance(expr, ast.BinOp) and isinstance(expr.op, (ast.BitOr, ast.Sub)):
            left, right = self.literal_set(module, expr.left), self.literal_set(module, expr.right)
            if left is None or right is None:
                return None
            return left | right if isinstance(expr.op, ast.BitOr) else left - right
        if isinstance(expr, ast.Attribute):
            owner = self.resolve_expr(module, expr.value)
            if isinstance(owner, MixinRef) and expr.attr == f"_SUPPORTED_{owner.category}S":
                return set(owner.supported)
        return None


# --------------------------------------------------------------------------------------------------- functions


def params_of(args: ast.arguments, drop_first: bool = False) -> list[dict[str, str | None]]:
    """inspect-style parameters of a def or lambda; ``default`` is the source text of the default."""
    positional = [*args.posonlyargs, *args.args]
    defaults: list[ast.expr | None] = [None] * (len(positional) - len(args.defaults)) + list(args.defaults)
    params: list[dict[str, str | None]] = []
    for index, (arg, default) in enumerate(zip(positional, defaults, strict=True)):
        kind = "POSITIONAL_ONLY" if index < len(args.posonlyargs) else "POSITIONAL_OR_KEYWORD"
        params.append(_param(arg.arg, kind, default))
    if drop_first and params:
        params.pop(0)
    if args.vararg:
        params.append(_param(args.vararg.arg, "VAR_POSITIONAL", None))
    for arg, default in zip(args.kwonlyargs, args.kw_defaults, strict=True):
        params.append(_param(arg.arg, "KEYWORD_ONLY", default))
    if args.kwarg:
        params.append(_param(args.kwarg.arg, "VAR_KEYWORD", None))
    return params


def _param(name: str, kind: str, default: ast.expr | None) -> dict[str, str | None]:
    return {"name": name, "kind": kind, "default": None if default is None else ast.unparse(default)}


def _returns(func: ast.FunctionDef | ast.AsyncFunctionDef) -> Iterator[ast.expr | None]:
    """The values of ``func``'s own return statements (not those of nested functions)."""
    stack: list[ast.AST] = list(func.body)
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Return):
            yield node.value
        elif not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            stack.extend(ast.iter_child_nodes(node))


def _nested_defs(func: ast.FunctionDef | ast.AsyncFunctionDef) -> dict[str, ast.FunctionDef]:
    return {n.name: n for n in ast.walk(func) if isinstance(n, ast.FunctionDef) and n is not func}


class Decorators:
    """What a decorator does to a function: turns it into a property/classmethod/staticmethod, keeps its
    signature (it returns the function, or a wrapper made with ``functools.wraps``), or is unknown."""

    def __init__(self, sources: Sources):
        self.sources = sources

    def effect(self, module: str, expr: ast.expr) -> str:
        if isinstance(expr, ast.Attribute) and expr.attr in ("setter", "getter", "deleter"):
            return "property"
        called = isinstance(expr, ast.Call)
        target = self.sources.resolve_expr(module, expr.func if called else expr)  # type: ignore[attr-defined]
        if isinstance(target, External):
            name = target.dotted.removeprefix("builtins.")
            if not called and name in BUILTIN_DECORATORS:
                return BUILTIN_DECORATORS[name]
            return EXTERNAL_DECORATORS.get(target.dotted, "unknown")
        if isinstance(target, FuncRef):
            ok = self._factory(target) if called else self._decorator(target)
            return "preserve" if ok else "unknown"
        if isinstance(target, ValueRef) and isinstance(target.node, ast.Call):
            # ``x = functools.partial(f, ...)`` calls f; ``doc_describe = docfmt_partial(...)`` calls what
            # docfmt_partial returns (a functools.partial of docfmt).
            inner = self._partial_target(target.module, target.node)
            if inner is None:
                maker = self.sources.resolve_expr(target.module, target.node.func)
                inner = self._returned_partial(maker) if isinstance(maker, FuncRef) else None
            if inner is not None:
                ok = self._factory(inner) if called else self._decorator(inner)
                return "preserve" if ok else "unknown"
        return "unknown"

    def _decorator(self, func: FuncRef, depth: int = 0) -> bool:
        """True when every return gives back the decorated function or a ``functools.wraps`` wrapper of it."""
        node = func.node
        if depth > 5 or not (node.args.posonlyargs or node.args.args):
            return False
        wrapped = (node.args.posonlyargs or node.args.args)[0].arg
        nested = _nested_defs(node)
        verdicts = []
        for value in _returns(node):
            if isinstance(value, ast.Name) and value.id == wrapped:
                verdicts.append(True)
            elif isinstance(value, ast.Name) and value.id in nested:
                verdicts.append(self._wraps(func.module, nested[value.id], wrapped))
            elif isinstance(value, ast.Lambda):
                continue  # the ``@decorator("argument")`` branch of a dual-use decorator
            else:
                verdicts.append(False)
        return bool(verdicts) and all(verdicts)

    def _factory(self, func: FuncRef) -> bool:
        """True when the decorator factory returns a signature-keeping decorator. A dual-use decorator
        (``@f`` and ``@f("reason")``, cudf's ``_external_only_api``) returns ``lambda g: f(g, reason)`` when
        called, and the function itself or its wrapper when applied: the latter returns are its decorator side."""
        node = func.node
        first = (node.args.posonlyargs or node.args.args or [None])[0]
        nested = _nested_defs(node)
        verdicts = []
        for value in _returns(node):
            if isinstance(value, ast.Lambda):
                body = value.body
                calls_itself = isinstance(body, ast.Call) and ast.unparse(body.func) == node.name
                verdicts.append(calls_itself and self._decorator(func))
            elif isinstance(value, ast.Name) and first is not None and value.id == first.arg:
                continue
            elif isinstance(value, ast.Name) and value.id in nested:
                wrapper = nested[value.id]
                if first is not None and self._wraps(func.module, wrapper, first.arg):
                    continue
                verdicts.append(self._decorator(FuncRef(func.module, wrapper), 1))
            else:
                inner = self._partial_target(func.module, value)
                verdicts.append(inner is not None and self._factory(inner))
        return bool(verdicts) and all(verdicts)

    def _wraps(self, module: str, wrapper: ast.FunctionDef, wrapped: str) -> bool:
        for deco in wrapper.decorator_list:
            if isinstance(deco, ast.Call) and deco.args and ast.unparse(deco.args[0]) == wrapped:
                target = self.sources.resolve_expr(module, deco.func)
                if isinstance(target, External) and target.dotted == "functools.wraps":
                    return True
        return False

    def _returned_partial(self, func: FuncRef) -> FuncRef | None:
        values = list(_returns(func.node))
        return self._partial_target(func.module, values[0]) if len(values) == 1 else None

    def _partial_target(self, module: str, value: ast.expr | None) -> FuncRef | None:
        """``functools.partial(f, ...)`` -> f."""
        if isinstance(value, ast.Call) and value.args:
            maker = self.sources.resolve_expr(module, value.func)
            if isinstance(maker, External) and maker.dotted == "functools.partial":
                inner = self.sources.resolve_expr(module, value.args[0])
                return inner if isinstance(inner, FuncRef) else None
        return None


# --------------------------------------------------------------------------------------------------- classes


@dataclass(eq=False)
class Raw:
    """One name bound in a class's own namespace, before it is described."""

    node: ast.AST
    module: str
    owner: str  # "cudf/core/frame.py:Frame"
    how: str  # "def", "assign", "declared", "patch", "instance", "generated"
    extra: dict = field(default_factory=dict)


@dataclass(eq=False)
class ClassModel:
    qualname: str
    module: str
    name: str
    defined_in: str
    bases: list  # ClassModel | str (a base outside the cudf package)
    own: dict[str, Raw]
    mixin: MixinRef | None = None
    mro: list = field(default_factory=list)
    generated: dict[str, Raw] = field(default_factory=dict)


class Classes:
    """Class models: own namespaces (class body, module-level patches, mixin-generated operations) and MROs."""

    def __init__(self, sources: Sources):
        self.sources = sources
        self.models: dict[str, ClassModel] = {}
        self.patches: dict[str, dict[str, Raw]] | None = None

    def model(self, ref: ClassRef | MixinRef) -> ClassModel:
        module = self.sources.module(ref.module)
        name = ref.name if isinstance(ref, MixinRef) else ref.node.name
        qualname = f"{ref.module}.{name}"
        if qualname in self.models:
            return self.models[qualname]
        owner = f"{module.path}:{name}"
        if isinstance(ref, MixinRef):
            model = ClassModel(qualname, ref.module, name, owner, [], {}, mixin=ref)
            self.models[qualname] = model
            model.mro = [model, "object"]
            return model
        model = ClassModel(qualname, ref.module, name, owner, [], self._own(ref, owner))
        self.models[qualname] = model
        for base in ref.node.bases:
            target = self.sources.resolve_expr(ref.module, base)
            if isinstance(target, (ClassRef, MixinRef)):
                model.bases.append(self.model(target))
            elif isinstance(target, External):
                model.bases.append(target.dotted.removeprefix("builtins."))
            else:
                model.bases.append(ast.unparse(base))
                self.sources.notes.add(f"{qualname}: base {ast.unparse(base)} could not be resolved")
        for name_, raw in self._patches().get(qualname, {}).items():
            model.own[name_] = raw
        model.mro = self._c3(model)
        self._generate(model)
        return model

    def _own(self, ref: ClassRef, owner: str) -> dict[str, Raw]:
        own: dict[str, Raw] = {}
        for stmt in _runtime_statements(ref.node.body):
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                own[stmt.name] = Raw(stmt, ref.module, owner, "def", {"before": dict(own)})
            elif isinstance(stmt, ast.Assign):
                for target in stmt.targets:
                    if isinstance(target, ast.Name):
                        own[target.id] = Raw(stmt.value, ref.module, owner, "assign", {"before": dict(own)})
            elif isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
                how = "assign" if stmt.value is not None else "declared"
                value = stmt.value if stmt.value is not None else stmt.annotation
                own.setdefault(stmt.target.id, Raw(value, ref.module, owner, how, {"before": dict(own)}))
                if how == "assign":
                    own[stmt.target.id] = Raw(value, ref.module, owner, how, {"before": dict(own)})
        init = own.get("__init__")
        if init is not None and isinstance(init.node, ast.FunctionDef):
            for node in ast.walk(init.node):
                targets = node.targets if isinstance(node, ast.Assign) else []
                for target in targets:
                    if (
                        isinstance(target, ast.Attribute)
                        and isinstance(target.value, ast.Name)
                        and target.value.id == "self"
                        and not target.attr.startswith("_")
                    ):
                        own.setdefault(target.attr, Raw(node.value, ref.module, owner, "instance"))
        return own

    def _patches(self) -> dict[str, dict[str, Raw]]:
        """Module-level ``Class.name = value`` and ``for name in (...): setattr(Class, name, value)`` in cudf."""
        if self.patches is not None:
            return self.patches
        self.patches = {}
        for modname in sorted(self.sources.modules):
            if not modname.startswith("cudf"):
                continue
            module = self.sources.module(modname)
            if "setattr(" not in self.sources.files[module.path] and not re.search(
                r"^[A-Z]\w*\.\w+ = ", self.sources.files[module.path], re.M
            ):
                continue
            for stmt in _runtime_statements(module.tree.body):
                for cls_expr, attr, value in self._patch_statements(stmt):
                    cls = self.sources.resolve_expr(modname, cls_expr)
                    if isinstance(cls, ClassRef):
                        owner = f"{module.path}:{cls.node.name}"
                        raw = Raw(value, modname, owner, "patch", {"statement": stmt.lineno})
                        self.patches.setdefault(f"{cls.module}.{cls.node.name}", {})[attr] = raw
        return self.patches

    @staticmethod
    def _patch_statements(stmt: ast.stmt) -> Iterator[tuple[ast.expr, str, ast.expr]]:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Attribute):
            target = stmt.targets[0]
            if isinstance(target.value, ast.Name):
                yield target.value, target.attr, stmt.value
        elif isinstance(stmt, ast.For) and isinstance(stmt.target, ast.Name):
            if not isinstance(stmt.iter, (ast.Tuple, ast.List)):
                return
            names = [e.value for e in stmt.iter.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
            for inner in stmt.body:
                call = inner.value if isinstance(inner, ast.Expr) else None
                if (
                    isinstance(call, ast.Call)
                    and isinstance(call.func, ast.Name)
                    and call.func.id == "setattr"
                    and len(call.args) == 3
                    and isinstance(call.args[1], ast.Name)
                    and call.args[1].id == stmt.target.id
                ):
                    for name in names:
                        value = _substitute(call.args[2], stmt.target.id, name)
                        yield call.args[0], name, value

    def _c3(self, model: ClassModel) -> list:
        """Python's C3 linearisation; a base outside cudf counts as a class whose only base is object."""
        sequences = []
        for base in model.bases:
            sequences.append(list(base.mro) if isinstance(base, ClassModel) else [base, "object"])
        sequences.append(list(model.bases))
        result: list = [model]
        while any(sequences):
            sequences = [s for s in sequences if s]
            for seq in sequences:
                head = seq[0]
                if not any(head in s[1:] for s in sequences):
                    break
            else:
                raise InputError(f"{model.qualname}: no consistent method resolution order")
            result.append(head)
            for seq in sequences:
                if seq and seq[0] == head:
                    seq.pop(0)
        if "object" not in result:
            result.append("object")
        return result

    # ----- delegating mixins (cudf/core/mixins/mixin_factory.py)

    def _generate(self, model: ClassModel) -> None:
        """``OperationMixin.__init_subclass__`` for ``model``: define each valid operation that
        ``_should_define_operation`` allows (mixin_factory.py), delegating to the class's base operation."""
        models = [c for c in model.mro if isinstance(c, ClassModel)]
        external = [c for c in model.mro if isinstance(c, str) and c != "object"]
        for mixin_model in models[1:]:
            mixin = mixin_model.mixin
            if mixin is None:
                continue
            valid: set[str] = set()
            for cls in models:
                raw = cls.own.get(f"_VALID_{mixin.category}S")
                if raw is not None:
                    ops = self.sources.literal_set(raw.module, raw.node)  # type: ignore[arg-type]
                    if ops is None:
                        self.sources.notes.add(f"{cls.qualname}._VALID_{mixin.category}S is not a literal set")
                        continue
                    valid |= ops
            attributes = set(dir(object))
            for cls in models:
                attributes |= set(cls.own) | set(cls.generated)
            for op in sorted(valid & mixin.supported):
                if not self._should_define(model, models, op, mixin.base_operation, attributes):
                    continue
                base_cls = next((c for c in models if mixin.base_operation in c.own), None)
                model.generated[op] = Raw(
                    mixin_model, model.module, model.defined_in, "generated", {"mixin": mixin, "base": base_cls}
                )
            if external and valid:
                self.sources.notes.add(
                    f"{model.qualname}: bases outside cudf ({', '.join(external)}) were not searched when deciding "
                    f"which {mixin.name} operations it generates"
                )

    @staticmethod
    def _should_define(model: ClassModel, models: list, op: str, base_operation: str, attributes: set) -> bool:
        if op not in attributes:
            return True
        if base_operation not in model.own:
            return False
        for cls in models:
            if op in cls.own:
                return False
            if op in cls.generated:
                return True
        return True  # only ``object`` defines it


def _substitute(expr: ast.expr, name: str, value: str) -> ast.expr:
    """``expr`` with the loop variable ``name`` replaced by the string ``value``."""

    class Replace(ast.NodeTransformer):
        def visit_Name(self, node: ast.Name) -> ast.AST:
            return ast.copy_location(ast.Constant(value), node) if node.id == name else node

    return Replace().visit(ast.parse(ast.unparse(expr), mode="eval")).body


# --------------------------------------------------------------------------------------------------- members


class Describer:
    """Turns the raw namespace entries of a class's MRO into the file's member records."""

    def __init__(self, sources: Sources, classes: Classes):
        self.sources = sources
        self.classes = classes
        self.decorators = Decorators(sources)

    def members(self, model: ClassModel) -> tuple[dict[str, dict], list[str]]:
        found: dict[str, Raw] = {}
        for cls in model.mro:
            if not isinstance(cls, ClassModel):
                continue
            for name, raw in [*cls.own.items(), *cls.generated.items()]:
                found.setdefault(name, raw)
        members = {}
        for name in sorted(found):
            if not name.startswith("_"):
                members[name] = self.describe(model, name, found[name])
        dunders = sorted(
            n for n in found if n.startswith("__") and n.endswith("__") and len(n) > 4 and n not in NOT_DUNDERS
        )
        return members, dunders

    def lookup(self, model: ClassModel, name: str) -> Raw | None:
        for cls in model.mro:
            if isinstance(cls, ClassModel):
                raw = cls.own.get(name) or cls.generated.get(name)
                if raw is not None:
                    return raw
        return None

    def describe(self, model: ClassModel, name: str, raw: Raw, depth: int = 0) -> dict:
        if raw.how == "generated":
            return self._generated(name, raw)
        if raw.how in ("declared", "instance"):
            what = "an annotation in the class body" if raw.how == "declared" else "an assignment in __init__"
            note = f"set on instances ({what})"
            return {"kind": "attribute", "defined_in": raw.owner, "instance": True, "note": note}
        node = raw.node
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return self._function(node, raw.module, raw.owner, method=True)
        if isinstance(node, ast.ClassDef):
            return {"kind": "attribute", "defined_in": raw.owner, "value": f"class {node.name}"}
        assert isinstance(node, ast.expr)
        record = self._value(model, name, node, raw, depth)
        if raw.how == "patch":
            record["patched_at"] = f"{raw.owner.split(':')[0]}:{raw.extra['statement']}"
        return record

    def _function(self, node, module: str, owner: str, method: bool) -> dict:
        kind = "method" if method else "function"
        unverified = []
        for deco in node.decorator_list:
            effect = self.decorators.effect(module, deco)
            if effect in ("property", "classmethod", "staticmethod") and method and kind == "method":
                kind = effect
            elif effect == "unknown":
                unverified.append(ast.unparse(deco))
        record: dict = {"kind": kind, "defined_in": owner}
        if kind != "property":
            record["params"] = params_of(node.args, drop_first=kind in ("method", "classmethod"))
        if unverified:
            record["unverified_decorators"] = unverified
            self.sources.notes.add(
                f"decorator(s) {', '.join(sorted(set(unverified)))} on {owner}.{node.name}: not shown to keep the "
                "signature; the function's own parameters are recorded"
            )
        return record

    def _value(self, model: ClassModel, name: str, node: ast.expr, raw: Raw, depth: int) -> dict:
        """A class-level assignment: an alias, a property(...) call, a factory-made method, or a plain value."""
        if depth > 5:
            return {"kind": "attribute", "defined_in": raw.owner}
        if isinstance(node, ast.Name) and node.id in raw.extra.get("before", {}):
            target = raw.extra["before"][node.id]
            record = self.describe(model, node.id, target, depth + 1)
            return {**record, "defined_in": raw.owner, "alias_of": node.id}
        if isinstance(node, (ast.Name, ast.Attribute)):
            target = self.sources.resolve_expr(raw.module, node)
            if isinstance(target, tuple):
                cls_model = self.classes.model(target[0])
                member = self.lookup(cls_model, target[1])
                if member is not None:
                    record = self.describe(cls_model, target[1], member, depth + 1)
                    alias = {"alias_of": ast.unparse(node), "alias_resolved": f"{member.owner}.{target[1]}"}
                    return {**record, "defined_in": raw.owner, **alias}
            if isinstance(target, FuncRef):
                record = self._function(target.node, target.module, raw.owner, method=True)
                return {**record, "alias_of": ast.unparse(node)}
        if isinstance(node, ast.Call):
            func = self.sources.resolve_expr(raw.module, node.func)
            if isinstance(func, External) and func.dotted == "builtins.property":
                return {"kind": "property", "defined_in": raw.owner}
            if isinstance(func, External) and func.dotted in ("builtins.classmethod", "builtins.staticmethod"):
                # classmethod(f) drops f's first parameter; staticmethod(f) keeps them all.
                kind = func.dotted.removeprefix("builtins.")
                wrapped = self.sources.resolve_expr(raw.module, node.args[0]) if node.args else None
                params = params_of(wrapped.node.args, kind == "classmethod") if isinstance(wrapped, FuncRef) else []
                return {"kind": kind, "defined_in": raw.owner, "params": params}
            if isinstance(func, FuncRef):
                made = self._made_by(func)
                if made is not None:
                    made_node, how = made
                    params = params_of(made_node.args, drop_first=True)
                    return {"kind": "method", "defined_in": raw.owner, "params": params, "made_by": how}
        if isinstance(node, (ast.Name, ast.Attribute, ast.Call)):
            self.sources.notes.add(f"{raw.owner}.{name} = {ast.unparse(node)[:60]}: not resolved; recorded as a value")
        return {"kind": "attribute", "defined_in": raw.owner}

    def _made_by(self, func: FuncRef) -> tuple[ast.FunctionDef | ast.Lambda, str] | None:
        """The nested def a factory returns: its parameters are what a call is checked against (a
        ``functools.wraps`` wrapper forwards to the wrapped function only what it accepted itself)."""
        nested = _nested_defs(func.node)
        returned = [v.id for v in _returns(func.node) if isinstance(v, ast.Name) and v.id in nested]
        if len(returned) != 1:
            return None
        wrapper = nested[returned[0]]
        where = f"{self.sources.module(func.module).path}:{func.node.name}"
        return wrapper, f"{where} (returns its nested {wrapper.name})"

    def _generated(self, name: str, raw: Raw) -> dict:
        mixin: MixinRef = raw.extra["mixin"]
        base_cls: ClassModel | None = raw.extra["base"]
        record: dict = {"kind": "method", "defined_in": raw.owner}
        stub = self._stub(mixin, name)
        generated_by: dict = {
            "mixin": f"{mixin.module}.{mixin.name}",
            "base_operation": mixin.base_operation,
        }
        if base_cls is not None:
            base_node = base_cls.own[mixin.base_operation].node
            generated_by["base_operation_defined_in"] = base_cls.defined_in
            if isinstance(base_node, ast.FunctionDef):
                runtime = [p for p in params_of(base_node.args, drop_first=True) if p["name"] != "op"]
                generated_by["runtime_params"] = runtime
        if stub is not None:
            record["params"] = params_of(stub.args, drop_first=True)
        else:
            record["params"] = generated_by.get("runtime_params", [])
            self.sources.notes.add(
                f"{mixin.name}.{name}: no stub in the mixin's .pyi; the base operation's parameters are recorded"
            )
        record["generated_by"] = generated_by
        return record

    def _stub(self, mixin: MixinRef, name: str) -> ast.FunctionDef | None:
        stub = self.sources.module(mixin.module).stub
        if stub is None:
            return None
        for cls in stub.body:
            if isinstance(cls, ast.ClassDef) and cls.name == mixin.name:
                for item in cls.body:
                    if isinstance(item, ast.FunctionDef) and item.name == name:
                        return item
        return None

    def getattr_fallback(self, model: ClassModel) -> str | None:
        for cls in model.mro:
            if isinstance(cls, ClassModel) and "__getattr__" in cls.own:
                node = cls.own["__getattr__"].node
                doc = ast.get_docstring(node) if isinstance(node, ast.FunctionDef) else None
                if doc is None:
                    module = self.sources.module(cls.module)
                    class_node = next(
                        (n for n in module.tree.body if isinstance(n, ast.ClassDef) and n.name == cls.name), None
                    )
                    doc = ast.get_docstring(class_node) if class_node is not None else None
                summary = " ".join((doc or "no docstring").split("\n\n")[0].split())
                return f"{cls.defined_in}.__getattr__: {summary}"
        return None

    def constructor(self, model: ClassModel) -> dict:
        found = {}
        for dunder in ("__new__", "__init__"):
            raw = self.lookup(model, dunder)
            if raw is not None and isinstance(raw.node, ast.FunctionDef):
                found[dunder] = {"defined_in": raw.owner, "params": params_of(raw.node.args, drop_first=True)}
        return found


# --------------------------------------------------------------------------------------------------- surface


def find_target(sources: Sources, classes: Classes, spec: tuple[str, ...]) -> ClassModel:
    how = spec[0]
    if how == "name":
        found = sources.resolve_name(spec[1], spec[2])
        if isinstance(found, ClassRef):
            return classes.model(found)
        raise InputError(f"{spec[1]}.{spec[2]} is not a class in this cudf")
    owner = find_target(sources, classes, ("name", "cudf", spec[1]))
    raw = Describer(sources, classes).lookup(owner, spec[2])
    if raw is None:
        raise InputError(f"cudf.{spec[1]} has no {spec[2]}")
    if how == "class_attribute":
        target = sources.resolve_expr(raw.module, raw.node)  # type: ignore[arg-type]
        if isinstance(target, ClassRef):
            return classes.model(target)
        raise InputError(f"cudf.{spec[1]}.{spec[2]} is not a class")
    # returned_by: the class the property returns (in the branch whose test names spec[3], if given)
    node = raw.node
    assert isinstance(node, ast.FunctionDef)
    branches: list[list[ast.stmt]] = [node.body]
    if spec[3]:
        branches = [
            n.body
            for n in ast.walk(node)
            if isinstance(n, ast.If) and any(getattr(c, "value", None) == spec[3] for c in ast.walk(n.test))
        ]
    for body in branches:
        for stmt in body:
            if isinstance(stmt, ast.Return) and isinstance(stmt.value, ast.Call):
                target = sources.resolve_expr(raw.module, stmt.value.func)
                if isinstance(target, ClassRef):
                    return classes.model(target)
    raise InputError(f"cannot tell which class cudf.{spec[1]}.{spec[2]} returns")


def describe_class(describer: Describer, model: ClassModel) -> dict:
    members, dunders = describer.members(model)
    for base in model.mro:
        if isinstance(base, str) and base != "object":
            describer.sources.notes.add(f"{model.qualname}: base {base} is outside cudf; its members are not listed")
    return {
        "qualname": model.qualname,
        "defined_in": model.defined_in,
        "mro": [c.qualname if isinstance(c, ClassModel) else c for c in model.mro],
        "getattr_fallback": describer.getattr_fallback(model),
        "constructor": describer.constructor(model),
        "dunders": dunders,
        "members": members,
    }


def describe_namespace(sources: Sources, classes: Classes, describer: Describer, package: str) -> dict:
    """Every public name the package's ``__init__.py`` binds (and the submodules it imports)."""
    entries: dict[str, dict] = {}
    module = sources.module(package)
    for name in sorted(sources.bindings(package)):
        if name.startswith("_"):
            continue
        entries[name] = describe_symbol(sources, classes, describer, package, sources.resolve_name(package, name))
        if entries[name]["kind"] == "external":
            where = entries[name]["imported_from"]
            sources.notes.add(f"{package}.{name} is {where}, from outside the wheels: recorded by name only")
    for stmt in _runtime_statements(module.tree.body):
        if isinstance(stmt, ast.ImportFrom):
            source = sources.absolute(package, stmt.level, stmt.module)
            parts = source.split(".")
            if parts[0] == package and len(parts) > 1 and not parts[1].startswith("_"):
                entries.setdefault(parts[1], {"kind": "module", "module": f"{package}.{parts[1]}"})
    exported = sources.bindings(package).get("__all__")
    if isinstance(exported, ast.Assign):
        listed = sources.literal_set(package, exported.value) or set()
        for name in sorted(listed - set(entries)):
            if sources.has_module(f"{package}.{name}"):  # bound on the package when any module imports it
                entries[name] = {"kind": "module", "module": f"{package}.{name}", "implicit": True}
    return entries


def describe_symbol(sources: Sources, classes: Classes, describer: Describer, package: str, symbol) -> dict:
    if isinstance(symbol, ClassRef):
        path = sources.module(symbol.module).path
        return {"kind": "class", "qualname": f"{symbol.module}.{symbol.node.name}", "defined_in": path}
    if isinstance(symbol, MixinRef):
        return {"kind": "class", "qualname": f"{symbol.module}.{symbol.name}"}
    if isinstance(symbol, FuncRef):
        return describer._function(symbol.node, symbol.module, sources.module(symbol.module).path, method=False)
    if isinstance(symbol, ModuleRef):
        return {"kind": "module", "module": symbol.name}
    if isinstance(symbol, External):
        return {"kind": "external", "imported_from": symbol.dotted.removeprefix("builtins.")}
    if isinstance(symbol, tuple):  # a class member bound at module level: ``read_text = DataFrame.read_text``
        owner, attr = symbol
        if isinstance(owner, ClassRef):
            raw = describer.lookup(classes.model(owner), attr)
            if raw is not None and isinstance(raw.node, ast.FunctionDef):
                # Read through the class, a staticmethod is a plain function and a classmethod a bound one
                # (its cls already dropped); a plain method keeps its self parameter.
                record = describer._function(raw.node, raw.module, raw.owner, method=True)
                if record["kind"] == "method":
                    record["params"] = params_of(raw.node.args)
                record["kind"] = "function"
                record["alias_of"] = f"{owner.module}.{owner.node.name}.{attr}"
                return record
        return {"kind": "value"}
    if isinstance(symbol, ValueRef):
        path = sources.module(symbol.module).path
        value = symbol.node
        if isinstance(value, (ast.Name, ast.Attribute)):
            target = sources.resolve_expr(symbol.module, value)
            if target is not None:
                return describe_symbol(sources, classes, describer, package, target)
        if isinstance(value, ast.Call):
            maker = sources.resolve_expr(symbol.module, value.func)
            if isinstance(maker, FuncRef):
                made = describer._made_by(maker)
                if made is not None:
                    params = params_of(made[0].args)
                    return {"kind": "function", "defined_in": path, "params": params, "made_by": made[1]}
        return {"kind": "value", "defined_in": path, "value": ast.unparse(value)[:80]}
    return {"kind": "unresolved"}


def build_surface(wheels: list[Wheel], targets: tuple[tuple[str, tuple[str, ...]], ...] | None = None) -> dict:
    """The whole file's content, from the wheels' sources (``targets``: TARGETS unless given)."""
    files: dict[str, str] = {}
    for wheel in wheels:
        files.update(wheel.sources)
    sources = Sources(files)
    classes = Classes(sources)
    describer = Describer(sources, classes)
    described = {}
    for key, spec in targets or TARGETS:
        described[key] = describe_class(describer, find_target(sources, classes, spec))
    functions = {pkg: describe_namespace(sources, classes, describer, pkg) for pkg in PACKAGES}
    sources.notes.update(_fixed_notes())
    return {
        "generator": GENERATOR,
        "wheels": [
            {"file": w.file, "distribution": w.distribution, "version": w.version, "sha256": w.sha256}
            for w in wheels
        ],
        "classes": described,
        "functions": functions,
        "notes": sorted(sources.notes),
    }


def _fixed_notes() -> list[str]:
    """What the reader must know about how the file is made (true for any release this script reads)."""
    return [
        "Mixin-generated operations (generated_by): params are the .pyi stub's; at run time the method is "
        "mixin_factory._partialmethod(base_operation, op=name), which accepts (*args, **kwargs) and forwards them, "
        "so the keywords really accepted are runtime_params (the base operation's, without self and op), and a "
        "positional argument binds to op and fails with 'got multiple values for argument op'.",
        "Only binary-operation dunders come from BinaryOperand's set; __divmod__/__rdivmod__, which binops.py adds "
        "in its own __init_subclass__, are not listed in dunders.",
        "Instance attributes: public names assigned to self in the class's own __init__, and class-body "
        "annotations without a value, are listed with instance: true; attributes set elsewhere are not.",
        "Names added at run time are not listed: accessors registered with cudf.api.extensions, and attributes "
        "patched from another package (dask_cudf/__init__.py sets cudf.DataFrame.mean = None only when cudf "
        "lacks it).",
        "A mixin built by _create_delegating_mixin is named here by the module that binds it "
        "(cudf.core.mixins.reductions.Reducible); at run time its __module__ is cudf.core.mixins.mixin_factory.",
    ]


# --------------------------------------------------------------------------------------------------- output


def render(value, indent: int = 0) -> str:
    """JSON with sorted keys, one key per line, and flat objects (a parameter, a wheel) on one line."""
    pad = "  " * indent
    inner = "  " * (indent + 1)
    if isinstance(value, dict):
        if not value:
            return "{}"
        if all(not isinstance(v, (dict, list)) for v in value.values()):
            return json.dumps(value, sort_keys=True)
        items = [f"{inner}{json.dumps(k)}: {render(value[k], indent + 1)}" for k in sorted(value)]
        return "{\n" + ",\n".join(items) + "\n" + pad + "}"
    if isinstance(value, list):
        if not value:
            return "[]"
        items = [f"{inner}{render(v, indent + 1)}" for v in value]
        return "[\n" + ",\n".join(items) + "\n" + pad + "]"
    return json.dumps(value)


def write_atomically(path: Path, text: str) -> None:
    """A reader never sees half a file: write a temporary file beside it, then rename it over the old one."""
    path.parent.mkdir(parents=True, exist_ok=True)
    mode = path.stat().st_mode & 0o777 if path.exists() else 0o644
    descriptor, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.chmod(temporary, mode)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("wheels", nargs="+", type=Path, help="the cudf-cuNN and dask-cudf-cuNN wheel files")
    parser.add_argument("--output", type=Path, default=DEFAULT_OUTPUT, help="default: %(default)s")
    args = parser.parse_args(argv)
    try:
        wheels = check_wheels([read_wheel(path) for path in args.wheels])
        text = render(build_surface(wheels)) + "\n"
        write_atomically(args.output, text)
    except (InputError, OSError, zipfile.BadZipFile, UnicodeDecodeError) as exc:
        print(f"error: {exc}".splitlines()[0], file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
