"""``python -m utils.datagen``: generate a dataset, or verify one against its manifest.

Bad arguments and environment failures (disk full, no memory, a folder that cannot be written)
end in one ``error: ...`` line and exit 2; Ctrl-C and SIGTERM clean up and say that nothing
half-written was kept, and a second one during that cleanup stops at once, also in one line.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
import time
from pathlib import Path

from utils.base.paths import CoursePathError, default_data_dir
from utils.base.units import human_bytes
from utils.datagen.build import ensure_generated
from utils.datagen.manifest import (
    DEFAULT_SEED,
    FORMAT_VERSION,
    DamagedManifest,
    dataset_dir,
    file_problems,
    read_manifest,
    regenerate_command,
)
from utils.datagen.params import FORMATS
from utils.datagen.scales import SCALES, resolve_scale


class _OneLineParser(argparse.ArgumentParser):
    """Bad arguments: one ``error: ...`` line and exit 2, without the usage block."""

    def error(self, message: str):
        self.exit(2, f"error: {message}\n")


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid int value: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {value}")
    return value


def _folder(text: str) -> Path:
    if not text.strip():
        raise argparse.ArgumentTypeError(
            "empty; give a folder, or leave --data-dir out to use $COURSE_DATA_DIR or data/"
        )
    return Path(text)


def _parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = _OneLineParser(
        prog="python -m utils.datagen",
        description="Generate synthetic customer transactions (CSV + Parquet) and their exact ground truth.",
    )
    parser.add_argument("--scale", choices=list(SCALES), help="size preset (default: $COURSE_SCALE or small)")
    parser.add_argument("--rows", type=int, help="override the preset's row count")
    parser.add_argument("--partitions", type=int, help="override the preset's partition count")
    parser.add_argument("--customers", type=int, help="override the preset's customer count")
    parser.add_argument("--seed", type=int, help=f"random seed (default: {DEFAULT_SEED})")
    parser.add_argument("--formats", help="comma-separated: csv,parquet (default: both)")
    parser.add_argument(
        "--data-dir", type=_folder,
        help="parent directory (default: $COURSE_DATA_DIR, relative to the repository root, or data/)",
    )
    parser.add_argument("--workers", type=_positive_int, help="processes (default: one per core)")
    parser.add_argument("--force", action="store_true", help="regenerate even if a complete copy exists")
    parser.add_argument(
        "--verify", action="store_true",
        help="check the existing dataset's files against the manifest's checksums; generate nothing",
    )
    args = parser.parse_args(argv)
    if args.verify:
        extra = [f"--{name}" for name in ("rows", "partitions", "customers", "seed", "formats", "workers")
                 if getattr(args, name) is not None] + (["--force"] if args.force else [])
        if extra:
            parser.error(f"--verify takes only --scale and --data-dir, not {' '.join(extra)}")
    return args


def _verify(args: argparse.Namespace) -> int:
    scale = resolve_scale(args.scale).name
    parent = args.data_dir if args.data_dir is not None else default_data_dir()
    path = dataset_dir(parent, scale)
    generate_cmd = f"python -m utils.datagen --scale {scale}" + (
        f" --data-dir {args.data_dir}" if args.data_dir is not None else ""
    )
    try:
        manifest = read_manifest(path)
        rebuild = regenerate_command(path, manifest)
        version = manifest["params"].get("format_version", 1)
        if version != FORMAT_VERSION:
            print(
                f"error: {path} was made by an older generator (format {version}, current {FORMAT_VERSION}); "
                f"regenerate with `{rebuild}`",
                file=sys.stderr,
            )
            return 2
        problems = file_problems(path, manifest, checksums=True)
    except CoursePathError:  # $COURSE_DATA_DIR itself (the rebuild command compares with it): main says which
        raise
    except DamagedManifest as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    except (ValueError, OSError, KeyError, TypeError):
        print(f"error: no complete dataset in {path}; generate it with `{generate_cmd}`", file=sys.stderr)
        return 2
    if problems:
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        print(
            f"error: {path.name}/{problems[0]}{more}: the data files were changed after generation; "
            f"regenerate with `{rebuild}`",
            file=sys.stderr,
        )
        return 2
    files = manifest["files"]
    total = sum(entry["bytes"] for entry in files.values())
    print(f"ok: all {len(files)} files of {path} match their checksums ({human_bytes(total)})")
    return 0


class _Terminated(KeyboardInterrupt):
    """SIGTERM, handled like Ctrl-C: the same cleanup runs."""


CLEANUP_DEADLINE_S = 15.0
STOPPED = {signal.SIGINT: "interrupted", signal.SIGTERM: "terminated (SIGTERM)"}


class _Stop:
    """Where a stop (Ctrl-C, SIGTERM) stands: ``running``; ``cleaning`` after the first signal (the
    cleanup runs); ``reporting`` while ``main`` prints the one line, the cleanup being over; ``done``."""

    state = "running"


def _say(line: str) -> None:
    """One line on stderr in a single write, safe inside a signal handler (``print`` is not: the
    main thread may be in the middle of writing to ``sys.stderr``)."""
    os.write(2, f"{line}\n".encode())


def exit_if_cleanup_hangs(code: int) -> None:
    """Bound the cleanup that a signal starts: an exception raised at an arbitrary point can leave a
    lock of the process pool held, and then stopping the pool would wait forever. After the
    deadline the process exits anyway; the next run removes the temporary folder of a dead run."""

    def force_exit() -> None:
        if _Stop.state not in ("reporting", "done"):  # else the cleanup is over and its line printed
            _say("error: stopped; cleanup did not finish in time, the next run removes the temporary folder")
        os._exit(code)

    timer = threading.Timer(CLEANUP_DEADLINE_S, force_exit)
    timer.daemon = True
    timer.start()


def _on_stop_signal(signum, frame):
    """The first Ctrl-C or SIGTERM raises, so that the cleanup runs (``generate`` removes what it was
    writing). A second one must not raise inside that cleanup (it would cut it short, and can leave
    the process pool waiting forever at exit), so it ends the process at once, in one line: the
    workers die with it, and the next run removes a dead run's temporary folder."""
    code = 128 + signum
    if _Stop.state == "done":  # the cleanup is over and its line printed: only the exit was left
        os._exit(code)
    if _Stop.state == "reporting":  # the line is being printed; the process ends right after
        return
    if _Stop.state == "cleaning":
        _say(f"error: {STOPPED[signum]} again; stopped before the cleanup finished: "
             "the next run removes what this one left half-written")
        os._exit(code)
    _Stop.state = "cleaning"
    exit_if_cleanup_hangs(code)
    raise _Terminated() if signum == signal.SIGTERM else KeyboardInterrupt()


def main(argv: list[str] | None = None) -> int:
    args = _parse_args(argv)
    _Stop.state = "running"
    try:
        if threading.current_thread() is threading.main_thread():
            for signum in STOPPED:
                signal.signal(signum, _on_stop_signal)
        if args.verify:
            return _verify(args)
        started = time.perf_counter()
        formats = FORMATS if args.formats is None else [f.strip() for f in args.formats.split(",") if f.strip()]
        path = ensure_generated(
            args.scale,
            args.data_dir,
            force=args.force,
            workers=args.workers,
            rows=args.rows,
            partitions=args.partitions,
            customers=args.customers,
            seed=DEFAULT_SEED if args.seed is None else args.seed,
            formats=formats,
        )
        elapsed = time.perf_counter() - started
        print(f"{read_manifest(path)['rows']:,} rows ready in {path} ({elapsed:.1f} s)")
    except ValueError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt as interrupt:
        signum = signal.SIGTERM if isinstance(interrupt, _Terminated) else signal.SIGINT
        _Stop.state = "reporting"
        print(f"error: {STOPPED[signum]}; nothing half-written was kept", file=sys.stderr, flush=True)
        _Stop.state = "done"
        return 128 + signum
    return 0
