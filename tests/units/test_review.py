"""The review's question bank is well-formed and answerable from the notebooks, the grader refuses
malformed answers, grades wrong answers wrong and scores per topic, and notebook 09 never answers
for the learner.

Expected values come from the bank file read as plain YAML, from small banks written here, and from
the notebooks' own headings; never from the grader's output."""

from __future__ import annotations

import re
import tomllib
from importlib import resources
from pathlib import Path

import nbformat
import pytest
import yaml
from nbclient import NotebookClient

from utils.base.paths import REPO_ROOT
from utils.review import BANK_NAME, NOT_ANSWERED, AnswerError, BankError, Quiz, load_bank, parse_bank

NOTEBOOK_DIR = REPO_ROOT / "notebooks"
RAW = yaml.safe_load((REPO_ROOT / "utils" / BANK_NAME).read_text(encoding="utf-8"))
QUESTIONS = RAW["questions"]
IDS = [q["id"] for q in QUESTIONS]

# The topics issue 13 asks for, as words each topic title must contain.
REQUIRED_TOPICS = [
    ("cluster", "roles"), ("worker per gpu", "device"), ("partitions", "blocksize", "lazy"), ("persist", "compute"),
    ("query plans", "projection", "pushdown"), ("groupby", "split_out", "shuffle"), ("joins", "broadcast", "sorting"),
    ("memory", "spilling", "rmm"), ("profiling", "dashboard", "task stream", "performance report"),
    ("fault tolerance",), ("tcp", "ucx", "deployment"), ("cudf.pandas", "dask"), ("xgboost", "joblib", "cuml"),
]
# Outdated spellings and removed features (COURSE_DESIGN.md, notebooks 02, 07, 08): an option that
# shows one must be marked outdated, and can never be the right answer.
OUTDATED = re.compile(r"gpu_hist|DaskDeviceQuantileDMatrix|jit.unspill|explicit.comms|ucx-py|UCX-Py|import ucp|"
                      r"ucx-old|dask_cudf\.io\.read_csv|DASK_UCX__", re.I)


# ---------------------------------------------------------------- the shipped bank

def test_the_bank_is_package_data():
    """An installed `utils` carries the bank: pyproject names it, and the package resource exists."""
    config = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())
    assert BANK_NAME in config["tool"]["setuptools"]["package-data"]["utils"]
    assert (resources.files("utils") / BANK_NAME).is_file()
    assert not (REPO_ROOT / "data" / BANK_NAME).exists()


def test_the_bank_loads_and_is_big_enough():
    bank = load_bank()
    assert len(bank.questions) == len(QUESTIONS) >= 40
    assert len(set(IDS)) == len(IDS), "ids must be unique"


@pytest.mark.parametrize("words", REQUIRED_TOPICS, ids=[w[0] for w in REQUIRED_TOPICS])
def test_every_required_topic_has_questions(words):
    titles = {key: title.lower() for key, title in RAW["topics"].items()}
    matching = [key for key, title in titles.items() if all(word in title for word in words)]
    assert matching, f"no topic title contains all of {words}: {list(titles.values())}"
    assert sum(q["topic"] == matching[0] for q in QUESTIONS) >= 3


@pytest.mark.parametrize("raw", QUESTIONS, ids=IDS)
def test_every_question_has_one_right_option_or_a_stated_rule(raw):
    answer = raw["answer"]
    if raw.get("select", "one") == "one":
        assert isinstance(answer, str) and answer in raw["options"], "exactly one right option, by its letter"
    else:
        assert raw["select"] == "all" and isinstance(answer, list) and 1 <= len(answer) < len(raw["options"])
    assert all(option["why"].strip() for option in raw["options"].values()), "every option needs an explanation"


@pytest.mark.parametrize("raw", QUESTIONS, ids=IDS)
def test_outdated_spellings_are_marked_and_never_right(raw):
    right = set(raw["answer"]) if isinstance(raw["answer"], list) else {raw["answer"]}
    for letter, option in raw["options"].items():
        if OUTDATED.search(option["text"]) or option.get("outdated"):
            assert option.get("outdated") is True, f"option {letter} shows an outdated spelling: mark it outdated"
            assert option["why"].startswith("Outdated"), f"option {letter}: the explanation must say it is outdated"
            assert letter not in right


def test_the_design_docs_deprecated_apis_appear_as_distractors():
    texts = " ".join(o["text"] for q in QUESTIONS for o in q["options"].values() if o.get("outdated"))
    for spelling in ("dask_cudf.io.read_csv", "gpu_hist", "DaskDeviceQuantileDMatrix", "explicit-comms",
                     "JIT-unspill|jit_unspill", "ucx-py"):
        assert re.search(spelling, texts), f"no outdated distractor shows {spelling}"


def _headings(path: Path) -> list[str]:
    nb = nbformat.read(path, as_version=4)
    return [line[3:] for cell in nb.cells if cell.cell_type == "markdown"
            for line in cell.source.splitlines() if line.startswith("## ")]


@pytest.mark.parametrize("raw", QUESTIONS, ids=IDS)
def test_every_question_refers_to_a_section_that_exists(raw):
    path = NOTEBOOK_DIR / f"{raw['notebook']}.ipynb"
    if not path.exists():
        same_number = sorted(p.name for p in NOTEBOOK_DIR.glob(f"{raw['notebook'][:2]}_*.ipynb"))
        assert not same_number, f"{raw['notebook']} does not exist, but {same_number} does: fix the name"
        pytest.skip(f"notebook {raw['notebook']}.ipynb is not in notebooks/ yet: section "
                    f"{raw['section']!r} is checked once it is added")
    assert raw["section"] in _headings(path), f"{path.name} has no section '## {raw['section']}'"


# ---------------------------------------------------------------- grading

@pytest.mark.parametrize("raw", QUESTIONS, ids=IDS)
def test_every_wrong_option_is_graded_wrong_and_explained(raw, capsys):
    quiz = Quiz()
    right = raw["answer"] if isinstance(raw["answer"], list) else [raw["answer"]]
    for letter, option in raw["options"].items():
        if letter in right:
            continue
        quiz.answer(raw["id"], letter)
        assert quiz.result(raw["id"]) is False
        shown = capsys.readouterr().out
        assert shown.startswith("✗") and option["why"].strip() in shown
        assert all(raw["options"][r]["why"].strip() in shown for r in right), "the right option's reason is shown"
    quiz.answer(raw["id"], ", ".join(reversed(right)))
    assert quiz.result(raw["id"]) is True
    assert capsys.readouterr().out.startswith("✓")


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (2, "write the answer as a string of option letters"),
        ("x", "'x' is not an option; choose from a, b, c, d"),
        ("bb", "option 'b' is given twice"),
        ("ab", "exactly one right option; type one letter"),
        (["b"], "write the answer as a string"),
    ],
)
def test_malformed_answers_are_refused_with_one_line(raw, message):
    quiz = Quiz()
    with pytest.raises(AnswerError) as refused:
        quiz.answer("scheduler-role", raw)
    text = str(refused.value)
    assert message in text and "\n" not in text and text.startswith("scheduler-role: ")
    assert quiz.answers == {}


def test_an_unknown_question_is_refused():
    with pytest.raises(AnswerError, match="no question 'no-such-question'"):
        Quiz().answer("no-such-question", "a")


@pytest.mark.parametrize("empty", ["", "   ", None])
def test_an_empty_answer_is_not_answered_yet(empty, capsys):
    quiz = Quiz()
    quiz.answer("scheduler-role", "b")
    assert quiz.result("scheduler-role") is True
    quiz.answer("scheduler-role", empty)
    assert quiz.result("scheduler-role") is None
    assert NOT_ANSWERED in capsys.readouterr().out
    assert quiz.answers == {}, "an emptied answer no longer counts"


SMALL_BANK = """
topics:
  alpha: Alpha topic
  beta: Beta topic
domains:
  da: Data Analysis
  dm: Data Manipulation and Software Literacy
  dp: Data Preparation
  gc: GPU and Cloud Computing
  ml: Machine Learning
  ops: MLOps
questions:
  - {id: a1, topic: alpha, domain: gc, notebook: 01_x, section: "2 · Two", question: Pick one, answer: b,
     options: {a: {text: A, why: not it}, b: {text: B, why: this one}, c: {text: C, why: not it}}}
  - {id: a2, topic: alpha, domain: dm, notebook: 03_y, section: "4 · Four", question: Pick one, answer: a,
     options: {a: {text: A, why: this one}, b: {text: B, why: not it}, c: {text: C, why: not it}}}
  - {id: a3, topic: alpha, domain: gc, notebook: 01_x, section: "2 · Two", question: Pick one, answer: [a, c],
     select: all,
     options: {a: {text: A, why: this one}, b: {text: B, why: not it}, c: {text: C, why: this one}}}
  - {id: b1, topic: beta, domain: ml, notebook: 05_z, section: "1 · One", question: Pick one, answer: c,
     options: {a: {text: A, why: not it}, b: {text: B, why: not it}, c: {text: C, why: this one}}}
"""


def _small_quiz(tmp_path: Path) -> Quiz:
    path = tmp_path / "bank.yaml"
    path.write_text(SMALL_BANK)
    return Quiz(load_bank(path))


def test_nothing_answered_scores_not_answered_yet(tmp_path, capsys):
    table = _small_quiz(tmp_path).score()
    assert NOT_ANSWERED in capsys.readouterr().out
    assert list(table["score"]) == [NOT_ANSWERED, NOT_ANSWERED]
    assert list(table["questions"]) == [3, 1]


def test_the_score_per_topic_is_right(tmp_path, capsys):
    quiz = _small_quiz(tmp_path)
    quiz.answer("a1", "b")   # right
    quiz.answer("a2", "c")   # wrong: 03 §4
    quiz.answer("a3", "a")   # wrong: only part of the right set, 01 §2
    capsys.readouterr()
    table = quiz.score()
    out = capsys.readouterr().out
    alpha, beta = table.loc["Alpha topic"], table.loc["Beta topic"]
    assert (alpha["questions"], alpha["answered"], alpha["right"], alpha["score"]) == (3, 3, 1, "1/3")
    assert alpha["revisit"] == "03 §4, 01 §2"
    assert (beta["answered"], beta["right"], beta["score"], beta["revisit"]) == (0, 0, NOT_ANSWERED, "")
    assert "1 of 3 answered questions right (1 of 4 not answered yet)" in out
    # a1 right and a3 wrong are GPU and Cloud Computing; a2 wrong is Data Manipulation; b1 unanswered
    assert "By exam domain: Data Manipulation and Software Literacy 0/1; GPU and Cloud Computing 1/2" in out
    assert "03_y.ipynb, section 4 · Four" in out and "01_x.ipynb, section 2 · Two" in out

    quiz.answer("a3", "c a")  # now exactly the right set
    quiz.answer("b1", "c")
    table = quiz.score()
    assert list(table["score"]) == ["2/3", "1/1"] and list(table["revisit"]) == ["03 §4", ""]


# ---------------------------------------------------------------- a malformed bank

def _break(edit) -> str:
    data = yaml.safe_load(SMALL_BANK)
    edit(data)
    return yaml.safe_dump(data, allow_unicode=True)


def _question(data, question_id):
    return next(q for q in data["questions"] if q["id"] == question_id)


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda d: _question(d, "a2")["options"]["b"].pop("why"), "question 'a2': option 'b' has no explanation"),
        (lambda d: _question(d, "a2").update(answer=["a", "b"]), "question 'a2': has 2 right options"),
        (lambda d: _question(d, "b1").update(answer="d"), "question 'b1': answer 'd' is not one of its options"),
        (lambda d: _question(d, "a1").update(topic="gamma"), "question 'a1': topic 'gamma' is not one of"),
        (lambda d: _question(d, "b1").update(id="a1"), "question 'a1': the id is used twice"),
        (lambda d: _question(d, "a2").update(anwser="a"), "question 'a2': unknown key 'anwser'"),
        (lambda d: _question(d, "a2").pop("section"), "question 'a2': missing 'section'"),
        (lambda d: _question(d, "a2").update(section="Four"), "question 'a2': section 'Four' is not a heading"),
        (lambda d: _question(d, "a2")["options"]["a"].update(outdated=True),
         "question 'a2': option 'a' is marked outdated but is a right answer"),
        (lambda d: _question(d, "a3").update(answer=["a", "b", "c"]), "question 'a3': the answer must name"),
        (lambda d: d["questions"][0].pop("id"), "question #1 (no id): missing 'id'"),
        (lambda d: _question(d, "a1").pop("domain"), "question 'a1': missing 'domain'"),
        (lambda d: _question(d, "b1").update(domain="devops"), "question 'b1': domain 'devops' is not one of"),
        (lambda d: d["domains"].pop("ops"), "'domains' must map a short key to each of the exam's six domains"),
        (lambda d: d["domains"].update(ops="DevOps"), "'domains' must map a short key to each of the exam's six"),
    ],
)
def test_a_malformed_bank_is_refused_naming_the_question(tmp_path, edit, message):
    path = tmp_path / "bank.yaml"
    path.write_text(_break(edit))
    with pytest.raises(BankError) as refused:
        load_bank(path)
    text = str(refused.value)
    assert text.startswith("bank.yaml: ") and message in text and "\n" not in text, text


def test_invalid_yaml_is_refused_with_its_line(tmp_path):
    path = tmp_path / "bank.yaml"
    path.write_text(SMALL_BANK.replace("question: Pick one, answer: c", "question: Pick one: answer: c"))
    with pytest.raises(BankError, match=r"bank\.yaml: not valid YAML at line \d+"):
        load_bank(path)


def test_a_bank_without_topics_is_refused():
    with pytest.raises(BankError, match="exactly the keys 'topics', 'domains' and 'questions'"):
        parse_bank({"questions": []}, "bank.yaml")


# ---------------------------------------------------------------- the notebook

def test_run_all_never_answers(tmp_path):
    """Executing notebook 09 top to bottom, as Run All does, answers nothing and scores nothing."""
    nb = nbformat.read(NOTEBOOK_DIR / "09_review.ipynb", as_version=4)
    resources = {"metadata": {"path": str(NOTEBOOK_DIR)}}
    NotebookClient(nb, timeout=120, kernel_name="python3", resources=resources).execute()
    code = [cell for cell in nb.cells if cell.cell_type == "code"]
    answers = [cell for cell in code if cell.source.startswith("quiz.answer(")]
    assert len(answers) == len(QUESTIONS)
    for cell in answers:
        text = "".join(o.get("text", "") for o in cell.outputs)
        assert NOT_ANSWERED in text and "✓" not in text and "✗" not in text, cell.source
    score = next(cell for cell in code if cell.source == "quiz.score()")
    printed = "".join(o.get("text", "") for o in score.outputs)
    assert printed.startswith(NOT_ANSWERED)


# ---------------------------------------------------------------- the exam map

EXAM_MAP = REPO_ROOT / "docs" / "exam-map.md"
DOMAINS = ("Data Analysis", "Data Manipulation and Software Literacy", "Data Preparation", "GPU and Cloud Computing",
           "Machine Learning", "MLOps")
MAP_ROW = re.compile(r"^\| (\d\d) §(\d+) (.+?) \| .+ \| (.+) \|$", re.M)


def test_the_exam_map_names_every_domain_and_what_is_not_covered():
    text = EXAM_MAP.read_text()
    for domain in DOMAINS:
        assert f"\n## {domain}\n" in text, f"no section for {domain}"
    assert "\n## What the course does not cover\n" in text


def test_every_question_names_an_exam_domain_and_the_map_counts_them():
    """The bank's domain names are the six the design names (this file's own list), every question
    names one, and the exam map's generated table is the count read from the YAML here."""
    assert sorted(RAW["domains"].values()) == sorted(DOMAINS)
    counts = {name: sum(q["domain"] == key for q in QUESTIONS) for key, name in RAW["domains"].items()}
    assert sum(counts.values()) == len(QUESTIONS)
    text = EXAM_MAP.read_text()
    for name, count in counts.items():
        assert f"| {name} | {count} |" in text, f"the exam map does not count {count} questions for {name}"


@pytest.mark.parametrize("row", MAP_ROW.findall(EXAM_MAP.read_text()), ids=lambda row: f"{row[0]}§{row[1]}")
def test_every_exam_map_row_names_a_real_section_and_review_topic(row):
    number, section, title, topic = row
    for name in topic.split("; "):
        assert name == "—" or name in RAW["topics"].values(), f"{name!r} is not a review topic's title"
    notebooks = sorted(NOTEBOOK_DIR.glob(f"{number}_*.ipynb"))
    if not notebooks:
        pytest.skip(f"no notebook {number}_*.ipynb in notebooks/ yet: section {section} is checked once it is added")
    assert f"{section} · {title}" in _headings(notebooks[0]), f"{notebooks[0].name} has no '## {section} · {title}'"


def test_a_malformed_answer_shows_one_line_in_a_notebook_not_a_traceback():
    """IPython, as in a Jupyter kernel, prints the refusal as one line (before: a ~20-line traceback)."""
    from IPython.core.interactiveshell import InteractiveShell
    from IPython.utils.capture import capture_output

    shell = InteractiveShell.instance()
    try:
        with capture_output() as shown:
            shell.run_cell("from utils.review import Quiz\nQuiz().answer('scheduler-role', 'z')")
    finally:
        InteractiveShell.clear_instance()
    lines = [line for line in shown.stdout.splitlines() + shown.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, lines
    assert lines[0].startswith("AnswerError: scheduler-role: 'z' is not an option; choose from a, b")
