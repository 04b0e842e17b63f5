"""Trees with flexible bodies anywhere (docs/explanation/formulation.md sections 2, 4, 5):
markers that follow their node's deformation on either side of a joint, beams that carry
other bodies, loads and sensors on beam markers.

The kernels are held against a slow reference written here from the model description
alone: body poses composed joint by joint with the deformed marker frames
(s = node + its displacement, C = Rx(tx) Ry(ty) Rz(tz) C0 with the node's small
rotations, the parametrisation flexmbs uses), differentiated by 8th-order central
differences (B, b_t, a_bias, dB/dt, load Jacobians); and M*, Q* against the Lagrange
equations d/dt(dT/du) - dT/dq + dV/dq = 0 with T, V from the energy kernel and their
derivatives by differences. Random trees cover every joint type, beams as parents and
children, joints at clamped and at free nodes, rotated markers and point masses.
"""

import numpy as np
import pytest
from reference import (
    FIRST_WEIGHTS,
    SECOND_CENTER,
    SECOND_WEIGHTS,
    coordinate_layout,
    rotation_about_axis,
    vee,
)

from flexmbs import compile_model, simulate
from flexmbs.dynamics import api
from flexmbs.elements import material
from flexmbs.model import Model
from flexmbs.model.description import GROUND, JOINT_TYPES, BeamBody
from flexmbs.model.library import HUANG_TUBE_MATERIAL, huang_tube

FD_H = 2e-3          # step of the first-derivative stencil (coordinates of order 0.1-1)
FD_H2 = 2e-2         # step of the second-derivative stencil
TOL_FIRST = 1e-8     # relative to the largest entry: 8th-order stencil, round-off ~1e-12
TOL_SECOND = 1e-6    # second derivatives: round-off ~ eps / h^2 ~ 1e-12 / 4e-4
TOL_EXACT = 1e-12


def rot_xyz(th):
    """Rx(th0) Ry(th1) Rz(th2)."""
    ex, ey, ez = np.eye(3)
    return (rotation_about_axis(ex, th[0]) @ rotation_about_axis(ey, th[1])
            @ rotation_about_axis(ez, th[2]))


# ------------------------------------------------------------------- the reference
def elastic_layout(model, names):
    """dict beam name -> list of (q index, node, dof) from the coordinate names
    `BODY.nNODE.DOF`."""
    dofs = ("u", "v", "w", "tx", "ty", "tz")
    out = {}
    for k, name in enumerate(names):
        parts = name.rsplit(".", 2)
        if len(parts) == 3 and parts[0] in model.bodies and parts[1].startswith("n") \
                and parts[2] in dofs:
            out.setdefault(parts[0], []).append((k, int(parts[1][1:]), dofs.index(parts[2])))
    return out


def nodal_displacements(model, names, q):
    """dict beam name -> (n_nodes, 6) nodal displacements and small rotations."""
    out = {b: np.zeros((len(body.nodes), 6)) for b, body in model.bodies.items()
           if isinstance(body, BeamBody)}
    for beam, entries in elastic_layout(model, names).items():
        for k, node, dof in entries:
            out[beam][node, dof] = q[k]
    return out


def deformed_marker(model, body, name, disp):
    """(s, C): the marker's deformed position and axes in its body's frame."""
    mk = model.marker(body, name)
    if body == GROUND or mk.node is None:
        return mk.position, mk.orientation
    d = disp[body][mk.node]
    return mk.position + d[:3], rot_xyz(d[3:]) @ mk.orientation


def reference_poses(model, names, q):
    """{body: (r, A)} composed joint by joint: A_i = A_p C_P R C_O^T,
    r_i = r_p + A_p (s_P + C_P d) - A_i s_O with deformed markers."""
    topo, rows = coordinate_layout(model)
    disp = nodal_displacements(model, names, q)
    poses = {GROUND: (np.zeros(3), np.eye(3))}
    for joint, entries in rows:
        x = np.array([q[iq] for _, iq, _ in entries])
        r_p, a_p = poses[joint.parent]
        s_p, c_p = deformed_marker(model, joint.parent, joint.parent_marker, disp)
        s_o, c_o = deformed_marker(model, joint.child, joint.child_marker, disp)
        nt = len(joint.translation_axes)
        d = sum((axis * x[k] for k, axis in enumerate(joint.translation_axes)), np.zeros(3))
        rj = np.eye(3)
        for k, axis in enumerate(joint.rotation_axes):
            rj = rj @ rotation_about_axis(axis, x[nt + k])
        a_i = a_p @ c_p @ rj @ c_o.T
        poses[joint.child] = (r_p + a_p @ (s_p + c_p @ d) - a_i @ s_o, a_i)
    return poses


def reference_marker(model, names, q, body, name):
    """(p, A_marker) global."""
    r, a = reference_poses(model, names, q)[body]
    s, c = deformed_marker(model, body, name, nodal_displacements(model, names, q))
    return r + a @ s, a @ c


def first_derivative(f, x, direction, h=FD_H):
    """d f(x + s direction)/ds at s = 0, 8th-order central stencil."""
    out = 0.0
    for k, w in enumerate(FIRST_WEIGHTS, start=1):
        out = out + w * (np.asarray(f(x + k * h * direction))
                         - np.asarray(f(x - k * h * direction)))
    return out / h


def second_derivative(f, x, direction, h=FD_H2):
    out = SECOND_CENTER * np.asarray(f(x))
    for k, w in enumerate(SECOND_WEIGHTS, start=1):
        out = out + w * (np.asarray(f(x + k * h * direction))
                         + np.asarray(f(x - k * h * direction)))
    return out / h ** 2


def stacked_pose(model, names, order):
    """q -> the poses of the bodies in `order` as one flat array [r, A] per body."""
    def f(q):
        poses = reference_poses(model, names, q)
        return np.concatenate([np.concatenate([poses[b][0], poses[b][1].ravel()])
                               for b in order])
    return f


def velocities_from_pose_rates(cm, pose, dpose, q, u):
    """Body velocity rows (the layout of api.body_velocities) from d(pose)/ds:
    [dr/ds; vee(A^T dA/ds)] and, for a flexible body, dqf/ds = its part of u."""
    m = cm.arrays
    rows = []
    for i in range(cm.nbodies):
        a = pose[12 * i + 3:12 * i + 12].reshape(3, 3)
        da = dpose[12 * i + 3:12 * i + 12].reshape(3, 3)
        rows += [dpose[12 * i:12 * i + 3], vee(a.T @ da)]
        k = m.body_flex[i]
        if k >= 0:
            rows.append(u[m.flex_q[k]:m.flex_q[k] + m.flex_nf[k]])
    return np.concatenate(rows)


def assert_close(actual, expected, tol, what):
    scale = max(np.abs(expected).max(), 1.0)
    err = np.abs(np.asarray(actual) - np.asarray(expected)).max()
    assert err <= tol * scale, f"{what}: max error {err:.3g} > {tol:.1g} x {scale:.3g}"


# ------------------------------------------------------------------ random trees
_MAT = material(**HUANG_TUBE_MATERIAL)


def _random_rotation(rng):
    return tuple(rng.uniform(-np.pi, np.pi, size=3))


def _unit(rng):
    v = rng.normal(size=3)
    return v / np.linalg.norm(v)


def random_flexible_tree(rng, joint_types, all_beams=False):
    """A tree of len(joint_types) bodies, every other one a beam (every one with
    `all_beams`): a polyline of 1 or 2 segments, 1 or 2 elements each, clamped at node
    0 or at its last node, a point mass at a random node. Joints between random
    markers: on a beam at a random node (with `all_beams` a free one) with a random
    orientation, on a rigid body at a random place."""
    model = Model("flexible-tree", gravity=9.81 * _unit(rng))
    names = []
    for k in range(len(joint_types)):
        name = f"b{k}"
        names.append(name)
        if k % 2 == 0 or all_beams:
            npts = int(rng.integers(2, 4))
            pts = np.cumsum(np.vstack([np.zeros(3)] + [0.3 * _unit(rng) + [0.2, 0, 0]
                                                       for _ in range(npts - 1)]), axis=0)
            b = model.add_beam_body(name, pts, huang_tube(), _MAT,
                                    elements=[int(rng.integers(1, 3)) for _ in range(npts - 1)])
            nn = len(b.nodes)
            clamp = 0 if rng.uniform() < 0.7 else nn - 1
            model.bodies.pop(name)
            model.add_beam_body(name, pts, huang_tube(), _MAT,
                                elements=b.elements, fixed={clamp: "all"},
                                node_masses={int(rng.integers(0, nn)): rng.uniform(0.1, 0.5)})
        else:
            mass = rng.uniform(0.5, 2.0)
            j = rng.uniform(0.02, 0.2, size=3) * mass
            model.add_rigid_body(name, mass=mass, com=rng.uniform(-0.3, 0.3, size=3),
                                 inertia=[j[1] + j[2], j[0] + j[2], j[0] + j[1]],
                                 inertia_about="com")

    def new_marker(body, tag):
        if body != GROUND and isinstance(model.bodies[body], BeamBody):
            b = model.bodies[body]
            nodes = [k for k in range(len(b.nodes))
                     if not all_beams or np.any(b.node_columns(k) >= 0)]
            return model.add_marker(body, tag, node=int(rng.choice(nodes)),
                                    euler_xyz=_random_rotation(rng)).name
        return model.add_marker(body, tag, position=rng.uniform(-0.5, 0.5, size=3),
                                euler_xyz=_random_rotation(rng)).name

    for k, (name, jtype) in enumerate(zip(names, joint_types)):
        parent = GROUND if k == 0 else names[int(rng.integers(0, k))]
        kw = {}
        if jtype in ("revolute", "prismatic", "cylindrical", "planar"):
            kw["axis"] = _unit(rng)
        elif jtype == "general":
            kw["translation_axes"] = [_unit(rng)]
            kw["rotation_axes"] = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]
        model.add_joint(f"j{k}", jtype, parent=parent, child=name,
                        parent_marker=new_marker(parent, f"p{k}"),
                        child_marker=new_marker(name, f"c{k}"),
                        stiffness=1.0, rest=0.1, **kw)
    return model


def random_state(rng, cm, model):
    """(q, u): joint coordinates of order 0.5, elastic ones of order 0.02 (m, rad)."""
    elastic = {k for entries in elastic_layout(model, cm.coordinate_names).values()
               for k, _, _ in entries}
    scale = np.array([0.02 if k in elastic else 0.6 for k in range(cm.nq)])
    return rng.uniform(-1, 1, cm.nq) * scale, rng.uniform(-1, 1, cm.nq) * scale * 3


TYPES = [t for t in JOINT_TYPES]
# (seed, joint types, all beams with joints at free nodes): the mixed trees, then
# beam-to-beam joints of every type with both joint points deformable
CASES = [(seed, tuple(TYPES[(seed + k) % len(TYPES)] for k in range(4)), False)
         for seed in range(5)] + \
        [(seed, tuple(TYPES[(3 * (seed - 5) + k) % len(TYPES)] for k in range(4)), True)
         for seed in range(5, 8)]


@pytest.fixture(scope="module", params=CASES, ids=lambda c: f"s{c[0]}-" + "-".join(
    t[:4] for t in c[1]) + ("-beams" if c[2] else ""))
def case(request):
    seed, types, all_beams = request.param
    rng = np.random.default_rng(100 + seed)
    model = random_flexible_tree(rng, types, all_beams)
    cm = compile_model(model)
    q, u = random_state(rng, cm, model)
    return model, cm, q, u


# ------------------------------------------------------------------------ the tests
def test_poses_follow_the_deformed_markers(case):
    model, cm, q, u = case
    r, a = api.body_poses(cm, q)
    ref = reference_poses(model, cm.coordinate_names, q)
    for i, b in enumerate(cm.topology.body_names):
        assert_close(r[i], ref[b][0], TOL_EXACT, f"r of {b}")
        assert_close(a[i], ref[b][1], TOL_EXACT, f"A of {b}")


def test_velocity_transformation_is_the_jacobian_of_the_position_map(case):
    model, cm, q, u = case
    f = stacked_pose(model, cm.coordinate_names, cm.topology.body_names)
    b = api.velocity_transformation(cm, q)
    pose = f(q)
    for k in range(cm.nq):
        e = np.zeros(cm.nq)
        e[k] = 1.0
        expected = velocities_from_pose_rates(cm, pose, first_derivative(f, q, e), q, e)
        assert_close(b[:, k], expected, TOL_FIRST, f"column {cm.coordinate_names[k]} of B")
    assert_close(api.body_velocities(cm, q, u), b @ u, TOL_EXACT, "v = B u")


def test_bias_acceleration_is_the_second_derivative_along_the_motion(case):
    model, cm, q, u = case
    f = stacked_pose(model, cm.coordinate_names, cm.topology.body_names)
    pose = f(q)
    d1 = first_derivative(f, q, u)
    d2 = second_derivative(f, q, u)
    rows = []
    for i in range(cm.nbodies):
        a = pose[12 * i + 3:12 * i + 12].reshape(3, 3)
        da = d1[12 * i + 3:12 * i + 12].reshape(3, 3)
        dda = d2[12 * i + 3:12 * i + 12].reshape(3, 3)
        rows += [d2[12 * i:12 * i + 3], vee(a.T @ dda)]
        k = cm.arrays.body_flex[i]
        if k >= 0:
            rows.append(np.zeros(cm.arrays.flex_nf[k]))
        del da
    assert_close(api.bias_acceleration(cm, q, u), np.concatenate(rows), TOL_SECOND,
                 "a_bias")


def test_rate_of_b_is_its_derivative_along_the_motion(case):
    model, cm, q, u = case
    db = api.velocity_transformation_rate_matrix(cm, q, u)
    expected = first_derivative(lambda x: api.velocity_transformation(cm, x), q, u)
    assert_close(db, expected, TOL_FIRST, "dB/dt")
    assert_close(db @ u, api.bias_acceleration(cm, q, u), TOL_EXACT, "(dB/dt) u = a_bias")


def test_mass_matrix_is_the_kinetic_energy_hessian(case):
    model, cm, q, u = case
    mstar = api.mass_matrix(cm, q)
    assert_close(mstar, mstar.T, TOL_EXACT, "M* - M*^T")
    assert np.linalg.eigvalsh(mstar).min() > 0
    assert 0.5 * u @ mstar @ u == pytest.approx(api.energies(cm, q, u)["kinetic"],
                                               rel=TOL_EXACT)


def test_generalized_forces_satisfy_lagrange_equations(case):
    """Q* = -(dM*/dt) u + dT/dq - dV/dq (V = gravity + strain + springs; the trees
    have no dampers or loads), every derivative by differences of the kernels' M*
    and energies."""
    model, cm, q, u = case

    def potential(x):
        e = api.energies(cm, x, np.zeros(cm.nq))
        return e["gravity"] + e["strain"] + e["spring"]

    def kinetic(x):
        return api.energies(cm, x, u)["kinetic"]

    grad = np.zeros(cm.nq)
    for k in range(cm.nq):
        e = np.zeros(cm.nq)
        e[k] = 1.0
        grad[k] = first_derivative(kinetic, q, e) - first_derivative(potential, q, e)
    mdot = first_derivative(lambda x: api.mass_matrix(cm, x), q, u)
    expected = -mdot @ u + grad
    assert_close(api.generalized_forces(cm, q, u), expected, TOL_FIRST * 10, "Q*")


def test_loads_on_beam_markers_do_their_virtual_work(case):
    """A force F (global) and a follower torque T (marker axes) on a beam marker add
    J_p^T F + J_w^T (A_marker T) to Q*, J_p and J_w the Jacobians of the marker's
    position and rotation (vee(dA A^T), global)."""
    import copy
    model, cm, q, u = case
    beam = next(b for b in model.bodies.values() if isinstance(b, BeamBody))
    marker = next(n for n, mk in beam.markers.items() if mk.node is not None)
    force = np.array([1.0, -2.0, 0.5])
    torque = np.array([0.3, 0.2, -0.4])
    loaded = copy.deepcopy(model)
    loaded.add_force("F", "force", beam.name, marker=marker, vector=force)
    loaded.add_force("T", "torque", beam.name, marker=marker, vector=torque,
                     frame="marker")
    zero = np.zeros(cm.nq)
    dq = api.generalized_forces(compile_model(loaded), q, zero) - \
        api.generalized_forces(cm, q, zero)

    def frame(x):
        return reference_marker(model, cm.coordinate_names, x, beam.name, marker)

    _, a = frame(q)
    expected = np.zeros(cm.nq)
    for k in range(cm.nq):
        e = np.zeros(cm.nq)
        e[k] = 1.0
        dp = first_derivative(lambda x: frame(x)[0], q, e)
        da = first_derivative(lambda x: frame(x)[1], q, e)
        expected[k] = force @ dp + (a @ torque) @ vee(da @ a.T)
    assert_close(dq, expected, TOL_FIRST, "generalized force of the loads")


def sensor_readings(cm, q, u, t=0.0):
    """{sensor name: values} at the state (q, u) from the output kernel."""
    from flexmbs.dynamics.energy import ENERGY_COMPONENTS
    from flexmbs.dynamics.outputs import output_quantities
    y = np.concatenate([q, u, np.zeros(1 + cm.nactuators)])[None, :]
    energy = np.zeros((1, len(ENERGY_COMPONENTS)))
    values = np.zeros((1, cm.nsensor_values))
    output_quantities(cm.arrays, cm.new_workspace(), np.array([t]), y, energy, values)
    out, k = {}, 0
    for name, size in zip(cm.sensor_names, cm.sensor_sizes):
        out[name] = values[0, k:k + size]
        k += size
    return out


def test_marker_sensors_on_beams(case):
    """Position, orientation, velocity, angular velocity and elastic deflection of a
    marker on a free node, in the frame of another body, against the reference frames
    and their derivatives along u."""
    import copy
    model, cm, q, u = case
    beam = next(b for b in model.bodies.values() if isinstance(b, BeamBody)
                and any(mk.node is not None and np.any(b.node_columns(mk.node) >= 0)
                        for mk in b.markers.values()))
    marker = next(n for n, mk in beam.markers.items()
                  if mk.node is not None and np.any(beam.node_columns(mk.node) >= 0))
    frame = cm.topology.body_names[-1]
    sensed = copy.deepcopy(model)
    for kind in ("position", "orientation", "velocity", "angular_velocity", "deflection"):
        sensed.add_sensor(kind, f"marker_{kind}", body=beam.name, marker=marker,
                          frame=frame)
    scm = compile_model(sensed)
    got = sensor_readings(scm, q, u)
    names = cm.coordinate_names
    p, a = reference_marker(model, names, q, beam.name, marker)
    r_f, a_f = reference_poses(model, names, q)[frame]
    dp = first_derivative(lambda x: reference_marker(model, names, x, beam.name, marker)[0],
                          q, u)
    da = first_derivative(lambda x: reference_marker(model, names, x, beam.name, marker)[1],
                          q, u)
    r_b, a_b = reference_poses(model, names, q)[beam.name]
    node = beam.markers[marker].node
    d = nodal_displacements(model, names, q)[beam.name][node, :3]
    assert_close(got["position"], a_f.T @ (p - r_f), TOL_EXACT, "position")
    assert_close(got["orientation"], (a_f.T @ a).ravel(), TOL_EXACT, "orientation")
    assert_close(got["velocity"], a_f.T @ dp, TOL_FIRST, "velocity")
    assert_close(got["angular_velocity"], a_f.T @ vee(da @ a.T), TOL_FIRST,
                 "angular velocity")
    assert_close(got["deflection"], a_f.T @ a_b @ d, TOL_EXACT, "deflection")
    assert np.abs(d).max() > 0


def _flexible_arm(alpha=1e-4, initial="undeformed"):
    """A beam clamped at a revolute joint carries a rigid arm at its tip and a second
    beam, joined at that beam's middle node (not its clamped one) by a universal
    joint, at a rotated marker on its own middle node."""
    mat = material(**HUANG_TUBE_MATERIAL)
    m = Model("flexible-arm", gravity=(0.0, 0.0, -9.81))
    m.add_beam_body("beam1", [[0, 0, 0], [0.6, 0, 0]], huang_tube(), mat, elements=2,
                    node_masses={-1: 0.2}, alpha=alpha, initial=initial)
    m.add_marker("beam1", "tip", node=-1)
    m.add_marker("beam1", "mid", node=1, euler_xyz=(0.1, 0.2, 0.3))
    m.add_rigid_body("arm", mass=0.3, com=(0.1, 0, 0), inertia=(1e-4, 1e-3, 1e-3),
                     inertia_about="com")
    m.add_beam_body("beam2", [[0, 0, 0], [0.4, 0, 0]], huang_tube(), mat, elements=2,
                    alpha=alpha, initial=initial)
    m.add_marker("beam2", "m1", node=1)
    m.add_joint("j1", "revolute", parent="ground", child="beam1", axis=(0, 1, 0),
                initial=0.3)
    m.add_joint("j2", "revolute", parent="beam1", parent_marker="tip", child="arm",
                axis=(0, 0, 1), initial=0.5, initial_rate=2.0)
    m.add_joint("j3", "universal", parent="beam1", parent_marker="mid", child="beam2",
                child_marker="m1", initial=(0.2, -0.3))
    return m


def test_beams_carrying_bodies_balance_their_energy():
    """The flexible arm, structurally damped, released undeformed: E = T + V_g + U -
    W_nc stays constant to the integration tolerance while the damping takes out
    energy. bdf's error test leaves out the elastic speeds of damped bodies, so the
    bound is that of `flexmbs energy` (1000 tolerances) taken on U alone, the
    smallest energy: measured max |dE| / max U = 1.5e-7 over 0.3 s at rtol 1e-9."""
    sim = simulate(_flexible_arm(), None, t_end=0.3, rtol=1e-9, atol=1e-11,
                   output_step=0.01)
    assert sim.status == "finished"
    e = sim.energy
    total = e[:, 0] + e[:, 1] + e[:, 2] + e[:, 3] - e[:, 4]
    assert np.abs(total - total[0]).max() <= 1000 * 1e-9 * e[:, 2].max()
    assert e[-1, 4] < 0


def test_static_elastic_state_of_beams_that_carry_bodies():
    """initial = "static" puts both beams in equilibrium with their own weight and the
    bodies they carry, joints held: the elastic rows of Q* vanish at q0 (to the
    solver's tolerance relative to the elastic forces K qf)."""
    cm = compile_model(_flexible_arm(initial="static"))
    q_forces = api.generalized_forces(cm, cm.q0, np.zeros(cm.nq))
    elastic = slice(cm.arrays.flex_q[0], cm.nq)
    kq = np.concatenate([b.invariants.stiffness @ cm.q0[cm.arrays.flex_q[k]:
                                                       cm.arrays.flex_q[k] + b.nf]
                         for k, (_, b) in enumerate(cm.beams)])
    assert np.abs(q_forces[elastic]).max() <= 1e-9 * np.abs(kq).max()
    assert np.abs(kq).max() > 0


def test_node_rotary_inertia_turns_with_the_node(case):
    """A rotary inertia J (body axes) at a free node adds (J_w^T A_n J A_n^T J_w) to M*,
    A_n the node's frame and J_w the Jacobian of its rotation (global), and nothing to
    the potential energies."""
    import copy
    model, cm, q, u = case
    beam = next(b for b in model.bodies.values() if isinstance(b, BeamBody))
    node = next(k for k in range(len(beam.nodes)) if np.any(beam.node_columns(k) >= 0))
    inertia = np.array([[2e-3, 1e-4, 0.0], [1e-4, 1e-3, 2e-4], [0.0, 2e-4, 1.5e-3]])
    heavy = copy.deepcopy(model)
    b = heavy.bodies[beam.name]
    heavy.bodies.pop(beam.name)
    markers = dict(b.markers)
    nb = heavy.add_beam_body(beam.name, b.points, b.section, b.material,
                             elements=b.elements, reference=b.reference,
                             fixed={k: "all" for k in range(len(b.nodes))
                                    if not np.any(b.node_columns(k) >= 0)},
                             node_masses=b.node_masses, node_inertias={node: inertia})
    nb.markers.update(markers)
    nb.markers["probe"] = type(markers["origin"])("probe", beam.name, beam.nodes[node],
                                                  np.eye(3), node)
    hcm = compile_model(heavy)
    assert hcm.coordinate_names == cm.coordinate_names
    dm = api.mass_matrix(hcm, q) - api.mass_matrix(cm, q)

    def frame(x):
        return reference_marker(heavy, cm.coordinate_names, x, beam.name, "probe")

    _, a = frame(q)
    jw = np.zeros((3, cm.nq))
    for k in range(cm.nq):
        e = np.zeros(cm.nq)
        e[k] = 1.0
        jw[:, k] = vee(first_derivative(lambda x: frame(x)[1], q, e) @ a.T)
    assert_close(dm, jw.T @ a @ inertia @ a.T @ jw, TOL_FIRST, "M* of the rotary inertia")
    e0, e1 = api.energies(cm, q, u), api.energies(hcm, q, u)
    assert e1["gravity"] == pytest.approx(e0["gravity"], rel=1e-14, abs=1e-14)
    assert e1["strain"] == pytest.approx(e0["strain"], rel=1e-14)
