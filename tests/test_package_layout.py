"""The package's shape: each subpackage imports alone, no two parts import each other
(directly or through others, at the top or inside functions), and the numba the suite runs on
is one whose internals flexmbs is written against (flexmbs.runtime.config.NUMBA_VERSIONS, the
same range as pyproject.toml's pin)."""

import ast
import importlib
import json
import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import numba
import pytest

from flexmbs.moved import MOVED_MODULES
from flexmbs.runtime.config import NUMBA_VERSIONS, numba_version_problem

ROOT = Path(__file__).resolve().parents[1]
SUBPACKAGES = sorted(p.parent.name for p in (ROOT / "flexmbs").glob("*/__init__.py"))


@pytest.mark.parametrize("name", SUBPACKAGES)
def test_each_subpackage_imports_alone(name):
    r = subprocess.run([sys.executable, "-c", f"import flexmbs.{name}"], cwd=ROOT,
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-2000:]


def test_the_installed_numba_is_supported():
    assert numba_version_problem() is None, numba_version_problem()


def test_unsupported_numba_versions_are_named():
    (lo_major, lo_minor), (hi_major, hi_minor) = NUMBA_VERSIONS
    assert numba_version_problem(f"{lo_major}.{lo_minor}.0") is None
    below = numba_version_problem(f"{lo_major}.{lo_minor - 1}.3")
    above = numba_version_problem(f"{hi_major}.{hi_minor}.0")
    for problem in (below, above):
        assert problem and f">={lo_major}.{lo_minor},<{hi_major}.{hi_minor}" in problem
    assert "not a release" in numba_version_problem("dev")


def test_pyproject_pins_the_supported_range():
    deps = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    pin = next(d for d in deps if re.match(r"numba\b", d))
    (lo_major, lo_minor), (hi_major, hi_minor) = NUMBA_VERSIONS
    assert pin.replace(" ", "") == f"numba>={lo_major}.{lo_minor},<{hi_major}.{hi_minor}"
    assert numba.__version__.startswith(f"{lo_major}.")


def _passes_in_a_new_process(code):
    """Run the Python `code` in a new interpreter from the checkout; fail with its
    error when it does."""
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                       text=True)
    assert r.returncode == 0, r.stderr[-2000:]


def test_the_public_api_is_at_the_top_and_import_stays_light():
    """flexmbs.<name> is the documented function or class; `import flexmbs` alone does
    not bring numba in."""
    code = ("import sys, flexmbs; assert 'numba' not in sys.modules; "
            "from flexmbs.simulation import simulate; from flexmbs.io.results import "
            "open_result; from flexmbs.formats.toml_reader import load_model; "
            "from flexmbs.model.compiled import compile_model; "
            "from flexmbs.model.description import Model; "
            "from flexmbs.analysis.energy import energy_balance; "
            "from flexmbs.model.user_laws import user_law; "
            "assert (flexmbs.simulate, flexmbs.open_result, flexmbs.load_model, "
            "flexmbs.compile_model, flexmbs.Model, flexmbs.energy_balance, "
            "flexmbs.user_law) == (simulate, open_result, load_model, compile_model, "
            "Model, energy_balance, user_law); "
            "assert set(flexmbs.__all__) <= set(dir(flexmbs))")
    _passes_in_a_new_process(code)


def _imports_between_parts():
    """{part: {part it imports: [modules importing it]}} over every import statement of
    flexmbs, inside functions too; a part is a subpackage or a top-level module."""
    def part(module):
        return module.split(".")[1] if "." in module else module
    edges = {}
    for path in sorted((ROOT / "flexmbs").rglob("*.py")):
        parts = path.relative_to(ROOT).with_suffix("").parts
        package = list(parts[:-1]) if parts[-1] != "__init__" else list(parts[:-1])
        module = ".".join(parts if parts[-1] != "__init__" else parts[:-1])
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom):
                base = package[:len(package) - node.level + 1] if node.level else []
                name = ".".join(base + ([node.module] if node.module else []))
                targets = ([f"{name}.{a.name}" for a in node.names] if name == "flexmbs"
                           else [name])
            elif isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            else:
                continue
            for target in targets:
                if target.startswith("flexmbs.") and module != "flexmbs":
                    a, b = part(module), part(target)
                    if a != b:
                        edges.setdefault(a, {}).setdefault(b, []).append(module)
    return edges


def test_no_two_parts_of_the_package_import_each_other():
    """The parts form layers: following imports from any part never leads back to it
    (flexmbs/codes.py holds the codes both sides of a table need)."""
    edges = _imports_between_parts()

    def reachable(start):
        seen, todo = set(), [start]
        while todo:
            for nxt in edges.get(todo.pop(), {}):
                if nxt not in seen:
                    seen.add(nxt)
                    todo.append(nxt)
        return seen

    cycles = [f"{a} -> {b} (in {sorted(set(edges[a][b]))[0]})" for a in sorted(edges)
              for b in sorted(edges[a]) if a in reachable(b)]
    assert not cycles, cycles
    assert "kinematics" in edges["dynamics"] and "dynamics" in edges["model"]


def test_reading_models_and_results_brings_no_numba_in():
    """The command line, the model reader and the result reader import without numba
    (about 0.4 s): `flexmbs info`, `plot`, `energy` and `export` start at once."""
    code = ("import sys, flexmbs.cli, flexmbs.formats.toml_reader, flexmbs.model.description, "
            "flexmbs.io.results, flexmbs.rotations; assert 'numba' not in sys.modules, "
            "[m for m in sys.modules if m.startswith('flexmbs')]")
    _passes_in_a_new_process(code)


def test_a_run_of_beams_brings_no_scipy_in():
    """The run's path (the command line, the model reader, the compilation, simulate)
    imports none of scipy's linear algebra or sparse matrices (about 0.2 s of a
    process's start, for the finite-element bodies and the analyses alone)."""
    code = ("import sys, flexmbs.cli, flexmbs.formats.toml_reader, flexmbs.simulation, "
            "flexmbs.model.compiled, flexmbs.model.description, flexmbs.io.results; "
            "heavy = [m for m in sys.modules if m.startswith(('scipy.sparse', "
            "'scipy.linalg', 'scipy._lib._array_api'))]; assert not heavy, heavy")
    _passes_in_a_new_process(code)


def test_the_command_returns_its_status_with_its_objects_frozen_for_the_exit():
    """The console script's entry (flexmbs.__main__.command) returns the command's
    exit status, and leaves the process's objects frozen, out of the exit's garbage
    collections; `python -m flexmbs` and the installed script are that entry."""
    code = ("import gc, sys; from flexmbs.__main__ import command; "
            "sys.argv = ['flexmbs', 'run', 'no-such-model.toml']; status = command(); "
            "assert status == 2, status; assert gc.get_freeze_count() > 10000, "
            "gc.get_freeze_count(); assert gc.isenabled()")
    _passes_in_a_new_process(code)
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts == {"flexmbs": "flexmbs.__main__:command"}
    r = subprocess.run([sys.executable, "-m", "flexmbs", "run", "no-such-model.toml"],
                       cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 2 and "no-such-model.toml" in r.stderr


def test_a_command_starts_without_the_collector_and_a_long_one_collects_later():
    """The cyclic collector is off for a command's first COLLECTOR_OFF_FOR seconds, on
    after them (the garbage of those seconds collected, what remains frozen), and on in
    a process forked meanwhile."""
    code = ("import gc, json, os, sys, time, weakref\n"
            "import flexmbs.__main__ as entry, flexmbs.cli\n"
            "entry.COLLECTOR_OFF_FOR = 0.2; seen = {}\n"
            "class Cycle: pass\n"
            "def work():\n"
            "    c = Cycle(); c.me = c; gone = weakref.ref(c); del c\n"
            "    seen['at_start'] = gc.isenabled(); pid = os.fork()\n"
            "    if pid == 0: os._exit(0 if gc.isenabled() else 3)\n"
            "    seen['forked_child'] = os.waitpid(pid, 0)[1]; time.sleep(0.6)\n"
            "    seen['later'] = gc.isenabled(); seen['frozen'] = gc.get_freeze_count()\n"
            "    seen['cycle_collected'] = gone() is None; return 5\n"
            "flexmbs.cli.main = work; seen['status'] = entry.command()\n"
            "print(json.dumps(seen))")
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                       text=True)
    assert r.returncode == 0, r.stderr[-2000:]
    seen = json.loads(r.stdout)
    assert seen["status"] == 5 and seen["at_start"] is False
    assert seen["forked_child"] == 0, "a child forked in the first second collects"
    assert seen["later"] is True and seen["frozen"] > 0
    assert seen["cycle_collected"], "the first second's garbage was frozen, not collected"


def test_the_analysis_functions_and_the_kernels_are_public_too():
    """Every name of flexmbs.__all__ is the object of the module it names, documented
    in the Python API reference: a function or class as flexmbs.NAME, a module by the
    path `import` takes (flexmbs.model.library, not the attribute flexmbs.library)."""
    import flexmbs
    reference = (ROOT / "docs" / "reference" / "python-api.md").read_text()
    for name in flexmbs.__all__:
        module, attribute = flexmbs._PUBLIC[name]
        target = importlib.import_module(module)
        if attribute is not None:
            target = getattr(target, attribute)
        assert getattr(flexmbs, name) is target
        documented = module if attribute is None else f"flexmbs.{name}"
        assert re.search(rf"\b{re.escape(documented)}\b", reference), name


@pytest.mark.parametrize("old, new", sorted(MOVED_MODULES.items()))
def test_moved_modules_keep_their_old_path_with_a_warning(old, new):
    """A module that moved is importable under its old name for one release: the very
    module, and a DeprecationWarning naming the new module at the importing line."""
    code = ("import warnings, importlib; warnings.simplefilter('error', DeprecationWarning)\n"
            f"try:\n    importlib.import_module({old!r})\n"
            "except DeprecationWarning as w:\n    print(w)\n")
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 0 and new in r.stdout, r.stdout + r.stderr
    r = subprocess.run([sys.executable, "-W", "always::DeprecationWarning", "-c",
                        f"import sys\nimport {old}"], cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 0 and r.stderr.startswith("<string>:2: DeprecationWarning"), r.stderr
    sys.modules.pop(old, None)
    with pytest.warns(DeprecationWarning, match=new):
        moved = importlib.import_module(old)
    assert moved is importlib.import_module(new)


def _file_imports():
    """{module: {flexmbs modules it imports}} over every import statement (inside
    functions and TYPE_CHECKING blocks too), a name resolved to the module holding it."""
    mods = {}
    for path in sorted((ROOT / "flexmbs").rglob("*.py")):
        parts = path.relative_to(ROOT).with_suffix("").parts
        mods[".".join(parts if parts[-1] != "__init__" else parts[:-1])] = path
    edges = {}
    for module, path in mods.items():
        package = list(path.relative_to(ROOT).with_suffix("").parts[:-1])
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom):
                base = package[:len(package) - node.level + 1] if node.level else []
                name = ".".join(base + ([node.module] if node.module else []))
                targets = [f"{name}.{a.name}" for a in node.names] + [name]
            elif isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            else:
                continue
            for target in targets:
                while target and target not in mods:
                    target = target.rpartition(".")[0]
                if target and target != module and not module.startswith(target + "."):
                    edges.setdefault(module, set()).add(target)
    return mods, edges


def test_no_import_circles_between_files():
    """Tarjan's strongly connected components of the file-level import graph: a
    component of more than one file is a circle, and there is none (a type used only
    in annotations is a Protocol of what is read, not an import of the other file)."""
    mods, edges = _file_imports()
    index, low, stack, on, circles = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                circles.append(sorted(component))

    for module in sorted(mods):
        if module not in index:
            visit(module)
    assert not circles, circles


def _layers_contract():
    """The layers of pyproject.toml's import-linter contract, top first, each a list."""
    tool = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    (contract,) = [c for c in tool["contracts"] if c["type"] == "layers"]
    return [[name.strip() for name in layer.split("|")] for layer in contract["layers"]]


def test_every_part_of_the_package_has_its_layer():
    """Each subpackage and top-level module is named in the layers contract, so that
    a new part cannot sit outside it; the package root holds at most eight modules."""
    named = {name for layer in _layers_contract() for name in layer}
    roots = sorted(p.stem for p in (ROOT / "flexmbs").glob("*.py") if p.stem != "__init__")
    parts = {f"flexmbs.{name}" for name in SUBPACKAGES + roots}
    assert parts == named, (sorted(parts - named), sorted(named - parts))
    assert len(roots) + 1 <= 8, roots


def test_the_layers_contract_holds_and_catches_an_upward_import(tmp_path):
    """import-linter keeps the contract on the package, and breaks it on a copy of the
    package where the model imports the run."""
    lint = Path(sys.executable).with_name("lint-imports")
    r = subprocess.run([lint, "--no-cache"], cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 0, r.stdout[-3000:]
    copy = tmp_path / "checkout"
    copy.mkdir()
    (copy / "pyproject.toml").write_text((ROOT / "pyproject.toml").read_text())
    subprocess.run(["cp", "-r", ROOT / "flexmbs", copy / "flexmbs"], check=True)
    items = copy / "flexmbs" / "model" / "items.py"
    items.write_text(items.read_text() + "\nfrom ..simulation import run as _upward\n")
    r = subprocess.run([lint, "--no-cache"], cwd=copy, capture_output=True, text=True,
                       env={**os.environ, "PYTHONPATH": str(copy)})
    assert r.returncode != 0
    assert "flexmbs.model is not allowed to import flexmbs.simulation" in r.stdout


def test_each_command_is_parsed_beside_the_function_that_runs_it():
    """flexmbs.cli assembles its parser from COMMANDS: each adds one command, whose
    parser is made in the module of the function that runs it, in the order `flexmbs
    --help` lists them."""
    import argparse

    from flexmbs.cli import COMMANDS, _parser

    names = []
    for add in COMMANDS:
        sub = argparse.ArgumentParser().add_subparsers()
        add(sub)
        (name, parser), = sub.choices.items()
        assert parser.get_default("fn").__module__ == add.__module__, name
        assert add.__module__.startswith("flexmbs.cli."), name
        names.append(name)
    top = next(a for a in _parser()._actions if isinstance(a, argparse._SubParsersAction))
    assert names == list(top.choices)


def _kernel_source(path):
    """A module holding numba kernels (its layout is that of the equations): the
    markers by which the kernel cache finds compiled code."""
    from flexmbs.runtime.kernel_cache import KERNEL_MARKERS

    return any(marker in path.read_bytes() for marker in KERNEL_MARKERS)


def test_functions_fit_a_screen_and_files_a_job():
    """Outside the numba kernels no function is over 100 lines (its docstring
    included) and no file over 800: a function reads in a screen, a file is one job."""
    long_functions, long_files = [], []
    for path in sorted((ROOT / "flexmbs").rglob("*.py")):
        text = path.read_text()
        kernel = _kernel_source(path)
        if not kernel and text.count("\n") > 800:
            long_files.append((str(path.relative_to(ROOT)), text.count("\n")))
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                compiled = any("jit" in ast.unparse(d) for d in node.decorator_list)
                lines = node.end_lineno - node.lineno + 1
                if lines > 100 and not compiled:
                    long_functions.append((str(path.relative_to(ROOT)), node.name, lines))
    assert not long_functions, long_functions
    assert not long_files, long_files
