"""``cudf_polars.callback.execute_with_cudf`` (26.10.2 ``cudf_polars/callback.py``), the post-optimisation callback
polars' ``GPUEngine._post_opt_callback`` hands to ``LazyFrame.collect``.

Real: translate the plan to cudf-polars IR and, when every node is supported, ``nt.set_udf(...)`` so the GPU runs
it; otherwise leave the plan to polars' CPU engine (or raise with ``raise_on_fail=True``). Simulated: the engine
configuration is checked as on a real install (a bad option fails the collect; polars wraps the error as
``ComputeError: 'cuda' conversion failed: ...``), then the plan is left alone and polars' CPU engine runs it.
"""

from __future__ import annotations

from typing import Any

from cudf_polars.utils.config import check_engine_config

__all__ = ["execute_with_cudf"]


def execute_with_cudf(nt: Any, duration_since_start: int | None, *, config: Any) -> None:
    """A post optimization callback; here it never takes the plan over (polars' CPU engine executes it)."""
    check_engine_config(dict(config.config))
