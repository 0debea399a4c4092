"""Port of rapidsai/dask-cuda ``dask_cuda/local_cuda_cluster.py`` (26.10): ``LocalCUDACluster``, a
``distributed.LocalCluster`` with one worker process per (simulated) GPU.

``__init__`` and ``new_worker_spec`` are the real code: the same keyword list and defaults, the same
validation errors and warnings, ``**kwargs`` forwarded to ``LocalCluster`` (which forwards keywords it does not
know to the workers, so a removed keyword such as ``jit_unspill=True`` fails when the first worker starts:
``RuntimeError("Nanny failed to start.")`` caused by ``TypeError: Server.__init__() got an unexpected keyword
argument 'jit_unspill'``), each worker named by its device entry, with ``CUDA_VISIBLE_DEVICES`` rotated to put
its device first, a ``DeviceHostFile`` holding its ``device_memory_limit``, and the plugins CPUAffinity,
RMMSetup, PreImport, CUDFSetup. The only difference is what lies below: NVML is the simulated ``pynvml``, rmm
the simulated ``rmm``, the CUDA context preload a no-op (``dask_cuda.initialize``).
"""

from __future__ import annotations

import copy
import logging
import os
import warnings
from functools import partial

from distributed import LocalCluster, Nanny, Worker
from distributed.worker_memory import parse_memory_limit

from .initialize import initialize
from .utils import (
    cuda_visible_devices,
    get_ucx_config,
    nvml_device_index,
    parse_cuda_visible_device,
    parse_device_memory_limit,
)
from .worker_common import worker_data_function, worker_plugins


class LoggedWorker(Worker):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)

    async def start(self):
        await super().start()
        self.data.set_address(self.address)


class LoggedNanny(Nanny):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, worker_class=LoggedWorker, **kwargs)


class LocalCUDACluster(LocalCluster):
    """A variant of ``dask.distributed.LocalCluster`` that uses one GPU per process (simulated GPUs here).

    Parameters (as in dask-cuda 26.10): ``CUDA_VISIBLE_DEVICES`` (str, list or None: all GPUs), ``n_workers``
    (default: one per visible GPU), ``threads_per_worker=1``, ``memory_limit="auto"``,
    ``device_memory_limit="default"`` (80 % of the device's memory), ``enable_cudf_spill=False``,
    ``cudf_spill_stats=0``, ``local_directory``, ``protocol``, ``enable_tcp_over_ucx``, ``enable_infiniband``,
    ``enable_nvlink``, ``enable_rdmacm``, ``rmm_pool_size``, ``rmm_maximum_pool_size``, ``rmm_managed_memory``,
    ``rmm_async``, ``rmm_allocator_external_lib_list``, ``rmm_release_threshold``, ``rmm_log_directory``,
    ``rmm_track_allocations``, ``log_spilling=False``, ``pre_import``; anything else goes to ``LocalCluster``.

    Raises ``TypeError`` if InfiniBand or NVLink are enabled and ``protocol`` is not ucx; ``ValueError`` for the
    invalid RMM combinations, ``processes=False``, ``threads_per_worker < 1``, ``n_workers < 1`` and more
    workers than visible devices.
    """

    def __init__(
        self,
        CUDA_VISIBLE_DEVICES=None,  # noqa: N803 (dask-cuda's name)
        n_workers=None,
        threads_per_worker=1,
        memory_limit="auto",
        device_memory_limit="default",
        enable_cudf_spill=False,
        cudf_spill_stats=0,
        local_directory=None,
        protocol=None,
        enable_tcp_over_ucx=None,
        enable_infiniband=None,
        enable_nvlink=None,
        enable_rdmacm=None,
        rmm_pool_size=None,
        rmm_maximum_pool_size=None,
        rmm_managed_memory=False,
        rmm_async=False,
        rmm_allocator_external_lib_list=None,
        rmm_release_threshold=None,
        rmm_log_directory=None,
        rmm_track_allocations=False,
        log_spilling=False,
        pre_import=None,
        **kwargs,
    ):
        # Required by RAPIDS libraries (e.g., cuDF) to ensure no context
        # initialization happens before we can set CUDA_VISIBLE_DEVICES
        os.environ["RAPIDS_NO_INITIALIZE"] = "True"

        if enable_cudf_spill:
            import cudf

            # cuDF spilling must be enabled in the client/scheduler process too.
            cudf.set_option("spill", enable_cudf_spill)
            cudf.set_option("spill_stats", cudf_spill_stats)

        if threads_per_worker < 1:
            raise ValueError("threads_per_worker must be higher than 0.")

        if CUDA_VISIBLE_DEVICES is None:
            CUDA_VISIBLE_DEVICES = cuda_visible_devices(0)
        if isinstance(CUDA_VISIBLE_DEVICES, str):
            CUDA_VISIBLE_DEVICES = CUDA_VISIBLE_DEVICES.split(",")
        CUDA_VISIBLE_DEVICES = list(map(parse_cuda_visible_device, CUDA_VISIBLE_DEVICES))
        if n_workers is None:
            n_workers = len(CUDA_VISIBLE_DEVICES)
        if n_workers < 1:
            raise ValueError("Number of workers cannot be less than 1.")

        if rmm_allocator_external_lib_list is not None:
            if isinstance(rmm_allocator_external_lib_list, str):
                rmm_allocator_external_lib_list = [v.strip() for v in rmm_allocator_external_lib_list.split(",")]
            elif not isinstance(rmm_allocator_external_lib_list, list):
                raise ValueError(
                    "rmm_allocator_external_lib_list must be either a comma-separated "
                    "string or a list of strings. Examples: 'torch,cupy' "
                    "or ['torch', 'cupy']"
                )

        # Set nthreads=1 when parsing mem_limit since it only depends on n_workers
        logger = logging.getLogger(__name__)
        self.memory_limit = parse_memory_limit(
            memory_limit=memory_limit, nthreads=1, total_cores=n_workers, logger=logger
        )
        self.device_memory_limit = parse_device_memory_limit(
            device_memory_limit, device_index=nvml_device_index(0, CUDA_VISIBLE_DEVICES)
        )
        self.enable_cudf_spill = enable_cudf_spill
        self.cudf_spill_stats = cudf_spill_stats

        self.rmm_pool_size = rmm_pool_size
        self.rmm_maximum_pool_size = rmm_maximum_pool_size
        self.rmm_managed_memory = rmm_managed_memory
        self.rmm_async = rmm_async
        self.rmm_release_threshold = rmm_release_threshold
        self.rmm_allocator_external_lib_list = rmm_allocator_external_lib_list

        if self.rmm_async and self.rmm_pool_size is not None:
            # check for https://github.com/rapidsai/rmm/issues/2060
            msg = (
                "'rmm_pool_size' is not needed when 'rmm_async' is enabled and will "
                "raise an exception in the future. Remove the 'rmm_pool_size' "
                "argument when creating this cluster to silence this warning."
            )
            warnings.warn(msg, FutureWarning, stacklevel=2)

        if rmm_pool_size is not None or rmm_managed_memory or rmm_async:
            try:
                import rmm  # noqa: F401
            except ImportError:
                raise ValueError(  # noqa: B904 (raised as real: the ImportError stays its context)
                    "RMM pool or managed memory requested but module 'rmm' "
                    "is not available. For installation instructions, please "
                    "see https://github.com/rapidsai/rmm"
                )
        elif enable_nvlink:
            warnings.warn(
                "When using NVLink we recommend setting a "
                "`rmm_pool_size`. Please see: "
                "https://docs.rapids.ai/api/dask-cuda/nightly/ucx/ "
                "for more details",
                stacklevel=2,
            )

        self.rmm_log_directory = rmm_log_directory
        self.rmm_track_allocations = rmm_track_allocations

        if not kwargs.pop("processes", True):
            raise ValueError("Processes are necessary in order to use multiple GPUs with Dask")

        data = kwargs.pop("data", None)
        if data is None:
            self.data = worker_data_function(
                device_memory_limit=self.device_memory_limit,
                memory_limit=self.memory_limit,
                enable_cudf_spill=enable_cudf_spill,
            )

        if enable_tcp_over_ucx or enable_infiniband or enable_nvlink:
            if protocol is None:
                protocol = "ucx"
            if protocol not in ("ucx", "ucxx"):
                raise TypeError("Enabling InfiniBand or NVLink requires protocol='ucx'")

        self.host = kwargs.get("host")

        initialize(
            create_cuda_context=False,
            enable_tcp_over_ucx=enable_tcp_over_ucx,
            enable_nvlink=enable_nvlink,
            enable_infiniband=enable_infiniband,
            enable_rdmacm=enable_rdmacm,
        )

        worker_class = kwargs.pop("worker_class", None)
        if worker_class is not None:
            if log_spilling is True:
                raise ValueError(
                    "Cannot enable `log_spilling` when `worker_class` is specified. If "
                    "logging is needed, ensure `worker_class` is a subclass of "
                    "`distributed.local_cuda_cluster.LoggedNanny` or a subclass of "
                    "`distributed.local_cuda_cluster.LoggedWorker`, and specify "
                    "`log_spilling=False`."
                )
            if not issubclass(worker_class, Nanny):
                worker_class = partial(Nanny, worker_class=worker_class)

        self.pre_import = pre_import

        super().__init__(
            n_workers=0,
            threads_per_worker=threads_per_worker,
            memory_limit=self.memory_limit,
            processes=True,
            data=data,
            local_directory=local_directory,
            protocol=protocol,
            worker_class=worker_class,
            config={
                "distributed.comm.ucx": get_ucx_config(
                    enable_tcp_over_ucx=enable_tcp_over_ucx,
                    enable_nvlink=enable_nvlink,
                    enable_infiniband=enable_infiniband,
                    enable_rdmacm=enable_rdmacm,
                )
            },
            **kwargs,
        )

        self.new_spec["options"]["preload"] = self.new_spec["options"].get("preload", []) + ["dask_cuda.initialize"]
        self.new_spec["options"]["preload_argv"] = self.new_spec["options"].get("preload_argv", []) + [
            "--create-cuda-context"
        ]

        self.cuda_visible_devices = CUDA_VISIBLE_DEVICES
        self.scale(n_workers)
        self.sync(self._correct_state)

    def new_worker_spec(self):
        try:
            name = min(set(self.cuda_visible_devices) - set(self.worker_spec))
        except Exception:
            raise ValueError("Can not scale beyond visible devices", self.cuda_visible_devices)  # noqa: B904 (as real)

        spec = copy.deepcopy(self.new_spec)
        worker_count = self.cuda_visible_devices.index(name)
        visible_devices = cuda_visible_devices(worker_count, self.cuda_visible_devices)
        device_index = nvml_device_index(0, visible_devices)
        spec["options"].update(
            {
                "env": {"CUDA_VISIBLE_DEVICES": visible_devices},
                **({"data": self.data(device_index)} if hasattr(self, "data") else {}),
                "plugins": worker_plugins(
                    device_index=device_index,
                    rmm_initial_pool_size=self.rmm_pool_size,
                    rmm_maximum_pool_size=self.rmm_maximum_pool_size,
                    rmm_managed_memory=self.rmm_managed_memory,
                    rmm_async_alloc=self.rmm_async,
                    rmm_release_threshold=self.rmm_release_threshold,
                    rmm_log_directory=self.rmm_log_directory,
                    rmm_track_allocations=self.rmm_track_allocations,
                    rmm_allocator_external_lib_list=self.rmm_allocator_external_lib_list,
                    pre_import=self.pre_import,
                    enable_cudf_spill=self.enable_cudf_spill,
                    cudf_spill_stats=self.cudf_spill_stats,
                ),
            }
        )
        return {name: spec}
