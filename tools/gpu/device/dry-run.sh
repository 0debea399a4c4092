#!/usr/bin/env bash
# Dry run of gpu-check.sh on this machine (no GPU, Python 3.11 here): a sandbox that holds only
#   - the carried packages (the same versions as .whl/, as CPython 3.11 wheels: fetch-wheels.sh),
#   - the GPU machine's own packages named by the 'have' lines of tools/gpu/device/packages.txt for the CUDA major
#     (CUDA_MAJOR, default 13: the simulated NVML's answer), installed from wheels (at the CPU environment's
#     versions where constraints.txt pins them), except cupy-cudaNNx (needs the CUDA libraries: skipped and
#     named as skipped) and nvidia-ml-py (replaced by the simulated pynvml, gpu_sim/pynvml.py, linked
#     alone into $SANDBOX/nvml so that the rest of the simulation (dask_cuda, cudf, rmm) cannot shadow the
#     carried packages),
# run with `python -S` (no site-packages: nothing of this machine's environments leaks in), up to
# the end of the preflight; the run report (gpu-run.md) is written to $SANDBOX/out as on a GPU machine.
# Needs PyPI. Usage: [CUDA_MAJOR=12] bash tools/gpu/device/dry-run.sh [SANDBOX_DIR]
set -euo pipefail
cd "$(dirname "$0")/../../.."
SANDBOX=${1:-$(mktemp -d /tmp/gpu-dry-run.XXXXXX)}
PIP_PYTHON=${PIP_PYTHON:-.venv/bin/python}
PY=${PY:-.venv/bin/python}
py_version=$("$PY" -c 'import sys; print(f"{sys.version_info[0]}.{sys.version_info[1]}")')
echo "== sandbox $SANDBOX (Python $py_version)"
PY_VERSION=$py_version DEST="$SANDBOX/wheels" PIP_PYTHON="$PIP_PYTHON" bash tools/gpu/device/fetch-wheels.sh "${CUDA_MAJOR:-}"
major=${CUDA_MAJOR:-13}
mapfile -t have < <("$PIP_PYTHON" -m tools.gpu.preflight --list have --python-version "$py_version" \
  --cuda-major "$major" | grep -v -e '^cupy-cuda' -e '^nvidia-ml-py')
rm -rf "$SANDBOX/machine-wheels" "$SANDBOX/machine"
"$PIP_PYTHON" -m pip download --quiet --no-deps --only-binary=:all: --python-version "$py_version" \
  --implementation cp --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 \
  --platform manylinux_2_24_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
  -c constraints.txt -d "$SANDBOX/machine-wheels" "${have[@]}"
"$PIP_PYTHON" -m pip install --quiet --no-index --no-deps --no-compile --target "$SANDBOX/machine" \
  "$SANDBOX"/machine-wheels/*.whl
rm -rf "$SANDBOX/nvml" && mkdir -p "$SANDBOX/nvml" && ln -s "$PWD/gpu_sim/pynvml.py" "$SANDBOX/nvml/pynvml.py"
echo "== gpu-check.sh with DRY_RUN=1"
DRY_RUN=1 PYTHON="$PY" PYTHON_FLAGS=-S PIP_PYTHON="$PIP_PYTHON" WHEELS="$SANDBOX/wheels" SITE="$SANDBOX/site" \
  OUT="$SANDBOX/out" EXTRA_PATH="$SANDBOX/machine:$SANDBOX/nvml" \
  PREFLIGHT_SKIP="cupy cupy-cuda${major}x nvidia-ml-py" bash tools/gpu/device/gpu-check.sh
