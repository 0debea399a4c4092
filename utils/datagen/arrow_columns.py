"""Arrow columns from NumPy arrays and string tuples, without importing pandas.

``pa.array`` (and ``pa.scalar``) import pandas the first time they run, to recognise pandas
objects: 0.2 s of CPU in every data-generator worker process, which never needs pandas. The
generator builds its columns with these two functions instead; both are plain ``pyarrow`` calls.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyarrow as pa


def from_numpy(values: np.ndarray, arrow_type: pa.DataType | None = None) -> pa.Array:
    """A zero-copy Arrow view of a one-dimensional NumPy array without missing values
    (numeric or ``datetime64``); ``arrow_type`` reinterprets the same bytes (e.g. as a decimal)."""
    values = np.ascontiguousarray(values)
    arrow_type = pa.from_numpy_dtype(values.dtype) if arrow_type is None else arrow_type
    if arrow_type.bit_width < 8:  # booleans: Arrow packs them into bits, NumPy does not
        raise ValueError(f"from_numpy takes numeric or datetime64 arrays, not {values.dtype}")
    rows = values.nbytes // (arrow_type.bit_width // 8)
    return pa.Array.from_buffers(arrow_type, rows, [None, pa.py_buffer(values)])


def strings(values: Sequence[str]) -> pa.Array:
    """A string array of ``values`` (a short, fixed list such as the category names)."""
    encoded = [value.encode() for value in values]
    offsets = np.zeros(len(encoded) + 1, dtype=np.int32)
    np.cumsum([len(value) for value in encoded], out=offsets[1:])
    return pa.Array.from_buffers(
        pa.string(), len(encoded), [None, pa.py_buffer(offsets), pa.py_buffer(b"".join(encoded))]
    )


def labels(codes: np.ndarray, names: Sequence[str]) -> pa.Array:
    """A string column from integer codes into ``names`` (code ``i`` -> ``names[i]``)."""
    return pa.DictionaryArray.from_arrays(from_numpy(codes), strings(names)).cast(pa.string())


def cents_as_decimal(cents: np.ndarray) -> pa.Array:
    """Integer cents as an Arrow ``decimal128(18, 2)`` column (1234 -> 12.34): the CSV writer
    formats a decimal 1.5x faster than the same amount as a float, always with two decimals."""
    words = np.zeros((len(cents), 2), dtype=np.int64)  # little-endian 128-bit: low word, high word
    words[:, 0] = cents
    words[:, 1] = np.where(words[:, 0] < 0, -1, 0)
    return from_numpy(words.ravel(), pa.decimal128(18, 2))
