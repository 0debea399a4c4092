"""Every exercise's check grades the learner's own answer: with nothing written it says "not
attempted yet" (and Run All goes on), with a wrong answer it fails saying what differs, and with
the notebook's own solution it passes.

Each notebook runs top to bottom in one kernel, as Run All does. At every exercise the answer
cell is executed three times before its check: as shipped (comments only), with a wrong answer
from ``WRONG_ANSWERS`` and with the solution taken from the notebook's ``<details>`` block (the
single source of each solution), so CI also executes every solution with its check.
"""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

from tools.notebook_format import exercises
from utils.base.paths import REPO_ROOT

NOTEBOOK_DIR = REPO_ROOT / "notebooks"
NOTEBOOKS = sorted(NOTEBOOK_DIR.glob("[0-9][0-9]_*.ipynb"))

# notebook -> one (wrong answer, part of the failure message) per exercise, in order.
WRONG_ANSWERS: dict[str, list[tuple[str, str]]] = {
    "00_environment_check": [
        ("n_rows = df.npartitions", "number of rows: yours"),
    ],
    "01_cluster_setup": [
        ('mystery = {"workers": 1, "threads_per_worker": 1, "memory_limit_gib": 1.0}', "the scheduler reports"),
        (  # the right numbers, computed on the notebook's own cluster instead of the mystery one
            "cubes = client.map(lambda x: x**3, range(1000))\n"
            "wait(cubes)\n"
            "cubes_per_worker = pd.Series([w[0] for w in client.who_has(cubes).values()]).value_counts()\n"
            "cube_total = client.submit(sum, cubes).result()",
            "computed on another cluster",
        ),
    ],
    "02_loading_transactions": [
        ('store_counts = persisted.groupby("store_id").sales_amount.sum().compute()', "values off"),
        ('category_means = persisted.groupby("product_category").sales_amount.median().compute()', "values off"),
        (  # right numbers, but the files are read twice
            "with get_task_stream(client=client) as one_pass_ts:\n"
            "    sales_total = df.sales_amount.sum().compute()\n"
            "    n_over_100 = (df.sales_amount > 100).sum().compute()",
            "read 2 times",
        ),
    ],
    "03_groupby_sum": [
        ('by_store = utils.to_pandas(df.groupby("store_id")["sales_amount"].mean().compute())', "values off"),
        ('by_store_category = utils.to_pandas(df.groupby("store_id")["sales_amount"].sum().compute())',
         "index has 1 level"),
        ('top10 = utils.to_pandas(df.groupby("customer_id")["sales_amount"].sum().nsmallest(10).compute())',
         "do not belong in the top 10"),
        ("chosen_split_out = 4", "the extra partitions buy nothing"),
    ],
    "05_bigger_than_memory": [
        ("partition_gb = 10\nn_partitions = 200", "outside 1/32-1/16"),
        (  # the right totals, from a persist of everything: it spills
            "slim = df.persist()\n"
            "wait(slim)\n"
            "store_category_totals = utils.to_pandas(\n"
            '    slim.groupby(["store_id", "product_category"])["sales_amount"].sum().compute()\n'
            ")",
            "more than two thirds of the workers' budget",
        ),
    ],
    "04_profiling": [
        ('tasks_per_prefix = frame.groupby("prefix").size().iloc[1:]', "missing from your result"),
        ("fast_pipeline = slow_pipeline", "CSV read tasks"),
    ],
    "06_joins_sorting_time": [
        ('segment_q2 = utils.to_pandas(enriched.groupby("segment")["sales_amount"].sum().compute())',
         "totals over all quarters"),
        ('top_west = utils.to_pandas(df.groupby("customer_id")["sales_amount"].sum().nlargest(10).compute())',
         "are not in the west region"),
        ('chosen_join = "shuffle"', "broadcast the small side"),
    ],
    "07_scaling_out": [
        (  # exact totals, but the worker is killed after the computation: nothing had to be recovered
            "client.wait_for_workers(2)\n"
            "totals_after_loss = utils.to_pandas(slow_groupby().compute())\n"
            "time.sleep(0.5)\n"
            "lost = cluster.kill_worker(1)",
            "running no task",
        ),
        (  # exact totals, through the course's unencrypted client
            "tls_client = client\n"
            'tls_totals = utils.to_pandas(df.groupby("customer_id")["sales_amount"].sum().compute())',
            "unencrypted",
        ),
    ],
    "08_distributed_training": [
        (  # the right groupby on the wrong quarter's dates
            'q2 = df[(df["timestamp"] >= pd.Timestamp("2025-04-01"))\n'
            '        & (df["timestamp"] < pd.Timestamp("2025-07-01"))]\n'
            'spend_q3 = utils.to_pandas(q2.groupby("customer_id")["sales_amount"].sum().compute())',
            "totals of 2025Q2, not 2025Q3",
        ),
        (  # the first model, squared error in dollars: worse than both baselines
            'my_predictions = results["model"]',
            "does not beat both baselines by 5%",
        ),
    ],
}


def _text(cell) -> str:
    parts = []
    for output in cell.get("outputs", []):
        if output.get("output_type") == "stream":
            parts.append(output["text"])
        elif "data" in output:
            parts.append(output["data"].get("text/plain", ""))
    return "".join(parts)


def _run(client: NotebookClient, cell, index: int, source: str | None = None):
    if source is not None:
        cell = nbformat.v4.new_code_cell(source)
    client.execute_cell(cell, index)
    return cell


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_every_exercise_grades_the_learner(path: Path) -> None:
    nb = nbformat.read(path, as_version=4)
    found = exercises(nb)
    wrong = WRONG_ANSWERS.get(path.stem, [])
    assert len(found) == len(wrong), f"{path.name}: {len(found)} exercises, {len(wrong)} wrong answers listed here"
    by_answer_cell = {exercise.answer_cell: (exercise, bad) for exercise, bad in zip(found, wrong, strict=True)}
    client = NotebookClient(nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(NOTEBOOK_DIR)}})
    with client.setup_kernel():
        index = 0
        while index < len(nb.cells):
            cell = nb.cells[index]
            if index not in by_answer_cell:
                if cell.cell_type == "code":
                    _run(client, cell, index)
                index += 1
                continue
            exercise, (wrong_code, message) = by_answer_cell[index]
            check = nb.cells[exercise.check_cell]
            name = f"{path.name} {exercise.heading}"

            _run(client, cell, index)
            untouched = _run(client, check, exercise.check_cell, check.source)
            assert "not attempted yet" in _text(untouched), f"{name}: no 'not attempted' message: {_text(untouched)!r}"

            _run(client, cell, index, wrong_code)
            with pytest.raises(CellExecutionError) as failure:
                _run(client, check, exercise.check_cell, check.source)
            assert failure.value.ename == "CheckFailed", f"{name}: {failure.value.ename}: {failure.value.evalue}"
            assert message in failure.value.evalue, f"{name}: {failure.value.evalue!r} lacks {message!r}"

            _run(client, cell, index, exercise.solution)
            solved = _run(client, check, exercise.check_cell, check.source)
            assert "✓" in _text(solved), f"{name}: the solution did not pass: {_text(solved)!r}"
            index = exercise.check_cell + 1


def test_every_notebook_with_exercises_has_wrong_answers_listed() -> None:
    assert set(WRONG_ANSWERS) == {p.stem for p in NOTEBOOKS if exercises(nbformat.read(p, as_version=4))}
