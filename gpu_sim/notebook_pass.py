"""Run every notebook in GPU mode on the simulated RAPIDS stack, as a learner on a GPU box would.

    python gpu_sim/notebook_pass.py --gpus 1          # what `make test` runs, then --gpus 2, then --shared-gpu
    python gpu_sim/notebook_pass.py --shared-gpu      # the classroom recipe: two `dask cuda worker` on GPU 0
    python gpu_sim/notebook_pass.py --gpus 2 -- notebooks/03_groupby_sum.ipynb -x  # to pytest

With ``--gpus N`` the notebooks' own setup cells start their clusters: with ``COURSE_BACKEND=gpu``
that is ``LocalCUDACluster`` (here the simulated one), one worker per simulated GPU. With
``--shared-gpu`` the pass starts a scheduler and two ``dask cuda worker`` processes that both
compute on simulated GPU 0 (``CUDA_VISIBLE_DEVICES=0``, each with 40 % of its memory, as
docs/gpu-validation.md and the instructor guide set it up) and the notebooks connect to it through
``DASK_SCHEDULER_ADDRESS``; notebooks that start their own clusters on purpose still do.

This folder goes first on ``PYTHONPATH``, so the kernel and every worker import the simulated
``pynvml``, ``cudf``, ``dask_cudf``, ``dask_cuda``, ``cuml`` and ``cudf_polars``; nothing is
installed. nbval compares the checked outputs as in the CPU pass; no cell is skipped. The plugin
``pass_report.py`` prints how many cells ran and every guarded branch a cell took. A simulated pass
proves code paths and library contracts, never speed or memory on a GPU.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

SIM = Path(__file__).resolve().parent
ROOT = SIM.parent


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


def _pytest(args: list[str], env: dict[str, str]) -> int:
    chosen = [arg for arg in args if arg.endswith(".ipynb")]  # some notebooks, else all of them
    command = [sys.executable, "-m", "pytest", *([] if chosen else ["notebooks"]), "-p", "no:cacheprovider",
               "-p", "pass_report", "--nbval-lax", "--nbval-current-env", *args]
    return subprocess.call(command, env=env, cwd=ROOT)


def _shared_gpu_pass(pytest_args: list[str]) -> int:
    """Every notebook against two simulated ``dask cuda worker`` processes on one simulated GPU."""
    from utils.processes import external_cluster

    env = simulation_env(1)
    with external_cluster(n_workers=2, shared_gpu="0", env=env) as cluster:
        print(f"shared GPU: scheduler {cluster.address}, 2 `dask cuda worker` processes on simulated GPU 0",
              flush=True)
        code = _pytest(pytest_args, {**env, "DASK_SCHEDULER_ADDRESS": cluster.address})
        if code != 0:
            print("the scheduler's last log lines:\n" + cluster.log("scheduler", lines=30), file=sys.stderr)
    return code


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python gpu_sim/notebook_pass.py", description=__doc__.splitlines()[0])
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--gpus", type=int, default=1,
                      help="simulated GPUs, one LocalCUDACluster worker each (default 1)")
    mode.add_argument("--shared-gpu", action="store_true", help="two `dask cuda worker` processes on one simulated GPU")
    parser.add_argument("pytest_args", nargs="*", help="extra pytest arguments (after --)")
    args = parser.parse_args(argv)
    if args.gpus < 1:
        parser.error(f"--gpus must be at least 1, got {args.gpus}")
    label = "2 workers sharing 1 simulated GPU" if args.shared_gpu else f"{args.gpus} simulated GPU(s)"
    started = time.perf_counter()
    print(f"GPU-mode pass on {label} (pandas underneath; no GPU is used)", flush=True)
    if args.shared_gpu:
        code = _shared_gpu_pass(args.pytest_args)
    else:
        code = _pytest(args.pytest_args, simulation_env(args.gpus))
    print(f"GPU-mode pass on {label}: exit {code} in {time.perf_counter() - started:.0f} s")
    return code


if __name__ == "__main__":
    sys.exit(main())
