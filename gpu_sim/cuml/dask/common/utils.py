"""``cuml/dask/common/utils.py`` (cuml 26.10.0): the default client and how worker failures reach the caller."""

from __future__ import annotations

from typing import Any

from dask.distributed import default_client, wait


def get_client(client: Any = None) -> Any:
    return default_client() if client is None else client


def raise_exception_from_futures(futures: list) -> None:
    """Raises a RuntimeError if any of the futures indicates an exception."""
    errs = [f.exception() for f in futures if f.exception()]
    if errs:
        raise RuntimeError(f"{len(errs)} of {len(futures)} worker jobs failed: {', '.join(map(str, errs))}")


def wait_and_raise_from_futures(futures: list) -> list:
    """The futures, once all have finished and none failed."""
    wait(futures)
    raise_exception_from_futures(futures)
    return futures
