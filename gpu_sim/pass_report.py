"""pytest plugin for the GPU-mode notebook pass: what the pass ran, in numbers and in words.

Loaded by ``notebook_pass.py`` with ``-p pass_report``; never in a normal run. It skips nothing.
After the run it prints how many notebook cells ran, how many were skipped (the goal, and today's
state, is zero) and every line a cell printed that says it took a guarded branch instead of its GPU
path: lines that start with ``skipped:`` (a GPU branch not taken) or ``shared GPU:`` (a library
that refuses several workers on one device, so the cell does something else and says why). A
simulated pass proves code paths and library contracts, never speed or memory on a GPU.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

GUARD_PREFIXES = ("skipped:", "shared GPU:")


@dataclass
class PassRecord:
    """Counts and guarded-branch lines of one pass."""

    cells: int = 0
    skipped: list[str] = field(default_factory=list)
    failed: int = 0
    guards: list[str] = field(default_factory=list)


RECORD = PassRecord()


def guarded_lines(outputs: list[dict] | None) -> list[str]:
    """The printed lines of a cell's outputs that announce a guarded branch."""
    lines = []
    for output in outputs or []:
        if output.get("output_type") == "stream" and output.get("name") == "stdout":
            text = output.get("text", "")
            text = "".join(text) if isinstance(text, list) else text
            lines += [line for line in text.splitlines() if line.startswith(GUARD_PREFIXES)]
    return lines


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo) -> object:
    outcome = yield
    report = outcome.get_result()
    if getattr(item, "cell", None) is None:
        return
    if report.skipped and report.when in ("setup", "call"):
        RECORD.skipped.append(f"{item.path.name} cell {item.cell_num}: {report.longrepr}")
    if report.when != "call":
        return
    RECORD.cells += 1
    RECORD.failed += report.failed
    for line in guarded_lines(getattr(item, "test_outputs", None)):
        RECORD.guards.append(f"{item.path.name} cell {item.cell_num}: {line}")


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    write = terminalreporter.write_line
    write(f"GPU-mode pass (simulated GPUs): {RECORD.cells} cells ran, {len(RECORD.skipped)} cells skipped, "
          f"{RECORD.failed} failed, {len(RECORD.guards)} guarded branches taken")
    for line in RECORD.skipped:
        write(f"  skipped   {line}")
    for line in RECORD.guards:
        write(f"  guarded   {line}")
