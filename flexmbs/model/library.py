"""Models of docs/explanation/benchmark-models.md built in Python, for any size (tests,
benchmarks): the chains, Huang's arms and the spin-up beam here, the linkages
(flexmbs.model.library_linkages) and the rolling disk (flexmbs.model.library_disk)
beside; the pieces they share are flexmbs.model.library_parts."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..elements import general_section, material
from .description import Model
from .library_disk import (
    RD_ACCEL,
    RD_ACCEL_LEAN,
    RD_ACCEL_SPIN,
    RD_ATOL,
    RD_GRAVITY,
    RD_LEAN,
    RD_MASS,
    RD_RADIUS,
    RD_SPEED,
    RD_VARIANTS,
    rolling_disk,
    rolling_disk_steady_rates,
)
from .library_linkages import (
    BR_LINK,
    CRANK_LENGTH,
    CRANK_REFERENCE_Q1,
    CRANK_ROD,
    CRANK_SECTION,
    CRANK_SLIDER,
    CRANK_SPEED,
    CRANK_START,
    CRANK_STEEL,
    FB_COUPLER,
    FB_LINK,
    FB_SPRING,
    bricard,
    crank_midpoint_deflection,
    crank_rod_field,
    four_bar,
    four_bar_flexible,
    simeon_crank,
    slider_crank,
)
from .library_parts import (
    HUANG_TUBE_MATERIAL,
    benchmark_model,
    huang_link1,
    huang_tube,
    joint_sensors,
    revolute,
    straight_beam,
    tip_sensors,
    tube_beam,
)
from .timefunctions import Constant, SpinUp

__all__ = [
    "chain_model",
    "huang_two_link",
    "huang_three_link",
    "huang_rig",
    "huang_tube",
    "huang_eight_link",
    "HUANG_TUBE_MATERIAL",
    "H8_INITIAL",
    "H8_TARGETS",
    "spin_up",
    "four_bar",
    "four_bar_flexible",
    "bricard",
    "slider_crank",
    "rolling_disk",
    "rolling_disk_steady_rates",
    "RD_VARIANTS",
    "simeon_crank",
    "crank_rod_field",
    "crank_midpoint_deflection",
    "CRANK_REFERENCE_Q1",
    # the models' constants
    "RD_ACCEL",
    "RD_ACCEL_LEAN",
    "RD_ACCEL_SPIN",
    "RD_ATOL",
    "RD_GRAVITY",
    "RD_LEAN",
    "RD_MASS",
    "RD_RADIUS",
    "RD_SPEED",
    "BR_LINK",
    "CRANK_LENGTH",
    "CRANK_ROD",
    "CRANK_SECTION",
    "CRANK_SLIDER",
    "CRANK_SPEED",
    "CRANK_START",
    "CRANK_STEEL",
    "FB_COUPLER",
    "FB_LINK",
    "FB_SPRING",
]

CHAIN_LINK_MASS = 1.0  # kg
CHAIN_LINK_LENGTH = 0.5  # m
CHAIN_AXIAL_INERTIA = 1e-4  # kg m^2 about the link axis


def chain_model(n: int, variant: str = "planar", t_end: float = 10.0) -> Model:
    """CHAIN-N (docs/explanation/benchmark-models.md): n rigid slender links of 1 kg and 0.5 m,
    hanging along -z of their frames, joined by revolute joints at the tips.

    planar: every axis is the link's y axis; spatial: the axes alternate between link y
    (odd joints) and link x (even joints). Initial theta1 = pi/2 (link 1 horizontal),
    the others 0, at rest; spatial also theta2 = 0.5. Sensors: every joint angle and the
    tip position of the last link.
    """
    if variant not in ("planar", "spatial"):
        raise ValueError(f"variant must be 'planar' or 'spatial', got {variant!r}")
    if int(n) < 1:
        raise ValueError(f"n must be >= 1, got {n}")
    n = int(n)
    m, length = CHAIN_LINK_MASS, CHAIN_LINK_LENGTH
    it = m * length**2 / 12.0
    model = benchmark_model(f"chain_{variant}_{n}", t_end, step=0.01)
    parent, marker = "ground", "origin"
    for k in range(1, n + 1):
        body = f"link{k}"
        model.add_rigid_body(
            body,
            mass=m,
            com=(0.0, 0.0, -length / 2),
            inertia=(it, it, CHAIN_AXIAL_INERTIA),
            inertia_about="com",
        )
        model.add_marker(body, "tip", position=(0.0, 0.0, -length))
        axis = (1.0, 0.0, 0.0) if (variant == "spatial" and k % 2 == 0) else (0.0, 1.0, 0.0)
        initial = np.pi / 2 if k == 1 else (0.5 if (variant == "spatial" and k == 2) else 0.0)
        revolute(model, f"j{k}", parent, body, axis, parent_marker=marker, initial=initial)
        model.add_sensor(f"theta{k}", "joint_coordinate", joint=f"j{k}")
        parent, marker = body, "tip"
    model.add_sensor("tip", "marker_position", body=f"link{n}", marker="tip")
    return model


def huang_two_link(
    elements: int = 1,
    alpha: float = 0.0,
    t_end: float = 5.0,
    youngs_modulus_scale: float = 1.0,
    initial: str = "undeformed",
    geometric: str = "consistent",
    modes: str | int = "all",
    correction_modes: bool = False,
    modal_derivatives: bool | None = None,
) -> Model:
    """H2 of docs/explanation/benchmark-models.md: rigid link 1 on a revolute joint about
    global y; flexible link 2 (the Huang tube, 1.02 m along +x of its frame, clamped at
    joint 2 about link-1 z, `elements` beam elements, 0.5 kg at the tip, damping alpha
    K_ff); theta1 = 1.5, theta2 = -1.0, at rest, the beam `initial` ("undeformed" as in the
    thesis, or "static"), `geometric` its geometric stiffness. `youngs_modulus_scale`
    multiplies E and G (the rigid limit). `modes`: "all" (the nodal coordinates) or the
    number of natural modes kept (docs/explanation/benchmark-models.md's variant: 2, the
    first bending pair), with static correction modes at the tip if `correction_modes`
    and the modal derivatives as `modal_derivatives` says (None: with geometric stiffness).
    Sensors: both joint angles, the tip's position in the link-2 frame and its elastic
    displacement there (x along the beam, y perpendicular to it in the plane of motion, z
    along the joint-2 axis).

    Link 1's inertia about its frame origin is docs/explanation/benchmark-models.md's
    diag(0.04022, 0.08884, 3.752e-4) except I_xx, raised to 0.08884: the table lumps the
    joint-1 drive into I_yy, which leaves no mass distribution with those moments (the model
    checks), and
    link 1 turns only about y, so I_xx and I_zz do not enter the motion."""
    mat = dict(HUANG_TUBE_MATERIAL)
    mat["youngs_modulus"] *= youngs_modulus_scale
    mat["shear_modulus"] *= youngs_modulus_scale
    model = benchmark_model("huang_two_link", t_end, step=0.01)
    huang_link1(model, along=(0.0, 0.0, -1.0))
    straight_beam(
        model,
        "link2",
        (1.02, 0.0, 0.0),
        huang_tube(),
        material(**mat),
        elements,
        node_masses={elements: 0.5},
        alpha=alpha,
        initial=initial,
        geometric=geometric,
        modes=modes,
        correction_modes=correction_modes,
        modal_derivatives=modal_derivatives,
    )
    model.add_marker("link2", "tip", node=elements)
    revolute(model, "joint1", "ground", "link1", (0.0, 1.0, 0.0), initial=1.5)
    revolute(
        model, "joint2", "link1", "link2", (0.0, 0.0, 1.0), parent_marker="joint2", initial=-1.0
    )
    joint_sensors(model, {"theta1": "joint1", "theta2": "joint2"})
    tip_sensors(model, "link2")
    return model


def huang_three_link(
    elements: int = 1, alpha: float = 0.0, t_end: float = 2.0, geometric: str = "consistent"
) -> Model:
    """H3 of docs/explanation/benchmark-models.md: link 1 of H2 on a revolute joint about
    global y; a prismatic joint along link-1 z at (0, 0, -0.231) to the rigid link 2 (2.067
    kg, centre of mass 0.231 m down its -z axis, 0.462 m long); a revolute joint about
    link-2 z at its end (0, 0, -0.462) to link 3, the flexible link of H2 (the Huang tube,
    1.02 m, 0.5 kg at the tip, `elements` elements, damping alpha K_ff). theta1 = 1.5, d2 =
    0, theta3 = -1.0, at rest. Sensors: the joint values, the tip's position in the link-3
    frame and its elastic displacement there.

    Link 2's inertia: docs/explanation/benchmark-models.md gives diag(0.04022, 0.08884,
    3.752e-4) about the frame
    origin, which no body with its centre of mass 0.231 m away has (the parallel-axis
    term alone is 0.110 kg m^2 > 0.08884): the values are taken about the centre of
    mass, with I_xx raised to 0.08884 as for link 1; link 2 turns only about y (with
    link 1), so I_xx and I_zz do not enter the motion."""
    model = benchmark_model("huang_three_link", t_end, step=0.01)
    huang_link1(model, along=(0.0, 0.0, -1.0))
    model.add_rigid_body(
        "link2",
        mass=2.067,
        com=(0.0, 0.0, -0.231),
        inertia=(0.08884, 0.08884, 3.752e-4),
        inertia_about="com",
    )
    model.add_marker("link2", "joint3", position=(0.0, 0.0, -0.462))
    tube_beam(
        model,
        "link3",
        (1.02, 0.0, 0.0),
        elements,
        node_masses={-1: 0.5},
        alpha=alpha,
        geometric=geometric,
    )
    model.add_marker("link3", "tip", node=-1)
    revolute(model, "joint1", "ground", "link1", (0.0, 1.0, 0.0), initial=1.5)
    model.add_joint(
        "joint2",
        "prismatic",
        parent="link1",
        parent_marker="joint2",
        child="link2",
        axis=(0.0, 0.0, 1.0),
    )
    revolute(
        model, "joint3", "link2", "link3", (0.0, 0.0, 1.0), parent_marker="joint3", initial=-1.0
    )
    joint_sensors(model, {"theta1": "joint1", "d2": "joint2", "theta3": "joint3"})
    tip_sensors(model, "link3")
    return model


def huang_rig(
    theta2: float = np.radians(30.0),  # noqa: B008
    elements: int = 1,
    t_end: float = 10.0,
    geometric: str = "consistent",
) -> Model:
    """RIG of docs/explanation/benchmark-models.md (Huang's test rig, chapter 4): joint 1 about
    global z with a 0.1 N m/rad spring and a 0.098 N m s/rad damper; rigid link 1 along +x;
    joint 2 at its end about link-1 x with the same spring and damper; link 2 the Huang tube
    (1.02 m along -z of its frame, clamped at joint 2, 0.604 kg at the tip, alpha =
    0.00025). Released at rest from (0, theta2). Sensors: both joint angles and the bending
    strain at the clamped end of link 2 on the tube surface (half-depth 6.35 mm) on the side
    the swing bends.

    Link 1's inertia about its frame origin is docs/explanation/benchmark-models.md's
    diag(3.752e-4, 0.04022, 0.08884) except I_yy, raised to 0.08884: the table lumps the
    joint-1 drive into I_zz, which leaves no mass distribution with those moments, and link
    1 turns only
    about z, so I_xx and I_yy do not enter the motion."""
    model = benchmark_model("huang_rig", t_end, step=0.005)  # the rig's 200 Hz
    huang_link1(model, along=(1.0, 0.0, 0.0))
    tube_beam(
        model,
        "link2",
        (0.0, 0.0, -1.02),
        elements,
        node_masses={-1: 0.604},
        alpha=0.00025,
        geometric=geometric,
    )
    model.add_marker("link2", "tip", node=-1)
    spring = dict(stiffness=0.1, damping=0.098)  # N m/rad, N m s/rad
    revolute(model, "joint1", "ground", "link1", (0.0, 0.0, 1.0), **spring)
    revolute(
        model,
        "joint2",
        "link1",
        "link2",
        (1.0, 0.0, 0.0),
        parent_marker="joint2",
        initial=float(theta2),
        **spring,
    )
    joint_sensors(model, {"theta1": "joint1", "theta2": "joint2"})
    model.add_sensor(
        "strain", "beam_strain", body="link2", element=0, at="start", point=(6.35e-3, 0.0)
    )
    tip_sensors(model, "link2")
    return model


H8_SMALL_LINK_MASS = 0.06125  # kg, links 3 to 8 (rigid steel, 0.1 m)
H8_SMALL_LINK_LENGTH = 0.1  # m
H8_SMALL_LINK_INERTIA = (7.6563e-7, 2.0455e-4, 2.0455e-4)  # kg m^2 about the centre of mass
H8_MOTOR: dict[str, Any] = dict(
    kp=100.0, kd=30.0, gear_ratio=1.0, rotor_inertia=2.0, motor_damping=0.5
)
H8_JOINTS = (  # name, type, parent, child, axis (None: the spherical joint's x, y, z)
    ("joint1", "revolute", "ground", "link1", (0.0, 0.0, 1.0)),
    ("joint2", "revolute", "link1", "link2", (0.0, 1.0, 0.0)),
    ("joint3", "prismatic", "link2", "link3", (1.0, 0.0, 0.0)),
    ("joint4", "spherical", "link3", "link4", None),
    ("joint5", "revolute", "link4", "link5", (0.0, 1.0, 0.0)),
    ("joint6", "revolute", "link2", "link6", (0.0, 0.0, 1.0)),
    ("joint7", "revolute", "link6", "link7", (0.0, 1.0, 0.0)),
    ("joint8", "revolute", "link7", "link8", (1.0, 0.0, 0.0)),
)
H8_INITIAL: dict[str, float | tuple[float, float, float]] = {
    "joint1": 1.3,
    "joint2": 0.4,
    "joint3": 0.0,
    "joint4": (0.0, 0.0, 0.0),
    "joint5": 0.0,
    "joint6": 1.0,
    "joint7": 0.0,
    "joint8": 1.0,
}
H8_TARGETS: dict[str, float | tuple[float, float, float]] = {
    "joint1": 0.4,
    "joint2": 0.6,
    "joint3": -0.02,
    "joint4": (0.5, 0.5, 0.5),
    "joint5": 0.3,
    "joint6": 0.5,
    "joint7": 0.7,
    "joint8": 0.4,
}
"""H8's initial joint values and the PD targets (rad; joint3 in m),
docs/explanation/benchmark-models.md."""


def huang_eight_link(
    elements: int = 2, alpha: float = 0.00025, t_end: float = 5.0, geometric: str = "consistent"
) -> Model:
    """H8 of docs/explanation/benchmark-models.md (Huang, tables 3.3 and 3.4): an eight-link
    tree under PD control. Links 1 and 2 are beams of the Huang tube, 1.0 m along +x of
    their frames, `elements` elements each, clamped at their joints, structural damping
    alpha K_ff, geometric stiffness `geometric`; link 1 carries link 2 at its tip. Links 3
    to 8 are rigid steel links of 0.1 m along +x (0.06125 kg, centre of mass at 0.05 m,
    inertia about it diag(7.6563e-7, 2.0455e-4, 2.0455e-4)). Joint 1 turns link 1 about
    global z; joint 2 (about y) sits at the tip of link 1; link 2's tip carries branch A,
    joint 3 (prismatic along link 2) - link 3 - joint 4 (spherical: x, y, z) - link 4 -
    joint 5 (y) - link 5, and branch B, joint 6 (z) - link 6 - joint 7 (y) - link 7 - joint
    8 (x) - link 8; every child joint at the tip of its parent link. Gravity -z.

    Every joint coordinate has a motor (rotor inertia 2.0 kg m^2, resistance
    0.5 N m s/rad, gear ratio 1) under a PD law (kp = 100, kd = 30; N/m and N s/m for
    joint 3) whose set-point is the target from t = 0 (a constant:
    docs/explanation/benchmark-models.md gives one target per joint and no trajectory).
    Initial state H8_INITIAL, at rest, beams undeformed; targets H8_TARGETS. Sensors: every
    joint value, and the elastic
    deflections of the tips of links 1 and 2 in their own frames."""
    model = benchmark_model("huang_eight_link", t_end, step=0.01)
    for k in (1, 2):
        body = f"link{k}"
        tube_beam(model, body, (1.0, 0.0, 0.0), elements, alpha=alpha, geometric=geometric)
        model.add_marker(body, "tip", node=-1)
    for k in range(3, 9):
        body = f"link{k}"
        model.add_rigid_body(
            body,
            mass=H8_SMALL_LINK_MASS,
            com=(H8_SMALL_LINK_LENGTH / 2, 0.0, 0.0),
            inertia=H8_SMALL_LINK_INERTIA,
            inertia_about="com",
        )
        model.add_marker(body, "tip", position=(H8_SMALL_LINK_LENGTH, 0.0, 0.0))
    for name, jtype, parent, child, axis in H8_JOINTS:
        marker = "origin" if parent == "ground" else "tip"
        model.add_joint(
            name,
            jtype,
            parent=parent,
            parent_marker=marker,
            child=child,
            axis=axis,
            initial=H8_INITIAL[name],
        )
    for name, _, _, _, _ in H8_JOINTS:
        targets = np.atleast_1d(H8_TARGETS[name])
        for c, target in enumerate(targets):
            suffix = "xyz"[c] if len(targets) > 1 else ""
            model.add_actuator(
                f"motor{name[-1]}{suffix}",
                name,
                coordinate=c,
                setpoint=Constant(float(target)),
                **H8_MOTOR,
            )
    for name, jtype, _, _, _ in H8_JOINTS:
        n = len(np.atleast_1d(H8_TARGETS[name]))
        symbol = "d" if jtype == "prismatic" else "theta"
        for c in range(n):
            suffix = "xyz"[c] if n > 1 else ""
            model.add_sensor(
                f"{symbol}{name[-1]}{suffix}", "joint_coordinate", joint=name, coordinate=c
            )
    for k in (1, 2):
        model.add_sensor(
            f"tip{k}_deflection",
            "marker_deflection",
            body=f"link{k}",
            marker="tip",
            frame=f"link{k}",
        )
    return model


SPIN_RATE, SPIN_DURATION = 6.0, 15.0  # rad/s, s (Kane, Ryan and Banerjee 1987)


def spin_up(
    elements: int = 8,
    geometric: str = "consistent",
    t_end: float = 20.0,
    modes: str | int = "all",
    correction_modes: bool = False,
    modal_derivatives: bool | None = None,
) -> Model:
    """SPIN of docs/explanation/benchmark-models.md: a beam (L = 10 m, A = 4e-4 m^2, I = 2e-7
    m^4 in and out of the plane of rotation, E = 7e10 Pa, rho = 3000 kg/m^3) clamped on the
    axis of a hub that turns about global z with the prescribed spin-up angle theta(t) =
    (W/T) (t^2/2 + (T/2 pi)^2 (cos(2 pi t / T) - 1)) for t < T, W (t - T/2) after (W = 6
    rad/s, T = 15 s); no gravity. The beam is the driven body itself: its
    floating frame, clamped at node 0 on the axis, is the hub frame.
    docs/explanation/benchmark-models.md gives no torsion constant (the motion is planar): J
    = 2 I, G = E / 2.6. Sensors: the hub angle and the tip's elastic displacement in the hub
    frame (its y component is the deflection perpendicular to the undeformed axis, in the
    plane of rotation). `modes`, `correction_modes`, `modal_derivatives`: the beam's modal
    reduction (correction modes at the tip marker)."""
    model = benchmark_model("spin_up", t_end, step=0.05, gravity=(0.0, 0.0, 0.0))
    section = general_section(4e-4, 2e-7, 2e-7, 4e-7)
    mat = material(7e10, 3000.0, shear_modulus=7e10 / 2.6)
    straight_beam(
        model,
        "beam",
        (10.0, 0.0, 0.0),
        section,
        mat,
        elements,
        geometric=geometric,
        modes=modes,
        correction_modes=correction_modes,
        modal_derivatives=modal_derivatives,
    )
    model.add_marker("beam", "tip", node=-1)
    revolute(model, "hub", "ground", "beam", (0.0, 0.0, 1.0))
    model.add_driver("spin", "hub", SpinUp(rate=SPIN_RATE, duration=SPIN_DURATION))
    joint_sensors(model, {"angle": "hub"})
    model.add_sensor("tip_deflection", "marker_deflection", body="beam", marker="tip", frame="beam")
    return model
