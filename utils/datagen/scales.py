"""Dataset size presets, so that tests, Binder, a laptop and a GPU box each get a fitting size
without anyone editing a notebook (choose with ``COURSE_SCALE`` or an argument)."""

from __future__ import annotations

import os
from dataclasses import dataclass

SCALE_ENV_VAR = "COURSE_SCALE"
DEFAULT_SCALE = "small"


@dataclass(frozen=True)
class Scale:
    """How many rows, split into how many independent partitions, over how many customers."""

    name: str
    rows: int
    partitions: int
    customers: int
    purpose: str


SCALES: dict[str, Scale] = {
    s.name: s
    for s in (
        Scale("tiny", 20_000, 4, 500, "tests and CI (generates in well under a second)"),
        Scale("binder", 1_000_000, 4, 20_000, "mybinder.org (about 2 GB RAM, little disk)"),
        Scale("small", 10_000_000, 20, 100_000, "a laptop: the default"),
        Scale("medium", 100_000_000, 100, 1_000_000, "a workstation or one GPU"),
        Scale("large", 1_000_000_000, 1000, 10_000_000, "bigger than one GPU's memory"),
    )
}


def resolve_scale(scale: str | None = None) -> Scale:
    """Return the preset named by ``scale``, else by ``$COURSE_SCALE``, else the laptop default."""
    name = scale or os.environ.get(SCALE_ENV_VAR) or DEFAULT_SCALE
    try:
        return SCALES[name]
    except KeyError:
        known = ", ".join(SCALES)
        raise ValueError(f"unknown scale {name!r}: choose one of {known}") from None
