"""Run every notebook against an external cluster, as a learner on a shared multi-node cluster would.

    python -m tools.external_pass                 # what `make test-external` runs (COURSE_SCALE=tiny there)
    python -m tools.external_pass -- -k 03        # extra arguments go to pytest

Starts a `dask scheduler` and two `dask worker` processes on 127.0.0.1 (``utils.processes``), sets
``DASK_SCHEDULER_ADDRESS`` to the scheduler's address and runs every notebook under nbval against
it (``pytest notebooks --nbval-lax``). The setup cells' ``utils.start_client()`` then connects
instead of starting a local cluster. Notebooks that start their own clusters on purpose keep doing
so and say why (01's demonstration clusters, 05 with ``local=True``, 07's own processes).

Afterwards the scheduler is asked how many clients connected, so a pass in which no notebook used
the external cluster fails. Its log holds P2P lines such as "Shuffle ... initialized by task ..."
and "Shuffle ... deactivated due to stimulus ...": normal, one pair per shuffle.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time

from utils.base.paths import REPO_ROOT
from utils.processes import external_cluster


def _connected_clients(cluster) -> int:
    """How many clients (other than this probe) connected to the scheduler during the pass."""
    with cluster.client(set_as_default=False) as probe:
        events = probe.get_events("all")
    return sum(1 for _, event in events if event.get("action") == "add-client") - 1


class _Parser(argparse.ArgumentParser):
    """Bad arguments: one ``error: ...`` line and exit 2, without the usage block."""

    def error(self, message: str):
        self.exit(2, f"error: {message}\n")


def _count(text: str) -> int:
    """A number of workers or threads for argparse: 0, a negative or a non-number is refused in one line
    (exit 2), before any cluster starts."""
    if not text.strip().isdecimal() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a count: give a whole number of 1 or more")
    return int(text)


def main(argv: list[str] | None = None) -> int:
    parser = _Parser(prog="python -m tools.external_pass", description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=_count, default=2, help="worker processes (default 2)")
    parser.add_argument("--threads", type=_count, default=1, help="threads per worker (default 1)")
    parser.add_argument("pytest_args", nargs="*", help="extra pytest arguments (after --)")
    args = parser.parse_args(argv)

    started = time.perf_counter()
    with external_cluster(n_workers=args.workers, threads_per_worker=args.threads) as cluster:
        print(f"external cluster: {cluster.address}, {args.workers} workers x {args.threads} threads "
              f"(started in {time.perf_counter() - started:.1f} s); every notebook runs against it", flush=True)
        env = {**os.environ, "DASK_SCHEDULER_ADDRESS": cluster.address}
        command = [sys.executable, "-m", "pytest", "notebooks", "-p", "no:cacheprovider", "--nbval-lax",
                   "--nbval-current-env", *args.pytest_args]
        code = subprocess.call(command, env=env, cwd=REPO_ROOT)
        clients = _connected_clients(cluster)
        shuffles = cluster.log("scheduler").count("initialized by task")
        alive = len(cluster.worker_processes())
        if code != 0:
            print("the scheduler's last log lines:\n" + cluster.log("scheduler", lines=30), file=sys.stderr)
    print(f"external pass: {clients} notebook clients connected to the external scheduler, "
          f"{shuffles} P2P shuffles logged by it (normal), {alive} of {args.workers} workers alive at the end; "
          f"{time.perf_counter() - started:.0f} s in all")
    if code == 0 and clients < 1:
        print("error: no notebook connected to the external cluster; is DASK_SCHEDULER_ADDRESS ignored?",
              file=sys.stderr)
        return 1
    return code


if __name__ == "__main__":
    sys.exit(main())
