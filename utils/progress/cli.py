"""``python -m utils.progress``: the learner's table, the export, the instructor's room summary, reset.

    python -m utils.progress                   # or: show; `make progress`
    python -m utils.progress export [--name NAME] [--out DIR]
    python -m utils.progress collect DIR [--out DIR]
    python -m utils.progress reset

Bad arguments and failures (a folder that does not exist or cannot be written) end in one
``error: ...`` line on stderr, naming the folder and the fix, and exit 2.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from utils.base.paths import SCRATCH_ENV_VAR
from utils.progress.report import progress_text
from utils.progress.room import collect, room_text, write_export, write_room
from utils.progress.store import clear, progress_file


class _OneLineParser(argparse.ArgumentParser):
    """Bad arguments: one ``error: ...`` line and exit 2, without the usage block."""

    def error(self, message: str):
        self.exit(2, f"error: {message}\n")


def _folder(text: str) -> Path:
    if not text.strip():
        raise argparse.ArgumentTypeError("empty; give a folder")
    try:
        return Path(text).expanduser()
    except RuntimeError:  # pathlib's bare "Could not determine home directory." for an unknown ~user
        raise argparse.ArgumentTypeError(f"{text!r} starts with a home folder this machine does not know; "
                                         "write the folder out in full") from None


def _parser() -> argparse.ArgumentParser:
    parser = _OneLineParser(prog="python -m utils.progress",
                            description="Exercise progress, recorded locally by the notebooks' checks.")
    commands = parser.add_subparsers(dest="command", metavar="{show,export,collect,reset}")
    commands.add_parser("show", help="the table per notebook (right, wrong, not attempted, what to revisit) "
                        "and the next exercise (default)")
    export = commands.add_parser("export", help="write one anonymous summary file for the instructor")
    export.add_argument("--name", help="a name to show the instructor (left out: anonymous)")
    export.add_argument("--out", type=_folder, help="folder to write it to (default: the progress file's folder)")
    room = commands.add_parser("collect", help="merge a folder of exports into a room table and chart")
    room.add_argument("folder", type=_folder, help="the folder of the learners' exports (*.json)")
    room.add_argument("--out", type=_folder, help="where the CSV and PNG go (default: that folder)")
    commands.add_parser("reset", help="forget every recorded outcome of this learner")
    return parser


def _export(out: Path | None, name: str | None) -> Path:
    """Write the export into ``out`` (default: the progress file's folder, created when missing). A
    folder that cannot be written is one line naming it and what to do instead; nothing is left in it."""
    folder = progress_file().parent if out is None else out
    if out is not None and not out.is_dir():
        raise OSError(f"{out} is not a folder")
    fix = "pass --out with a folder you can write to"
    if out is None:
        fix += f", or set {SCRATCH_ENV_VAR} to a folder of your own"
    try:
        if out is None:
            folder.mkdir(parents=True, exist_ok=True)
        return write_export(folder, name)
    except OSError as error:
        why = getattr(error, "why", None) or error.strerror or str(error)
        raise OSError(f"cannot write the export to {folder} ({why}): {fix}") from None


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        if args.command in (None, "show"):
            print(progress_text())
        elif args.command == "export":
            print(f"wrote {_export(args.out, args.name)}: hand this file to your instructor")
        elif args.command == "collect":
            if not args.folder.is_dir():
                raise OSError(f"{args.folder} is not a folder")
            room = collect(args.folder)
            for line in room.skipped:
                print(f"skipped {line}", file=sys.stderr)
            for line in room.notes:
                print(line, file=sys.stderr)
            if room.learners.empty:
                raise ValueError(f"no progress exports (*.json) in {args.folder}")
            print(room_text(room))
            written = write_room(room, args.out or args.folder)
            print("wrote " + ", ".join(str(path) for path in written))
        else:
            print(f"forgot {clear()} recorded outcomes ({progress_file()})")
    except (OSError, ValueError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    return 0
