#!/usr/bin/env bash
# Download, on a machine with PyPI, the pure-Python Dask stack that a GPU machine without network
# access lacks (it is expected to have Python 3.12, CuPy, numba-cuda, pynvml, pandas, pyarrow and
# pytest), as Python 3.12 wheels into .whl/ (git-ignored). Then carry .whl/ to that machine and
# run .ci/device/gpu-check.sh there. cudf cannot travel this way (libcudf alone is a 667 MB
# wheel), so the cudf tests (1b, 4a, 4b) are skipped there: "cudf not installed".
set -euo pipefail
cd "$(dirname "$0")/../.."
grep -qx '/.whl/' .git/info/exclude 2>/dev/null || echo '/.whl/' >> .git/info/exclude
rm -rf .whl && mkdir .whl
platforms=(--platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 --platform manylinux_2_24_x86_64
           --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 --platform manylinux1_x86_64)
# Same pins as requirements.txt; dask-cuda as in requirements-gpu.txt. --no-deps: every missing
# dependency is named here (the rest is expected on the GPU machine already).
python3 -m pip download --quiet --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
  "${platforms[@]}" -d .whl \
  dask==2026.7.1 distributed==2026.7.1 dask-cuda==26.10.0 bokeh==3.9.2 pandas==3.0.6 \
  tornado==6.6.1 partd==1.4.2 locket==1.0.0 zict==3.0.0 tblib==3.2.2 xyzservices==2026.9.1
du -sh .whl
