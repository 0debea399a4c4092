"""The shape of ``utils``: four layers that import in one direction, a base floor that imports nothing
of the course, no import cycles, no private names across modules, a generator that stands apart, and
one spelling per API in the notebooks.

The layers are written once, in CONTRIBUTING.md ("The utils package"); these tests read them from
there and hold the code to them, so the document cannot drift from the code."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

import utils
from utils.base.paths import REPO_ROOT

UTILS = REPO_ROOT / "utils"
CONTRIBUTING = REPO_ROOT / "CONTRIBUTING.md"
LAYER_ORDER = ("base", "generator", "runtime", "teaching")  # each may import its own layer and those before it


def module_name(path: Path) -> str:
    parts = path.relative_to(REPO_ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def utils_modules() -> dict[str, Path]:
    return {module_name(path): path for path in sorted(UTILS.rglob("*.py"))}


def top_unit(module: str) -> str:
    """``utils.datagen.build`` -> ``datagen``; ``utils.checks.joins`` -> ``checks``; ``utils`` -> ``""``."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def layers_from_contributing(text: str | None = None) -> dict[str, str]:
    """Top-level unit of ``utils`` (module or subpackage) -> layer, from CONTRIBUTING's table rows
    ``| layer | `a`, `b/`, ... | ... |`` in the section "The utils package"."""
    text = CONTRIBUTING.read_text() if text is None else text
    section = text.split("## The utils package", 1)[-1].split("\n## ", 1)[0]
    layers: dict[str, str] = {}
    for line in section.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) >= 2 and cells[0] in LAYER_ORDER:
            for unit in re.findall(r"`([a-z_]+)/?`", cells[1]):
                layers[unit] = cells[0]
    return layers


def utils_imports(path: Path) -> list[tuple[str, int, bool]]:
    """(imported utils module, line, at module level) for every import of ``utils`` in ``path``;
    a ``from utils import x`` names the module ``utils.x`` when ``x`` is a submodule."""
    tree = ast.parse(path.read_text())
    top_level = {id(node) for node in tree.body}
    found = []
    for node in ast.walk(tree):
        at_top = id(node) in top_level
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module == "utils":
                for alias in node.names:
                    found.append((f"utils.{alias.name}", node.lineno, at_top))
            elif node.module.startswith("utils."):
                found.append((node.module, node.lineno, at_top))
        elif isinstance(node, ast.Import):
            found += [(alias.name, node.lineno, at_top) for alias in node.names if alias.name.startswith("utils.")]
    return found


def test_every_utils_module_has_a_layer_in_contributing():
    layers = layers_from_contributing()
    assert set(layers.values()) == set(LAYER_ORDER), f"CONTRIBUTING.md's layer table is unreadable: {layers}"
    units = {top_unit(name) for name in utils_modules()} - {""}
    assert units - set(layers) == set(), "modules without a layer in CONTRIBUTING.md"
    assert set(layers) - units == set(), "CONTRIBUTING.md names modules that do not exist"


def layers_from_package_docstring(doc: str | None = None) -> dict[str, str]:
    """Top-level unit of ``utils`` -> layer, from the bullets of ``utils/__init__.py``'s docstring:
    one bullet per layer, in LAYER_ORDER, naming its modules as ``name`` (or ``utils.name``)."""
    doc = utils.__doc__ if doc is None else doc
    bullets = re.findall(r"^- (.*?)(?=^- |\n\n)", doc, re.M | re.S)
    if len(bullets) != len(LAYER_ORDER):
        return {}
    return {name: layer for layer, bullet in zip(LAYER_ORDER, bullets, strict=True)
            for name in re.findall(r"``(?:utils\.)?([a-z_]+)``", bullet) if name != "utils"}


def test_the_package_docstring_lists_every_module_in_its_layer():
    """The layer list in ``utils/__init__.py`` says what CONTRIBUTING.md's table says, module for module."""
    documented = layers_from_package_docstring()
    units = {top_unit(name) for name in utils_modules()} - {""}
    assert sorted(units - set(documented)) == [], "modules missing from utils/__init__.py's layer list"
    assert sorted(set(documented) - units) == [], "utils/__init__.py's layer list names modules that do not exist"
    assert documented == layers_from_contributing()


def test_the_docstring_layer_reader_fails_on_a_docstring_without_the_three_bullets():
    assert layers_from_package_docstring("Helpers.\n\n- ``a``, ``b``\n\nMore.\n") == {}


def test_layers_import_in_one_direction():
    layers = layers_from_contributing()
    wrong = []
    for name, path in utils_modules().items():
        if name == "utils":
            continue
        mine = LAYER_ORDER.index(layers[top_unit(name)])
        for imported, line, _ in utils_imports(path):
            theirs = layers.get(top_unit(imported))
            if theirs is None or LAYER_ORDER.index(theirs) > mine:
                where = f"{path.relative_to(REPO_ROOT)}:{line} ({layers[top_unit(name)]})"
                wrong.append(f"{where} imports {imported} ({theirs})")
    assert wrong == []


def test_the_base_floor_is_the_lowest_layer():
    assert LAYER_ORDER[0] == "base" and layers_from_contributing().get("base") == "base"


def module_level_imports(path: Path) -> list[tuple[str, int]]:
    """(top-level package, line) of every import at module level (``if TYPE_CHECKING:`` blocks left out)."""
    found = []
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.Import):
            found += [(alias.name.split(".")[0], node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.append((node.module.split(".")[0], node.lineno))
        elif isinstance(node, ast.ImportFrom):
            found.append(("(relative import)", node.lineno))
    return found


def test_the_base_floor_imports_no_other_course_module_and_only_the_standard_library():
    """``utils.base`` is what everything else may import: it imports no other module of ``utils``
    (nor ``tools``, ``tests``, ``benchmarks``), and at module level only the standard library."""
    base = {name: path for name, path in utils_modules().items() if name.startswith("utils.base")}
    assert base, "utils/base/ is missing"
    course = [
        f"{path.relative_to(REPO_ROOT)}:{line} imports {imported}"
        for path in base.values()
        for imported, line, _ in utils_imports(path) if not imported.startswith("utils.base")
    ]
    outside_stdlib = [
        f"{path.relative_to(REPO_ROOT)}:{line} imports {package} at module level"
        for path in base.values()
        for package, line in module_level_imports(path)
        if package not in sys.stdlib_module_names and package != "__future__"
    ]
    assert course + outside_stdlib == []


def test_the_base_floor_loads_nothing_else():
    code = ("import sys, utils.base.paths, utils.base.units, utils.base.lifetime\n"
            "print(' '.join(sorted(m for m in sys.modules if m.split('.')[0] in "
            "('utils', 'tools', 'dask', 'distributed', 'psutil', 'pandas', 'numpy'))))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd=REPO_ROOT)
    assert done.returncode == 0, done.stderr
    assert [m for m in done.stdout.split() if m != "utils" and not m.startswith("utils.base")] == []


def test_the_generator_imports_nothing_else_of_utils_but_the_base_floor():
    outside = [
        f"{path.relative_to(REPO_ROOT)}:{line} imports {imported}"
        for name, path in utils_modules().items() if name.startswith("utils.datagen")
        for imported, line, _ in utils_imports(path) if not imported.startswith(("utils.datagen", "utils.base"))
    ]
    assert outside == []


def test_the_generator_loads_neither_the_rest_of_utils_nor_distributed():
    """What its worker processes import: only the generator (and no Dask cluster machinery)."""
    code = ("import sys, utils.datagen.cli, utils.datagen.build\n"
            "print(' '.join(sorted(m for m in sys.modules if m.split('.')[0] in ('utils', 'distributed'))))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd=REPO_ROOT)
    assert done.returncode == 0, done.stderr
    loaded = done.stdout.split()
    assert [m for m in loaded if m != "utils" and not m.startswith(("utils.datagen", "utils.base"))] == []


def test_utils_imports_are_at_the_top_of_each_module():
    """Function-level ``from utils ...`` imports hide cycles; the package's lazy exports are the one
    exception (``utils/__init__.py``: its TYPE_CHECKING block)."""
    hidden = [
        f"{path.relative_to(REPO_ROOT)}:{line} imports {imported} inside a function"
        for name, path in utils_modules().items() if name != "utils"
        for imported, line, at_top in utils_imports(path) if not at_top
    ]
    assert hidden == []


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle in ``graph`` as a path that ends where it starts, or None."""
    state: dict[str, str] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = "open"
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == "open":
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state and (cycle := visit(nxt)):
                return cycle
        state[node] = "done"
        stack.pop()
        return None

    for node in sorted(graph):
        if node not in state and (cycle := visit(node)):
            return cycle
    return None


def test_find_cycle_finds_one_and_only_one():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": set()}) is None


def test_no_import_cycles_in_utils():
    modules = utils_modules()
    graph = {
        name: {imported for imported, _, _ in utils_imports(path) if imported in modules and imported != name}
        for name, path in modules.items() if name != "utils"
    }
    assert find_cycle(graph) is None


# --- the GPU wing: tools/gpu (the real-GPU check) and gpu_sim (the simulated RAPIDS stack) ----------

GPU_SIM = REPO_ROOT / "gpu_sim"


def imported_top_names(path: Path) -> list[tuple[str, int]]:
    """(top-level name, line) of every absolute import in ``path``, wherever it stands."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append((node.module.split(".")[0], node.lineno))
        elif isinstance(node, ast.Import):
            found += [(alias.name.split(".")[0], node.lineno) for alias in node.names]
    return found


def sim_only_modules() -> set[str]:
    """The simulation's own top-level modules that stand in for no real library (``gpu_sim_helpers``,
    ``xgboost_device_sim``, ``pass_report``, ...); its stand-ins (``cudf``, ``pynvml``, ...) share the real
    libraries' names, which ``utils`` imports on a GPU machine, so only the folder's name tells them apart."""
    stand_ins = {line.strip() for top in GPU_SIM.glob("*.dist-info/top_level.txt") for line in top.read_text().split()}
    modules = {path.stem for path in GPU_SIM.glob("*.py")} | {path.name for path in GPU_SIM.iterdir() if path.is_dir()}
    return {name for name in modules - stand_ins if name.isidentifier()} | {"gpu_sim"}


def test_the_simulation_is_found_by_this_test():
    assert {"gpu_sim_helpers", "xgboost_device_sim", "pass_report", "notebook_pass"} <= sim_only_modules()
    assert not {"cudf", "dask_cuda", "pynvml", "rmm"} & sim_only_modules()


def test_utils_imports_neither_the_simulation_nor_the_tooling():
    """The course package learners import stands alone: it never imports the maintainer tooling
    (``tools``, ``tools.gpu``), the benchmark harness or the tests, never a module of the simulated
    RAPIDS stack, and never names the simulation (no ``if simulated:``, no ``GPU_SIM`` variable):
    on a CPU the course takes its CPU path, on the simulation exactly the path it takes on a GPU."""
    forbidden = {"tools", "benchmarks", "tests", "support"} | sim_only_modules()
    wrong = [f"{path.relative_to(REPO_ROOT)}:{line} imports {name}"
             for path in sorted(UTILS.rglob("*.py")) for name, line in imported_top_names(path) if name in forbidden]
    named = [f"{path.relative_to(REPO_ROOT)}:{number}" for path in sorted(UTILS.rglob("*.py"))
             for number, text in enumerate(path.read_text().splitlines(), 1) if re.search(r"gpu_sim|GPU_SIM", text)]
    assert wrong == [] and named == []


def test_the_gpu_tools_never_import_the_simulation():
    """``tools/gpu`` proves the course on a real GPU; a simulated module on its path would make a CPU
    machine pass for a GPU one. Only the dry run of the offline script borrows the simulated ``pynvml``,
    by linking it into a sandbox (tools/gpu/device/dry-run.sh), never by import."""
    tools_gpu = REPO_ROOT / "tools" / "gpu"
    wrong = [f"{path.relative_to(REPO_ROOT)}:{line} imports {name}"
             for path in sorted(tools_gpu.rglob("*.py")) for name, line in imported_top_names(path)
             if name in sim_only_modules()]
    assert wrong == []


def test_the_simulation_stays_out_of_the_installed_package():
    import tomllib

    project = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())
    assert all(name.split(".")[0] == "utils" for name in project["tool"]["setuptools"]["packages"])
    assert "gpu_sim" not in project["tool"]["pytest"]["ini_options"]["testpaths"], (
        "the default run collects gpu_sim only through tests/gpu_wing/test_gpu_sim.py, in child processes")


PROJECT_PACKAGES = ("utils", "tools", "benchmarks", "support")


def project_python_files() -> list[Path]:
    files = [*UTILS.rglob("*.py"), *(REPO_ROOT / "tools").rglob("*.py"), *(REPO_ROOT / "benchmarks").rglob("*.py")]
    files += (REPO_ROOT / "tests").rglob("*.py")
    return sorted(files)


def test_no_private_names_are_imported_across_modules():
    """``from utils.x import _y`` couples a caller to what ``x`` may change freely: give ``_y`` a
    public name or move the caller (the simulated RAPIDS stack in gpu_sim/ copies upstream
    code and is left out)."""
    private = []
    for path in project_python_files():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] in PROJECT_PACKAGES:
                private += [f"{path.relative_to(REPO_ROOT)}:{node.lineno} imports {node.module}.{alias.name}"
                            for alias in node.names if alias.name.startswith("_") and not alias.name.endswith("__")]
    assert private == []


# --- one spelling per API in the notebooks ---------------------------------------------------------

NOTEBOOKS = sorted((REPO_ROOT / "notebooks").glob("*.ipynb"))


def notebook_spellings(path: Path) -> tuple[dict[str, set[str]], list[str]]:
    """For one notebook: API (``module.name``) -> the spellings its code cells use, and the
    spellings that are wrong whatever the other notebooks do."""
    spellings: dict[str, set[str]] = {}
    wrong: list[str] = []
    modules_bound: dict[str, str] = {}  # a name bound by `from utils import <module>`
    trees = []
    for index, cell in enumerate(nbformat.read(path, as_version=4).cells):
        if cell.cell_type != "code":
            continue
        source = "\n".join(line for line in cell.source.splitlines() if not line.lstrip().startswith(("%", "!")))
        trees.append((index, ast.parse(source)))
    for index, tree in trees:
        for node in ast.walk(tree):
            where = f"{path.name} cell {index}"
            if isinstance(node, ast.Import):
                wrong += [f"{where}: `import {a.name}`; use `import utils` and `from utils.x import name`"
                          for a in node.names if a.name.startswith("utils.")]
            elif isinstance(node, ast.ImportFrom) and node.module == "utils":
                for alias in node.names:
                    if alias.name in utils.__all__:
                        wrong.append(f"{where}: `from utils import {alias.name}`; spell it `utils.{alias.name}`")
                    else:
                        modules_bound[alias.asname or alias.name] = alias.name
            elif isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("utils."):
                for alias in node.names:
                    if alias.name in utils.__all__:
                        wrong.append(
                            f"{where}: `from {node.module} import {alias.name}`; spell it `utils.{alias.name}`"
                        )
                    spellings.setdefault(f"{node.module}.{alias.name}", set()).add("from-import")
    for index, tree in trees:
        for node in ast.walk(tree):
            if not isinstance(node, ast.Attribute) or not isinstance(node.value, ast.Name):
                continue
            where = f"{path.name} cell {index}"
            if node.value.id == "utils":
                if node.attr not in utils.__all__:
                    wrong.append(f"{where}: `utils.{node.attr}`; import it: `from utils.{node.attr} import ...`"
                                 f" or `from utils import {node.attr}`")
            elif node.value.id in modules_bound:
                spellings.setdefault(f"utils.{modules_bound[node.value.id]}.{node.attr}", set()).add("module-attribute")
    return spellings, wrong


def test_notebooks_spell_each_utils_api_one_way():
    spellings: dict[str, set[str]] = {}
    wrong: list[str] = []
    for path in NOTEBOOKS:
        found, mistakes = notebook_spellings(path)
        wrong += mistakes
        for api, ways in found.items():
            spellings.setdefault(api, set()).update(ways)
    wrong += [f"{api} is spelled {sorted(ways)}" for api, ways in spellings.items() if len(ways) > 1]
    assert wrong == []


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("import utils\nutils.doctor.diagnose()", "`utils.doctor`"),
        ("import utils.machine", "`import utils.machine`"),
        ("from utils.backend import current_backend", "spell it `utils.current_backend`"),
    ],
)
def test_a_second_spelling_is_caught(tmp_path, source, expected):
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(source)])
    path = tmp_path / "99_probe.ipynb"
    nbformat.write(notebook, path)
    _, wrong = notebook_spellings(path)
    assert len(wrong) == 1 and expected in wrong[0]


def test_a_module_attribute_and_a_from_import_of_the_same_api_are_two_spellings(tmp_path):
    one = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("from utils import plans\nplans.show_plan(x)")])
    two = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("from utils.plans import show_plan")])
    found = {}
    for name, notebook in (("a.ipynb", one), ("b.ipynb", two)):
        nbformat.write(notebook, tmp_path / name)
        for api, ways in notebook_spellings(tmp_path / name)[0].items():
            found.setdefault(api, set()).update(ways)
    assert found == {"utils.plans.show_plan": {"module-attribute", "from-import"}}


def test_the_layer_table_reader_fails_on_a_table_without_layers():
    assert layers_from_contributing("## The utils package\n\nno table here\n") == {}


def test_every_subpackage_of_utils_is_packaged():
    """A subpackage missing from pyproject's list installs without its files (a non-editable install)."""
    import tomllib

    listed = set(tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    packages = {module_name(init) for init in UTILS.rglob("__init__.py")}
    assert listed == packages
