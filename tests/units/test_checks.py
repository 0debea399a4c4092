"""Self-checks pass on right answers (computed here with plain pandas) and fail with messages
that say what differs."""

from __future__ import annotations

import ast
from pathlib import Path

import dask.dataframe as dd
import pandas as pd
import pytest

from utils import checks
from utils.checks import CheckFailed


@pytest.fixture(scope="module")
def frame(tiny_dataset) -> pd.DataFrame:
    return pd.read_parquet(tiny_dataset.parquet_dir)


@pytest.fixture(scope="module")
def totals(frame) -> pd.Series:
    return frame.groupby("customer_id")["sales_amount"].sum()


def test_right_customer_totals_pass(totals, tiny_dataset, capsys):
    checks.check_customer_totals(totals, tiny_dataset)
    assert capsys.readouterr().out.startswith("✓ total sales per customer: all 442 customers match")
    checks.check_customer_totals(totals.reset_index().set_index("customer_id"), tiny_dataset)


def test_missing_customers_are_counted(totals, tiny_dataset):
    with pytest.raises(CheckFailed, match=r"42 customers missing from your result \(e\.g\. "):
        checks.check_customer_totals(totals.iloc[42:], tiny_dataset)


def test_extra_and_duplicate_customers(totals, tiny_dataset):
    extra = pd.concat([totals, pd.Series([1.0], index=[999_999_999])])
    with pytest.raises(CheckFailed, match=r"1 customers that are not in the data \(e\.g\. 999999999\)"):
        checks.check_customer_totals(extra, tiny_dataset)
    with pytest.raises(CheckFailed, match="appear more than once"):
        checks.check_customer_totals(pd.concat([totals, totals.iloc[:2]]), tiny_dataset)


def test_wrong_totals_name_the_customer_and_the_error(totals, tiny_dataset):
    wrong = totals.copy()
    customer = wrong.index[17]
    wrong.loc[customer] *= 1.013
    with pytest.raises(CheckFailed) as error:
        checks.check_customer_totals(wrong, tiny_dataset)
    message = str(error.value)
    assert f"values off for 1 of 442 customers; e.g. customer {customer}" in message
    assert "(+1.3%)" in message


def test_a_cent_of_float_noise_is_tolerated_but_a_cent_is_not(totals, tiny_dataset):
    checks.check_customer_totals(totals + 1e-7, tiny_dataset)
    with pytest.raises(CheckFailed):
        checks.check_customer_totals(totals + 0.01, tiny_dataset)


def test_lazy_result_is_refused_with_a_hint(tiny_dataset):
    lazy = dd.read_parquet(tiny_dataset.parquet_dir).groupby("customer_id")["sales_amount"].sum()
    with pytest.raises(CheckFailed, match=r"call \.compute\(\) on it first"):
        checks.check_customer_totals(lazy, tiny_dataset)


@pytest.mark.parametrize("statistic", ["sum", "count", "mean"])
@pytest.mark.parametrize("by", ["store_id", "product_category", ["store_id", "product_category"]])
def test_grouped_statistics(frame, tiny_dataset, by, statistic):
    grouped = frame.groupby(by)["sales_amount"]
    result = {"sum": grouped.sum, "count": grouped.count, "mean": grouped.mean}[statistic]()
    checks.check_grouped(result, tiny_dataset, by, statistic)
    with pytest.raises(CheckFailed, match="values off"):
        checks.check_grouped(result * 1.5, tiny_dataset, by, statistic)


def test_grouped_with_the_wrong_key(frame, tiny_dataset):
    with pytest.raises(CheckFailed, match="index has 1 level"):
        checks.check_grouped(frame.groupby("store_id")["sales_amount"].sum(), tiny_dataset,
                             ["store_id", "product_category"])


def test_top_customers(totals, tiny_dataset):
    checks.check_top_customers(totals.nlargest(10), tiny_dataset, 10)
    with pytest.raises(CheckFailed, match="wrong order"):
        checks.check_top_customers(totals.nlargest(10).iloc[::-1], tiny_dataset, 10)
    with pytest.raises(CheckFailed, match="do not belong in the top 10"):
        checks.check_top_customers(totals.nsmallest(10), tiny_dataset, 10)
    with pytest.raises(CheckFailed, match="expected 10 rows, got 5"):
        checks.check_top_customers(totals.nlargest(5), tiny_dataset, 10)


def test_scalars(frame, tiny_dataset):
    checks.check_row_count(len(frame), tiny_dataset)
    with pytest.raises(CheckFailed, match="number of rows: yours 19,999, expected 20,000"):
        checks.check_row_count(len(frame) - 1, tiny_dataset)
    checks.check_total_sales(frame["sales_amount"].sum(), tiny_dataset)
    over = frame[frame["sales_amount"] > 100]
    checks.check_filtered_mean(over.mean(numeric_only=True), tiny_dataset)
    checks.check_filtered_mean(over["sales_amount"].mean(), tiny_dataset)
    with pytest.raises(CheckFailed, match="transactions over \\$100"):
        checks.check_filtered_mean(frame["sales_amount"].mean(), tiny_dataset)
    with pytest.raises(CheckFailed, match="expected a number"):
        checks.check_scalar("many", 3, "a count")


# --- grade: the learner's own variable, "not attempted yet", data changed after generation -------


def test_grade_reads_the_callers_variable(totals, tiny_dataset, capsys):
    answer = totals  # noqa: F841 (read by name)
    checks.grade("answer", checks.check_customer_totals, tiny_dataset)
    assert capsys.readouterr().out.startswith("✓ total sales per customer")


def test_grade_without_an_answer_says_not_attempted_and_does_not_raise(tiny_dataset, capsys):
    placeholder = ...  # noqa: F841 (read by name)
    checks.grade("never_defined, placeholder", checks.check_customer_totals, tiny_dataset)
    assert capsys.readouterr().out == (
        "not attempted yet: define `never_defined`, `placeholder` in the exercise cell above, "
        "then run this cell again\n"
    )


def test_grade_on_a_closed_cluster_says_so_in_one_line(tiny_dataset):
    """After utils.shutdown(client) an exercise would compute without the cluster its prompt names."""
    from distributed import Client, LocalCluster

    with LocalCluster(n_workers=1, threads_per_worker=1, processes=False, dashboard_address="127.0.0.1:0") as cluster:
        client = Client(cluster)
        client.close()
    answer = 1  # noqa: F841 (read by name)
    with pytest.raises(CheckFailed, match=r"^the cluster this exercise runs on was closed .*setup cell again"):
        checks.grade("answer", checks.check_cluster_facts, client)


def test_grade_passes_a_wrong_answers_failure_through(totals, tiny_dataset):
    wrong = totals * 2  # noqa: F841 (read by name)
    with pytest.raises(CheckFailed, match="values off"):
        checks.grade("wrong", checks.check_customer_totals, tiny_dataset)


def test_grade_blames_data_changed_after_generation(totals, tiny_dataset, tmp_path):
    import shutil

    from utils.dataset import Dataset

    copy = Dataset(shutil.copytree(tiny_dataset.path, tmp_path / tiny_dataset.path.name))
    truth = copy.path / "ground_truth" / "customers.parquet"
    frame = pd.read_parquet(truth)
    frame.loc[0, "total_cents"] += 700  # an edited ground-truth file
    frame.to_parquet(truth)
    right = totals  # noqa: F841 (read by name)
    with pytest.raises(CheckFailed, match=r"data files were changed after generation .*regenerate them with `python"):
        checks.grade("right", checks.check_customer_totals, copy)


def test_split_out_choice_follows_the_measurements():
    class FakeClient:
        def scheduler_info(self, n_workers=-1):
            return {"workers": {"a": {"memory_limit": 2**30}, "b": {"memory_limit": 2**30}}}

    runs = pd.DataFrame({"tasks": [38, 70], "seconds": [0.9, 0.8]}, index=pd.Index([1, 4], name="split_out"))
    checks.check_split_out_choice(1, runs, 12_000, FakeClient())
    with pytest.raises(CheckFailed, match="split_out=4 runs 70 tasks against 38"):
        checks.check_split_out_choice(4, runs, 12_000, FakeClient())
    with pytest.raises(CheckFailed, match="over a tenth of a worker's memory"):
        checks.check_split_out_choice(1, runs, 2**29, FakeClient())
    checks.check_split_out_choice(4, runs, 2**29, FakeClient())
    for bad in (0, True, 2.0, "1"):
        with pytest.raises(CheckFailed, match="whole number"):
            checks.check_split_out_choice(bad, runs, 12_000, FakeClient())
    with pytest.raises(CheckFailed, match=r"you measured split_out in \[1, 4\]"):
        checks.check_split_out_choice(2, runs, 12_000, FakeClient())


# --- direct check calls (not through grade) blame changed data too (issue 27, item 4) -------------

@pytest.fixture
def changed_copy(tiny_dataset, tmp_path):
    import shutil

    from utils.dataset import Dataset

    return Dataset(shutil.copytree(tiny_dataset.path, tmp_path / tiny_dataset.path.name))


def _edit_same_size(path, old: bytes, new: bytes) -> None:
    data = path.read_bytes()
    assert len(old) == len(new) and old in data
    path.write_bytes(data.replace(old, new, 1))


def test_a_direct_check_on_an_edited_csv_blames_the_data(totals, changed_copy):
    part = changed_copy.csv_files[0]
    amount = part.read_text().splitlines()[1].split(",")[-1].encode()  # sales_amount is the last column
    edited = bytes([amount[0] % 9 + 1 + 48 if amount[0] != 57 else 49]) + amount[1:]
    _edit_same_size(part, b"," + amount + b"\n", b"," + edited + b"\n")
    learners = dd.read_csv(changed_copy.csv_files, **changed_copy.csv_kwargs)
    yours = learners.groupby("customer_id")["sales_amount"].sum().compute()
    with pytest.raises(CheckFailed) as error:
        checks.check_customer_totals(yours, changed_copy)
    message = str(error.value)
    assert "\n" not in message and "data files were changed after generation" in message and "yours" not in message


def test_a_direct_check_on_a_damaged_ground_truth_is_one_line_blaming_the_data(totals, changed_copy):
    truth = changed_copy.path / "ground_truth" / "customers.parquet"
    data = bytearray(truth.read_bytes())
    data[len(data) // 2: len(data) // 2 + 64] = b"\xff" * 64  # same size, no longer readable
    truth.write_bytes(bytes(data))
    with pytest.raises(CheckFailed) as error:
        checks.check_customer_totals(totals, changed_copy)
    message = str(error.value)
    assert "\n" not in message and "data files were changed after generation" in message
    assert "ground_truth/customers.parquet" in message


def test_every_check_with_a_dataset_blames_changed_data():
    import inspect

    for name, check in vars(checks).items():
        if name.startswith("check_") and "dataset" in inspect.signature(check).parameters:
            assert getattr(check, "blames_changed_data", False), f"checks.{name} does not verify the data on failure"


def test_the_name_space_exports_what_it_imports_from_the_check_modules():
    """``__all__`` is derived from the package's imports, where each public name is written once: it
    holds every name imported from a check module, and no module, helper or private name besides."""
    tree = ast.parse(Path(checks.__file__).read_text())
    imported = {alias.name for node in tree.body if isinstance(node, ast.ImportFrom)
                and (node.module or "").startswith("utils.checks.") for alias in node.names}
    assert sorted(checks.__all__) == sorted(imported - {"install_notebook_display"})
    assert all(hasattr(checks, name) for name in checks.__all__)
