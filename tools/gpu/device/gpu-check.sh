#!/usr/bin/env bash
# For a GPU machine without network access (see fetch-wheels.sh), from the repository root:
#   bash tools/gpu/device/gpu-check.sh          # reports land in $OUT (or reports/ when OUT is unset)
# Each step's outcome goes into $OUT/gpu-run.md and gpu-run.json (tools.gpu.report) as soon as the step
# ends, whatever the later steps do; a step that fails is recorded and the run goes on to the next:
# probe     the CUDA major of the driver (NVML, cuda.bindings, nvidia-smi; CUDA_MAJOR=12|13 overrides);
# install   the carried wheels into $SITE: every wheel in $WHEELS but the other major's rmm/librmm;
# preflight python -m tools.gpu.preflight: every module imports, the carried versions win and the machine's
#           packages meet tools/gpu/device/packages.txt (a problem is recorded; the GPU steps still run, and each
#           test says what it could not do);
# single    python -m tools.gpu.check on LocalCUDACluster, one worker per GPU (pytest report in $OUT/single);
# shared-cluster, shared   a scheduler and two `dask cuda worker` processes with CUDA_VISIBLE_DEVICES=0, then
#           tools.gpu.check --workers 2 --shared-gpu against them (pytest report in $OUT/shared).
# The run report ends with a table of the course's GPU paths: proved here, failed, or not proved here and
# why (everything that needs cudf). Logs: $OUT/logs.tar.gz. Exit status: 0 every step passed, 1 a GPU
# test failed, 2 a step could not run.
# Settings (environment): PYTHON (python3), WHEELS (.whl), SITE (/tmp/site: where the wheels go),
# OUT (reports), STEP_TIMEOUT (240: seconds for each tools.gpu.check step, so that the whole run fits a
# 10-minute command), WORKER_WAIT (120: seconds for the two workers to join), CUDA_MAJOR (12 or 13: the
# major to use whatever the probe reads), DRY_RUN=1 (stop after the preflight), and for a
# dry run on a machine without a GPU: PYTHON_FLAGS (-S), EXTRA_PATH (the machine's packages and a stand-in
# pynvml), PREFLIGHT_SKIP (modules that need CUDA libraries, e.g. cupy), PIP_PYTHON (a Python with pip).
set -u
cd "$(dirname "$0")/../../.."
PYTHON=${PYTHON:-python3}
PYTHON_FLAGS=${PYTHON_FLAGS:-}
WHEELS=${WHEELS:-.whl}
SITE=${SITE:-/tmp/site}
OUT=${OUT:-reports}
STEP_TIMEOUT=${STEP_TIMEOUT:-240}
WORKER_WAIT=${WORKER_WAIT:-120}
export PYTHONUNBUFFERED=1 COURSE_SCALE=tiny
mkdir -p "$OUT" && OUT=$(cd "$OUT" && pwd)
LOGS="$OUT/logs"
rm -rf "$LOGS" "$OUT/logs.tar.gz" "$OUT/gpu-run.json" "$OUT/gpu-run.md" "$OUT/single" "$OUT/shared"
mkdir -p "$LOGS"
py() { "$PYTHON" $PYTHON_FLAGS "$@"; }
# The run report needs only the standard library and this repository: it is written whatever was installed.
report() { PYTHONPATH="$PWD" "$PYTHON" $PYTHON_FLAGS -m tools.gpu.report "$@"; }
record() { report record "$OUT" "$@" || echo "warning: could not record step $1 in $OUT/gpu-run.json"; }
pids=()
finish() {
  [ ${#pids[@]} -gt 0 ] && { kill "${pids[@]}" 2>/dev/null; wait "${pids[@]}" 2>/dev/null; }
  report summarize "$OUT" --final
  local status=$?
  tar -czf "$OUT/logs.tar.gz" -C "$OUT" logs 2>/dev/null && rm -rf "$LOGS"
  echo "== run report: $OUT/gpu-run.md (exit status $status)"
  cat "$OUT/gpu-run.md" 2>/dev/null
  exit $status
}
trap finish EXIT
trap 'exit 143' TERM INT
now() { date +%s.%N; }
elapsed() { awk -v start="$1" -v end="$(now)" 'BEGIN { printf "%.1f", end - start }'; }

echo "== probe: the driver's CUDA major"
start=$(now)
PYTHONPATH="$PWD${EXTRA_PATH:+:$EXTRA_PATH}" py -m tools.gpu.preflight --probe-cuda >"$LOGS/probe.out" 2>"$LOGS/probe.err"
probed=$?
cat "$LOGS/probe.err"
major=$(cat "$LOGS/probe.out")
if [ $probed -eq 0 ]; then
  record probe ok --exit 0 --seconds "$(elapsed $start)" --detail-file "$LOGS/probe.err" --cuda-major "$major"
else
  major=""
  record probe failed --exit $probed --seconds "$(elapsed $start)" --detail-file "$LOGS/probe.err"
fi

echo "== install: the carried wheels for CUDA ${major:-(unknown: no rmm)} into $SITE"
start=$(now)
wheels=()
for wheel in "$WHEELS"/*.whl; do
  [ -e "$wheel" ] || continue
  case "$(basename "$wheel")" in
    *_cu12-*|*_cu13-*) [[ -n "$major" && "$(basename "$wheel")" == *_cu${major}-* ]] || continue ;;
  esac
  wheels+=("$wheel")
done
if [ ${#wheels[@]} -eq 0 ]; then
  record install failed --exit 2 --seconds "$(elapsed $start)" \
    --detail "no wheels in $WHEELS: run tools/gpu/device/fetch-wheels.sh first (on a machine with PyPI)"
elif "${PIP_PYTHON:-$PYTHON}" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
    --target "$SITE" "${wheels[@]}" >"$LOGS/install.log" 2>&1; then
  record install ok --exit 0 --seconds "$(elapsed $start)" --detail "${#wheels[@]} wheels from $WHEELS"
else
  status=$?
  cat "$LOGS/install.log"
  record install failed --exit $status --seconds "$(elapsed $start)" --detail-file "$LOGS/install.log"
fi
# The carried packages come before the machine's site-packages: they win (pandas 3.0.6 included).
export PYTHONPATH="$PWD:$SITE${EXTRA_PATH:+:$EXTRA_PATH}"

echo "== preflight: python -m tools.gpu.preflight"
start=$(now)
skips=()
for name in ${PREFLIGHT_SKIP:-}; do skips+=(--skip "$name"); done
py -m tools.gpu.preflight --carried "$SITE" ${major:+--cuda-major "$major"} ${skips[@]+"${skips[@]}"} \
  2>"$LOGS/preflight.err"
status=$?
cat "$LOGS/preflight.err" >&2
if [ $status -eq 0 ]; then
  record preflight ok --exit 0 --seconds "$(elapsed $start)"
else
  record preflight failed --exit $status --seconds "$(elapsed $start)" --detail-file "$LOGS/preflight.err"
fi

if [ -n "${DRY_RUN:-}" ]; then
  echo "dry run: stopping after the preflight"
  for step in single shared-cluster shared; do record $step skipped --detail "DRY_RUN=1: stopped after the preflight"; done
  exit 0  # the exit status is the run report's (finish)
fi

nvidia-smi -L 2>/dev/null || echo "nvidia-smi: not available"

# A tools.gpu.check step, under STEP_TIMEOUT: its outcome is recorded whatever it is.
gpu_check_step() {
  local step=$1; shift
  local start=$(now)
  timeout --kill-after=15 "$STEP_TIMEOUT" "$PYTHON" $PYTHON_FLAGS -m tools.gpu.check --report-dir "$OUT/$step" --skip-notebooks "$@" \
    2>"$LOGS/$step.err"
  local status=$?
  tail -n 20 "$LOGS/$step.err" >&2
  local detail=""
  [ $status -eq 124 ] && detail="timed out after ${STEP_TIMEOUT} s (STEP_TIMEOUT);"
  [ $status -eq 0 ] && record "$step" ok --exit 0 --seconds "$(elapsed $start)" \
    || record "$step" failed --exit $status --seconds "$(elapsed $start)" --detail "$detail" --detail-file "$LOGS/$step.err"
}

echo "== single: LocalCUDACluster: python -m tools.gpu.check"
gpu_check_step single

echo "== shared-cluster: a scheduler and two dask cuda workers sharing GPU 0"
start=$(now)
scheduler_file="$LOGS/scheduler.json"
# Started directly, not through py(): $! must be the Python process itself, so that finish() stops it
# (a backgrounded shell function is a subshell, and killing it leaves its Python running).
"$PYTHON" $PYTHON_FLAGS -m dask scheduler --host 127.0.0.1 --port 0 --dashboard-address 127.0.0.1:0 \
  --scheduler-file "$scheduler_file" >"$LOGS/scheduler.log" 2>&1 &
pids+=($!)
for i in 1 2; do
  CUDA_VISIBLE_DEVICES=0 "$PYTHON" $PYTHON_FLAGS -m dask cuda worker --scheduler-file "$scheduler_file" \
    --host 127.0.0.1 --no-dashboard --device-memory-limit 0.4 --name "gpu0-worker-$i" >"$LOGS/worker-$i.log" 2>&1 &
  pids+=($!)
done
for _ in $(seq 60); do [ -s "$scheduler_file" ] && break; sleep 1; done
if address=$(py -c "import json, sys; print(json.load(open(sys.argv[1]))['address'])" "$scheduler_file" 2>/dev/null); then
  record shared-cluster ok --exit 0 --seconds "$(elapsed $start)" --detail "scheduler at $address"
  echo "== shared: python -m tools.gpu.check --workers 2 --shared-gpu"
  # --workers 2: wait (up to WORKER_WAIT s) for both workers, exit 2 in one line if they do not join;
  # --shared-gpu: test 1a asserts that the two workers compute on one GPU, GPU 0.
  gpu_check_step shared --scheduler-address "$address" --workers 2 --wait "$WORKER_WAIT" --shared-gpu
else
  record shared-cluster failed --exit 2 --seconds "$(elapsed $start)" \
    --detail "the scheduler wrote no scheduler file within 60 s (logs.tar.gz: logs/scheduler.log)" --detail-file "$LOGS/scheduler.log"
  record shared skipped --detail "no scheduler to test (step shared-cluster failed)"
fi
