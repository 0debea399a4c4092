"""``cudf_polars/utils/versions.py`` (26.10.2): the polars versions cudf-polars accepts."""

from __future__ import annotations

from packaging.version import parse
from polars import __version__

POLARS_VERSION = parse(__version__)
POLARS_LOWER_BOUND = parse("1.35")


def _ensure_polars_version() -> None:
    if POLARS_VERSION < POLARS_LOWER_BOUND:
        raise ImportError(f"cudf_polars requires py-polars v{POLARS_LOWER_BOUND} or greater.")
