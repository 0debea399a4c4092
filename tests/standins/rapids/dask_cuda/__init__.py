"""Stand-in for dask-cuda on a test's workers: importable, with the worker plugin class that real
dask-cuda workers (``LocalCUDACluster``, ``dask cuda worker``) carry. No GPU code."""
