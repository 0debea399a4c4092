#!/usr/bin/env bash
# On a machine with PyPI: download the packages that the offline GPU machine lacks ("carry" lines of
# .ci/device/packages.txt) as wheels for its Python (CPython 3.12, manylinux x86_64) into .whl/
# (git-ignored), and check that every wheel fits that Python. Then carry .whl/ to the GPU machine and
# run .ci/device/gpu-check.sh there. cudf cannot travel this way (libcudf alone is a 667 MB wheel),
# so the cudf tests (1b, 4a, 4b) are skipped there: "cudf not installed".
#   PY_VERSION=3.11 DEST=/tmp/w bash .ci/device/fetch-wheels.sh   # the same set for another Python (dry run)
set -euo pipefail
cd "$(dirname "$0")/../.."
PY_VERSION=${PY_VERSION:-3.12}
DEST=${DEST:-.whl}
PIP_PYTHON=${PIP_PYTHON:-python3}
mapfile -t carry < <(sed -n 's/^carry[[:space:]]\+\([^#[:space:]]\+\).*/\1/p' .ci/device/packages.txt)
[ ${#carry[@]} -gt 0 ] || { echo "error: no 'carry' lines in .ci/device/packages.txt" >&2; exit 2; }
rm -rf "$DEST" && mkdir -p "$DEST"
platforms=()
for p in manylinux_2_28_x86_64 manylinux_2_27_x86_64 manylinux_2_24_x86_64 manylinux_2_17_x86_64 \
         manylinux2014_x86_64 manylinux1_x86_64; do platforms+=(--platform "$p"); done
# --no-deps: every package the machine lacks is named in packages.txt; the rest is the machine's own.
"$PIP_PYTHON" -m pip download --quiet --no-deps --only-binary=:all: --python-version "$PY_VERSION" \
  --implementation cp "${platforms[@]}" -d "$DEST" "${carry[@]}"
"$PIP_PYTHON" - "$DEST" "$PY_VERSION" "${#carry[@]}" <<'PY'
import sys
from pathlib import Path

dest, version, expected = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])
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
print(f"{len(wheels)} wheels, all for CPython {version} on manylinux x86_64")
PY
du -sh "$DEST"
