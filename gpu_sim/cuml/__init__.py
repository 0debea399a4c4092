"""Simulated cuML 26.10 (test infrastructure, see ``gpu_sim/README.md``).

Only what the course calls: ``cuml.dask.linear_model.LinearRegression`` with the released contract (constructor,
accepted inputs, refusals and their messages, one NCCL rank per worker, lazy predictions, ``coef_``/``intercept_``,
``get_combined_model``) and the single-GPU ``cuml.linear_model.LinearRegression`` that ``get_combined_model`` returns.
The solver is ordinary least squares in NumPy on the workers' CPUs: a stand-in, not cuML's algorithm, and nothing
here is a GPU result. Sources: the released wheel cuml-cu12 26.10.0 (``cuml/...``).
"""

from __future__ import annotations

from cuml.internals.base import Base
from cuml.linear_model.linear_regression import LinearRegression

# cuml/_version.py reads the wheel's VERSION file, which holds "26.10.00".
__version__ = "26.10.00+sim"
__git_commit__ = ""

__all__ = ["Base", "LinearRegression", "__git_commit__", "__version__"]
