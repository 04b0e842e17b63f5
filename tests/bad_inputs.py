"""The bad-input corpus: model files that are each one edit away from a shipped model
(data/models), with the words the one line of the error must hold besides the file's
name. An entry is (model, path, value, words): the model's name in data/models, the
dotted path (or a tuple of keys) of the field to set, DELETE to remove it, and the words
(the item, the field, and where it matters the bad reference). Every entry must end
`flexmbs run` with exit status 2 before anything is integrated.

CLI_CASES are command lines that must end with the given status and last line."""

from pathlib import Path

DELETE = "<delete>"
NAN = float("nan")
INF = float("inf")
RIGID = {"mass": 1.0, "inertia": [1.0, 1.0, 1.0], "inertia_about": "com"}
BOX = {"type": "box", "size": [0.05, 0.05, 0.5], "position": [0.0, 0.0, -0.25]}
H2, FB, H8, RD, SC, SP, RIG, BR, CH = (
    "huang_two_link",
    "four_bar",
    "huang_eight_link",
    "rolling_disk",
    "slider_crank_flexible",
    "spin_up",
    "huang_rig",
    "bricard",
    "chain_planar_4",
)
FE = "fe_plate"
GP = "gear_pair"
RFL = "flexible_link_rig"

BAD_MODELS = [
    # solver and output
    (CH, "model.name", "", ["model", "name"]),
    (CH, "model.name", "runs/today", ["model", "name"]),
    (CH, "solver.rtol", 10.0, ["solver", "rtol"]),
    (CH, "solver.rtol", 1e-30, ["solver", "rtol"]),
    (CH, "solver.rtol", -1e-6, ["solver", "rtol"]),
    (CH, "solver.rtol", NAN, ["solver", "rtol"]),
    (CH, "solver.atol", -1.0, ["solver", "atol"]),
    (CH, "solver.atol", 0.0, ["solver", "atol"]),
    (CH, "solver.t_end", -1.0, ["solver", "t_end"]),
    (CH, "solver.t_end", 0.0, ["solver", "t_end"]),
    (CH, "solver.t_end", INF, ["solver", "t_end"]),
    (CH, "solver.method", "euler", ["solver", "method"]),
    (CH, "solver.max_step", -1.0, ["solver", "max_step"]),
    (CH, "solver.max_step", 0.0, ["solver", "max_step"]),
    (CH, "solver.formulation", "lagrange", ["solver", "formulation"]),
    (CH, "solver.constraints", "baumgarte", ["solver", "constraints"]),
    (CH, "solver.rho_inf", 1.5, ["solver", "rho_inf"]),
    (CH, "solver.rho_inf", -0.1, ["solver", "rho_inf"]),
    (CH, "solver.fixed_step", -1e-3, ["solver", "fixed_step"]),
    (CH, "solver.linear_solver", "sparse", ["solver", "linear_solver"]),
    (CH, "output.step", 0.0, ["output", "step"]),
    (CH, "output.step", -0.01, ["output", "step"]),
    (CH, "output.step", NAN, ["output", "step"]),
    (CH, "output.vtk", "yes", ["output", "vtk"]),
    (CH, "output.vtk", 1, ["output", "vtk"]),
    (CH, "model.gravity", [0.0, -9.81], ["model", "gravity"]),
    (CH, "model.gravity", [0.0, NAN, 0.0], ["model", "gravity"]),
    # rigid bodies
    (FB, "bodies.crank.mass", -1.0, ['"crank"', "mass"]),
    (FB, "bodies.crank.mass", 0.0, ['"crank"', "mass"]),
    (FB, "bodies.crank.mass", NAN, ['"crank"', "mass"]),
    (FB, "bodies.crank.mass", INF, ['"crank"', "mass"]),
    (FB, "bodies.crank.mass", DELETE, ['"crank"', "mass"]),
    (FB, "bodies.crank.inertia", [1.0, 1.0], ['"crank"', "inertia"]),
    (FB, "bodies.crank.inertia", [-1.0, 1.0, 1.0], ['"crank"', "inertia"]),
    (FB, "bodies.crank.inertia", [1.0, 1.0, 5.0], ['"crank"', "inertia"]),
    (FB, "bodies.crank.inertia", [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]], ['"crank"', "inertia"]),
    (
        FB,
        "bodies.crank.inertia",
        [[1.0, 0.5, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]],
        ['"crank"', "inertia"],
    ),
    (FB, "bodies.crank.inertia", DELETE, ['"crank"', "inertia"]),
    (FB, "bodies.crank.inertia_about", "centre", ['"crank"', "inertia_about"]),
    (FB, "bodies.crank.com", [0.0, 0.0], ['"crank"', "com"]),
    (FB, "bodies.crank.com", [0.0, INF, 0.0], ['"crank"', "com"]),
    (FB, "bodies.crank.type", "soft", ['"crank"', "type"]),
    (FB, "bodies.crank.markers.tip.position", [1.0, 2.0], ['"tip"', "position"]),
    (FB, "bodies.crank.markers.tip.position", [1.0, NAN, 0.0], ['"tip"', "position"]),
    (
        FB,
        "bodies.crank.markers.tip.orientation",
        [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 2.0]],
        ['"tip"', "orientation"],
    ),
    (FB, "bodies.crank.markers.tip.orientation", [1.0, 0.0], ['"tip"', "orientation"]),
    (FB, "bodies.crank.markers.tip.euler_xyz", [0.1, 0.2], ['"tip"', "euler_xyz"]),
    (
        FB,
        "bodies.ground",
        {"mass": 1.0, "inertia": [1.0, 1.0, 1.0], "inertia_about": "com"},
        ['"ground"'],
    ),
    # rigid bodies of a density and shapes
    (FB, "bodies.crank.density", 2700.0, ['"crank"', '"mass"', "density"]),
    (FB, "bodies.crank", {"density": 2700.0}, ['"crank"', '"density"', "shapes"]),
    (FB, "bodies.crank", {"density": 2700.0, "shapes": []}, ['"crank"', '"density"']),
    (FB, "bodies.crank", {"density": 0.0, "shapes": [BOX]}, ['"crank"', '"density"', "> 0"]),
    (FB, "bodies.crank", {"density": -2700.0, "shapes": [BOX]}, ['"crank"', '"density"']),
    (FB, "bodies.crank", {"density": NAN, "shapes": [BOX]}, ['"crank"', '"density"']),
    (FB, "bodies.crank.shapes", [BOX], ['"crank"', '"shapes"', "density"]),
    (FB, "bodies.crank", {"density": 2700.0, "shapes": [{"type": "cone", "radius": 0.1}]},
     ['"crank"', "shapes[0].type", "cone"]),
    (FB, "bodies.crank", {"density": 2700.0, "shapes": [BOX, {"type": "sphere", "radius": -0.1}]},
     ['"crank"', "shapes[1].radius"]),
    (FB, "bodies.crank", {"density": 2700.0, "shapes": [{"type": "cylinder", "radius": 0.1}]},
     ['"crank"', "shapes[0].length"]),
    (FB, "bodies.crank", {"density": 2700.0, "shapes": [{"type": "box", "size": [0.1, 0.2]}]},
     ['"crank"', "shapes[0].size"]),
    (FB, "bodies.crank", {"density": 2700.0, "shapes": [{"type": "box", "size": [0.1, 0.2, 0.0]}]},
     ['"crank"', "shapes[0].size"]),
    (FB, "bodies.crank", {"density": 2700.0, "shapes": [{**BOX, "colour": "red"}]},
     ['"crank"', "shapes[0].colour"]),
    (FB, "bodies.crank", {"density": 2700.0, "shapes": [{"type": "mesh", "file": "none.stl"}]},
     ['"crank"', "shapes[0].file", "none.stl"]),
    (FB, "bodies.crank", {"density": 2700.0, "shapes": [{**BOX, "position": [0.0, 1.0]}]},
     ['"crank"', "shapes[0].position"]),
    # joints
    (FB, "joints.crank_pivot.type", "hinge", ['"crank_pivot"', "type"]),
    (FB, "joints.crank_pivot.parent", "nobody", ['"crank_pivot"', "parent", "nobody"]),
    (FB, "joints.crank_pivot.child", "nobody", ['"crank_pivot"', "child", "nobody"]),
    (FB, "joints.crank_pivot.child", "ground", ['"crank_pivot"', "child"]),
    (FB, "joints.crank_pivot.parent", "crank", ['"crank_pivot"', "two different bodies"]),
    (FB, "joints.crank_pivot.parent", DELETE, ['"crank_pivot"', "parent"]),
    (FB, "joints.crank_pivot.child", DELETE, ['"crank_pivot"', "child"]),
    (FB, "joints.crank_pivot.type", DELETE, ['"crank_pivot"', "type"]),
    (FB, "joints.crank_pivot.axis", [0.0, 0.0, 0.0], ['"crank_pivot"', "axis"]),
    (FB, "joints.crank_pivot.axis", [0.0, 1.0], ['"crank_pivot"', "axis"]),
    (FB, "joints.crank_pivot.axis", [0.0, NAN, 1.0], ['"crank_pivot"', "axis"]),
    (FB, "joints.crank_pivot.initial", [0.1, 0.2], ['"crank_pivot"', "initial"]),
    (FB, "joints.crank_pivot.initial", NAN, ['"crank_pivot"', "initial"]),
    (FB, "joints.crank_pivot.initial_rate", INF, ['"crank_pivot"', "initial_rate"]),
    (
        FB,
        "joints.crank_coupler.parent_marker",
        "nowhere",
        ['"crank_coupler"', "parent_marker", "nowhere"],
    ),
    (
        FB,
        "joints.coupler_rocker.child_marker",
        "nowhere",
        ['"coupler_rocker"', "child_marker", "nowhere"],
    ),
    (FB, "joints.crank_pivot.cut", True, ['"crank"', "not connected to the ground"]),
    (H8, "joints.joint4.type", "universal", ['"joint4"']),
    (
        RD,
        "joints.disk_joint.translation_axes",
        [[1.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]],
        ['"disk_joint"', "translation_axes"],
    ),
    (RD, "joints.disk_joint.rotation_axes", [[0.0, 0.0, 1.0]], ['"disk_joint"', "initial"]),
    (RD, "joints.disk_joint.initial", [0.0, 0.0, 0.1], ['"disk_joint"', "initial"]),
    (RD, "joints.disk_joint.initial_rate", [1.5, 0.0], ['"disk_joint"', "initial_rate"]),
    # beams
    (H2, "bodies.link2.elements", 0, ['"link2"', "elements"]),
    (H2, "bodies.link2.elements", -2, ['"link2"', "elements"]),
    (H2, "bodies.link2.elements", 100000, ['"link2"', "elements"]),
    (H2, "bodies.link2.points", [[0.0, 0.0, 0.0], [0.0, 0.0, 0.0]], ['"link2"', "points"]),
    (H2, "bodies.link2.points", [[0.0, 0.0, 0.0]], ['"link2"', "points"]),
    (H2, "bodies.link2.points", [[0.0, 0.0], [1.0, 0.0]], ['"link2"', "points"]),
    (H2, "bodies.link2.reference", [1.0, 0.0, 0.0], ['"link2"', "reference"]),
    (H2, "bodies.link2.reference", [0.0, 0.0, 0.0], ['"link2"', "reference"]),
    (H2, "bodies.link2.alpha", -0.1, ['"link2"', "alpha"]),
    (H2, "bodies.link2.geometric", "exact", ['"link2"', "geometric"]),
    (H2, "bodies.link2.modes", 0, ['"link2"', "modes"]),
    (H2, "bodies.link2.modes", 500, ['"link2"', "modes"]),
    (H2, "bodies.link2.modes", "some", ['"link2"', "modes"]),
    (H2, "bodies.link2.section.area", -7e-5, ['"link2"', "area"]),
    (H2, "bodies.link2.section.area", 0.0, ['"link2"', "area"]),
    (H2, "bodies.link2.section.i_y", NAN, ['"link2"', "i_y"]),
    (H2, "bodies.link2.section.type", "hexagon", ['"link2"', "type"]),
    (H2, "bodies.link2.section.area", DELETE, ['"link2"', "area"]),
    (H2, "bodies.link2.section", DELETE, ['"link2"', "section"]),
    (H2, "bodies.link2.material", DELETE, ['"link2"', "material"]),
    (H2, "bodies.link2.material.youngs_modulus", -1.0, ['"link2"', "youngs_modulus"]),
    (H2, "bodies.link2.material.youngs_modulus", 0.0, ['"link2"', "youngs_modulus"]),
    (H2, "bodies.link2.material.density", 0.0, ['"link2"', "density"]),
    (H2, "bodies.link2.material.shear_modulus", INF, ['"link2"', "shear_modulus"]),
    (H2, "bodies.link2.fixed", {"5": "all"}, ['"link2"', "fixed"]),
    (H2, "bodies.link2.fixed", {"0": "most"}, ['"link2"', "fixed"]),
    (H2, "bodies.link2.fixed", {"0": [7]}, ['"link2"', "fixed"]),
    (H2, "bodies.link2.node_masses", {"9": 0.5}, ['"link2"', "node_masses"]),
    (H2, "bodies.link2.node_masses", {"1": -0.5}, ['"link2"', "node_masses"]),
    (H2, "bodies.link2.initial", [1.0, 2.0], ['"link2"', "initial"]),
    (H2, "bodies.link2.initial", "relaxed", ['"link2"', "initial"]),
    (H2, "bodies.link2.initial_rates", [1.0, 2.0], ['"link2"', "initial_rates"]),
    (SC, "bodies.rod.modal_damping", "wide", ['"rod"', "modal_damping"]),
    (RIG, "bodies.link2.markers.tip.position", [0.5, 0.3, 0.0], ['"tip"']),
    # springs
    (FB, "springs.spring.stiffness", -10.0, ['"spring"', "stiffness"]),
    (FB, "springs.spring.stiffness", NAN, ['"spring"', "stiffness"]),
    (FB, "springs.spring.damping", -1.0, ['"spring"', "damping"]),
    (FB, "springs.spring.rest_length", -0.1, ['"spring"', "rest_length"]),
    (FB, "springs.spring.body1", "nobody", ['"spring"', "body1", "nobody"]),
    (FB, "springs.spring.marker2", "nowhere", ['"spring"', "marker2", "nowhere"]),
    (FB, "springs.spring.marker1", DELETE, ['"spring"', "marker1"]),
    # sensors
    (FB, "sensors.crank.joint", "nojoint", ['"crank"', "joint", "nojoint"]),
    (FB, "sensors.crank.coordinate", 3, ['"crank"', "coordinate"]),
    (FB, "sensors.crank.coordinate", -1, ['"crank"', "coordinate"]),
    (FB, "sensors.crank.type", "thermometer", ['"crank"', "type"]),
    (FB, "sensors.middle.marker", "nowhere", ['"middle"', "marker", "nowhere"]),
    (FB, "sensors.middle.frame", "nobody", ['"middle"', "frame", "nobody"]),
    (FB, "sensors.crank.joint", DELETE, ['"crank"', "joint"]),
    (RIG, "sensors.strain.element", 5, ['"strain"', "element"]),
    (RIG, "sensors.strain.at", "middle", ['"strain"', "at"]),
    (RIG, "sensors.strain.point", [1.0], ['"strain"', "point"]),
    (RIG, "sensors.strain.body", "link1", ['"strain"', "body"]),
    (RIG, "sensors.tip_deflection.body", "link1", ['"tip_deflection"', "body"]),
    (RD, "sensors.contact.contact", "nowheel", ['"contact"', "contact", "nowheel"]),
    # drivers and actuators
    (SC, "drivers.motor.joint", "nojoint", ['"motor"', "joint", "nojoint"]),
    (SC, "drivers.motor.law", "wobble", ['"motor"', "law"]),
    (SC, "drivers.motor.rate", NAN, ['"motor"', "rate"]),
    (SC, "drivers.motor.coordinate", 4, ['"motor"', "coordinate"]),
    (SP, "drivers.spin.duration", -1.0, ['"spin"', "duration"]),
    (SP, "drivers.spin.duration", 0.0, ['"spin"', "duration"]),
    (RD, "drivers.slide_motion.coefficients", [], ['"slide_motion"', "coefficients"]),
    (H8, "actuators.motor1.joint", "nojoint", ['"motor1"', "joint", "nojoint"]),
    (H8, "actuators.motor1.kp", -100.0, ['"motor1"', "kp"]),
    (H8, "actuators.motor1.kd", NAN, ['"motor1"', "kd"]),
    (H8, "actuators.motor1.gear_ratio", 0.0, ['"motor1"', "gear_ratio"]),
    (H8, "actuators.motor1.rotor_inertia", -2.0, ['"motor1"', "rotor_inertia"]),
    (H8, "actuators.motor1.motor_damping", -0.5, ['"motor1"', "motor_damping"]),
    (H8, "actuators.motor1.coordinate", 2, ['"motor1"', "coordinate"]),
    (H8, "actuators.motor1.setpoint.law", "wobble", ['"motor1"', "law"]),
    (H8, "actuators.motor1.setpoint", DELETE, ['"motor1"', "setpoint"]),
    (H8, "actuators.motor4x.coordinate", 3, ['"motor4x"', "coordinate"]),
    (H8, "actuators.motor1.resistance", 2.6, ['"motor1"', "resistance", "dc_motor"]),
    (H8, "actuators.motor1.type", "dc_motor", ['"motor1"', "voltage"]),
    (H8, "actuators.motor1.type", "stepper", ['"motor1"', "type"]),
    # joint limits
    (CH, "joints.j1.limits", [1.0, -1.0], ['"j1"', "limits", "lower < upper"]),
    (CH, "joints.j1.limits", [-1.0, 1.0], ['"j1"', "limit_stiffness"]),
    (CH, "joints.j1.limits", [-1.0], ['"j1"', "limits"]),
    (CH, "joints.j1.limit_stiffness", 100.0, ['"j1"', "limit_stiffness", "need limits"]),
    # contacts
    (RD, "contacts.wheel.radius", 0.0, ['"wheel"', "radius"]),
    (RD, "contacts.wheel.radius", -0.1, ['"wheel"', "radius"]),
    (RD, "contacts.wheel.disk", "nodisk", ['"wheel"', "disk", "nodisk"]),
    (RD, "contacts.wheel.plane", "noplane", ['"wheel"', "plane", "noplane"]),
    (RD, "contacts.wheel.axis", [0.0, 0.0, 0.0], ['"wheel"', "axis"]),
    (RD, "contacts.wheel.normal", [0.0, 0.0], ['"wheel"', "normal"]),
    (RD, "contacts.wheel.type", "sliding_disk", ['"wheel"', "type"]),
    # couplers
    (GP, "couplers.mesh.joint", "nojoint", ['"mesh"', "joint", "nojoint"]),
    (GP, "couplers.mesh.joint", DELETE, ['"mesh"', "joint"]),
    (GP, "couplers.mesh.leader", "nojoint", ['"mesh"', "leader", "nojoint"]),
    (GP, "couplers.mesh.leader", DELETE, ['"mesh"', "leader"]),
    (GP, "couplers.mesh.leader", "wheel_axle", ['"mesh"', "leader", "itself"]),
    (GP, "couplers.mesh.coordinate", 1, ['"mesh"', "coordinate", "0..0"]),
    (GP, "couplers.mesh.leader_coordinate", -1, ['"mesh"', "leader_coordinate"]),
    (GP, "couplers.mesh.multiplier", 0.0, ['"mesh"', "multiplier", "other than 0"]),
    (GP, "couplers.mesh.multiplier", NAN, ['"mesh"', "multiplier"]),
    (GP, "couplers.mesh.offset", INF, ['"mesh"', "offset"]),
    (GP, "couplers.back", {"joint": "pinion_axle", "leader": "wheel_axle"},
     ['"back"', "leader", "circle"]),
    (GP, "couplers.twice", {"joint": "wheel_axle", "leader": "pinion_axle"},
     ['"twice"', "joint", "already follows"]),
    (GP, "drivers.turn", {"joint": "wheel_axle", "law": "constant", "value": 0.0},
     ['"mesh"', "joint", "prescribed"]),
    (GP, "solver.formulation", "absolute", ['"mesh"', "formulation"]),
    (GP, "sensors.mesh_torques.coupler", "nocoupler", ['"mesh_torques"', "coupler",
                                                        "nocoupler"]),
    (GP, "sensors.mesh_torques.coupler", DELETE, ['"mesh_torques"', "coupler"]),
    # structure
    (FB, "bodies", {}, ['"crank_pivot"', "unknown body"]),
    (FB, "joints", {}, ["joint"]),
    (FB, "unknown_section", {"a": 1}, ["unknown_section"]),
    # names
    (FB, ("bodies", "my link"), RIGID, ['"my link"', "name"]),
    (FB, ("bodies", "link.2"), RIGID, ['"link.2"', "name"]),
    (
        FB,
        ("joints", "crank"),
        {"type": "revolute", "parent": "ground", "child": "crank"},
        ['"crank"', "name"],
    ),
    (
        FB,
        ("sensors", "a/b"),
        {"type": "joint_coordinate", "joint": "crank_pivot"},
        ['"a/b"', "name"],
    ),
    (FB, ("bodies", "lonely"), RIGID, ['"lonely"', "not connected to the ground"]),
    (FB, ("sensors", "."), {"type": "joint_coordinate", "joint": "crank_pivot"},
     ['"."', "name", "dots alone"]),
    (FB, ("sensors", ".."), {"type": "joint_coordinate", "joint": "crank_pivot"},
     ['".."', "name"]),
    # values past what a run can hold: refused with the limit, before any work
    (H2, "bodies.link2.elements", 1200, ['"link2"', "elements", "at most 1000"]),
    (H8, "bodies.link2.elements", 999, ['"link2"', "elements", "its other beams", "in all"]),
    (H2, ("sensors", "line"), {"type": "beam_centerline", "body": "link2",
                               "subdivisions": 1000000},
     ['"line"', "subdivisions", "at most 100"]),
    (RD, "drivers.slide_motion.coefficients", [0.0, 1e308, 0.25],
     ['"slide_motion"', "coefficients", "1e+100"]),
    (RD, "drivers.slide_motion.coefficients", [1e200], ['"slide_motion"', "coefficients"]),
    (SC, "drivers.motor.rate", 1e300, ['"motor"', "rate", "magnitude"]),
    # finite-element bodies (the plate's mesh is copied beside the edited file)
    (FE, "bodies.plate.mesh", "nowhere.msh", ['body "plate"', "mesh", "nowhere.msh"]),
    (FE, "bodies.plate.mesh", DELETE, ['body "plate"', "mesh", "one of"]),
    (FE, "bodies.plate.material.youngs_modulus", 7.0e4, ['body "plate"', "material", "MPa"]),
    (FE, "bodies.plate.length_unit", "m", ['body "plate"', "length_unit", "fe_plate.msh",
                                           "300 m"]),
    (FE, "bodies.plate.length_unit", "furlong", ['body "plate"', "length_unit"]),
    (FE, "bodies.plate.modes", DELETE, ['body "plate"', "modes"]),
    (FE, "bodies.plate.modes", -1, ['body "plate"', "modes"]),
    (FE, "bodies.plate.frame", "nowhere", ['body "plate"', "frame", "nowhere"]),
    (FE, "bodies.plate.reduction", "guyan", ['body "plate"', "reduction"]),
    (FE, "bodies.plate.interfaces.hinge.box", [[5.0, 5.0, 5.0], [6.0, 6.0, 6.0]],
     ['body "plate"', "interfaces.hinge.box", "no node"]),
    (FE, ("bodies", "plate", "interfaces", "hinge"), {"set": "ghost"},
     ['body "plate"', "interfaces.hinge.set", '"ghost"', "fe_plate.msh"]),
    (FE, "bodies.plate.interfaces.hinge.connection", "glued",
     ['body "plate"', "interfaces.hinge.connection"]),
    (FE, ("bodies", "plate", "interfaces", "hinge"), {"nodes": [1, 2]},
     ['body "plate"', "interfaces.hinge", "line"]),
    (FE, "bodies.plate.markers.corner.node", 99999, ["corner", "node", "99999"]),
    (FE, "bodies.plate.markers.hinge.interface", "hub", ["hinge", "interface", '"hub"']),
    (FE, "bodies.plate.stiffness", "k.mtx", ['body "plate"', "mesh"]),
    # joint friction
    (RFL, "frictions.bearings.coulomb", -1.0, ['friction "bearings"', "coulomb"]),
    (RFL, "frictions.bearings.static", 0.001, ['"bearings"', "static", "Coulomb"]),
    (RFL, "frictions.bearings.law", "sticky", ['"bearings"', "law", "stick-slip"]),
    (RFL, "frictions.bearings.joint", "nojoint", ['"bearings"', "joint", "nojoint"]),
    (RFL, "frictions.bearings.coordinate", 1, ['"bearings"', "coordinate"]),
    (RFL, "frictions.bearings.regularization", 0.0, ['"bearings"', "regularization"]),
    (RFL, "frictions.bearings.stribeck_velocity", -1.0, ['"bearings"', "stribeck_velocity"]),
    (RFL, "solver.method", "rk45", ['friction "bearings"', "method", "bdf"]),
    # backlash
    (RFL, "backlashes.play", {"joint": "shaft", "gap": -0.01, "stiffness": 100.0},
     ['backlash "play"', "gap"]),
    (RFL, "backlashes.play", {"joint": "shaft", "gap": 0.01, "stiffness": 0.0},
     ['backlash "play"', "stiffness"]),
    (RFL, "backlashes.play", {"joint": "shaft", "gap": 0.01, "stiffness": 1.0, "damping": -1.0},
     ['backlash "play"', "damping"]),
    (RFL, "backlashes.play", {"joint": "nojoint", "gap": 0.01, "stiffness": 1.0},
     ['backlash "play"', "joint", "nojoint"]),
    (RFL, "backlashes.play", {"joint": "shaft", "gap": 0.01, "stiffness": 1.0, "coordinate": 1},
     ['backlash "play"', "coordinate"]),
    (RFL, "backlashes.play", {"joint": "shaft", "stiffness": 1.0}, ['backlash "play"', "gap"]),
    (RFL, "backlashes.play", {"joint": "shaft", "gap": 0.01, "stiffness": 1.0, "play": 1.0},
     ['backlash "play"', "play"]),
    # controllers
    (RFL, "controllers.servo.actuator", "nomotor", ['controller "servo"', "actuator", "nomotor"]),
    (RFL, "controllers.servo.command", "torque", ['"servo"', "command", "voltage"]),
    (RFL, "controllers.servo.command", "speed", ['"servo"', "command"]),
    (RFL, "controllers.servo.sample_time", -0.001, ['"servo"', "sample_time"]),
    (RFL, "controllers.servo.delay", -0.001, ['"servo"', "delay"]),
    (RFL, "controllers.servo.limits", [1.0, -1.0], ['"servo"', "limits"]),
    (RFL, "controllers.servo.limits", 0.0, ['"servo"', "limits"]),
    (RFL, "controllers.servo.inputs", [], ['"servo"', "inputs"]),
    (RFL, "controllers.servo.inputs", [{"sensor": "ghost"}],
     ['"servo"', "inputs[0].sensor", "ghost"]),
    (RFL, "controllers.servo.inputs", [{"sensor": "hub", "joint": "shaft"}],
     ['"servo"', "inputs[0].sensor"]),
    (RFL, "controllers.servo.inputs", [{"sensor": "hub", "gain": "x"}],
     ['"servo"', "inputs[0].gain"]),
    (RFL, "controllers.servo.inputs", [{"sensor": "hub", "speed": 1.0}],
     ['"servo"', "inputs[0].speed"]),
    (RFL, "controllers.servo.inputs", [{"joint": "shaft", "coordinate": 3}],
     ['"servo"', "inputs[0].coordinate"]),
    (RFL, "controllers.servo.inputs", [{"sensor": "hub", "setpoint": {"law": "wobble"}}],
     ['"servo"', "inputs[0].setpoint.law"]),
    (RFL, "controllers.servo.sample_time", DELETE, ['"servo"', "inputs[0].sensor", "sample_time"]),
    # sensors as instruments
    (RFL, "sensors.tip.dead_time", -0.004, ['sensor "tip"', "dead_time"]),
    (RFL, "sensors.tip.controller_dead_time", -0.004, ['sensor "tip"', "controller_dead_time"]),
    (RFL, "sensors.tip.controller_lag", -1.0, ['sensor "tip"', "controller_lag"]),
    (RFL, "sensors.encoder.controller_resolution", "fine",
     ['sensor "encoder"', "controller_resolution"]),
    (RFL, "controllers.servo.inputs", [{"sensor": "tip", "rate_gain": 1.0, "rate_cutoff": -5.0}],
     ['"servo"', "inputs[0].rate_cutoff"]),
    (RFL, "controllers.servo.inputs",
     [{"sensor": "tip", "rate_gain": 1.0, "rate_cutoff": 50.0, "rate_filter_order": 3}],
     ['"servo"', "inputs[0].rate_filter_order"]),
    (RFL, "sensors.tip.lag", "slow", ['sensor "tip"', "lag"]),
    (RFL, "sensors.encoder.resolution", -1.0, ['sensor "encoder"', "resolution"]),
    # a beam started in its modes
    (RFL, "bodies.ruler.initial", {"mode": 0, "amplitude": 0.01},
     ['body "ruler"', "initial.mode"]),
    (RFL, "bodies.ruler.initial", {"mode": 1, "size": 0.01}, ['body "ruler"', "initial.size"]),
    (RFL, "bodies.ruler.initial", [{"mode": 1}, {"mode": 2, "rate": "fast"}],
     ['body "ruler"', "initial[1].rate"]),
    (RFL, "bodies.ruler.initial", {"mode": 99, "amplitude": 0.01},
     ['body "ruler"', "initial", "99"]),
    # user laws named in the model file
    (RFL, ("user_laws", "cog"), {"function": "no_such_module_xyz:law", "joint": "shaft"},
     ['user law "cog"', "function", "no_such_module_xyz"]),
    (RFL, ("user_laws", "cog"), {"function": "laws_not_here.py:law", "joint": "shaft"},
     ['user law "cog"', "function", "laws_not_here.py"]),
    (RFL, ("user_laws", "cog"), {"function": "math:sqrt", "joint": "shaft"},
     ['user law "cog"', "function", "parameters"]),
    (RFL, ("user_laws", "cog"), {"function": "math:no_such_law", "joint": "shaft"},
     ['user law "cog"', "function", "no_such_law"]),
    (RFL, ("user_laws", "cog"), {"function": "math", "joint": "shaft"},
     ['user law "cog"', "function", "module:function"]),
    # tracebacks once: a component the sensor does not have, an incompressible solid
    (RFL, "controllers.servo.inputs", [{"sensor": "tip", "component": 5, "gain": 1.0}],
     ['controller "servo"', "inputs[0].component", "0 .. 2", "got 5"]),
    (RFL, "controllers.servo.inputs", [{"sensor": "encoder", "component": 1, "gain": 1.0}],
     ['controller "servo"', "inputs[0].component", "0 .. 0"]),
    (FE, "bodies.plate.material.poisson_ratio", 0.5,
     ['body "plate"', "material.poisson_ratio", "nu < 0.5", "incompressible"]),
    # a finite-element body started in its modes, as a beam is
    (FE, "bodies.plate.initial", {"mode": 0, "amplitude": 0.001},
     ['body "plate"', "initial.mode"]),
    (FE, "bodies.plate.initial", {"mode": 99, "amplitude": 0.001},
     ['body "plate"', "initial", "elastic modes, not 99"]),
    # values a careful engineer calls a mistake: refused
    (RFL, "frictions.bearings.static", 1e300, ['friction "bearings"', "static", "magnitude"]),
    (RFL, "frictions.bearings.coulomb", 1e300, ['friction "bearings"', "coulomb", "magnitude"]),
    (CH, ("actuators", "push"), {"joint": "j1", "type": "torque"},
     ['actuator "push"', "torque", "required", "controller"]),
    (RIG, "sensors.strain.point", [1.0, 0.0],
     ['sensor "strain"', "point", "off the section", "0.00635 m"]),
    # values that set the work of a run, bounded against it
    (RFL, "controllers.servo.sample_time", 1e-9,
     ['controller "servo"', "sample_time", "samples", "at most 1e+06"]),
    (CH, "solver", {"method": "galpha", "t_end": 10.0, "fixed_step": 1e-12},
     ["solver", "fixed_step", "1e+13 steps", "at most 1e+07"]),
    (CH, "solver.max_step", 1e-12, ["solver", "max_step", "steps", "at most 1e+07"]),
    (FE, "bodies.plate.mesh", "nan.msh", ['body "plate"', "mesh", "nan.msh", "line 10",
                                          "finite"]),
    # the finite-element files: each fault with its line and what was expected
    (FE, "bodies.plate.mesh", "binary.msh", ["binary.msh", "binary", "$MeshFormat"]),
    (FE, "bodies.plate.mesh", "empty.msh", ["empty.msh", "empty"]),
    (FE, "bodies.plate.mesh", "hello.msh", ["hello.msh", "$MeshFormat"]),
    (FE, "bodies.plate.mesh", "cut.msh", ["cut.msh", "line 277", "cut short"]),
    (FE, "bodies.plate.mesh", "count.msh", ["count.msh", "line 357", "$EndNodes"]),
    (FE, "bodies.plate.mesh", "word.msh", ["word.msh", "line 10", "x y z"]),
    (FE, "bodies.plate.mesh", "outside.msh", ["outside.msh", "line 360", "node 9999"]),
    (FE, "bodies.plate.mesh", "short.msh", ["short.msh", "line 360", "6 nodes, expected 10"]),
    (FE, "bodies.plate.mesh", "plate.vtk", ["plate.vtk", "expected a tetrahedral mesh",
                                            "meshio"]),
    (FE, "bodies.plate.mesh", "twice.msh", ["twice.msh", "line 7", "node 1", "defined twice"]),
    (FE, "bodies.plate.mesh", "flat.msh", ["flat.msh", "flat", "z = 0"]),
    (FE, "bodies.plate.mesh", "pinched.msh", ["pinched.msh", "tetrahedron 1", "no volume"]),
]

# (command line, exit status, words of its last line of stderr); {models} is data/models,
# {tmp} a fresh folder holding notes.txt (not a result file), the folder sub/, the files of
# CLI_FILES and damaged.h5 (a result file whose /q is shorter than its /time)
CLI_CASES = [
    (["run", "{tmp}/missing.toml"], 2, ["missing.toml", "cannot read the model file"]),
    (["run", "{models}/chain_planar_4.toml", "--rtol", "abc"], 2, ["--rtol", "abc"]),
    (["run", "{models}/chain_planar_4.toml", "--t-end", "-1"], 2, ["solver", '"t_end"']),
    (["run", "{models}/chain_planar_4.toml", "--solver", "euler"], 2, ['"method"', "euler"]),
    (["run", "{models}/chain_planar_4.toml", "--output-step", "-1"], 2, ['"step"']),
    (["run", "{models}/chain_planar_4.toml", "--atol", "0"], 2, ['"atol"']),
    (["run", "{models}/chain_planar_4.toml", "--rho-inf", "2"], 2, ['"rho_inf"']),
    (["run", "{models}/chain_planar_4.toml", "--set", "nonsense"], 2, ["--set", "nonsense"]),
    (["run", "{models}/chain_planar_4.toml", "--set", "bodies.nobody.mass=1"], 2,
     ["--set", '"nobody"']),
    (["run", "{models}/chain_planar_4.toml", "--set", "bodies.link1.mass=abc"], 2,
     ['"link1"', '"mass"', "abc"]),
    (["run", "{models}/four_bar.toml", "--formulation", "order-n"], 2,
     ['"formulation"', "closed loops"]),
    (["run", "{models}/four_bar.toml", "--solver", "galpha", "--constraints", "projection"],
     2, ['"method"', "projection"]),
    (["run", "{models}/four_bar.toml", "--solver", "dop853"], 2, ['"method"', "DAE"]),
    (["run", "{models}/chain_planar_4.toml", "-o", "{tmp}/sub"], 2, ["sub", "is a folder"]),
    (["run", "{models}/chain_planar_4.toml", "-o", "{tmp}/notes.txt"], 2,
     ["notes.txt", "not a flexmbs result file"]),
    (["run", "{models}/chain_planar_4.toml", "-o", "{models}/chain_planar_4.toml"], 2,
     ["overwrite"]),
    (["info", "{tmp}/missing.h5"], 2, ["missing.h5", "no such result file"]),
    (["info", "{tmp}/notes.txt"], 2, ["notes.txt", "not an HDF5 file"]),
    (["energy", "{tmp}/missing.h5"], 2, ["missing.h5", "no such result file"]),
    (["energy", "{tmp}/notes.txt", "--max-ratio", "-1"], 2, ["--max-ratio", "positive"]),
    (["plot", "{tmp}/missing.h5"], 2, ["missing.h5", "no such result file"]),
    (["plot", "{tmp}/missing.h5", "-o", "{tmp}/x.xyz"], 2, ["x.xyz", "image format"]),
    (["modes", "{tmp}/missing.toml"], 2, ["missing.toml", "cannot read the model file"]),
    (["modes", "{models}/chain_planar_4.toml", "--count", "-3"], 2, ["--count"]),
    (["linearize", "{models}/chain_planar_4.toml", "--at", "-1"], 2, ["--at"]),
    (["linearize", "{models}/chain_planar_4.toml", "-o", "{tmp}/notes.txt/l.h5"], 2,
     ["l.h5", "cannot be made"]),
    (["equilibrium", "{models}/chain_planar_4.toml", "-o", "{tmp}/notes.txt/eq.toml"], 2,
     ["eq.toml", "cannot be made"]),
    (["equilibrium", "{tmp}/missing.toml"], 2, ["missing.toml"]),
    (["compare", "{tmp}/missing.h5", "{tmp}/missing.csv"], 2, ["--map"]),
    (["fit", "{models}/chain_planar_4.toml", "{tmp}/missing.csv"], 2, ["--map", "--param"]),
    (["export", "{tmp}/missing.h5"], 2, ["missing.h5", "no such result file"]),
    (["export", "{tmp}/notes.txt"], 2, ["notes.txt", "not an HDF5 file"]),
    (["export", "{tmp}/missing.h5", "--subdivisions", "0"], 2, ["--subdivisions"]),
    (["animate", "{tmp}/missing.h5", "-o", "{tmp}/a.gif"], 2, ["missing.h5"]),
    (["animate", "{tmp}/missing.h5", "-o", "{tmp}/a.avi"], 2, ["a.avi", ".gif or .mp4"]),
    (["animate", "{tmp}/missing.h5", "-o", "{tmp}/a.gif", "--scale", "-2"], 2, ["--scale"]),
    (["animate", "{tmp}/missing.h5", "-o", "{tmp}/a.gif", "--view", "top"], 2, ["--view"]),
    (["import-urdf", "{tmp}/missing.urdf"], 2, ["missing.urdf", "no such file"]),
    (["import-urdf", "{tmp}/notes.txt"], 2, ["notes.txt", "not a readable URDF"]),
    (["import-urdf", "{tmp}/notes.txt", "--gravity", "0", "0"], 2, ["--gravity"]),
    # the output: one writer, a name, a folder that takes it
    (["run", "{models}/chain_planar_4.toml", "-o", ""], 2, ["-o ''", "expected the name"]),
    (["export", "{tmp}/missing.h5", "-o", " "], 2, ["-o", "expected the name"]),
    (["sweep", "{models}/chain_planar_4.toml", "--param", "solver.t_end=1", "-o", ""], 2,
     ["-o ''"]),
    # sweeps: bounded, each path once, the summary checked before any run
    (["sweep", "{models}/chain_planar_4.toml", "--param", "joints.j1.initial=1:2:10000000",
      "-o", "{tmp}/s"], 2, ["--param", "10000000 values", "at most 10000 cases"]),
    (["sweep", "{models}/chain_planar_4.toml", "--param", "joints.j1.initial=1:2:200",
      "--param", "joints.j2.initial=1:2:200", "-o", "{tmp}/s"], 2,
     ["--param", "200 x 200 = 40000 cases", "at most 10000"]),
    (["sweep", "{models}/chain_planar_4.toml", "--param", "joints.j1.initial=1,2",
      "--param", "joints.j1.initial=3", "-o", "{tmp}/s"], 2,
     ['--param "joints.j1.initial"', "swept twice"]),
    (["sweep", "{models}/chain_planar_4.toml", "--param", "joints.j1.initial=1,2",
      "--summary", "tip[7]", "-o", "{tmp}/s", "--serial"], 2,
     ['--summary "tip[7]"', "3 columns", "0 .. 2"]),
    (["sweep", "{models}/chain_planar_4.toml", "--param", "joints.j1.initial=1,2",
      "--summary", "nothing", "-o", "{tmp}/s", "--serial"], 2,
     ['--summary "nothing"', 'no series "nothing"']),
    (["sweep", "{models}/chain_planar_4.toml", "--param", "joints.j1.initial=1,2",
      "--workers", "100000", "-o", "{tmp}/s"], 2, ["--workers 100000", "a core"]),
    (["fit", "{models}/chain_planar_4.toml", "{tmp}/missing.csv", "--map", "m.toml",
      "--param", "joints.j1.damping", "--max-runs", "0"], 2, ["--max-runs", ">= 1"]),
    # fits: one form of the command, windows in order, files it can read
    (["fit", "--records", "{tmp}/missing.fit.toml"], 2,
     ["missing.fit.toml", "cannot read the fit file"]),
    (["fit", "--records", "{tmp}/notes.txt"], 2, ["notes.txt", "not a TOML file"]),
    (["fit", "--resume", "{tmp}/notes.txt"], 2, ["notes.txt", "--resume", "fit.json"]),
    (["fit", "{models}/chain_planar_4.toml", "--records", "{tmp}/notes.txt"], 2,
     ["expected MODEL EXPERIMENT --map MAP, or --records"]),
    (["fit", "{models}/chain_planar_4.toml", "{tmp}/missing.csv", "--map", "m.toml",
      "--param", "joints.j1.damping", "--window", "2", "1"], 2,
     ["--window 2 1", "0 <= T0 < T1"]),
    (["verify", "{models}/chain_planar_4.toml", "--window", "1", "nan"], 2, ["--window"]),
    (["fit", "{models}/huang_rig.toml", "{tmp}/flat.csv", "--map",
      "{models}/../experiments/rig_30deg_synthetic.map.toml", "--param",
      "joints.joint2.damping", "-o", "{tmp}/fitted"], 2,
     ["flat.csv", "every channel is flat", "400 samples", "a record that moves"]),
    (["sweep", "{models}/chain_planar_4.toml", "--param", "joints.j1.initial=1,2",
      "-o", "{tmp}/swept", "--serial"], 2,
     ["-o", "swept", "case_002.h5", "earlier sweep", "of 2 cases"]),
    # exports and animations: bounded, and no frame of no time
    (["export", "{tmp}/missing.h5", "--subdivisions", "1000000000"], 2,
     ["--subdivisions 1000000000", "1 .. 100"]),
    (["animate", "{tmp}/missing.h5", "-o", "{tmp}/a.png", "--at", "nan"], 2,
     ["--at nan", "finite"]),
    (["animate", "{tmp}/missing.h5", "-o", "{tmp}/a.gif", "--at", "1"], 2,
     ["a.gif", "--at", ".png"]),
    (["animate", "{tmp}/missing.h5", "-o", "{tmp}/a.gif", "--max-frames", "100000000"], 2,
     ["--max-frames 100000000", "1 .. 5000"]),
    # times and offsets: finite, within the run
    (["compare", "{tmp}/missing.h5", "{tmp}/missing.csv", "--offset", "nan"], 2,
     ["--offset", "finite", "'nan'"]),
    (["view", "{models}/chain_planar_4.toml", "--html", "{tmp}/v.html", "--at", "nan"], 2,
     ["--at", "finite"]),
    (["view", "{models}/chain_planar_4.toml", "--html", "{tmp}/v.html", "--at", "1e9"], 2,
     ["chain_planar_4.toml", "--at 1e+09 s", "outside the outputs", "0 .. 0 s"]),
    # URDF: read strictly, the URDF named (not the model file that is never written)
    (["import-urdf", "{tmp}/cut.urdf", "-o", "{tmp}/cut.toml"], 2,
     ["cut.urdf", "not well-formed XML", "cut short"]),
    (["import-urdf", "{tmp}/open.urdf", "-o", "{tmp}/open.toml"], 2,
     ["open.urdf", "not closed with </robot>"]),
    (["import-urdf", "{tmp}/xacro.urdf"], 2, ["xacro.urdf", "xacro macros", "line 2"]),
    (["import-urdf", "{tmp}/dollar.urdf"], 2, ["dollar.urdf", "xacro macros", "${length}"]),
    (["import-urdf", "{tmp}/heavy.urdf"], 2,
     ["heavy.urdf", 'link "arm" (line 4)', '"mass"', "'heavy'"]),
    (["import-urdf", "{tmp}/twice.urdf"], 2, ["twice.urdf", 'link "arm"', "defined twice"]),
    (["import-urdf", "{tmp}/joint_twice.urdf"], 2,
     ["joint_twice.urdf", 'joint "shoulder"', "defined twice"]),
    (["import-urdf", "{tmp}/two_parents.urdf"], 2,
     ["two_parents.urdf", 'joint "elbow2"', '"child"', 'already hangs from joint "elbow"']),
    (["import-urdf", "{tmp}/loop.urdf"], 2, ["loop.urdf", "already hangs from", "closed loop"]),
    (["import-urdf", "{tmp}/no_root.urdf"], 2, ["no_root.urdf", "form a loop", "no link"]),
    (["import-urdf", "{tmp}/nobody.urdf"], 2,
     ["nobody.urdf", 'joint "elbow"', '"child"', 'no link "hand"']),
    (["import-urdf", "{tmp}/hinge.urdf"], 2, ["hinge.urdf", 'joint "elbow"', '"type"']),
    (["import-urdf", "{tmp}/entity.urdf"], 2, ["entity.urdf", "entity"]),
    (["import-urdf", "{tmp}/robot.urdf", "--flexible", "base:z"], 2,
     ["robot.urdf", "--flexible base", "root"]),
    (["import-urdf", "{tmp}/robot.urdf", "--flexible", "arm:z", "--flexible", "arm:x"], 2,
     ["--flexible", "named twice"]),
    (["import-urdf", "{tmp}/robot.urdf", "--flexible", "arm:z:100000000"], 2,
     ["--flexible", "1 .. 1000"]),
    (["import-urdf", "{tmp}/bad_inertia.urdf", "-o", "{tmp}/never.toml"], 2,
     ["bad_inertia.urdf", 'link "arm"', '"inertia"', "one negative"]),
    (["import-urdf", "{tmp}/robot.urdf", "-o", "{tmp}/ro/robot.toml"], 2,
     ["ro", "cannot be written on"]),
    (["run", "{models}/chain_planar_4.toml", "-o", "{tmp}/ro/out.h5"], 2,
     ["ro", "cannot be written on"]),
]

ROBOT = """<?xml version="1.0"?>
<robot name="arm">
  <link name="base"/>
  <link name="arm">
    <inertial><origin xyz="0 0 0.25"/><mass value="1.0"/>
      <inertia ixx="0.02" iyy="0.02" izz="0.001" ixy="0" ixz="0" iyz="0"/></inertial>
  </link>
  <link name="forearm">
    <inertial><origin xyz="0 0 0.2"/><mass value="0.5"/>
      <inertia ixx="0.01" iyy="0.01" izz="0.001" ixy="0" ixz="0" iyz="0"/></inertial>
  </link>
  <joint name="shoulder" type="revolute"><parent link="base"/><child link="arm"/>
    <axis xyz="0 1 0"/></joint>
  <joint name="elbow" type="revolute"><parent link="arm"/><child link="forearm"/>
    <origin xyz="0 0 0.5"/><axis xyz="0 1 0"/></joint>
</robot>
"""
EXTRA_JOINT = """  <joint name="elbow2" type="revolute">
    <parent link="{parent}"/><child link="{child}"/><axis xyz="0 1 0"/></joint>
</robot>"""

CLI_FILES = {
    "robot.urdf": ROBOT,
    "cut.urdf": ROBOT[:400],
    "open.urdf": ROBOT.replace("</robot>", ""),
    "xacro.urdf": ROBOT.replace(
        '<robot name="arm">', '<robot name="arm" xmlns:xacro="http://www.ros.org/wiki/xacro">'
        '<xacro:property name="length" value="0.5"/>'),
    "dollar.urdf": ROBOT.replace('<origin xyz="0 0 0.5"/>', '<origin xyz="0 0 ${length}"/>'),
    "heavy.urdf": ROBOT.replace('<mass value="1.0"/>', '<mass value="heavy"/>'),
    "twice.urdf": ROBOT.replace('  <link name="forearm">', '  <link name="arm"/>\n'
                                '  <link name="forearm">'),
    "joint_twice.urdf": ROBOT.replace('joint name="elbow"', 'joint name="shoulder"'),
    "two_parents.urdf": ROBOT.replace("</robot>", EXTRA_JOINT.format(parent="base",
                                                                     child="forearm")),
    "loop.urdf": ROBOT.replace("</robot>", EXTRA_JOINT.format(parent="forearm", child="arm")),
    "no_root.urdf": ROBOT.replace('<link name="base"/>', "").replace(
        '<parent link="base"/>', '<parent link="forearm"/>'),
    "nobody.urdf": ROBOT.replace('<child link="forearm"/>', '<child link="hand"/>'),
    "hinge.urdf": ROBOT.replace('name="elbow" type="revolute"', 'name="elbow" type="hinge"'),
    "entity.urdf": '<?xml version="1.0"?>\n<!DOCTYPE robot [<!ENTITY a "aaaaaaaaaa">\n'
                   '<!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">]>\n' + ROBOT.split("\n", 1)[1],
    "bad_inertia.urdf": ROBOT.replace('ixx="0.02"', 'ixx="-0.02"', 1),
    "flat.csv": "".join(
        line for line in (Path(__file__).resolve().parents[1] / "data" / "experiments"
                          / "rig_30deg_synthetic.csv").read_text().splitlines(keepends=True)
        if line.startswith(("#", "time"))) + "".join(
        f"{0.005 * k:.3f},1.27,1.26,0.0000026\n" for k in range(400)),
    "swept/summary.csv": "case,joints.j1.initial\ncase_000,1\ncase_001,2\ncase_002,3\n",
    "swept/case_000.h5": "", "swept/case_001.h5": "", "swept/case_002.h5": "",
}

# (command line, exit status, words of one "warning:" line of stderr): commands that run,
# but say that a value is unlikely in the units the model file uses, or that a result
# file is not whole
CLI_WARNINGS = [
    (["run", "{models}/chain_planar_4.toml", "--set", "joints.j1.initial=90", "-o",
      "{tmp}/w.h5", "--t-end", "0.01", "-q"], 0,
     ['chain_planar_4.toml: joint "j1"', '"initial"', "90 rad", "degrees"]),
    (["modes", "{models}/chain_planar_4.toml", "--set", "joints.j1.initial=90"], 0,
     ['joint "j1"', '"initial"', "90 rad", "degrees"]),
    (["modes", "{models}/chain_planar_4.toml", "--set", "joints.j2.initial_rate=3000"], 0,
     ['joint "j2"', '"initial_rate"', "rpm"]),
    (["modes", "{models}/chain_planar_4.toml", "--set", "model.gravity=[0.0, 0.0, -9810.0]"],
     0, ["model", '"gravity"', "mm/s^2"]),
    (["modes", "{models}/slider_crank_flexible.toml", "--set", "drivers.motor.rate=3000"], 0,
     ['driver "motor"', '"rate"', "rpm"]),
    (["modes", "{models}/slider_crank_flexible.toml", "--set", "drivers.motor.value=90"], 0,
     ['driver "motor"', '"value"', "degrees"]),
    (["modes", "{models}/slider_crank_flexible.toml", "--set",
      "bodies.rod.section.max_y=6.35"],
     0, ['body "rod"', '"section"', "mm where m"]),
    (["modes", "{models}/slider_crank_flexible.toml", "--set",
      "bodies.rod.material.density=2.77"], 0, ['body "rod"', '"density"', "g/cm^3"]),
    (["modes", "{models}/slider_crank_flexible.toml", "--set",
      "bodies.rod.material.youngs_modulus=69.0"], 0,
     ['body "rod"', '"youngs_modulus"', "GPa"]),
    (["info", "{tmp}/damaged.h5"], 0, ["damaged.h5", "differ in length", "/q 5", "first 5"]),
    # judged against the model's own scale and its run
    (["modes", "{models}/chain_planar_4.toml", "--set", "joints.j1.limits=[-90.0, 90.0]",
      "--set", "joints.j1.limit_stiffness=100.0"], 0,
     ['joint "j1"', '"limits"', "-90 rad", "degrees"]),
    (["modes", "{models}/four_bar.toml", "--set",
      "bodies.crank.markers.tip.euler_xyz=[0.0, 0.0, 90.0]"], 0,
     ['marker "tip" on body "crank"', '"euler_xyz"', "90 rad", "degrees"]),
    (["modes", "{models}/chain_planar_4.toml", "--set", "joints.j2.initial_rate=60"], 0,
     ['joint "j2"', '"initial_rate"', "60 rad/s", "rpm", "turns in the run",
      "the model's own rate"]),
    (["modes", "{models}/huang_two_link.toml", "--set",
      "bodies.link2.points=[[0.0, 0.0, 0.0], [1020.0, 0.0, 0.0]]"], 0,
     ['body "link2"', '"points"', "1020 m long", "the model's other bodies", "mm where m"]),
    (["modes", "{models}/four_bar.toml", "--set", "bodies.crank.mass=1e-300"], 0,
     ['body "crank"', '"mass"', "1e-300 kg", "heaviest"]),
    (["modes", "{models}/flexible_link_rig.toml", "--set", "controllers.servo.delay=10.0"],
     0, ['controller "servo"', '"delay"', "10 s", "longer than the run (2.4 s)"]),
    (["modes", "{models}/flexible_link_rig.toml", "--set", "sensors.tip.dead_time=10.0"],
     0, ['sensor "tip"', '"dead_time"', "longer than the run"]),
    (["modes", "{models}/flexible_link_rig.toml", "--set", "sensors.encoder.resolution=4096"],
     0, ['sensor "encoder"', '"resolution"', "4096 rad", "every reading is 0",
         "0.001534 rad"]),
    (["modes", "{models}/flexible_link_rig.toml", "--set",
      "sensors.encoder.resolution=1e300"], 0,
     ['sensor "encoder"', '"resolution"', "every reading is 0"]),
    (["modes", "{models}/flexible_link_rig.toml", "--set", "sensors.tip.resolution=2.0"], 0,
     ['sensor "tip"', '"resolution"', "2 m", "every reading is 0"]),
]

PLATE_MESH = (Path(__file__).resolve().parents[1] / "data" / "models" / "fe_plate.msh").read_text()


def _node_line(k, text):
    """The plate's mesh with its node line k (from 1, line 5 + k of the file) replaced."""
    lines = PLATE_MESH.splitlines()
    lines[lines.index("$Nodes") + 1 + k] = text
    return "\n".join(lines) + "\n"


def _flat(text):
    lines = text.splitlines()
    first, last = lines.index("$Nodes") + 2, lines.index("$EndNodes")
    for k in range(first, last):
        tag, x, y, _ = lines[k].split()
        lines[k] = f"{tag} {x} {y} 0.0"
    return "\n".join(lines) + "\n"


# damaged copies of data/models/fe_plate.msh, written beside each edited model file
FE_FILES = {
    "nan.msh": _node_line(5, "5 nan 0.0 -2.0"),
    "binary.msh": bytes(range(256)) * 8,
    "empty.msh": "",
    "hello.msh": "hello\n",
    "cut.msh": PLATE_MESH[:20000],
    "count.msh": PLATE_MESH.replace("$Nodes\n351\n", "$Nodes\n352\n"),
    "word.msh": _node_line(5, "5 0.0 abc -2.0"),
    "outside.msh": PLATE_MESH.replace("\n1 11 2 0 0 1 2 4 14 71", "\n1 11 2 0 0 1 2 4 9999 71"),
    "short.msh": PLATE_MESH.replace("\n1 11 2 0 0 1 2 4 14 71 78 73 77 89 80",
                                    "\n1 11 2 0 0 1 2 4 14 71 78"),
    "plate.vtk": PLATE_MESH,
    "twice.msh": _node_line(2, "1 0.0 -100.0 2.0"),
    "flat.msh": _flat(PLATE_MESH),
    # node 14, a corner of the first tetrahedron, moved into the plane of its other three
    "pinched.msh": _node_line(14, "14 0.0 -75.0 2.0"),
}


def _matrix_files():
    """A free box of 4-node tetrahedra (0.3 x 0.2 x 0.02 m, aluminium) as Matrix Market
    K and M and a node table, with a zero K, a diagonal K (stiff against rigid motion)
    and a K without its Matrix Market header; an MBDyn modal file with a NaN."""
    import io
    import tempfile

    import numpy as np
    import scipy.io
    import scipy.sparse as sp

    from flexmbs.elements.fe_files import write_mbdyn_fem
    from flexmbs.elements.solid import box_mesh, solid_matrices

    points, tets = box_mesh(0.3, 0.2, 0.02, (2, 1, 1), quadratic=False)
    k, ms = solid_matrices(points, tets, 7e10, 0.33, 2700.0)
    m = sp.kron(ms, sp.identity(3), format="csr")

    def market(a, header=True):
        out = io.BytesIO()
        scipy.io.mmwrite(out, sp.coo_matrix(a))
        text = out.getvalue().decode()
        return text if header else "\n".join(x for x in text.splitlines()
                                             if not x.startswith("%")) + "\n"

    n = len(points)
    files = {
        "k.mtx": market(k), "m.mtx": market(m),
        "nodes.csv": "".join(f"{i + 1}, {x}, {y}, {z}\n" for i, (x, y, z) in enumerate(points)),
        "zero_k.mtx": market(sp.csr_matrix(k.shape)),
        "diagonal_k.mtx": market(sp.diags(k.diagonal())),
        "headless_k.mtx": market(k, header=False),
    }
    with tempfile.TemporaryDirectory() as folder:
        fem = Path(folder) / "box.fem"
        shapes = np.zeros((6 * n, 1))
        shapes[2::6, 0] = points[:, 0]
        lumped = np.zeros((n, 6))
        lumped[:, :3] = 0.65 / n
        write_mbdyn_fem(fem, points, np.arange(1, n + 1), shapes, np.eye(1), np.eye(1) * 1e4,
                        lumped)
        files["nan.fem"] = fem.read_text().replace(f"{points[3, 1]:.16e}", "nan", 1)
    return files


try:  # the fe extra assembles the box; without it its entries are left out
    FE_FILES.update(_matrix_files())
    FE_MATRICES = True
except Exception:  # noqa: BLE001 - scikit-fem or meshio missing
    FE_MATRICES = False
FE_BOX = {"type": "fe", "stiffness": "k.mtx", "mass": "m.mtx", "nodes": "nodes.csv",
          "modes": 2, "interfaces": {"hinge": {"box": [[-0.001, -0.2, -0.02],
                                                       [0.001, 0.2, 0.02]]}},
          "markers": {"hinge": {"interface": "hinge"}, "corner": {"node": 2}}}
FE_MODAL = {"type": "fe", "modal": "nan.fem",
            "interfaces": {"hinge": {"box": [[-0.001, -0.2, -0.02], [0.001, 0.2, 0.02]]}},
            "markers": {"hinge": {"interface": "hinge"}, "corner": {"node": 2}}}
BAD_MODELS += [] if not FE_MATRICES else [
    (FE, "bodies.plate", {**FE_BOX, "stiffness": "zero_k.mtx"},
     ['body "plate"', "stiffness", "zero_k.mtx", "the stiffness matrix is zero"]),
    (FE, "bodies.plate", {**FE_BOX, "stiffness": "diagonal_k.mtx"},
     ['body "plate"', "stiffness", "resists a translation", "free body"]),
    (FE, "bodies.plate", {**FE_BOX, "stiffness": "headless_k.mtx"},
     ['body "plate"', "stiffness", "headless_k.mtx", "line 1", "%%MatrixMarket header"]),
    (FE, "bodies.plate", FE_MODAL, ['body "plate"', "modal", "nan.fem", "line", "finite"]),
]

# (Simulator.step's arguments and keywords, words of the ModelError's one line): the
# Python API of flexible_link_rig refuses what the model file would
SIMULATOR_STEPS = [
    ((1e300,), {}, ['step: field "dt"', "1e+300", "at most 1000 times", "t_end"]),
    (("0.001",), {}, ['field "dt"', "expected a number", "str"]),
    ((0.001,), {"inputs": [5.0]}, ['field "inputs"', "expected a mapping", "list"]),
    ((0.001,), {"inputs": {"motor.voltage": "5"}}, ["motor.voltage", "expected a finite "
                                                    "number (V)", "str '5'"]),
]

# (model, call, arguments, keywords, words of the ModelError's one line): the Python API
# checks the types the model file would; call "load_model" reads the model with the
# keywords, another call is the method of the model read
PYTHON_CALLS = [
    (CH, "load_model", (), {"overrides": "solver.rtol=1e-6"},
     ["overrides", 'a list of "dotted.path=value" texts']),
    (CH, "add_sensor", ("angle", "joint_coordinate"), {"joint": ["j1"]},
     ['sensor "angle"', 'field "joint"', "expected a name", "list"]),
    (CH, "set_solver", (), {"rtol": "1e-6"}, ["solver", '"rtol"', "expected a number"]),
    (RFL, "add_controller", ("c", "motor", {"sensor": "hub"}),
     {"command": "voltage", "sample_time": 0.001},
     ['controller "c"', '"inputs"', "list of inputs"]),
]
