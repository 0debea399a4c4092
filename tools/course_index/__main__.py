"""``python -m tools.course_index --check | --write`` (see the package's docstring)."""

from __future__ import annotations

import argparse
import sys

from tools.course_index import __doc__ as DOC
from tools.course_index.model import INDEX, CourseIndexError
from tools.course_index.sync import check, write


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line, not argparse's usage block
        self.exit(2, f"{self.prog}: error: {message} (use --check or --write)\n")


def main(argv: list[str] | None = None) -> int:
    parser = _Parser(prog="python -m tools.course_index", description=DOC.splitlines()[0])
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--check", action="store_true", help="list what drifted from notebooks/index.yml; exit 1 if any")
    mode.add_argument("--write", action="store_true", help="rewrite the generated blocks from notebooks/index.yml")
    args, unknown = parser.parse_known_args(argv)
    if unknown:
        parser.error(f"unrecognized arguments: {' '.join(unknown)}")
    if not (args.check or args.write):
        parser.error("nothing to do")
    if args.write:
        try:
            changed = write()
        except CourseIndexError as error:
            print(f"{INDEX}: {error}", file=sys.stderr)
            return 1
        for path in changed:
            print(f"wrote {path}")
        if not changed:
            print("every generated block was up to date")
    problems = check()
    for problem in problems:
        print(problem)
    if args.check and not problems:
        print(f"every generated block and notebook header agrees with {INDEX}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
