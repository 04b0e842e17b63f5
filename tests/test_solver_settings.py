"""Each integration method keeps its own settings: a model file's [solver.bdf] and
[solver.galpha] tables, the documented defaults of each method, and `flexmbs run`
saying which settings it used. Switching --solver never hands one method's tolerances
to another."""

from pathlib import Path

import pytest
from cli_in_process import flexmbs_here

from flexmbs import Model, ModelError, open_result
from flexmbs.formats.toml_reader import loads_model
from flexmbs.model.items import default_tolerances

ROOT = Path(__file__).resolve().parents[1]
CHAIN = ROOT / "data" / "models" / "chain_planar_4.toml"  # [solver] bdf, rtol 1e-8
GALPHA_TABLE = "\n[solver.galpha]\nrtol = 2e-4\natol = 3e-6\nrho_inf = 0.6\n"


def _run(capsys, tmp_path, text, *args):
    model = tmp_path / "chain.toml"
    model.write_text(text)
    out = tmp_path / "chain.h5"
    r = flexmbs_here(capsys, "run", model, "-o", out, "--t-end", 0.02, *args)
    return r, out


def test_a_files_galpha_table_is_used_by_galpha_and_its_bdf_tolerances_never(
    tmp_path, capsys
):
    text = CHAIN.read_text() + GALPHA_TABLE
    r, out = _run(capsys, tmp_path, text, "--solver", "galpha")
    assert r.returncode == 0, r.stderr
    settings = open_result(out).solver["settings"]
    assert (settings["rtol"], settings["atol"], settings["rho_inf"]) == (2e-4, 3e-6, 0.6)
    assert ("solver galpha, rtol 0.0002, atol 3e-06 (given for it), rho_inf 0.6, steps "
            "under error control; not used: bdf's rtol 1e-08") in r.stdout
    # the file's own method, bdf, keeps the file's [solver] tolerances
    r, out = _run(capsys, tmp_path, text)
    assert r.returncode == 0, r.stderr
    settings = open_result(out).solver["settings"]
    assert (settings["rtol"], settings["atol"]) == (1e-8, 1e-10)
    assert "solver bdf, rtol 1e-08, atol 1e-10 (given for it); not used: galpha's" in r.stdout


@pytest.mark.parametrize("switch", [["--solver", "galpha"], ["--set", 'solver.method="galpha"']])
def test_switching_to_galpha_without_its_table_takes_its_defaults(tmp_path, capsys, switch):
    r, out = _run(capsys, tmp_path, CHAIN.read_text(), *switch)
    assert r.returncode == 0, r.stderr
    settings = open_result(out).solver["settings"]
    assert (settings["rtol"], settings["atol"]) == default_tolerances("galpha") == (1e-5, 1e-7)
    assert "rtol 1e-05, atol 1e-07 (galpha's defaults)" in r.stdout


def test_the_command_lines_tolerances_are_those_of_the_method_it_runs(tmp_path, capsys):
    text = CHAIN.read_text() + GALPHA_TABLE
    r, out = _run(capsys, tmp_path, text, "--solver", "galpha", "--rtol", 1e-3)
    assert r.returncode == 0, r.stderr
    settings = open_result(out).solver["settings"]
    assert (settings["rtol"], settings["atol"]) == (1e-3, 3e-6)
    r, out = _run(capsys, tmp_path, text, "--set", "solver.galpha.rtol=5e-4", "--solver", "galpha")
    assert r.returncode == 0, r.stderr
    assert open_result(out).solver["settings"]["rtol"] == 5e-4


def test_the_documented_defaults():
    """docs/reference/model-file.md gives them; galpha's with a fixed step are the
    Newton iteration's tolerances."""
    assert default_tolerances("bdf") == (1e-6, 1e-8)
    assert default_tolerances("galpha") == (1e-5, 1e-7)
    assert default_tolerances("galpha", fixed_step=1e-3) == (1e-8, 1e-10)
    for method in ("ida", "scipy-radau", "scipy-bdf"):
        assert default_tolerances(method) == (1e-6, 1e-8)
    model = Model("m")
    assert (model.solver.rtol, model.solver.atol) == (1e-6, 1e-8)
    model.set_solver(method="galpha")
    assert (model.solver.rtol, model.solver.atol) == (1e-5, 1e-7)
    model.set_solver(fixed_step=1e-3)
    assert (model.solver.rtol, model.solver.atol) == (1e-8, 1e-10)
    page = (ROOT / "docs" / "reference" / "model-file.md").read_text()
    rows = {
        "`galpha`, steps under error control": default_tolerances("galpha"),
        "`galpha` with `fixed_step` (the Newton iteration's tolerances alone)":
            default_tolerances("galpha", 1e-3),
        "`bdf`, `ida`, `scipy-radau`, `scipy-bdf`, `dop853`, `rk45`": default_tolerances("bdf"),
    }
    for method, (rtol, atol) in rows.items():
        assert f"| {method} | `{rtol:.0e}` | `{atol:.0e}` |".replace("e-0", "e-") in page


def test_python_keeps_each_methods_tolerances():
    model = Model("m")
    model.set_solver(rtol=1e-9, atol=1e-11)  # bdf's
    model.set_solver(method="galpha", methods={"galpha": {"rtol": 1e-4}})
    assert (model.solver.rtol, model.solver.atol) == (1e-4, 1e-7)
    model.set_solver(method="bdf")
    assert (model.solver.rtol, model.solver.atol) == (1e-9, 1e-11)
    assert model.solver.per_method == {"bdf": {"rtol": 1e-9, "atol": 1e-11},
                                       "galpha": {"rtol": 1e-4}}
    with pytest.raises(ModelError, match='solver.galpha: field "rtol"'):
        model.set_solver(methods={"galpha": {"rtol": 2.0}})
    with pytest.raises(ModelError, match='solver.bdf: field "rho_inf": unknown field'):
        model.set_solver(methods={"bdf": {"rho_inf": 0.5}})


def test_a_field_given_twice_is_refused_in_one_line(tmp_path, capsys):
    text = CHAIN.read_text().replace('method = "bdf"', 'method = "galpha"')
    r, _ = _run(capsys, tmp_path, text + "\n[solver.galpha]\nrtol = 1e-5\n")
    assert r.returncode == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in r.stderr
    assert str(tmp_path / "chain.toml") in lines[0]
    assert 'solver: field "rtol"' in lines[0]
    assert "both in [solver] and in [solver.galpha]" in lines[0]
    # a bdf file's [solver] tolerances and a [solver.bdf] table of the same field
    r, _ = _run(capsys, tmp_path, CHAIN.read_text() + "\n[solver.bdf]\natol = 1e-9\n")
    assert r.returncode == 2 and 'solver: field "atol"' in r.stderr
    assert "both in [solver] and in [solver.bdf]" in r.stderr


@pytest.mark.parametrize("table, words", [
    ("[solver.galpha]\nrtol = 2.0\n", ['solver.galpha: field "rtol"']),
    ("[solver.galpha]\nmax_step = 0.1\n", ['solver.galpha: field "max_step"', "unknown field"]),
    ("[solver.bdf]\nfixed_step = 0.1\n", ['solver.bdf: field "fixed_step"', "unknown field"]),
    ("[solver.galpha]\nrho_inf = 1.5\n", ['solver.galpha: field "rho_inf"', "[0, 1]"]),
    ("[solver.euler]\nrtol = 1e-5\n", ['"euler"']),
])
def test_bad_method_tables(table, words):
    with pytest.raises(ModelError) as err:
        loads_model(CHAIN.read_text() + "\n" + table, source="chain.toml")
    for w in words:
        assert w in str(err.value)
