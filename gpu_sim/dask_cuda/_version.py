"""Port of rapidsai/dask-cuda ``dask_cuda/_version.py``: the version is read from the ``VERSION`` file."""

import importlib.resources

__version__ = importlib.resources.files(__package__).joinpath("VERSION").read_text().strip()
__git_commit__ = ""

__all__ = ["__git_commit__", "__version__"]
