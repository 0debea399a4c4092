"""Serve the built site on 127.0.0.1 only: for a look in a browser (``make site-serve``) and for the
browser test, whose server stops with it."""

from __future__ import annotations

import contextlib
import functools
import threading
from collections.abc import Iterator
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

HOST = "127.0.0.1"


class _QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the base class's name
        pass


def server(directory: Path, port: int = 0, quiet: bool = True) -> ThreadingHTTPServer:
    """An HTTP server for ``directory`` on 127.0.0.1 (``port`` 0: a free one)."""
    if not (directory / "index.html").is_file():
        raise FileNotFoundError(f"no site in {directory}: build it first (make site)")
    handler = functools.partial(_QuietHandler if quiet else SimpleHTTPRequestHandler, directory=str(directory))
    return ThreadingHTTPServer((HOST, port), handler)


@contextlib.contextmanager
def serving(directory: Path) -> Iterator[str]:
    """The base URL of ``directory`` served from a background thread until the block ends."""
    httpd = server(directory)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://{HOST}:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=5)
