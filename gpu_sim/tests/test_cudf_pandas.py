"""The simulated ``cudf.pandas`` (``gpu_sim/cudf/pandas``): the released command line, ``install()``, the IPython
extension and the profiler's tables (cudf 26.10.2 ``cudf/pandas/__init__.py``, ``__main__.py``, ``magics.py``,
``profiler.py``); pandas underneath, so every call is reported on the CPU and labelled "simulated"."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import cudf
import cudf.pandas
import pandas as pd
import pytest
from cudf.pandas.profiler import Profiler, lines_with_profiling

SIM = os.path.dirname(os.path.dirname(cudf.__file__))
SCRIPT = """\
import sys
import pandas as pd
frame = pd.DataFrame({"a": [1, 2, 1], "b": [1.0, 2.0, 3.0]})
totals = frame.groupby("a")["b"].sum()
print(float(totals.sum()), sys.argv, __name__, __file__)
"""


def _run(*args: str, cwd: str | None = None, pythonpath: str = SIM) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "cudf.pandas", *args], capture_output=True, text=True, cwd=cwd,
                          env={**os.environ, "PYTHONPATH": pythonpath})


@pytest.fixture
def script(tmp_path):
    path = tmp_path / "job.py"
    path.write_text(SCRIPT)
    return str(path)


def test_a_script_runs_as_main_with_its_arguments(script):
    done = _run(script, "x", "--y")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"6.0 [{script!r}, 'x', '--y'] __main__ {script}"


def test_install_marks_loaded_and_import_pandas_stays_pandas():
    done = _run("-c", "import pandas, cudf.pandas; frame = pandas.DataFrame(); "
                      "print(type(frame).__module__, cudf.pandas.LOADED, cudf.pandas.is_proxy_object(frame))")
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["pandas", "True", "False"]  # no accelerator: no proxy module


def test_dash_m_runs_a_module_with_its_arguments(tmp_path):
    (tmp_path / "job_module.py").write_text("import sys\nprint(sys.argv, __name__)\n")
    done = _run("-m", "job_module", "a", "b", pythonpath=os.pathsep.join([SIM, str(tmp_path)]))
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "['job_module', 'a', 'b'] __main__"


def test_profile_prints_the_per_function_table_with_every_call_on_the_cpu(script):
    done = _run("--profile", script)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert out.startswith("6.0 ")  # the script's own output first, then the table
    assert "0 GPU function calls in 0.000 seconds" in out and "5 CPU function calls in" in out
    assert "simulated cudf.pandas: no GPU" in out
    for column in ("Function", "GPU ncalls", "GPU cumtime", "GPU percall", "CPU ncalls", "CPU cumtime", "CPU percall"):
        assert column in out
    fallback = out.split("The following functions required CPU fallback:")[1]
    assert [line[2:] for line in fallback.strip().splitlines() if line.startswith("- ")] == [
        "DataFrame", "DataFrame.groupby", "DataFrameGroupBy.__getitem__", "GroupBy.sum", "Series.sum"]
    assert "https://github.com/NVIDIA/cudf/issues/new/choose" in out


def test_line_profile_prints_the_per_line_table_and_keeps_file(script):
    done = _run("--line-profile", script, "x")
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert f"[{script!r}, 'x'] __main__ {script}" in out  # argv[0] and __file__ are the original (GH #23010)
    header = next(line for line in out.splitlines() if line.startswith("Line no."))
    assert header.split() == ["Line", "no.", "Line", "GPU", "TIME(s)", "CPU", "TIME(s)"]
    groupby_row = next(line for line in out.splitlines() if "groupby" in line and line[0].isdigit())
    assert float(groupby_row.split()[-1]) > 0  # CPU time only
    assert "simulated cudf.pandas: no GPU" in out


def test_profiling_needs_a_script():
    done = _run("--profile", "-m", "json.tool")
    assert done.returncode != 0
    assert "RuntimeError: Enabling the profiler requires a script name." in done.stderr


def test_the_instrumented_script_is_the_released_template():
    assert lines_with_profiling(["x = 1\n", "\tprint(x)\n"], True) == textwrap.dedent("""\
        from cudf.pandas import Profiler
        with Profiler() as profiler:
            x = 1

                print(x)


        # Patch the results to shift the line numbers back to the original before the
        # profiler injection.
        new_results = {}

        for (lineno, currfile, line), v in profiler._results.items():
            new_results[(lineno - 2, currfile, line)] = v

        profiler._results = new_results
        profiler.print_per_line_stats()
        profiler.print_per_function_stats()
        """)


def test_profiler_context_manager_counts_calls_from_outside_pandas_only():
    with Profiler() as profiler:
        frame = pd.DataFrame({"a": [1, 2, 3]})
        frame.merge(frame, on="a")
    stats = profiler.per_function_stats
    assert list(stats) == ["DataFrame", "DataFrame.merge"]  # not the pandas functions merge calls itself
    assert all(len(calls["gpu"]) == 0 and len(calls["cpu"]) == 1 for calls in stats.values())
    assert profiler.end_time >= profiler.start_time


def test_load_ext_installs_and_registers_the_profiling_magics(monkeypatch):
    monkeypatch.setattr(cudf.pandas, "LOADED", False)
    registered = []
    shell = type("Shell", (), {"register_magics": lambda self, magics: registered.append(magics)})()
    cudf.pandas.load_ipython_extension(shell)
    assert cudf.pandas.LOADED is True
    (magics,) = registered
    assert set(magics.magics["cell"]) == {"cudf.pandas.profile", "cudf.pandas.line_profile"}
