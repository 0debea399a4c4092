"""The site's tests. The ones in ``built/`` read the built site (``make site``) and drive Chromium,
so they run from ``make test-site`` (which sets ``COURSE_SITE_TESTS=1``; CI runs it after
``make site``), not in the default ``pytest`` run; the others are fast and run everywhere."""

from __future__ import annotations

import os

if os.environ.get("COURSE_SITE_TESTS") != "1":
    collect_ignore = ["built"]
