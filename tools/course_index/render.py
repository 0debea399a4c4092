"""The text written from the index: tables for the README and the docs, a notebook's What's next."""

from __future__ import annotations

from pathlib import Path

from tools.course_index.model import Course, Notebook, Schedule

README = Path("README.md")
GUIDE = Path("docs/instructor-guide.md")
EXAM_MAP = Path("docs/exam-map.md")


def duration(minutes: int) -> str:
    hours, rest = divmod(minutes, 60)
    return " ".join(part for part in (f"{hours} h" if hours else "", f"{rest} min" if rest else "") if part)


def _table(header: str, align: str, rows: list[str]) -> str:
    return "\n".join([header, align, *rows])


def notebook_map(course: Course) -> str:
    """README.md's notebook map: what each notebook teaches, its minutes and measured run times."""
    rows = [f"| [{nb.label}](notebooks/{nb.file}) | {nb.learn} | {nb.teaching} + {nb.exercises} | "
            f"{nb.tiny_seconds} s | {nb.small_seconds} s |" for nb in course.notebooks]
    table = _table("| notebook | what you learn | teach + exercise (min) | tiny (tests) | small (10 M rows) |",
                   "|---|---|---:|---:|---:|", rows)
    return f"{table}\n\n{course.run_times}"


def minutes_table(course: Course) -> str:
    """The instructor guide's minutes per notebook and for the whole course."""
    rows = [f"| {nb.label} | {nb.teaching} + {nb.exercises} | {nb.minutes} |" for nb in course.notebooks]
    total = sum(nb.minutes for nb in course.notebooks)
    span = f"{course.notebooks[0].number}–{course.notebooks[-1].number}"
    return _table("| notebook | teach + exercise | total |", "|---|---:|---:|",
                  [*rows, f"| {span} | | {total} ({duration(total)}) |"])


def schedule_table(schedule: Schedule) -> str:
    """A timed schedule: each row's start, the end, and how much of it is notebooks."""
    hour, minute = schedule.start.split(":")
    clock, width = int(hour) * 60 + int(minute), len(hour)
    lines = []
    for row in schedule.rows:
        lines.append(f"| {_clock(clock, width)} | {row.what} | {row.minutes} |")
        clock += row.minutes
    lines.append(f"| {_clock(clock, width)} | end{f' ({schedule.end})' if schedule.end else ''} | |")
    total = sum(row.minutes for row in schedule.rows)
    content = sum(row.minutes for row in schedule.rows if row.notebook)
    table = _table("| start | what | min |", "|---|---|---:|", lines)
    return f"{table}\n\n{duration(total)} in all, {duration(content)} of notebooks."


def _clock(minutes: int, width: int) -> str:
    hours, rest = divmod(minutes, 60)
    return f"{hours:0{width}d}:{rest:02d}"


def exam_domains_table(course: Course) -> str:
    """The exam map's notebook table: the domains each notebook's header names."""
    rows = [f"| [{nb.label}](../notebooks/{nb.file}) | {'; '.join(nb.exam_domains)} |" for nb in course.notebooks]
    return _table("| notebook | exam domains it touches |", "|---|---|", rows)


def review_domains_table() -> str:
    """The exam map's count of the review bank's questions per exam domain (utils/review_bank.yaml)."""
    from utils.review import load_bank  # pandas comes with it: only when the exam map is written or checked

    counts = load_bank().per_domain()
    rows = [f"| {domain} | {count} |" for domain, count in counts.items()]
    return _table("| exam domain | review questions (09) |", "|---|---:|", [*rows, f"| all | {sum(counts.values())} |"])


def whats_next(course: Course, nb: Notebook) -> str:
    """A notebook's link to the next one, or, for the last, that the course ends here."""
    at = course.notebooks.index(nb)
    if at + 1 < len(course.notebooks):
        following = course.notebooks[at + 1]
        return f"[{following.label}]({following.file}) {following.teaser}"
    first, last = course.notebooks[0].number, nb.number
    return (f"This was the last of the course's {len(course.notebooks)} notebooks ({first} to {last}): "
            "the course ends here. What to do next:")


def markdown_blocks(course: Course) -> dict[Path, dict[str, str]]:
    """Every generated block of the markdown pages: page -> fence key -> text."""
    guide = {"notebook-minutes": minutes_table(course)}
    guide.update({f"schedule-{s.key}": schedule_table(s) for s in course.schedules})
    return {README: {"notebook-map": notebook_map(course)}, GUIDE: guide,
            EXAM_MAP: {"exam-domains": exam_domains_table(course), "review-domains": review_domains_table()}}

