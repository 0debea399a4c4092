"""Exam-style review: the question bank, grading with feedback, and a score per topic and exam domain.

The questions live in one data file shipped with this package (``review_bank.yaml``), not in
notebook code, so they can be validated, reviewed and tested on their own. Each question names
the notebook section it is answerable from, has one right option (or, with ``select: all``, a
stated set of right options) and explains every option: why the right one is right and why each
other one is wrong, with outdated spellings marked as such.

Notebook 09 shows a question with ``quiz.ask(id)`` and grades the learner's letter(s) with
``quiz.answer(id, "b")``. The answer cells ship with an empty answer, so Run All never answers
for the learner; ``quiz.score()`` then reports per topic what is right, what is not answered yet,
and which sections to revisit, with a line per exam domain above it, and ``quiz.progress()`` the
notebooks' exercises beside it. Every question names the one exam domain it prepares for (the bank's
``domains``), so ``docs/exam-map.md`` can count the bank per domain.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import pandas as pd
import yaml

from utils.notebook_grammar import EXAM_DOMAINS, NOTEBOOK_STEM, NUMBERED_SECTION
from utils.progress.report import show as show_progress

BANK_NAME = "review_bank.yaml"
NOT_ANSWERED = "not answered yet"
LETTERS = "abcdef"
ID = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
QUESTION_KEYS = {"id", "topic", "domain", "notebook", "section", "question", "options", "answer", "select"}

OPTION_KEYS = {"text", "why", "outdated"}
SELECT_RULES = {
    "one": "exactly one option is right: type its letter",
    "all": "choose every option that is right (type all their letters, e.g. \"ac\"); "
    "the answer counts only when it is exactly the right set",
}


class BankError(ValueError):
    """The question bank is malformed; the message names the question and what is wrong."""


class AnswerError(ValueError):
    """An answer cannot be read as option letters; the message says how to write one."""

    def _render_traceback_(self) -> list[str]:
        """What IPython shows instead of a traceback (IPython's ``InteractiveShell.showtraceback``
        uses this method when an exception has it): the one line the notebook's intro promises."""
        return [f"{type(self).__name__}: {self}"]


@dataclass(frozen=True)
class Option:
    """One option of a question, with the reason it is right or wrong."""

    letter: str
    text: str
    why: str
    outdated: bool = False


@dataclass(frozen=True)
class Question:
    """One exam-style question and the notebook section it is answerable from."""

    id: str
    topic: str
    domain: str
    notebook: str
    section: str
    text: str
    options: tuple[Option, ...]
    answer: frozenset[str]
    select: str = "one"

    @property
    def letters(self) -> str:
        return "".join(option.letter for option in self.options)

    @property
    def where(self) -> str:
        """The section to read, as a learner finds it: notebook number, section heading."""
        return f"{self.notebook}.ipynb, section {self.section}"

    def parse(self, raw: Any) -> frozenset[str] | None:
        """The option letters in ``raw`` (``None`` when nothing is answered yet).

        Accepts ``"b"``, ``"B"``, ``" b "``; with ``select: all`` also ``"ac"``, ``"a, c"``.
        Anything else raises ``AnswerError`` with one line saying what to type.
        """
        if raw is None:
            return None
        example = f'quiz.answer("{self.id}", "{self.letters[1]}")'
        if not isinstance(raw, str):
            raise AnswerError(f"{self.id}: write the answer as a string of option letters, e.g. {example}; "
                              f"got {raw!r} ({type(raw).__name__})")
        chosen = [c for c in raw.lower() if c not in " ,;"]
        if not chosen:
            return None
        unknown = sorted({c for c in chosen if c not in self.letters})
        if unknown:
            raise AnswerError(f"{self.id}: {', '.join(repr(c) for c in unknown)} is not an option; "
                              f"choose from {', '.join(self.letters)}")
        twice = sorted({c for c in chosen if chosen.count(c) > 1})
        if twice:
            raise AnswerError(f"{self.id}: option {twice[0]!r} is given twice; give each letter once")
        if self.select == "one" and len(chosen) > 1:
            raise AnswerError(f"{self.id}: this question has exactly one right option; type one letter, "
                              f"not {''.join(chosen)!r}")
        return frozenset(chosen)

    def is_right(self, chosen: frozenset[str]) -> bool:
        return chosen == self.answer

    def markdown(self) -> str:
        """The question as the learner sees it: text, options, the selection rule."""
        rule = "" if self.select == "one" else f"\n\n*Select all that apply: {SELECT_RULES['all']}.*"
        options = "\n".join(f"- **{option.letter}**) {option.text}" for option in self.options)
        return f"**{self.id}** · {self.text.strip()}{rule}\n\n{options}"

    def feedback(self, chosen: frozenset[str]) -> str:
        """Why the right option(s) are right and why every other option is wrong."""
        right = "".join(sorted(self.answer))
        if self.is_right(chosen):
            head = f"✓ right ({right})"
        else:
            head = f"✗ not right: you chose {''.join(sorted(chosen))}; the right answer is {right}"
        ordered = sorted(self.options, key=lambda option: (option.letter not in self.answer, option.letter))
        lines = [head]
        for option in ordered:
            verdict = "right" if option.letter in self.answer else "wrong"
            if option.outdated:
                verdict += " (outdated)"
            mark = "  ← your choice" if option.letter in chosen else ""
            lines.append(f"  {option.letter} · {verdict}: {option.why.strip()}{mark}")
        lines.append(f"  Read more: {self.where}")
        return "\n".join(lines)


@dataclass(frozen=True)
class Bank:
    """All questions, the topics they are scored by (in the order the review shows them), and the
    exam domains they prepare for."""

    topics: dict[str, str]
    questions: tuple[Question, ...]
    domains: dict[str, str]

    def per_domain(self) -> dict[str, int]:
        """How many questions prepare for each exam domain, every domain named (0 where none does)."""
        return {name: sum(q.domain == key for q in self.questions) for key, name in self.domains.items()}

    def question(self, question_id: str) -> Question:
        for question in self.questions:
            if question.id == question_id:
                return question
        raise AnswerError(f"no question {question_id!r} in the bank; its ids look like {self.questions[0].id!r}")


class _Markdown:
    """Shown as Markdown in Jupyter and as the same text elsewhere."""

    def __init__(self, text: str) -> None:
        self.text = text

    def _repr_markdown_(self) -> str:
        return self.text

    def __repr__(self) -> str:
        return self.text


def load_bank(path: str | Path | None = None) -> Bank:
    """Read and validate the question bank (by default the one shipped with ``utils``)."""
    if path is None:
        source = resources.files("utils") / BANK_NAME
        name, text = BANK_NAME, source.read_text(encoding="utf-8")
    else:
        name, text = Path(path).name, Path(path).read_text(encoding="utf-8")
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark is not None else ""
        problem = getattr(error, "problem", None) or str(error).splitlines()[0]
        raise BankError(f"{name}: not valid YAML{where}: {problem}") from None
    return parse_bank(data, name)


def parse_bank(data: Any, name: str = BANK_NAME) -> Bank:
    """Validate the bank's structure; every error names the question and what to fix."""
    if not isinstance(data, dict) or set(data) != {"topics", "domains", "questions"}:
        raise BankError(f"{name}: the top level must be a mapping with exactly the keys 'topics', 'domains' "
                        "and 'questions'")
    topics = data["topics"]
    if not isinstance(topics, dict) or not topics or not all(
        isinstance(k, str) and isinstance(v, str) and v.strip() for k, v in topics.items()
    ):
        raise BankError(f"{name}: 'topics' must map each topic key to its title")
    domains = data["domains"]
    if not isinstance(domains, dict) or sorted(map(str, domains.values())) != sorted(EXAM_DOMAINS):
        raise BankError(f"{name}: 'domains' must map a short key to each of the exam's six domains: "
                        f"{', '.join(EXAM_DOMAINS)}")
    if not isinstance(data["questions"], list) or not data["questions"]:
        raise BankError(f"{name}: 'questions' must be a non-empty list")
    questions: list[Question] = []
    seen: set[str] = set()
    for number, entry in enumerate(data["questions"], start=1):
        label = entry.get("id") if isinstance(entry, dict) and isinstance(entry.get("id"), str) else None
        where = f"{name}: question {label!r}" if label else f"{name}: question #{number} (no id)"
        question = _parse_question(entry, topics, domains, where)
        if question.id in seen:
            raise BankError(f"{where}: the id is used twice; ids must be unique")
        seen.add(question.id)
        questions.append(question)
    empty = [key for key in topics if not any(q.topic == key for q in questions)]
    if empty:
        raise BankError(f"{name}: topic {empty[0]!r} has no questions; remove it or add one")
    order = list(topics)
    questions.sort(key=lambda q: order.index(q.topic))  # stable: the file's order within a topic
    order_of_domains = {key: domains[key] for key in sorted(domains, key=lambda k: EXAM_DOMAINS.index(domains[k]))}
    return Bank(dict(topics), tuple(questions), order_of_domains)


def _parse_question(entry: Any, topics: dict[str, str], domains: dict[str, str], where: str) -> Question:
    if not isinstance(entry, dict):
        raise BankError(f"{where}: must be a mapping of {', '.join(sorted(QUESTION_KEYS))}")
    unknown = sorted(set(entry) - QUESTION_KEYS)
    if unknown:
        raise BankError(f"{where}: unknown key {unknown[0]!r}; allowed: {', '.join(sorted(QUESTION_KEYS))}")
    missing = sorted(QUESTION_KEYS - {"select"} - set(entry))
    if missing:
        raise BankError(f"{where}: missing {missing[0]!r}")
    for key in ("id", "topic", "domain", "notebook", "section", "question"):
        if not isinstance(entry[key], str) or not entry[key].strip():
            raise BankError(f"{where}: {key!r} must be non-empty text")
    if not ID.match(entry["id"]):
        raise BankError(f"{where}: the id must be lowercase words joined by '-'")
    if entry["topic"] not in topics:
        raise BankError(f"{where}: topic {entry['topic']!r} is not one of {', '.join(topics)}")
    if entry["domain"] not in domains:
        raise BankError(f"{where}: domain {entry['domain']!r} is not one of {', '.join(domains)}")
    if not NOTEBOOK_STEM.match(entry["notebook"]):
        raise BankError(f"{where}: notebook {entry['notebook']!r} is not a notebook name like '03_groupby_sum'")
    if not NUMBERED_SECTION.match(entry["section"]):
        raise BankError(f"{where}: section {entry['section']!r} is not a heading like '2 · Title'")
    select = entry.get("select", "one")
    if select not in SELECT_RULES:
        raise BankError(f"{where}: select must be 'one' or 'all', not {select!r}")
    options = _parse_options(entry["options"], where)
    letters = [option.letter for option in options]
    answer = entry["answer"]
    given = [answer] if isinstance(answer, str) else answer
    if not isinstance(given, list) or not given or not all(isinstance(a, str) for a in given):
        raise BankError(f"{where}: 'answer' must be an option letter (or, with select: all, a list of letters)")
    if select == "one" and len(given) != 1:
        raise BankError(f"{where}: has {len(given)} right options; a single-select question needs exactly one "
                        "(or set select: all)")
    wrong = [a for a in given if a not in letters]
    if wrong:
        raise BankError(f"{where}: answer {wrong[0]!r} is not one of its options {', '.join(letters)}")
    if len(set(given)) != len(given) or len(given) == len(letters):
        raise BankError(f"{where}: the answer must name distinct letters and leave at least one option wrong")
    outdated_right = [o.letter for o in options if o.outdated and o.letter in given]
    if outdated_right:
        raise BankError(f"{where}: option {outdated_right[0]!r} is marked outdated but is a right answer")
    return Question(entry["id"], entry["topic"], entry["domain"], entry["notebook"], entry["section"],
                    entry["question"],
                    options, frozenset(given), select)


def _parse_options(raw: Any, where: str) -> tuple[Option, ...]:
    if not isinstance(raw, dict) or not 3 <= len(raw) <= len(LETTERS):
        raise BankError(f"{where}: 'options' must map 3 to {len(LETTERS)} letters to options")
    if list(raw) != list(LETTERS[: len(raw)]):
        raise BankError(f"{where}: options must be lettered {', '.join(LETTERS[: len(raw)])} in order, "
                        f"not {', '.join(map(str, raw))}")
    options = []
    for letter, option in raw.items():
        if not isinstance(option, dict):
            raise BankError(f"{where}: option {letter!r} must be a mapping with 'text' and 'why'")
        unknown = sorted(set(option) - OPTION_KEYS)
        if unknown:
            raise BankError(f"{where}: option {letter!r} has an unknown key {unknown[0]!r}")
        for key, meaning in (("text", "text"), ("why", "explanation")):
            if not isinstance(option.get(key), str) or not option[key].strip():
                raise BankError(f"{where}: option {letter!r} has no {meaning} ({key!r})")
        outdated = option.get("outdated", False)
        if not isinstance(outdated, bool):
            raise BankError(f"{where}: option {letter!r}: 'outdated' must be true or false")
        options.append(Option(letter, option["text"].strip(), option["why"].strip(), outdated))
    return tuple(options)


class Quiz:
    """The learner's side: show questions, grade answers with feedback, score per topic."""

    def __init__(self, bank: Bank | None = None) -> None:
        self.bank = bank if bank is not None else load_bank()
        self.answers: dict[str, frozenset[str]] = {}

    def __repr__(self) -> str:
        return (f"{len(self.bank.questions)} questions in {len(self.bank.topics)} topics; "
                f"{len(self.answers)} answered")

    def ask(self, question_id: str) -> _Markdown:
        """The question and its options, for display."""
        return _Markdown(self.bank.question(question_id).markdown())

    def answer(self, question_id: str, raw: Any) -> None:
        """Grade ``raw`` and print the feedback, or "not answered yet" when it is empty.

        An empty answer also forgets an earlier one, so the score always matches the cells. Nothing
        is returned, so the cell shows the feedback only.
        """
        question = self.bank.question(question_id)
        chosen = question.parse(raw)
        if chosen is None:
            self.answers.pop(question.id, None)
            print(f"{question.id}: {NOT_ANSWERED}: type your option letter between the quotes, then run this cell")
            return
        self.answers[question.id] = chosen
        print(question.feedback(chosen))

    def result(self, question_id: str) -> bool | None:
        """Whether the recorded answer to a question is right (``None``: not answered yet)."""
        question = self.bank.question(question_id)
        chosen = self.answers.get(question.id)
        return None if chosen is None else question.is_right(chosen)

    def score(self) -> pd.DataFrame:
        """Right answers per topic, and the sections to revisit for every wrong one."""
        rows = []
        for key, title in self.bank.topics.items():
            asked = [q for q in self.bank.questions if q.topic == key]
            answered = [q for q in asked if q.id in self.answers]
            wrong = [q for q in answered if not q.is_right(self.answers[q.id])]
            right = len(answered) - len(wrong)
            revisit = list(dict.fromkeys(f"{q.notebook[:2]} §{NUMBERED_SECTION.match(q.section).group(1)}"
                                         for q in wrong))
            rows.append({
                "topic": title,
                "questions": len(asked),
                "answered": len(answered),
                "right": right,
                "score": f"{right}/{len(answered)}" if answered else NOT_ANSWERED,
                "revisit": ", ".join(revisit),
            })
        table = pd.DataFrame(rows).set_index("topic")
        print(self._summary(table))
        return table

    def progress(self) -> pd.DataFrame:
        """The exercises of notebooks 00-08 beside the review's score: right, wrong and not attempted
        per notebook, and what to revisit, from the outcomes the checks recorded (``utils.progress``)."""
        return show_progress()

    def _per_domain(self) -> str:
        """Right of answered per exam domain, for the domains the learner answered questions of."""
        parts = []
        for key, title in self.bank.domains.items():
            answered = [q for q in self.bank.questions if q.domain == key and q.id in self.answers]
            if answered:
                right = sum(q.is_right(self.answers[q.id]) for q in answered)
                parts.append(f"{title} {right}/{len(answered)}")
        return "; ".join(parts)

    def _summary(self, table: pd.DataFrame) -> str:
        answered, right, total = table["answered"].sum(), table["right"].sum(), table["questions"].sum()
        if answered == 0:
            return f"{NOT_ANSWERED}: answer the questions above (quiz.answer cells), then run this cell again"
        lines = [f"{right} of {answered} answered questions right ({total - answered} of {total} not answered yet)",
                 "By exam domain: " + self._per_domain()]
        wrong = [q for q in self.bank.questions if q.id in self.answers and not q.is_right(self.answers[q.id])]
        if wrong:
            lines.append("Revisit:")
            lines += list(dict.fromkeys(f"  {q.where}" for q in wrong))
        return "\n".join(lines)
