"""``python -m utils.gpu_check``: the exit status is ``main()``'s (0 pass, 1 a check failed, 2 no GPU)."""

import sys

from utils.gpu_check.cli import main

sys.exit(main())
