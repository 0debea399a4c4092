"""CONTRIBUTING.md's four lists (adding a notebook, an exercise, a check, a backend behaviour) name only
what exists: every path in backticks (``NN`` and ``<name>`` are placeholders that must match some
file), every ``python -m`` module, every ``make`` target, and the names the lists rely on.

Read as text and syntax trees only: nothing is imported or executed, so this stays fast.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from utils.base.paths import REPO_ROOT
from utils.notebook_grammar import NOTEBOOK_STEM

CONTRIBUTING = REPO_ROOT / "CONTRIBUTING.md"
LISTS = {
    "notebook": "### Files for adding a notebook",
    "exercise": "### Files for adding an exercise",
    "check": "### Files for adding a check",
    "backend": "### Files for adding a backend behaviour",
}
CODE_SPAN = re.compile(r"`([^`]+)`")  # a span may wrap onto the next line
FILE_SUFFIXES = (".md", ".py", ".yml", ".yaml", ".json", ".ipynb", ".toml")
NOT_IN_REPO = (".venv/",)  # the local environment a command line names, not a file of the repository
MODULE = re.compile(r"\bpython -m ([A-Za-z_][\w.]*)")
MAKE_TARGET = re.compile(r"(?:^|\s)make ([a-z][\w-]*)")

# Names a list relies on, by the file that must define them (anywhere in it: function, class, method,
# assignment, property).
DEFINED = {
    "tests/notebooks/wrong_answers.py": {"WRONG_ANSWERS"},
    "utils/notebook_grammar.py": {"Exercise", "exercises", "exercise_key"},
    "utils/checks/grading.py": {"compare_series", "check_scalar", "passed", "CheckFailed", "blames_changed_data",
                                "grade"},
    "utils/backend.py": {"Backend", "dask_config", "shuffle_method", "is_gpu", "choose_backend", "current_backend",
                         "as_backend", "reset", "to_pandas"},
    "utils/dataset.py": {"csv_kwargs", "parquet_kwargs"},
    "utils/plans.py": {"show_plan"},
    "tools/notebook_format.py": {"CLOSING_CELL", "check_review"},
}


def lists(text: str) -> dict[str, str]:
    """Each list's text: from its heading to the next heading of any level (missing: not in the result)."""
    found = {}
    for name, heading in LISTS.items():
        start = text.find(f"\n{heading}\n")
        if start < 0:
            continue
        body = text[start + len(heading) + 2:]
        end = re.search(r"^#{1,3} ", body, re.M)
        found[name] = body[: end.start()] if end else body
    return found


def _path_words(body: str) -> list[str]:
    words = []
    for span in CODE_SPAN.findall(body):
        for word in span.split():
            word = word.rstrip(",;:)")
            if "</" in word or "://" in word or word.startswith(NOT_IN_REPO):
                continue
            if re.fullmatch(r"[\w.\-/<>]+", word) and ("/" in word or word.endswith(FILE_SUFFIXES)):
                words.append(word)
    return words


def _exists(path: str) -> bool:
    """A path, or a pattern where ``NN`` is two digits and ``<name>`` anything, that names something."""
    if "NN" not in path and "<" not in path:
        return (REPO_ROOT / path).exists()
    pattern = re.sub(r"<[^>]+>", "*", path.replace("NN", "[0-9][0-9]")).rstrip("/")
    return any(REPO_ROOT.glob(pattern))


def _is_module(name: str) -> bool:
    """``python -m name`` runs a module of this repository: ``a/b.py`` or a package ``a/b/__main__.py``."""
    base = REPO_ROOT.joinpath(*name.split("."))
    return base.with_suffix(".py").is_file() or (base / "__main__.py").is_file()


def _make_targets() -> set[str]:
    return set(re.findall(r"^([a-z][\w-]*):", (REPO_ROOT / "Makefile").read_text(), re.M))


def problems(text: str) -> list[str]:
    """What the four lists of ``text`` (CONTRIBUTING.md's, or a copy) name that the repository lacks."""
    found = lists(text)
    wrong = [f"no list under {heading!r}" for name, heading in LISTS.items() if name not in found]
    targets = _make_targets()
    for name, body in found.items():
        spans = " \n ".join(CODE_SPAN.findall(body))
        wrong += [f"{name}: `{path}` does not exist" for path in _path_words(body) if not _exists(path)]
        wrong += [f"{name}: `python -m {module}` is no module of the repository"
                  for module in MODULE.findall(spans) if not _is_module(module)]
        wrong += [f"{name}: `make {target}` is no target of the Makefile"
                  for target in MAKE_TARGET.findall(spans) if target not in targets]
    return wrong


def _defined_names(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names |= {target.id for target in targets if isinstance(target, ast.Name)}
    return names


def test_the_four_lists_are_there_and_name_only_what_exists():
    assert problems(CONTRIBUTING.read_text()) == []


def test_each_list_names_files():
    for name, body in lists(CONTRIBUTING.read_text()).items():
        assert len(_path_words(body)) >= 3, f"the {name} list names hardly any file"


@pytest.mark.parametrize(("old", "new", "reported"), [
    ("tests/notebooks/wrong_answers.py", "tests/notebooks/wrong_answer.py", "`tests/notebooks/wrong_answer.py`"),
    ("`utils/checks/<topic>.py`", "`utils/check/<topic>.py`", "`utils/check/<topic>.py`"),
    ("`notebooks/NN_<topic>.ipynb`", "`notebooks/NN_<topic>.ipnb`", "`notebooks/NN_<topic>.ipnb`"),
    ("`gpu_sim/cudf/`", "`gpu_sim/cudf_sim/`", "`gpu_sim/cudf_sim/`"),
    ("python -m tools.course_index --write", "python -m tools.course_indexes --write", "tools.course_indexes"),
    ("`make test-gpu-sim`", "`make test-gpu-simulated`", "make test-gpu-simulated"),
    ("`make format-notebooks`", "`make format-notebook`", "make format-notebook`"),
    (LISTS["check"], "### Files for a check", "no list under '### Files for adding a check'"),
])
def test_a_removed_or_renamed_name_is_reported(old, new, reported):
    """A copy of the text with one name broken: the helper the real text passes reports it."""
    text = CONTRIBUTING.read_text()
    assert old in text, f"the premise: CONTRIBUTING.md says {old!r}"
    assert any(reported in problem for problem in problems(text.replace(old, new))), reported


@pytest.mark.parametrize("path", sorted(DEFINED))
def test_the_names_the_lists_rely_on_are_defined(path):
    missing = DEFINED[path] - _defined_names(REPO_ROOT / path)
    assert not missing, f"{path} no longer defines {sorted(missing)}"


def test_wrong_answers_is_a_dict_keyed_by_notebook_then_exercise():
    tree = ast.parse((REPO_ROOT / "tests/notebooks/wrong_answers.py").read_text())
    [value] = [node.value for node in tree.body if isinstance(node, ast.AnnAssign | ast.Assign)
               and "WRONG_ANSWERS" in ast.unparse(node.target if isinstance(node, ast.AnnAssign) else node.targets[0])]
    assert isinstance(value, ast.Dict) and value.keys
    stems = {key.value for key in value.keys}
    assert all(NOTEBOOK_STEM.match(stem) for stem in stems), stems
    inner = [key.value for answers in value.values for key in answers.keys]
    assert all(re.fullmatch(r"check_\w+\([\w, ]+\)", key) for key in inner), inner


def test_checks_all_is_derived_from_the_imports_not_written_by_hand():
    """The check list says ``__all__`` is never edited: it must not be a literal list."""
    tree = ast.parse((REPO_ROOT / "utils/checks/__init__.py").read_text())
    [value] = [node.value for node in tree.body if isinstance(node, ast.Assign)
               and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets)]
    assert not isinstance(value, ast.List | ast.Tuple | ast.Set)


def test_every_check_module_is_named_in_the_check_list():
    body = lists(CONTRIBUTING.read_text())["check"]
    for module in sorted((REPO_ROOT / "utils/checks").glob("*.py")):
        tree = ast.parse(module.read_text())
        if any(isinstance(node, ast.FunctionDef) and node.name.startswith("check_") for node in tree.body):
            assert f"`utils/checks/{module.name}`" in body, f"utils/checks/{module.name} has checks; the list omits it"
