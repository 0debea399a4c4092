#!/usr/bin/env bash
# For a GPU machine without network access (see fetch-wheels.sh), from the repository root:
#   bash .ci/device/gpu-check.sh          # reports land in $OUT (or reports/ when OUT is unset)
# 1. `python -m tools.gpu_check` (the GPU tests in tests/gpu) on LocalCUDACluster, one worker per
#    GPU: dashboard GPU pages, CuPy groupby-sum vs the ground truth with its NumPy twin timed;
# 2. the same tests against two `dask cuda worker` processes sharing GPU 0 (the multi-worker path).
# Set SKIP_WHEELS=1 to use the current environment instead of .whl/ (a dry run on a CPU machine:
# step 1 refuses with exit status 2 and the script stops there).
set -u
cd "$(dirname "$0")/../.."
PYTHON=${PYTHON:-python3}
OUT=${OUT:-reports}
export PYTHONUNBUFFERED=1 PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" COURSE_SCALE=tiny
if [ -z "${SKIP_WHEELS:-}" ]; then
  "$PYTHON" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
    || { echo "error: could not install the carried wheels (run .ci/device/fetch-wheels.sh first)"; exit 2; }
  export PYTHONPATH="$PYTHONPATH:/tmp/site"
fi
mkdir -p "$OUT/single" "$OUT/shared"
nvidia-smi -L 2>/dev/null || echo "nvidia-smi: not available"

echo "== 1. LocalCUDACluster: python -m tools.gpu_check"
"$PYTHON" -m tools.gpu_check --report-dir "$OUT/single" --skip-notebooks
single=$?
[ $single -ge 2 ] && { echo "error: the GPU tests could not run here (exit $single); stopping"; exit 2; }

echo "== 2. two dask cuda workers sharing GPU 0"
"$PYTHON" -m dask scheduler --host 127.0.0.1 --port 8786 --dashboard-address 127.0.0.1:8787 \
  >"$OUT/shared/scheduler.log" 2>&1 &
scheduler=$!
sleep 3
workers=()
for i in 1 2; do
  CUDA_VISIBLE_DEVICES=0 "$PYTHON" -m dask cuda worker tcp://127.0.0.1:8786 --host 127.0.0.1 --no-dashboard \
    --device-memory-limit 0.4 --name "gpu0-worker-$i" >"$OUT/shared/worker-$i.log" 2>&1 &
  workers+=($!)
done
sleep 10
"$PYTHON" -m tools.gpu_check --report-dir "$OUT/shared" --skip-notebooks --scheduler-address tcp://127.0.0.1:8786
shared=$?
kill "${workers[@]}" "$scheduler" 2>/dev/null; wait 2>/dev/null
echo "exit codes: single=$single shared=$shared"
[ $single -eq 0 ] && [ $shared -eq 0 ]
