"""utils.datagen.arrow_columns builds the generator's Arrow columns without pandas: same values as
``pa.array``, and a generator worker's whole job never imports pandas."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from decimal import Decimal

import numpy as np
import pyarrow as pa
import pyarrow.csv as pa_csv
import pytest

from utils.datagen.arrow_columns import cents_as_decimal, from_numpy, labels, strings


@pytest.mark.parametrize(
    "values",
    [np.arange(5, dtype=np.int64), np.array([1.5, -2.25]), np.arange(3).astype("datetime64[s]"),
     np.array([3, 1], dtype=np.int8), np.arange(10, dtype=np.int64)[::3]],
)
def test_from_numpy_matches_pa_array(values):
    assert from_numpy(values).equals(pa.array(values))


def test_strings_and_labels_match_pa_array():
    assert strings(("beauty", "", "toys")).equals(pa.array(["beauty", "", "toys"]))
    assert labels(np.array([2, 0, 2], dtype=np.int64), ("a", "b", "c")).to_pylist() == ["c", "a", "c"]


def test_cents_become_exact_two_decimal_amounts():
    amounts = cents_as_decimal(np.array([1, 1234, 11820, 500, -5], dtype=np.int64))
    assert amounts.to_pylist() == [Decimal(v) for v in ("0.01", "12.34", "118.20", "5.00", "-0.05")]
    sink = pa.BufferOutputStream()
    pa_csv.write_csv(pa.table({"sales_amount": amounts}), sink)
    assert sink.getvalue().to_pybytes().decode().split()[1:] == ["0.01", "12.34", "118.20", "5.00", "-0.05"]


def test_booleans_are_refused_in_one_line():
    with pytest.raises(ValueError, match="numeric or datetime64 arrays, not bool"):
        from_numpy(np.array([True, False]))


def test_a_generator_worker_never_imports_pandas(tmp_path):
    code = textwrap.dedent(f"""
        import sys
        from utils.datagen.params import make_params
        from utils.datagen.writers import write_partition
        import pathlib
        d = pathlib.Path({str(tmp_path)!r})
        (d / "csv").mkdir(); (d / "parquet").mkdir()
        write_partition(str(d), make_params("tiny"), 1)
        print("pandas" in sys.modules)
    """)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False"
