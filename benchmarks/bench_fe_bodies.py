r"""Finite-element bodies (docs/explanation/formulation.md section 11): a slender box beam
of quadratic tetrahedra reduced by Craig-Bampton against the analytical clamped-free
frequencies and flexmbs's own beam element (study "box"), the same box as link 2 of H2
against the beam model over 5 s (study "h2"), and a plate given as K, M and interface
node sets to flexmbs and to Exudyn (FEMinterface, ComputeHurtyCraigBamptonModes, RBE2,
ObjectFFRFreducedOrder) as a pendulum and driven about a revolute joint (study
"exudyn").

    .venv/bin/pip install -e '.[bench,fe]'
    .venv/bin/python benchmarks/bench_fe_bodies.py --study box --json benchmarks/results/fe_box.json
    .venv/bin/python benchmarks/bench_fe_bodies.py --study h2 --json benchmarks/results/fe_h2.json
    .venv/bin/python benchmarks/bench_fe_bodies.py --study exudyn \
        --json benchmarks/results/fe_exudyn.json
    .venv/bin/python benchmarks/bench_fe_bodies.py --table benchmarks/results/fe_box.json

box: L = 1 m, 30 x 20 mm, aluminium (E 70 GPa, nu 0.33, rho 2700 kg/m^3), meshes of
nx x ny x nz bricks of six 10-node tetrahedra, the root face an RBE2 interface and the
floating frame; the fixed-interface modes against Euler-Bernoulli's clamped-free
bending frequencies (beta L = 1.8751, 4.6941, 7.8548) in both planes and Saint-Venant's
first torsion frequency (J of the rectangle), and flexmbs's beam (20 elements).

h2: H2 (docs/explanation/benchmark-models.md) with link 2 a solid square bar of Huang's
bending stiffness (side 11.57 mm, I = 1.4891e-9 m^4; 0.5 kg at the tip): the beam
model (8 elements reduced to 6 modes and the static correction modes at the tip node;
geometric stiffness "none", as the finite-element body has none, and "consistent")
against the bar meshed with tetrahedra, clamped at joint 2 (the root interface, the
frame), its tip an RBE2 interface carrying the tip mass;
joint angles over 5 s, BDF at rtol 1e-8 (the model file's).

exudyn: a 300 x 200 x 4 mm aluminium plate, hinge: the nodes of its edge x = 0 (an
RBE2 interface, the frame in both codes: Exudyn's first boundary's rigid motion is
excluded); pendulum: a spherical joint there, released at 0.5 rad about y under
gravity; driven: a revolute joint about y, its angle 0.6 (1 - cos 2 pi t) rad. The
corner node (0.3, 0.1, 0.002) over 2 s: the largest distance between the two codes'
trajectories relative to the largest distance the corner moves, and the wall time of
each (Exudyn: generalized-alpha without numerical damping, fixed step; flexmbs: BDF).
"""

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from peers import begin, finish, log, sci, significant

import flexmbs
from flexmbs.elements.fe_body import FeData, Interface, fe_basis
from flexmbs.elements.sections import rectangle_torsion_constant
from flexmbs.elements.solid import box_mesh, solid_matrices

E, NU, RHO = 7.0e10, 0.33, 2700.0
BOX = dict(length=1.0, width=0.03, height=0.02)
BOX_MESHES = ((20, 2, 2), (40, 3, 2), (60, 4, 3), (80, 6, 4))
BETA_L = (1.8751040687, 4.6940911330, 7.8547574382)
H2_SIDE = (12 * 1.4891e-9) ** 0.25  # m: a square of Huang's I
H2_E, H2_G, H2_RHO, H2_LENGTH, H2_TIP = 0.69e11, 0.26e11, 2770.0, 1.02, 0.5
H2_WINDOWS = (0.5, 1.0, 2.0, 5.0)  # s: the difference over [0, w]
H2_TARGET = 2e-3  # rad
PLATE = dict(length=0.3, width=0.2, height=0.004, divisions=(12, 8, 1))
PLATE_MODES = 8
T_PLATE = 2.0


def fe_data(points, tets, e=E, nu=NU, rho=RHO):
    k, ms = solid_matrices(points, tets, e, nu, rho)
    return FeData(points, np.arange(1, len(points) + 1), 3, k,
                  sp.kron(ms, sp.identity(3), format="csr"), source="box")


def face(points, x):
    return np.flatnonzero(np.abs(points[:, 0] - x) < 1e-12)


# ------------------------------------------------------------------------ box
def analytical_box():
    length, b, h = BOX["length"], BOX["width"], BOX["height"]
    area = b * h
    out = {}
    for plane, i in (("bending z", b * h**3 / 12), ("bending y", h * b**3 / 12)):
        out[plane] = [bl**2 / (2 * np.pi) * np.sqrt(E * i / (RHO * area * length**4))
                      for bl in BETA_L]
    g = E / (2 * (1 + NU))
    polar = area * (b * b + h * h) / 12
    out["torsion"] = [np.sqrt(g * rectangle_torsion_constant(b, h) / (RHO * polar))
                      / (4 * length)]
    return out


def nearest(freqs, target):
    return float(freqs[np.argmin(np.abs(freqs - target))])


def beam_box_frequencies():
    """flexmbs's beam element, 20 elements, clamped at node 0: its lowest modes."""
    from flexmbs.analysis.modes import beam_modes
    from flexmbs.elements.materials import material
    from flexmbs.elements.sections import rectangle_section
    m = flexmbs.Model("box")
    section = rectangle_section(BOX["width"], BOX["height"])
    beam = m.add_beam_body("bar", [[0, 0, 0], [BOX["length"], 0, 0]], section,
                           material(E, RHO, poisson_ratio=NU), elements=20,
                           reference=[0.0, 1.0, 0.0])
    return np.asarray(beam_modes(beam, 12).frequencies)


def study_box(a):
    exact = analytical_box()
    beam = beam_box_frequencies()
    rows = []
    for divisions in BOX_MESHES:
        start = time.perf_counter()
        pts, tets = box_mesh(BOX["length"], BOX["width"], BOX["height"], divisions)
        data = fe_data(pts, tets)
        assembled = time.perf_counter() - start
        basis = fe_basis(data, [Interface("root", face(pts, 0.0))], modes=10)
        reduced = time.perf_counter() - start - assembled
        f = basis.frequencies
        row = {"divisions": list(divisions), "nodes": len(pts), "dofs": 3 * len(pts),
               "assembly_s": assembled, "reduction_s": reduced, "modes": {}}
        for kind, targets in exact.items():
            row["modes"][kind] = [{"analytical": t, "fe": nearest(f, t),
                                   "beam": nearest(beam, t)} for t in targets]
        rows.append(row)
        worst = max(abs(m["fe"] / m["analytical"] - 1) for ms in row["modes"].values()
                    for m in ms)
        log(f"box {divisions}: {len(pts)} nodes, worst |f/f_exact - 1| = {worst:.4f}, "
            f"{assembled:.2f} s + {reduced:.2f} s")
    return {"study": "box", "meshes": rows}


def box_table(r):
    last = r["meshes"][-1]
    lines = ["| mode | analytical (Hz) | " + " | ".join(
        f"{'x'.join(map(str, m['divisions']))} ({m['nodes']} nodes)" for m in r["meshes"])
        + " | beam, 20 elements |",
        "|---|---|" + "---|" * len(r["meshes"]) + "---|"]
    for kind in ("bending z", "bending y", "torsion"):
        for k, mode in enumerate(last["modes"][kind]):
            cells = []
            for m in r["meshes"]:
                x = m["modes"][kind][k]
                cells.append(f"{x['fe']:.2f} ({100 * (x['fe'] / x['analytical'] - 1):+.2f} %)")
            beam = f"{mode['beam']:.2f} ({100 * (mode['beam'] / mode['analytical'] - 1):+.2f} %)"
            lines.append(f"| {kind} {k + 1} | {mode['analytical']:.2f} | " + " | ".join(cells)
                         + f" | {beam} |")
    timing = ", ".join(f"{m['nodes']} nodes: {significant(m['assembly_s'])} s + "
                       f"{significant(m['reduction_s'])} s" for m in r["meshes"])
    return "\n".join(lines) + f"\n\nassembly + reduction: {timing}"


# ------------------------------------------------------------------------ h2
def h2_model(link2):
    """H2 with link 2 given as `link2(model)` (which adds body "link2" with markers
    "root" and "tip")."""
    m = flexmbs.Model("h2fe", gravity=(0.0, 0.0, -9.81))
    m.set_solver(method="bdf", t_end=5.0, rtol=1e-8, atol=1e-10)
    m.set_output(step=0.01)
    m.add_rigid_body("link1", mass=2.067, com=(0.0, 0.0, -0.1155),
                     inertia=(0.08884, 0.08884, 3.752e-4), inertia_about="origin")
    m.add_marker("link1", "joint2", position=(0.0, 0.0, -0.231))
    link2(m)
    m.add_joint("joint1", "revolute", "ground", "link1", axis=(0, 1, 0), initial=1.5)
    m.add_joint("joint2", "revolute", "link1", "link2", parent_marker="joint2",
                child_marker="root", axis=(0, 0, 1), initial=-1.0)
    for j in ("joint1", "joint2"):
        m.add_sensor(j, "joint_coordinate", joint=j)
    return m


def h2_beam(geometric, elements=8):
    """Link 2 as flexmbs's beam: 8 elements reduced to 6 modes with the static
    correction modes at its tip node (the content of the Craig-Bampton body: modes
    clamped at the root plus the tip's constraint modes)."""
    from flexmbs.elements.materials import material
    from flexmbs.elements.sections import rectangle_section

    def add(m):
        a = H2_SIDE
        m.add_beam_body("link2", [[0, 0, 0], [H2_LENGTH, 0, 0]], rectangle_section(a, a),
                        material(H2_E, H2_RHO, shear_modulus=H2_G), elements=elements,
                        reference=[0, 1, 0], node_masses={-1: H2_TIP}, geometric=geometric,
                        modes=6, correction_modes=True)
        m.add_marker("link2", "root", node=0)
        m.add_marker("link2", "tip", node=-1)
    return add


def h2_fe(divisions, modes):
    def add(m):
        a = H2_SIDE
        pts, tets = box_mesh(H2_LENGTH, a, a, divisions)
        data = fe_data(pts, tets, H2_E, H2_E / (2 * H2_G) - 1, H2_RHO)
        m.add_fe_body("link2", data=data, modes=modes, interfaces={
            "root": {"nodes": list(data.labels[face(pts, 0.0)])},
            "tip": {"nodes": list(data.labels[face(pts, H2_LENGTH)])}})
        m.add_marker("link2", "root", interface="root")
        m.add_marker("link2", "tip", interface="tip")
        m.add_rigid_body("tip_mass", mass=H2_TIP, inertia=(1e-12, 1e-12, 1e-12),
                         inertia_about="com")
        m.add_joint("tip_fix", "fixed", "link2", "tip_mass", parent_marker="tip")
    return add


def run_h2(model, t_end=None):
    start = time.perf_counter()
    sim = flexmbs.simulate(model, None, t_end=t_end)
    wall = time.perf_counter() - start
    return sim, wall


def study_h2(a):
    runs = {"beam, geometric none": h2_model(h2_beam("none")),
            "beam, 16 elements, geometric none": h2_model(h2_beam("none", 16)),
            "beam, geometric consistent": h2_model(h2_beam("consistent"))}
    for divisions, modes in (((40, 2, 2), 4), ((60, 3, 3), 6)):
        runs[f"tetrahedra {'x'.join(map(str, divisions))}, {modes} modes"] = h2_model(
            h2_fe(divisions, modes))
    out = {}
    for name, model in runs.items():
        run_h2(model, t_end=0.01)  # load the kernels and make the reduced body
        sim, wall = run_h2(model)
        angles = np.asarray(sim.sensors)[:, :2]  # the sensors joint1, joint2
        out[name] = {"wall_s": wall, "t": np.asarray(sim.t).tolist(),
                     "angles": angles.tolist(),
                     "steps": int((sim.statistics or {}).get("steps", 0))}
        log(f"h2 {name}: {wall:.2f} s")
    ref = np.array(out["beam, geometric none"]["angles"])
    t = np.array(out["beam, geometric none"]["t"])
    for r in out.values():
        diff = np.abs(np.array(r["angles"]) - ref)
        r["max_difference_rad"] = diff.max(axis=0).tolist()
        both = diff.max(axis=1)
        r["max_difference_until"] = {str(w): float(both[t <= w].max()) for w in H2_WINDOWS}
        over = np.flatnonzero(both > H2_TARGET)
        r["exceeds_target_at_s"] = float(t[over[0]]) if len(over) else None
    return {"study": "h2", "runs": {k: {kk: vv for kk, vv in v.items()
                                        if kk not in ("t", "angles")} for k, v in out.items()}}


def h2_table(r):
    windows = list(next(iter(r["runs"].values()))["max_difference_until"])
    lines = ["| link 2 | " + " | ".join(f"max abs(theta - beam's) to {w} s (rad)"
                                        for w in windows)
             + " | 2e-3 rad passed at (s) | wall (s) |",
             "|---|" + "---|" * (len(windows) + 2)]
    for name, v in r["runs"].items():
        d = v["max_difference_until"]
        at = v["exceeds_target_at_s"]
        lines.append(f"| {name} | " + " | ".join(sci(d[w]) if d[w] > 0 else "0"
                                                 for w in windows)
                     + f" | {'-' if at is None else significant(at)} | "
                     f"{significant(v['wall_s'])} |")
    return "\n".join(lines)


# -------------------------------------------------------------------- exudyn
def plate_data():
    p = PLATE
    pts, tets = box_mesh(p["length"], p["width"], p["height"], p["divisions"])
    data = fe_data(pts, tets)
    hinge = face(pts, 0.0)
    corner = int(np.argmin(np.linalg.norm(
        pts - [p["length"], 0.5 * p["width"], 0.5 * p["height"]], axis=1)))
    return pts, tets, data, hinge, corner


def angle(t):
    return 0.6 * (1.0 - np.cos(2 * np.pi * t))


def flexmbs_plate(case, data, hinge, corner, rtol):
    m = flexmbs.Model("plate", gravity=(0.0, 0.0, -9.81))
    m.set_solver(method="bdf", t_end=T_PLATE, rtol=rtol, atol=rtol * 1e-2)
    m.set_output(step=0.01)
    m.add_fe_body("plate", data=data, modes=PLATE_MODES,
                  interfaces={"hinge": {"nodes": list(data.labels[hinge])}})
    m.add_marker("plate", "hinge", interface="hinge")
    m.add_marker("plate", "corner", node=int(data.labels[corner]))
    if case == "pendulum":
        m.add_joint("hinge", "spherical", "ground", "plate", child_marker="hinge",
                    axes=[(1, 0, 0), (0, 1, 0), (0, 0, 1)], initial=[0.0, 0.5, 0.0])
    else:
        from flexmbs.model.timefunctions import Harmonic
        m.add_joint("hinge", "revolute", "ground", "plate", child_marker="hinge",
                    axis=(0, 1, 0))
        m.add_driver("drive", "hinge", Harmonic(offset=0.6, amplitude=0.6,
                                                omega=2 * np.pi, phase=-np.pi / 2))
    m.add_sensor("corner", "marker_position", body="plate", marker="corner")
    start = time.perf_counter()
    _ = m.bodies["plate"].invariants  # the reduction (FLEXMBS_FE_CACHE=0: made each time)
    setup = time.perf_counter() - start
    sim = flexmbs.simulate(m, None)
    wall = time.perf_counter() - start
    return (setup, wall - setup), np.asarray(sim.t), np.asarray(sim.sensors)[:, :3]


def exudyn_plate(case, pts, data, hinge, corner, h):
    sys.exudynFast = True
    import exudyn as exu
    import exudyn.itemInterface as ei
    from exudyn.FEM import (
        FEMinterface,
        HCBstaticModeSelection,
        ObjectFFRFreducedOrderInterface,
    )
    from exudyn.rigidBodyUtilities import RotationMatrixY

    start = time.perf_counter()
    sc = exu.SystemContainer()
    mbs = sc.AddSystem()
    fem = FEMinterface()
    fem.nodes = {"Position": np.asarray(pts)}
    fem.massMatrix = sp.csr_matrix(data.mass)
    fem.stiffnessMatrix = sp.csr_matrix(data.stiffness)
    fem.ComputeHurtyCraigBamptonModes(boundaryNodesList=[list(hinge)],
                                      nEigenModes=PLATE_MODES, useSparseSolver=True,
                                      computationMode=HCBstaticModeSelection.RBE2)
    cms = ObjectFFRFreducedOrderInterface(fem)
    rot = RotationMatrixY(0.5) if case == "pendulum" else np.eye(3)
    obj = cms.AddObjectFFRFreducedOrder(mbs, positionRef=[0, 0, 0], rotationMatrixRef=rot,
                                        gravity=[0, 0, -9.81])
    body = obj["oFFRFreducedOrder"]
    w = np.ones(len(hinge)) / len(hinge)
    m_plate = mbs.AddMarker(ei.MarkerSuperElementRigid(bodyNumber=body, offset=[0, 0, 0],
                                                      meshNodeNumbers=list(hinge),
                                                      weightingFactors=list(w)))
    ground = mbs.AddObject(ei.ObjectGround())
    m_ground = mbs.AddMarker(ei.MarkerBodyRigid(bodyNumber=ground, localPosition=[0, 0, 0]))
    if case == "pendulum":
        mbs.AddObject(ei.GenericJoint(markerNumbers=[m_ground, m_plate],
                                      constrainedAxes=[1, 1, 1, 0, 0, 0]))
    else:
        def offset(mbs, t, item, parameters):
            return [0, 0, 0, 0, float(angle(t)), 0]

        def offset_t(mbs, t, item, parameters):
            return [0, 0, 0, 0, float(0.6 * 2 * np.pi * np.sin(2 * np.pi * t)), 0]

        mbs.AddObject(ei.GenericJoint(markerNumbers=[m_ground, m_plate],
                                      constrainedAxes=[1, 1, 1, 1, 1, 1],
                                      offsetUserFunction=offset,
                                      offsetUserFunction_t=offset_t))
    sensor = mbs.AddSensor(ei.SensorSuperElement(
        bodyNumber=body, meshNodeNumber=int(corner), storeInternal=True, writeToFile=False,
        outputVariableType=exu.OutputVariableType.Position))
    mbs.Assemble()
    setup = time.perf_counter() - start
    ss = exu.SimulationSettings()
    ss.timeIntegration.numberOfSteps = int(round(T_PLATE / h))
    ss.timeIntegration.endTime = T_PLATE
    ss.timeIntegration.generalizedAlpha.spectralRadius = 1.0
    ss.timeIntegration.newton.relativeTolerance = 1e-10
    ss.timeIntegration.newton.useModifiedNewton = True
    ss.timeIntegration.verboseMode = 0
    ss.solution.file.write = False
    ss.solution.sensors.writePeriod = 0.01
    ss.linearSolver.solverType = exu.LinearSolverType.EXUdense
    exu.SolveDynamic(mbs, ss, solverType=exu.DynamicSolverType.GeneralizedAlpha)
    wall = time.perf_counter() - start
    data_out = mbs.GetSensorStoredData(sensor)
    return (setup, wall - setup), data_out[:, 0], data_out[:, 1:4]


def study_exudyn(a):
    pts, tets, data, hinge, corner = plate_data()
    out = {"nodes": len(pts), "hinge_nodes": len(hinge),
           "corner": [float(v) for v in pts[corner]], "modes": PLATE_MODES, "cases": {}}
    for case in ("pendulum", "driven"):
        flexmbs_plate(case, data, hinge, corner, 1e-6)  # compile
        runs = {}
        for name, fn in (("flexmbs", lambda case=case: flexmbs_plate(case, data, hinge,
                                                                      corner, a.rtol)),
                         ("exudyn", lambda case=case: exudyn_plate(case, pts, data, hinge,
                                                                   corner, a.step))):
            walls, result = [], None
            for _ in range(a.repeat):
                wall, t, p = fn()
                walls.append(wall)
                result = (t, p)
            runs[name] = (tuple(statistics.median(w[k] for w in walls) for k in (0, 1)),
                          *result)
        tf, pf = runs["flexmbs"][1], runs["flexmbs"][2]
        te, pe = runs["exudyn"][1], runs["exudyn"][2]
        common = np.intersect1d(np.round(tf, 9), np.round(te, 9))
        fi = np.searchsorted(np.round(tf, 9), common)
        ei_ = np.searchsorted(np.round(te, 9), common)
        size = np.linalg.norm(pf - pf[0], axis=1).max()
        diff = np.linalg.norm(pf[fi] - pe[ei_], axis=1).max()
        out["cases"][case] = {"motion_size_m": float(size), "max_difference_m": float(diff),
                              "relative": float(diff / size),
                              "flexmbs_reduction_s": runs["flexmbs"][0][0],
                              "flexmbs_run_s": runs["flexmbs"][0][1],
                              "exudyn_reduction_s": runs["exudyn"][0][0],
                              "exudyn_run_s": runs["exudyn"][0][1],
                              "flexmbs_rtol": a.rtol, "exudyn_step_s": a.step}
        log(f"{case}: motion {size:.4g} m, difference {diff:.3g} m ({diff / size:.2e}); "
            f"flexmbs {runs['flexmbs'][0]} s, Exudyn {runs['exudyn'][0]} s")
    return {"study": "exudyn", **out}


def exudyn_table(r):
    lines = ["| case | corner moves (m) | max distance flexmbs - Exudyn (m) | relative | "
             "flexmbs reduction + run (s) | Exudyn reduction + run (s) |",
             "|---|---|---|---|---|---|"]
    for case, v in r["cases"].items():
        lines.append(f"| {case} | {v['motion_size_m']:.3f} | {sci(v['max_difference_m'])} | "
                     f"{sci(v['relative'])} | {significant(v['flexmbs_reduction_s'])} + "
                     f"{significant(v['flexmbs_run_s'])} | "
                     f"{significant(v['exudyn_reduction_s'])} + "
                     f"{significant(v['exudyn_run_s'])} |")
    any_case = next(iter(r["cases"].values()))
    lines.append("")
    lines.append(f"{r['nodes']} nodes, {r['hinge_nodes']} hinge nodes, {r['modes']} "
                 f"fixed-interface modes; flexmbs BDF rtol {sci(any_case['flexmbs_rtol'])}, "
                 f"Exudyn generalized-alpha (spectral radius 1) step "
                 f"{sci(any_case['exudyn_step_s'])} s")
    return "\n".join(lines)


def table(results):
    return {"box": box_table, "h2": h2_table, "exudyn": exudyn_table}[results["study"]](results)


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--study", choices=("box", "h2", "exudyn"), default="box")
    p.add_argument("--rtol", type=float, default=1e-10, help="flexmbs BDF (exudyn study)")
    p.add_argument("--step", type=float, default=2e-4, help="Exudyn's step (s)")
    p.add_argument("--repeat", type=int, default=3)
    started = begin(p, table)
    if started is None:
        return
    a, info, start = started
    os.environ["FLEXMBS_FE_CACHE"] = "0"  # every reduction timed, none read back
    results = {"box": study_box, "h2": study_h2, "exudyn": study_exudyn}[a.study](a)
    results["machine"] = info
    finish(a, results, start, table)


if __name__ == "__main__":
    Path(__file__).parent not in sys.path and sys.path.insert(0, str(Path(__file__).parent))
    main()
