"""``make gpu-check``: run the GPU tests in ``tests/gpu`` on this machine's NVIDIA GPU(s) and write
``reports/gpu-check.md`` and ``reports/gpu-check.json`` (through the ``tools.gpu.report`` plugin).

    python -m tools.gpu.check [--report-dir DIR] [--scheduler-address ADDR [--workers N] [--shared-gpu]]
                              [--skip-notebooks] [--rows N] [any pytest option, e.g. -k cupy -x]

Without a usable GPU it refuses at once: one ``error:`` line on stderr, exit status 2, no report,
so a CPU run is never reported as a GPU run. Otherwise the exit status is pytest's: 0 when no test
failed (skips are reported, never counted as passes), 1 when one did, 2 or more when pytest could
not run them.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from utils.base.paths import REPO_ROOT
from utils.machine import GPU_INSTALL_HINT, gpu_count, installed

NOT_HERE = "gpu-check only runs on a machine with an NVIDIA GPU and driver"


def preflight(scheduler_address: str | None = None) -> str | None:
    """The one ``error:`` line that stops the run before anything starts, or None to go on.
    With an existing scheduler the GPUs are its workers', so only the libraries are checked here."""
    if not scheduler_address:
        visible = os.environ.get("CUDA_VISIBLE_DEVICES")
        if visible is not None and not visible.strip():
            return f"error: no NVIDIA GPU visible (CUDA_VISIBLE_DEVICES is set and empty); {NOT_HERE}"
        if gpu_count() == 0:
            if not installed("pynvml"):
                why = f"pynvml is not installed, so NVML cannot be asked; on a GPU machine, {GPU_INSTALL_HINT}"
            elif visible:
                why = f"NVML reports no GPU that CUDA_VISIBLE_DEVICES={visible} names"
            else:
                why = "NVML reports no GPU: the NVIDIA driver or its library is missing"
            return f"error: no NVIDIA GPU visible ({why}); {NOT_HERE}"
    missing = [module for module in ("dask_cuda", "cupy") if not installed(module)]
    if missing:
        return f"error: {', '.join(missing)} cannot be imported, so the GPU path cannot be checked; {GPU_INSTALL_HINT}"
    return None


def wait_for_workers(address: str, count: int, timeout: float) -> str | None:
    """None once ``count`` workers have joined the scheduler at ``address``, else the one
    ``error:`` line saying how many came within ``timeout`` seconds (workers of an existing cluster
    join in their own time; a fixed sleep either wastes time or runs the tests on too few)."""
    from distributed import Client

    try:
        client = Client(address, timeout=timeout)
    except OSError:
        return f"error: no scheduler answered at {address} within {timeout:g} s"
    with client:
        try:
            client.wait_for_workers(count, timeout=timeout)
        except TimeoutError:
            joined = len(client.scheduler_info(n_workers=-1)["workers"])
            return (f"error: {joined} of {count} workers joined the scheduler at {address} within {timeout:g} s; "
                    "see the workers' logs")
    return None


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tools.gpu.check",
        description="Run tests/gpu on this machine's NVIDIA GPU(s) and write gpu-check.md and gpu-check.json. "
        "Exits 2 at once where no GPU is visible. Options not listed here go to pytest.",
    )
    parser.add_argument("--report-dir", type=Path, default=REPO_ROOT / "reports", help="default: reports/")
    parser.add_argument("--scheduler-address", help="test an existing cluster (e.g. `dask cuda worker` "
                        "processes) instead of starting LocalCUDACluster; the notebooks connect to it too")
    parser.add_argument("--workers", type=int, help="with --scheduler-address: wait for this many workers "
                        "(exit 2 if they do not join within --wait seconds); test 1a asserts exactly this many")
    parser.add_argument("--wait", type=float, default=120, help="seconds to wait for --workers [120]")
    parser.add_argument("--shared-gpu", action="store_true", help="with --scheduler-address: test 1a asserts "
                        "that every worker computes on the same GPU, GPU 0 (several workers on one GPU)")
    parser.add_argument("--skip-notebooks", action="store_true", help="report the notebook tests as skipped")
    parser.add_argument("--rows", type=int, help="rows of the CuPy/NumPy twin (default 20_000_000)")
    args, pytest_args = parser.parse_known_args(argv)
    if (args.workers or args.shared_gpu) and not args.scheduler_address:
        print("error: --workers and --shared-gpu describe an existing cluster: give --scheduler-address too",
              file=sys.stderr)
        return 2
    problem = preflight(args.scheduler_address)
    if not problem and args.workers:
        problem = wait_for_workers(args.scheduler_address, args.workers, args.wait)
    if problem:
        print(problem, file=sys.stderr)
        return 2
    # The tests read their settings from the environment, so `pytest tests/gpu` alone runs the same.
    os.environ.pop("DASK_SCHEDULER_ADDRESS", None)
    if args.scheduler_address:
        os.environ["DASK_SCHEDULER_ADDRESS"] = args.scheduler_address
    for name, value in (("GPU_CHECK_WORKERS", args.workers), ("GPU_CHECK_SHARED_GPU", args.shared_gpu)):
        os.environ.pop(name, None)
        if value:
            os.environ[name] = str(int(value))
    if args.skip_notebooks:
        os.environ["GPU_CHECK_SKIP_NOTEBOOKS"] = "1"
    if args.rows:
        os.environ["GPU_CHECK_ROWS"] = str(args.rows)
    import pytest

    # addopts cleared: the project's nbval options are for the notebooks, which the notebook
    # tests run in their own pytest process (and nbval need not be installed for the others).
    return int(pytest.main([
        "-o", "addopts=", "-p", "no:cacheprovider", "-ra", "-p", "tools.gpu.report",
        f"--gpu-report-dir={args.report_dir}", str(REPO_ROOT / "tests" / "gpu"), *pytest_args,
    ]))


if __name__ == "__main__":
    sys.exit(main())
