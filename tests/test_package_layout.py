"""The package's shape: each subpackage imports alone, and the numba the suite runs on
is one whose internals flexmbs is written against (flexmbs.config.NUMBA_VERSIONS, the
same range as pyproject.toml's pin)."""

import re
import subprocess
import sys
import tomllib
from pathlib import Path

import numba
import pytest

from flexmbs.config import NUMBA_VERSIONS, numba_version_problem

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


def test_the_public_api_is_at_the_top_and_import_stays_light():
    """flexmbs.<name> is the documented function or class; `import flexmbs` alone does
    not bring numba in."""
    code = ("import sys, flexmbs; assert 'numba' not in sys.modules; "
            "from flexmbs.simulation import simulate; from flexmbs.io.results import "
            "open_result; from flexmbs.model.toml_reader import load_model; "
            "from flexmbs.model.compiled import compile_model; "
            "from flexmbs.model.description import Model; "
            "from flexmbs.analysis.energy import energy_balance; "
            "from flexmbs.model.user_laws import user_law; "
            "assert (flexmbs.simulate, flexmbs.open_result, flexmbs.load_model, "
            "flexmbs.compile_model, flexmbs.Model, flexmbs.energy_balance, "
            "flexmbs.user_law) == (simulate, open_result, load_model, compile_model, "
            "Model, energy_balance, user_law); "
            "assert set(flexmbs.__all__) <= set(dir(flexmbs))")
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                       text=True)
    assert r.returncode == 0, r.stderr[-2000:]
