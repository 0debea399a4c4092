"""``python -m cudf.pandas <script.py> <args>`` / ``-m module`` / ``-c command`` (the argument handling of
rapidsai/cudf ``python/cudf/cudf/pandas/__main__.py``); the script runs as ``__main__`` with plain
pandas. Profiling (``--profile``, ``--line-profile``) is not simulated."""

from __future__ import annotations

import argparse
import runpy
import sys

from cudf.pandas import install


def main() -> None:
    parser = argparse.ArgumentParser(
        prog="python -m cudf.pandas",
        description="Run a Python script with Pandas Accelerator Mode enabled (simulated: plain pandas).",
    )
    parser.add_argument("-m", dest="module", nargs=1)
    parser.add_argument("-c", dest="cmd", nargs=1)
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--line-profile", action="store_true")
    parser.add_argument("args", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    if args.profile or args.line_profile:
        parser.error("profiling is not part of the simulated cudf.pandas")
    install()
    if args.cmd:
        sys.argv[:] = ["-c", *args.args]
        exec(compile(args.cmd[0], "<string>", "exec"), {"__name__": "__main__"})
    elif args.module:
        (module,) = args.module
        sys.argv[:] = [module, *args.args]
        runpy.run_module(module, run_name="__main__", alter_sys=True)
    elif args.args:
        sys.argv[:] = args.args
        runpy.run_path(args.args[0], run_name="__main__")
    else:
        parser.error("a script, -m module or -c command is needed")


if __name__ == "__main__":
    main()
