#!/usr/bin/env bash
# On a machine with PyPI: download the packages that the offline GPU machine lacks ("carry" lines of
# tools/gpu/device/packages.txt) as wheels for its Python (CPython 3.12, manylinux x86_64) into .whl/
# (git-ignored), and check that every wheel fits that Python and that all of them fit what may be carried
# to the machine. Then carry .whl/ to the GPU machine and run tools/gpu/device/gpu-check.sh there. cudf cannot
# travel this way (libcudf alone is a 667 MB wheel), so the cudf tests (1b, 4a, 4b) are skipped there.
#   bash tools/gpu/device/fetch-wheels.sh        # the wheels of both CUDA majors (rmm-cu12 and rmm-cu13: 32 MB in all)
#   bash tools/gpu/device/fetch-wheels.sh 13     # only the CUDA 13 ones (gpu-check.sh installs only the probed major)
#   PY_VERSION=3.11 DEST=/tmp/w bash tools/gpu/device/fetch-wheels.sh   # the same set for another Python (dry run)
# CARRY_LIMIT_MIB (56): the most the wheels may take; the repository (about 3 MB) travels with them, and
# a GPU machine of this project is carried at most 64 MiB in all.
set -euo pipefail
cd "$(dirname "$0")/../../.."
PY_VERSION=${PY_VERSION:-3.12}
DEST=${DEST:-.whl}
PIP_PYTHON=${PIP_PYTHON:-python3}
CARRY_LIMIT_MIB=${CARRY_LIMIT_MIB:-56}
majors=()
for major in ${1:-12 13}; do majors+=(--cuda-major "$major"); done
mapfile -t carry < <("$PIP_PYTHON" -m tools.gpu.preflight --list carry --python-version "$PY_VERSION" "${majors[@]}")
[ ${#carry[@]} -gt 0 ] || { echo "error: no 'carry' lines in tools/gpu/device/packages.txt" >&2; exit 2; }
rm -rf "$DEST" && mkdir -p "$DEST"
platforms=()
for p in manylinux_2_28_x86_64 manylinux_2_27_x86_64 manylinux_2_24_x86_64 manylinux_2_17_x86_64 \
         manylinux2014_x86_64 manylinux1_x86_64; do platforms+=(--platform "$p"); done
# --no-deps: every package the machine lacks is named in packages.txt; the rest is the machine's own.
"$PIP_PYTHON" -m pip download --quiet --no-deps --only-binary=:all: --python-version "$PY_VERSION" \
  --implementation cp "${platforms[@]}" -d "$DEST" "${carry[@]}"
"$PIP_PYTHON" - "$DEST" "$PY_VERSION" "${#carry[@]}" "$CARRY_LIMIT_MIB" <<'PY'
import sys
from pathlib import Path

dest, version, expected, limit_mib = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
cp = "cp" + version.replace(".", "")
wheels = sorted(dest.glob("*.whl"))
bad = []
for wheel in wheels:
    python, abi, platform = wheel.name[:-4].split("-")[-3:]
    fits_python = (abi == "none" and "py3" in python) or abi == cp or (
        abi == "abi3" and any(int(t[2:]) <= int(cp[2:]) for t in python.split(".") if t.startswith("cp")))
    fits_platform = platform == "any" or ("manylinux" in platform and "x86_64" in platform)
    print(f"  {'ok ' if fits_python and fits_platform else 'BAD'} {wheel.name}")
    if not (fits_python and fits_platform):
        bad.append(wheel.name)
if bad or len(wheels) != expected:
    sys.exit(f"error: {len(wheels)} wheels for {expected} packages; not for CPython {version} manylinux x86_64: {bad}")
mib = sum(wheel.stat().st_size for wheel in wheels) / 2**20
if mib > limit_mib:
    sys.exit(f"error: the wheels take {mib:.1f} MiB, more than CARRY_LIMIT_MIB={limit_mib:g}: carry one CUDA major "
             "(bash tools/gpu/device/fetch-wheels.sh 12 or 13)")
print(f"{len(wheels)} wheels, all for CPython {version} on manylinux x86_64: {mib:.1f} MiB")
PY
