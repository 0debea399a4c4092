"""The CPU, GPU, conda and Binder environments must pin the same library versions, so a
notebook that works for one learner works for all of them."""

from __future__ import annotations

import re
import tomllib
from importlib import metadata
from pathlib import Path

import pytest
import yaml
from packaging.specifiers import SpecifierSet
from packaging.version import Version

from utils.base.paths import REPO_ROOT

SHARED = ("dask", "distributed", "bokeh", "pandas", "numpy", "pyarrow", "matplotlib", "jupyterlab", "dask-labextension")
RAPIDS_26_10 = {"dask": "2026.7.1", "distributed": "2026.7.1"}
PIN = re.compile(r"^([A-Za-z0-9_.-]+)(\[[^\]]*\])?\s*(==?)\s*([^\s;#]+)")


def _normalise(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def pip_pins(path: Path) -> dict[str, str]:
    pins = {}
    for line in path.read_text().splitlines():
        match = PIN.match(line.strip())
        if match:
            pins[_normalise(match.group(1))] = match.group(4)
    return pins


def conda_pins(path: Path) -> dict[str, str]:
    """Conda specs by package name; a channel prefix (``conda-forge::xgboost``) is dropped here, see
    :func:`conda_channels`."""
    pins = {}
    for item in yaml.safe_load(path.read_text())["dependencies"]:
        if isinstance(item, str):
            match = PIN.match(item.split("::", 1)[-1])
            if match:
                pins[_normalise(match.group(1))] = match.group(4)
    return pins


def conda_channels(path: Path) -> dict[str, str]:
    """The packages environment.yml takes from a named channel (``channel::name``)."""
    named = {}
    for item in yaml.safe_load(path.read_text())["dependencies"]:
        if isinstance(item, str) and "::" in item:
            channel, spec = item.split("::", 1)
            named[_normalise(PIN.match(spec).group(1))] = channel
    return named


ENVIRONMENTS = {
    "requirements.txt": pip_pins(REPO_ROOT / "requirements.txt"),
    "constraints.txt": pip_pins(REPO_ROOT / "constraints.txt"),
    "binder/requirements.txt": pip_pins(REPO_ROOT / "binder" / "requirements.txt"),
    "environment.yml": conda_pins(REPO_ROOT / "environment.yml"),
}


@pytest.mark.parametrize("package", SHARED)
def test_shared_pins_agree_everywhere(package):
    versions = {name: pins.get(package) for name, pins in ENVIRONMENTS.items()}
    assert None not in versions.values(), f"{package} is not pinned in: {[n for n, v in versions.items() if v is None]}"
    assert len(set(versions.values())) == 1, f"{package} pins disagree: {versions}"


def test_rapids_versions():
    pins = ENVIRONMENTS["requirements.txt"]
    for package, version in RAPIDS_26_10.items():
        assert pins[package] == version
    bokeh = tuple(int(x) for x in pins["bokeh"].split(".")[:2])
    assert bokeh < (3, 10), "RAPIDS 26.10 needs bokeh<3.10"
    pandas = tuple(int(x) for x in pins["pandas"].split(".")[:2])
    assert (3, 0) <= pandas < (3, 1), "cudf 26.10 needs pandas>=3.0,<3.1"


def test_every_direct_requirement_is_exactly_pinned_and_in_the_constraints():
    lines = [
        line.strip() for line in (REPO_ROOT / "requirements.txt").read_text().splitlines()
        if line.strip() and not line.startswith("#")
    ]
    constraints = ENVIRONMENTS["constraints.txt"]
    for line in lines:
        assert "==" in line, f"not exactly pinned: {line}"
        name, version = _normalise(PIN.match(line).group(1)), PIN.match(line).group(4)
        if _other_platform(line):  # constraints.txt is a Linux freeze: a macOS-only pin is not in it
            continue
        assert constraints.get(name) == version, f"{name}=={version} missing from constraints.txt"


def _other_platform(line: str) -> bool:
    """Whether a requirement line's environment marker excludes Linux (say, ``; sys_platform == "darwin"``)."""
    marker = line.split(";", 1)[1].split("#", 1)[0] if ";" in line else ""
    platforms = re.findall(r"sys_platform\s*==\s*[\"']([^\"']+)[\"']", marker)
    return bool(platforms) and "linux" not in platforms


def test_xgboost_is_the_cpu_build_on_linux_and_the_same_version_everywhere():
    """pip: xgboost-cpu on Linux, xgboost on macOS (no xgboost-cpu wheels); conda and the GPU file:
    the CUDA-enabled xgboost. Never both builds in one environment, always one version."""
    text = (REPO_ROOT / "requirements.txt").read_text()  # binder/ is the Linux freeze (tests/repository/test_binder.py)
    assert re.search(r'^xgboost-cpu==[^;]+;\s*sys_platform == "linux"', text, re.M)
    assert re.search(r'^xgboost==[^;]+;\s*sys_platform == "darwin"', text, re.M)
    versions = {
        "xgboost-cpu (requirements.txt)": ENVIRONMENTS["requirements.txt"]["xgboost-cpu"],
        "xgboost (requirements.txt)": ENVIRONMENTS["requirements.txt"]["xgboost"],
        "xgboost-cpu (constraints.txt)": ENVIRONMENTS["constraints.txt"]["xgboost-cpu"],
        "xgboost-cpu (binder)": ENVIRONMENTS["binder/requirements.txt"]["xgboost-cpu"],
        "xgboost (environment.yml)": ENVIRONMENTS["environment.yml"]["xgboost"],
        "xgboost (requirements-gpu.txt)": pip_pins(REPO_ROOT / "requirements-gpu.txt")["xgboost"],
    }
    assert len(set(versions.values())) == 1, f"xgboost pins disagree: {versions}"
    assert "xgboost" not in ENVIRONMENTS["constraints.txt"], "constraints.txt is the CPU freeze: xgboost-cpu only"
    assert "xgboost-cpu" not in ENVIRONMENTS["environment.yml"], "conda: the CUDA-enabled xgboost only"
    sklearn = {name: pins.get("scikit-learn") for name, pins in ENVIRONMENTS.items()}
    assert None not in sklearn.values() and len(set(sklearn.values())) == 1, f"scikit-learn pins: {sklearn}"


def test_gpu_requirements_use_the_cuda_extras_and_rapids_26_10():
    text = (REPO_ROOT / "requirements-gpu.txt").read_text()
    assert "-r requirements.txt" in text
    for spec in ("cudf-cu12==26.10.*", "dask-cudf-cu12==26.10.*", "dask-cuda[cu12]==26.10.*",
                 "cuml-cu12[dask]==26.10.*"):  # cuml.dask needs the [dask] extra (raft-dask, dask-cudf)
        assert spec in text
    assert not re.search(r"^dask-cuda==", text, re.M), "dask-cuda without [cu12] downgrades dask"
    conda = yaml.safe_load((REPO_ROOT / "environment.yml").read_text())
    assert conda["channels"][:2] == ["rapidsai", "conda-forge"]
    deps = " ".join(d for d in conda["dependencies"] if isinstance(d, str))
    assert "cuda-version=" in deps and "cudf=26.10" in deps and "dask-cuda=26.10" in deps
    assert "cuml=26.10" in deps and "raft-dask=26.10" in deps, "notebook 08 section 7 runs cuml.dask"


def test_binder_sets_the_proxied_dashboard_link_and_small_scale():
    start = (REPO_ROOT / "binder" / "start").read_text()
    assert "DASK_DISTRIBUTED__DASHBOARD__LINK" in start and "proxy/{port}/status" in start
    assert "COURSE_SCALE" in start and "binder" in start
    assert 'exec "$@"' in start
    assert "jupyter-server-proxy" in (REPO_ROOT / "binder" / "requirements.txt").read_text()


# pip's CUDA-specific distribution names and the conda package each one is.
PIP_TO_CONDA = ((r"-cu1[0-9]$", ""), (r"^cupy-cuda1[0-9]x$", "cupy"))


def _conda_name(pip_name: str) -> str:
    for pattern, replacement in PIP_TO_CONDA:
        pip_name = re.sub(pattern, replacement, pip_name)
    return pip_name


def _release(spec: str) -> str:
    """A conda ``=26.10`` and a pip ``==26.10.*`` name the same release series."""
    return spec.removesuffix(".*")


def test_conda_and_pip_gpu_environments_name_the_same_versions():
    """Every package both GPU routes pin (RAPIDS, UCXX, CuPy, xgboost, the shared libraries) at one version."""
    pip = {**ENVIRONMENTS["requirements.txt"], **pip_pins(REPO_ROOT / "requirements-gpu.txt")}
    pip = {_conda_name(name): version for name, version in pip.items()}
    conda = ENVIRONMENTS["environment.yml"]
    both = sorted(set(pip) & set(conda))
    assert {"cudf", "dask-cudf", "dask-cuda", "cuml", "cudf-polars", "distributed-ucxx", "cupy", "xgboost"} <= set(both)
    differ = {name: (conda[name], pip[name]) for name in both if _release(conda[name]) != _release(pip[name])}
    assert not differ, f"environment.yml and the pip files pin different versions (conda, pip): {differ}"


def test_conda_takes_xgboost_from_conda_forge_by_name():
    """RAPIDS stopped publishing xgboost in 26.10 and moved its old builds to a separate label: with rapidsai first and
    strict priority a bare ``xgboost`` can resolve to the wrong build or to none."""
    assert conda_channels(REPO_ROOT / "environment.yml").get("xgboost") == "conda-forge"
    text = (REPO_ROOT / "environment.yml").read_text()
    assert not re.search(r"^\s*-\s*xgboost\b", text, re.M), "xgboost without its channel"


def test_conda_pins_read_a_channel_prefix(tmp_path):
    env = tmp_path / "environment.yml"
    env.write_text("dependencies:\n  - conda-forge::xgboost==9.9.9\n  - cudf=26.10\n")
    assert conda_pins(env) == {"xgboost": "9.9.9", "cudf": "26.10"}
    assert conda_channels(env) == {"xgboost": "conda-forge"}


def _lowest_supported_python() -> Version:
    """The lowest Python that pyproject.toml's ``requires-python`` (``>=3.11``) lets install the course."""
    spec = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())["project"]["requires-python"]
    floor = re.fullmatch(r">=\s*([\d.]+)", spec.strip())
    assert floor, f"requires-python {spec!r} is not a plain lower bound"
    return Version(floor.group(1))


def test_every_pin_installs_on_the_lowest_python_the_course_accepts():
    """``make venv`` accepts any Python >= 3.11, so no pin may need a later patch release: soupsieve
    4.1.3 needed >= 3.11.5, and pip found no way to install nbconvert on Debian 12's Python 3.11.2.
    Read from the installed distributions, which ``make venv`` installs from these pins."""
    lowest = _lowest_supported_python()
    pins = pip_pins(REPO_ROOT / "constraints.txt")
    refused = []
    for dist in metadata.distributions():
        name = _normalise(dist.metadata["Name"])
        if pins.get(name) != dist.version:
            continue
        requires = dist.metadata.get("Requires-Python")
        if requires and lowest not in SpecifierSet(requires):
            refused.append(f"{name}=={dist.version} (Requires-Python {requires})")
    assert refused == [], f"pins that Python {lowest} cannot install: {refused}"
