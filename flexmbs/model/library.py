"""Models of docs/explanation/benchmark-models.md built in Python, for any size (tests,
benchmarks)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..elements import general_section, material, rectangle_section
from .description import NODE_DOFS, BeamBody, Model
from .timefunctions import Constant, ConstantRate, Polynomial, SpinUp

if TYPE_CHECKING:
    from ..elements.sections import Section

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
    model = Model(f"chain_{variant}_{n}", gravity=(0.0, 0.0, -9.81))
    model.set_solver(method="bdf", t_end=t_end, rtol=1e-8, atol=1e-10)
    model.set_output(step=0.01)
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
        model.add_joint(
            f"j{k}",
            "revolute",
            parent=parent,
            child=body,
            parent_marker=marker,
            axis=axis,
            initial=initial,
        )
        model.add_sensor(f"theta{k}", "joint_coordinate", joint=f"j{k}")
        parent, marker = body, "tip"
    model.add_sensor("tip", "marker_position", body=f"link{n}", marker="tip")
    return model


def huang_tube() -> Section:
    """The Huang tube of docs/explanation/benchmark-models.md: A, I_y = I_z, Saint-Venant J of
    the aluminium
    12.7 mm square tube with 1.6 mm walls; half-depth 6.35 mm for surface strains."""
    return general_section(7.104e-5, 1.4891e-9, 1.4891e-9, 2.188e-9, max_y=6.35e-3, max_z=6.35e-3)


HUANG_TUBE_MATERIAL = dict(youngs_modulus=0.69e11, shear_modulus=0.26e11, density=2770.0)


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
    model = Model("huang_two_link", gravity=(0.0, 0.0, -9.81))
    model.set_solver(method="bdf", t_end=t_end, rtol=1e-8, atol=1e-10)
    model.set_output(step=0.01)
    model.add_rigid_body(
        "link1",
        mass=2.067,
        com=(0.0, 0.0, -0.1155),
        inertia=(0.08884, 0.08884, 3.752e-4),
        inertia_about="origin",
    )
    model.add_marker("link1", "joint2", position=(0.0, 0.0, -0.231))
    model.add_beam_body(
        "link2",
        [[0.0, 0.0, 0.0], [1.02, 0.0, 0.0]],
        huang_tube(),
        material(**mat),
        elements=elements,
        reference=(0.0, 1.0, 0.0),
        node_masses={elements: 0.5},
        alpha=alpha,
        initial=initial,
        geometric=geometric,
        modes=modes,
        correction_modes=correction_modes,
        modal_derivatives=modal_derivatives,
    )
    model.add_marker("link2", "tip", node=elements)
    model.add_joint(
        "joint1", "revolute", parent="ground", child="link1", axis=(0.0, 1.0, 0.0), initial=1.5
    )
    model.add_joint(
        "joint2",
        "revolute",
        parent="link1",
        parent_marker="joint2",
        child="link2",
        axis=(0.0, 0.0, 1.0),
        initial=-1.0,
    )
    model.add_sensor("theta1", "joint_coordinate", joint="joint1")
    model.add_sensor("theta2", "joint_coordinate", joint="joint2")
    model.add_sensor("tip", "marker_position", body="link2", marker="tip", frame="link2")
    model.add_sensor(
        "tip_deflection", "marker_deflection", body="link2", marker="tip", frame="link2"
    )
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
    model = Model("huang_three_link", gravity=(0.0, 0.0, -9.81))
    model.set_solver(method="bdf", t_end=t_end, rtol=1e-8, atol=1e-10)
    model.set_output(step=0.01)
    model.add_rigid_body(
        "link1",
        mass=2.067,
        com=(0.0, 0.0, -0.1155),
        inertia=(0.08884, 0.08884, 3.752e-4),
        inertia_about="origin",
    )
    model.add_marker("link1", "joint2", position=(0.0, 0.0, -0.231))
    model.add_rigid_body(
        "link2",
        mass=2.067,
        com=(0.0, 0.0, -0.231),
        inertia=(0.08884, 0.08884, 3.752e-4),
        inertia_about="com",
    )
    model.add_marker("link2", "joint3", position=(0.0, 0.0, -0.462))
    model.add_beam_body(
        "link3",
        [[0.0, 0.0, 0.0], [1.02, 0.0, 0.0]],
        huang_tube(),
        material(**HUANG_TUBE_MATERIAL),
        elements=elements,
        reference=(0.0, 1.0, 0.0),
        node_masses={-1: 0.5},
        alpha=alpha,
        geometric=geometric,
    )
    model.add_marker("link3", "tip", node=-1)
    model.add_joint(
        "joint1", "revolute", parent="ground", child="link1", axis=(0.0, 1.0, 0.0), initial=1.5
    )
    model.add_joint(
        "joint2",
        "prismatic",
        parent="link1",
        parent_marker="joint2",
        child="link2",
        axis=(0.0, 0.0, 1.0),
    )
    model.add_joint(
        "joint3",
        "revolute",
        parent="link2",
        parent_marker="joint3",
        child="link3",
        axis=(0.0, 0.0, 1.0),
        initial=-1.0,
    )
    model.add_sensor("theta1", "joint_coordinate", joint="joint1")
    model.add_sensor("d2", "joint_coordinate", joint="joint2")
    model.add_sensor("theta3", "joint_coordinate", joint="joint3")
    model.add_sensor("tip", "marker_position", body="link3", marker="tip", frame="link3")
    model.add_sensor(
        "tip_deflection", "marker_deflection", body="link3", marker="tip", frame="link3"
    )
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
    model = Model("huang_rig", gravity=(0.0, 0.0, -9.81))
    model.set_solver(method="bdf", t_end=t_end, rtol=1e-8, atol=1e-10)
    model.set_output(step=0.005)  # the rig's 200 Hz
    model.add_rigid_body(
        "link1",
        mass=2.067,
        com=(0.1155, 0.0, 0.0),
        inertia=(3.752e-4, 0.08884, 0.08884),
        inertia_about="origin",
    )
    model.add_marker("link1", "joint2", position=(0.231, 0.0, 0.0))
    mat = material(**HUANG_TUBE_MATERIAL)
    model.add_beam_body(
        "link2",
        [[0.0, 0.0, 0.0], [0.0, 0.0, -1.02]],
        huang_tube(),
        mat,
        elements=elements,
        reference=(0.0, 1.0, 0.0),
        node_masses={-1: 0.604},
        alpha=0.00025,
        geometric=geometric,
    )
    model.add_marker("link2", "tip", node=-1)
    model.add_joint(
        "joint1",
        "revolute",
        parent="ground",
        child="link1",
        axis=(0.0, 0.0, 1.0),
        stiffness=0.1,
        damping=0.098,
    )
    model.add_joint(
        "joint2",
        "revolute",
        parent="link1",
        parent_marker="joint2",
        child="link2",
        axis=(1.0, 0.0, 0.0),
        initial=float(theta2),
        stiffness=0.1,
        damping=0.098,
    )
    model.add_sensor("theta1", "joint_coordinate", joint="joint1")
    model.add_sensor("theta2", "joint_coordinate", joint="joint2")
    model.add_sensor(
        "strain", "beam_strain", body="link2", element=0, at="start", point=(6.35e-3, 0.0)
    )
    model.add_sensor("tip", "marker_position", body="link2", marker="tip", frame="link2")
    model.add_sensor(
        "tip_deflection", "marker_deflection", body="link2", marker="tip", frame="link2"
    )
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
    model = Model("huang_eight_link", gravity=(0.0, 0.0, -9.81))
    model.set_solver(method="bdf", t_end=t_end, rtol=1e-8, atol=1e-10)
    model.set_output(step=0.01)
    mat = material(**HUANG_TUBE_MATERIAL)
    for k in (1, 2):
        body = f"link{k}"
        model.add_beam_body(
            body,
            [[0.0, 0.0, 0.0], [1.0, 0.0, 0.0]],
            huang_tube(),
            mat,
            elements=elements,
            reference=(0.0, 1.0, 0.0),
            alpha=alpha,
            geometric=geometric,
        )
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
    model = Model("spin_up", gravity=(0.0, 0.0, 0.0))
    model.set_solver(method="bdf", t_end=t_end, rtol=1e-8, atol=1e-10)
    model.set_output(step=0.05)
    section = general_section(4e-4, 2e-7, 2e-7, 4e-7)
    mat = material(7e10, 3000.0, shear_modulus=7e10 / 2.6)
    model.add_beam_body(
        "beam",
        [[0.0, 0.0, 0.0], [10.0, 0.0, 0.0]],
        section,
        mat,
        elements=elements,
        reference=(0.0, 1.0, 0.0),
        geometric=geometric,
        modes=modes,
        correction_modes=correction_modes,
        modal_derivatives=modal_derivatives,
    )
    model.add_marker("beam", "tip", node=-1)
    model.add_joint("hub", "revolute", parent="ground", child="beam", axis=(0.0, 0.0, 1.0))
    model.add_driver("spin", "hub", SpinUp(rate=SPIN_RATE, duration=SPIN_DURATION))
    model.add_sensor("angle", "joint_coordinate", joint="hub")
    model.add_sensor("tip_deflection", "marker_deflection", body="beam", marker="tip", frame="beam")
    return model


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
    model.add_joint(
        "crank_coupler",
        "revolute",
        parent="crank",
        parent_marker="tip",
        child="coupler",
        axis=(0.0, 1.0, 0.0),
        initial=-rocker,
    )


def _coupler_to_rocker(model: Model) -> None:
    """The four-bar's cut joint from the coupler's end to the rocker's tip, and the spring
    from the coupler's middle to the ground."""
    model.add_joint(
        "coupler_rocker",
        "revolute",
        parent="coupler",
        parent_marker="end",
        child="rocker",
        child_marker="tip",
        axis=(0.0, 1.0, 0.0),
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
    model = Model("four_bar", gravity=(0.0, 0.0, -9.81))
    model.set_solver(method="bdf", t_end=t_end, rtol=1e-8, atol=1e-10)
    model.set_output(step=0.005)
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
    model.add_joint(
        "crank_pivot", "revolute", parent="ground", child="crank", axis=y, initial=rocker
    )
    _coupler_to_crank(model, rocker)
    model.add_joint(
        "rocker_pivot",
        "revolute",
        parent="ground",
        parent_marker="rocker_pivot",
        child="rocker",
        axis=y,
        initial=rocker,
    )
    _coupler_to_rocker(model)
    model.add_sensor("crank", "joint_coordinate", joint="crank_pivot")
    model.add_sensor("rocker", "joint_coordinate", joint="rocker_pivot")
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
    model = Model("bricard", gravity=(0.0, 0.0, -9.81))
    model.set_solver(method="bdf", t_end=t_end, rtol=1e-8, atol=1e-10)
    model.set_output(step=0.01)
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
    model.add_joint(
        "hinge1",
        "revolute",
        parent="ground",
        parent_marker="c0",
        child="link1",
        axis=axes[0],
        child_marker=model.add_marker("link1", "start", orientation=frames[0].T).name,
    )
    for k in range(1, 5):
        parent, child = f"link{k}", f"link{k + 1}"
        relative = frames[k].T @ frames[k - 1]  # C_O: A_child C_O = A_parent at zero
        start = model.add_marker(child, "start", orientation=relative)
        model.add_joint(
            f"hinge{k + 1}",
            "revolute",
            parent=parent,
            parent_marker="end",
            child=child,
            child_marker=start.name,
            axis=frames[k - 1].T @ axes[k],
        )
    model.add_marker("ground", "m20", position=ring[5])
    model.add_marker("link5", "end_axes", position=(BR_LINK, 0.0, 0.0), orientation=frames[4].T)
    model.add_joint(
        "hinge6",
        "revolute",
        parent="ground",
        parent_marker="m20",
        child="link5",
        child_marker="end_axes",
        axis=axes[5],
        cut=True,
    )
    model.add_sensor("angle1", "joint_coordinate", joint="hinge1")
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
    model = Model("slider_crank", gravity=(0.0, 0.0, 0.0))
    model.set_solver(method="bdf", t_end=t_end, rtol=1e-8, atol=1e-10)
    model.set_output(step=0.001)
    crank, rod = 0.15, 0.30
    model.add_rigid_body(
        "crank",
        mass=0.5,
        com=(crank / 2, 0.0, 0.0),
        inertia=(1e-6, 0.5 * crank**2 / 12, 0.5 * crank**2 / 12),
        inertia_about="com",
    )
    model.add_marker("crank", "tip", position=(crank, 0.0, 0.0))
    model.add_beam_body(
        "rod",
        [[0.0, 0.0, 0.0], [rod, 0.0, 0.0]],
        huang_tube(),
        material(**HUANG_TUBE_MATERIAL),
        elements=elements,
        reference=(0.0, 1.0, 0.0),
    )
    model.add_marker("rod", "end", node=-1)
    model.add_marker("rod", "middle", node=elements // 2)
    model.add_rigid_body("slider", mass=0.2, inertia=(1e-5, 1e-5, 1e-5), inertia_about="com")
    y = (0.0, 1.0, 0.0)
    model.add_joint("crank_pivot", "revolute", parent="ground", child="crank", axis=y)
    model.add_driver("motor", "crank_pivot", ConstantRate(value=0.0, rate=30.0))
    model.add_joint(
        "crank_rod", "revolute", parent="crank", parent_marker="tip", child="rod", axis=y
    )
    model.add_joint(
        "guide", "prismatic", parent="ground", child="slider", axis=(1.0, 0.0, 0.0), initial=0.45
    )  # crank + rod
    model.add_joint(
        "rod_slider",
        "revolute",
        parent="rod",
        parent_marker="end",
        child="slider",
        axis=y,
        cut=True,
    )
    model.add_sensor("slider", "joint_coordinate", joint="guide")
    model.add_sensor("deflection", "marker_deflection", body="rod", marker="middle", frame="rod")
    model.add_sensor("crank", "joint_coordinate", joint="crank_pivot")
    return model


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
    field, _ = crank_rod_field(start["q"], elements)
    rates, s0_rate = crank_rod_field(start["q_rate"], elements)
    model = Model("simeon_crank", gravity=(0.0, 0.0, 0.0))
    model.set_solver(method="bdf", t_end=t_end, rtol=1e-6, atol=1e-8)
    model.set_output(step=1e-3)
    model.add_rigid_body(
        "crank",
        mass=0.36,
        com=(CRANK_LENGTH / 2, 0.0, 0.0),
        inertia=(1e-6, 0.002727, 0.002727),
        inertia_about="origin",
    )
    model.add_marker("crank", "tip", position=(CRANK_LENGTH, 0.0, 0.0))
    a = CRANK_SECTION
    model.add_beam_body(
        "rod",
        [[0.0, 0.0, 0.0], [CRANK_ROD, 0.0, 0.0]],
        rectangle_section(a, a),
        material(**CRANK_STEEL),
        elements=elements,
        reference=(0.0, 1.0, 0.0),
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
    model.add_rigid_body(
        "slider", mass=CRANK_SLIDER, inertia=(1e-6, 1e-6, 1e-6), inertia_about="com"
    )
    y = (0.0, 1.0, 0.0)
    model.add_joint("crank_pivot", "revolute", parent="ground", child="crank", axis=y)
    model.add_driver("motor", "crank_pivot", ConstantRate(value=0.0, rate=CRANK_SPEED))
    model.add_joint(
        "crank_rod",
        "revolute",
        parent="crank",
        parent_marker="tip",
        child="rod",
        axis=y,
        initial=start["phi2"],
        initial_rate=start["phi2_rate"] + s0_rate - CRANK_SPEED,
    )
    model.add_joint(
        "guide",
        "prismatic",
        parent="ground",
        child="slider",
        axis=(1.0, 0.0, 0.0),
        initial=start["x3"],
        initial_rate=start["x3_rate"],
    )
    model.add_joint(
        "rod_slider",
        "revolute",
        parent="rod",
        parent_marker="end",
        child="slider",
        axis=y,
        cut=True,
    )
    model.add_sensor("middle", "marker_deflection", body="rod", marker="middle", frame="rod")
    model.add_sensor("end", "marker_deflection", body="rod", marker="end", frame="rod")
    model.add_sensor("slider", "joint_coordinate", joint="guide")
    model.add_sensor("rod_angle", "joint_coordinate", joint="crank_rod")
    return model


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
    model.add_beam_body(
        "coupler",
        [[0.0, 0.0, 0.0], [FB_COUPLER, 0.0, 0.0]],
        huang_tube(),
        material(**HUANG_TUBE_MATERIAL),
        elements=elements,
        reference=(0.0, 1.0, 0.0),
    )
    model.add_marker("coupler", "end", node=-1)
    model.add_marker("coupler", "middle", node=elements // 2)
    _coupler_to_crank(model, rocker)
    _coupler_to_rocker(model)
    model.add_sensor("middle", "marker_position", body="coupler", marker="middle")
    model.add_sensor(
        "bending", "marker_deflection", body="coupler", marker="middle", frame="coupler"
    )
    return model


RD_MASS = 1.0  # kg
RD_RADIUS = 0.1  # m
RD_GRAVITY = 9.81  # m/s^2
RD_SPEED = 1.0  # m/s: the steady variants' forward speed of the centre
RD_LEAN = 0.2  # rad: the circular variant's lean
RD_ACCEL = 0.5  # m/s^2: the plane's acceleration along x (RD-accel)
RD_ACCEL_LEAN = 0.1  # rad
RD_ACCEL_SPIN = 15.0  # rad/s
RD_VARIANTS = {"straight": 10.0, "circular": 10.0, "accel": 5.0}  # variant: t_end (s)
RD_ATOL = 1e-9  # the models' atol (rtol 1e-8): at 1e-10 the steps of the circular run
# collapse to 4e-4 s from t = 1 s on, every step rejected once, the lean rate's error
# test failing (its atol alone at 1e-8 cures it); docs/guides/rolling-contacts.md


def rolling_disk_steady_rates(
    lean: float, speed: float, radius: float = RD_RADIUS, gravity: float = RD_GRAVITY
) -> tuple[float, float]:
    """(heading rate, spin rate) (rad/s) of the thin uniform disk rolling steadily on a
    circle at `lean` (rad, > 0: leaning to its left, towards -y at heading 0) with the
    centre's speed `speed` (m/s, forward); the derivation is in
    tests/test_rolling_disk.py. With w3 = speed / radius, the angular velocity's
    component along the axle, the heading rate O solves

        (radius / 4) sin(lean) cos(lean) O^2 - (3 / 2) cos(lean) speed O
            - gravity sin(lean) = 0,

    the root that vanishes with the lean (the disk turns towards its lean); the spin
    rate (about the axle, relative to the heading-and-lean frame) is w3 - O sin(lean)."""
    s, c = np.sin(lean), np.cos(lean)
    if s == 0.0:
        return 0.0, speed / radius
    a = radius * s * c / 4.0
    b = -1.5 * c * speed
    d = -gravity * s
    heading = 2.0 * d / (-b + np.sqrt(b * b - 4.0 * a * d))  # the small root, stably
    return heading, speed / radius - heading * s


def rolling_disk(variant: str = "accel", t_end: float | None = None) -> Model:
    """RD of docs/explanation/benchmark-models.md (Shui and Zhang 1995, section 5): a thin
    uniform disk (1 kg, radius 0.1 m) rolling without slipping on a horizontal plane, under
    gravity.

    The disk hangs from the ground by a 6-coordinate general joint: translations x, y,
    z of its centre, then the heading (about the global z), the lean (about the turned
    x, the rolling direction) and the spin (about the turned y, the axle). Shui and Zhang's
    q = [x, y, z, theta, psi, phi] are these with theta = pi/2 - lean (its theta is
    the angle between the axle and the vertical), psi = heading, phi = spin.
    The contact "wheel" (type rolling_disk) joins the disk's centre (axle y) to the
    plane (normal z).

    variant "straight" (RD-steady a): upright, rolling along x at 1 m/s, plane at rest;
    "circular" (RD-steady b): lean 0.2 rad, 1 m/s, the heading and spin rates of steady
    circular rolling (rolling_disk_steady_rates); "accel" (RD-accel): the plane is a
    body "table" sliding along x (prismatic joint "slide", driven x = a t^2 / 2,
    a = 0.5 m/s^2, from rest), the disk at lean 0.1 rad spinning at 15 rad/s about its
    axle, rolling on it (the centre's initial velocity 1.5 m/s along x).
    t_end None: 10 s (steady) or 5 s (accel)."""
    if variant not in RD_VARIANTS:
        raise ValueError(
            f"unknown rolling-disk variant {variant!r}; expected one of {', '.join(RD_VARIANTS)}"
        )
    t_end = RD_VARIANTS[variant] if t_end is None else t_end
    name = "rolling_disk" if variant == "accel" else f"rolling_disk_{variant}"
    model = Model(name, gravity=(0.0, 0.0, -RD_GRAVITY))
    model.set_solver(method="bdf", t_end=t_end, rtol=1e-8, atol=RD_ATOL)
    model.set_output(step=0.01)
    diametral = RD_MASS * RD_RADIUS**2 / 4.0
    model.add_rigid_body(
        "disk", mass=RD_MASS, inertia=[diametral, 2.0 * diametral, diametral], inertia_about="com"
    )
    plane = "ground"
    if variant == "accel":
        plane = "table"
        model.add_rigid_body("table", mass=10.0, inertia=[1.0, 1.0, 1.0], inertia_about="com")
        model.add_joint("slide", "prismatic", parent="ground", child="table", axis=(1.0, 0.0, 0.0))
        model.add_driver(
            "slide_motion", "slide", Polynomial(coefficients=(0.0, 0.0, RD_ACCEL / 2.0))
        )
        lean, heading_rate, spin = RD_ACCEL_LEAN, 0.0, RD_ACCEL_SPIN
        speed = RD_RADIUS * spin
    elif variant == "straight":
        lean, heading_rate, spin = 0.0, 0.0, RD_SPEED / RD_RADIUS
        speed = RD_SPEED
    else:
        lean, speed = RD_LEAN, RD_SPEED
        heading_rate, spin = rolling_disk_steady_rates(lean, speed)
    model.add_joint(
        "disk_joint",
        "general",
        parent="ground",
        child="disk",
        translation_axes=np.eye(3).tolist(),
        rotation_axes=[[0.0, 0.0, 1.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]],
        initial=[0.0, 0.0, RD_RADIUS * np.cos(lean), 0.0, lean, 0.0],
        initial_rate=[speed, 0.0, 0.0, heading_rate, 0.0, spin],
    )
    model.add_contact(
        "wheel",
        "rolling_disk",
        disk="disk",
        plane=plane,
        radius=RD_RADIUS,
        axis=(0.0, 1.0, 0.0),
        normal=(0.0, 0.0, 1.0),
    )
    model.add_sensor("lean", "joint_coordinate", joint="disk_joint", coordinate=4)
    model.add_sensor("heading_rate", "joint_rate", joint="disk_joint", coordinate=3)
    model.add_sensor("spin_rate", "joint_rate", joint="disk_joint", coordinate=5)
    model.add_sensor("contact", "contact_reaction", contact="wheel")
    return model
