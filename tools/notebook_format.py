"""Enforce the course's notebook template (COURSE_DESIGN.md section 6, CONTRIBUTING.md), and fix
what can be fixed.

    python -m tools.notebook_format notebooks/*.ipynb            # report problems, exit 1 if any
    python -m tools.notebook_format --fix notebooks/*.ipynb      # strip outputs, tidy metadata
    python -m tools.notebook_format --execute notebooks/01_*.ipynb  # run it, store NBVAL_CHECK_OUTPUT outputs

Only cells marked ``# NBVAL_CHECK_OUTPUT`` keep outputs in git: they are the expected results
nbval compares against; every other output varies (timings, ports) and is stripped.

The review notebook (``NN_review.ipynb``) is a quiz, not a lesson, and has its own rules
(``check_review``): the same metadata and header, a setup cell that creates ``review.Quiz()``, one
``quiz.ask(id)`` cell followed by one ``quiz.answer(id, "")`` cell per question of the bank (shipped
empty, so Run All never answers), under ``## N · Topic`` headings in the bank's order, then
``## Your score`` with ``quiz.score()`` and ``## What's next``; no exercises and no cluster.

An exercise is four cells: a markdown prompt, a code cell holding only ``# Your code here``
comments (so Run All never writes an answer for the learner), a markdown cell with the solution
in a collapsed ``<details>`` block (one click away, never executed by Run All, and the single
source the tests execute), and a check cell that calls ``checks.grade(...)``.

A lesson's reading must fit its teaching minutes: at most ``MAX_OPEN_WORDS`` words of markdown
outside collapsed ``<details>`` blocks; reference detail goes into
``<details><summary>Going further: ...</summary>`` blocks.
"""

from __future__ import annotations

import argparse
import json
import platform
import re
import sys
from pathlib import Path

import nbformat

from utils.notebook_grammar import (
    ANSWER_MARK,
    CLOSING_HEADING,
    DETAILS,
    EXERCISE_HEADING,
    EXERCISE_PREFIX,
    FOOTER_SECTIONS,
    GRADE_PREFIX,
    HEADER_FIELDS,
    REVIEW_FILE,
    SECTION,
    TEMPLATE_NAME,
    TITLE,
    WHATS_NEXT_HEADING,
    cell_source,
    is_answer_cell,
    solution_code,
)

CHECK_MARK = "# NBVAL_CHECK_OUTPUT"
ASK = re.compile(r'^(# NBVAL_CHECK_OUTPUT\n)?quiz\.ask\("([^"]+)"\)$')
ANSWER = re.compile(r'^quiz\.answer\("([^"]+)", (.*?)\)(\s*#.*)?$')
QUESTION_COUNT = re.compile(r"\b(\d+) questions\b")  # the review's header: "answer N questions on ..."
REVIEW_SECTION = re.compile(r"^## (\d+ · \S.*|Your score|What's next)$")
HEADER_SECTIONS = tuple(f"**{field}.**" for field in HEADER_FIELDS)
# The last cell of a lesson: the cluster stays up after Run All (the dashboard link, the Dask sidebar
# and the exercises need it), and closing it is the learner's explicit step.
CLOSING_CELL = f"""{CLOSING_HEADING}

The cluster keeps running after Run All, so the dashboard link at the top, the Dask sidebar and
your exercises still have it. When you have finished, close it (shutting the kernel down,
*Kernel → Shut Down Kernel*, stops it too):

```python
utils.shutdown(client)
```"""
# A lesson's reading must fit its teaching minutes: reference detail goes into collapsed
# "Going further" blocks (<details><summary>Going further: ...</summary> ... </details>).
MAX_OPEN_WORDS = 3000
# What `make lab` installs (Makefile: ipykernel install --name python3 --display-name ...).
KERNELSPEC = {"display_name": "Python 3 (course)", "language": "python", "name": "python3"}
# What the course kernel (ipykernel) reports about its language, which JupyterLab writes into the
# notebook when the kernel starts; plus "version", the kernel's Python version. Lab leaves the
# metadata alone (and the notebook unmodified) only when all of it is equal, so it is stored whole;
# `make lab` (tools.lab_setup) sets the version to the learner's kernel before Lab opens anything.
LANGUAGE_INFO = {
    "codemirror_mode": {"name": "ipython", "version": 3},
    "file_extension": ".py",
    "mimetype": "text/x-python",
    "name": "python",
    "nbconvert_exporter": "python",
    "pygments_lexer": "ipython3",
}
PYTHON_VERSION = re.compile(r"^\d+\.\d+\.\d+$")
FORBIDDEN = (
    (re.compile(r"sys\.path"), "manipulates sys.path (import the installed `utils` instead)"),
    (re.compile(r"^(import|from) (cudf|dask_cudf)\b", re.M), "imports cudf at top level (guard it)"),
    (re.compile(r"client\.get_task_stream\(\)\s*as"), "uses client.get_task_stream() as a context manager"),
    (re.compile(r"dask_cudf\.io\.read_csv|jit_unspill|explicit_comms"), "teaches a deprecated/removed API"),
    (re.compile(r"\.expr\b|\._meta\b|course_backend"), "reaches into a private attribute (use a public API)"),
    (re.compile(r"\.explain\("), "calls .explain(), which needs graphviz (teach .pprint() / utils.plans)"),
)


def check_notebook(path: Path) -> list[str]:
    """Return the template violations of one notebook (empty when it conforms)."""
    nb = nbformat.read(path, as_version=4)
    problems = _check_metadata(nb)
    cells = nb.cells
    if REVIEW_FILE.match(path.name):
        return [f"{path.name}: {p}" for p in problems + check_review(path, cells)]
    if len(cells) < 4:
        return [f"{path.name}: only {len(cells)} cells"]
    problems += _check_header(path, cells)
    problems += _check_headings(cells)
    problems += _check_footer(cells)
    problems += _check_code_cells(cells)
    if path.name != TEMPLATE_NAME:
        problems += _check_reading(cells)
    return [f"{path.name}: {p}" for p in problems]


def open_words(cells) -> int:
    """Words of markdown a learner reads without opening a collapsed ``<details>`` block."""
    return sum(len(re.findall(r"\S+", DETAILS.sub("", cell_source(c)))) for c in cells if c.cell_type == "markdown")


def _check_reading(cells) -> list[str]:
    words = open_words(cells)
    if words > MAX_OPEN_WORDS:
        return [f"{words} words of markdown outside collapsed <details> blocks (at most {MAX_OPEN_WORDS}: "
                "move reference detail into a 'Going further' block)"]
    return []


def _check_metadata(nb) -> list[str]:
    problems = []
    if (nb.nbformat, nb.nbformat_minor) != (4, 5):
        problems.append(f"nbformat {nb.nbformat}.{nb.nbformat_minor}; use 4.5 (cell ids)")
    if any("id" not in cell for cell in nb.cells):
        problems.append("cells without ids (run --fix)")
    if dict(nb.metadata.get("kernelspec", {})) != KERNELSPEC:
        problems.append(f"kernelspec {dict(nb.metadata.get('kernelspec', {}))} is not the course kernel {KERNELSPEC}")
    info = dict(nb.metadata.get("language_info", {}))
    version = info.pop("version", None)
    if info != LANGUAGE_INFO or not isinstance(version, str) or not PYTHON_VERSION.match(version):
        problems.append("language_info differs from what the course kernel reports (run --fix)")
    return problems


def _check_title(path: Path, cells) -> list[str]:
    problems = []
    head = cell_source(cells[0])
    title = TITLE.match(head.splitlines()[0]) if cells[0].cell_type == "markdown" and head else None
    if not title:
        problems.append("first cell must be markdown starting '# NN · Topic'")
    elif path.name != TEMPLATE_NAME and not path.name.startswith(title.group(1) + "_"):
        problems.append(f"title number {title.group(1)} does not match the file name")
    for section in HEADER_SECTIONS:
        if section not in head:
            problems.append(f"header cell lacks '{section}'")
    return problems


def _check_header(path: Path, cells) -> list[str]:
    problems = _check_title(path, cells)
    setup = cells[1]
    if setup.cell_type != "code" or "utils" not in cell_source(setup) or "start_client(" not in cell_source(setup):
        problems.append("second cell must be the one setup cell: imports + utils.start_client(...)")
    return problems


def _check_headings(cells) -> list[str]:
    problems = []
    for i, cell in enumerate(cells):
        if cell.cell_type != "markdown":
            continue
        for line in cell_source(cell).splitlines():
            if line.startswith("## ") and not SECTION.match(line):
                problems.append(f"cell {i}: section heading {line!r} is not '## N · Title'")
            if line.startswith(EXERCISE_PREFIX) and not EXERCISE_HEADING.match(line):
                problems.append(f"cell {i}: exercise heading {line!r} is not '### Exercise N · Title'")
    return problems


def _check_footer(cells) -> list[str]:
    problems = []
    markdown = [(i, cell_source(c)) for i, c in enumerate(cells) if c.cell_type == "markdown"]
    positions = []
    for section in FOOTER_SECTIONS:
        hits = [i for i, text in markdown if any(line.strip() == section for line in text.splitlines())]
        if not hits:
            problems.append(f"missing a '{section}' heading")
        positions.append(hits[0] if hits else -1)
    if all(p >= 0 for p in positions) and positions != sorted(positions):
        problems.append("footer sections must come in the order Summary, Review questions, What's next")
    last = cells[-1] if cells else None
    if last is None or last.cell_type != "markdown" or not cell_source(last).startswith(CLOSING_HEADING):
        problems.append(f"the last cell must be the markdown '{CLOSING_HEADING}' (tools.notebook_format.CLOSING_CELL)")
    elif "utils.shutdown(client)" not in cell_source(last):
        problems.append(f"'{CLOSING_HEADING}' must show how to close the cluster: utils.shutdown(client)")
    after_next = [i for i, text in enumerate(cell_source(c) for c in cells) if text.startswith(WHATS_NEXT_HEADING)]
    if after_next and any(c.cell_type == "code" for c in cells[after_next[-1]:]):
        problems.append("no code cell after What's next: Run All must leave the cluster running for the exercises")
    return problems


def _check_code_cells(cells) -> list[str]:
    problems = []
    answers = 0
    for i, cell in enumerate(cells):
        if cell.cell_type != "code":
            continue
        src = cell_source(cell)
        if cell.get("metadata", {}).get("jupyter", {}).get("source_hidden"):
            problems.append(f"cell {i} is a hidden code cell: Run All would execute it (put solutions in <details>)")
        if is_answer_cell(cell):
            answers += 1
            problems += _check_exercise(cells, i)
        if cell.get("outputs") and CHECK_MARK not in src:
            problems.append(f"cell {i} has stored outputs but is not marked {CHECK_MARK}")
        if GRADE_PREFIX in src and CHECK_MARK in src:
            problems.append(f"cell {i}: a check cell's output depends on the learner; do not mark it {CHECK_MARK}")
        for pattern, why in FORBIDDEN:
            if pattern.search(src):
                problems.append(f"cell {i} {why}")
    if answers == 0:
        problems.append(f"no exercise (a code cell starting '{ANSWER_MARK}')")
    return problems


def _check_exercise(cells, i: int) -> list[str]:
    """An exercise is: markdown prompt, comment-only answer cell, <details> solution, grade call."""
    problems = []
    if i == 0 or cells[i - 1].cell_type != "markdown":
        problems.append(f"exercise cell {i} needs a markdown prompt right before it")
    code_lines = [line for line in cell_source(cells[i]).splitlines()
                  if line.strip() and not line.lstrip().startswith("#")]
    if code_lines:
        problems.append(f"exercise cell {i} must hold only comments: Run All would run {code_lines[0]!r}")
    solution = cells[i + 1] if i + 1 < len(cells) else None
    if solution is None or solution.cell_type != "markdown" or solution_code(cell_source(solution)) is None:
        problems.append(f"exercise cell {i} must be followed by a markdown <details><summary>Solution block")
    check = cells[i + 2] if i + 2 < len(cells) else None
    if check is None or check.cell_type != "code" or GRADE_PREFIX not in cell_source(check):
        problems.append(f"exercise cell {i} must be followed (after its solution) by a {GRADE_PREFIX}...) cell")
    return problems


def check_review(path: Path, cells, bank=None) -> list[str]:
    """The review notebook's rules: every bank question asked and answered once, shipped empty."""
    from utils.review import load_bank

    bank = bank if bank is not None else load_bank()
    if len(cells) < 2:
        return [f"only {len(cells)} cells"]
    problems = _check_title(path, cells)
    if cells[1].cell_type != "code" or "review.Quiz(" not in cell_source(cells[1]):
        problems.append("second cell must be the setup cell creating quiz = review.Quiz()")
    shown: list[tuple[str, str]] = []  # (section heading, question id), in notebook order
    answered: list[str] = []
    heading, score_at, last_answer, footer, progress_at = "", None, -1, {}, []
    for i, cell in enumerate(cells):
        src = cell_source(cell).strip()
        if cell.cell_type == "markdown":
            for line in src.splitlines():
                if line.startswith("## ") and not REVIEW_SECTION.match(line):
                    problems.append(f"cell {i}: section heading {line!r} is not '## N · Topic', "
                                    "'## Your score' or '## What\'s next'")
                elif line.startswith("## "):
                    heading = line[3:]
                    footer.setdefault(heading, i)
            continue
        if cell.get("metadata", {}).get("jupyter", {}).get("source_hidden"):
            problems.append(f"cell {i} is a hidden code cell")
        if cell.get("outputs") and CHECK_MARK not in src:
            problems.append(f"cell {i} has stored outputs but is not marked {CHECK_MARK}")
        for pattern, why in FORBIDDEN:
            if pattern.search(src):
                problems.append(f"cell {i} {why}")
        if i == 1:
            continue
        ask, answer = ASK.match(src), ANSWER.match(src)
        if ask:
            shown.append((heading, ask.group(2)))
        elif answer:
            if answer.group(2) != '""':
                problems.append(f"cell {i}: answer cell for {answer.group(1)!r} ships the answer "
                                f"{answer.group(2)}; ship it empty (\"\") so Run All never answers")
            if not shown or shown[-1][1] != answer.group(1) or cells[i - 1].cell_type != "code":
                problems.append(f"cell {i}: the answer cell for {answer.group(1)!r} must follow its quiz.ask cell")
            answered.append(answer.group(1))
            last_answer = i
        elif src == "quiz.score()":
            score_at = i
        elif src == "quiz.progress()":  # the exercises' progress (utils.progress) beside the score
            progress_at.append(i)
        else:
            problems.append(f"cell {i}: a review code cell is quiz.ask(id), quiz.answer(id, \"\"), quiz.score() "
                            "or quiz.progress(); "
                            f"found {src.splitlines()[0] if src else 'an empty cell'!r}")
    problems += _check_review_coverage(bank, shown, answered)
    said = QUESTION_COUNT.search(cell_source(cells[0]))
    if said and int(said.group(1)) != len(bank.questions):
        problems.append(f"the header says {said.group(1)} questions; the bank has {len(bank.questions)}")
    if score_at is None:
        problems.append("no quiz.score() cell (the score per topic at the end)")
    elif "Your score" not in footer or not last_answer < footer["Your score"] < score_at:
        problems.append("quiz.score() must come after every answer, under '## Your score'")
    if "What's next" not in footer or (score_at is not None and footer["What's next"] < score_at):
        problems.append("missing a '## What's next' section after the score")
    if len(progress_at) > 1 or (progress_at and (score_at is None or progress_at[0] != score_at + 1)):
        problems.append("quiz.progress() may come once, as the cell right after quiz.score()")
    return problems


def _check_review_coverage(bank, shown: list[tuple[str, str]], answered: list[str]) -> list[str]:
    problems = []
    ids = [q.id for q in bank.questions]
    asked = [question_id for _, question_id in shown]
    for question_id in dict.fromkeys(asked + answered):
        if question_id not in ids:
            problems.append(f"question {question_id!r} is not in the bank")
    for question_id in ids:
        if asked.count(question_id) != 1 or answered.count(question_id) != 1:
            problems.append(f"question {question_id!r} is asked {asked.count(question_id)} and answered "
                            f"{answered.count(question_id)} times; each bank question once")
    if not problems and asked != ids:
        problems.append("questions are not in the bank's order (grouped by topic)")
    titles = list(bank.topics.values())
    for heading, question_id in shown:
        if question_id in ids:
            title = bank.topics[bank.question(question_id).topic]
            expected = f"{titles.index(title) + 1} · {title}"
            if heading != expected:
                problems.append(f"question {question_id!r} is under {heading!r}, not its topic's heading {expected!r}")
    return problems


def fix_notebook(path: Path, keep_checked_outputs: bool = True) -> None:
    """Strip outputs (except checked cells), execution counts and volatile metadata; add cell ids."""
    nb = nbformat.read(path, as_version=4)
    nb.nbformat, nb.nbformat_minor = 4, 5
    version = nb.metadata.get("language_info", {}).get("version")
    if not isinstance(version, str) or not PYTHON_VERSION.match(version):
        version = platform.python_version()
    nb.metadata = {"kernelspec": dict(KERNELSPEC), "language_info": {**LANGUAGE_INFO, "version": version}}
    count = 0
    for cell in nb.cells:
        if "id" not in cell:
            from nbformat.corpus.words import generate_corpus_id

            cell["id"] = generate_corpus_id()
        if cell.cell_type != "code":
            continue
        count += 1
        checked = keep_checked_outputs and CHECK_MARK in cell_source(cell) and bool(cell.outputs)
        # nbval treats a cell without an execution count as never run and refuses its outputs.
        cell.execution_count = count if checked else None
        cell.outputs = [_clean_output(o, count) for o in cell.outputs] if checked else []
        cell.metadata = {k: v for k, v in cell.metadata.items() if k in ("tags",)}
    nbformat.validate(nb)
    nbformat.write(nb, path)


def _clean_output(output, count: int):
    if output.get("output_type") == "execute_result":
        output["execution_count"] = count
    return output


def execute_notebook(path: Path, timeout: int = 900) -> None:
    """Run the notebook in this environment and store the outputs of checked cells only."""
    from nbclient import NotebookClient

    nb = nbformat.read(path, as_version=4)
    resources = {"metadata": {"path": str(path.parent)}}
    NotebookClient(nb, timeout=timeout, kernel_name="python3", resources=resources).execute()
    nbformat.write(nb, path)
    fix_notebook(path)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.notebook_format", description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="+", type=Path)
    parser.add_argument("--fix", action="store_true", help="strip unchecked outputs and tidy metadata")
    parser.add_argument("--execute", action="store_true", help="execute, then store checked outputs")
    args = parser.parse_args(argv)
    problems = []
    for path in args.paths:
        if not path.is_file():
            print(f"error: {path} is not a file", file=sys.stderr)
            return 2
        try:
            json.loads(path.read_text(encoding="utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as error:
            print(f"error: {path} is not a notebook (not JSON: {error}); restore it with git checkout -- {path}",
                  file=sys.stderr)
            return 2
        if args.execute:
            execute_notebook(path)
        elif args.fix:
            fix_notebook(path)
        problems += check_notebook(path)
    for problem in problems:
        print(problem)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
