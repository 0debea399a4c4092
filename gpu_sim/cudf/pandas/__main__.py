"""``python -m cudf.pandas`` (cudf 26.10.2 ``cudf/pandas/__main__.py``, copied): ``<script.py> <args>``,
``-m module <args>``, ``-c command``, ``--profile`` (per-function table), ``--line-profile`` (per-line table of an
instrumented copy of the script), or an interactive interpreter. Runs on plain pandas (see ``cudf.pandas``)."""

from __future__ import annotations

import argparse
import code
import runpy
import sys
import tempfile
import types
from collections.abc import Iterator
from contextlib import contextmanager

from cudf.pandas import install
from cudf.pandas.profiler import Profiler, lines_with_profiling


def _run_instrumented_as_main(code_path: str, file_path: str) -> None:
    """Run the instrumented copy ``code_path`` as ``__main__`` with ``__file__`` = the original script."""
    with open(code_path) as f:
        code_obj = compile(f.read(), code_path, "exec")
    main_module = types.ModuleType("__main__")
    main_module.__file__ = file_path
    main_module.__loader__ = None
    main_module.__spec__ = None
    saved_main = sys.modules["__main__"]
    sys.modules["__main__"] = main_module
    try:
        exec(code_obj, main_module.__dict__)
    finally:
        sys.modules["__main__"] = saved_main


@contextmanager
def profile(function_profile: bool, line_profile: bool, fn: str | None) -> Iterator[str | None]:
    if fn is None and (line_profile or function_profile):
        raise RuntimeError("Enabling the profiler requires a script name.")
    if line_profile:
        with open(fn) as f:
            lines = f.readlines()
        with tempfile.NamedTemporaryFile(mode="w+b", suffix=".py") as f:
            f.write(lines_with_profiling(lines, function_profile).encode())
            f.seek(0)
            yield f.name
    elif function_profile:
        with Profiler() as profiler:
            yield fn
        profiler.print_per_function_stats()
    else:
        yield fn


def main() -> None:
    parser = argparse.ArgumentParser(
        prog="python -m cudf.pandas",
        description=("Run a Python script with Pandas Accelerator Mode enabled. In Pandas Accelerator Mode, all "
                     "imports of pandas will automatically use GPU accelerated cuDF equivalents where possible."),
    )
    parser.add_argument("-m", dest="module", nargs=1)
    parser.add_argument("-c", dest="cmd", nargs=1)
    parser.add_argument("--profile", action="store_true", help="Perform per-function profiling of this script.")
    parser.add_argument("--line-profile", action="store_true", help="Perform per-line profiling of this script.")
    parser.add_argument("args", nargs=argparse.REMAINDER, help="Arguments to pass on to the script")
    args = parser.parse_args()

    if args.cmd:
        f = tempfile.NamedTemporaryFile(mode="w+b", suffix=".py")  # noqa: SIM115 (kept open while the script runs)
        f.write(args.cmd[0].encode())
        f.seek(0)
        args.args.insert(0, f.name)

    install()

    script_name = args.args[0] if len(args.args) > 0 else None
    with profile(args.profile, args.line_profile, script_name) as fn:
        if script_name is not None:
            args.args[0] = fn
        if args.module:
            (module,) = args.module
            sys.argv[:] = [module, *args.args]
            runpy.run_module(module, run_name="__main__")
        elif len(args.args) >= 1:
            sys.argv[:] = args.args
            if args.line_profile and script_name is not None:
                sys.argv[0] = script_name
                _run_instrumented_as_main(args.args[0], script_name)
            else:
                runpy.run_path(args.args[0], run_name="__main__")
        else:
            if sys.stdin.isatty():
                banner = f"Python {sys.version} on {sys.platform}"
                if not sys.flags.no_site:
                    banner += '\nType "help", "copyright", "credits" or "license" for more information.'
            else:
                sys.ps1 = ""
                sys.ps2 = ""
                banner = ""
            code.interact(banner=banner, exitmsg="")


if __name__ == "__main__":
    main()
