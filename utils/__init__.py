"""Helpers for the Dask-across-GPUs course, in four layers (CONTRIBUTING.md, "The utils package"):

- ``utils.base``: the floor (paths, byte counts in words, process lifetime); the standard library only;
- ``utils.datagen``: the data generator; it stands apart and imports only the base floor;
- the runtime: ``machine``, ``backend``, ``cluster``, ``processes``, ``dataset``, ``doctor``,
  ``snapshot`` (hardware, the pandas/cudf choice, clusters, the dataset handle, readiness);
- what notebooks teach with: ``checks``, ``progress``, ``review``, ``notebook_grammar``, ``plans``,
  ``profiling``, ``partitions``, ``pipeline``, ``memory``, ``join_demo``.

Notebooks import this package as ``utils`` (installed with ``pip install -e .``, so no notebook
touches ``sys.path``). The five names every setup cell uses are attributes of the package:
``utils.ensure_dataset()``, ``utils.start_client()``, ``utils.shutdown(client)``,
``utils.to_pandas(result)`` and ``utils.current_backend()``; everything else is imported from its
module (``from utils.cluster import describe``). The five are loaded on first use, because the
generator's worker processes import this package too and must not pay for Dask's import.
"""

from importlib import import_module
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from utils.backend import current_backend, to_pandas
    from utils.cluster import shutdown, start_client
    from utils.dataset import ensure_dataset

_EXPORTS = {
    "ensure_dataset": "utils.dataset",
    "start_client": "utils.cluster",
    "shutdown": "utils.cluster",
    "to_pandas": "utils.backend",
    "current_backend": "utils.backend",
}

__all__ = ["current_backend", "ensure_dataset", "shutdown", "start_client", "to_pandas"]


def __getattr__(name: str):
    """The five exports above, imported on first use (PEP 562); nothing else."""
    if name in _EXPORTS:
        return getattr(import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'utils' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *_EXPORTS])
