"""``python -m utils.progress``: the command line (``utils.progress.cli``)."""

import sys

from utils.progress.cli import main

if __name__ == "__main__":
    sys.exit(main())
