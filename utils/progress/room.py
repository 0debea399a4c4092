"""The instructor's view without an LMS: learners export one anonymous file each, the instructor
merges a folder of them into a room table and a chart of the share right / wrong / not attempted
per exercise (``python -m utils.progress export`` / ``collect DIR``), and "data changed" where a
learner's check found the dataset changed since generation: never counted as a wrong answer.

An export holds the latest outcome of each exercise of the course's notebooks (not of the
learner's own notebooks) and a learner id (random, kept next to the progress file; derived from the
account and the progress file's path where that folder cannot be written), the same at every export
with or without ``--out``, so exporting again replaces the learner's earlier file in a shared folder
instead of counting them twice; a name only when the learner types one; no reasons, times, paths or user
names. Learners can write to the folder an instructor collects, so ``collect`` reads regular files of
at most ``EXPORT_LIMIT`` bytes only, counts only the course's own exercises, escapes what it prints
or draws (``printable``), keeps formulas out of its CSV cells and writes its outputs whole, never
through a link; a file skipped, rows left out and two files claiming one learner are each one line.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import os
import re
import reprlib
import secrets
import socket
import stat
import tempfile
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from io import BytesIO
from pathlib import Path
from typing import Any

import pandas as pd
from matplotlib.figure import Figure

from utils.progress.catalogue import course_exercises
from utils.progress.report import progress_table
from utils.progress.store import DATA_CHANGED, NOT_ATTEMPTED, OUTCOMES, RIGHT, WRONG, progress_file

EXPORT_FORMAT = "dask-course-progress"
EXPORT_VERSION = 1
LEARNER_ID = re.compile(r"^[0-9a-f]{12}$")
NAME_LIMIT = 80
EXPORT_LIMIT = 1 << 20  # bytes of one export: a whole course's is a few kB, so more is not an export
ROW_LIMIT = 1000  # exercises listed in one export (the course has a few dozen)
CLOCK_SKEW = timedelta(minutes=5)  # an export dated later than now by more than this claims to come from the future
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")  # a spreadsheet runs a cell starting so as a formula (OWASP)
ROOM_CSV, ROOM_PNG, LEARNERS_CSV = "room-progress.csv", "room-progress.png", "room-learners.csv"
COLOURS = {RIGHT: "#2e7d32", WRONG: "#c62828", NOT_ATTEMPTED: "#bdbdbd", DATA_CHANGED: "#f9a825"}


def learner_id(path: Path | None = None) -> str:
    """This learner's id, the same in every export (with ``--out`` or without): a random one created
    once next to the progress file (``progress.id``); where that folder cannot be written (a read-only
    scratch folder, exported with ``--out``), ``derived_id`` instead, never a fresh one per export,
    which would count the learner once per export in the room."""
    progress = progress_file() if path is None else path
    id_file = progress.with_suffix(".id")
    try:
        text = id_file.read_text().strip()
        if LEARNER_ID.match(text):
            return text
    except OSError:
        pass
    new = secrets.token_hex(6)
    try:
        id_file.parent.mkdir(parents=True, exist_ok=True)
        id_file.write_text(new + "\n")
    except OSError:
        return derived_id(progress)
    return new


def derived_id(progress: Path) -> str:
    """An id that needs no file: a hash of the progress file's path, the machine's name and the account
    (user id, home folder), so each export of one learner has the same and two learners (two accounts,
    or two containers with the same account) differ. Not random: whoever knows those can compute it,
    as whoever can read the scratch folder can read ``progress.id``."""
    account = str(os.getuid()) if hasattr(os, "getuid") else os.environ.get("USERNAME", "")
    parts = [EXPORT_FORMAT, os.path.realpath(progress), socket.gethostname(), account, os.path.expanduser("~")]
    return hashlib.sha256("\0".join(parts).encode("utf-8", errors="replace")).hexdigest()[:12]


def clean_name(name: str | None) -> str | None:
    """What the learner typed, on one line and at most ``NAME_LIMIT`` characters; ``None`` when empty."""
    text = " ".join((name or "").split())
    if len(text) > NAME_LIMIT:
        raise ValueError(f"--name is {len(text)} characters; use at most {NAME_LIMIT}")
    return text or None


def export_summary(name: str | None = None, path: Path | None = None, notebooks: Path | None = None) -> dict:
    """The anonymous summary: each course exercise's latest outcome, the learner id, the name if given."""
    table = progress_table(path, notebooks)
    table = table[table["notebook"].isin({exercise.notebook for exercise in course_exercises(notebooks)})]
    return {
        "format": EXPORT_FORMAT,
        "version": EXPORT_VERSION,
        "learner": learner_id(path),
        "name": clean_name(name),
        "exported": datetime.now(UTC).isoformat(timespec="seconds"),
        "exercises": [{"notebook": row.notebook, "exercise": row.exercise, "outcome": row.outcome}
                      for row in table.itertuples()],
    }


def write_export(out_dir: Path, name: str | None = None, path: Path | None = None,
                 notebooks: Path | None = None) -> Path:
    """Write ``progress-<learner id>.json`` into ``out_dir`` whole (a collector never reads half a file)."""
    summary = export_summary(name, path, notebooks)
    target = out_dir / f"progress-{summary['learner']}.json"
    write_whole(target, (json.dumps(summary, ensure_ascii=False, indent=1) + "\n").encode("utf-8"))
    return target


class NotWritten(OSError):
    """``target`` could not be written, for the reason ``why`` (``Permission denied``); the message
    names both and the fix."""

    def __init__(self, target: Path, why: str) -> None:
        super().__init__(f"cannot write {target} ({why}): pass --out with a folder of your own")
        self.target, self.why = target, why


def write_whole(target: Path, data: bytes) -> None:
    """Write ``target`` through a new temporary file beside it, then rename it into place: a reader
    never sees half a file, and a link planted in the target's place (a shared folder) is replaced,
    never followed. Readable by others: the instructor collects the learners' files. A folder that
    refuses the write (read-only, another user's file in the target's place) is ``NotWritten``, and
    nothing is left behind."""
    temp = None
    try:
        fd, temp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".partial")
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.chmod(temp, 0o644)
        os.replace(temp, target)
    except BaseException as error:
        if temp is not None:
            with contextlib.suppress(OSError):
                os.unlink(temp)
        if isinstance(error, OSError):
            raise NotWritten(target, error.strerror or str(error)) from None
        raise


def printable(text: object) -> str:
    """``text`` with each control or invisible character written as its escape (``\\x1b``): file
    names, names and titles from learners reach a terminal, a chart and a spreadsheet, where a raw
    escape sequence would act (clear the screen, change colours) instead of being read."""
    return "".join(ch if ch.isprintable() else ch.encode("unicode_escape").decode("ascii") for ch in str(text))


def spreadsheet_safe(table: pd.DataFrame) -> pd.DataFrame:
    """Text cells that a spreadsheet would run as a formula (``=HYPERLINK(...)``), prefixed with ``'``."""
    def cell(value: Any) -> Any:
        return "'" + value if isinstance(value, str) and value.startswith(FORMULA_START) else value
    return table.map(cell)


def read_regular(path: Path, limit: int = EXPORT_LIMIT) -> bytes:
    """The bytes of ``path`` if it is a regular file of at most ``limit`` bytes: opened without
    following a link or waiting for a pipe's writer, and never read past the limit, since anyone who
    can write to a shared folder can plant a link, a pipe, a device or a huge sparse file there."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    if path.is_symlink():
        raise ValueError("a link (not followed)")
    try:
        fd = os.open(path, flags)
    except OSError as error:
        if error.errno == errno.ELOOP:  # became a link since
            raise ValueError("a link (not followed)") from None
        raise
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise ValueError("not a regular file (a folder, pipe or device)")
        data = handle.read(limit + 1) if info.st_size <= limit else b""
    if info.st_size > limit or len(data) > limit:
        raise ValueError(f"larger than {limit >> 20} MiB, far more than an export")
    return data


def exported_at(data: dict[str, Any]) -> datetime:
    """When an export says it was written (UTC when it names no zone); ``ValueError`` without one."""
    value = data.get("exported")
    try:
        when = datetime.fromisoformat(value) if isinstance(value, str) else None
    except ValueError:
        when = None
    if when is None:
        raise ValueError("no export date (\"exported\")")
    return when if when.tzinfo else when.replace(tzinfo=UTC)


def read_export(path: Path) -> dict[str, Any]:
    """One learner's export, checked; ``ValueError`` with one line saying what is wrong (its text may
    quote the file: print it through ``printable``)."""
    try:
        data = json.loads(read_regular(path).decode("utf-8"))
    except UnicodeDecodeError:
        raise ValueError("not a text file") from None
    except json.JSONDecodeError as error:
        raise ValueError(f"not JSON ({error.msg}, line {error.lineno})") from None
    except RecursionError:
        raise ValueError("not JSON (nested too deeply)") from None
    if not isinstance(data, dict) or data.get("format") != EXPORT_FORMAT:
        raise ValueError(f"not a progress export (no \"format\": \"{EXPORT_FORMAT}\")")
    if data.get("version") != EXPORT_VERSION:
        raise ValueError(f"export version {reprlib.repr(data.get('version'))}; "
                         f"this course reads version {EXPORT_VERSION}")
    if not isinstance(data.get("learner"), str) or not LEARNER_ID.match(data["learner"]):
        raise ValueError("no learner id (12 hexadecimal digits)")
    name = data.get("name")
    if not isinstance(name, (str, type(None))):
        raise ValueError("its name is not text")
    if name is not None and len(name) > NAME_LIMIT:
        raise ValueError(f"a name of {len(name)} characters (at most {NAME_LIMIT})")
    exported_at(data)
    rows = data.get("exercises")
    if isinstance(rows, list) and len(rows) > ROW_LIMIT:
        raise ValueError(f"{len(rows)} exercises (at most {ROW_LIMIT})")
    if not isinstance(rows, list) or not all(
        isinstance(row, dict) and isinstance(row.get("notebook"), str) and isinstance(row.get("exercise"), str)
        and row.get("outcome") in OUTCOMES for row in rows
    ):
        raise ValueError("its exercises are not a list of {notebook, exercise, outcome}")
    return data


@dataclass
class Room:
    """A folder of exports merged: a row per exercise, a row per learner, the files skipped
    (``name: why``) and what else the instructor should know (left-out rows, two files for one learner)."""

    exercises: pd.DataFrame
    learners: pd.DataFrame
    skipped: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def merge(exports: list[dict[str, Any]], notebooks: Path | None = None) -> Room:
    """Count each exercise's outcomes over the learners, in course order (exercises the course no
    longer has come last, in the order the exports list them). The "data changed" columns are there
    only where some export has that outcome, so a room without it has the columns it always had."""
    order = {(e.notebook, e.title): i for i, e in enumerate(course_exercises(notebooks))}
    counts: dict[tuple[str, str], dict[str, int]] = {}
    learners = []
    for data in exports:
        outcomes = {(row["notebook"], row["exercise"]): row["outcome"] for row in data["exercises"]}
        for target, outcome in outcomes.items():
            counts.setdefault(target, dict.fromkeys(OUTCOMES, 0))[outcome] += 1
        wrong = [f"{nb[:2]} {title.split(' · ')[0]}" for (nb, title), outcome in outcomes.items() if outcome == WRONG]
        learners.append({"learner": data["learner"], "name": printable(data.get("name") or ""),
                         **{o: sum(v == o for v in outcomes.values()) for o in OUTCOMES},
                         "wrong exercises": ", ".join(wrong)})
    shown = [o for o in OUTCOMES if o != DATA_CHANGED or any(seen[o] for seen in counts.values())]
    rows = []
    for (notebook, exercise), seen in sorted(counts.items(), key=lambda kv: (order.get(kv[0], len(order)),)):
        total = sum(seen.values())
        rows.append({"notebook": notebook, "exercise": exercise, "learners": total, **seen,
                     **{f"share {o}": round(seen[o] / total, 3) for o in OUTCOMES}})
    columns = ["notebook", "exercise", "learners", *shown, *(f"share {o}" for o in shown)]
    return Room(pd.DataFrame(rows, columns=columns),
                pd.DataFrame(learners, columns=["learner", "name", *shown, "wrong exercises"]))


def collect(folder: Path, notebooks: Path | None = None) -> Room:
    """Every export (``*.json``) in ``folder``, one per learner, counting only the course's own
    exercises. Learners can write to the folder, so whatever is not an export is skipped with one
    line, and files that claim the same learner are named in one line: the one counted is the latest
    export not dated in the future (a copied learner id with a future date does not win silently)."""
    known = {(exercise.notebook, exercise.title) for exercise in course_exercises(notebooks)}
    claims: dict[str, list[tuple[str, dict[str, Any]]]] = {}
    skipped, notes = [], []
    for path in sorted(folder.glob("*.json")):
        try:
            data = read_export(path)
        except (OSError, ValueError) as error:
            skipped.append(printable(f"{path.name}: {error}"))
            continue
        unknown = [row["exercise"] for row in data["exercises"] if (row["notebook"], row["exercise"]) not in known]
        if unknown:
            data["exercises"] = [row for row in data["exercises"] if (row["notebook"], row["exercise"]) in known]
            shown = ", ".join(title if len(title) <= 40 else title[:39] + "…" for title in unknown[:3])
            notes.append(printable(f"{path.name}: {len(unknown)} exercise{'s' if len(unknown) > 1 else ''} the "
                                   f"course does not have ({shown}{', …' if len(unknown) > 3 else ''}) left out"))
        claims.setdefault(data["learner"], []).append((path.name, data))
    counted = []
    for learner, files in claims.items():
        chosen, note = _one_claim(learner, files)
        counted.append(chosen)
        if note:
            notes.append(printable(note))
    room = merge(counted, notebooks)
    room.skipped, room.notes = skipped, notes
    return room


def _one_claim(learner: str, files: list[tuple[str, dict[str, Any]]]) -> tuple[dict[str, Any], str | None]:
    """The export counted for a learner whom several files claim, and the line that names them all."""
    if len(files) == 1:
        return files[0][1], None
    future = [(name, data) for name, data in files if exported_at(data) > datetime.now(UTC) + CLOCK_SKEW]
    name, data = max([claim for claim in files if claim not in future] or files, key=lambda c: exported_at(c[1]))
    note = f"learner {learner} claimed by {', '.join(n for n, _ in files)}: counted {name}"
    return data, note + "".join(f"; {n} says it was exported in the future ({exported_at(d).isoformat()})"
                                for n, d in future)


def draw_chart(table: pd.DataFrame, learners: int) -> Figure:
    """One horizontal bar per exercise, split into the shares right / wrong / not attempted (and data
    changed, where the table has it), in course order."""
    labels = [printable(f"{nb[:2]} {ex}" if len(ex) <= 50 else f"{nb[:2]} {ex[:49]}…")
              for nb, ex in zip(table["notebook"], table["exercise"], strict=True)]
    figure = Figure(figsize=(9, 1.2 + 0.35 * max(len(labels), 1)), layout="constrained")
    axes = figure.add_subplot()
    left = [0.0] * len(labels)
    for outcome in (o for o in OUTCOMES if f"share {o}" in table.columns):
        shares = [100 * s for s in table[f"share {outcome}"]]
        axes.barh(labels, shares, left=left, color=COLOURS[outcome], label=outcome)
        left = [a + b for a, b in zip(left, shares, strict=True)]
    axes.invert_yaxis()  # the course's first exercise at the top
    axes.set_xlim(0, 100)
    axes.set_xlabel("share of learners (%)")
    axes.set_title(f"Exercise progress of the room ({learners} learner{'s' if learners != 1 else ''})")
    figure.legend(loc="outside lower center", ncols=4, frameon=False)
    return figure


def write_room(room: Room, out_dir: Path) -> list[Path]:
    """The room table and the learners table as CSV (no cell a spreadsheet would run as a formula),
    and the chart as PNG, each written whole into ``out_dir`` (``write_whole``: never through a link)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    chart = BytesIO()
    draw_chart(room.exercises, len(room.learners)).savefig(chart, format="png", dpi=100)
    contents = {
        ROOM_CSV: spreadsheet_safe(room.exercises).to_csv(index=False).encode("utf-8"),
        ROOM_PNG: chart.getvalue(),
        LEARNERS_CSV: spreadsheet_safe(room.learners).to_csv(index=False).encode("utf-8"),
    }
    for name, data in contents.items():
        write_whole(out_dir / name, data)
    return [out_dir / name for name in contents]


def room_text(room: Room) -> str:
    """The room table as a learner-free text table: per exercise, the shares as percentages; the
    exercise most often wrong, and how many learners' checks found the data changed (no wrong answer)."""
    table = room.exercises
    outcomes = [o for o in OUTCOMES if f"share {o}" in table.columns]
    shown = pd.DataFrame({
        "exercise": [printable(f"{nb[:2]} {ex}") for nb, ex in zip(table["notebook"], table["exercise"], strict=True)],
        **{o: [f"{100 * s:.0f} %" for s in table[f"share {o}"]] for o in outcomes},
    })
    stuck = table.sort_values(["share wrong", "share not attempted"], ascending=False).head(1)
    lines = [f"{len(room.learners)} learners, {len(table)} exercises"]
    if len(stuck) and stuck["share wrong"].iloc[0] > 0:
        row = stuck.iloc[0]
        lines.append(printable(f"most often wrong: {row['notebook'][:2]} {row['exercise']} "
                               f"({100 * row['share wrong']:.0f} % of the room)"))
    changed = int((room.learners[DATA_CHANGED] > 0).sum()) if DATA_CHANGED in room.learners.columns else 0
    if changed:
        whose = f"{changed} learners'" if changed > 1 else "1 learner's"
        lines.append(f"data changed under {whose} checks (not wrong answers: they regenerate the data, then re-run "
                     "the notebook from the top)")
    return "\n".join(lines + ["", shown.to_string(index=False)])
