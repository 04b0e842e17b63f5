"""The linkages of docs/explanation/benchmark-models.md built in Python (tests,
benchmarks): the four-bar, rigid and flexible, Bricard's linkage, the slider-crank and
Simeon's flexible slider-crank (re-exported by flexmbs.model.library)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..elements import material, rectangle_section
from .description import NODE_DOFS, BeamBody, Model
from .library_parts import (
    benchmark_model,
    joint_sensors,
    revolute,
    straight_beam,
    tube_beam,
)
from .timefunctions import ConstantRate

__all__ = [
    "four_bar",
    "four_bar_flexible",
    "bricard",
    "slider_crank",
    "simeon_crank",
    "crank_rod_field",
    "crank_midpoint_deflection",
    "CRANK_REFERENCE_Q1",
]

FB_LINK = 0.5  # m, crank and rocker
FB_COUPLER = 0.4  # m, also the distance of the ground pivots
FB_SPRING = 1e4  # N/m (10 N/mm)


def _slender(mass: float, i_transverse: float, axis: int) -> list[float]:
    """Inertia about the centre of mass of a link along body axis `axis` (0 x, 2 z):
    i_transverse about the other two axes, 1e-4 of it about the link's own axis
    (docs/explanation/benchmark-models.md FB)."""
    inertia = [i_transverse] * 3
    inertia[axis] = 1e-4 * i_transverse
    return inertia


def _coupler_to_crank(model: Model, rocker: float) -> None:
    """The four-bar's joint from the crank's tip to the coupler, turned back by `rocker`
    so that the coupler starts level."""
    revolute(
        model,
        "crank_coupler",
        "crank",
        "coupler",
        (0.0, 1.0, 0.0),
        parent_marker="tip",
        initial=-rocker,
    )


def _coupler_to_rocker(model: Model) -> None:
    """The four-bar's cut joint from the coupler's end to the rocker's tip, and the spring
    from the coupler's middle to the ground."""
    revolute(
        model,
        "coupler_rocker",
        "coupler",
        "rocker",
        (0.0, 1.0, 0.0),
        parent_marker="end",
        child_marker="tip",
        cut=True,
    )
    model.add_spring(
        "spring",
        "coupler",
        "middle",
        "ground",
        "spring_anchor",
        stiffness=FB_SPRING,
        rest_length=0.5,
    )


def four_bar(rocker: float = 0.05, t_end: float = 10.0) -> Model:
    """FB of docs/explanation/benchmark-models.md: a parallelogram four-bar hanging under
    gravity from ground pivots at (0, 0, 0) and (0.4, 0, 0), revolute axes along global y:
    crank A and rocker C (0.5 m, 7.707 kg, 0.16176083 kg m^2 about their centres) hang
    along -z, the coupler B (0.4 m, 3.946 kg, 0.05300579 kg m^2) joins their lower ends (Bae,
    Choi and Kim, table 1). A spring of 10 N/mm from the coupler's middle to the ground point
    (0.7, 0, -0.5), rest length 0.5 m (unstretched when hanging). The joint between
    the coupler and the rocker is cut (its constraints close the loop). Released at
    rest with the rocker (and the crank) turned `rocker` rad from hanging, the
    coupler horizontal. Sensors: the crank and rocker angles and the coupler's middle."""
    model = benchmark_model("four_bar", t_end, step=0.005)
    for name in ("crank", "rocker"):
        model.add_rigid_body(
            name,
            mass=7.707,
            com=(0.0, 0.0, -FB_LINK / 2),
            inertia=_slender(7.707, 0.16176083, 2),
            inertia_about="com",
        )
        model.add_marker(name, "tip", position=(0.0, 0.0, -FB_LINK))
    model.add_rigid_body(
        "coupler",
        mass=3.946,
        com=(FB_COUPLER / 2, 0.0, 0.0),
        inertia=_slender(3.946, 0.05300579, 0),
        inertia_about="com",
    )
    model.add_marker("coupler", "end", position=(FB_COUPLER, 0.0, 0.0))
    model.add_marker("coupler", "middle", position=(FB_COUPLER / 2, 0.0, 0.0))
    model.add_marker("ground", "rocker_pivot", position=(FB_COUPLER, 0.0, 0.0))
    model.add_marker("ground", "spring_anchor", position=(0.7, 0.0, -FB_LINK))
    y = (0.0, 1.0, 0.0)
    revolute(model, "crank_pivot", "ground", "crank", y, initial=rocker)
    _coupler_to_crank(model, rocker)
    revolute(
        model, "rocker_pivot", "ground", "rocker", y, parent_marker="rocker_pivot", initial=rocker
    )
    _coupler_to_rocker(model)
    joint_sensors(model, {"crank": "crank_pivot", "rocker": "rocker_pivot"})
    model.add_sensor("middle", "marker_position", body="coupler", marker="middle")
    return model


BR_LINK = 0.1  # m: each link; the triangle's side is 2 BR_LINK


def bricard(t_end: float = 10.0) -> Model:
    """BR of docs/explanation/benchmark-models.md (Führer and Wallrapp's closed chain,
    Bricard's linkage): five moving links and the ground joined in a ring by six revolute
    joints, in the triangular configuration: the hinges at the corners C0, C1, C2 and at the
    midpoints of the
    sides of an equilateral triangle of side 0.2 m in the global x-y plane; corner
    hinges about the triangle's normal (global z), midpoint hinges about the in-plane
    axis perpendicular to their side. Ring order C0, M01, C1, M12, C2, M20; the ground
    is the link from M20 to C0, links 1 to 5 the others (slender rods of 1 kg and
    0.1 m along the x axis of their frames, which start at their first hinge). The
    joint at M20 (link 5 to the ground) is cut. Gravity -z, released at rest.
    Sensors: the first joint's angle and the middle of link 3 (C1 to M12)."""
    c0, c1 = np.zeros(3), np.array([2 * BR_LINK, 0.0, 0.0])
    c2 = np.array([BR_LINK, np.sqrt(3.0) * BR_LINK, 0.0])
    ring = [c0, (c0 + c1) / 2, c1, (c1 + c2) / 2, c2, (c2 + c0) / 2]
    z = np.array([0.0, 0.0, 1.0])
    axes = []
    for k, _point in enumerate(ring):
        if k % 2 == 0:
            axes.append(z)
        else:  # the side through this midpoint, and the in-plane normal to it
            side = ring[(k + 1) % 6] - ring[k - 1]
            axes.append(np.cross(z, side / np.linalg.norm(side)))
    model = benchmark_model("bricard", t_end, step=0.01)
    frames = []
    for k in range(5):  # link k+1 from ring[k] to ring[k+1]
        x = (ring[k + 1] - ring[k]) / BR_LINK
        frames.append(np.column_stack([x, np.cross(z, x), z]))
        name = f"link{k + 1}"
        model.add_rigid_body(
            name,
            mass=1.0,
            com=(BR_LINK / 2, 0.0, 0.0),
            inertia=(1e-6, BR_LINK**2 / 12, BR_LINK**2 / 12),
            inertia_about="com",
        )
        model.add_marker(name, "end", position=(BR_LINK, 0.0, 0.0))
    model.add_marker("ground", "c0", position=ring[0])
    revolute(
        model,
        "hinge1",
        "ground",
        "link1",
        axes[0],
        parent_marker="c0",
        child_marker=model.add_marker("link1", "start", orientation=frames[0].T).name,
    )
    for k in range(1, 5):
        parent, child = f"link{k}", f"link{k + 1}"
        relative = frames[k].T @ frames[k - 1]  # C_O: A_child C_O = A_parent at zero
        start = model.add_marker(child, "start", orientation=relative)
        revolute(
            model,
            f"hinge{k + 1}",
            parent,
            child,
            frames[k - 1].T @ axes[k],
            parent_marker="end",
            child_marker=start.name,
        )
    model.add_marker("ground", "m20", position=ring[5])
    model.add_marker("link5", "end_axes", position=(BR_LINK, 0.0, 0.0), orientation=frames[4].T)
    revolute(
        model,
        "hinge6",
        "ground",
        "link5",
        axes[5],
        parent_marker="m20",
        child_marker="end_axes",
        cut=True,
    )
    joint_sensors(model, {"angle1": "hinge1"})
    model.add_marker("link3", "middle", position=(BR_LINK / 2, 0.0, 0.0))
    model.add_sensor("middle3", "marker_position", body="link3", marker="middle")
    return model


def slider_crank(elements: int = 4, t_end: float = 2.0) -> Model:
    """SC of docs/explanation/benchmark-models.md: a crank (0.15 m, 0.5 kg slender rod along +x
    of its frame)
    turning about global y at the origin at a prescribed 30 rad/s; a connecting rod,
    the Huang tube (0.30 m, `elements` elements, clamped at its floating frame, which
    is pinned to the crank's tip), pinned at its far end to a slider of 0.2 kg that
    moves along global x. The rod-slider joint is cut. No gravity. Initial: crank
    angle 0 (all three in line along x: the slider at 0.45 m), the rod straight,
    the velocities made consistent with the crank's. Sensors: the slider position,
    the rod's middle node's transverse deflection in the rod frame (its z component,
    in the plane of motion) and the crank angle."""
    model = benchmark_model("slider_crank", t_end, step=0.001, gravity=(0.0, 0.0, 0.0))
    crank, rod = 0.15, 0.30
    model.add_rigid_body(
        "crank",
        mass=0.5,
        com=(crank / 2, 0.0, 0.0),
        inertia=(1e-6, 0.5 * crank**2 / 12, 0.5 * crank**2 / 12),
        inertia_about="com",
    )
    model.add_marker("crank", "tip", position=(crank, 0.0, 0.0))
    tube_beam(model, "rod", (rod, 0.0, 0.0), elements)
    model.add_marker("rod", "end", node=-1)
    model.add_marker("rod", "middle", node=elements // 2)
    model.add_rigid_body("slider", mass=0.2, inertia=(1e-5, 1e-5, 1e-5), inertia_about="com")
    _crank_rod_slider(model, 30.0, guide={"initial": 0.45})  # crank + rod
    joint_sensors(model, {"slider": "guide"})
    model.add_sensor("deflection", "marker_deflection", body="rod", marker="middle", frame="rod")
    joint_sensors(model, {"crank": "crank_pivot"})
    return model


def _crank_rod_slider(
    model: Model,
    speed: float,
    crank_rod: dict[str, Any] | None = None,
    guide: dict[str, Any] | None = None,
) -> None:
    """The joints of a slider-crank in the plane x-z: the "crank" turning about global y
    at `speed` (rad/s, driven from 0), the "rod" pinned to the crank's marker "tip",
    the "slider" on the global x axis (prismatic "guide") pinned to the rod's marker
    "end" by the cut joint "rod_slider"; `crank_rod` and `guide` the start of those two
    joints (Model.add_joint's initial, initial_rate)."""
    y = (0.0, 1.0, 0.0)
    revolute(model, "crank_pivot", "ground", "crank", y)
    model.add_driver("motor", "crank_pivot", ConstantRate(value=0.0, rate=speed))
    revolute(model, "crank_rod", "crank", "rod", y, parent_marker="tip", **(crank_rod or {}))
    model.add_joint(
        "guide", "prismatic", parent="ground", child="slider", axis=(1.0, 0.0, 0.0), **(guide or {})
    )
    revolute(model, "rod_slider", "rod", "slider", y, parent_marker="end", cut=True)


CRANK_LENGTH = 0.15  # m: Simeon's crank (the Bari test set's problem `crank`)
CRANK_ROD = 0.30  # m
CRANK_SECTION = 0.008  # m: the rod's square section, 8 mm x 8 mm
CRANK_STEEL = dict(youngs_modulus=2.0e11, poisson_ratio=0.3, density=7870.0)
CRANK_SLIDER = 0.075552  # kg
CRANK_SPEED = 150.0  # rad/s
# The test set's initial values: rod angle phi2 and its rate (rad, rad/s), the slider
# x3 and its rate (m, m/s), and the rod's four elastic coordinates and their rates,
# q1, q2 the lateral amplitudes of sin(pi xi), sin(2 pi xi) and q3, q4 the axial
# displacements of the middle and the far end (quadratic ansatz), xi = x / 0.3 m.
CRANK_START: dict[str, Any] = dict(
    phi2=0.0,
    phi2_rate=-7.499576703969453e01,
    x3=4.500169330000000e-01,
    x3_rate=-2.689386719979040e-06,
    q=(0.0, 0.0, 1.033398630000000e-05, 1.693279690000000e-05),
    q_rate=(
        4.448961125815990e-01,
        4.634339319238670e-03,
        -1.785910760000550e-06,
        -2.689386719979040e-06,
    ),
)
CRANK_REFERENCE_Q1 = 0.1893192899613509e-03  # m: q1 at t = 0.1 s, the test set's solution


def crank_rod_field(q: Iterable[float], elements: int) -> tuple[NDArray[np.float64], float]:
    """The rod's nodal elastic coordinates (u, w, ty per node 1..elements, in that
    order per node; m, m, rad) of the test set's field: lateral w_c = q1 sin(pi xi) +
    q2 sin(2 pi xi) in the frame through both pins (the chord), axial u = q3 4 xi
    (1 - xi) + q4 xi (2 xi - 1). The rod's floating frame is clamped at node 0, so it
    turns from the chord by the slope s0 = w_c'(0) and its lateral field is w_c - s0 x;
    the test set's plane is ours with its y along -z (a turn of phi about y is its
    turn by phi), so w = -(w_c - s0 x) and ty = -dw/dx. Returns (coordinates, s0);
    linear in q, so it maps rates too."""
    q1, q2, q3, q4 = q
    xi = np.arange(1, elements + 1) / elements
    x = xi * CRANK_ROD
    s0 = np.pi * (q1 + 2.0 * q2) / CRANK_ROD
    wc = q1 * np.sin(np.pi * xi) + q2 * np.sin(2.0 * np.pi * xi)
    slope = np.pi / CRANK_ROD * (q1 * np.cos(np.pi * xi) + 2.0 * q2 * np.cos(2.0 * np.pi * xi))
    u = q3 * 4.0 * xi * (1.0 - xi) + q4 * xi * (2.0 * xi - 1.0)
    w = -(wc - s0 * x)
    ty = slope - s0
    return np.column_stack([u, w, ty]), s0


def simeon_crank(
    elements: int = 8,
    t_end: float = 0.1,
    geometric: str = "none",
    planar: bool = True,
    modes: str | int = "all",
    corrections: bool = True,
    modal_derivatives: bool | None = None,
) -> Model:
    """CRANK of docs/explanation/benchmark-models.md: Simeon's flexible slider-crank, the
    Bari test set's problem `crank` (Mazzia and Magherini), in the plane x-z. A crank of
    0.15 m turning about global y at a prescribed 150 rad/s; a steel rod of 0.30 m,
    8 mm x 8 mm (`elements` elements, an even number, clamped at its floating frame,
    pinned to the crank's tip); a slider of 0.075552 kg on the global x axis, pinned
    to the rod's far end (the cut joint). No gravity, no damping. Started from the
    test set's initial values (CRANK_START, mapped by crank_rod_field). Sensors: the
    deflections of the rod's middle and far-end nodes in the rod frame, the slider
    position, the rod's angle at the crank. `geometric`: the rod's geometric
    stiffness, "none" as in the test set's linear problem (it enlarges the midpoint
    deflection at 0.1 s by about a quarter); `planar`: the rod's out-of-plane
    coordinates (v, tx, tz of every node) fixed, as the test set's rod has none;
    `modes`: "all" (nodal coordinates) or the number of the rod's lowest modes kept,
    with static correction modes at its middle and far end unless `corrections` is
    False, and the modal derivatives as `modal_derivatives` says (None: with geometric
    stiffness), the start then the least-squares fit of the basis to the nodal field."""
    if elements % 2:
        raise ValueError(f"elements must be even (a node at the rod's middle), got {elements}")
    start = CRANK_START
    model = benchmark_model(
        "simeon_crank", t_end, step=1e-3, gravity=(0.0, 0.0, 0.0), rtol=1e-6, atol=1e-8
    )
    model.add_rigid_body(
        "crank",
        mass=0.36,
        com=(CRANK_LENGTH / 2, 0.0, 0.0),
        inertia=(1e-6, 0.002727, 0.002727),
        inertia_about="origin",
    )
    model.add_marker("crank", "tip", position=(CRANK_LENGTH, 0.0, 0.0))
    a = CRANK_SECTION
    straight_beam(
        model,
        "rod",
        (CRANK_ROD, 0.0, 0.0),
        rectangle_section(a, a),
        material(**CRANK_STEEL),
        elements,
        geometric=geometric,
        fixed={0: "all", **{k: ["v", "tx", "tz"] for k in range(1, elements + 1)}}
        if planar
        else None,
        modes=modes,
        correction_modes=modes != "all" and corrections,
        modal_derivatives=modal_derivatives if modes != "all" else None,
    )
    model.add_marker("rod", "middle", node=elements // 2)
    model.add_marker("rod", "end", node=-1)
    rod = model.bodies["rod"]
    assert isinstance(rod, BeamBody)
    s0_rate = _start_crank_rod(rod, elements)
    model.add_rigid_body(
        "slider", mass=CRANK_SLIDER, inertia=(1e-6, 1e-6, 1e-6), inertia_about="com"
    )
    _crank_rod_slider(
        model,
        CRANK_SPEED,
        crank_rod={
            "initial": start["phi2"],
            "initial_rate": start["phi2_rate"] + s0_rate - CRANK_SPEED,
        },
        guide={"initial": start["x3"], "initial_rate": start["x3_rate"]},
    )
    model.add_sensor("middle", "marker_deflection", body="rod", marker="middle", frame="rod")
    model.add_sensor("end", "marker_deflection", body="rod", marker="end", frame="rod")
    joint_sensors(model, {"slider": "guide", "rod_angle": "crank_rod"})
    return model


def _start_crank_rod(rod: BeamBody, elements: int) -> float:
    """Set the elastic start of the rod of simeon_crank to the test set's
    (CRANK_START mapped by crank_rod_field; with a mode basis its least-squares fit)
    and return the rate of the slope s0 (rad/s) that the rod's frame turns by."""
    field, _ = crank_rod_field(CRANK_START["q"], elements)
    rates, s0_rate = crank_rod_field(CRANK_START["q_rate"], elements)
    initial, initial_rates = np.zeros(len(rod.free)), np.zeros(len(rod.free))
    for node in range(1, elements + 1):
        k = rod.node_columns(node)[[NODE_DOFS.index(d) for d in ("u", "w", "ty")]]
        initial[k] = field[node - 1]
        initial_rates[k] = rates[node - 1]
    if rod.basis is not None:
        fit = np.linalg.lstsq(
            rod.basis.vectors, np.column_stack([initial, initial_rates]), rcond=None
        )[0]
        initial, initial_rates = fit[:, 0], fit[:, 1]
    rod.initial = list(initial)
    rod.initial_rates = list(initial_rates)
    return s0_rate


def crank_midpoint_deflection(middle: ArrayLike, end: ArrayLike) -> NDArray[np.float64]:
    """The test set's q1 (m) from the deflections (rows of x, y, z in the rod frame) of
    the rod's middle and far-end nodes: the middle's lateral deflection from the chord,
    w_c(L/2) = -(w(L/2) - w(L) / 2), which is q1 for the test set's two sine modes."""
    middle, end = np.atleast_2d(middle), np.atleast_2d(end)
    return -(middle[:, 2] - 0.5 * end[:, 2])


def four_bar_flexible(elements: int = 4, rocker: float = 0.05, t_end: float = 10.0) -> Model:
    """FB-flex of docs/explanation/benchmark-models.md: the four-bar with its coupler a
    flexible Huang tube of 0.4 m (`elements` elements, its mass then the tube's; clamped at
    its floating frame, pinned to the crank's tip); the cut joint at its far end's node, the
    spring at its middle node."""
    model = four_bar(rocker=rocker, t_end=t_end)
    model.name = "four_bar_flexible"
    for name in ("coupler_rocker", "crank_coupler"):
        model.joints.pop(name)
    model.springs.clear()
    model.sensors.pop("middle")
    model.bodies.pop("coupler")
    tube_beam(model, "coupler", (FB_COUPLER, 0.0, 0.0), elements)
    model.add_marker("coupler", "end", node=-1)
    model.add_marker("coupler", "middle", node=elements // 2)
    _coupler_to_crank(model, rocker)
    _coupler_to_rocker(model)
    model.add_sensor("middle", "marker_position", body="coupler", marker="middle")
    model.add_sensor(
        "bending", "marker_deflection", body="coupler", marker="middle", frame="coupler"
    )
    return model
