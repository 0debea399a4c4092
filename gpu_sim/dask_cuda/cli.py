"""Port of rapidsai/dask-cuda ``dask_cuda/cli.py`` (26.10): the click group ``cuda`` that the real ``dask`` command
finds through the ``dask_cli`` entry point (``cuda = dask_cuda.cli:cuda``, see
``dask_cuda-26.10.0+sim.dist-info/entry_points.txt``), with ``dask cuda worker SCHEDULER`` and
``dask cuda config SCHEDULER``. Every option of the real ``worker`` command, with its name and default; the
help texts are shortened.
"""

from __future__ import annotations

import asyncio
import logging

import click
from dask import config as dask_config
from distributed import Client
from distributed._signals import wait_for_signals
from distributed.compatibility import asyncio_run
from distributed.config import get_loop_factory
from distributed.preloading import validate_preload_argv
from distributed.security import Security
from distributed.utils import import_term
from tornado.ioloop import TimeoutError

from .cuda_worker import CUDAWorker
from .utils import CommaSeparatedChoice, print_cluster_config

logger = logging.getLogger(__name__)


pem_file_option_type = click.Path(exists=True, resolve_path=True)
scheduler = click.argument("scheduler", type=str, required=False)
preload_argv = click.argument("preload_argv", nargs=-1, type=click.UNPROCESSED, callback=validate_preload_argv)
scheduler_file = click.option(
    "--scheduler-file", type=str, default=None,
    help="Filename to JSON encoded scheduler information (see ``dask scheduler --scheduler-file``).",
)
tls_ca_file = click.option("--tls-ca-file", type=pem_file_option_type, default=None,
                           help="CA certificate(s) file for TLS (in PEM format).")
tls_cert = click.option("--tls-cert", type=pem_file_option_type, default=None,
                        help="Certificate file for TLS (in PEM format).")
tls_key = click.option("--tls-key", type=pem_file_option_type, default=None,
                       help="Private key file for TLS (in PEM format).")


@click.group
def cuda():
    """Subcommands to launch or query distributed workers with GPUs."""


@cuda.command(name="worker", context_settings=dict(ignore_unknown_options=True))
@scheduler
@preload_argv
@click.option("--host", type=str, default=None,
              help="IP address of serving host; should be visible to the scheduler and other workers.")
@click.option("--worker-port", type=str, default=None,
              help="Serving computation port, defaults to random; a range like 9000:9003 for several GPUs.")
@click.option("--listen-address", type=str, default=None, help="The address to which the worker binds.")
@click.option("--contact-address", type=str, default=None,
              help="The address the worker advertises to the scheduler and other workers.")
@click.option("--nthreads", type=int, default=1, show_default=True,
              help="Number of threads to be used for each Dask worker process.")
@click.option("--name", type=str, default=None, help="A unique name for the worker.")
@click.option("--memory-limit", default="auto", show_default=True,
              help="Size of the host LRU cache (bytes, fraction, string like 5GB, auto, or 0).")
@click.option("--device-memory-limit", default="default", show_default=True,
              help="Size of the CUDA device LRU cache ('default' = 80% of the device's memory).")
@click.option("--enable-cudf-spill/--disable-cudf-spill", default=False, show_default=True,
              help="Enable automatic cuDF spilling.")
@click.option("--cudf-spill-stats", type=int, default=0, help="Set the cuDF spilling statistics level.")
@click.option("--rmm-pool-size", default=None, help="RMM pool size to initialize each worker with.")
@click.option("--rmm-maximum-pool-size", default=None,
              help="The maximum pool size, when using an RMM pool memory resource.")
@click.option("--rmm-managed-memory/--no-rmm-managed-memory", default=False, show_default=True,
              help="Initialize each worker with RMM and set it to use managed memory.")
@click.option("--rmm-async/--no-rmm-async", default=False, show_default=True,
              help="Initialize each worker with RMM and set it to use RMM's asynchronous allocator.")
@click.option("--set-rmm-allocator-for-libs", "rmm_allocator_external_lib_list",
              type=CommaSeparatedChoice(["cupy", "torch"]), default=None, show_default=True,
              help="Set RMM as the allocator for external libraries (comma-separated, e.g. 'torch,cupy').")
@click.option("--rmm-release-threshold", default=None,
              help="With --rmm-async: release unused pool memory above this size at synchronization points.")
@click.option("--rmm-log-directory", default=None, help="Directory to write per-worker RMM log files to.")
@click.option("--rmm-track-allocations/--no-rmm-track-allocations", default=False, show_default=True,
              help="Track memory allocations made by RMM.")
@click.option("--pid-file", type=str, default="", help="File to write the process PID.")
@click.option("--resources", type=str, default="", help="""Resources for task constraints like "GPU=2 MEM=10e9".""")
@click.option("--dashboard/--no-dashboard", "dashboard", default=True, show_default=True, required=False,
              help="Launch the dashboard.")
@click.option("--dashboard-address", type=str, default=":0", show_default=True,
              help="Relative address to serve the dashboard (if enabled).")
@click.option("--local-directory", default=None, type=str, help="Path on local machine to store temporary files.")
@scheduler_file
@click.option("--protocol", type=str, default=None, help="Protocol like tcp, tls, or ucx")
@click.option("--interface", type=str, default=None, help="External interface used to connect to the scheduler.")
@click.option("--preload", type=str, multiple=True, is_eager=True,
              help="Module that should be loaded by each worker process.")
@click.option("--death-timeout", type=str, default=None, help="Seconds to wait for a scheduler before closing")
@click.option("--dashboard-prefix", type=str, default=None, help="Prefix for the dashboard.")
@tls_ca_file
@tls_cert
@tls_key
@click.option("--enable-tcp-over-ucx/--disable-tcp-over-ucx", default=None, show_default=True,
              help="Override automatic UCX transport selection to enable or disable TCP over UCX.")
@click.option("--enable-infiniband/--disable-infiniband", default=None, show_default=True,
              help="Override automatic UCX transport selection to enable or disable InfiniBand.")
@click.option("--enable-nvlink/--disable-nvlink", default=None, show_default=True,
              help="Override automatic UCX transport selection to enable or disable NVLink.")
@click.option("--enable-rdmacm/--disable-rdmacm", default=None, show_default=True,
              help="Override automatic UCX transport selection to enable or disable UCX RDMA connection manager.")
@click.option("--worker-class", default=None,
              help="Use a different class than Distributed's default (distributed.Worker) to spawn Nanny.")
@click.option("--pre-import", default=None, help="Pre-import libraries as a Worker plugin (comma-separated).")
@click.option("--multiprocessing-method", default="spawn", type=click.Choice(["spawn", "fork", "forkserver"]),
              help="Method used to start new processes with multiprocessing")
def worker(
    scheduler,
    host,
    worker_port,
    listen_address,
    contact_address,
    nthreads,
    name,
    memory_limit,
    device_memory_limit,
    enable_cudf_spill,
    cudf_spill_stats,
    rmm_pool_size,
    rmm_maximum_pool_size,
    rmm_managed_memory,
    rmm_async,
    rmm_allocator_external_lib_list,
    rmm_release_threshold,
    rmm_log_directory,
    rmm_track_allocations,
    pid_file,
    resources,
    dashboard,
    dashboard_address,
    local_directory,
    scheduler_file,
    interface,
    preload,
    dashboard_prefix,
    tls_ca_file,
    tls_cert,
    tls_key,
    enable_tcp_over_ucx,
    enable_infiniband,
    enable_nvlink,
    enable_rdmacm,
    worker_class,
    pre_import,
    multiprocessing_method,
    **kwargs,
):
    """Launch a distributed worker with GPUs attached to an existing scheduler (simulated GPUs here).

    A scheduler can be specified either through a URI passed through the ``SCHEDULER`` argument or a scheduler
    file passed through the ``--scheduler-file`` option.
    """
    if multiprocessing_method == "forkserver":
        import multiprocessing.forkserver as f

        f.ensure_running()
    if tls_ca_file and tls_cert and tls_key:
        security = Security(tls_ca_file=tls_ca_file, tls_worker_cert=tls_cert, tls_worker_key=tls_key)
    else:
        security = None

    if isinstance(scheduler, str) and scheduler.startswith("-"):
        raise ValueError(
            "The scheduler address can't start with '-'. Please check "
            "your command line arguments, you probably attempted to use "
            f"unsupported one. Scheduler address: {scheduler}"
        )

    if worker_class is not None:
        worker_class = import_term(worker_class)

    with dask_config.set({"distributed.worker.multiprocessing-method": multiprocessing_method}):

        async def run():
            # Nannies must be created on the same event loop as asyncio_run
            worker = CUDAWorker(
                scheduler,
                host,
                listen_address,
                contact_address,
                nthreads,
                name,
                memory_limit,
                device_memory_limit,
                enable_cudf_spill,
                cudf_spill_stats,
                rmm_pool_size,
                rmm_maximum_pool_size,
                rmm_managed_memory,
                rmm_async,
                rmm_allocator_external_lib_list,
                rmm_release_threshold,
                rmm_log_directory,
                rmm_track_allocations,
                pid_file,
                resources,
                dashboard,
                dashboard_address,
                local_directory,
                scheduler_file,
                interface,
                preload,
                dashboard_prefix,
                security,
                enable_tcp_over_ucx,
                enable_infiniband,
                enable_nvlink,
                enable_rdmacm,
                worker_class,
                pre_import,
                worker_port=worker_port,
                **kwargs,
            )

            async def wait_for_worker_to_finish():
                """Wait for the worker to initialize and finish"""
                await worker
                await worker.finished()

            async def wait_for_signals_and_close():
                """Wait for SIGINT or SIGTERM and close the worker upon receiving one of those signals"""
                await wait_for_signals()
                await worker.close(timeout=10)

            wait_for_signals_and_close_task = asyncio.create_task(wait_for_signals_and_close())
            wait_for_worker_to_finish_task = asyncio.create_task(wait_for_worker_to_finish())

            done, _ = await asyncio.wait(
                [wait_for_signals_and_close_task, wait_for_worker_to_finish_task],
                return_when=asyncio.FIRST_COMPLETED,
            )
            # Re-raise exceptions from done tasks
            [task.result() for task in done]

        try:
            asyncio_run(run(), loop_factory=get_loop_factory())
        except (TimeoutError, asyncio.TimeoutError):  # noqa: UP041 (TimeoutError is tornado's here, as real)
            pass
        finally:
            logger.info("End worker")


@cuda.command(name="config", context_settings=dict(ignore_unknown_options=True))
@scheduler
@preload_argv
@scheduler_file
@tls_ca_file
@tls_cert
@tls_key
def config(scheduler, scheduler_file, tls_ca_file, tls_cert, tls_key, **kwargs):
    """Query an existing GPU cluster's configuration."""
    if scheduler is None and scheduler_file is None and dask_config.get("scheduler-address", None) is None:
        raise ValueError(
            "No scheduler specified. A scheduler can be specified by "
            "passing an address through the SCHEDULER argument or "
            "'dask.scheduler-address' config option, or by passing the "
            "location of a scheduler file through the --scheduler-file "
            "option"
        )
    if isinstance(scheduler, str) and scheduler.startswith("-"):
        raise ValueError(
            "The scheduler address can't start with '-'. Please check "
            "your command line arguments, you probably attempted to use "
            f"unsupported one. Scheduler address: {scheduler}"
        )
    if tls_ca_file and tls_cert and tls_key:
        security = Security(tls_ca_file=tls_ca_file, tls_worker_cert=tls_cert, tls_worker_key=tls_key)
    else:
        security = None
    if scheduler_file is not None:
        client = Client(scheduler_file=scheduler_file, security=security)
    else:
        client = Client(scheduler, security=security)
    print_cluster_config(client)


if __name__ == "__main__":
    worker()
