"""pytest plugin for the GPU-mode notebook pass: skips, with the reason, the notebook cells that
need what the simulation cannot give (a CUDA build of XGBoost, cuML, a CUDA context, a GPU in a
child process). Loaded by ``notebook_pass.py`` with ``-p nbval_skips``; never in a normal run.

A rule names a notebook and a piece of a cell's source that occurs in exactly one of its code
cells; a rule that matches no cell or several is an error, so the list cannot silently go stale.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest


@dataclass(frozen=True)
class Skip:
    notebook: str  # file name, e.g. "08_distributed_training.ipynb"
    marker: str  # a piece of the cell's source, unique among the notebook's code cells
    reason: str


# What the simulation cannot execute. Keep it short: every entry is a cell whose GPU path is
# proved only on a real GPU (`make gpu-check`).
XGBOOST_ON_GPU = ("XGBoost with device='cuda' on cudf partitions needs XGBoost's CUDA build and a GPU "
                  "(the simulated cudf has no __cuda_array_interface__)")
USES_THE_GPU_MODEL = "uses the XGBoost model or predictions of a cell skipped above (XGBoost on a GPU)"
SKIPS: tuple[Skip, ...] = (
    Skip("08_distributed_training.ipynb", "dtrain = dxgb.DaskQuantileDMatrix(", XGBOOST_ON_GPU),
    Skip("08_distributed_training.ipynb", "predicted = dxgb.predict(client, booster", USES_THE_GPU_MODEL),
    Skip("08_distributed_training.ipynb", 'biggest = results["lag1"].nlargest(', USES_THE_GPU_MODEL),
    Skip("08_distributed_training.ipynb", 'results["model"] + 1, s=8', USES_THE_GPU_MODEL),
    Skip("08_distributed_training.ipynb", "regressor = dxgb.DaskXGBRegressor(", XGBOOST_ON_GPU),
    Skip("08_distributed_training.ipynb", "def scale_free(frame, columns):", XGBOOST_ON_GPU),
    Skip("08_distributed_training.ipynb", 'name = "XGBoost, ratio to last quarter"', USES_THE_GPU_MODEL),
)


def _rules_for(notebook: str) -> list[Skip]:
    return [rule for rule in SKIPS if rule.notebook == notebook]


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    matches: dict[Skip, int] = {}
    seen_notebooks = set()
    for item in items:
        cell = getattr(item, "cell", None)
        if cell is None:
            continue
        notebook = item.path.name
        seen_notebooks.add(notebook)
        for rule in _rules_for(notebook):
            if rule.marker in cell.source:
                matches[rule] = matches.get(rule, 0) + 1
                item.add_marker(pytest.mark.skip(reason=f"GPU simulation cannot run this cell: {rule.reason}"))
    stale = [rule for rule in SKIPS if rule.notebook in seen_notebooks and matches.get(rule, 0) != 1]
    if stale:
        listing = "; ".join(f"{rule.notebook}: {rule.marker!r} matched {matches.get(rule, 0)} cells" for rule in stale)
        raise pytest.UsageError(f"nbval_skips: each rule must match exactly one cell: {listing}")
