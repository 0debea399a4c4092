"""The checks ``python -m utils.gpu_check`` runs, in order; each runs even when another failed.

1a ``cluster``        - ``dask_cuda.LocalCUDACluster`` starts one worker per visible GPU, each
                        worker on a different physical GPU (works without cudf);
1b ``backend-choice`` - the course's ``utils.start_client()`` picks ``LocalCUDACluster`` and the
                        cudf backend by itself (needs cudf; "not run" without it);
2  ``dashboard``      - the dashboard's GPU pages answer, and every worker sends the GPU metrics
                        those pages plot (a CPU cluster answers the pages too, with blank plots);
3  ``cupy-groupby``   - total sales per customer as per-partition ``cupy.bincount`` partial sums,
                        reduced across workers by ``dask.array``, equal to the generator's exact
                        ground truth in integer cents; the NumPy twin timed in the same run;
4a ``cudf-groupby``   - the article's CSV groupby-sum with the cudf backend against pandas, both
                        checked against the ground truth and timed (needs cudf);
4b ``notebooks``      - every notebook under nbval with ``COURSE_BACKEND=gpu``, serially
                        (needs cudf).
"""

from __future__ import annotations

from utils.gpu_check.cluster_checks import check_backend_choice, check_cluster, check_dashboard
from utils.gpu_check.groupby_checks import check_cudf_groupby, check_cupy_groupby
from utils.gpu_check.notebook_check import check_notebooks
from utils.gpu_check.runner import Check

CHECKS: tuple[Check, ...] = (
    Check("1a", "cluster", "LocalCUDACluster starts one worker per visible GPU", check_cluster),
    Check("1b", "backend-choice", "utils.start_client() picks LocalCUDACluster + cudf", check_backend_choice),
    Check("2", "dashboard", "dashboard GPU pages answer and have data", check_dashboard),
    Check("3", "cupy-groupby", "CuPy bincount groupby-sum = ground truth; NumPy twin timed", check_cupy_groupby),
    Check("4a", "cudf-groupby", "cudf groupby-sum = ground truth; pandas timed", check_cudf_groupby),
    Check("4b", "notebooks", "every notebook under nbval with COURSE_BACKEND=gpu", check_notebooks),
)
