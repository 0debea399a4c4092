"""The simulated cudf accepts exactly the public surface of the released cudf 26.10.2, both ways:
every member and keyword the generated file (``gpu_sim/cudf_api_surface.json``, from the
wheels) lists is there, and every public pandas name the file lacks is refused as Python refuses it.
Runs only with the simulation first on ``PYTHONPATH`` (``tests/gpu_wing/test_gpu_sim.py``)."""

from __future__ import annotations

import inspect

import cudf
import pandas as pd
import pytest
from cudf.core.surface import NotSimulated, accepted_names, call_params, members, signature_of, surface

FRAME = {"k": [1, 2, 1], "v": [1.0, 2.0, 3.0]}


def instances() -> dict[str, object]:
    frame = cudf.DataFrame(FRAME)
    times = cudf.Series(pd.to_datetime(["2024-01-01", "2024-02-01"]))
    return {
        "DataFrame": frame,
        "Series": frame["v"],
        "DataFrameGroupBy": frame.groupby("k"),
        "SeriesGroupBy": frame.groupby("k")["v"],
        "DatetimeProperties": times.dt,
        "TimedeltaProperties": (times - times).dt,
        "StringMethods": cudf.Series(["a", "b"]).str,
    }


ENFORCED = list(instances())


def _pandas_twin(name: str) -> object:
    frame = pd.DataFrame(FRAME)
    return {
        "DataFrame": frame, "Series": frame["v"], "DataFrameGroupBy": frame.groupby("k"),
        "SeriesGroupBy": frame.groupby("k")["v"], "DatetimeProperties": pd.Series(pd.to_datetime(["2024"])).dt,
        "TimedeltaProperties": pd.Series(pd.to_timedelta(["1D"])).dt,
        "StringMethods": pd.Series(["a"]).str,
    }[name]


def _public(obj: object) -> set[str]:
    return {name for name in dir(obj) if not name.startswith("_")}


def test_the_surface_file_names_the_released_wheels():
    wheels = {wheel["distribution"]: wheel for wheel in surface()["wheels"]}
    assert wheels["cudf-cu12"]["version"] == "26.10.2" and wheels["dask-cudf-cu12"]["version"] == "26.10.2"
    assert all(len(wheel["sha256"]) == 64 for wheel in wheels.values())


# Accessors check the data's dtype when read (cudf's and pandas' alike): a float Series has no .dt.
ACCESSORS = {"cat", "dt", "str", "list", "struct"}


@pytest.mark.parametrize("name", ENFORCED)
def test_every_member_cudf_has_is_there(name):
    obj = instances()[name]
    for member in set(members(name)) - (ACCESSORS if name == "Series" else set()):
        try:
            getattr(obj, member)
        except NotImplementedError:
            continue  # present in cudf, not simulated: says so instead of falling back to pandas
        except AttributeError as error:
            pytest.fail(f"{name}.{member} is in cudf 26.10.2 but the simulation refuses it: {error}")


@pytest.mark.parametrize("name", ENFORCED)
def test_every_pandas_name_cudf_lacks_is_refused(name):
    obj, accepted = instances()[name], set(members(name))
    leaking = []
    for member in sorted(_public(_pandas_twin(name)) - accepted - set(FRAME)):  # columns as attributes: cudf too
        try:
            getattr(obj, member)
        except AttributeError:
            continue
        leaking.append(member)
    assert not leaking, f"{name} accepts pandas names cudf 26.10.2 does not have: {leaking}"
    assert not hasattr(obj, "definitely_not_a_cudf_method")


@pytest.mark.parametrize("name", ["DataFrame", "Series"])
def test_the_accepted_names_are_the_files(name):
    cls = {"DataFrame": cudf.DataFrame, "Series": cudf.Series}[name]
    assert accepted_names(cls) == set(members(name))


@pytest.mark.parametrize("name", ENFORCED)
def test_methods_have_cudfs_signatures_and_refuse_other_keywords(name):
    obj = instances()[name]
    checked = 0
    for member, spec in members(name).items():
        if spec["kind"] != "method":
            continue
        try:
            method = getattr(obj, member)
        except NotImplementedError:
            continue
        if isinstance(inspect.getattr_static(type(obj), member, None), NotSimulated):
            continue
        assert inspect.signature(method) == signature_of(spec, bound=False), f"{name}.{member}"
        if not any(p["kind"] == "VAR_KEYWORD" for p in call_params(spec)):
            required = {p["name"]: None for p in call_params(spec) if p["default"] is None
                        and p["kind"] in ("POSITIONAL_OR_KEYWORD", "KEYWORD_ONLY")}
            with pytest.raises(TypeError, match="unexpected keyword argument 'not_a_cudf_keyword'"):
                method(**required, not_a_cudf_keyword=1)
        checked += 1
    assert checked > 0


def test_what_the_simulation_implements_itself_takes_cudfs_keywords():
    """The simulation's own methods (not pandas') accept every keyword cudf's do."""
    for name, cls in [("DataFrame", cudf.DataFrame), ("Series", cudf.Series)]:
        for member, spec in members(name).items():
            attr = inspect.getattr_static(cls, member, None)
            function = getattr(attr, "__func__", attr)
            implementation = getattr(function, "__wrapped__", None)
            if implementation is None or implementation.__module__.partition(".")[0] != "cudf":
                continue
            accepted = inspect.signature(implementation).parameters
            if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in accepted.values()):
                continue
            missing = [p["name"] for p in call_params(spec) if p["name"] not in accepted
                       and p["kind"] not in ("VAR_POSITIONAL", "VAR_KEYWORD")]
            assert not missing, f"simulated {name}.{member} lacks cudf's keywords {missing}"


def test_pandas_only_keywords_fail_as_on_a_gpu():
    frame = cudf.DataFrame(FRAME)
    with pytest.raises(TypeError, match=r"DatetimeProperties.floor\(\) got an unexpected keyword argument 'ambiguous'"):
        cudf.Series(pd.to_datetime(["2024-01-01"])).dt.floor("D", ambiguous="raise")
    with pytest.raises(AttributeError, match="'DataFrame' object has no attribute 'to_xarray'"):
        frame.to_xarray()


def test_the_top_level_names_are_cudfs():
    released = set(surface()["functions"]["cudf"])
    simulated = {name for name in dir(cudf) if not name.startswith("_") and not inspect.ismodule(getattr(cudf, name))}
    assert simulated - released == set()
