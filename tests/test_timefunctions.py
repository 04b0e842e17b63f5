"""The set-point laws Steps and Trajectory: the numba kernel against a direct numpy
evaluation of their definitions, the rates against finite differences, the rest
conditions at the set-points, and the validation errors.

(The older laws are checked the same way in test_kinematics_dynamics.py,
test_reference_time_functions.)"""

import numpy as np
import pytest

from flexmbs import ModelError
from flexmbs.kinematics.timefunctions import evaluate_time_function
from flexmbs.model.timefunctions import (
    LAW_CODES,
    TIME_FUNCTION_LAWS,
    Harmonic,
    Steps,
    Table,
    Trajectory,
    check_time_function,
    compile_time_functions,
)

TIMES = (-0.5, 0.3, 0.35, 1.2, 2.0, 3.7)
VALUES = (0.4, -1.1, 0.9, 0.9, 2.5, -0.2)

STEPS = Steps(times=TIMES, values=VALUES)
CUBIC = Trajectory(times=TIMES, values=VALUES, profile="cubic")
QUINTIC = Trajectory(times=TIMES, values=VALUES)  # the default profile
# one of each new law among older ones, so that ptr offsets are exercised
FUNCTIONS = [Harmonic(0.5, 2.0, 0.3, 0.1), STEPS, Table(), CUBIC, QUINTIC,
             Steps(times=(1.0,), values=(3.0,)), Trajectory((0.0, 2.0), (1.0, -1.0))]
KIND, PTR, DATA = compile_time_functions(FUNCTIONS)


def kernel(k, t):
    out = np.zeros(3)
    evaluate_time_function(KIND, PTR, DATA, k, float(t), np.nan, out)
    return out


def kernel_many(k, ts):
    return np.array([kernel(k, t) for t in ts])


def steps_reference(fn, t):
    """f(t) of Steps from its definition, one interval at a time."""
    tb, vb = np.asarray(fn.times), np.asarray(fn.values)
    if t < tb[0]:
        return vb[0]
    for j in range(tb.size - 1):
        if tb[j] <= t < tb[j + 1]:
            return vb[j]
    return vb[-1]


def trajectory_reference(fn, t):
    """(f, f', f'') of Trajectory from its definition (polynomials in tau)."""
    tb, vb = np.asarray(fn.times), np.asarray(fn.values)
    if t < tb[0]:
        return np.array([vb[0], 0.0, 0.0])
    if t >= tb[-1]:
        return np.array([vb[-1], 0.0, 0.0])
    j = np.searchsorted(tb, t, side="right") - 1
    h = tb[j + 1] - tb[j]
    tau = (t - tb[j]) / h
    if fn.profile == "cubic":
        b = np.polynomial.Polynomial([0, 0, 3, -2])
    else:
        b = np.polynomial.Polynomial([0, 0, 0, 10, -15, 6])
    dv = vb[j + 1] - vb[j]
    return np.array([vb[j] + dv * b(tau), dv * b.deriv(1)(tau) / h,
                     dv * b.deriv(2)(tau) / h ** 2])


def sample_times(times, n=400, seed=0):
    """Random times over and beyond the set-points, the set-points themselves and
    times just beside them."""
    rng = np.random.default_rng(seed)
    tb = np.asarray(times, dtype=float)
    span = tb[-1] - tb[0] + 1.0
    ts = rng.uniform(tb[0] - 0.5 * span, tb[-1] + 0.5 * span, size=n)
    eps = 1e-12
    return np.concatenate([ts, tb, tb - eps, tb + eps, [-1e9, 1e9]])


# ------------------------------------------------------------------ the registry
def test_codes_and_registry():
    assert TIME_FUNCTION_LAWS["steps"] is Steps
    assert TIME_FUNCTION_LAWS["trajectory"] is Trajectory
    # the older codes unchanged, the new ones after them
    assert LAW_CODES == {"constant": 0, "rate": 1, "polynomial": 2, "harmonic": 3,
                         "spinup": 4, "table": 5, "steps": 6, "trajectory": 7}
    assert list(KIND) == [3, 6, 5, 7, 7, 6, 7]
    n = len(TIMES)
    assert list(DATA[PTR[1]:PTR[2]]) == [n, *TIMES, *VALUES]
    assert list(DATA[PTR[3]:PTR[4]]) == [3, n, *TIMES, *VALUES]
    assert list(DATA[PTR[4]:PTR[5]]) == [5, n, *TIMES, *VALUES]


# ------------------------------------------------------------------------ Steps
@pytest.mark.parametrize("k", [1, 5])
def test_steps_value_matches_definition(k):
    fn = FUNCTIONS[k]
    ts = sample_times(fn.times)
    got = kernel_many(k, ts)
    expected = np.array([steps_reference(fn, t) for t in ts])
    np.testing.assert_array_equal(got[:, 0], expected)
    np.testing.assert_array_equal(got[:, 1:], 0.0)


def test_steps_at_and_between_set_points():
    for j, (t, v) in enumerate(zip(TIMES, VALUES)):
        assert kernel(1, t)[0] == v  # the new value from its time on
        before = VALUES[max(j - 1, 0)]
        assert kernel(1, np.nextafter(t, -np.inf))[0] == before
    assert kernel(1, TIMES[0] - 10.0)[0] == VALUES[0]
    assert kernel(1, TIMES[-1] + 10.0)[0] == VALUES[-1]


def test_steps_rates_match_finite_differences_between_set_points():
    """f' = f'' = 0 is the exact derivative away from the steps: central differences
    of f (with h below the distance to the nearest step) vanish exactly."""
    h = 1e-4
    ts = sample_times(TIMES, n=300, seed=1)[:300]
    ts = ts[np.min(np.abs(ts[:, None] - np.asarray(TIMES)[None, :]), axis=1) > 2 * h]
    for t in ts:
        fp, f0, fm = kernel(1, t + h), kernel(1, t), kernel(1, t - h)
        assert (fp[0] - fm[0]) / (2 * h) == f0[1] == 0.0
        assert (fp[0] - 2 * f0[0] + fm[0]) / h ** 2 == f0[2] == 0.0


# ------------------------------------------------------------------- Trajectory
@pytest.mark.parametrize("k", [3, 4, 6])
def test_trajectory_matches_definition(k):
    fn = FUNCTIONS[k]
    ts = sample_times(fn.times, seed=k)
    got = kernel_many(k, ts)
    expected = np.array([trajectory_reference(fn, t) for t in ts])
    scale = np.max(np.abs(fn.values)) * np.array(
        [1.0, 1.0 / np.min(np.diff(fn.times)), 1.0 / np.min(np.diff(fn.times)) ** 2])
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-13 * scale.max())


@pytest.mark.parametrize("k", [3, 4, 6])
def test_trajectory_rates_match_finite_differences(k):
    """Central differences of the kernel's f and f' against its f' and f''.

    On an interval of length dt with a move dv the truncation errors are
    h^2/6 |f'''| <= 10 h^2 |dv|/dt^3 (|b'''| <= 60) for f' and
    h^2/6 |f''''| <= 60 h^2 |dv|/dt^4 (|b''''| <= 360) for f'', plus rounding
    ~eps |f|/h and eps |f'|/h; the tolerances are twice these bounds. f'' is
    checked against both the central difference of f' and the second difference of
    f. h is 1e-3 of the interval's length; points closer than 2h to a set-point (where
    the cubic's f'' jumps) are skipped."""
    fn = FUNCTIONS[k]
    tb = np.asarray(fn.times)
    for t in sample_times(fn.times, n=300, seed=10 + k)[:300]:
        j = np.clip(np.searchsorted(tb, t) - 1, 0, tb.size - 2)
        dt = tb[j + 1] - tb[j]
        h = 1e-3 * dt
        if np.min(np.abs(tb - t)) < 2 * h:
            continue
        fp, f0, fm = kernel(k, t + h), kernel(k, t), kernel(k, t - h)
        dv = np.max(np.abs(np.diff(fn.values)))
        tol1 = 20 * h ** 2 * dv / dt ** 3 + 1e-14 * np.max(np.abs(fn.values)) / h
        tol2 = 120 * h ** 2 * dv / dt ** 4 + 1e-14 * abs(f0[1]) / h + 1e-14 * dv / dt ** 2
        assert abs((fp[0] - fm[0]) / (2 * h) - f0[1]) <= tol1, (t, fn)
        assert abs((fp[1] - fm[1]) / (2 * h) - f0[2]) <= tol2, (t, fn)
        # f'' also from the second difference of f: truncation h^2/12 |f''''|,
        # rounding ~4 eps |f|/h^2
        tol3 = 60 * h ** 2 * dv / dt ** 4 + 1e-14 * np.max(np.abs(fn.values)) / h ** 2
        assert abs((fp[0] - 2 * f0[0] + fm[0]) / h ** 2 - f0[2]) <= tol3, (t, fn)


def test_trajectory_rest_at_set_points():
    for t, v in zip(TIMES, VALUES):
        for k in (3, 4):
            f = kernel(k, t)
            assert f[0] == pytest.approx(v, abs=1e-15)
            assert f[1] == 0.0  # zero speed at every set-point
        assert kernel(4, t)[2] == 0.0  # quintic: zero acceleration too
    # the cubic's acceleration is not zero at the start of an interval with a move
    assert kernel(3, TIMES[0])[2] != 0.0
    # both one-sided limits of f' and (quintic) f'' vanish at each interior set-point
    for t in TIMES:
        for side in (-np.inf, np.inf):
            ts = np.nextafter(t, side)
            assert abs(kernel(3, ts)[1]) < 1e-9
            assert abs(kernel(4, ts)[1]) < 1e-9 and abs(kernel(4, ts)[2]) < 1e-6


def test_trajectory_continuous_at_set_points():
    for k in (3, 4):
        for t, v in zip(TIMES, VALUES):
            for d in (1e-9, 1e-7):
                left, right = kernel(k, t - d)[0], kernel(k, t + d)[0]
                # |f'| <= 1.875 |dv|/dt (quintic), near the set-point ~ d^2: tiny
                assert abs(left - v) < 1e-8 and abs(right - v) < 1e-8


def test_trajectory_outside_the_range():
    for k in (3, 4):
        np.testing.assert_array_equal(kernel(k, TIMES[0] - 1.0), [VALUES[0], 0, 0])
        np.testing.assert_array_equal(kernel(k, TIMES[-1] + 1.0), [VALUES[-1], 0, 0])
        np.testing.assert_array_equal(kernel(k, TIMES[-1]), [VALUES[-1], 0, 0])


def test_trajectory_midpoint_of_a_move():
    """Both profiles pass halfway at the middle of an interval, at their peak rate
    (1.5 and 1.875 times the mean rate)."""
    f = kernel(6, 1.0)  # 1 -> -1 over [0, 2]
    assert f[0] == pytest.approx(0.0, abs=1e-15)
    assert f[1] == pytest.approx(-1.875)
    assert f[2] == pytest.approx(0.0, abs=1e-14)
    f = kernel(3, 0.5 * (TIMES[0] + TIMES[1]))
    assert f[1] == pytest.approx(1.5 * (VALUES[1] - VALUES[0]) / (TIMES[1] - TIMES[0]))


# -------------------------------------------------------------------- validation
ITEM = 'actuator "a1"'


@pytest.mark.parametrize("fn, field, words", [
    (Trajectory((0.0, 1.0), (0.0, 1.0), profile="linear"), "setpoint.profile",
     "'cubic' or 'quintic'"),
    (Trajectory((0.0, 1.0), (0.0, 1.0), profile=5), "setpoint.profile",
     "'cubic' or 'quintic'"),
    (Trajectory((0.0, 1.0, 1.0), (0.0, 1.0, 2.0)), "setpoint.times", "strictly increasing"),
    (Trajectory((0.0, 2.0, 1.0), (0.0, 1.0, 2.0)), "setpoint.times", "strictly increasing"),
    (Steps((1.0, 0.5), (0.0, 1.0)), "setpoint.times", "strictly increasing"),
    (Trajectory((0.0, 1.0), (0.0, 1.0, 2.0)), "setpoint.values", "as many values as times"),
    (Steps((0.0, 1.0, 2.0), (0.0, 1.0)), "setpoint.values", "as many values as times"),
    (Trajectory((0.0, np.nan), (0.0, 1.0)), "setpoint.times", "finite"),
    (Trajectory((0.0, 1.0), (0.0, np.inf)), "setpoint.values", "finite"),
    (Steps((0.0, 1.0), (np.nan, 1.0)), "setpoint.values", "finite"),
    (Trajectory((0.0,), (0.0,)), "setpoint.times", "at least 2"),
    (Steps((), ()), "setpoint.times", "at least 1"),
    (Steps(("0", 1.0), (0.0, 1.0)), "setpoint.times", "list of numbers"),
    (Steps((0.0, 1.0), 1.0), "setpoint.values", "list of numbers"),
    (Trajectory((0.0, 1.0), (True, 1.0)), "setpoint.values", "list of numbers"),
])
def test_validation_errors(fn, field, words):
    with pytest.raises(ModelError) as err:
        check_time_function(fn, ITEM, "setpoint")
    assert err.value.item == ITEM
    assert err.value.field == field
    assert words in err.value.message
    assert ITEM in str(err.value) and f'field "{field}"' in str(err.value)


def test_valid_laws_pass():
    for fn in FUNCTIONS:
        check_time_function(fn, ITEM, "setpoint")
    check_time_function(Steps(np.array([0.0, 1.0]), np.array([1, 2])), ITEM, "setpoint")


@pytest.mark.parametrize("given, words", [
    ({"law": "steps", "times": [0.0, 1.0], "values": [0.0, 0.5]},
     ["got a table of a model file", "flexmbs.model.Steps(...)"]),
    ({"times": [0.0, 1.0], "values": [0.0, 0.5]},
     ["flexmbs.model.Steps(times, values)", "flexmbs.model.Table(time, value)",
      "flexmbs.model.Trajectory(times, values)"]),
    ([[0.0, 0.0], [1.0, 0.5]], ["got list", "flexmbs.model.Steps(times, values)"]),
    (0.5, ["got the number 0.5", "flexmbs.model.Constant(0.5)"]),
    ("ramp", ["got str 'ramp'", "flexmbs.model's Constant, ConstantRate"]),
])
def test_a_set_point_that_is_not_a_time_function_names_the_helper(given, words):
    """In Python a set-point given as a model file's table, values or a number: the
    one line names the item, the field and the flexmbs.model class to write."""
    from flexmbs.model.library import huang_two_link

    model = huang_two_link()
    with pytest.raises(ModelError) as err:
        model.add_actuator("motor", "joint1", kp=10.0, kd=1.0, setpoint=given)
    text = str(err.value)
    assert text.startswith('actuator "motor": field "setpoint": expected a time function; ')
    assert "\n" not in text
    for w in words:
        assert w in text
    # each named class takes the data as written
    from flexmbs.model import Constant, Steps, Table, Trajectory

    for fn in (Steps([0.0, 1.0], [0.0, 0.5]), Table([0.0, 1.0], [0.0, 0.5]),
               Trajectory([0.0, 1.0], [0.0, 0.5]), Constant(0.5)):
        huang_two_link().add_actuator("motor", "joint1", kp=10.0, kd=1.0, setpoint=fn)


@pytest.mark.parametrize("section, material, field, words", [
    ({"type": "round_tube", "outer_diameter": 0.02, "wall_thickness": 0.001}, "steel",
     "section", ["got a table of a model file",
                 "flexmbs.elements.round_tube_section(outer_diameter, wall_thickness)"]),
    ((0.02, 0.001), "steel", "section",
     ["got tuple (0.02, 0.001)", "flexmbs.elements' rectangle_section(width, height)",
      "general_section(area, i_y, i_z, torsion_constant)"]),
    ("tube", {"youngs_modulus": 7e10, "density": 2700.0}, "material",
     ["got a table of a model file", "flexmbs.elements.material(youngs_modulus, density"]),
])
def test_a_beams_section_or_material_that_is_not_one_names_the_helper(section, material,
                                                                     field, words):
    """A beam given its section or material as a model file's table, in Python: one
    line naming the body, the field and the flexmbs.elements helper, when the body is
    added (not an AttributeError when the model is compiled)."""
    from flexmbs import Model
    from flexmbs.elements import material as make_material
    from flexmbs.elements import round_tube_section

    steel = make_material(youngs_modulus=2.1e11, density=7800.0, poisson_ratio=0.3)
    tube = round_tube_section(0.02, 0.001)
    section = tube if section == "tube" else section
    material = steel if material == "steel" else material
    with pytest.raises(ModelError) as err:
        Model("m").add_beam_body("arm", [[0, 0, 0], [1, 0, 0]], section=section,
                                 material=material)
    text = str(err.value)
    assert text.startswith(f'body "arm": field "{field}": expected a ') and "\n" not in text
    for w in words:
        assert w in text
    Model("m").add_beam_body("arm", [[0, 0, 0], [1, 0, 0]], section=tube, material=steel)
