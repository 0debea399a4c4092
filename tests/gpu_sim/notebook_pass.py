"""Run every notebook in GPU mode on the simulated RAPIDS stack, as a learner on a GPU box would.

    python tests/gpu_sim/notebook_pass.py --gpus 1          # what `make test` runs, then --gpus 2
    python tests/gpu_sim/notebook_pass.py --gpus 2 -- notebooks/03_groupby_sum.ipynb -x  # to pytest

The notebooks' own setup cells start their clusters: with ``COURSE_BACKEND=gpu`` that is
``LocalCUDACluster`` (here the simulated one), one worker per simulated GPU. This folder goes first
on ``PYTHONPATH``, so the kernel and every worker it starts import the simulated ``pynvml``,
``cudf``, ``dask_cudf`` and ``dask_cuda``; nothing is installed. nbval compares the checked
outputs as in the CPU pass. Cells listed in ``nbval_skips.SKIPS`` are skipped with their reason.
A simulated pass proves code paths and library contracts, never speed or memory on a GPU.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

SIM = Path(__file__).resolve().parent
ROOT = SIM.parents[1]


def simulation_env(gpus: int, base: dict[str, str] | None = None) -> dict[str, str]:
    """The environment of a process that runs on ``gpus`` simulated GPUs with the GPU backend."""
    env = dict(os.environ if base is None else base)
    env.pop("DASK_SCHEDULER_ADDRESS", None)  # the notebooks start their own (simulated) GPU clusters
    env.pop("CUDA_VISIBLE_DEVICES", None)
    env.update({
        "PYTHONPATH": os.pathsep.join(filter(None, [str(SIM), env.get("PYTHONPATH")])),
        "GPU_SIM_DEVICES": str(gpus),
        "COURSE_BACKEND": "gpu",
    })
    return env


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python tests/gpu_sim/notebook_pass.py", description=__doc__.splitlines()[0])
    parser.add_argument("--gpus", type=int, default=1, help="simulated GPUs (default 1)")
    parser.add_argument("pytest_args", nargs="*", help="extra pytest arguments (after --)")
    args = parser.parse_args(argv)
    if args.gpus < 1:
        parser.error(f"--gpus must be at least 1, got {args.gpus}")
    started = time.perf_counter()
    print(f"GPU-mode pass on {args.gpus} simulated GPU(s) (pandas underneath; no GPU is used)", flush=True)
    chosen = [arg for arg in args.pytest_args if arg.endswith(".ipynb")]  # some notebooks, else all of them
    command = [sys.executable, "-m", "pytest", *([] if chosen else ["notebooks"]), "-p", "no:cacheprovider",
               "-p", "nbval_skips", "--nbval-lax", "--nbval-current-env", "-rs", *args.pytest_args]
    code = subprocess.call(command, env=simulation_env(args.gpus), cwd=ROOT)
    print(f"GPU-mode pass on {args.gpus} simulated GPU(s): exit {code} in {time.perf_counter() - started:.0f} s")
    return code


if __name__ == "__main__":
    sys.exit(main())
