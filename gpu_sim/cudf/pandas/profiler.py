"""``cudf.pandas.Profiler`` (cudf 26.10.2 ``cudf/pandas/profiler.py``): the context manager, the instrumented-script
text of ``--line-profile`` and the two printed tables with their titles, columns and CPU-fallback notice, copied.

What it measures differs: the real profiler times each call through a cudf.pandas proxy and reports it under GPU
when cuDF ran it, under CPU when it fell back to pandas. Without the accelerator there are no proxies, so this one
times each pandas function called from outside pandas (named by its ``__qualname__``, a class by its name) and
reports every call under CPU, which is where it ran. Each table says "simulated". The tables use ``rich`` where it
is installed (a cudf dependency), else plain text with the same content.
"""

from __future__ import annotations

import inspect
import linecache
import operator
import os
import pickle
import sys
import sysconfig
import time
from collections import defaultdict
from typing import Any

import pandas

_PANDAS_DIR = os.path.dirname(pandas.__file__) + os.sep
_STDLIB_DIR = sysconfig.get_paths()["stdlib"] + os.sep
SIMULATED = "simulated cudf.pandas: no GPU, so every call ran on the CPU (pandas)"

_profile_injection_text = """\
from cudf.pandas import Profiler
with Profiler() as profiler:
{original_lines}

# Patch the results to shift the line numbers back to the original before the
# profiler injection.
new_results = {{}}

for (lineno, currfile, line), v in profiler._results.items():
    new_results[(lineno - 2, currfile, line)] = v

profiler._results = new_results
profiler.print_per_line_stats()
{function_profile_printer}
"""

_cpu_issue_text = """\
Not all pandas operations ran on the GPU. \
The following functions required CPU fallback:

{cpu_functions_used}
"""

_CALL_TO_ACTION_URL = "https://github.com/NVIDIA/cudf/issues/new/choose"


def format_cpu_functions_used(cpu_funcs: list[str]) -> str:
    return "\n".join(f"- {each}" for each in cpu_funcs)


def lines_with_profiling(lines: list[str], print_function_profile: bool = False) -> str:
    """Inject profiling code into the given lines of code."""
    cleaned_lines = "\n".join([(" " * 4) + line.replace("\t", " " * 4) for line in lines])
    return _profile_injection_text.format(
        original_lines=cleaned_lines,
        function_profile_printer="profiler.print_per_function_stats()" if print_function_profile else "",
    )


def _is_pandas_call(frame: Any) -> bool:
    """A pandas function entered from code outside pandas and the standard library (pandas' own context managers
    run through contextlib): what a cudf.pandas proxy would intercept."""
    caller = frame.f_back
    if caller is None or not frame.f_code.co_filename.startswith(_PANDAS_DIR):
        return False
    # the simulation's own wrappers of pandas functions (cudf/core/pandas_boundary.py): judge their caller
    while caller is not None and caller.f_globals.get("__name__") == "cudf.core.pandas_boundary":
        caller = caller.f_back
    if caller is None:
        return False
    where = caller.f_code.co_filename
    in_stdlib = where.startswith(_STDLIB_DIR) and "site-packages" not in where
    return not (where.startswith(_PANDAS_DIR) or in_stdlib)


def _function_name(frame: Any) -> str:
    """The pandas function's ``__qualname__`` (a decorator's wrapper gives the function it wraps), a class for
    its constructor."""
    name = frame.f_code.co_qualname
    wrapped = frame.f_locals.get("func") if "<locals>" in name else None
    if callable(wrapped) and hasattr(wrapped, "__qualname__"):
        name = wrapped.__qualname__
    return name.removesuffix(".__init__")


def _print_table(title: str, columns: list[str], rows: list[list[str]]) -> None:
    try:
        from rich.console import Console
        from rich.table import Table
    except ImportError:
        widths = [max(len(str(cell)) for cell in column) for column in zip(columns, *rows, strict=True)]
        print(title)
        print("  ".join(c.ljust(w) for c, w in zip(columns, widths, strict=True)))
        print("  ".join("-" * w for w in widths))
        for row in rows:
            print("  ".join(str(c).ljust(w) for c, w in zip(row, widths, strict=True)))
        return
    table = Table()
    for column in columns:
        table.add_column(column)
    for row in rows:
        table.add_row(*row)
    table.title = title
    Console().print(table)


class Profiler:
    _IGNORE_LIST = ["Profiler()", "settrace(None)"]

    def __init__(self) -> None:
        self._results: dict = {}
        self._per_func_results: defaultdict = defaultdict(lambda: defaultdict(list))
        self._call_stack: list = []
        self._currkey: tuple | None = None
        self._timer: dict = {}
        self._currfile: str | None = None
        self.start_time: float | None = None
        self.end_time: float | None = None

    def __enter__(self, *args: Any, **kwargs: Any) -> Profiler:
        self.start_time = time.perf_counter()
        self._oldtrace = sys.gettrace()
        sys.settrace(self._tracefunc)
        frame = inspect.currentframe().f_back
        self._currfile = frame.f_code.co_filename
        self._f_back_oldtrace = frame.f_trace
        frame.f_trace = self._tracefunc
        return self

    def __exit__(self, *args: Any, **kwargs: Any) -> None:
        sys.settrace(self._oldtrace)
        inspect.currentframe().f_back.f_trace = self._f_back_oldtrace
        self.end_time = time.perf_counter()

    def _tracefunc(self, frame: Any, event: str, arg: Any) -> Any:
        if event == "line" and frame.f_code.co_filename == self._currfile:
            key = linecache.getline(frame.f_code.co_filename, frame.f_lineno)
            if not any(ignore_word in key for ignore_word in Profiler._IGNORE_LIST):
                self._currkey = (frame.f_lineno, self._currfile, key)
                self._results.setdefault(self._currkey, {})
                self._timer[self._currkey] = time.perf_counter()
        elif event == "call" and _is_pandas_call(frame):
            if self._currkey is not None:
                self._timer[self._currkey] = time.perf_counter()
            self._call_stack.append((_function_name(frame), time.perf_counter()))
            return self._on_return
        elif event == "call" and frame.f_code.co_filename.startswith(_PANDAS_DIR):
            return None  # pandas' own internals: no line events there
        return self._tracefunc

    def _on_return(self, frame: Any, event: str, arg: Any) -> Any:
        if event == "return":
            func_name, start = self._call_stack.pop()
            now = time.perf_counter()
            if self._currkey is not None:
                self._results[self._currkey]["cpu_time"] = (
                    now - self._timer[self._currkey] + self._results[self._currkey].get("cpu_time", 0))
            self._per_func_results[func_name]["cpu"].append(now - start)
        return self._on_return

    @property
    def per_line_stats(self) -> list[list]:
        list_data = []
        for (line_no, _, line), val in self._results.items():
            list_data.append([line_no, line, val.get("gpu_time", 0), val.get("cpu_time", 0)])
        return sorted(list_data, key=operator.itemgetter(0))

    @property
    def per_function_stats(self) -> defaultdict:
        return self._per_func_results

    def print_per_line_stats(self) -> None:
        rows = [[str(line_no), str(line).rstrip("\n"), "" if gpu_time == 0 else f"{gpu_time:.9f}",
                 "" if cpu_time == 0 else f"{cpu_time:.9f}"]
                for line_no, line, gpu_time, cpu_time in self.per_line_stats]
        time_elapsed = self.end_time - self.start_time
        title = f"""\n\
        Total time elapsed: {time_elapsed:.3f} seconds
        ({SIMULATED})

        Stats
        """
        _print_table(title, ["Line no.", "Line", "GPU TIME(s)", "CPU TIME(s)"], rows)

    def print_per_function_stats(self) -> None:
        cpu_funcs, rows = [], []
        n_gpu_func_calls = n_cpu_func_calls = 0
        total_gpu_time = total_cpu_time = 0.0
        for func_name, func_data in self.per_function_stats.items():
            gpu_times, cpu_times = func_data["gpu"], func_data["cpu"]
            rows.append([func_name, f"{len(gpu_times)}", f"{sum(gpu_times):.3f}",
                         f"{sum(gpu_times) / max(len(gpu_times), 1):.3f}", f"{len(cpu_times)}",
                         f"{sum(cpu_times):.3f}", f"{sum(cpu_times) / max(len(cpu_times), 1):.3f}"])
            total_gpu_time += sum(gpu_times)
            total_cpu_time += sum(cpu_times)
            n_gpu_func_calls += len(gpu_times)
            n_cpu_func_calls += len(cpu_times)
            if cpu_times and func_name not in cpu_funcs:
                cpu_funcs.append(func_name)
        time_elapsed = self.end_time - self.start_time
        title = f"""\n\
        Total time elapsed: {time_elapsed:.3f} seconds
        {n_gpu_func_calls} GPU function calls in {total_gpu_time:.3f} seconds
        {n_cpu_func_calls} CPU function calls in {total_cpu_time:.3f} seconds
        ({SIMULATED})

        Stats
        """
        _print_table(title, ["Function", "GPU ncalls", "GPU cumtime", "GPU percall", "CPU ncalls", "CPU cumtime",
                             "CPU percall"], rows)
        if cpu_funcs:
            print(_cpu_issue_text.format(cpu_functions_used=format_cpu_functions_used(cpu_funcs)))
            print(f"To request GPU support for any of these functions, please file a Github issue here: "
                  f"{_CALL_TO_ACTION_URL}.")

    def dump_stats(self, file_name: str) -> None:
        with open(file_name, "wb") as f:
            pickle.dump(self, f)


def load_stats(file_name: str) -> Profiler:
    with open(file_name, "rb") as f:
        return pickle.load(f)
