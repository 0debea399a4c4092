"""Helpers for the Dask-across-GPUs course: data, cluster, self-checks.

Notebooks import this package as ``utils`` (installed with ``pip install -e .``), so no notebook
touches ``sys.path`` and CPU/GPU differences live here rather than in notebook cells.
Attributes are imported lazily so that ``python -m utils.datagen`` stays a clean entry point.
"""

from importlib import import_module

_EXPORTS = {
    "ensure_dataset": "utils.datagen",
    "Dataset": "utils.dataset",
    "start_client": "utils.cluster",
    "shutdown": "utils.cluster",
    "course_client": "utils.cluster",
    "dashboard_link": "utils.cluster",
    "to_pandas": "utils.backend",
    "current_backend": "utils.backend",
    "hardware_label": "utils.machine",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    """Lazy exports, and submodules as attributes (``utils.checks``, ``utils.scales``, ...)."""
    if name in _EXPORTS:
        return getattr(import_module(_EXPORTS[name]), name)
    try:
        return import_module(f"utils.{name}")
    except ModuleNotFoundError as error:
        if error.name != f"utils.{name}":
            raise
        raise AttributeError(f"module 'utils' has no attribute {name!r}") from None
