"""Self-checks for exercises: compare a learner's result with the generator's exact ground truth.

Each check prints one confirmation line when the answer is right and raises ``CheckFailed`` with
a message saying *what* differs when it is wrong. Notebooks call them as ``checks.check_...``
through ``checks.grade("name", checks.check_..., ...)``, which reads the learner's variable
itself: an exercise nobody has attempted yet prints "not attempted yet" instead of a
``NameError``, so Run All goes on.

The checks live in one module per topic; this package is their one public name space:
``grading`` (how every check compares and reports), ``totals`` (answers about the data),
``cluster`` (facts read from a cluster), ``performance`` (task streams and plans), ``memory``,
``joins`` (joins, sorting and time) and ``training``.
"""

import types

from utils.checks.cluster import (
    CLUSTER_FACTS,
    check_cluster_facts,
    check_cubes,
    check_tls_totals,
    check_totals_after_loss,
)
from utils.checks.grading import (
    DEFAULT_ATOL,
    DEFAULT_RTOL,
    NOT_ATTEMPTED,
    CheckFailed,
    check_scalar,
    compare_series,
    grade,
    install_notebook_display,
)
from utils.checks.joins import (
    JOIN_STRATEGIES,
    check_daily_totals,
    check_join_choice,
    check_segment_quarter,
    check_top_customers_in_region,
)
from utils.checks.memory import (
    check_partition_plan,
    check_persisted_within_budget,
    check_region_cents,
    check_restarted_for_memory,
    check_spilled,
)
from utils.checks.performance import (
    check_fast_pipeline,
    check_one_pass,
    check_split_out_choice,
    check_tasks_per_prefix,
    compute_intervals_per_prefix,
)
from utils.checks.totals import (
    check_customer_totals,
    check_filtered_mean,
    check_grouped,
    check_row_count,
    check_top_customers,
    check_total_sales,
)
from utils.checks.training import check_beats_baselines, check_customer_quarter

# The public names are the ones imported above, each written once there: every name of this name
# space but modules and private names (install_notebook_display runs once, below, and is no check).
__all__ = sorted(name for name, value in globals().items() if not name.startswith("_")
                 and not isinstance(value, types.ModuleType) and name != "install_notebook_display")

install_notebook_display()  # a failed check shows as one line in a notebook, not a traceback
