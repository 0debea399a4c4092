"""Notebook 03 stays quick to retry and says what its long cells are doing.

A learner runs an exercise answer many times. If the answers read the CSV-backed ``df``, every try
parses all six columns of every CSV file again (half a minute at the ``small`` scale on two cores).
The exercises use one frame built before them: the columns they need, read from Parquet and
persisted once, so a retry computes from worker memory. The timing cell runs for minutes at
``small``: it names each engine and run while it goes, with Dask's progress bars, and only in cells
whose output nbval does not compare. Read from the notebook's JSON: no kernel, no data.
"""

from __future__ import annotations

import ast
import json
from collections.abc import Iterator
from typing import Any

import pytest
from wrong_answers import WRONG_ANSWERS  # tests/notebooks/ is on sys.path: pytest's rootdir-less test folder

from utils.base.paths import NOTEBOOKS_DIR
from utils.notebook_grammar import cell_source, exercises

STEM = "03_groupby_sum"
NOTEBOOK = json.loads((NOTEBOOKS_DIR / f"{STEM}.ipynb").read_text(encoding="utf-8"))
CELLS: list[dict[str, Any]] = NOTEBOOK["cells"]
CHECKED = "# NBVAL_CHECK_OUTPUT"
CSV_FRAME = "df"  # section 1's dd.read_csv of every CSV file, all six columns


def names_used(source: str) -> set[str]:
    """Every name a piece of Python code reads or assigns (comments and strings do not count)."""
    return {node.id for node in ast.walk(ast.parse(source)) if isinstance(node, ast.Name)}


def calls(source: str) -> Iterator[ast.Call]:
    return (node for node in ast.walk(ast.parse(source)) if isinstance(node, ast.Call))


def called_name(call: ast.Call) -> str:
    function = call.func
    return function.attr if isinstance(function, ast.Attribute) else getattr(function, "id", "")


def section_cells(heading: str, end: str) -> list[int]:
    """Indices of the cells from the markdown line ``## heading`` up to (not including) ``## end``."""
    inside, found = False, []
    for index, cell in enumerate(CELLS):
        lines = cell_source(cell).splitlines() if cell["cell_type"] == "markdown" else []
        if f"## {end}" in lines:
            break
        inside = inside or f"## {heading}" in lines
        if inside:
            found.append(index)
    return found


EXERCISES = exercises(NOTEBOOK, STEM)
EXERCISE_CELLS = section_cells("Exercises", "Summary")


def persisted_frame() -> tuple[int, str]:
    """The exercises' frame: the cell (before the first exercise) that reads Parquet with ``columns=``
    and persists it, and the name it assigns."""
    first_exercise = min(e.check_cell for e in EXERCISES) - 3
    for index in EXERCISE_CELLS:
        source = cell_source(CELLS[index])
        if CELLS[index]["cell_type"] != "code" or index > first_exercise:
            continue
        found = {called_name(call): call for call in calls(source)}
        reader = found.get("read_parquet")
        if reader and "persist" in found and any(keyword.arg == "columns" for keyword in reader.keywords):
            targets = [node for node in ast.walk(ast.parse(source)) if isinstance(node, ast.Assign)]
            names = [t.id for a in targets for t in a.targets if isinstance(t, ast.Name)
                     if any(called_name(c) == "persist" for c in ast.walk(a.value) if isinstance(c, ast.Call))]
            assert names, f"cell {index} persists a Parquet read but assigns it to no name"
            return index, names[0]
    raise AssertionError("no cell before the first exercise reads Parquet with columns= and persists it")


def test_the_exercises_are_all_found() -> None:
    assert len(EXERCISES) == 4 and all(e.complete for e in EXERCISES)
    assert all(e.section == "Exercises" for e in EXERCISES)


def test_a_frame_for_the_exercises_is_read_from_parquet_and_persisted_once() -> None:
    index, name = persisted_frame()
    assert name != CSV_FRAME
    source = cell_source(CELLS[index])
    assert "wait" in {called_name(call) for call in calls(source)}, "persist() returns at once: wait() for it"
    assert "memory_usage" in source, "the cell says how much worker memory the persisted frame holds"


@pytest.mark.parametrize("exercise", EXERCISES, ids=lambda e: e.title)
def test_solutions_and_wrong_answers_compute_from_the_persisted_frame(exercise) -> None:
    _, name = persisted_frame()
    solution = exercise.solution or ""
    wrong_code = WRONG_ANSWERS[STEM][exercise.key][0]
    for label, code in (("solution", solution), ("wrong answer", wrong_code)):
        assert CSV_FRAME not in names_used(code), f"{exercise.title}: its {label} re-reads the CSV through `df`"
    if exercise.key != "check_split_out_choice(chosen_split_out)":  # that answer is a number, not a query
        assert name in names_used(solution), f"{exercise.title}: its solution does not use `{name}`"
        assert name in names_used(wrong_code), f"{exercise.title}: its wrong answer does not use `{name}`"


def test_no_code_cell_of_the_exercises_reads_the_csv_frame() -> None:
    for index in EXERCISE_CELLS:
        if CELLS[index]["cell_type"] == "code":
            assert CSV_FRAME not in names_used(cell_source(CELLS[index])), (
                f"cell {index} ({cell_source(CELLS[index]).splitlines()[0]!r}) reads the CSV through `df`")


def timing_cell() -> str:
    """Section 4's measurement: the code cell that builds the ``timings`` table."""
    for cell in CELLS:
        source = cell_source(cell)
        if cell["cell_type"] == "code" and any(
            isinstance(node, ast.Assign) and any(getattr(t, "id", "") == "timings" for t in node.targets)
            for node in ast.walk(ast.parse(source))
        ):
            return source
    raise AssertionError("no cell assigns `timings`")


def printed_fstrings(source: str) -> list[ast.JoinedStr]:
    return [arg for call in calls(source) if called_name(call) == "print" for arg in call.args
            if isinstance(arg, ast.JoinedStr)]


def test_the_timing_cell_names_each_engine_and_run_as_it_goes() -> None:
    source = timing_cell()
    printed = printed_fstrings(source)
    shown = [{node.id for node in ast.walk(text) if isinstance(node, ast.Name)} for text in printed]
    assert any("engine" in names for names in shown), "no line names the engine being measured"
    assert any(" of " in ast.unparse(text) for text in printed), "no line says which run of how many"
    assert "time_call" in source
    assert {"progress", "ProgressBar"} <= {called_name(call) for call in calls(source)}, (
        "Dask's progress bars: distributed.progress on the cluster, dask.diagnostics.ProgressBar for threads")


def test_the_cluster_progress_bar_is_text_not_a_widget() -> None:
    """In a kernel ``progress()`` draws an ipywidgets widget (not installed) and returns at once; the
    text bar blocks until the result is ready, so the timing around it is the computation's."""
    bars = [call for call in calls(timing_cell()) if called_name(call) == "progress"]
    assert bars, "the timing cell shows no progress bar for its cluster runs"
    for call in bars:
        assert any(k.arg == "notebook" and ast.literal_eval(k.value) is False for k in call.keywords)


def test_progress_bars_only_in_cells_whose_output_is_not_compared() -> None:
    for index, cell in enumerate(CELLS):
        source = cell_source(cell)
        if cell["cell_type"] == "code" and source.lstrip().startswith(CHECKED):
            used = {called_name(call) for call in calls(source)}
            assert not used & {"progress", "ProgressBar"}, f"cell {index} is compared by nbval"
