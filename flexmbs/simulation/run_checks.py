"""Whether a run's settings can run its model (`check_solver_fits`, the discrete
state's solvers) and whether its start is finite: each a ModelError naming the
setting or the coordinate."""

import numpy as np

from ..errors import ModelError
from ..solvers.scipy_ivp import SCIPY_METHODS

__all__ = ["check_discrete_state", "check_finite_start", "check_solver_fits"]


def check_solver_fits(model, cm, s, report):
    """ModelError unless the solver settings `s` can run the compiled model: a
    quasi-static start only for trees, closed loops only with the DAE solvers, the
    projection and the absolute coordinates only with `bdf`, `galpha` only with some
    free coordinate, the Order-N formulation only for trees."""
    quasi = [
        b.name for _, b in cm.beams if isinstance(b.initial, str) and b.initial == "quasi-static"
    ]
    if report is not None and quasi:
        raise ModelError(
            "a quasi-static start is for trees: with closed loops or rolling "
            "contacts the constraints hold part of the elastic accelerations, "
            "which the elastic coordinates alone cannot zero; use initial = "
            '"static" or "undeformed"',
            f'body "{quasi[0]}"',
            "initial",
        )
    if report is not None and s.method in SCIPY_METHODS:
        what = ", ".join(
            [f"cut joints {', '.join(cm.topology.cut_joint_names)}"]
            * bool(cm.topology.cut_joint_names)
            + [f"rolling contacts {', '.join(model.contacts)}"] * bool(cm.ncontacts)
            + [f"couplers {', '.join(model.couplers)}"] * bool(getattr(model, "couplers", {}))
        )
        raise ModelError(
            f"a model with closed loops, rolling contacts or couplers ({what}) is "
            f'a DAE: expected the solver "bdf" or "ida", got "{s.method}"',
            "solver",
            "method",
        )
    if report is not None and s.constraints == "projection" and s.method != "bdf":
        raise ModelError(
            f'the projection formulation runs with the solver "bdf" '
            f'(its drift correction restarts it), got "{s.method}"',
            "solver",
            "method",
        )
    if cm.nq == 0 and s.method == "galpha":
        raise ModelError(
            "every joint coordinate of the model is driven: it has no "
            'position whose error galpha could control; use "bdf"',
            "solver",
            "method",
        )
    if s.formulation == "absolute" and s.method != "bdf":
        raise ModelError(
            f'the absolute-coordinate formulation runs with the solver "bdf" '
            f'(moving its references restarts it), got "{s.method}"',
            "solver",
            "method",
        )
    if report is not None and s.formulation == "order-n":
        raise ModelError(
            "the Order-N formulation is for trees without constraints; "
            "this model has closed loops, rolling contacts or couplers",
            "solver",
            "formulation",
        )


def check_discrete_state(model, settings, constrained):
    """ModelError unless the run's settings can hold the model's stick-slip friction
    and sampled controllers: they are discrete state, which the integrators "bdf"
    and "galpha" keep between their segments; a stuck joint's row is the joint
    formulation's, on a tree, in the dense iteration matrix."""
    sticky = [f.name for f in getattr(model, "frictions", {}).values() if f.law == "stick-slip"]
    sampled = [c.name for c in getattr(model, "controllers", {}).values() if c.sampled]
    if not sticky and not sampled:
        return
    what = f'friction "{sticky[0]}"' if sticky else f'controller "{sampled[0]}"'
    kind = "stick-slip friction" if sticky else "a sampled controller"
    if settings.method not in ("bdf", "galpha"):
        raise ModelError(
            f'{what}: {kind} is discrete state that the solvers "bdf" and "galpha" '
            f'hold between their segments; got "{settings.method}"',
            "solver",
            "method",
        )
    if sticky and settings.linear_solver == "banded":
        raise ModelError(
            f'friction "{sticky[0]}": a stuck joint\'s row replaces its row of the dense '
            'mass matrix; use linear_solver = "dense" or "auto" with stick-slip friction',
            "solver",
            "linear_solver",
        )
    if sticky and (settings.formulation != "joint" or constrained):
        raise ModelError(
            f'friction "{sticky[0]}": stick-slip friction holds a stuck joint by its row '
            'of the joint formulation of a tree; use law = "regularized" for this model',
            f'friction "{sticky[0]}"',
            "law",
        )


def check_finite_start(cm, y0, source):
    """ModelError naming the first coordinate (or the multipliers) whose initial value
    or rate is not finite: a value of the model, or of a driver at t = 0, overflows."""
    bad = np.flatnonzero(~np.isfinite(y0))
    if not bad.size:
        return
    k, nq = int(bad[0]), cm.nq
    if k < 2 * nq:
        item = f'coordinate "{cm.coordinate_names[k % nq]}"'
        fld = "initial" if k < nq else "initial_rate"
    else:
        item, fld = "the initial state", None
        if k >= 2 * nq + cm.nworks:
            item = "the constraint forces of the initial state"
    raise ModelError(
        f"is {y0[k]} at t = 0: a value of the model, or a driver's value or rate at t = 0, "
        "overflows the floating-point range (numbers near 1e308?)",
        item,
        fld,
        source,
    )
