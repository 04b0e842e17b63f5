"""State-space models reduced for control design (Linearization.to_statespace(keep=...),
flexmbs.analysis.reduction): the rotary flexible link reduced to its hub and first
bending mode against the full model's frequency response, the static gain kept by
residualization, rigid modes named by the model's scale, and the warning about a state
that is not an equilibrium."""

import warnings
from pathlib import Path

import numpy as np
import pytest
import scipy.linalg
from test_statespace import LINK

import flexmbs
from flexmbs import compile_model, linearize
from flexmbs.analysis.linear_notes import equilibrium_note, rigid_modes
from flexmbs.analysis.linear_report import format_linearization
from flexmbs.analysis.modes import format_modes, system_modes
from flexmbs.analysis.reduction import reduce_model, static_gain
from flexmbs.analysis.statespace import reduce_state_space, state_space_matrices
from flexmbs.errors import ModelError, NotEquilibriumWarning
from flexmbs.formats.toml_reader import loads_model
from flexmbs.model.library import chain_model

ROTARY = Path(__file__).resolve().parents[1] / "examples" / "rotary_flexible_link.toml"
OUTPUTS = ["theta", "tip[1]", "current"]
AT_REST = ['bodies.ruler.initial="static"']  # the ruler bent by its weight, in equilibrium


def _response(s, f):
    """(len(f), outputs, inputs): C (j w I - A)^-1 B + D at the frequencies f (Hz)."""
    eye = np.eye(len(s.A))
    return np.array([s.C @ np.linalg.solve(2j * np.pi * x * eye - s.A, s.B) + s.D for x in f])


def _hankel_singular_values(s):
    """sqrt of the eigenvalues of P Q, the controllability and observability gramians
    (A P + P A^T + B B^T = 0, A^T Q + Q A + C^T C = 0) of the balanced A, largest
    first."""
    _, (scale, _) = scipy.linalg.matrix_balance(s.A, permute=False, separate=True)
    a, b, c = s.A / scale[:, None] * scale, s.B / scale[:, None], s.C * scale
    p = scipy.linalg.solve_continuous_lyapunov(a, -b @ b.T)
    q = scipy.linalg.solve_continuous_lyapunov(a.T, -c.T @ c)
    return np.sort(np.sqrt(np.abs(np.linalg.eigvals(p @ q))))[::-1]


@pytest.fixture(scope="module")
def rotary():
    """The rotary flexible link (a free hub on a DC servo, the ruler's four lowest modes
    and their modal derivatives: 22 states, poles to kHz) about its static equilibrium."""
    cm = compile_model(flexmbs.load_model(ROTARY, AT_REST))
    lin = linearize(cm)
    return lin, state_space_matrices(lin, cm, outputs=OUTPUTS)


def test_the_hub_and_first_bending_mode_match_the_full_model_below_that_mode(rotary):
    """keep=2: the hub (its rigid pole and the back-EMF's real pole) and the first
    bending pair, 4 of 22 states, their poles the full model's; the magnitudes of the
    hub's angle, the tip's deflection and the current from the voltage within 1 % of
    the full model's from 0.01 Hz to 0.9 times the first bending mode, the
    antiresonance at the clamped ruler's 3.7 Hz among them (measured 0.27 %, 0.011 %
    and 0.059 %). Truncated without the dropped modes' static response the tip is 55 %
    off: the second bending mode's static share of the deflection."""
    lin, full = rotary
    assert full.A.shape == (22, 22)
    reduced = reduce_state_space(full, 2)
    assert reduced.states == ["rigid1", "mode1", "mode2.re", "mode2.im"]
    poles = np.linalg.eigvals(full.A)
    slow = np.sort_complex(poles[np.argsort(np.abs(poles))[:4]])
    np.testing.assert_allclose(np.sort_complex(np.linalg.eigvals(reduced.A)), slow,
                               rtol=1e-9, atol=1e-9)
    bending = np.abs(lin.poles[lin.poles.imag > 0][0]) / (2 * np.pi)
    assert 5.0 < bending < 5.2
    f = np.geomspace(0.01, 0.9 * bending, 2000)
    g = np.abs(_response(full, f))
    error = np.abs(np.abs(_response(reduced, f)) / g - 1).max(axis=0)[:, 0]
    assert np.all(error < 0.01), error
    truncated = reduce_state_space(full, 2, "truncate")
    assert np.abs(np.abs(_response(truncated, f)) / g - 1).max() > 0.5
    band = reduce_state_space(full, (0.0, 10.0))   # the same poles, by their frequency
    np.testing.assert_allclose(_response(band, f), _response(reduced, f), rtol=1e-9)


def test_a_band_above_the_hub_truncates_it_and_residualizes_the_fast_modes(rotary):
    """keep=(2, 50) Hz: the two bending pairs; the hub's poles below the band are
    truncated, the modes above it residualized (the static part of the kHz modes of
    the derivatives is 0 on these outputs)."""
    _, full = rotary
    band = reduce_state_space(full, (2.0, 50.0))
    assert band.states == ["mode1.re", "mode1.im", "mode2.re", "mode2.im"]
    hz = np.sort(np.abs(np.linalg.eigvals(band.A))) / (2 * np.pi)
    np.testing.assert_allclose(hz, [5.102, 5.102, 23.68, 23.68], rtol=1e-3)


def test_residualization_keeps_the_static_gain():
    """The hub on its spring (8 N m/rad, gear 10) turning the flexible ruler (three
    modes and their derivatives): the hub's static gain from the motor's torque is
    gear / stiffness = 1.25 rad/(N m) in the full model (1e-6), and every reduction by
    residualization keeps the full model's static gain to 1e-9; truncation does not."""
    cm = compile_model(loads_model(LINK))
    s = state_space_matrices(linearize(cm), cm, outputs=["angle", "tip[1]"])
    dc = static_gain(s.A, s.B, s.C, s.D)
    assert abs(dc[0, 0] / 1.25 - 1) < 1e-6
    for keep in (1, 2, (0.0, 30.0)):
        r = reduce_state_space(s, keep)
        assert len(r.A) < len(s.A)
        np.testing.assert_allclose(static_gain(r.A, r.B, r.C, r.D), dc, rtol=1e-9,
                                   atol=1e-9 * np.abs(dc).max())
    t = reduce_state_space(s, 1, "truncate")
    assert abs(static_gain(t.A, t.B, t.C, t.D)[0, 0] / dc[0, 0] - 1) > 1e-3


def test_a_free_hub_without_damping_keeps_its_double_pole_at_zero():
    """The hub of LINK without its spring and damper: a rigid mode without damping, a
    double pole at 0 (not diagonalizable), kept in its Schur vectors `rigid1`,
    `rigid2` (a nilpotent block) beside the first bending pair in modal form; the
    angle and the tip within 1 % of the full model below the first bending mode
    (measured 0.05 % and 0.017 %)."""
    text = LINK.replace("stiffness = 8.0\ndamping = 0.15\n", "")
    cm = compile_model(loads_model(text))
    lin = linearize(cm)
    assert lin.rigid.tolist()[:2] == [True, False]
    full = state_space_matrices(lin, cm, outputs=["angle", "tip[1]"])
    reduced = reduce_state_space(full, 2)
    assert reduced.states == ["rigid1", "rigid2", "mode1.re", "mode1.im"]
    rigid = reduced.A[:2, :2]
    assert np.abs(rigid @ rigid).max() < 1e-9 * np.abs(rigid).max()
    bending = np.abs(lin.poles[lin.poles.imag > 0][0]) / (2 * np.pi)
    f = np.geomspace(0.01, 0.9 * bending, 1000)
    error = np.abs(np.abs(_response(reduced, f)) / np.abs(_response(full, f)) - 1).max()
    assert error < 0.01, error


def test_balanced_reduction_keeps_the_static_gain_within_its_error_bound(rotary):
    """method="balanced": python-control's balred (matchdc). The hub on its spring
    (stable) reduced to 4 states keeps the full model's static gain (1e-8), and its
    error on a grid of frequencies is within the bound of balanced reduction, twice
    the sum of the dropped Hankel singular values; the rotary link's rigid pole is
    kept as it is (4 states, a pole within 1e-6 of 0)."""
    pytest.importorskip("slycot")
    cm = compile_model(loads_model(LINK))
    s = state_space_matrices(linearize(cm), cm, outputs=["angle"])
    b = reduce_state_space(s, 2, "balanced")
    assert len(b.A) == 4
    np.testing.assert_allclose(static_gain(b.A, b.B, b.C, b.D), static_gain(s.A, s.B, s.C, s.D),
                               rtol=1e-8)
    hankel = _hankel_singular_values(s)
    f = np.geomspace(0.01, 1e5, 2000)
    error = np.abs(_response(b, f) - _response(s, f)).max()
    assert error <= 2 * hankel[4:].sum() * (1 + 1e-6), (error, 2 * hankel[4:].sum())
    _, full = rotary
    r = reduce_state_space(full, 2, "balanced")
    assert len(r.A) == 4 and np.min(np.abs(np.linalg.eigvals(r.A))) < 1e-6
    with pytest.raises(ModelError, match="keeps the 2 rigid or unstable poles"):
        reduce_model(np.diag([0.0, 0.0, -100.0]), np.ones((3, 1)), np.ones((1, 3)),
                     np.zeros((1, 1)), (10.0, 20.0), "balanced")


def test_rigid_modes_are_named_rigid_by_the_models_scale(rotary):
    """The rotary link's free hub: its undamped frequency (difference noise, -2e-16 Hz
    before) is 0 and named rigid in the reports of `flexmbs linearize` and `flexmbs
    modes`, as is its pole, and nothing is named unstable; the tolerance is relative:
    1e-3 Hz is rigid beside 1e4 Hz, not beside 1 Hz. An upright pendulum stays
    unstable."""
    lin, _ = rotary
    assert lin.rigid.tolist() == [True] + [False] * 10 and lin.frequencies[0] == 0.0
    text = format_linearization(lin)
    modes = text[text.index(" mode   undamped"):text.index("mode shapes")]
    assert modes.count("rigid") == 2 and "unstable" not in modes
    system = system_modes(compile_model(flexmbs.load_model(ROTARY, AT_REST)))
    table = format_modes([], system)
    assert system.eigenvalues[0] == 0.0 and "rigid  shaft 100 %" in table
    assert "unstable" not in table
    assert rigid_modes([-2.6e-17, 5.0, 19103.0]).tolist() == [True, False, False]
    assert rigid_modes([1e-3, 1e4]).tolist() == [True, False]
    assert rigid_modes([1e-3, 1.0]).tolist() == [False, False]
    assert rigid_modes(np.array([0.0, -3.0 + 4.0j])).tolist() == [True, False]
    upright = chain_model(1)
    joint = next(iter(upright.joints.values()))
    joint.initial[0] = np.pi
    lin = linearize(compile_model(upright))
    assert lin.frequencies[0] < 0 and not lin.rigid[0]
    assert "unstable" in format_linearization(lin) and "rigid" not in format_linearization(lin)


def test_a_state_that_is_not_an_equilibrium_warns_once_as_the_command_line_says():
    """The rotary link linearized with its hub turning at 0.5 rad/s: the first state-space
    model of it warns (NotEquilibriumWarning, at the caller's line) with the words of
    `flexmbs linearize`'s report, the next ones do not; at rest nothing warns."""
    cm = compile_model(flexmbs.load_model(ROTARY, AT_REST))
    u = np.zeros(cm.nq)
    u[0] = 0.5
    lin = linearize(cm, u=u)
    note = equilibrium_note(lin)
    assert note.startswith("NOT an equilibrium") and note in format_linearization(lin)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        state_space_matrices(lin, cm, outputs=["theta"])
        state_space_matrices(lin, cm, outputs=["theta"])
        reduce_state_space(state_space_matrices(lin, cm, outputs=["theta"]), 1)
    assert [type(w.message) for w in caught] == [NotEquilibriumWarning]
    assert str(caught[0].message) == f"linearized about t = 0 s, {note}"
    assert caught[0].filename == __file__
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        state_space_matrices(linearize(cm), cm, outputs=["theta"])


def test_bad_reductions_are_refused_with_one_line():
    """keep must be a number of modes or a band with a pole in it; the method one of
    three."""
    a = np.diag([-1.0, -10.0, -100.0])
    b, c, d = np.ones((3, 1)), np.ones((1, 3)), np.zeros((1, 1))
    for keep, match in [(0, "at least one mode"), (True, "number of modes"),
                        ("2", "number of modes"), ((5.0, 1.0), "0 <= low < high"),
                        ((1000.0, 2000.0), "no pole in the band")]:
        with pytest.raises(ModelError, match=match) as info:
            reduce_model(a, b, c, d, keep)
        assert "keep" in str(info.value) and "\n" not in str(info.value)
    with pytest.raises(ModelError, match="residualize, truncate, balanced"):
        reduce_model(a, b, c, d, 1, "modal")
    r = reduce_model(a, b, c, d, 1)          # a mode is a pair of poles: -1 and -10
    np.testing.assert_allclose(np.sort(np.diag(r.A)), [-10.0, -1.0])
    np.testing.assert_allclose(r.D, [[0.01]])
