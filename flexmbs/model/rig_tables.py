"""The tables of a model's joint friction and controllers (flexmbs.model.friction,
flexmbs.model.controllers) for the kernels: ModelArrays' fric_* and ctrl_* fields."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import ModelError
from .friction import FRICTION_LAWS

if TYPE_CHECKING:
    from .timefunctions import TimeFunction

__all__ = ["rig_tables"]


def rig_tables(
    model: Any,
    coord_of: Mapping[tuple[str, int], int],
    qindex: Sequence[int],
    act_index: Mapping[str, int],
    functions: list[TimeFunction],
) -> dict[str, np.ndarray]:
    """fric_* and ctrl_* (ModelArrays); the set-points of the continuous controllers
    are appended to `functions` (the model's time functions)."""
    frictions = list(getattr(model, "frictions", {}).values())
    controllers = list(getattr(model, "controllers", {}).values())
    f64, i64 = np.float64, np.int64
    data = [
        [f.coulomb, f.static, f.stribeck_velocity, f.viscous, f.regularization] for f in frictions
    ]
    in_ptr, in_q, in_rate, in_gain, in_setpoint = [0], [], [], [], []
    for c in controllers:
        if not c.sampled:
            for inp in c.inputs:
                assert inp.joint is not None  # a continuous controller reads joints
                k = qindex[coord_of[(inp.joint, inp.coordinate)]]
                if k < 0:
                    raise ModelError(
                        f'coordinate {inp.coordinate} of joint "{inp.joint}" is prescribed',
                        f'controller "{c.name}"',
                        "inputs",
                    )
                in_q.append(k)
                in_rate.append(int(inp.rate))
                in_gain.append([inp.gain, inp.rate_gain])
                if inp.setpoint is None:
                    in_setpoint.append(-1)
                else:
                    in_setpoint.append(len(functions))
                    functions.append(inp.setpoint)
        in_ptr.append(len(in_q))
    return {
        "fric_coord": np.array(
            [coord_of[(f.joint, f.coordinate)] for f in frictions], dtype=i64
        ).reshape(-1),
        "fric_law": np.array([FRICTION_LAWS[f.law] for f in frictions], dtype=i64).reshape(-1),
        "fric_data": np.array(data, dtype=f64).reshape(-1, 5),
        "ctrl_act": np.array([act_index[c.actuator] for c in controllers], dtype=i64).reshape(-1),
        "ctrl_sampled": np.array([int(c.sampled) for c in controllers], dtype=i64).reshape(-1),
        "ctrl_limits": np.array([c.limits for c in controllers], dtype=f64).reshape(-1, 2),
        "ctrl_offset": np.array([c.offset for c in controllers], dtype=f64).reshape(-1),
        "ctrl_in_ptr": np.array(in_ptr, dtype=i64),
        "ctrl_in_q": np.array(in_q, dtype=i64).reshape(-1),
        "ctrl_in_rate": np.array(in_rate, dtype=i64).reshape(-1),
        "ctrl_in_gain": np.array(in_gain, dtype=f64).reshape(-1, 2),
        "ctrl_in_setpoint": np.array(in_setpoint, dtype=i64).reshape(-1),
    }
