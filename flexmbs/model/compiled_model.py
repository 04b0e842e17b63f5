"""CompiledModel: a model compiled for the kernels, the flat arrays they read
(flexmbs.model.arrays.ModelArrays) with the names, the initial state and the
Workspace factory the Python side needs (Pinocchio's Model/Data split).
flexmbs.model.compiled.compile_model makes one from a Model.

Sizes and the state vector's layout: flexmbs.model.arrays.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

from ..runtime.tuple_ref import HeldTuple, held_ref
from .arrays import ModelArrays, Workspace
from .items import BeamBody
from .ports import Port

if TYPE_CHECKING:
    from .description import Model
    from .fe_body import FeBody
    from .topology import Topology

__all__ = ["CompiledModel", "model_warnings"]


SCRATCH_VECTORS = (
    "tf3",
    "marker_pos",
    "marker_vel",
    "marker_omega",
    "marker_arm",
    "marker_deflection",
    "marker_deflection_rate",
    "marker_angles",
    "marker_angle_rates",
    "marker_relative_omega",
    "load_vector",
    "spring_first_position",
    "spring_first_velocity",
    "spring_direction",
    "spring_force",
    "omega_body",
    "aw_body",
    "udot_ar",
    "udot_aw",
    "udot_aw_body",
    "parent_offset",
    "mass_unit_vr",
    "mass_unit_vw",
    "mass_turn",
    "kin_frame_omega",
    "kin_axis",
    "kin_axis_rate",
    "kin_step",
    "kin_step_velocity",
    "kin_pending",
    "kin_pending_rate",
    "con_g",
    "con_h",
    "con_d",
    "con_gx",
    "contact_rd_e",
    "contact_rp_e",
    "reaction_point",
    "tree_reaction_force",
    "tree_reaction_torque",
    "cut_force",
    "cut_torque",
    "contact_force",
    "contact_point",
    "sensor_frame_origin",
    "sensor_value",
    "centerline_point",
    "cut_axis",
    "cut_normal",
    "cut_normal_parent",
    "cut_normal_child",
)
"""The Workspace's 3-vectors of the kernels' scratch (named for what they hold)."""
SCRATCH_MATRICES = (
    "marker_axes",
    "marker_tangent",
    "marker_body_axes",
    "marker_rx",
    "marker_ry",
    "marker_rz",
    "marker_product",
    "composite_io_at",
    "kin_frame_axes",
    "kin_rotation",
    "kin_product",
    "sensor_frame_axes",
)
"""The Workspace's 3 x 3 matrices of the kernels' scratch."""


class CompiledModel:
    """A model compiled for the kernels: `arrays` (ModelArrays) plus the names and
    initial state the Python side needs.

    `arrays` and each `new_workspace()` are HeldTuples (flexmbs.runtime.tuple_ref): in Python
    they read as the namedtuples they hold; a kernel receives each as one pointer,
    typed TupleRef. Every kernel is thus compiled once, for references, whoever calls
    it: a kernel whose arguments were the tuples themselves would convert their ~150
    arrays at each call from Python, and numba would build that conversion into
    its Python entry when compiling it (about 5 s a kernel)."""

    def __init__(
        self,
        model: Model,
        topology: Topology,
        arrays: ModelArrays | HeldTuple,
        coordinate_names: list[str],
        joint_coordinate_names: list[str],
        sensor_names: list[str],
        sensor_sizes: list[int],
        q0: NDArray[np.float64],
        u0: NDArray[np.float64],
        beams: Iterable[tuple[int, BeamBody | FeBody]] = (),
        absolute_joints: Mapping[str, str] | None = None,
    ) -> None:
        self.model = model
        # {joint name: body name} of the joints that place each body in the absolute
        # form (flexmbs.model.absolute), {} in joint coordinates
        self.absolute_joints = dict(absolute_joints or {})
        self.topology = topology
        self.arrays = arrays if isinstance(arrays, HeldTuple) else held_ref(arrays)
        self.coordinate_names = coordinate_names
        self.joint_coordinate_names = joint_coordinate_names
        self.sensor_names = sensor_names
        self.sensor_sizes = sensor_sizes
        self.q0 = q0
        self.u0 = u0
        self.beams = tuple(beams)  # (body index, BeamBody) of each flexible body
        self.warnings = model_warnings(self.beams)
        self.constraint_texts: list[str] = []  # what each constraint row of the cut joints holds
        self.ports: dict[str, Port] = {}  # the input ports (flexmbs.model.ports)
        # the currents of the DC motors with an inductance in a new workspace (A): zero,
        # or the operating point of a linearization (flexmbs.analysis.linearize)
        self.operating_currents = np.zeros(len(self.arrays.act_coord))
        self._scratch: dict[int, HeldTuple | Workspace] = {}  # by thread

    @property
    def nbodies(self) -> int:
        return len(self.arrays.body_mass)

    @property
    def ncoords(self) -> int:
        return len(self.arrays.coord_qindex)

    @property
    def ncolumns(self) -> int:
        return len(self.arrays.col_qindex)

    @property
    def nq(self) -> int:
        return len(self.q0)

    @property
    def nactuators(self) -> int:
        return len(self.arrays.act_coord)

    @property
    def ncontacts(self) -> int:
        return len(self.arrays.contact_radius)

    @property
    def has_constraints(self) -> bool:
        """The model has cut joints or rolling contacts: a DAE (docs/explanation/formulation.md
        section 5)."""
        return len(self.arrays.con_kind) > 0

    @property
    def nconstraints(self) -> int:
        """Number of active constraint equations (multipliers lambda, and mu)."""
        return int(np.sum(self.arrays.con_active >= 0))

    @property
    def nworks(self) -> int:
        """Length of w: W_nc, the work of each actuator, the DC motors' electrical
        states (flexmbs.model.arrays)."""
        return 1 + self.nactuators + len(self.arrays.elec_actuator)

    @property
    def nstate(self) -> int:
        """Length of y = [q, u, w, lambda, mu] (w: nworks; lambda, mu: the
        multipliers of the active constraints, docs/explanation/formulation.md
        section 5)."""
        return 2 * self.nq + self.nworks + 2 * self.nconstraints

    @property
    def nsensor_values(self) -> int:
        return int(self.arrays.sensor_offset[-1])

    def initial_state(self) -> NDArray[np.float64]:
        return np.concatenate([self.q0, self.u0, np.zeros(self.nworks + 2 * self.nconstraints)])

    def scratch_workspace(self) -> HeldTuple | Workspace:
        """One workspace per thread kept with the model for the calls from Python that
        copy what they return out of it (flexmbs.dynamics.api.constraint_values):
        making one costs about 2 ms, and a closed loop asks for the constraint values
        at every check of its active rows. The kernels release the GIL, so each thread
        has its own."""
        thread = threading.get_ident()
        if thread not in self._scratch:
            self._scratch[thread] = self.new_workspace()
        return self._scratch[thread]

    def __getstate__(self) -> dict[str, object]:
        """A copy or a pickle leaves the scratch workspaces behind (made again on use)."""
        state = dict(self.__dict__)
        state["_scratch"] = {}
        return state

    def new_workspace(self) -> HeldTuple | Workspace:
        """The work arrays of the kernels for this model (Workspace), held by reference
        (HeldTuple), zeroed."""
        return held_ref(
            Workspace(
                **self._tree_work(),
                **self._flexible_work(),
                **self._constraint_work(),
                **self._rig_work(),
                **{name: np.zeros(3) for name in SCRATCH_VECTORS},
                **{name: np.zeros((3, 3)) for name in SCRATCH_MATRICES},
            )
        )

    def _tree_work(self) -> dict[str, NDArray[np.float64]]:
        """The recursive kinematics and dynamics of the tree: bodies' positions, velocities,
        accelerations and Jacobians, the mass matrix, the forces, the state and the
        step's scratch."""
        n, nc, ncol, nq = self.nbodies, self.ncoords, self.ncolumns, self.nq
        nt = len(self.arrays.motion_term_col)
        z = np.zeros
        return dict(
            r=z((n, 3)),
            rot=z((n, 3, 3)),
            rd=z((n, 3)),
            omega=z((n, 3)),
            ar=z((n, 3)),
            aw=z((n, 3)),
            jr=z((n, 3, ncol)),
            jw=z((n, 3, ncol)),
            x=z(ncol),
            xd=z(ncol),
            xdd=z(ncol),
            tau=z(nc),
            mass=z((nq, nq)),
            force=z(nq),
            accel=z(nq),
            body_force=z((n, 6)),
            bcol=z((6, ncol)),
            mbcol=z((6, ncol)),
            djr=z((n, 3, ncol)),
            djw=z((n, 3, ncol)),
            q=z(nq),
            u=z(nq),
            term_jr=z((nt, 3)),
            term_jw=z((nt, 3)),
            body_acc=z((n, 6)),
            body_wrench=z((n, 6)),
            kin_key=z(2),
            ode=z((2, 2 * nq + self.nworks)),
            segment_time=np.full(1, np.nan),
            law_out=z(6),
        )

    def _flexible_work(self) -> dict[str, NDArray[np.float64]]:
        """The flexible bodies' mass blocks, forces and geometric stiffness."""
        n, nq = self.nbodies, self.nq
        nfm = int(self.arrays.flex_nf.max()) if len(self.arrays.flex_nf) else 0
        nflex = len(self.arrays.flex_nf)
        fcm = int(np.diff(self.arrays.frame_ptr).max()) if n else 0
        ncm = int(np.diff(self.arrays.geo_col_ptr).max()) if len(self.arrays.geo_ea) else 0
        z = np.zeros
        return dict(
            flex_mb=z((fcm, 6 + nfm)),
            flex_force=z(nq),
            flex_mass_flat=z((6 + nfm) ** 2),
            flex_vec=z(6 + nfm),
            flex_vec2=z(6 + nfm),
            flex_acc=z(6 + nfm),
            flex_moments=z((nq + 3 * nflex, 3, 3)),
            geo_scratch=z((16, 12)),
            geo_kr=z((12, ncm)),
        )

    def _constraint_work(self) -> dict[str, NDArray[np.float64]]:
        """The cut joints' and rolling contacts' constraints and their projection."""
        nc, ncol, nq = self.ncoords, self.ncolumns, self.nq
        ncr = len(self.arrays.con_kind)
        z = np.zeros
        return dict(
            con_phi=z(ncr),
            con_phid=z(ncr),
            con_jac=z((ncr, nq)),
            con_jacx=z((ncr, nc)),
            con_jv=z((2, 3, ncol)),
            con_jw=z((2, 3, ncol)),
            con_vec=z((2, 4, 3)),
            con_mat=z((2, 2, 3, 3)),
            contact_vec=z((8, 3)),
            proj_q=z(nq),
            proj_eta=z(ncr),
            proj_c=z((ncr, nq)),
            proj_lam=z(ncr),
            proj_a=z(nq),
        )

    def _rig_work(self) -> dict[str, NDArray[np.float64]]:
        """The motors, stops, friction and controllers: their torques and the branches
        (NaN: not chosen yet) the events switch."""
        nq, nact = self.nq, self.nactuators
        nfric = len(self.arrays.fric_coord)
        z = np.zeros
        return dict(
            act_tau=z(nact),
            act_branch=np.full(nact, np.nan),
            motor_branch=np.full((nact, 2), np.nan),
            stop_branch=np.full(len(self.arrays.stop_coord), np.nan),
            motor_current=self.operating_currents.copy(),
            fric_mode=np.full(nfric, np.nan),
            fric_scale=np.ones(nfric),
            fric_force=z(nfric),
            fric_hold=z(nfric),
            stick_scratch=z((2, 2 * nq + self.nworks)),
            ctrl_held=z(len(self.arrays.ctrl_act)),
            act_command=z(nact),
        )


def model_warnings(beams: Iterable[tuple[int, BeamBody | FeBody]]) -> list[str]:
    """Texts for the user about choices that compile but may not mean what they say: a
    reduced beam with the consistent geometric stiffness whose basis answers the loads a beam sees
    (flexmbs.elements.basis_check: a uniform load, forces at its marker nodes, a spin)
    with a static deflection further than BASIS_TOLERANCE from the nodal beam's, at a
    deflection of half the small-deformation range. The usual cause is a basis without
    axial freedom: the foreshortening of the bent beam then stiffens its bending
    (docs/explanation/formulation.md sections 6 and 8); modal derivatives restore it."""
    from ..elements.basis_check import (
        BASIS_TOLERANCE,
        RESPONSE_FRACTION,
        basis_static_differences,
    )

    out = []
    for _, body in beams:
        if not isinstance(body, BeamBody) or not body.reduced or body.geometric != "consistent":
            continue
        b = body
        cases = basis_static_differences(b)
        if not cases:
            continue
        worst = max(cases, key=lambda c: c.difference)
        if worst.difference <= BASIS_TOLERANCE:
            continue
        assert b.basis is not None
        kinds = b.basis.kinds
        held = f"{kinds.count('mode')} modes"
        for kind, word in (("correction", "correction modes"), ("derivative", "derivatives")):
            if kind in kinds:
                held += f", {kinds.count(kind)} {word}"
        remedy = (
            "add more modes or correction modes (correction_modes = true)"
            if b.with_modal_derivatives
            else "add the modal derivatives (modal_derivatives = true)"
        )
        out.append(
            f'body "{b.name}": its reduced basis ({held}) answers a {worst.name} with a '
            f"static deflection {worst.difference:.1%} away from the nodal beam's, with "
            f'the geometric stiffness "{b.geometric}" and a deflection of '
            f"{RESPONSE_FRACTION:.0%} of the beam's length (tolerance "
            f'{BASIS_TOLERANCE:.0%}); {remedy}, or set geometric = "none"'
        )
    return out
