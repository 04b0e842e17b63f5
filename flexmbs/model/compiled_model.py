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
        n, nc, ncol, nq = self.nbodies, self.ncoords, self.ncolumns, self.nq
        ncr = len(self.arrays.con_kind)
        nfm = int(self.arrays.flex_nf.max()) if len(self.arrays.flex_nf) else 0
        nflex = len(self.arrays.flex_nf)
        fcm = int(np.diff(self.arrays.frame_ptr).max()) if n else 0
        ncm = int(np.diff(self.arrays.geo_col_ptr).max()) if len(self.arrays.geo_ea) else 0
        nt = len(self.arrays.motion_term_col)
        z = np.zeros
        return held_ref(
            Workspace(
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
                flex_mb=z((fcm, 6 + nfm)),
                djr=z((n, 3, ncol)),
                djw=z((n, 3, ncol)),
                act_tau=z(self.nactuators),
                q=z(nq),
                u=z(nq),
                flex_force=z(nq),
                flex_mass_flat=z((6 + nfm) ** 2),
                flex_vec=z(6 + nfm),
                flex_vec2=z(6 + nfm),
                flex_acc=z(6 + nfm),
                flex_moments=z((nq + 3 * nflex, 3, 3)),
                geo_scratch=z((16, 12)),
                geo_kr=z((12, ncm)),
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
                term_jr=z((nt, 3)),
                term_jw=z((nt, 3)),
                body_acc=z((n, 6)),
                body_wrench=z((n, 6)),
                kin_key=z(2),
                ode=z((2, 2 * nq + self.nworks)),
                tf3=z(3),
                segment_time=np.full(1, np.nan),
                act_branch=np.full(self.nactuators, np.nan),
                motor_branch=np.full((self.nactuators, 2), np.nan),
                stop_branch=np.full(len(self.arrays.stop_coord), np.nan),
                motor_current=self.operating_currents.copy(),
                fric_mode=np.full(len(self.arrays.fric_coord), np.nan),
                fric_scale=np.ones(len(self.arrays.fric_coord)),
                fric_force=z(len(self.arrays.fric_coord)),
                fric_hold=z(len(self.arrays.fric_coord)),
                stick_scratch=z((2, 2 * nq + self.nworks)),
                ctrl_held=z(len(self.arrays.ctrl_act)),
                act_command=z(self.nactuators),
                marker_pos=z(3),
                marker_axes=z((3, 3)),
                marker_vel=z(3),
                marker_omega=z(3),
                marker_arm=z(3),
                marker_tangent=z((3, 3)),
                marker_deflection=z(3),
                marker_deflection_rate=z(3),
                marker_angles=z(3),
                marker_angle_rates=z(3),
                marker_relative_omega=z(3),
                marker_body_axes=z((3, 3)),
                marker_rx=z((3, 3)),
                marker_ry=z((3, 3)),
                marker_rz=z((3, 3)),
                marker_product=z((3, 3)),
                load_vector=z(3),
                spring_first_position=z(3),
                spring_first_velocity=z(3),
                spring_direction=z(3),
                spring_force=z(3),
                law_out=z(6),
                omega_body=z(3),
                aw_body=z(3),
                udot_ar=z(3),
                udot_aw=z(3),
                udot_aw_body=z(3),
                parent_offset=z(3),
                mass_unit_vr=z(3),
                mass_unit_vw=z(3),
                mass_turn=z(3),
                composite_io_at=z((3, 3)),
                kin_frame_axes=z((3, 3)),
                kin_frame_omega=z(3),
                kin_rotation=z((3, 3)),
                kin_product=z((3, 3)),
                kin_axis=z(3),
                kin_axis_rate=z(3),
                kin_step=z(3),
                kin_step_velocity=z(3),
                kin_pending=z(3),
                kin_pending_rate=z(3),
                con_g=z(3),
                con_h=z(3),
                con_d=z(3),
                con_gx=z(3),
                contact_rd_e=z(3),
                contact_rp_e=z(3),
                reaction_point=z(3),
                tree_reaction_force=z(3),
                tree_reaction_torque=z(3),
                cut_force=z(3),
                cut_torque=z(3),
                contact_force=z(3),
                contact_point=z(3),
                sensor_frame_axes=z((3, 3)),
                sensor_frame_origin=z(3),
                sensor_value=z(3),
                centerline_point=z(3),
                cut_axis=z(3),
                cut_normal=z(3),
                cut_normal_parent=z(3),
                cut_normal_child=z(3),
            )
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
