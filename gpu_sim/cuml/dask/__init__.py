"""Simulated ``cuml.dask`` (cuml 26.10.0 ``cuml/dask/__init__.py``): importing it switches Dask DataFrame shuffles
to the tasks method for the whole process, as the real package does. Only ``linear_model.LinearRegression`` and the
``common`` machinery behind it are simulated."""

import dask

from cuml.dask import common, linear_model

dask.config.set({"dataframe.shuffle.method": "tasks"})

__all__ = ["common", "linear_model"]
