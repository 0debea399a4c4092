"""A course cluster for a test: ``start_client`` with a guaranteed ``shutdown``."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from distributed import Client

from utils.cluster import shutdown, start_client


@contextmanager
def course_client(**kwargs: Any) -> Iterator[Client]:
    """``with course_client(quiet=True) as client:``; the cluster closes even when the test fails."""
    client = start_client(**kwargs)
    try:
        yield client
    finally:
        shutdown(client)
