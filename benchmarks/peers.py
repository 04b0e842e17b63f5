"""The benchmark models of docs/explanation/benchmark-models.md built in the peer simulators
(Pinocchio, Exudyn, SUNDIALS IDA through scikit-sundae), and the measurements the
benchmark scripts share. Imported by bench_peers_chain.py, bench_peers_flexible.py and
bench_peers_eval.py; the peers are the optional `bench` extra:

    .venv/bin/pip install -e '.[bench]'

How each peer model matches flexmbs' model (flexmbs.model.library):

* CHAIN-N (`chain_model`): Pinocchio and Exudyn's ObjectKinematicTree get the same
  joints (revolute about the parent link's y, or x for the even joints of the spatial
  chain), the same joint offsets (0, 0, -0.5) from the parent's joint, the same links
  (1 kg, centre of mass (0, 0, -0.25), inertia diag(m L^2/12, m L^2/12, 1e-4) about
  it), gravity (0, 0, -9.81) and initial state (theta1 = pi/2, spatial theta2 = 0.5,
  at rest). The energy of every run, flexmbs' included, is Pinocchio's kinetic plus
  potential energy of the joint coordinates the run outputs.
* H2 (`huang_two_link`): link 1 an Exudyn rigid body (mass 2.067 kg, centre of mass
  (0, 0, -0.1155), the library's inertia about the frame origin moved to the centre of
  mass), joint 1 a revolute joint about global y at the origin, joint 2 a revolute
  joint about link-1 z at (0, 0, -0.231) holding the beam's first node (the clamp);
  link 2 ObjectBeamGeometricallyExact elements (Simo-Reissner, shear deformable,
  nodes with Euler parameters) with the Huang tube's EA, EI_y, EI_z, GJ, shear
  stiffness G A/2 (the two webs of the square tube), mass per length rho A and
  sectional rotary inertia rho diag(I_y + I_z, I_y, I_z); the 0.5 kg tip mass a mass
  point on the last node; gravity on every body; released at rest, undeformed, from
  theta1 = 1.5, theta2 = -1.0.
* SPIN (`spin_up`): the beam's first node clamped to a hub whose z rotation follows
  the spin-up law (a coordinate constraint with an offset function), the same section
  (shear stiffness 5/6 G A), no gravity.
"""

import os
import platform
import sys
import time

import numpy as np

__all__ = ["machine", "pinocchio_chain", "chain_initial", "chain_energy", "exudyn",
           "exudyn_chain", "exudyn_h2", "exudyn_tree", "exudyn_spin", "spin_angle",
           "CHAIN_OUTPUT_STEP"]

CHAIN_OUTPUT_STEP = 0.01  # s: outputs of every chain run (the drift is taken on them)
# CHAIN-N (docs/explanation/benchmark-models.md)
LINK_MASS, LINK_LENGTH, LINK_AXIAL_INERTIA = 1.0, 0.5, 1e-4
GRAVITY = (0.0, 0.0, -9.81)


def machine():
    """One line about the machine and the versions the numbers were taken with."""
    import numba
    import scipy
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    out = {"cpu": cpu, "cores": os.cpu_count(), "python": platform.python_version(),
           "numpy": np.__version__, "scipy": scipy.__version__, "numba": numba.__version__,
           "platform": platform.platform()}
    for name, module in (("pinocchio", "pinocchio"), ("exudyn", "exudyn"),
                         ("scikit-sundae", "sksundae")):
        try:
            out[name] = __import__(module).__version__
        except Exception:  # noqa: BLE001 - a missing peer is reported, not fatal
            out[name] = None
    return out


# ---------------------------------------------------------------------------- CHAIN-N

def chain_initial(n, variant):
    """q0 of CHAIN-N: theta1 = pi/2, spatial also theta2 = 0.5; at rest."""
    q = np.zeros(n)
    q[0] = np.pi / 2
    if variant == "spatial" and n > 1:
        q[1] = 0.5
    return q


def _spatial_x_joint(variant, k):
    """True for the joints about x: the even joints (1-based) of the spatial chain."""
    return variant == "spatial" and k % 2 == 0


def pinocchio_chain(n, variant):
    """CHAIN-N as a pinocchio.Model (gravity (0, 0, -9.81), Pinocchio's default)."""
    import pinocchio as pin
    it = LINK_MASS * LINK_LENGTH ** 2 / 12.0
    inertia = pin.Inertia(LINK_MASS, np.array([0.0, 0.0, -LINK_LENGTH / 2]),
                          np.diag([it, it, LINK_AXIAL_INERTIA]))
    model = pin.Model()
    parent = 0
    for k in range(1, n + 1):
        joint = pin.JointModelRX() if _spatial_x_joint(variant, k) else pin.JointModelRY()
        offset = np.array([0.0, 0.0, 0.0 if k == 1 else -LINK_LENGTH])
        parent = model.addJoint(parent, joint, pin.SE3(np.eye(3), offset), f"j{k}")
        model.appendBodyToJoint(parent, inertia, pin.SE3.Identity())
    model.gravity = pin.Motion(np.array([*GRAVITY, 0.0, 0.0, 0.0]))
    return model


def chain_energy(model, data, q, v):
    """Kinetic plus potential energy (J) of each row of q, v (Pinocchio)."""
    import pinocchio as pin
    return np.array([pin.computeKineticEnergy(model, data, qk, vk)
                     + pin.computePotentialEnergy(model, data, qk) for qk, vk in zip(q, v)])


# ------------------------------------------------------------------------------ Exudyn

def exudyn():
    """The exudyn module, its fast build (no range checks) where the CPU allows it."""
    if "exudyn" not in sys.modules:
        sys.exudynFast = True
    import exudyn as exu
    return exu


def _settings(exu, h, t_end, output_step, rho_inf, newton_tol, sparse=False,
              modified_newton=True, newton_abs=None):
    """Generalized-alpha with a fixed step h; sensors stored in memory every
    output_step; no solution file; modified Newton (the Jacobian kept while it
    converges) and a sparse or dense linear solver."""
    ss = exu.SimulationSettings()
    ss.linearSolver.solverType = (exu.LinearSolverType.EigenSparse if sparse
                                  else exu.LinearSolverType.EXUdense)
    ss.timeIntegration.newton.useModifiedNewton = modified_newton
    ss.timeIntegration.numberOfSteps = int(round(t_end / h))
    ss.timeIntegration.endTime = t_end
    ss.solution.file.write = False
    ss.solution.sensors.writePeriod = output_step
    ss.timeIntegration.verboseMode = 0
    ss.show.computationTime = False
    ss.timeIntegration.generalizedAlpha.spectralRadius = rho_inf
    ss.timeIntegration.newton.relativeTolerance = newton_tol
    if newton_abs is not None:
        ss.timeIntegration.newton.absoluteTolerance = newton_abs
    return ss


def exudyn_chain(n, variant, h, t_end, rho_inf=1.0, newton_tol=1e-10):
    """CHAIN-N as one ObjectKinematicTree, generalized-alpha with the fixed step h.

    Returns (wall time of building and solving in s, t, q, v at the outputs,
    steps)."""
    exu = exudyn()
    import exudyn.itemInterface as ei
    start = time.perf_counter()
    it = LINK_MASS * LINK_LENGTH ** 2 / 12.0
    q0 = chain_initial(n, variant)
    types = [exu.JointType.RevoluteX if _spatial_x_joint(variant, k)
             else exu.JointType.RevoluteY for k in range(1, n + 1)]
    sc = exu.SystemContainer()
    mbs = sc.AddSystem()
    node = mbs.AddNode(ei.NodeGenericODE2(referenceCoordinates=[0.0] * n,
                                          initialCoordinates=list(q0),
                                          initialCoordinates_t=[0.0] * n,
                                          numberOfODE2Coordinates=n))
    mbs.AddObject(ei.ObjectKinematicTree(
        nodeNumber=node, jointTypes=types, linkParents=list(range(-1, n - 1)),
        jointTransformations=exu.Matrix3DList([np.eye(3)] * n),
        jointOffsets=exu.Vector3DList([[0.0, 0.0, 0.0]]
                                      + [[0.0, 0.0, -LINK_LENGTH]] * (n - 1)),
        linkInertiasCOM=exu.Matrix3DList([np.diag([it, it, LINK_AXIAL_INERTIA])] * n),
        linkCOMs=exu.Vector3DList([[0.0, 0.0, -LINK_LENGTH / 2]] * n),
        linkMasses=[LINK_MASS] * n, gravity=list(GRAVITY)))
    sq = mbs.AddSensor(ei.SensorNode(nodeNumber=node, storeInternal=True, writeToFile=False,
                                     outputVariableType=exu.OutputVariableType.Coordinates))
    sv = mbs.AddSensor(ei.SensorNode(nodeNumber=node, storeInternal=True, writeToFile=False,
                                     outputVariableType=exu.OutputVariableType.Coordinates_t))
    mbs.Assemble()
    ss = _settings(exu, h, t_end, CHAIN_OUTPUT_STEP, rho_inf, newton_tol)
    exu.SolveDynamic(mbs, ss, solverType=exu.DynamicSolverType.GeneralizedAlpha)
    wall = time.perf_counter() - start
    dq = mbs.GetSensorStoredData(sq)
    dv = mbs.GetSensorStoredData(sv)
    return wall, dq[:, 0], dq[:, 1:], dv[:, 1:], int(ss.timeIntegration.numberOfSteps)


# H2 (docs/explanation/benchmark-models.md; flexmbs.model.library.huang_two_link)
TUBE = dict(E=0.69e11, G=0.26e11, rho=2770.0, A=7.104e-5, Iy=1.4891e-9, Iz=1.4891e-9,
            J=2.188e-9)
H2_LENGTH, H2_TIP_MASS = 1.02, 0.5
LINK1_MASS, LINK1_COM = 2.067, (0.0, 0.0, -0.1155)
LINK1_INERTIA_ORIGIN = (0.08884, 0.08884, 3.752e-4)  # as flexmbs' huang_two_link
JOINT2_POSITION = (0.0, 0.0, -0.231)


def _beam_section(exu, E, G, rho, A, Iy, Iz, J, shear_area):
    sec = exu.BeamSection()
    sec.stiffnessMatrix = np.diag([E * A, G * shear_area, G * shear_area, G * J, E * Iy,
                                   E * Iz])
    sec.inertia = rho * np.diag([Iy + Iz, Iy, Iz])
    sec.massPerLength = rho * A
    return sec


def _rotation_angle_about(rot_rel, k):
    """Angle of a rotation matrix about its axis k (0 x, 1 y, 2 z), atan2 form."""
    if k == 1:
        return np.arctan2(rot_rel[:, 0, 2], rot_rel[:, 2, 2])
    return np.arctan2(rot_rel[:, 1, 0], rot_rel[:, 0, 0])


def exudyn_h2(elements, h, t_end=5.0, theta=(1.5, -1.0), rho_inf=0.8, newton_tol=1e-8,
              newton_abs=1e-6, output_step=0.01):
    """H2 with `elements` ObjectBeamGeometricallyExact elements, generalized-alpha
    with the fixed step h (s) and spectral radius rho_inf; Newton stops at the relative
    tolerance newton_tol or the absolute one newton_abs (N) (with the relative test
    alone, fine meshes stall at round-off near 1e-8 and Exudyn cuts the step to 1e-7 s).

    Returns dict t, theta1, theta2 (rad, unwrapped), deflection ((n, 3) m: the tip's
    elastic displacement in the link-2 frame, the frame of the clamped first node:
    A2^T (p_tip - p_root) - (L, 0, 0)), wall (s, building and solving), steps.
    """
    exu = exudyn()
    import exudyn.itemInterface as ei
    from exudyn.rigidBodyUtilities import (
        RigidBodyInertia,
        RotationMatrix2EulerParameters,
        RotationMatrixX,
        RotationMatrixY,
        RotationMatrixZ,
    )
    start = time.perf_counter()
    g = list(GRAVITY)
    sc = exu.SystemContainer()
    mbs = sc.AddSystem()
    ground = mbs.AddObject(ei.ObjectGround())
    a1 = RotationMatrixY(theta[0])
    com = np.array(LINK1_COM)
    i_com = np.diag(LINK1_INERTIA_ORIGIN) - LINK1_MASS * (com @ com * np.eye(3)
                                                          - np.outer(com, com))
    link1 = mbs.CreateRigidBody(inertia=RigidBodyInertia(mass=LINK1_MASS,
                                                         inertiaTensor=i_com),
                                referencePosition=list(a1 @ com),
                                referenceRotationMatrix=a1, gravity=g)
    turn_z_to_y = RotationMatrixX(-np.pi / 2)  # a marker frame whose z axis is global y
    m_ground = mbs.AddMarker(ei.MarkerBodyRigid(
        bodyNumber=ground, localHT=exu.HT(rotation=turn_z_to_y, translation=[0.0] * 3)))
    m_link1 = mbs.AddMarker(ei.MarkerBodyRigid(
        bodyNumber=link1, localHT=exu.HT(rotation=turn_z_to_y, translation=list(-com))))
    mbs.AddObject(ei.ObjectJointRevoluteZ(markerNumbers=[m_ground, m_link1]))
    a2 = a1 @ RotationMatrixZ(theta[1])
    root = a1 @ np.array(JOINT2_POSITION)
    ep = list(RotationMatrix2EulerParameters(a2))
    sec = _beam_section(exu, TUBE["E"], TUBE["G"], TUBE["rho"], TUBE["A"], TUBE["Iy"],
                        TUBE["Iz"], TUBE["J"], shear_area=TUBE["A"] / 2)
    le = H2_LENGTH / elements
    nodes = [mbs.AddNode(ei.NodeRigidBodyEP(
        referenceCoordinates=list(root + a2 @ np.array([k * le, 0.0, 0.0])) + ep,
        initialCoordinates=[0.0] * 7, initialVelocities=[0.0] * 7))
        for k in range(elements + 1)]
    for k in range(elements):
        beam = mbs.AddObject(ei.ObjectBeamGeometricallyExact(
            nodeNumbers=[nodes[k], nodes[k + 1]], length=le, sectionData=sec))
        mbs.AddLoad(ei.LoadMassProportional(
            markerNumber=mbs.AddMarker(ei.MarkerBodyMass(bodyNumber=beam)), loadVector=g))
    m_joint2 = mbs.AddMarker(ei.MarkerBodyRigid(
        bodyNumber=link1, localHT=exu.HT(rotation=np.eye(3),
                                         translation=list(np.array(JOINT2_POSITION) - com))))
    m_root = mbs.AddMarker(ei.MarkerNodeRigid(nodeNumber=nodes[0]))
    mbs.AddObject(ei.ObjectJointRevoluteZ(markerNumbers=[m_joint2, m_root]))
    tip = mbs.AddObject(ei.ObjectMassPoint(nodeNumber=nodes[-1], mass=H2_TIP_MASS))
    mbs.AddLoad(ei.LoadMassProportional(
        markerNumber=mbs.AddMarker(ei.MarkerBodyMass(bodyNumber=tip)), loadVector=g))
    s_rot1 = mbs.AddSensor(ei.SensorBody(bodyNumber=link1, storeInternal=True,
                                         writeToFile=False,
                                         outputVariableType=exu.OutputVariableType.RotationMatrix))
    s_rot2, s_root = (_node_sensor(exu, mbs, nodes[0], kind)
                      for kind in ("RotationMatrix", "Position"))
    s_tip = _node_sensor(exu, mbs, nodes[-1], "Position")
    wall, steps, solve = _solve_beams(exu, mbs, start, h, t_end, output_step, rho_inf,
                                      newton_tol, newton_abs)
    r1 = mbs.GetSensorStoredData(s_rot1)
    r2 = mbs.GetSensorStoredData(s_rot2)
    p0 = mbs.GetSensorStoredData(s_root)[:, 1:]
    p1 = mbs.GetSensorStoredData(s_tip)[:, 1:]
    rot1 = r1[:, 1:].reshape(-1, 3, 3)
    rot2 = r2[:, 1:].reshape(-1, 3, 3)
    rel = np.einsum("kji,kjl->kil", rot1, rot2)  # A1^T A2 = Rz(theta2)
    deflection = np.einsum("kji,kj->ki", rot2, p1 - p0) - np.array([H2_LENGTH, 0.0, 0.0])
    return {"t": r1[:, 0], "theta1": np.unwrap(_rotation_angle_about(rot1, 1)),
            "theta2": np.unwrap(_rotation_angle_about(rel, 2)), "deflection": deflection,
            "wall": wall, "solve": solve, "steps": steps}


def _node_sensor(exu, mbs, node, kind):
    """A sensor kept in memory: `kind` (an OutputVariableType name) of an Exudyn node."""
    import exudyn.itemInterface as ei
    return mbs.AddSensor(ei.SensorNode(nodeNumber=node, storeInternal=True,
                                       writeToFile=False,
                                       outputVariableType=getattr(exu.OutputVariableType,
                                                                  kind)))


def _solve_beams(exu, mbs, start, h, t_end, output_step, rho_inf, newton_tol, newton_abs,
                 modified_newton=True):
    """Assemble and integrate a beam model with generalized-alpha (sparse solver):
    (wall time since `start`, steps, the time of the integration alone)."""
    mbs.Assemble()
    ss = _settings(exu, h, t_end, output_step, rho_inf, newton_tol, sparse=True,
                   modified_newton=modified_newton, newton_abs=newton_abs)
    solving = time.perf_counter()
    exu.SolveDynamic(mbs, ss, solverType=exu.DynamicSolverType.GeneralizedAlpha)
    end = time.perf_counter()
    return end - start, int(ss.timeIntegration.numberOfSteps), end - solving


# ------------------------------------------------------ a flexmbs tree in Exudyn

def _axis_frame(axis):
    """A rotation whose third column is the unit vector `axis`."""
    z = np.asarray(axis, float) / np.linalg.norm(axis)
    x = np.cross(z, [1.0, 0.0, 0.0] if abs(z[0]) < 0.9 else [0.0, 1.0, 0.0])
    x /= np.linalg.norm(x)
    return np.column_stack([x, np.cross(z, x), z])


def exudyn_tree(model, h, t_end, rho_inf=0.8, newton_tol=1e-8, newton_abs=1e-6,
                output_step=0.01, modified_newton=False):
    """A flexmbs tree of rigid bodies and nodal beams on revolute joints (with joint
    springs and dampers; a URDF import, say) in Exudyn: rigid bodies with their mass,
    centre of mass and inertia; every beam element an ObjectBeamGeometricallyExact
    with the beam's section (shear area A/2) and mass, a node per flexmbs node whose
    frame is the element's (at a kink of the beam's polyline two nodes joined rigidly);
    each joint an ObjectJointRevoluteZ about its axis with an
    ObjectConnectorTorsionalSpringDamper of its stiffness, damping and rest beside it
    (its relative rotation is the joint angle); point masses at nodes; gravity on
    every body; placed at the model's initial state, at rest. Generalized-alpha with
    the fixed step h and full Newton iterations (Exudyn's default; its modified Newton
    iteration diverges in the first step of the flexible UR5).

    Returns dict t, angles ((n, joints), rad), wall (s, building and solving), solve
    (s), steps."""
    exu = exudyn()
    import exudyn.itemInterface as ei
    from exudyn.rigidBodyUtilities import RigidBodyInertia, RotationMatrix2EulerParameters

    from flexmbs.dynamics import api
    from flexmbs.elements.beam import element_frame
    from flexmbs.model.compiled import compile_model
    from flexmbs.model.description import GROUND
    from flexmbs.model.items import BeamBody

    start = time.perf_counter()
    cm = compile_model(model)
    if cm.has_constraints or any(j.type != "revolute" for j in model.joints.values()):
        raise ValueError("exudyn_tree: a tree of revolute joints only")
    r_body, a_body = api.body_poses(cm, cm.q0)
    names = list(cm.topology.body_names)
    g = list(model.gravity)
    sc = exu.SystemContainer()
    mbs = sc.AddSystem()
    ground = mbs.AddObject(ei.ObjectGround())
    rigid, node_frames = {}, {}  # body -> Exudyn body; beam -> [(node, C)] per flexmbs node
    for name, body in model.bodies.items():
        i = names.index(name)
        a, r = a_body[i], r_body[i]
        if not isinstance(body, BeamBody):
            rigid[name] = mbs.CreateRigidBody(
                inertia=RigidBodyInertia(mass=body.mass, inertiaTensor=body.inertia),
                referencePosition=list(r + a @ body.com), referenceRotationMatrix=a,
                gravity=g)
            continue
        sec = _beam_section(exu, body.material.youngs_modulus, body.material.shear_modulus,
                            body.material.density, body.section.area, body.section.i_y,
                            body.section.i_z, body.section.torsion_constant,
                            shear_area=body.section.area / 2)
        frames = {}   # flexmbs node -> list of (Exudyn node, C) with its frames
        for na, nb in body.connectivity:
            c = element_frame(body.nodes[na], body.nodes[nb], body.reference)
            ends = []
            for k in (na, nb):
                hit = [n for n, ck in frames.get(k, []) if np.allclose(ck, c, atol=1e-12)]
                if hit:
                    ends.append(hit[0])
                    continue
                ep = list(RotationMatrix2EulerParameters(a @ c))
                node = mbs.AddNode(ei.NodeRigidBodyEP(
                    referenceCoordinates=list(r + a @ body.nodes[k]) + ep,
                    initialCoordinates=[0.0] * 7, initialVelocities=[0.0] * 7))
                if frames.get(k):  # a kink: join rigidly to the node already there
                    other, c_other = frames[k][0]
                    mbs.AddObject(ei.ObjectJointGeneric(
                        markerNumbers=[mbs.AddMarker(ei.MarkerNodeRigid(nodeNumber=other)),
                                       mbs.AddMarker(ei.MarkerNodeRigid(nodeNumber=node))],
                        constrainedAxes=[1] * 6, rotationMarker0=c_other.T @ c,
                        rotationMarker1=np.eye(3)))
                frames.setdefault(k, []).append((node, c))
                ends.append(node)
            length = float(np.linalg.norm(body.nodes[nb] - body.nodes[na]))
            beam = mbs.AddObject(ei.ObjectBeamGeometricallyExact(
                nodeNumbers=ends, length=length, sectionData=sec))
            mbs.AddLoad(ei.LoadMassProportional(
                markerNumber=mbs.AddMarker(ei.MarkerBodyMass(bodyNumber=beam)), loadVector=g))
        for k, mass in body.node_masses.items():
            point = mbs.AddObject(ei.ObjectMassPoint(nodeNumber=frames[k][0][0], mass=mass))
            mbs.AddLoad(ei.LoadMassProportional(
                markerNumber=mbs.AddMarker(ei.MarkerBodyMass(bodyNumber=point)), loadVector=g))
        node_frames[name] = frames

    def marker(body_name, position, orientation, node=None):
        """An Exudyn marker whose frame is (position, orientation) of flexmbs' body
        frame (on a beam: at its node, following it)."""
        if body_name == GROUND:
            return mbs.AddMarker(ei.MarkerBodyRigid(bodyNumber=ground, localHT=exu.HT(
                rotation=orientation, translation=list(position))))
        body = model.bodies[body_name]
        if isinstance(body, BeamBody):
            if node is None:  # the body's own frame: the node there (node 0)
                node = int(np.argmin(np.linalg.norm(body.nodes - position, axis=1)))
            n, c = node_frames[body_name][node][0]
            return mbs.AddMarker(ei.MarkerNodeRigid(nodeNumber=n, localHT=exu.HT(
                rotation=c.T @ orientation, translation=[0.0, 0.0, 0.0])))
        return mbs.AddMarker(ei.MarkerBodyRigid(bodyNumber=rigid[body_name], localHT=exu.HT(
            rotation=orientation, translation=list(np.asarray(position) - body.com))))

    springs = []
    for joint in model.joints.values():
        w = _axis_frame(joint.rotation_axes[0])
        pm = model.marker(joint.parent, joint.parent_marker)
        cmk = model.marker(joint.child, joint.child_marker)
        m0 = marker(joint.parent, pm.position, pm.orientation @ w, pm.node)
        m1 = marker(joint.child, cmk.position, cmk.orientation @ w, cmk.node)
        mbs.AddObject(ei.ObjectJointRevoluteZ(markerNumbers=[m0, m1]))
        springs.append(mbs.AddObject(ei.ObjectConnectorTorsionalSpringDamper(
            markerNumbers=[m0, m1], stiffness=float(joint.stiffness[0]),
            damping=float(joint.damping[0]), offset=float(joint.rest[0]))))
    sensors = [mbs.AddSensor(ei.SensorObject(
        objectNumber=s, storeInternal=True, writeToFile=False,
        outputVariableType=exu.OutputVariableType.Rotation)) for s in springs]
    wall, steps, solve = _solve_beams(exu, mbs, start, h, t_end, output_step, rho_inf,
                                      newton_tol, newton_abs, modified_newton)
    data = [mbs.GetSensorStoredData(s) for s in sensors]
    angles = np.unwrap(np.column_stack([d[:, 1] for d in data]), axis=0)
    return {"t": data[0][:, 0], "angles": angles, "wall": wall, "solve": solve,
            "steps": steps}


# SPIN (docs/explanation/benchmark-models.md; flexmbs.model.library.spin_up)
SPIN = dict(L=10.0, A=4e-4, I=2e-7, E=7e10, rho=3000.0)
SPIN_RATE, SPIN_DURATION = 6.0, 15.0


def spin_angle(t):
    """The hub angle of SPIN (rad) at t (s)."""
    w, T = SPIN_RATE, SPIN_DURATION
    if t < T:
        return (w / T) * (t * t / 2 + (T / (2 * np.pi)) ** 2 * (np.cos(2 * np.pi * t / T) - 1))
    return w * (t - T / 2)


def exudyn_spin(elements, h, t_end=20.0, rho_inf=0.8, newton_tol=1e-8, newton_abs=1e-6,
                output_step=0.05):
    """SPIN with `elements` ObjectBeamGeometricallyExact elements, the first node clamped
    to a hub whose rotation about z is prescribed. Newton stops at the relative
    tolerance newton_tol or the absolute one newton_abs (N): in the slow start of the
    spin-up the residual is too small for the relative test alone, which then fails
    and makes Exudyn cut the step down to 1e-5 s.

    Returns dict t, deflection ((n, 3) m, the tip's elastic displacement in the hub
    frame), angle (rad, of the clamped node, unwrapped), wall (s), steps."""
    exu = exudyn()
    import exudyn.itemInterface as ei
    start = time.perf_counter()
    p = SPIN
    sc = exu.SystemContainer()
    mbs = sc.AddSystem()
    # docs/explanation/benchmark-models.md gives no torsion constant (the motion is planar):
    # J = 2 I, G = E / 2.6, as flexmbs' spin_up
    sec = _beam_section(exu, p["E"], p["E"] / 2.6, p["rho"], p["A"], p["I"], p["I"],
                        2 * p["I"], shear_area=p["A"] * 5 / 6)
    le = p["L"] / elements
    nodes = [mbs.AddNode(ei.NodeRigidBodyEP(referenceCoordinates=[k * le, 0, 0, 1, 0, 0, 0]))
             for k in range(elements + 1)]
    for k in range(elements):
        mbs.AddObject(ei.ObjectBeamGeometricallyExact(nodeNumbers=[nodes[k], nodes[k + 1]],
                                                      length=le, sectionData=sec))
    # The hub: a rigid body on a Tait-Bryan-angle node whose six coordinates are held by
    # coordinate constraints, the z angle's following the spin-up law (a scalar offset
    # function of t, called once per residual); the beam's first node is clamped to it.
    # (A generic joint with an offset function would be simpler, but Exudyn
    # differentiates such a joint numerically, calling the Python function thousands of
    # times a step.) The hub's mass and inertia do not act on the beam: its motion is
    # prescribed.
    hub_node = mbs.AddNode(ei.NodeRigidBodyRxyz(referenceCoordinates=[0.0] * 6))
    hub = mbs.AddObject(ei.ObjectRigidBody(physicsMass=1.0,
                                           physicsInertia=[1.0, 1.0, 1.0, 0.0, 0.0, 0.0],
                                           nodeNumber=hub_node))
    ground_node = mbs.AddNode(ei.NodePointGround())
    m_fixed = mbs.AddMarker(ei.MarkerNodeCoordinate(nodeNumber=ground_node, coordinate=0))

    def hub_angle(mbs, t, item, offset):
        return spin_angle(t)

    for k in range(6):
        m_k = mbs.AddMarker(ei.MarkerNodeCoordinate(nodeNumber=hub_node, coordinate=k))
        mbs.AddObject(ei.CoordinateConstraint(markerNumbers=[m_fixed, m_k],
                                              **({"offsetUserFunction": hub_angle} if k == 5
                                                 else {})))
    m_hub = mbs.AddMarker(ei.MarkerBodyRigid(bodyNumber=hub))
    m_root = mbs.AddMarker(ei.MarkerNodeRigid(nodeNumber=nodes[0]))
    mbs.AddObject(ei.ObjectJointGeneric(markerNumbers=[m_hub, m_root],
                                        constrainedAxes=[1] * 6))
    s_rot = _node_sensor(exu, mbs, nodes[0], "RotationMatrix")
    s_tip = _node_sensor(exu, mbs, nodes[-1], "Position")
    wall, steps, _ = _solve_beams(exu, mbs, start, h, t_end, output_step, rho_inf,
                                  newton_tol, newton_abs)
    r = mbs.GetSensorStoredData(s_rot)
    rot = r[:, 1:].reshape(-1, 3, 3)
    tip = mbs.GetSensorStoredData(s_tip)[:, 1:]
    deflection = np.einsum("kji,kj->ki", rot, tip) - np.array([p["L"], 0.0, 0.0])
    return {"t": r[:, 0], "deflection": deflection,
            "angle": np.unwrap(_rotation_angle_about(rot, 2)), "wall": wall,
            "steps": steps}


def grouped(n):
    """An integer with its thousands set apart by spaces, as the documentation writes
    counts: 289 136."""
    return f"{int(n):,}".replace(",", " ")


def sci(x, digits=1):
    """x in scientific notation with `digits` decimals and an exponent without its
    leading zero: 2.3e-9, 1e-8."""
    mantissa, exponent = f"{x:.{digits}e}".split("e")
    return f"{mantissa}e{int(exponent)}"


def significant(x, digits=2):
    """x to `digits` significant digits, trailing zeros kept, no trailing point: 34,
    7.5, 0.50, 0.053, 3.80, 116 (whole numbers from 10**digits on)."""
    if abs(x) >= 10 ** digits:
        return f"{x:.0f}"
    return f"{x:#.{digits}g}".rstrip(".")


def add_results_options(parser):
    """--json (write the results there) and --table (print the documentation's tables
    of a results file), the options every benchmark shares."""
    parser.add_argument("--json", help="write the results here")
    parser.add_argument("--table", metavar="JSON",
                        help="print the documentation's table of a run")


def printed_table(args, table):
    """True, after printing table(results) of the file --table names, when it was
    given: the benchmark then has nothing else to do."""
    if not args.table:
        return False
    import json
    from pathlib import Path
    print(table(json.loads(Path(args.table).read_text())))
    return True


def begin(parser, table):
    """Parse a benchmark's command line (with the shared results options): with
    --table, print its table and return None; else log the machine and return (args,
    machine(), the start time for perf_counter)."""
    add_results_options(parser)
    args = parser.parse_args()
    if printed_table(args, table):
        return None
    info = machine()
    log(f"machine: {info['cpu']}, {info['cores']} cores; numba {info['numba']}")
    return args, info, time.perf_counter()


def finish(args, results, start, table):
    """The end of a benchmark begun with `begin`: the total wall time into `results`,
    `results` to --json when given, and its table printed."""
    import json
    from pathlib import Path
    results["total_wall"] = time.perf_counter() - start
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1))
    print(table(results))


def log(text):
    """A line of a benchmark's progress, shown at once."""
    print(text, flush=True)
