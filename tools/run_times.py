"""Measure every notebook's wall-clock run time at one scale and, with ``--write``, store it as the
``run_seconds`` of ``notebooks/index.yml`` (which says they are measured, never estimated).

    python -m tools.run_times --scale small [--write] [NN ...]

Each notebook runs top to bottom in a fresh kernel, one at a time, as the site's build runs them
(``tools.site.execute``: the CPU backend, a throw-away progress file, no shared cluster), cluster
start-up included. Run it on a quiet machine: the time of one run is what the map shows.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import tempfile
from datetime import date
from pathlib import Path

from tools.course_index import load_course
from tools.course_index.model import INDEX
from tools.site.execute import build_environment, execute

SCALES = ("tiny", "small")


def measure(scale: str, numbers: list[str]) -> dict[str, int]:
    """Seconds per notebook number, rounded up to a whole second."""
    chosen = [nb for nb in load_course(INDEX).notebooks if not numbers or nb.number in numbers]
    seconds: dict[str, int] = {}
    with tempfile.TemporaryDirectory(prefix="course-run-times-") as scratch, build_environment():
        os.environ["COURSE_SCALE"] = scale
        for notebook in chosen:
            source = Path("notebooks") / notebook.file
            result = execute(notebook, source, Path(scratch) / notebook.file, Path(scratch) / notebook.number)
            seconds[notebook.number] = max(1, round(result.seconds or 0))
            print(f"{notebook.file}: {result.seconds:.1f} s at the {scale} scale", flush=True)
    return seconds


def write(scale: str, seconds: dict[str, int], machine: str) -> None:
    """Replace the measured numbers in notebooks/index.yml, keeping its comments and layout."""
    text = INDEX.read_text()
    for number, value in seconds.items():
        entry = re.compile(rf'(- number: "{number}"\n(?:    .*\n)*?    run_seconds: \{{[^}}]*\b{scale}: )\d+')
        text, count = entry.subn(rf"\g<1>{value}", text, count=1)
        if count != 1:
            raise SystemExit(f"error: no run_seconds for notebook {number} in {INDEX}; fix the file by hand")
    text = re.sub(r"(on )[^\n]*?( \(\d{4}-\d\d-\d\d\)\.)", rf"\g<1>{machine} ({date.today().isoformat()}).",
                  text, count=1)
    INDEX.write_text(text)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.run_times", description=__doc__.splitlines()[0])
    parser.add_argument("--scale", choices=SCALES, required=True)
    parser.add_argument("--write", action="store_true", help=f"store the times in {INDEX}")
    parser.add_argument("--machine", default="a 2-core AMD EPYC machine without a GPU",
                        help="the machine the index's run_times text names")
    parser.add_argument("numbers", nargs="*", help="notebook numbers (default: all)")
    args = parser.parse_args(argv)
    known = {nb.number for nb in load_course(INDEX).notebooks}
    unknown = sorted(set(args.numbers) - known)
    if unknown:
        print(f"error: no notebook numbered {', '.join(unknown)}; choose from {', '.join(sorted(known))}",
              file=sys.stderr)
        return 2
    seconds = measure(args.scale, args.numbers)
    if args.write:
        write(args.scale, seconds, args.machine)
        print(f"wrote the {args.scale} times into {INDEX}; now run python -m tools.course_index --write")
    return 0


if __name__ == "__main__":
    sys.exit(main())
