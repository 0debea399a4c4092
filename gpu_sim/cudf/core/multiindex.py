"""Simulated ``cudf.MultiIndex`` (rapidsai/cudf ``python/cudf/cudf/core/multiindex.py``): the pandas
MultiIndex under cudf's class path (see ``cudf.core.index`` for why frames keep pandas indexes)."""

from __future__ import annotations

from typing import Any

import pandas as pd


class MultiIndex(pd.MultiIndex):
    def __new__(cls, levels: Any = None, codes: Any = None, sortorder: Any = None, names: Any = None,
                dtype: Any = None, copy: bool = False, name: Any = None, verify_integrity: bool = True) -> MultiIndex:
        return pd.MultiIndex.__new__(cls, levels=levels, codes=codes, sortorder=sortorder, names=names, dtype=dtype,
                                     copy=copy, name=name, verify_integrity=verify_integrity)

    def to_pandas(self, *, nullable: bool = False, arrow_type: bool = False) -> pd.MultiIndex:
        return pd.MultiIndex(levels=self.levels, codes=self.codes, names=self.names)
