"""Enforce the course's notebook template (COURSE_DESIGN.md section 6), and fix what can be fixed.

    python -m utils.notebook_format notebooks/*.ipynb            # report problems, exit 1 if any
    python -m utils.notebook_format --fix notebooks/*.ipynb      # strip outputs, tidy metadata
    python -m utils.notebook_format --execute notebooks/01_*.ipynb  # run it, store NBVAL_CHECK_OUTPUT outputs

Only cells marked ``# NBVAL_CHECK_OUTPUT`` keep outputs in git: they are the expected results
nbval compares against; every other output varies (timings, ports) and is stripped.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

import nbformat

CHECK_MARK = "# NBVAL_CHECK_OUTPUT"
EXERCISE_MARK = "# Your code here"
HEADER_SECTIONS = ("Overview", "Prerequisites", "Time", "Exam domains")
FOOTER_SECTIONS = ("## Summary", "## Review questions", "## What's next")
TITLE = re.compile(r"^# (\d\d) · \S.*")
FORBIDDEN = (
    (re.compile(r"sys\.path"), "manipulates sys.path (import the installed `utils` instead)"),
    (re.compile(r"^(import|from) (cudf|dask_cudf)\b", re.M), "imports cudf at top level (guard it)"),
    (re.compile(r"client\.get_task_stream\(\)\s*as"), "uses client.get_task_stream() as a context manager"),
    (re.compile(r"dask_cudf\.io\.read_csv|jit_unspill|explicit_comms"), "teaches a deprecated/removed API"),
)


def _source(cell) -> str:
    return cell.get("source", "") if isinstance(cell.get("source"), str) else "".join(cell["source"])


def _is_hidden(cell) -> bool:
    return bool(cell.get("metadata", {}).get("jupyter", {}).get("source_hidden"))


def check_notebook(path: Path) -> list[str]:
    """Return the template violations of one notebook (empty when it conforms)."""
    nb = nbformat.read(path, as_version=4)
    cells = nb.cells
    problems: list[str] = []
    if len(cells) < 4:
        return [f"{path.name}: only {len(cells)} cells"]
    head = _source(cells[0])
    title = TITLE.match(head.splitlines()[0]) if cells[0].cell_type == "markdown" and head else None
    if not title:
        problems.append("first cell must be markdown starting '# NN · Topic'")
    elif not path.name.startswith(title.group(1) + "_"):
        problems.append(f"title number {title.group(1)} does not match the file name")
    for section in HEADER_SECTIONS:
        if section not in head:
            problems.append(f"header cell lacks '{section}'")
    setup = cells[1]
    if setup.cell_type != "code" or "utils" not in _source(setup) or "start_client(" not in _source(setup):
        problems.append("second cell must be the one setup cell: imports + utils.start_client(...)")
    markdown = [(i, _source(c)) for i, c in enumerate(cells) if c.cell_type == "markdown"]
    positions = []
    for section in FOOTER_SECTIONS:
        hits = [i for i, text in markdown if any(line.strip() == section for line in text.splitlines())]
        if not hits:
            problems.append(f"missing a '{section}' heading")
        positions.append(hits[0] if hits else -1)
    if all(p >= 0 for p in positions) and positions != sorted(positions):
        problems.append("footer sections must come in the order Summary, Review questions, What's next")
    code = [(i, c) for i, c in enumerate(cells) if c.cell_type == "code"]
    if not code or "shutdown(" not in _source(code[-1][1]):
        problems.append("last code cell must close the cluster (utils.shutdown(client))")
    exercises = 0
    for i, cell in code:
        src = _source(cell)
        if src.lstrip().startswith(EXERCISE_MARK):
            exercises += 1
            problems += _check_exercise(cells, i)
        if cell.get("outputs") and CHECK_MARK not in src:
            problems.append(f"cell {i} has stored outputs but is not marked {CHECK_MARK}")
        for pattern, why in FORBIDDEN:
            if pattern.search(src):
                problems.append(f"cell {i} {why}")
    if exercises == 0:
        problems.append(f"no exercise (a code cell starting '{EXERCISE_MARK}')")
    for i, cell in enumerate(cells):
        if _is_hidden(cell) and not _source(cell).lstrip().startswith("# Solution"):
            problems.append(f"cell {i} is hidden but is not a '# Solution' cell")
    return [f"{path.name}: {p}" for p in problems]


def _check_exercise(cells, i: int) -> list[str]:
    """An exercise is: markdown prompt, '# Your code here', hidden solution, self-check."""
    problems = []
    if i == 0 or cells[i - 1].cell_type != "markdown":
        problems.append(f"exercise cell {i} needs a markdown prompt right before it")
    solution = cells[i + 1] if i + 1 < len(cells) else None
    check = cells[i + 2] if i + 2 < len(cells) else None
    if solution is None or solution.cell_type != "code" or not _is_hidden(solution):
        problems.append(f"exercise cell {i} must be followed by a hidden solution cell")
    if check is None or check.cell_type != "code" or "check" not in _source(check):
        problems.append(f"exercise cell {i} must be followed (after its solution) by a self-check cell")
    return problems


def fix_notebook(path: Path, keep_checked_outputs: bool = True) -> None:
    """Strip outputs (except checked cells), execution counts and volatile metadata."""
    nb = nbformat.read(path, as_version=4)
    nb.metadata = {
        "kernelspec": {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"},
        "language_info": {"name": "python"},
    }
    count = 0
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        count += 1
        checked = keep_checked_outputs and CHECK_MARK in _source(cell) and bool(cell.outputs)
        # nbval treats a cell without an execution count as never run and refuses its outputs.
        cell.execution_count = count if checked else None
        cell.outputs = [_clean_output(o, count) for o in cell.outputs] if checked else []
        cell.metadata = {k: v for k, v in cell.metadata.items() if k in ("jupyter", "tags")}
    nbformat.write(nb, path)
    nbformat.validate(nbformat.read(path, as_version=4))


def _clean_output(output, count: int):
    if output.get("output_type") == "execute_result":
        output["execution_count"] = count
    return output


def execute_notebook(path: Path, timeout: int = 900) -> None:
    """Run the notebook in this environment and store the outputs of checked cells only."""
    from nbclient import NotebookClient

    nb = nbformat.read(path, as_version=4)
    resources = {"metadata": {"path": str(path.parent)}}
    NotebookClient(nb, timeout=timeout, kernel_name="python3", resources=resources).execute()
    nbformat.write(nb, path)
    fix_notebook(path)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m utils.notebook_format", description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="+", type=Path)
    parser.add_argument("--fix", action="store_true", help="strip unchecked outputs and tidy metadata")
    parser.add_argument("--execute", action="store_true", help="execute, then store checked outputs")
    args = parser.parse_args(argv)
    problems = []
    for path in args.paths:
        if not path.is_file():
            print(f"error: {path} is not a file", file=sys.stderr)
            return 2
        if args.execute:
            execute_notebook(path)
        elif args.fix:
            fix_notebook(path)
        problems += check_notebook(path)
    for problem in problems:
        print(problem)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
