"""Flexible bodies from finite-element data (flexmbs.elements.fe_body, flexmbs.model.fe_body):
the basis and its frame, the invariants against a quadrature of the mesh, Craig-Bampton's
exactness in statics, clamped-free frequencies of a box beam, the file formats, the energy
balance of a run, the sensors and the drawing, and one-line errors for bad data."""

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import scipy.io
import scipy.sparse as sp

import flexmbs
from flexmbs.elements.fe_body import (
    FeData,
    Interface,
    fe_basis,
    fe_invariants,
    interface_rows,
    node_mass_matrix,
    rigid_motions,
)
from flexmbs.elements.sections import rectangle_torsion_constant
from flexmbs.errors import ModelError

meshio = pytest.importorskip("meshio")
pytest.importorskip("skfem")

from flexmbs.elements.fe_files import read_mbdyn_fem, write_mbdyn_fem  # noqa: E402
from flexmbs.elements.solid import box_mesh, solid_matrices  # noqa: E402

E, NU, RHO = 7.0e10, 0.33, 2700.0


@pytest.fixture(autouse=True)
def _own_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("FLEXMBS_FE_CACHE", "0")


def _data(pts, tets, e=E, nu=NU, rho=RHO):
    k, ms = solid_matrices(pts, tets, e, nu, rho)
    m = sp.kron(ms, sp.identity(3), format="csr")
    return FeData(pts, np.arange(1, len(pts) + 1), 3, k, m, source="box")


def _face(pts, x):
    return np.flatnonzero(np.abs(pts[:, 0] - x) < 1e-12)


@pytest.fixture(scope="module")
def plate():
    pts, tets = box_mesh(0.3, 0.2, 0.004, (6, 4, 1))
    return pts, tets, _data(pts, tets)


# ------------------------------------------------------------------ the basis
@pytest.mark.parametrize("connection", ["rigid", "average"])
@pytest.mark.parametrize("frame", [None, "mean_axes"])
def test_basis_is_orthonormal_and_its_frame_holds(plate, connection, frame):
    pts, _, data = plate
    faces = [Interface("root", _face(pts, 0.0), connection),
             Interface("tip", _face(pts, 0.3), "average")]
    b = fe_basis(data, faces, modes=5, frame=frame)
    phi = b.vectors
    assert b.nm == 5 + 12 - 6
    np.testing.assert_allclose(phi.T @ data.mass @ phi, np.eye(b.nm), atol=1e-9)
    kk = phi.T @ data.stiffness @ phi
    np.testing.assert_allclose(kk, np.diag((2 * np.pi * b.frequencies) ** 2),
                               atol=1e-8 * kk.max())
    r = rigid_motions(data.nodes, 3)
    if frame is None:  # the first interface is the frame: it does not move
        g = interface_rows(data, faces[0])
        assert np.abs(g @ phi).max() < 1e-9 * np.abs(phi).max()
        assert b.frame == 'interface "root"'
    else:  # mean axes: no linear or angular momentum of the deformation
        assert np.abs(r.T @ (data.mass @ phi)).max() < 1e-9
        assert b.frame == "mean axes"


def test_craig_bampton_holds_a_static_load_at_an_interface_exactly(plate):
    """A force on the averaged tip interface, root clamped: the reduced body's static
    deflection is the full mesh's (the constraint modes are static shapes)."""
    pts, _, data = plate
    root, tip = _face(pts, 0.0), _face(pts, 0.3)
    faces = [Interface("root", root, "rigid"), Interface("tip", tip, "average")]
    b = fe_basis(data, faces, modes=2)
    g = interface_rows(data, faces[1])
    load = g.T @ np.array([0.0, 0.0, 10.0, 0.0, 0.0, 0.0])  # the averaged load (RBE3)
    phi = b.vectors
    eta = np.linalg.solve(phi.T @ data.stiffness @ phi, phi.T @ load)
    reduced = phi @ eta
    held = np.concatenate([3 * root + a for a in range(3)])
    free = np.setdiff1d(np.arange(data.ndof), held)
    # full: root nodes tied rigidly to a clamped master = held
    full = np.zeros(data.ndof)
    full[free] = sp.linalg.spsolve(data.stiffness[free][:, free].tocsc(), load[free])
    # to the solves' round-off, normwise: K's condition number times eps, about 1e-8
    want = g @ full
    np.testing.assert_allclose(g @ reduced, want, rtol=0, atol=1e-7 * np.abs(want).max())


def test_free_free_with_attachment_modes_holds_a_balanced_load(plate):
    """Free-free modes and attachment modes: the deformation under a load at an
    interface balanced by the rigid-body inertia forces is in the basis."""
    pts, _, data = plate
    faces = [Interface("tip", _face(pts, 0.3), "average")]
    b = fe_basis(data, faces, reduction="free", modes=3)
    assert b.nm == 3 + 6 and b.frame == "mean axes"
    r = rigid_motions(data.nodes, 3)
    m = data.mass
    f = interface_rows(data, faces[0]).T @ np.array([0, 0, 1.0, 0.2, 0, 0])
    f = f - m @ r @ np.linalg.solve(r.T @ m @ r, r.T @ f)
    phi = b.vectors
    eta = np.linalg.solve(phi.T @ data.stiffness @ phi, phi.T @ f)
    # the full mesh on six supports where the rigid motions are independent, then the
    # rigid motions taken out (M-orthogonal to them, as the basis is)
    held = _independent_rows(r)
    free = np.setdiff1d(np.arange(data.ndof), held)
    full = np.zeros(data.ndof)
    full[free] = sp.linalg.spsolve(data.stiffness[free][:, free].tocsc(), f[free])
    full -= r @ np.linalg.solve(r.T @ m @ r, r.T @ (m @ full))
    assert np.linalg.norm(phi @ eta - full) < 1e-8 * np.linalg.norm(full)


def _independent_rows(r):
    import scipy.linalg

    _, _, piv = scipy.linalg.qr(r.T, pivoting=True)
    return np.sort(piv[:6])


def _keast_invariants(pts, tets, phi, rho):
    """Invariants by quadrature of linear tetrahedra (4 points, exact for the quadratic
    integrands of linear shape functions): the obviously correct reference."""
    a, c = 0.5854101966249685, 0.1381966011250105
    bary = np.array([[a, c, c, c], [c, a, c, c], [c, c, a, c], [c, c, c, a]])
    nm = phi.shape[1]
    out = dict(m=0.0, s=np.zeros(3), th=np.zeros((3, 3)), sbar=np.zeros((3, nm)),
               n=np.zeros((3, 3, nm)), ss=np.zeros((3, 3, nm, nm)))
    for t in tets:
        x = pts[t]
        vol = abs(np.linalg.det((x[1:] - x[0]).T)) / 6.0
        for lam in bary:
            u0 = lam @ x
            s = np.einsum("i,iam->am", lam, phi.reshape(-1, 3, nm)[t])
            w = rho * vol / 4.0
            out["m"] += w
            out["s"] += w * u0
            out["th"] += w * np.outer(u0, u0)
            out["sbar"] += w * s
            out["n"] += w * np.einsum("a,bm->abm", u0, s)
            out["ss"] += w * np.einsum("am,bn->abmn", s, s)
    return out


def test_invariants_are_the_integrals_of_the_mesh():
    pts, tets = box_mesh(0.2, 0.05, 0.03, (3, 2, 1), quadratic=False)
    data = _data(pts, tets)
    b = fe_basis(data, [Interface("root", _face(pts, 0.0))], modes=4)
    phi = b.vectors
    inv = fe_invariants(pts, node_mass_matrix(data), 3, phi, phi.T @ data.mass @ phi,
                        phi.T @ data.stiffness @ phi)
    ref = _keast_invariants(pts, tets, phi, RHO)
    scale = ref["m"]
    np.testing.assert_allclose(inv.mass, ref["m"], rtol=1e-12)
    np.testing.assert_allclose(inv.first_moment, ref["s"], atol=1e-12 * scale)
    np.testing.assert_allclose(inv.th0, ref["th"], atol=1e-12 * scale)
    np.testing.assert_allclose(inv.sbar, ref["sbar"], atol=1e-10 * np.abs(ref["sbar"]).max())
    np.testing.assert_allclose(inv.n, ref["n"], atol=1e-10 * np.abs(ref["n"]).max())
    np.testing.assert_allclose(inv.ss, ref["ss"], atol=1e-10 * np.abs(ref["ss"]).max())


def test_box_beam_frequencies_near_the_analytical_clamped_free_ones():
    """A coarse mesh of quadratic tetrahedra: the first bending modes of both planes
    and the first torsion within 2 % of Euler-Bernoulli's and Saint-Venant's (the
    benchmark refines the mesh to 1 %)."""
    length, b, h = 1.0, 0.03, 0.02
    pts, tets = box_mesh(length, b, h, (20, 3, 2))
    data = _data(pts, tets)
    basis = fe_basis(data, [Interface("root", _face(pts, 0.0))], modes=8)
    f = basis.frequencies
    area, g = b * h, E / (2 * (1 + NU))
    bending = [1.8751040687**2 / (2 * np.pi) * np.sqrt(E * i / (RHO * area * length**4))
               for i in (b * h**3 / 12, h * b**3 / 12)]
    torsion = np.sqrt(g * rectangle_torsion_constant(b, h) / (RHO * area * (b * b + h * h)
                                                              / 12)) / (4 * length)
    for target in bending + [torsion]:
        nearest = f[np.argmin(np.abs(f - target))]
        assert abs(nearest / target - 1) < 0.02, (nearest, target)


# --------------------------------------------------------------- the formats
def _plate_files(tmp_path, pts, data):
    scipy.io.mmwrite(tmp_path / "k.mtx", data.stiffness, symmetry="symmetric")
    scipy.io.mmwrite(tmp_path / "m.mtx", data.mass)
    np.savetxt(tmp_path / "nodes.csv", np.column_stack([np.arange(1, len(pts) + 1), pts]),
               delimiter=",", header="label,x,y,z", comments="")


PLATE_TAIL = """
modes = 4

[bodies.plate.interfaces.hinge]
box = [[-0.001, -0.2, -0.01], [0.001, 0.2, 0.01]]

[bodies.plate.markers.hinge]
interface = "hinge"

[bodies.plate.markers.corner]
node = {corner}

[joints.hinge]
type = "revolute"
parent = "ground"
child = "plate"
child_marker = "hinge"
axis = [0.0, 1.0, 0.0]
initial = 0.5

[sensors.corner]
type = "marker_position"
body = "plate"
marker = "corner"

[sensors.bend]
type = "marker_deflection"
body = "plate"
marker = "corner"
frame = "plate"

[sensors.strain]
type = "strain_energy"
body = "plate"

[sensors.eta]
type = "elastic_coordinates"
body = "plate"
"""


def _model_text(source, corner):
    return f"""
[model]
name = "plate"
gravity = [0.0, 0.0, -9.81]

[solver]
t_end = 0.1
rtol = 1e-10
atol = 1e-12

[output]
step = 0.01

[bodies.plate]
type = "fe"
{source}
""" + PLATE_TAIL.format(corner=corner)


def _frequencies(model):
    return model.bodies["plate"].basis.frequencies


def test_matrix_market_abaqus_harwell_boeing_and_mesh_give_one_body(tmp_path, plate):
    pts, tets, data = plate
    corner = int(np.argmax(pts[:, 0] - pts[:, 1] + pts[:, 2])) + 1
    meshio.write(tmp_path / "plate.msh", meshio.Mesh(pts, [("tetra10", tets)]),
                 file_format="gmsh22", binary=False)
    _plate_files(tmp_path, pts, data)
    # Abaqus coordinate output: "row, column, value" of the lower triangle
    low = sp.tril(data.stiffness).tocoo()
    np.savetxt(tmp_path / "k_abq.mtx", np.column_stack([low.row + 1, low.col + 1, low.data]),
               fmt=["%d", "%d", "%.17g"], delimiter=",")
    # node-and-dof form of the mass: "node, dof, node, dof, value"
    mc = data.mass.tocoo()
    np.savetxt(tmp_path / "m_abq.mtx", np.column_stack([
        mc.row // 3 + 1, mc.row % 3 + 1, mc.col // 3 + 1, mc.col % 3 + 1, mc.data]),
        fmt=["%d"] * 4 + ["%.17g"], delimiter=",")
    scipy.io.hb_write(tmp_path / "k.rua", data.stiffness.tocsc())
    material = '[bodies.plate.material]\nyoungs_modulus = 7.0e10\npoisson_ratio = 0.33\n' \
        'density = 2700.0\n'
    sources = {
        "mesh": 'mesh = "plate.msh"',
        "mm": 'stiffness = "k.mtx"\nmass = "m.mtx"\nnodes = "nodes.csv"',
        "abaqus": 'stiffness = "k_abq.mtx"\nmass = "m_abq.mtx"\nnodes = "nodes.csv"',
        "hb": 'stiffness = "k.rua"\nmass = "m.mtx"\nnodes = "nodes.csv"',
    }
    freqs = {}
    for name, source in sources.items():
        text = _model_text(source, corner)
        if name == "mesh":  # the material table after the body's fields
            text = text.replace("[bodies.plate.interfaces.hinge]",
                                material + "\n[bodies.plate.interfaces.hinge]")
        path = tmp_path / f"{name}.toml"
        path.write_text(text)
        freqs[name] = _frequencies(flexmbs.load_model(path))
    # the text files hold 16 to 17 digits; the thin plate's stiffness (condition
    # number ~1e8) turns their round-off into ~1e-9 of its lowest frequency
    for name, f in freqs.items():
        np.testing.assert_allclose(f, freqs["mm"], rtol=1e-7, err_msg=name)


def test_mbdyn_modal_file_round_trip(tmp_path, plate):
    """A reduced body written as an MBDyn modal file (all nodes, lumped masses) and read
    back: the same modes, mass, centre of mass and modal matrices."""
    pts, _, data = plate
    b = fe_basis(data, [Interface("root", _face(pts, 0.0))], modes=4)
    n = len(pts)
    shapes = np.zeros((6 * n, b.nm))
    for a in range(3):
        shapes[a::6] = b.vectors[a::3]
    lumped = np.repeat(np.asarray(node_mass_matrix(data).sum(axis=1)), 6, axis=1)
    lumped[:, 3:] = 0.0
    mass = np.eye(b.nm)
    stiff = np.diag((2 * np.pi * b.frequencies) ** 2)
    damping = 0.01 * np.eye(b.nm)
    # in mm-t-s: lengths x 1e3, masses x 1e-3; the modal matrices (mass x length^2
    # per unit amplitude squared) x 1e3
    write_mbdyn_fem(tmp_path / "plate.fem", pts * 1e3, np.arange(1, n + 1),
                    shapes * 1e3, mass * 1e3, stiff * 1e3, lumped * 1e-3, damping * 1e3)
    back = read_mbdyn_fem(tmp_path / "plate.fem", units="mm-t-s")
    np.testing.assert_allclose(back.nodes, pts, atol=1e-15)
    np.testing.assert_allclose(back.stiffness, stiff, rtol=1e-12)
    np.testing.assert_allclose(back.mass, mass, rtol=1e-12)
    np.testing.assert_allclose(back.damping, damping, rtol=1e-12)
    np.testing.assert_allclose(back.lumped[:, :3].sum(), data.mass.sum(), rtol=1e-12)
    model = flexmbs.Model("m")
    body = model.add_fe_body("plate", data=back, interfaces={"root": {"box": [
        [-1e-3, -1, -1], [1e-3, 1, 1]]}})
    np.testing.assert_allclose(body.basis.frequencies, b.frequencies, rtol=1e-9)
    assert body.basis.frame.startswith("the frame of the file")


# -------------------------------------------------------------- runs and output
def test_plate_pendulum_energy_balance_sensors_and_drawing(tmp_path, plate):
    """alpha = 0, tight tolerance: the energy balance closes to 1e-8 of its largest
    term; the sensors read the corner and the strain energy; the export draws the
    mesh's outer edges."""
    pts, tets, data = plate
    corner = int(np.argmax(pts[:, 0] - pts[:, 1] + pts[:, 2])) + 1
    _plate_files(tmp_path, pts, data)
    path = tmp_path / "plate.toml"
    path.write_text(_model_text('stiffness = "k.mtx"\nmass = "m.mtx"\nnodes = "nodes.csv"',
                                corner))
    model = flexmbs.load_model(path)
    flexmbs.simulate(model, tmp_path / "plate.h5", progress=False)
    r = flexmbs.open_result(tmp_path / "plate.h5")
    balance = flexmbs.energy_balance(r)
    largest = max(np.abs(r.energy[k]).max() for k in ("kinetic", "gravity", "strain"))
    drift = np.abs(r.energy["total"] - r.energy["total"][0]).max()
    assert drift < 1e-8 * largest, (drift, largest)
    assert balance["passed"]
    np.testing.assert_allclose(r.sensors["strain"], r.energy["strain"], rtol=1e-12,
                               atol=1e-16)
    eta = r.sensors["eta"]
    names = [n for n in r.coordinate_names if n.startswith("plate.")]
    np.testing.assert_allclose(eta, r.q[:, [r.coordinate_names.index(n) for n in names]])
    # the corner: frame pose plus its elastic displacement
    assert np.abs(r.sensors["bend"]).max() > 0
    from flexmbs.analysis.vtk_export import export_vtk
    out, steps = export_vtk(r)
    assert steps == len(r.time) and out.exists()


# ------------------------------------------------------------------ bad input
def _bad(tmp_path, pts, data, k=None, text_edit=None, nodes_table=None):
    kk = data.stiffness if k is None else k
    scipy.io.mmwrite(tmp_path / "k.mtx", kk)
    scipy.io.mmwrite(tmp_path / "m.mtx", data.mass)
    table = nodes_table if nodes_table is not None else pts
    np.savetxt(tmp_path / "nodes.csv", np.column_stack([np.arange(1, len(table) + 1), table]),
               delimiter=",")
    text = _model_text('stiffness = "k.mtx"\nmass = "m.mtx"\nnodes = "nodes.csv"', 1)
    if text_edit:
        text = text_edit(text)
    path = tmp_path / "bad.toml"
    path.write_text(text)
    r = subprocess.run([sys.executable, "-m", "flexmbs", "modes", str(path)],
                       capture_output=True, text=True, env={**os.environ,
                                                            "FLEXMBS_FE_CACHE": "0"})
    return r


@pytest.mark.parametrize("case, words", [
    ("asymmetric", ["bad.toml", 'body "plate"', "k.mtx", "not symmetric"]),
    ("indefinite", ["bad.toml", 'body "plate"', "indefinite"]),
    ("no set", ["bad.toml", 'body "plate"', 'no node set "ghost"', "nodes.csv"]),
    ("not in mesh", ["bad.toml", 'body "plate"', "node 99999", "not in"]),
    ("units", ["bad.toml", 'body "plate"', "units", "mm-t-s"]),
])
def test_bad_fe_data_is_one_line_naming_file_and_item(tmp_path, plate, case, words):
    pts, _, data = plate
    k, edit, table = None, None, None
    if case == "asymmetric":
        k = data.stiffness.tolil()
        k[5, 9] += 1e-3 * abs(data.stiffness).max()
        k = k.tocsr()
    elif case == "indefinite":
        k = data.stiffness - 1e6 * sp.identity(data.ndof)
    elif case == "no set":
        def edit(t):
            return t.replace('box = [[-0.001, -0.2, -0.01], [0.001, 0.2, 0.01]]', 'set = "ghost"')
    elif case == "not in mesh":
        def edit(t):
            return t.replace("node = 1", "node = 99999")
    elif case == "units":  # a node table in mm with matrices in SI
        table = pts * 1e3
    r = _bad(tmp_path, pts, data, k, edit, table)
    assert r.returncode == 2, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in r.stderr, r.stderr
    for w in words:
        assert w in lines[0], (w, lines[0])


def test_mesh_and_material_in_mismatched_units_are_refused(tmp_path, plate):
    pts, tets, _ = plate
    meshio.write(tmp_path / "plate.msh", meshio.Mesh(pts * 1e3, [("tetra10", tets)]),
                 file_format="gmsh22", binary=False)
    base = {"mesh": "plate.msh", "modes": 2, "interfaces": {
        "hinge": {"box": [[-1e-3, -1, -1], [1e-3, 1, 1]]}}, "base": str(tmp_path)}
    model = flexmbs.Model("m")
    with pytest.raises(ModelError, match='plate.msh: the mesh spans 300 m .*length_unit = "mm"'):
        model.add_fe_body("a", material={"youngs_modulus": E, "poisson_ratio": NU,
                                         "density": RHO}, **base)
    with pytest.raises(ModelError, match="wave speed .* is E in MPa"):
        model.add_fe_body("b", material={"youngs_modulus": 7e4, "poisson_ratio": NU,
                                         "density": RHO}, length_unit="mm", **base)
    body = model.add_fe_body("c", material={"youngs_modulus": E, "poisson_ratio": NU,
                                            "density": RHO}, length_unit="mm", **base)
    assert abs(body.mass - RHO * 0.3 * 0.2 * 0.004) < 1e-9
    assert Path(tmp_path / "plate.msh").exists()


def test_a_closed_loop_through_a_plate_and_its_linearization(tmp_path, plate):
    """The plate hinged at one edge and held at its far edge's averaged interface by a
    cut spherical joint: the loop closes (its constraint residual stays at round-off),
    the energy balances, and the linearised model's lowest frequency is the loop's
    stiffest: the plate held at both edges vibrates faster than the cantilever."""
    pts, _, data = plate
    model = flexmbs.Model("loop", gravity=(0.0, 0.0, -9.81))
    model.set_solver(t_end=0.05, rtol=1e-9, atol=1e-11)
    model.set_output(step=0.005)
    model.add_fe_body("plate", data=data, modes=4, interfaces={
        "hinge": {"box": [[-1e-3, -1, -1], [1e-3, 1, 1]]},
        "tip": {"box": [[0.299, -1, -1], [0.301, 1, 1]], "connection": "average"}})
    model.add_marker("plate", "hinge", interface="hinge")
    model.add_marker("plate", "tip", interface="tip")
    model.add_marker("ground", "prop", position=(0.3, 0.0, 0.0))
    model.add_joint("hinge", "revolute", "ground", "plate", child_marker="hinge",
                    axis=(0, 1, 0))
    model.add_joint("prop", "spherical", "ground", "plate", parent_marker="prop",
                    child_marker="tip", cut=True)
    model.add_sensor("residual", "constraint_residual", joint="prop")
    sim = flexmbs.simulate(model, tmp_path / "loop.h5")
    assert sim.status == "finished", sim.message
    r = flexmbs.open_result(tmp_path / "loop.h5")
    assert np.abs(r.sensors["residual"]).max() < 1e-9
    largest = max(np.abs(r.energy[k]).max() for k in ("kinetic", "gravity", "strain"))
    assert np.abs(r.energy["total"] - r.energy["total"][0]).max() < 1e-7 * largest
    from flexmbs.analysis.linearize import linearize
    lin = linearize(flexmbs.compile_model(model))
    held = np.nanmin(lin.frequencies[lin.frequencies > 1.0])
    clamped = model.bodies["plate"].basis.component_frequencies[0]
    cantilever = fe_basis(data, [Interface("hinge", _face(pts, 0.0))], modes=1)
    assert cantilever.frequencies[0] < held < clamped


def test_a_plate_started_in_its_first_mode_as_a_beam_is():
    """`initial = {mode = 1, amplitude = A, rate = R}` on a finite-element body: its
    reduced body's lowest elastic mode alone, its largest node translation A and its
    rate R, so that the strain energy at t = 0 is (2 pi f_1)^2 eta^2 / 2 (Phi^T K Phi
    = diag(w^2), to the eigensolver's round-off), its rate in the same shape."""
    models = Path(__file__).resolve().parents[1] / "data" / "models"
    amplitude, rate = 1e-3, 0.02
    model = flexmbs.load_model(models / "fe_plate.toml", overrides=[
        f"bodies.plate.initial={{mode = 1, amplitude = {amplitude}, rate = {rate}}}"])
    cm = flexmbs.compile_model(model)
    plate = model.bodies["plate"]
    basis = plate.basis
    first = int(np.argsort(basis.frequencies)[0])
    start = cm.coordinate_names.index(basis.names[0])
    eta, rates = cm.q0[start : start + basis.nm], cm.u0[start : start + basis.nm]
    assert np.count_nonzero(eta) == 1 and eta[first] != 0.0
    per = basis.vectors.shape[0] // len(plate.data.nodes)
    moved = basis.vectors[:, first] * eta[first]
    translations = np.concatenate([moved[a::per] for a in range(3)])
    assert np.abs(translations).max() == pytest.approx(amplitude, rel=1e-12)
    assert translations[np.argmax(np.abs(translations))] > 0
    assert rates[first] * eta[first] > 0 and rates[first] / eta[first] == pytest.approx(
        rate / amplitude, rel=1e-12)
    omega = 2 * np.pi * basis.frequencies[first]
    strain = 0.5 * eta @ plate.invariants.stiffness @ eta
    assert strain == pytest.approx(0.5 * omega**2 * eta[first] ** 2, rel=1e-6)
    with pytest.raises(ModelError, match="elastic modes, not 99"):
        flexmbs.compile_model(flexmbs.load_model(models / "fe_plate.toml", overrides=[
            "bodies.plate.initial={mode = 99, amplitude = 0.001}"]))
