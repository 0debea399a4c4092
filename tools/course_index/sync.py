"""Compare the repository with the index (``check``) and rewrite the generated text (``write``)."""

from __future__ import annotations

import re
from pathlib import Path

import nbformat

from tools.course_index.fences import FENCE, drift, fenced, read_blocks, replace_block
from tools.course_index.model import EXAM_DOMAINS, INDEX, Course, CourseIndexError, Notebook, load_course
from tools.course_index.render import markdown_blocks, whats_next
from utils.base.paths import REPO_ROOT
from utils.notebook_grammar import HEADER_FIELDS, WHATS_NEXT_HEADING, course_notebooks


def _whats_next_cell(nb) -> int | None:
    return next((i for i, cell in enumerate(nb.cells) if cell.cell_type == "markdown"
                 and any(line.strip() == WHATS_NEXT_HEADING for line in cell.source.splitlines())), None)


def _with_whats_next(source: str, body: str) -> str:
    """The cell's source with the fenced block replaced, or put right under the heading."""
    if FENCE.search(source):
        return replace_block(source, "whats-next", body)
    lines = source.splitlines(keepends=True)
    at = next(i for i, line in enumerate(lines) if line.strip() == WHATS_NEXT_HEADING)
    rest = "".join(lines[at + 1:]).lstrip("\n")
    head = "".join(lines[:at + 1]).rstrip("\n")
    return f"{head}\n\n{fenced('whats-next', body)}" + (f"\n\n{rest}" if rest else "")


def header_fields(source: str) -> dict[str, str]:
    """The header cell's bold fields (``**Time.** ...``), each up to the next blank line."""
    fields = {}
    for name in HEADER_FIELDS:
        match = re.search(rf"\*\*{name}\.\*\*(.*?)(?:\n\s*\n|$)", source, re.S)
        fields[name] = " ".join(match.group(1).split()) if match else ""
    return fields


def mentioned_notebooks(text: str) -> set[str]:
    """Notebook numbers a Prerequisites line names: `01_cluster_setup`, `01 · Cluster setup`, 00 to 08."""
    found = set(re.findall(r"\b(\d\d)(?=_[a-z]| · )", text))
    for first, last in re.findall(r"\b(\d\d) to (\d\d)\b", text):
        found.update(f"{i:02d}" for i in range(int(first), int(last) + 1))
    return found


def header_problems(nb: Notebook, source: str) -> list[str]:
    """Where a notebook's hand-written header disagrees with its index entry."""
    problems = []
    first = source.splitlines()[0] if source else ""
    if first != f"# {nb.label}":
        problems.append(f"title is {first!r}; {INDEX} says '# {nb.label}'")
    fields = header_fields(source)
    minutes = [int(m) for m in re.findall(r"(\d+) minutes", fields["Time"])[:2]]
    if minutes != [nb.teaching, nb.exercises]:
        problems.append(f"**Time.** says {minutes} minutes (teaching, exercises); {INDEX} says "
                        f"[{nb.teaching}, {nb.exercises}]")
    named = {d for d in EXAM_DOMAINS if d in fields["Exam domains"]}
    if named != set(nb.exam_domains):
        problems.append(f"**Exam domains.** names {sorted(named)}; {INDEX} says {sorted(nb.exam_domains)}")
    prerequisites = mentioned_notebooks(fields["Prerequisites"])
    if prerequisites != set(nb.prerequisites):
        problems.append(f"**Prerequisites.** names notebooks {sorted(prerequisites)}; {INDEX} says "
                        f"{sorted(nb.prerequisites)}")
    return problems


def notebook_problems(root: Path, course: Course, nb: Notebook) -> list[str]:
    where = f"notebooks/{nb.file}"
    notebook = nbformat.read(root / where, as_version=4)
    problems = [f"{where}: {p}" for p in header_problems(nb, notebook.cells[0].source if notebook.cells else "")]
    at = _whats_next_cell(notebook)
    if at is None:
        return [*problems, f"{where}: no markdown cell with '{WHATS_NEXT_HEADING}'"]
    found = read_blocks(notebook.cells[at].source)
    unknown = sorted(set(found) - {"whats-next"})
    problems += [f"{where}: unknown generated block ({key})" for key in unknown]
    return problems + drift(where, "whats-next", found.get("whats-next"), whats_next(course, nb))


def file_problems(root: Path, course: Course) -> list[str]:
    """A notebook on disk that the index lacks, or an index entry without its notebook."""
    on_disk = {p.name for p in course_notebooks(root / "notebooks")}
    listed = {nb.file for nb in course.notebooks}
    return ([f"notebooks/{name} is not in {INDEX}" for name in sorted(on_disk - listed)]
            + [f"{INDEX} lists {name}, which is not in notebooks/" for name in sorted(listed - on_disk)])



def check(root: Path = REPO_ROOT) -> list[str]:
    """Everything that disagrees with the index, one line each (empty: nothing drifted)."""
    try:
        course = load_course(root / INDEX)
    except CourseIndexError as error:
        return [f"{INDEX}: {error}"]
    problems = file_problems(root, course)
    for page, blocks in markdown_blocks(course).items():
        found = read_blocks((root / page).read_text())
        problems += [f"{page}: unknown generated block ({key})" for key in sorted(set(found) - set(blocks))]
        for key, want in blocks.items():
            problems += drift(str(page), key, found.get(key), want)
    for nb in course.notebooks:
        if (root / "notebooks" / nb.file).is_file():
            problems += notebook_problems(root, course, nb)
    return problems


def write(root: Path = REPO_ROOT) -> list[Path]:
    """Rewrite every generated block that differs; the files changed. Pages need their fences
    already; a notebook gets its fence under '## What's next' when it has none."""
    course = load_course(root / INDEX)
    changed = []
    for page, blocks in markdown_blocks(course).items():
        text = (root / page).read_text()
        new = text
        for key, body in blocks.items():
            new = replace_block(new, key, body)
        if new != text:
            (root / page).write_text(new)
            changed.append(page)
    for nb in course.notebooks:
        path = root / "notebooks" / nb.file
        if path.is_file() and _write_whats_next(path, whats_next(course, nb)):
            changed.append(path.relative_to(root))
    return changed


def _write_whats_next(path: Path, body: str) -> bool:
    """Load, change the one cell, save: the notebook is out of hand only for this moment."""
    notebook = nbformat.read(path, as_version=4)
    at = _whats_next_cell(notebook)
    if at is None:
        return False
    new = _with_whats_next(notebook.cells[at].source, body)
    if new == notebook.cells[at].source:
        return False
    notebook.cells[at].source = new
    nbformat.write(notebook, path)
    return True
