"""``python -m utils.datagen``: the generator's command line (``utils.datagen.cli``)."""

import sys

from utils.datagen.cli import main

if __name__ == "__main__":
    sys.exit(main())
