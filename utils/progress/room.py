"""The instructor's view without an LMS: learners export one anonymous file each, the instructor
merges a folder of them into a room table and a chart of the share right / wrong / not attempted
per exercise (``python -m utils.progress export`` / ``collect DIR``).

An export holds the latest outcome of each exercise of the course's notebooks (not of the
learner's own notebooks) and a random learner id (kept next to the
progress file, so exporting again replaces the learner's earlier file in a shared folder instead of
counting them twice); a name only when the learner types one; no reasons, times, paths or user
names. Files that are not such an export are skipped, each named in one line.
"""

from __future__ import annotations

import json
import os
import re
import secrets
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pandas as pd
from matplotlib.figure import Figure

from utils.progress.catalogue import course_exercises
from utils.progress.report import progress_table
from utils.progress.store import NOT_ATTEMPTED, OUTCOMES, RIGHT, WRONG, progress_file

EXPORT_FORMAT = "dask-course-progress"
EXPORT_VERSION = 1
LEARNER_ID = re.compile(r"^[0-9a-f]{12}$")
NAME_LIMIT = 80
ROOM_CSV, ROOM_PNG, LEARNERS_CSV = "room-progress.csv", "room-progress.png", "room-learners.csv"
COLOURS = {RIGHT: "#2e7d32", WRONG: "#c62828", NOT_ATTEMPTED: "#bdbdbd"}


def learner_id(path: Path | None = None) -> str:
    """A random id for this learner's exports, created once next to the progress file; a fresh one
    each time when that folder cannot be written (the export still works, it just cannot replace)."""
    id_file = (progress_file() if path is None else path).with_suffix(".id")
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
        pass
    return new


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
    partial = out_dir / f".{target.name}.{os.getpid()}.partial"
    partial.write_text(json.dumps(summary, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    os.chmod(partial, 0o644)  # an instructor collecting a shared folder must be able to read it
    os.replace(partial, target)
    return target


def read_export(path: Path) -> dict[str, Any]:
    """One learner's export, checked; ``ValueError`` with one line saying what is wrong."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError:
        raise ValueError("not a text file") from None
    except json.JSONDecodeError as error:
        raise ValueError(f"not JSON ({error.msg}, line {error.lineno})") from None
    if not isinstance(data, dict) or data.get("format") != EXPORT_FORMAT:
        raise ValueError(f"not a progress export (no \"format\": \"{EXPORT_FORMAT}\")")
    if data.get("version") != EXPORT_VERSION:
        raise ValueError(f"export version {data.get('version')!r}; this course reads version {EXPORT_VERSION}")
    if not isinstance(data.get("learner"), str) or not isinstance(data.get("name"), (str, type(None))):
        raise ValueError("no learner id")
    rows = data.get("exercises")
    if not isinstance(rows, list) or not all(
        isinstance(row, dict) and isinstance(row.get("notebook"), str) and isinstance(row.get("exercise"), str)
        and row.get("outcome") in OUTCOMES for row in rows
    ):
        raise ValueError("its exercises are not a list of {notebook, exercise, outcome}")
    return data


@dataclass
class Room:
    """A folder of exports merged: a row per exercise, a row per learner, and what was skipped."""

    exercises: pd.DataFrame
    learners: pd.DataFrame
    skipped: list[str] = field(default_factory=list)


def merge(exports: list[dict[str, Any]], notebooks: Path | None = None) -> Room:
    """Count each exercise's outcomes over the learners, in course order (exercises the course no
    longer has come last, in the order the exports list them)."""
    order = {(e.notebook, e.title): i for i, e in enumerate(course_exercises(notebooks))}
    counts: dict[tuple[str, str], dict[str, int]] = {}
    learners = []
    for data in exports:
        outcomes = {(row["notebook"], row["exercise"]): row["outcome"] for row in data["exercises"]}
        for target, outcome in outcomes.items():
            counts.setdefault(target, dict.fromkeys(OUTCOMES, 0))[outcome] += 1
        wrong = [f"{nb[:2]} {title.split(' · ')[0]}" for (nb, title), outcome in outcomes.items() if outcome == WRONG]
        learners.append({"learner": data["learner"], "name": data.get("name") or "",
                         **{o: sum(v == o for v in outcomes.values()) for o in OUTCOMES},
                         "wrong exercises": ", ".join(wrong)})
    rows = []
    for (notebook, exercise), seen in sorted(counts.items(), key=lambda kv: (order.get(kv[0], len(order)),)):
        total = sum(seen.values())
        rows.append({"notebook": notebook, "exercise": exercise, "learners": total, **seen,
                     **{f"share {o}": round(seen[o] / total, 3) for o in OUTCOMES}})
    columns = ["notebook", "exercise", "learners", *OUTCOMES, *(f"share {o}" for o in OUTCOMES)]
    return Room(pd.DataFrame(rows, columns=columns),
                pd.DataFrame(learners, columns=["learner", "name", *OUTCOMES, "wrong exercises"]))


def collect(folder: Path, notebooks: Path | None = None) -> Room:
    """Every export (``*.json``) in ``folder``, one per learner (the newest when a learner exported
    twice under different file names); malformed files are skipped and named."""
    newest: dict[str, dict[str, Any]] = {}
    skipped = []
    for path in sorted(folder.glob("*.json")):
        try:
            data = read_export(path)
        except (OSError, ValueError) as error:
            skipped.append(f"{path.name}: {error}")
            continue
        earlier = newest.get(data["learner"])
        if earlier is None or str(data.get("exported", "")) >= str(earlier.get("exported", "")):
            newest[data["learner"]] = data
    room = merge(list(newest.values()), notebooks)
    room.skipped = skipped
    return room


def draw_chart(table: pd.DataFrame, learners: int) -> Figure:
    """One horizontal bar per exercise, split into the shares right / wrong / not attempted, in course order."""
    labels = [f"{nb[:2]} {ex}" if len(ex) <= 50 else f"{nb[:2]} {ex[:49]}…"
              for nb, ex in zip(table["notebook"], table["exercise"], strict=True)]
    figure = Figure(figsize=(9, 1.2 + 0.35 * max(len(labels), 1)), layout="constrained")
    axes = figure.add_subplot()
    left = [0.0] * len(labels)
    for outcome in OUTCOMES:
        shares = [100 * s for s in table[f"share {outcome}"]]
        axes.barh(labels, shares, left=left, color=COLOURS[outcome], label=outcome)
        left = [a + b for a, b in zip(left, shares, strict=True)]
    axes.invert_yaxis()  # the course's first exercise at the top
    axes.set_xlim(0, 100)
    axes.set_xlabel("share of learners (%)")
    axes.set_title(f"Exercise progress of the room ({learners} learner{'s' if learners != 1 else ''})")
    figure.legend(loc="outside lower center", ncols=3, frameon=False)
    return figure


def write_room(room: Room, out_dir: Path) -> list[Path]:
    """The room table and the learners table as CSV, and the chart as PNG, into ``out_dir``."""
    out_dir.mkdir(parents=True, exist_ok=True)
    written = [out_dir / ROOM_CSV, out_dir / ROOM_PNG, out_dir / LEARNERS_CSV]
    room.exercises.to_csv(written[0], index=False)
    draw_chart(room.exercises, len(room.learners)).savefig(written[1], dpi=100)
    room.learners.to_csv(written[2], index=False)
    return written


def room_text(room: Room) -> str:
    """The room table as a learner-free text table: per exercise, the shares as percentages."""
    table = room.exercises
    shown = pd.DataFrame({
        "exercise": [f"{nb[:2]} {ex}" for nb, ex in zip(table["notebook"], table["exercise"], strict=True)],
        **{o: [f"{100 * s:.0f} %" for s in table[f"share {o}"]] for o in OUTCOMES},
    })
    stuck = table.sort_values(["share wrong", "share not attempted"], ascending=False).head(1)
    lines = [f"{len(room.learners)} learners, {len(table)} exercises"]
    if len(stuck) and stuck["share wrong"].iloc[0] > 0:
        row = stuck.iloc[0]
        lines.append(f"most often wrong: {row['notebook'][:2]} {row['exercise']} "
                     f"({100 * row['share wrong']:.0f} % of the room)")
    return "\n".join(lines + ["", shown.to_string(index=False)])
