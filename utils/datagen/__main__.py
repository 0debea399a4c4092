"""``python -m utils.datagen``: the generator's command line (``utils.datagen.cli``)."""

import os
import signal
import sys

# What a stop signal says: the same words as ``cli.main`` uses once it has taken over.
STOPPED = {signal.SIGINT: "interrupted", signal.SIGTERM: "terminated (SIGTERM)"}


def _stop_while_loading(signum, frame):
    """Ctrl-C or SIGTERM before ``cli.main`` installs its own handlers: loading the generator's
    modules takes a second or more, and nothing is written yet, so stop at once, in one line
    (instead of a ``KeyboardInterrupt`` traceback from somewhere inside an import)."""
    os.write(2, f"error: {STOPPED[signum]}; nothing half-written was kept\n".encode())
    os._exit(128 + signum)


# Installed before the generator's modules load (this file only runs as ``python -m utils.datagen``).
for _signum in STOPPED:
    signal.signal(_signum, _stop_while_loading)

from utils.datagen.cli import main  # noqa: E402  (after the handlers: loading it is the slow part)

if __name__ == "__main__":
    sys.exit(main())
