"""What determines a dataset's content: a scale preset plus overrides, checked once.

Equal ``Params`` mean byte-identical files, so the manifest stores them and a reused dataset is
compared against them (``utils.datagen.manifest.why_incomplete``).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from utils.datagen.scales import SCALES, resolve_scale

FORMATS = ("csv", "parquet")
# Each partition is a file per format, with a fixed cost to generate, write and hash (about 10 ms):
# below this many rows per partition that cost is most of the work (tiny's 20,000 rows in 20,000
# partitions take minutes), and no course scale or test comes close (the smallest use 1,500).
MIN_ROWS_PER_PARTITION = 1_000


@dataclass(frozen=True)
class Params:
    """Everything that determines the dataset's content; equal params mean identical files."""

    scale: str
    rows: int
    partitions: int
    customers: int
    seed: int
    formats: tuple[str, ...]


def make_params(
    scale: str | None = None,
    rows: int | None = None,
    partitions: int | None = None,
    customers: int | None = None,
    seed: int = 42,
    formats: Iterable[str] = FORMATS,
) -> Params:
    """Resolve a preset plus overrides, rejecting bad values with a one-line ``ValueError``."""
    preset = resolve_scale(scale)
    rows = preset.rows if rows is None else rows
    partitions = preset.partitions if partitions is None else partitions
    customers = preset.customers if customers is None else customers
    for name, value in (("rows", rows), ("partitions", partitions), ("customers", customers)):
        if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
            raise ValueError(f"{name} must be a positive integer, got {value!r}")
    if partitions > rows:
        raise ValueError(f"partitions ({partitions}) cannot exceed rows ({rows})")
    if partitions > 1 and rows < partitions * MIN_ROWS_PER_PARTITION:
        most = max(1, rows // MIN_ROWS_PER_PARTITION)
        raise ValueError(
            f"partitions ({partitions:,}) too many for {rows:,} rows: each would hold {rows // partitions:,} "
            f"row{'s' if rows // partitions != 1 else ''}, and a partition needs at least "
            f"{MIN_ROWS_PER_PARTITION:,} to be worth its own files; "
            f"use at most {most:,} partition{'s' if most != 1 else ''}"
        )
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    formats = tuple(sorted(set(formats)))
    unknown = [f for f in formats if f not in FORMATS]
    if unknown or not formats:
        raise ValueError(f"formats must be among {', '.join(FORMATS)}, got {list(formats)!r}")
    return Params(preset.name, rows, partitions, customers, seed, formats)


def describe_params(params: Params) -> str:
    """``scale 'small'``, or what was overridden: ``6,000 rows (--rows overrides scale 'tiny')``."""
    preset = SCALES[params.scale]
    changed = [name for name in ("rows", "partitions", "customers") if getattr(params, name) != getattr(preset, name)]
    if not changed:
        return f"scale {params.scale!r}"
    flags = ", ".join(f"--{name}" for name in changed)
    return f"{params.rows:,} rows ({flags} {'overrides' if len(changed) == 1 else 'override'} scale {params.scale!r})"
