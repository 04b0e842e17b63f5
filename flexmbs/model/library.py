"""Models of ../benchmarks/MODELS.md built in Python, for any size (tests, benchmarks)."""

import numpy as np

from .description import Model

__all__ = ["chain_model"]

CHAIN_LINK_MASS = 1.0  # kg
CHAIN_LINK_LENGTH = 0.5  # m
CHAIN_AXIAL_INERTIA = 1e-4  # kg m^2 about the link axis


def chain_model(n, variant="planar", t_end=10.0):
    """CHAIN-N (MODELS.md): n rigid slender links of 1 kg and 0.5 m, hanging along -z of
    their frames, joined by revolute joints at the tips.

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
    it = m * length ** 2 / 12.0
    model = Model(f"chain_{variant}_{n}", gravity=(0.0, 0.0, -9.81))
    model.set_solver(method="bdf", t_end=t_end, rtol=1e-8, atol=1e-10)
    model.set_output(step=0.01)
    parent, marker = "ground", "origin"
    for k in range(1, n + 1):
        body = f"link{k}"
        model.add_rigid_body(body, mass=m, com=(0.0, 0.0, -length / 2),
                             inertia=(it, it, CHAIN_AXIAL_INERTIA), inertia_about="com")
        model.add_marker(body, "tip", position=(0.0, 0.0, -length))
        axis = (1.0, 0.0, 0.0) if (variant == "spatial" and k % 2 == 0) else (0.0, 1.0, 0.0)
        initial = np.pi / 2 if k == 1 else (0.5 if (variant == "spatial" and k == 2) else 0.0)
        model.add_joint(f"j{k}", "revolute", parent=parent, child=body,
                        parent_marker=marker, axis=axis, initial=initial)
        model.add_sensor(f"theta{k}", "joint_coordinate", joint=f"j{k}")
        parent, marker = body, "tip"
    model.add_sensor("tip", "marker_position", body=f"link{n}", marker="tip")
    return model
