"""Quantities in words."""

from __future__ import annotations


def human_bytes(n: float) -> str:
    """``1.6 MB``, ``740 kB``, ``12.3 GB``: a unit that fits the number (decimal, like ``df -H``)."""
    for unit in ("B", "kB", "MB", "GB"):
        if abs(n) < 1000:
            return f"{n:.0f} {unit}" if unit == "B" or abs(n) >= 100 else f"{n:.1f} {unit}"
        n /= 1000
    return f"{n:,.1f} TB"
