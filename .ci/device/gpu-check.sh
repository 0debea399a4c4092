#!/usr/bin/env bash
# Run on the lent GPU machine (see fetch-wheels.sh), from the repository root:
#   bash .ci/device/gpu-check.sh          # reports land in $OUT (or reports/ when OUT is unset)
# 1. `python -m utils.gpu_check`: LocalCUDACluster, one worker per GPU, dashboard GPU pages,
#    CuPy groupby-sum vs ground truth with its NumPy twin timed in the same run;
# 2. the same checks against two `dask cuda worker` processes sharing GPU 0 (the multi-worker path);
# 3. the pytest GPU tests (tests/test_gpu.py).
# Set SKIP_WHEELS=1 to use the current environment instead of .whl/ (a dry run on a CPU box).
set -u
cd "$(dirname "$0")/../.."
PYTHON=${PYTHON:-python3}
OUT=${OUT:-reports}
export PYTHONUNBUFFERED=1 PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" COURSE_SCALE=tiny
if [ -z "${SKIP_WHEELS:-}" ]; then
  "$PYTHON" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
    || { echo "error: could not install the carried wheels (run .ci/device/fetch-wheels.sh here first)"; exit 2; }
  export PYTHONPATH="$PYTHONPATH:/tmp/site"
fi
mkdir -p "$OUT/single" "$OUT/shared"
nvidia-smi -L 2>/dev/null || echo "nvidia-smi: not available"

echo "== 1. LocalCUDACluster through utils.gpu_check"
"$PYTHON" -m utils.gpu_check --report-dir "$OUT/single" --skip-notebooks
single=$?
[ $single -eq 2 ] && { echo "error: no usable GPU here; stopping (nothing else would run)"; exit 2; }

echo "== 2. two dask cuda workers sharing GPU 0"
"$PYTHON" -m dask scheduler --port 8786 --dashboard-address :8787 >"$OUT/shared/scheduler.log" 2>&1 &
scheduler=$!
sleep 3
workers=()
for i in 1 2; do
  CUDA_VISIBLE_DEVICES=0 "$PYTHON" -m dask cuda worker tcp://127.0.0.1:8786 --device-memory-limit 0.4 \
    --name "gpu0-worker-$i" >"$OUT/shared/worker-$i.log" 2>&1 &
  workers+=($!)
done
sleep 10
"$PYTHON" -m utils.gpu_check --report-dir "$OUT/shared" --skip-notebooks --scheduler-address tcp://127.0.0.1:8786
shared=$?
kill "${workers[@]}" "$scheduler" 2>/dev/null; wait 2>/dev/null

echo "== 3. pytest GPU tests"
"$PYTHON" -m pytest tests/test_gpu.py -ra -p no:cacheprovider -o addopts="" 2>&1 | tee "$OUT/pytest-gpu.log"
tests=${PIPESTATUS[0]}
echo "exit codes: single=$single shared=$shared pytest=$tests"
[ $single -eq 0 ] && [ $shared -eq 0 ] && [ $tests -eq 0 ]
