#!/usr/bin/env bash
# For a GPU machine without network access (see fetch-wheels.sh), from the repository root:
#   bash .ci/device/gpu-check.sh          # reports land in $OUT (or reports/ when OUT is unset)
# 0. preflight (python -m tools.gpu_preflight): every module of the run imports, the carried versions
#    win and the machine's own packages meet .ci/device/packages.txt; else one error line, exit 2,
#    before any GPU work;
# 1. `python -m tools.gpu_check` (the GPU tests in tests/gpu) on LocalCUDACluster, one worker per
#    GPU: dashboard GPU pages, CuPy groupby-sum vs the ground truth with its NumPy twin timed;
# 2. the same tests against two `dask cuda worker` processes sharing GPU 0 (the multi-worker path):
#    waits until both have joined (exit 2 if not) and test 1a asserts two workers on one GPU, GPU 0.
# Settings (environment): PYTHON (python3), WHEELS (.whl), SITE (/tmp/site: where the wheels go),
# OUT (reports), DRY_RUN=1 (stop after the preflight), and for a dry run on a machine without a
# GPU: PYTHON_FLAGS (-S), EXTRA_PATH (the machine's packages and a stand-in pynvml), PREFLIGHT_SKIP
# (modules that need CUDA libraries, e.g. cupy), PIP_PYTHON (a Python with pip). See dry-run.sh.
set -u
cd "$(dirname "$0")/../.."
PYTHON=${PYTHON:-python3}
PYTHON_FLAGS=${PYTHON_FLAGS:-}
WHEELS=${WHEELS:-.whl}
SITE=${SITE:-/tmp/site}
OUT=${OUT:-reports}
export PYTHONUNBUFFERED=1 COURSE_SCALE=tiny
py() { "$PYTHON" $PYTHON_FLAGS "$@"; }

ls "$WHEELS"/*.whl >/dev/null 2>&1 || { echo "error: no wheels in $WHEELS: run .ci/device/fetch-wheels.sh first"; exit 2; }
"${PIP_PYTHON:-$PYTHON}" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target "$SITE" \
  "$WHEELS"/*.whl || { echo "error: could not install the carried wheels from $WHEELS into $SITE"; exit 2; }
# The carried packages come before the machine's site-packages: they win (pandas 3.0.6 included).
export PYTHONPATH="$PWD:$SITE${EXTRA_PATH:+:$EXTRA_PATH}"

echo "== 0. preflight: python -m tools.gpu_preflight"
skips=()
for name in ${PREFLIGHT_SKIP:-}; do skips+=(--skip "$name"); done
py -m tools.gpu_preflight --carried "$SITE" ${skips[@]+"${skips[@]}"} \
  || { echo "error: the preflight failed: nothing was run on the GPU"; exit 2; }
if [ -n "${DRY_RUN:-}" ]; then echo "dry run: stopping after the preflight"; exit 0; fi

mkdir -p "$OUT/single" "$OUT/shared"
nvidia-smi -L 2>/dev/null || echo "nvidia-smi: not available"

echo "== 1. LocalCUDACluster: python -m tools.gpu_check"
py -m tools.gpu_check --report-dir "$OUT/single" --skip-notebooks
single=$?
[ $single -ge 2 ] && { echo "error: the GPU tests could not run here (exit $single); stopping"; exit 2; }

echo "== 2. two dask cuda workers sharing GPU 0"
scheduler_file="$OUT/shared/scheduler.json"
rm -f "$scheduler_file"
py -m dask scheduler --host 127.0.0.1 --port 0 --dashboard-address 127.0.0.1:0 \
  --scheduler-file "$scheduler_file" >"$OUT/shared/scheduler.log" 2>&1 &
pids=($!)
for i in 1 2; do
  CUDA_VISIBLE_DEVICES=0 py -m dask cuda worker --scheduler-file "$scheduler_file" --host 127.0.0.1 \
    --no-dashboard --device-memory-limit 0.4 --name "gpu0-worker-$i" >"$OUT/shared/worker-$i.log" 2>&1 &
  pids+=($!)
done
stop() { kill "${pids[@]}" 2>/dev/null; wait 2>/dev/null; }
trap stop EXIT
for _ in $(seq 60); do [ -s "$scheduler_file" ] && break; sleep 1; done
address=$(py -c "import json, sys; print(json.load(open(sys.argv[1]))['address'])" "$scheduler_file") \
  || { echo "error: the scheduler wrote no $scheduler_file within 60 s (see $OUT/shared/scheduler.log)"; exit 2; }
# --workers 2: wait (up to 120 s) for both workers, exit 2 in one line if they do not join;
# --shared-gpu: test 1a asserts that the two workers compute on one GPU, GPU 0.
py -m tools.gpu_check --report-dir "$OUT/shared" --skip-notebooks --scheduler-address "$address" \
  --workers 2 --shared-gpu
shared=$?
echo "exit codes: single=$single shared=$shared"
[ $single -eq 0 ] && [ $shared -eq 0 ]
