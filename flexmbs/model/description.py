"""The model description: the Model builder, whose add_* methods check each item as it
is added (flexmbs.model.field_checks) and keep it (flexmbs.model.items), in the vocabulary of
flexmbs.model.vocabulary, which this module also exports. Nothing here knows about
numba. The methods are grouped by the items they add: bodies and markers
(flexmbs.model.builder_bodies), joints and loads (builder_joints), the rig's motors and
controllers (builder_rig), sensors (builder_sensors), on the tables and checks they
share (builder_base).

The TOML reader (`flexmbs.formats.toml_reader`) and the Python builder API share this
vocabulary: a model file is a list of calls to the `Model.add_*` methods.

Units are SI (m, kg, s, rad, N, N m). Vectors of a marker or a joint are given in the
frame of the body (or marker) that owns them.
"""

from __future__ import annotations

from ..errors import ModelError
from ..rotations import rotation_from_euler_xyz
from .builder_bodies import BodyItems
from .builder_joints import JointItems
from .builder_rig import RigItems
from .builder_sensors import SensorItems
from .fe_body import FeBody
from .items import (
    Actuator,
    BeamBody,
    Contact,
    Driver,
    Force,
    Joint,
    Marker,
    OutputSettings,
    RigidBody,
    Sensor,
    SolverSettings,
    Spring,
)
from .vocabulary import (
    ACTUATOR_TYPES,
    BEAM_SECTION_SENSORS,
    CONSTRAINT_FORMULATIONS,
    CONTACT_TYPES,
    FORCE_TYPES,
    FORMULATIONS,
    GROUND,
    JOINT_TYPES,
    NODE_DOFS,
    ORIGIN,
    SENSOR_TYPES,
    SOLVER_METHODS,
)

__all__ = [
    "GROUND",
    "JOINT_TYPES",
    "SENSOR_TYPES",
    "BEAM_SECTION_SENSORS",
    "FORCE_TYPES",
    "SOLVER_METHODS",
    "CONSTRAINT_FORMULATIONS",
    "ACTUATOR_TYPES",
    "NODE_DOFS",
    "Marker",
    "RigidBody",
    "BeamBody",
    "FeBody",
    "Joint",
    "Driver",
    "Actuator",
    "Force",
    "Spring",
    "Sensor",
    "Contact",
    "CONTACT_TYPES",
    "SolverSettings",
    "OutputSettings",
    "Model",
    "rotation_from_euler_xyz",
    "ORIGIN",
    "FORMULATIONS",
]


class Model(BodyItems, JointItems, RigItems, SensorItems):
    """A multibody model under construction (the builder API).

    >>> m = Model("pendulum", gravity=(0, 0, -9.81))
    >>> m.add_rigid_body("rod", mass=1.0, com=(0.25, 0, 0), inertia=(1e-4, 0.0052, 0.0052),
    ...                  inertia_about="com")
    >>> m.add_joint("j1", "revolute", parent="ground", child="rod", axis=(0, 1, 0))

    Every body, and the ground, has a marker named "origin" at its frame.
    """

    # --------------------------------------------------------------- settings
    def set_solver(
        self,
        method: str | None = None,
        t_end: float | None = None,
        rtol: float | None = None,
        atol: float | None = None,
        max_step: float | None = None,
        formulation: str | None = None,
        constraints: str | None = None,
        rho_inf: float | None = None,
        fixed_step: float | None = None,
        methods: dict[str, dict[str, float]] | None = None,
        linear_solver: str | None = None,
    ) -> None:
        """Change the integration settings (see SolverSettings). `rtol` and `atol` are
        the settings of `method` (or of the method already set); `methods` holds other
        methods' own, e.g. methods={"galpha": {"rtol": 1e-5, "atol": 1e-7}}, which a
        run switched to that method uses (a model file's [solver.galpha])."""
        self.solver = self.solver.with_changes(
            method,
            t_end,
            rtol,
            atol,
            max_step,
            formulation,
            constraints,
            rho_inf,
            fixed_step,
            methods,
            linear_solver,
        )

    def set_output(self, step: float | None = None, vtk: bool | None = None) -> None:
        """Change the time between two recorded samples (s), or whether the deformed
        shape is written to a VTKHDF file beside the result file (`vtk`)."""
        self.output = self.output.with_changes(step, vtk)

    # ---------------------------------------------------------------- helpers
    def marker(self, body: str, name: str) -> Marker:
        markers = self._markers_of(body, None)
        if name not in markers:
            raise ModelError(f'unknown marker "{name}"', f'body "{body}"', "markers")
        return markers[name]
