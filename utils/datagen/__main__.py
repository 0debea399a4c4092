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


if __name__ == "__main__":
    for _signum in STOPPED:
        signal.signal(_signum, _stop_while_loading)
    from utils.datagen.cli import main

    sys.exit(main())
