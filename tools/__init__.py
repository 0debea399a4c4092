"""Maintainer tooling, kept out of ``utils`` (the package learners import); run from the
repository root as ``python -m tools.<module>``, e.g. ``python -m tools.gpu.check`` (``make gpu-check``)."""
