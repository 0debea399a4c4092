"""cudf's API surface file (gpu_sim/cudf_api_surface.json) and its generator (generate_api_surface.py).

Three kinds of checks: the committed file's structure and the wheels it records; facts read by hand in the
released sources (cudf-cu12 26.10.2 and dask-cudf-cu12 26.10.2 wheels, paths inside the wheel), asserted here
independently of the generator; and the generator's mechanics on a tiny synthetic wheel built in the test
(cross-module inheritance, C3 order, a delegating mixin with its .pyi, aliases, decorators, module-level
patches) with its error paths. Set CUDF_API_WHEELS to a folder holding both wheels to also regenerate the file
and compare it byte for byte (a maintainer's check; CI has no wheels)."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

SIM = Path(__file__).resolve().parents[1]
SURFACE = SIM / "cudf_api_surface.json"
GENERATOR = SIM / "generate_api_surface.py"


def _load_generator():
    spec = importlib.util.spec_from_file_location("generate_api_surface", GENERATOR)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the class is built
    spec.loader.exec_module(module)
    return module


gen = _load_generator()


@pytest.fixture(scope="module")
def surface() -> dict:
    return json.loads(SURFACE.read_text(encoding="utf-8"))


def _names(params: list[dict]) -> list[str]:
    return [p["name"] for p in params]


def _param(params: list[dict], name: str) -> dict:
    return next(p for p in params if p["name"] == name)


# --------------------------------------------------------------------------------------------------- the file


def test_the_file_records_the_cudf_and_dask_cudf_26_10_2_wheels(surface):
    assert surface["generator"] == "gpu_sim/generate_api_surface.py"
    wheels = surface["wheels"]
    assert [w["distribution"] for w in wheels] == ["cudf-cu12", "dask-cudf-cu12"]
    for wheel in wheels:
        assert wheel["version"] == "26.10.2"
        assert re.fullmatch(r"[0-9a-f]{64}", wheel["sha256"])
        name = wheel["distribution"].replace("-", "_")
        assert wheel["file"].startswith(f"{name}-{wheel['version']}-") and wheel["file"].endswith(".whl")


def test_the_file_has_every_target_class_and_is_rendered_as_the_generator_renders(surface):
    assert sorted(surface["classes"]) == sorted(key for key, _ in gen.TARGETS)
    assert set(surface["functions"]) == {"cudf", "dask_cudf"}
    assert SURFACE.read_text(encoding="utf-8") == gen.render(surface) + "\n"  # sorted keys, stable layout
    for cls in surface["classes"].values():
        assert cls["mro"][0] == cls["qualname"] and cls["mro"][-1] == "object"
        for name, member in cls["members"].items():
            assert not name.startswith("_")
            assert member["kind"] in ("method", "classmethod", "staticmethod", "property", "attribute")
            for param in member.get("params", []):
                assert param["kind"] in gen.PARAM_KINDS


@pytest.mark.skipif(not os.environ.get("CUDF_API_WHEELS"), reason="set CUDF_API_WHEELS to a folder with the wheels")
def test_regenerating_from_the_recorded_wheels_gives_the_committed_file(tmp_path, surface):
    folder = Path(os.environ["CUDF_API_WHEELS"])
    out = tmp_path / "surface.json"
    assert gen.main([*(str(folder / w["file"]) for w in surface["wheels"]), "--output", str(out)]) == 0
    assert out.read_bytes() == SURFACE.read_bytes()


# --------------------------------------------------------------------------------------------------- read by hand


def test_dataframe_clip_and_groupby_signatures(surface):
    members = surface["classes"]["DataFrame"]["members"]
    # cudf/core/indexed_frame.py:1084  def clip(self, lower=None, upper=None, axis=1, inplace=False)
    clip = members["clip"]["params"]
    assert _names(clip) == ["lower", "upper", "axis", "inplace"]
    assert _param(clip, "axis")["default"] == "1"
    # cudf/core/dataframe.py:5338-5347  def groupby(self, by=None, axis=0, level=None, as_index=True,
    #   sort=no_default, group_keys=no_default, observed=True, dropna=True)
    groupby = members["groupby"]
    assert groupby["defined_in"] == "cudf/core/dataframe.py:DataFrame"
    assert _param(groupby["params"], "sort")["default"] == "no_default"
    assert "engine" not in _names(groupby["params"])


def test_read_csv_takes_no_pandas_only_keywords(surface):
    # cudf/io/csv.py:93  def read_csv(filepath_or_buffer, sep: str = ",", delimiter=None, header="infer", ...):
    # the module never mentions engine, assume_missing or converters.
    read_csv = surface["functions"]["cudf"]["read_csv"]
    assert read_csv["defined_in"] == "cudf/io/csv.py"
    names = _names(read_csv["params"])
    assert names[:4] == ["filepath_or_buffer", "sep", "delimiter", "header"]
    for pandas_only in ("engine", "assume_missing", "converters", "sample", "dtype_backend"):
        assert pandas_only not in names
    assert "kwargs" not in names  # no **kwargs: an unknown keyword is a TypeError


def test_series_conversions_and_its_items_alias(surface):
    members = surface["classes"]["Series"]["members"]
    # cudf/core/single_column_frame.py:148 to_cupy, :195 to_arrow; cudf/core/series.py:2078 to_pandas
    assert members["to_cupy"]["defined_in"] == "cudf/core/single_column_frame.py:SingleColumnFrame"
    assert members["to_arrow"]["defined_in"] == "cudf/core/single_column_frame.py:SingleColumnFrame"
    assert members["to_pandas"]["defined_in"] == "cudf/core/series.py:Series"
    # cudf/core/series.py:1443-1445  iteritems = items = SingleColumnFrame.__iter__, which is NotIterable.__iter__
    # (cudf/core/mixins/notiterable.py:7): the attribute exists, calling it raises TypeError.
    items = members["items"]
    assert items["alias_of"] == "SingleColumnFrame.__iter__"
    assert items["alias_resolved"] == "cudf/core/mixins/notiterable.py:NotIterable.__iter__"
    assert "__iter__" in surface["classes"]["Series"]["dunders"]
    # pandas has these; cudf 26.10.2 does not define them anywhere in its classes.
    for pandas_only in ("plot", "hist", "to_markdown", "to_excel", "iterrows"):
        assert pandas_only not in members


def test_series_dt_is_datetime_properties_and_its_aliases(surface):
    # cudf/core/series.py:750-751  if self.dtype.kind == "M": return DatetimeProperties(self)
    dt = surface["classes"]["DatetimeProperties"]
    assert dt["qualname"] == "cudf.core.series.DatetimeProperties"
    assert surface["classes"]["Series"]["members"]["dt"]["kind"] == "property"
    # cudf/core/series.py (class DatetimeProperties): day_of_week = dayofweek; quarter is a property
    assert dt["members"]["day_of_week"]["alias_of"] == "dayofweek"
    assert dt["members"]["quarter"]["kind"] == "property"
    assert dt["members"]["strftime"]["kind"] == "method"


def test_groupby_reductions_are_generated_by_the_reducible_mixin(surface):
    gb = surface["classes"]["DataFrameGroupBy"]
    # cudf/core/groupby/groupby.py:543  _VALID_REDUCTIONS = {"sum", "prod", ..., "std"} on GroupBy(Serializable,
    # Reducible, Scannable); cudf/core/mixins/reductions.pyi: def sum(self, skipna: bool = True,
    # min_count: int = 0, **kwargs: Any); groupby.py:1482 def _reduce(self, op, numeric_only=False, min_count=0, ...)
    total = gb["members"]["sum"]
    assert total["defined_in"] == "cudf/core/groupby/groupby.py:GroupBy"
    assert _names(total["params"]) == ["skipna", "min_count", "kwargs"]
    assert total["generated_by"]["mixin"] == "cudf.core.mixins.reductions.Reducible"
    assert _names(total["generated_by"]["runtime_params"]) == ["numeric_only", "min_count", "args", "kwargs"]
    # groupby.py defines std/var itself, so the mixin leaves them alone (mixin_factory._should_define_operation).
    assert "generated_by" not in gb["members"]["std"]
    # groupby.py: aggregate = agg; class DataFrameGroupBy(GroupBy, GetAttrGetItemMixin): columns as attributes
    assert gb["members"]["aggregate"]["alias_of"] == "agg"
    assert gb["getattr_fallback"].startswith("cudf/core/mixins/getitem.py:GetAttrGetItemMixin.__getattr__")
    assert surface["classes"]["SeriesGroupBy"]["getattr_fallback"] is None


def test_dataframe_binary_methods_come_from_module_level_setattr(surface):
    members = surface["classes"]["DataFrame"]["members"]
    # cudf/core/dataframe.py:9261  def wrapper(self, other, axis="columns", level=None, fill_value=None), set on
    # DataFrame by `for binop in [...]: setattr(DataFrame, binop, make_binop_func(binop))` (dataframe.py:9285-9306)
    add = members["add"]
    assert _names(add["params"]) == ["other", "axis", "level", "fill_value"]
    assert _param(add["params"], "axis")["default"] == "'columns'"
    assert add["patched_at"].startswith("cudf/core/dataframe.py:")
    # dataframe.py:9343  DataFrame.ne = make_binop_func("ne", _make_replacement_func(True))
    assert _names(members["ne"]["params"]) == ["other", "axis", "level", "fill_value"]


def test_range_index_notnull_is_bound_to_isna(surface):
    # cudf/core/index.py:3334 (class RangeIndex)  notnull = isna   -- as released
    assert surface["classes"]["RangeIndex"]["members"]["notnull"]["alias_of"] == "isna"


def test_top_level_names(surface):
    cudf = surface["functions"]["cudf"]
    # cudf/__init__.py: from cudf.core.dataframe import DataFrame, from_pandas, merge; from cudf.core.missing
    # import NA (missing.py: from pandas import NA); __all__ lists errors and utils, bound as submodules.
    assert cudf["DataFrame"] == {
        "defined_in": "cudf/core/dataframe.py",
        "kind": "class",
        "qualname": "cudf.core.dataframe.DataFrame",
    }
    assert cudf["from_pandas"]["kind"] == "function"
    assert cudf["NA"] == {"imported_from": "pandas.NA", "kind": "external"}
    assert cudf["errors"]["kind"] == "module"
    for deleted in ("cupy", "cuda", "rmm_cupy_allocator"):  # cudf/__init__.py: del cuda, del cupy, ...
        assert deleted not in cudf
    dask_cudf = surface["functions"]["dask_cudf"]
    # dask_cudf/__init__.py: def read_csv(*args, **kwargs); from .core import ... concat (core.py: concat = dd.concat)
    assert [p["kind"] for p in dask_cudf["read_csv"]["params"]] == ["VAR_POSITIONAL", "VAR_KEYWORD"]
    assert dask_cudf["concat"] == {"imported_from": "dask.dataframe.concat", "kind": "external"}
    assert dask_cudf["DataFrame"]["qualname"] == "dask_cudf._expr.collection.DataFrame"


# --------------------------------------------------------------------------------------------------- mechanics

CUDF_FILES = {
    "cudf/__init__.py": """
from cudf.core.series import Series
from .io import read_thing
from cudf.core import tracking as helpers
del helpers
__all__ = ["Series", "read_thing", "errors"]
""",
    "cudf/errors.py": "class MixedTypeError(TypeError): pass\n",
    "cudf/core/__init__.py": "",
    "cudf/core/mixin_factory.py": """
def _create_delegating_mixin(mixin_name, docstring, category_name, base_operation_name, supported_operations):
    class OperationMixin:
        pass
    return OperationMixin
""",
    "cudf/core/reductions.py": """
from .mixin_factory import _create_delegating_mixin
Reducible = _create_delegating_mixin("Reducible", "", "REDUCTION", "_reduce", {"sum", "max", "nth"})
""",
    "cudf/core/reductions.pyi": """
class Reducible:
    def sum(self, skipna: bool = True, **kwargs): ...
    def max(self, skipna: bool = True, **kwargs): ...
    def nth(self, skipna: bool = True, **kwargs): ...
""",
    "cudf/core/tracking.py": """
import functools
def _tracked(func):
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        return func(*args, **kwargs)
    return wrapper
def _replacing(func):
    def wrapper(*args, **kwargs):
        return None
    return wrapper
""",
    "cudf/core/frame.py": """
from functools import cached_property
from cudf.core.reductions import Reducible
from cudf.core.tracking import _tracked, _replacing
class Frame(Reducible):
    _VALID_REDUCTIONS = {"sum", "max"}
    def _reduce(self, op, axis=0, numeric_only=False, **kwargs): ...
    @property
    def shape(self): ...
    @cached_property
    def size(self): ...
    @_tracked
    def head(self, n=5, *, strict=False): ...
    tolist = head
    def max(self, axis=0): ...
    @_replacing
    def opaque(self, x): ...
    def __array__(self, dtype=None): ...
""",
    "cudf/core/series.py": """
import functools
import pandas as pd
from .frame import Frame
class Base2:
    def tail(self, n=5): ...
    def head(self): ...
class Series(Frame, Base2, pd.api.extensions.ExtensionScalarOpsMixin):
    def __init__(self, data=None, index=None):
        self.name = None
        self._private = None
    def _reduce(self, op, skipna=True, **kwargs): ...
    to_list = Frame.head
    @classmethod
    def from_thing(cls, thing, copy=False): ...
    @staticmethod
    def helper(a, b=1): ...
def make_op(op):
    @functools.wraps(getattr(Frame, "head"))
    def wrapper(self, other, fill_value=None):
        return None
    return wrapper
for name in ("add", "sub"):
    setattr(Series, name, make_op(name))
""",
    "cudf/io/__init__.py": "from .thing import read_thing\n",
    "cudf/io/thing.py": "def read_thing(path, /, sep=',', *, header=None, **kwargs): ...\n",
}
DASK_CUDF_FILES = {
    "dask_cudf/__init__.py": """
import dask.dataframe as dd
from cudf import Series
def read_csv(*args, **kwargs): ...
concat = dd.concat
""",
}
SYNTHETIC_TARGETS = (("Series", ("name", "cudf", "Series")), ("Frame", ("name", "cudf.core.frame", "Frame")))


def _wheel(folder: Path, distribution: str, version: str, files: dict[str, str]) -> Path:
    name = distribution.replace("-", "_")
    path = folder / f"{name}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr(f"{name}-{version}.dist-info/METADATA", f"Name: {distribution}\nVersion: {version}\n\n")
        for file, text in files.items():
            archive.writestr(file, text)
    return path


@pytest.fixture
def wheels(tmp_path) -> list[Path]:
    return [
        _wheel(tmp_path, "cudf-cu12", "1.2.0", CUDF_FILES),
        _wheel(tmp_path, "dask-cudf-cu12", "1.2.1", DASK_CUDF_FILES),
    ]


@pytest.fixture
def synthetic(wheels) -> dict:
    return gen.build_surface(gen.check_wheels([gen.read_wheel(w) for w in wheels]), SYNTHETIC_TARGETS)


def test_mro_is_c3_across_modules_with_an_outside_base_named_as_imported(synthetic):
    series = synthetic["classes"]["Series"]
    assert series["mro"] == [
        "cudf.core.series.Series",
        "cudf.core.frame.Frame",
        "cudf.core.reductions.Reducible",
        "cudf.core.series.Base2",
        "pandas.api.extensions.ExtensionScalarOpsMixin",
        "object",
    ]
    assert any("pandas.api.extensions.ExtensionScalarOpsMixin" in note for note in synthetic["notes"])
    members = series["members"]
    assert members["head"]["defined_in"] == "cudf/core/frame.py:Frame"  # Frame comes before Base2
    assert members["tail"]["defined_in"] == "cudf/core/series.py:Base2"


def test_member_kinds_aliases_and_decorators(synthetic):
    members = synthetic["classes"]["Series"]["members"]
    assert members["shape"] == {"defined_in": "cudf/core/frame.py:Frame", "kind": "property"}
    assert members["size"]["kind"] == "property"  # functools.cached_property
    # a functools.wraps decorator keeps the function's own signature, self dropped
    head = [("n", "POSITIONAL_OR_KEYWORD", "5"), ("strict", "KEYWORD_ONLY", "False")]
    assert [(p["name"], p["kind"], p["default"]) for p in members["head"]["params"]] == head
    assert "unverified_decorators" not in members["head"]
    assert members["opaque"]["unverified_decorators"] == ["_replacing"]  # a wrapper without functools.wraps
    assert members["tolist"]["alias_of"] == "head" and members["tolist"]["params"] == members["head"]["params"]
    assert members["to_list"]["alias_of"] == "Frame.head"
    assert members["to_list"]["alias_resolved"] == "cudf/core/frame.py:Frame.head"
    assert members["from_thing"]["kind"] == "classmethod" and _names(members["from_thing"]["params"]) == [
        "thing",
        "copy",
    ]
    assert members["helper"]["kind"] == "staticmethod" and _names(members["helper"]["params"]) == ["a", "b"]
    assert members["name"]["kind"] == "attribute" and members["name"]["instance"] is True
    assert "_private" not in members
    assert synthetic["classes"]["Series"]["dunders"] == ["__array__", "__init__"]
    assert synthetic["classes"]["Series"]["constructor"]["__init__"]["params"][0]["name"] == "data"


def test_delegating_mixin_generates_valid_operations_with_stub_signatures(synthetic):
    frame = synthetic["classes"]["Frame"]["members"]
    total = frame["sum"]
    assert total["defined_in"] == "cudf/core/frame.py:Frame"
    assert _names(total["params"]) == ["skipna", "kwargs"]  # from reductions.pyi
    assert total["generated_by"]["base_operation"] == "_reduce"
    assert _names(total["generated_by"]["runtime_params"]) == ["axis", "numeric_only", "kwargs"]
    assert "generated_by" not in frame["max"] and _names(frame["max"]["params"]) == ["axis"]  # Frame's own
    assert "nth" not in frame  # supported by the mixin, not in Frame._VALID_REDUCTIONS
    # Series overrides _reduce: the generated sum is defined again on Series, delegating to Series._reduce;
    # Frame's hand-written max still wins (mixin_factory._should_define_operation).
    series = synthetic["classes"]["Series"]["members"]
    assert series["sum"]["defined_in"] == "cudf/core/series.py:Series"
    assert _names(series["sum"]["generated_by"]["runtime_params"]) == ["skipna", "kwargs"]
    assert series["max"] == frame["max"]


def test_module_level_setattr_and_namespaces(synthetic):
    members = synthetic["classes"]["Series"]["members"]
    for name in ("add", "sub"):
        assert _names(members[name]["params"]) == ["other", "fill_value"]
        line = CUDF_FILES["cudf/core/series.py"].splitlines().index('for name in ("add", "sub"):') + 1
        assert members[name]["patched_at"] == f"cudf/core/series.py:{line}"
    cudf = synthetic["functions"]["cudf"]
    assert sorted(cudf) == ["Series", "core", "errors", "io", "read_thing"]  # helpers deleted; errors from __all__
    kinds = [(p["name"], p["kind"], p["default"]) for p in cudf["read_thing"]["params"]]
    assert kinds == [
        ("path", "POSITIONAL_ONLY", None),
        ("sep", "POSITIONAL_OR_KEYWORD", "','"),
        ("header", "KEYWORD_ONLY", "None"),
        ("kwargs", "VAR_KEYWORD", None),
    ]
    assert cudf["errors"] == {"implicit": True, "kind": "module", "module": "cudf.errors"}
    dask_cudf = synthetic["functions"]["dask_cudf"]
    assert dask_cudf["concat"] == {"imported_from": "dask.dataframe.concat", "kind": "external"}
    assert dask_cudf["Series"]["qualname"] == "cudf.core.series.Series"
    assert [w["version"] for w in synthetic["wheels"]] == ["1.2.0", "1.2.1"]


def test_the_cli_writes_a_stable_file_atomically(wheels, tmp_path, monkeypatch):
    monkeypatch.setattr(gen, "TARGETS", SYNTHETIC_TARGETS)
    out = tmp_path / "out" / "surface.json"
    assert gen.main([*map(str, reversed(wheels)), "--output", str(out)]) == 0
    first = out.read_bytes()
    assert gen.main([*map(str, wheels), "--output", str(out)]) == 0
    assert out.read_bytes() == first  # argument order and reruns do not change the file
    assert oct(out.stat().st_mode & 0o777) == oct(0o644)
    assert sorted(p.name for p in out.parent.iterdir()) == ["surface.json"]  # no temporary file left


@pytest.mark.parametrize(
    "case, message",
    [
        ("not_a_zip", "not a wheel"),
        ("other_distribution", "neither cudf-cuNN nor dask-cudf-cuNN"),
        ("missing_dask_cudf", "the dask-cudf wheel is missing"),
        ("twice", "the cudf wheel is given 2 times"),
        ("no_such_file", "no such file"),
        ("different_release", "different releases"),
    ],
)
def test_bad_input_is_one_error_line_exit_2_and_nothing_written(case, message, wheels, tmp_path, capsys):
    cudf_wheel, dask_wheel = wheels
    if case == "not_a_zip":
        bogus = tmp_path / "cudf_cu12-1.2.0-py3-none-any.whl"
        bogus.write_text("not a zip")
        args = [bogus, dask_wheel]
    elif case == "other_distribution":
        args = [cudf_wheel, dask_wheel, _wheel(tmp_path, "pandas", "3.0.0", {"pandas/__init__.py": ""})]
    elif case == "missing_dask_cudf":
        args = [cudf_wheel]
    elif case == "twice":
        args = [cudf_wheel, cudf_wheel, dask_wheel]
    elif case == "no_such_file":
        args = [tmp_path / "nowhere.whl", dask_wheel]
    else:
        (tmp_path / "next").mkdir()
        args = [cudf_wheel, _wheel(tmp_path / "next", "dask-cudf-cu12", "2.0.0", DASK_CUDF_FILES)]
    out = tmp_path / "surface.json"
    out.write_text("previous\n")
    assert gen.main([*map(str, args), "--output", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and message in err and err.count("\n") == 1
    assert out.read_text() == "previous\n"


def test_the_script_exits_2_as_a_command(tmp_path):
    out = tmp_path / "surface.json"
    result = subprocess.run(
        [sys.executable, str(GENERATOR), str(tmp_path / "missing.whl"), "--output", str(out)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 2
    assert result.stderr.startswith("error: ") and result.stderr.count("\n") == 1
    assert not out.exists()
