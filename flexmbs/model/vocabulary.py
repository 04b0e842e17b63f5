"""The vocabulary of the model description: the names of item types and options, the
reserved names, the name patterns, and the limits the checks apply."""

import re

import numpy as np

GROUND = "ground"
JOINT_TYPES = (
    "revolute",
    "prismatic",
    "cylindrical",
    "universal",
    "spherical",
    "planar",
    "free",
    "fixed",
    "general",
)
SENSOR_TYPES = (
    "joint_coordinate",
    "joint_rate",
    "marker_position",
    "marker_orientation",
    "marker_velocity",
    "marker_angular_velocity",
    "actuator_torque",
    "actuator_work",
    "actuator_current",
    "actuator_voltage",
    "beam_strain",
    "marker_deflection",
    "beam_curvature",
    "beam_section_forces",
    "beam_centerline",
    "joint_reaction",
    "constraint_residual",
    "contact_reaction",
    "coupler_reaction",
    "strain_energy",
    "elastic_coordinates",
)
FLEXIBLE_BODY_SENSORS = ("strain_energy", "elastic_coordinates")
CONTACT_TYPES = ("rolling_disk", "knife_edge")
BEAM_SECTION_SENSORS = ("beam_strain", "beam_curvature", "beam_section_forces")
ACTUATOR_TYPES = ("pd", "torque", "dc_motor")
FORCE_TYPES = ("force", "torque")
SOLVER_METHODS = ("bdf", "galpha", "ida", "scipy-radau", "scipy-bdf", "dop853", "rk45")
# docs/explanation/formulation.md sections 5 and 10; Schwab 2009
FORMULATIONS = ("joint", "order-n", "absolute")
CONSTRAINT_FORMULATIONS = ("ggl", "projection")
# how bdf and galpha store and factor their iteration matrix (flexmbs.solvers.linear_choice)
LINEAR_SOLVERS = ("auto", "dense", "banded")
ORIGIN = "origin"  # every body (and the ground) has this marker: its own frame

AXIS_NORM_MIN = 1e-12  # an axis shorter than this is zero
ORTHONORMAL_TOL = 1e-9  # |C^T C - I| of a marker orientation
INDEPENDENT_AXES_TOL = 1e-6  # smallest singular value / |a x b| of independent axes

NODE_DOFS = ("u", "v", "w", "tx", "ty", "tz")  # nodal coordinates, body axes
NAME_PATTERN = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_\-]*")
"""The names of bodies, joints, markers and the other items: letters, digits, '_' and
'-' (a dot separates the parts of coordinate names and of --set paths)."""
GENERATED_PREFIX = "@"  # flexmbs.model.absolute's PREFIX
SENSOR_NAME_PATTERN = re.compile(r"(?!\.+$)[^\s/]+")
"""Sensor names: anything but spaces and '/' (a sensor may be named after a
coordinate, "joint.rz"), and not dots alone ("." and ".." name HDF5 groups)."""
BEAM_BYTES_PER_ELEMENT = 64 * 1024
"""Bytes of memory that building a beam body takes per element (its invariants,
stiffness, damping and mass kept as one block per element; measured 46 kB an element
from 100 to 1 000 elements): what `_check_beam_memory` weighs against the machine's
memory."""

MAX_BEAM_ELEMENTS = 1000
"""The most beam elements a model has, all its beams together: 6 006 nodal coordinates
whose dense matrices (invariants, stiffness, the iteration matrix) grow as their square;
building them takes 16 s for 400 elements and four times that for twice as many. A
longer beam than this needs is reduced to its modes (`modes`) on a coarser mesh."""
MAX_SUBDIVISIONS = 100
"""The most centre-line points per beam element that a `beam_centerline` sensor and
`flexmbs export --subdivisions` take (the cubic shape functions are drawn smooth by
far fewer)."""
SHAPE_MEMORY_LIMIT = 2**30
"""Bytes at most of the matrices that map a beam's nodal coordinates to its centre-line
points (a `beam_centerline` sensor, an export's shape): points x coordinates."""

BEAM_INITIAL_STATES = ("undeformed", "static", "quasi-static")

RTOL_RANGE = (100 * np.finfo(float).eps, 0.1)
"""The relative tolerances a run accepts: below 100 ulps the error test asks for what
float64 cannot resolve (scipy's integrators raise theirs to it); above 0.1 no digit
of the result is controlled."""
MAX_RUN_STEPS = 1e7
"""The most steps a span of a run may be set to take by a value (galpha's `fixed_step`,
a `max_step`): 10 million steps of a few microseconds each are minutes at the least."""
MAX_CONTROLLER_SAMPLES = 1e6
"""The most samples a sampled controller may take in a span of a run: each is a
breakpoint where the integrator starts again (tens of microseconds)."""
MAX_STEP_SPAN = 1000.0
"""Simulator.step's dt at most this many times the model's t_end (the integrator's
horizon moves on by t_end at a time; a longer span is many steps)."""
