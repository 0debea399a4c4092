"""Stand-in: makes ``dask_cudf`` importable (``utils.machine.installed``) on a test's workers. No GPU code."""
