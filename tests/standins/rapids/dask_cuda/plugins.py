"""Stand-in for ``dask_cuda.plugins``: a worker plugin of the same name and module as the one every
dask-cuda worker carries, so a plain worker can be made to look like a dask-cuda worker."""

from __future__ import annotations

from distributed import WorkerPlugin


class CUDFSetup(WorkerPlugin):
    def setup(self, worker) -> None:
        pass
