"""A wrong answer for every exercise of the course, and a part of the failure message its check
must give (``tests/support/exercise_grading.py`` runs each in the notebook's nbval run, before the
solution).

Keyed by notebook stem, then by the exercise's key (``utils.notebook_grammar.exercise_key``: the
check and the variables it grades, as the check cell's ``grade("...", checks.check_x)`` call spells
them), so inserting an exercise before another moves no answer.
"""

from __future__ import annotations

# notebook -> exercise key -> (wrong answer, part of the failure message)
WRONG_ANSWERS: dict[str, dict[str, tuple[str, str]]] = {
    "00_environment_check": {
        "check_row_count(n_rows)": ("n_rows = df.npartitions", "number of rows: yours"),
    },
    "01_cluster_setup": {
        "check_cluster_facts(mystery)":
            ('mystery = {"workers": 1, "threads_per_worker": 1, "memory_limit_gib": 1.0}', "the scheduler reports"),
        # the right numbers, computed on the notebook's own cluster instead of the mystery one
        "check_cubes(cubes, cubes_per_worker, cube_total)": (
            "cubes = client.map(lambda x: x**3, range(1000))\n"
            "wait(cubes)\n"
            "cubes_per_worker = pd.Series([w[0] for w in client.who_has(cubes).values()]).value_counts()\n"
            "cube_total = client.submit(sum, cubes).result()",
            "computed on another cluster",
        ),
    },
    "02_loading_transactions": {
        "check_grouped(store_counts)":
            ('store_counts = persisted.groupby("store_id").sales_amount.sum().compute()', "values off"),
        "check_grouped(category_means)":
            ('category_means = persisted.groupby("product_category").sales_amount.median().compute()', "values off"),
        # right numbers, but the files are read twice
        "check_one_pass(sales_total, n_over_100, one_pass_ts)": (
            "with get_task_stream(client=client) as one_pass_ts:\n"
            "    sales_total = df.sales_amount.sum().compute()\n"
            "    n_over_100 = (df.sales_amount > 100).sum().compute()",
            "read 2 times",
        ),
    },
    "03_groupby_sum": {
        "check_grouped(by_store)":
            ('by_store = utils.to_pandas(persisted.groupby("store_id")["sales_amount"].mean().compute())',
             "values off"),
        "check_grouped(by_store_category)":
            ('by_store_category = utils.to_pandas(persisted.groupby("store_id")["sales_amount"].sum().compute())',
             "index has 1 level"),
        "check_top_customers(top10)":
            ('top10 = utils.to_pandas(persisted.groupby("customer_id")["sales_amount"].sum().nsmallest(10).compute())',
             "do not belong in the top 10"),
        "check_split_out_choice(chosen_split_out)": ("chosen_split_out = 4", "the extra partitions buy nothing"),
    },
    "05_bigger_than_memory": {
        "check_partition_plan(partition_gb, n_partitions)":
            ("partition_gb = 10\nn_partitions = 200", "outside 1/32-1/16"),
        # the right totals, from a persist of everything: it spills
        "check_persisted_within_budget(slim, store_category_totals)": (
            "slim = df.persist()\n"
            "wait(slim)\n"
            "store_category_totals = utils.to_pandas(\n"
            '    slim.groupby(["store_id", "product_category"])["sales_amount"].sum().compute()\n'
            ")",
            "more than two thirds of the workers' budget",
        ),
    },
    "04_profiling": {
        "check_tasks_per_prefix(tasks_per_prefix)":
            ('tasks_per_prefix = frame.groupby("prefix").size().iloc[1:]', "missing from your result"),
        "check_fast_pipeline(fast_pipeline)": ("fast_pipeline = slow_pipeline", "CSV read tasks"),
    },
    "06_joins_sorting_time": {
        "check_segment_quarter(segment_q2)":
            ('segment_q2 = utils.to_pandas(enriched.groupby("segment")["sales_amount"].sum().compute())',
             "totals over all quarters"),
        "check_top_customers_in_region(top_west)":
            ('top_west = utils.to_pandas(df.groupby("customer_id")["sales_amount"].sum().nlargest(10).compute())',
             "are not in the west region"),
        "check_join_choice(chosen_join)": ('chosen_join = "shuffle"', "broadcast the small side"),
    },
    "07_scaling_out": {
        # exact totals, but the worker is killed after the computation: nothing had to be recovered
        "check_totals_after_loss(totals_after_loss, lost)": (
            "client.wait_for_workers(2)\n"
            "totals_after_loss = utils.to_pandas(slow_groupby().compute())\n"
            "time.sleep(0.5)\n"
            "lost = cluster.kill_worker(1)",
            "running no task",
        ),
        # exact totals, through the course's unencrypted client
        "check_tls_totals(tls_client, tls_totals)": (
            "tls_client = client\n"
            'tls_totals = utils.to_pandas(df.groupby("customer_id")["sales_amount"].sum().compute())',
            "unencrypted",
        ),
    },
    "08_distributed_training": {
        # the right groupby on the wrong quarter's dates
        "check_customer_quarter(spend_q3)": (
            'q2 = df[(df["timestamp"] >= pd.Timestamp("2025-04-01"))\n'
            '        & (df["timestamp"] < pd.Timestamp("2025-07-01"))]\n'
            'spend_q3 = utils.to_pandas(q2.groupby("customer_id")["sales_amount"].sum().compute())',
            "totals of 2025Q2, not 2025Q3",
        ),
        # the first model, squared error in dollars: worse than both baselines
        "check_beats_baselines(my_predictions)": (
            'my_predictions = results["model"]',
            "does not beat both baselines by 5%",
        ),
    },
}
