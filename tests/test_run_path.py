"""The run's steps one by one (flexmbs.simulation: prepare_run, check_solver_fits,
log_run_warnings, start_state, open_result, OutputRecorder, build_integrator,
run_batches, finish_run, close_failed_run), each on its own."""

from pathlib import Path

import numpy as np
import pytest

import flexmbs
from flexmbs import ModelError
from flexmbs.dynamics import api
from flexmbs.formats.toml_reader import load_model
from flexmbs.simulation import (
    OutputRecorder,
    build_integrator,
    check_solver_fits,
    close_failed_run,
    finish_run,
    log_run_warnings,
    open_result,
    prepare_run,
    result_settings,
    run_batches,
    start_state,
)

MODELS = Path(__file__).resolve().parents[1] / "data" / "models"
CHAIN = MODELS / "chain_planar_4.toml"
FOUR_BAR = MODELS / "four_bar.toml"


def _prepared(path=CHAIN, **overrides):
    return prepare_run(load_model(path), dict({"t_end": 0.05, "output_step": 0.01}, **overrides))


def test_prepare_run_applies_the_overrides_and_compiles():
    run = _prepared(method="galpha", rtol=1e-5)
    assert (run.settings.method, run.settings.rtol, run.settings.t_end) == ("galpha", 1e-5, 0.05)
    assert len(run.times) == 5 and run.times[0:5][-1] == 0.05
    assert run.report is None and run.cm.nq == 4 and not run.projection
    loop = _prepared(FOUR_BAR, constraints="projection")
    assert loop.report is not None and loop.projection


@pytest.mark.parametrize("path, overrides, field, words", [
    (FOUR_BAR, {"method": "rk45"}, "method", "is a DAE"),
    (FOUR_BAR, {"method": "galpha", "constraints": "projection"}, "method", "projection"),
    (FOUR_BAR, {"formulation": "order-n"}, "formulation", "Order-N"),
    (CHAIN, {"formulation": "absolute", "method": "galpha"}, "method", "absolute"),
])
def test_check_solver_fits_names_the_setting_and_the_file(path, overrides, field, words):
    with pytest.raises(ModelError) as err:
        _prepared(path, **overrides)
    assert err.value.field == field and words in err.value.message
    assert err.value.source == str(path)


def test_check_solver_fits_refuses_galpha_without_free_coordinates():
    run = _prepared()
    run.cm.q0 = np.zeros(0)  # as if every coordinate were driven
    with pytest.raises(ModelError, match="every joint coordinate"):
        check_solver_fits(run.model, run.cm, run.settings.with_changes("galpha"), None)


def test_log_run_warnings_says_what_the_run_will_not_do():
    said = []
    run = _prepared(output_step=1.0, fixed_step=1e-3)
    log_run_warnings(run, 0.0, said.append)
    assert any("output step" in s for s in said)
    assert any('only the solver "galpha"' in s for s in said)
    log_run_warnings(run, 0.0, None)  # without a log: nothing, no error


def test_start_state_is_consistent_with_the_loops():
    run = _prepared()
    system, y0 = start_state(run, 0.0)
    assert system.n == run.cm.nstate and np.array_equal(y0, run.cm.initial_state())
    loop = _prepared(FOUR_BAR)
    said = []
    system, y0 = start_state(loop, 0.0, said.append)
    phi, phid, _, _ = api.constraint_values(loop.cm, y0[:loop.cm.nq], y0[loop.cm.nq:2 * loop.cm.nq])
    assert np.abs(phi).max() < 1e-10 and said  # the consistency report is told
    assert system.algebraic.sum() == 2 * loop.cm.nconstraints


def test_open_result_and_finish_run_write_a_readable_file(tmp_path):
    run = _prepared()
    assert open_result(None, run, {}) is None
    system, y0 = start_state(run, 0.0)
    writer = open_result(tmp_path / "r.h5", run, result_settings(run, 0.01))
    recorder = OutputRecorder(run.cm, writer, keep=False)
    integ = build_integrator(run, system, 0.0, y0,
                             lambda: recorder.emit(np.array([0.0]), y0[None, :]))
    status, message = run_batches(integ, run.times, recorder, writer)
    sim = finish_run(run, integ, recorder, status, message, tmp_path / "r.h5", 1.5)
    assert (status, message) == ("finished", "")
    assert sim.statistics["compile_time"] == 1.5 and sim.path == str(tmp_path / "r.h5")
    r = flexmbs.open_result(tmp_path / "r.h5")
    assert r.finished and r.nsamples == 6 and r.solver["settings"]["output_step"] == 0.01
    np.testing.assert_allclose(sim.t, r.time)  # read back from the file: no history kept


def test_the_recorder_keeps_rows_and_computes_outputs_in_its_own_workspace():
    run = _prepared()
    system, y0 = start_state(run, 0.0)
    keep = OutputRecorder(run.cm, None, keep=True)
    last = OutputRecorder(run.cm, None, keep=False)
    ys = np.vstack([y0, y0])
    ys[1, 0] += 0.1
    for rec in (keep, last):
        rec.emit(np.array([0.0]), y0[None, :])
        rec.emit(np.array([0.01, 0.02]), ys)
    t, y, e, s = keep.arrays()
    assert np.array_equal(t, [0.0, 0.01, 0.02]) and y.shape == (3, run.cm.nstate)
    assert last.arrays() == [None] * 4 and last.t_last == 0.02
    assert keep.ws is not system.ws
    expected = api.energies(run.cm, ys[1, :4], ys[1, 4:8])["kinetic"]
    assert e[2, 0] == pytest.approx(expected)
    assert keep.statistics() == {}


class _Failing:
    """An integrator that gets to t = 0.013 and fails there."""

    status, message, t = "running", "", 0.0

    def __init__(self, n):
        self.y = np.zeros(n)

    def advance(self, t_out, budget):
        self.status, self.message, self.t = "failed", "the step size fell below h_min", 0.013
        return 1, np.zeros((1, len(self.y)))

    def statistics(self):
        return {"nsteps": 3}


def test_run_batches_records_the_state_at_a_failure():
    run = _prepared()
    recorder = OutputRecorder(run.cm, None, keep=True)
    recorder.emit(np.array([0.0]), run.cm.initial_state()[None, :])
    status, message = run_batches(_Failing(run.cm.nstate), run.times, recorder)
    assert status == "failed" and message.startswith("the step size fell")
    assert np.array_equal(recorder.arrays()[0], [0.0, 0.01, 0.013])


def test_close_failed_run_records_why(tmp_path):
    run = _prepared()
    for exc, words in ((KeyboardInterrupt(), "interrupted by the user"),
                       (ValueError("bad"), "ValueError: bad")):
        path = tmp_path / f"{type(exc).__name__}.h5"
        writer = open_result(path, run, result_settings(run, 0.01))
        recorder = OutputRecorder(run.cm, writer, keep=False)
        recorder.emit(np.array([0.0]), run.cm.initial_state()[None, :])
        close_failed_run(writer, _Failing(run.cm.nstate), recorder, exc)
        assert words in flexmbs.open_result(path).status
    close_failed_run(None, None, None, ValueError())  # no file: nothing to close


RUN_PATH_MODULES = ("run", "systems", "run_checks", "times", "integrators", "recorder",
                    "row_outputs", "outcome", "progress", "signals", "verification")
"""The modules of flexmbs.simulation that the run's path goes through."""


def test_the_run_path_reads_in_one_screen():
    """Every function of the run (flexmbs.simulation.run, the modules of its steps and
    the convergence check) and of the compilation (flexmbs.model.compiled) is under 80
    lines: each step of the path is one of its own; and run.py is under 600 lines."""
    import ast
    from pathlib import Path

    root = Path(__file__).resolve().parents[1] / "flexmbs"
    paths = [root / "simulation" / f"{name}.py" for name in RUN_PATH_MODULES + ("convergence",)]
    for path in paths + [root / "model" / "compiled.py"]:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                assert node.end_lineno - node.lineno < 80, (path.name, node.name)
    assert len((root / "simulation" / "run.py").read_text().splitlines()) < 600


def test_the_names_of_the_run_are_names_of_the_package():
    """Every public name of the run's modules is found as flexmbs.simulation.<name>,
    the same object as in its module."""
    import importlib

    import flexmbs.simulation as package

    for name in RUN_PATH_MODULES:
        module = importlib.import_module(f"flexmbs.simulation.{name}")
        for public in getattr(module, "__all__", ()):
            assert getattr(package, public) is getattr(module, public), (name, public)
    assert package.simulate is flexmbs.simulate
    with pytest.raises(AttributeError, match="no attribute 'no_such_name'"):
        package.no_such_name  # noqa: B018
