"""``cudf/pandas/magics.py`` (cudf 26.10.2): ``%load_ext cudf.pandas`` installs and registers the cell magics
``%%cudf.pandas.profile`` and ``%%cudf.pandas.line_profile``."""

from __future__ import annotations

from typing import Any

try:
    from IPython.core.magic import Magics, cell_magic, magics_class

    from cudf.pandas.profiler import Profiler, lines_with_profiling

    @magics_class
    class CudfPandasMagics(Magics):
        @cell_magic("cudf.pandas.profile")
        def profile(self, _: Any, cell: str) -> None:
            with Profiler() as profiler:
                get_ipython().run_cell(cell)  # noqa: F821
            profiler.print_per_function_stats()

        @cell_magic("cudf.pandas.line_profile")
        def line_profile(self, _: Any, cell: str) -> None:
            new_cell = lines_with_profiling(cell.split("\n"))
            get_ipython().run_cell(new_cell)  # noqa: F821

    def load_ipython_extension(ip: Any) -> None:
        from cudf.pandas import install

        install()
        ip.register_magics(CudfPandasMagics)

except ImportError:

    def load_ipython_extension(ip: Any) -> None:
        pass
