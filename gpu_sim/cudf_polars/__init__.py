"""Simulated cudf-polars 26.10 (test infrastructure, see ``gpu_sim/README.md``).

polars' ``collect(engine=GPUEngine(...))`` imports this package and calls ``execute_with_cudf`` after optimising
the plan; the real callback translates the plan and installs a GPU executor with ``nt.set_udf``. This one checks
the engine's configuration as the real one does and then leaves the plan alone, so polars runs it on its own CPU
engine, the route polars takes whenever cudf-polars declines a plan. The multi-GPU ``DaskEngine`` keeps its
released constructor, checks and lifecycle. Nothing here runs on a GPU. Sources: the released wheel
cudf-polars-cu12 26.10.2 (``cudf_polars/...``).
"""

from __future__ import annotations

from cudf_polars.callback import execute_with_cudf
from cudf_polars.utils.versions import _ensure_polars_version

_ensure_polars_version()
del _ensure_polars_version

# cudf_polars/_version.py reads the wheel's VERSION file, which holds "26.10.02".
__version__ = "26.10.02+sim"
__git_commit__ = ""

__all__ = ["__git_commit__", "__version__", "execute_with_cudf"]
