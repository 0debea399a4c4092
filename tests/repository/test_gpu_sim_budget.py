"""The simulated RAPIDS stack keeps to the size budget its README states (the budget's one home): each
part's Python lines stay within its budget, and every Python file of ``gpu_sim/`` belongs to exactly
one part, so a new file cannot grow the simulation outside the budget."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from utils.base.paths import REPO_ROOT

SIM = REPO_ROOT / "gpu_sim"
README = SIM / "README.md"


def budget_table(text: str) -> dict[str, tuple[list[str], int]]:
    """Part -> (its paths, its budget in lines), from the README's section "Size budget": rows
    ``| part | `a/`, `b.py` | lines today | budget |``."""
    section = text.split("## Size budget", 1)[-1].split("\n## ", 1)[0]
    parts: dict[str, tuple[list[str], int]] = {}
    for line in section.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) == 4 and re.fullmatch(r"[\d,]+", cells[3]):
            parts[cells[0]] = (re.findall(r"`([^`]+)`", cells[1]), int(cells[3].replace(",", "")))
    return parts


def stated_total(text: str) -> int | None:
    found = re.search(r"budget ([\d,]+)\.", text.split("## Size budget", 1)[-1].split("\n## ", 1)[0])
    return int(found.group(1).replace(",", "")) if found else None


def python_lines(path: Path) -> int:
    return len(path.read_text().splitlines())


def sim_python_files() -> list[Path]:
    return sorted(p for p in SIM.rglob("*.py") if "__pycache__" not in p.parts)


def files_of(paths: list[str]) -> set[Path]:
    found: set[Path] = set()
    for entry in paths:
        target = SIM / entry.rstrip("/")
        found |= {p for p in target.rglob("*.py") if "__pycache__" not in p.parts} if entry.endswith("/") else {target}
    return found


def test_the_readme_states_a_budget_for_each_part():
    parts = budget_table(README.read_text())
    assert len(parts) >= 3, f"gpu_sim/README.md's size budget table is unreadable: {parts}"
    for name, (paths, budget) in parts.items():
        assert paths and budget > 0, name
        missing = [p for p in paths if not (SIM / p.rstrip("/")).exists()]
        assert missing == [], f"{name}: the README names paths that do not exist"
    assert stated_total(README.read_text()) == sum(budget for _, budget in parts.values()), (
        "the README's total budget is not the sum of its parts' budgets")


def test_every_python_file_belongs_to_exactly_one_part():
    parts = budget_table(README.read_text())
    owners: dict[Path, list[str]] = {}
    for name, (paths, _) in parts.items():
        for path in files_of(paths):
            owners.setdefault(path, []).append(name)
    unowned = [str(p.relative_to(SIM)) for p in sim_python_files() if p not in owners]
    doubled = {str(p.relative_to(SIM)): names for p, names in owners.items() if len(names) > 1}
    assert unowned == [], "Python files of gpu_sim/ outside every part of the README's size budget"
    assert doubled == {}


@pytest.mark.parametrize("part", list(budget_table(README.read_text())))
def test_each_part_keeps_within_its_budget(part):
    paths, budget = budget_table(README.read_text())[part]
    lines = sum(python_lines(path) for path in files_of(paths))
    assert lines <= budget, (f"gpu_sim's {part}: {lines} lines of Python, budget {budget} (gpu_sim/README.md, "
                             "'Size budget': delete first; raise a budget only in a commit of its own, "
                             "with the reason)")


def test_the_table_reader_finds_rows_and_ignores_the_rest():
    text = ("## Size budget\n\n| Part | Paths | Lines | Budget |\n|---|---|---|---|\n"
            "| libs | `a/`, `b.py` | 9,031 | 9,950 |\n\nIn all 9,031 lines, budget 9,950.\n\n"
            "## Next\n| x | `c/` | 1 | 2 |\n")
    assert budget_table(text) == {"libs": (["a/", "b.py"], 9950)}
    assert stated_total(text) == 9950
