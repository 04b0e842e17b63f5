"""A controller in Python in the loop of flexmbs.Simulator: real-time factors, and what
a call of Simulator.step costs beyond the integration.

1. Control loops at 1 kHz, the controller in Python setting the inputs every step (a
   changed input: galpha goes on across it, its step, history and iteration matrix
   kept, flexmbs.solvers.galpha_kernels.galpha_carry_input):
   * the rotary flexible link of examples/rotary_flexible_link.py (a hub on a DC
     servo, a steel ruler in two modes) under its LQR state feedback;
   * a UR5 (example-robot-data's URDF) whose upper arm, forearm and first wrist link
     are beams at `flexmbs import-urdf`'s defaults (their lowest modes with correction
     modes and modal derivatives, damped in bands), torque motors on its
     six joints under a PD with gravity held by the initial pose, moving all six
     joints by 0.3 rad along quintic paths.
   Real-time factor = simulated time / wall time of the loop (compilation and the
   model's building left out).
2. The per-call overhead: the same model and steps with inputs that do not change,
   (a) the integrator asked for every output at once (the integration alone), (a')
   the same and the energies and sensors of every output in one batch (what `simulate`
   computes for those rows), (b) `Simulator.step` once per output without a file,
   (c) the same writing the result file; overhead = ((b or c) - a') / steps: the
   Python call, the inputs, the kernels' entries and the rows, beyond the work a
   `simulate` run of the same outputs does; and (b - a) / steps, beyond the
   integration alone (the outputs' kernel work included). Each on two clocks: the
   wall, and the CPU time of the process (time.process_time; the kernels run on one
   thread), which on a machine that other jobs share leaves out the time the process
   waits for a core.
3. What a changed input costs: the inputs the controller gave in a loop, recorded, then
   given again (a) as they were, a change at every step, and (b) the first of them at
   every step, never a change (the same Python call, no restart); the ratio (a) / (b)
   of the wall time per step, and each one's residuals, Newton iterations, difference
   Jacobians, iteration matrices factored and re-formed from the mass hook per step.
   (b) leaves the model at rest where (a) moves it: (c) the same motion both ways, the
   model driven by a law of its own (the rotary link: a harmonic voltage of 6 V at
   2 Hz; the UR5: a cubic spline through the torques its PD gave, every 10th), (c1)
   as the law, no input given, against (c2) the law's value at each step's middle
   given as the input, a change at every step: (c2) / (c1) is the cost of the change
   alone. And
   the steps per control period of `bdf` (the rotary link at its rtol) when the inputs
   change at every step.
4. The first Simulator of a process, warm kernels: a new Python process that imports
   flexmbs and builds Simulator(model) of the rotary link's model file, timed inside
   it (imports, then the Simulator), against the floor of a process that imports
   numpy, scipy.linalg and numba (what any such model needs), in turn with it.
Each figure is the median of --rounds interleaved rounds, with the spread (max - min).

    .venv/bin/python benchmarks/bench_control_loop.py --json results/control_loop.json
    .venv/bin/python benchmarks/bench_control_loop.py --table results/control_loop.json
"""

import argparse
import json
import os
import platform
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

import numpy as np

import flexmbs

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "examples"))
DT = 1e-3
UR5 = (Path(sysconfig.get_paths()["purelib"]) / "cmeel.prefix/share/example-robot-data/robots"
       / "ur_description/urdf/ur5_robot.urdf")
UR5_FLEXIBLE = ["upper_arm_link:z", "forearm_link:z", "wrist_1_link:y"]
UR5_GEAR = 100.0
UR5_KP = np.array([4000.0, 4000.0, 2000.0, 300.0, 300.0, 100.0])   # N m/rad at the joint
UR5_KD = np.array([200.0, 200.0, 100.0, 10.0, 10.0, 4.0])          # N m s/rad
LAW_KNOTS = 10  # the UR5's law: a spline through its PD's torques every 10 steps


def rotary_link():
    """(model, controller(sim) -> inputs, simulated time) of the rotary link's LQR."""
    import rotary_flexible_link as example

    model = flexmbs.load_model(example.MODEL)
    gains = example.design(model)[0][0]

    def controller(sim, nq=None):
        x = sim.state
        n = len(gains) // 2
        target = np.zeros(2 * n)
        target[0] = example.reference(sim.time)
        return {example.VOLTAGE: float(-gains @ (x[: 2 * n] - target))}

    return model, controller, 2.0


def ur5():
    """(model, controller, simulated time) of the UR5 with three beams under PD."""
    from flexmbs.formats.toml_reader import loads_model
    from flexmbs.formats.urdf import urdf_model_text
    from flexmbs.model import Constant

    # the beams at the import's defaults: modes with their correction modes and
    # derivatives, damped in bands
    sets = ["solver.method=galpha", "solver.rtol=1e-5", "solver.atol=1e-8", "solver.t_end=2.0",
            f"solver.fixed_step={DT}"]
    model = loads_model(urdf_model_text(UR5, UR5_FLEXIBLE), str(UR5), sets)
    joints = [n for n, j in model.joints.items() if j.type == "revolute"]
    for name in joints:
        model.add_actuator(f"{name}_motor", name, type="torque", torque=Constant(0.0),
                           gear_ratio=UR5_GEAR, rotor_inertia=5e-5)
    ports = [f"{name}_motor.torque" for name in joints]
    start = np.zeros(len(joints))

    def path(t):
        s = np.clip(t / 1.5, 0.0, 1.0)
        return start + 0.3 * (10 * s ** 3 - 15 * s ** 4 + 6 * s ** 5)

    def controller(sim):
        q, u = sim.q[: len(joints)], sim.u[: len(joints)]
        tau = UR5_KP * (path(sim.time) - q) - UR5_KD * u
        return dict(zip(ports, (tau / UR5_GEAR).tolist()))

    return model, controller, 2.0


def control_loop(make):
    """(wall s of the loop, steps, integration s, state size) of one run."""
    model, controller, t_end = make()
    sim = flexmbs.Simulator(model)
    steps = int(round(t_end / DT))
    start = time.perf_counter()
    for _ in range(steps):
        sim.step(DT, inputs=controller(sim))
    wall = time.perf_counter() - start
    stats = sim.statistics
    n = len(sim.state)
    sim.close()
    return wall, steps, stats["wall_time"], n


def _clocks():
    """(wall, CPU time of this process) in s."""
    return np.array([time.perf_counter(), time.process_time()])


def overhead(make, steps=2000):
    """(integration alone, integration and outputs, steps without a file, steps with a
    file), each (wall, CPU time) in s, for `steps` steps of DT with constant inputs."""
    from flexmbs.dynamics.outputs import has_reaction_sensors, kinematic_outputs, reaction_outputs
    from flexmbs.simulation import build_integrator, prepare_run, start_state
    from flexmbs.solvers.typed_call import TypedCall

    model, _, _ = make()
    times = DT * np.arange(1, steps + 1)
    model.set_solver(t_end=times[-1])  # the integrator's horizon: the same steps below
    run = prepare_run(model)
    system, y0 = start_state(run, 0.0)
    integ = build_integrator(run, system, 0.0, y0, lambda: None)
    start = _clocks()
    n, ys = integ.advance(times, np.inf)
    alone = _clocks() - start
    assert n == steps
    cm = run.cm
    ws = cm.new_workspace()
    energy, sensors = np.zeros((steps, 7)), np.zeros((steps, cm.nsensor_values))
    calls = [TypedCall(kinematic_outputs), TypedCall(reaction_outputs)]
    calls[0](cm.arrays, ws, times[:1], ys[:1], energy, sensors)  # resolved before timing
    start = _clocks()
    calls[0](cm.arrays, ws, times, ys, energy, sensors)
    if has_reaction_sensors(cm.arrays):
        calls[1](cm.arrays, ws, times, ys, sensors)
    outputs = _clocks() - start
    walls = []
    with tempfile.TemporaryDirectory() as tmp:
        for path in (None, os.path.join(tmp, "run.h5")):
            sim = flexmbs.Simulator(model, path)
            start = _clocks()
            for _ in range(steps):
                sim.step(DT)
            walls.append(_clocks() - start)
            sim.close()
    return [x.tolist() for x in (alone, alone + outputs, walls[0], walls[1])]


COUNTERS = ("nres", "nnewton", "njac", "nlu", "nmass")
"""The integrator's counters reported per step (flexmbs.solvers.bdf.BDF.statistics)."""


def recorded_inputs(make, method=None):
    """(model, the inputs its controller gave at each step of a loop, options)."""
    model, controller, t_end = make()
    options = {} if method is None else {"method": method}
    sim = flexmbs.Simulator(model, **options)
    recorded = []
    for _ in range(int(round(t_end / DT))):
        recorded.append(controller(sim))
        sim.step(DT, inputs=recorded[-1])
    sim.close()
    return model, recorded, options


def replay(model, given, options):
    """((wall, CPU) s, {counter: per step}, integrator steps) of `given` (a list of
    input dicts or None) held in turn over DT."""
    sim = flexmbs.Simulator(model, **options)
    start = _clocks()
    for inputs in given:
        sim.step(DT, inputs=inputs)
    clock = _clocks() - start
    stats = sim.statistics
    sim.close()
    return clock, {k: stats[k] / len(given) for k in COUNTERS}, stats["nsteps"]


def input_cost(make, method=None):
    """((wall, CPU) s with an input changed at every step, (wall, CPU) s with it held,
    steps, integrator steps taken when changed, counters changed, counters held) of
    the loop's recorded inputs."""
    model, recorded, options = recorded_inputs(make, method)
    changed, counts_changed, taken = replay(model, recorded, options)
    held, counts_held, _ = replay(model, [recorded[0]] * len(recorded), options)
    return changed, held, len(recorded), taken, counts_changed, counts_held


def law_driven(make):
    """(model driven by a law of its own, the law's value at each step's middle as
    inputs): the rotary link's voltage a harmonic, the UR5's torques the cubic spline
    through those its PD gave."""
    from flexmbs.model.timefunctions import Harmonic, Table

    model, recorded, _ = recorded_inputs(make)
    middles = DT * (np.arange(len(recorded)) + 0.5)
    laws = {}
    if make is rotary_link:
        amplitude, omega = 6.0, 2 * np.pi * 2.0
        for port in recorded[0]:
            laws[port] = (Harmonic(amplitude=amplitude, omega=omega),
                          amplitude * np.sin(omega * middles))
    else:  # knots every LAW_KNOTS steps: a spline through every step's value would
        # turn its curvature at every step, which the predictor does not follow
        knots = middles[::LAW_KNOTS]
        for port in recorded[0]:
            values = np.array([r[port] for r in recorded])[::LAW_KNOTS]
            law = Table(time=tuple(knots), value=tuple(values), interpolation="cubic")
            laws[port] = (law, _table_values(knots, values, middles))
    for port, (law, _) in laws.items():
        actuator, field = port.split(".")
        setattr(model.actuators[actuator], field, law)
    sampled = [{port: float(values[k]) for port, (_, values) in laws.items()}
               for k in range(len(recorded))]
    return model, sampled


def _table_values(knots, values, t):
    """The not-a-knot cubic spline through (knots, values) at t, as a `cubic` Table
    interpolates (scipy's CubicSpline: the same spline)."""
    from scipy.interpolate import CubicSpline

    return CubicSpline(knots, values, bc_type="not-a-knot")(t)


def same_motion_cost(make):
    """((wall, CPU) s of the law, (wall, CPU) s of its samples given as inputs, steps,
    counters of the law, counters of the samples)."""
    model, sampled = law_driven(make)
    law, counts_law, _ = replay(model, [None] * len(sampled), {})
    given, counts_given, _ = replay(model, sampled, {})
    return law, given, len(sampled), counts_law, counts_given


FIRST_SIMULATOR = """
import time
start = time.perf_counter()
import flexmbs
imported = time.perf_counter()
flexmbs.Simulator({model!r})
print(imported - start, time.perf_counter() - imported)
"""
IMPORT_FLOOR = """
import time
start = time.perf_counter()
import numpy, scipy.linalg, numba
print(time.perf_counter() - start, 0.0)
"""


def first_simulator():
    """((imports s, Simulator() s) of a new process, (the floor's imports s, 0))."""
    import subprocess

    model = str(ROOT / "examples" / "rotary_flexible_link.toml")
    out = []
    for code in (FIRST_SIMULATOR.format(model=model), IMPORT_FLOOR):
        r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           cwd=ROOT, check=True)
        out.append([float(x) for x in r.stdout.split()[-2:]])
    return out


def _pair_figures(runs, names, top):
    """The figures of runs of the same steps two ways, names (a, b), each run (clocks
    of a, clocks of b, steps, ..., counters of a, counters of b): the time per step of
    each on both clocks with its spread, the ratio of way `top` (0 or 1) to the other,
    and each way's counters per step."""
    steps = runs[0][2]
    figures = {"steps": steps}
    for clock, suffix in ((0, ""), (1, "_cpu")):
        for k, way in enumerate(names):
            t, spread = median_spread([r[k][clock] / steps * 1e6 for r in runs])
            figures.update({f"{way}_us{suffix}": t, f"{way}_spread_us{suffix}": spread})
        ratio, sr = median_spread([r[top][clock] / r[1 - top][clock] for r in runs])
        figures.update({f"ratio{suffix}": ratio, f"ratio_spread{suffix}": sr})
    for way, counted in zip(names, runs[-1][-2:]):
        figures[f"{way}_per_step"] = {k: round(v, 3) for k, v in counted.items()}
    return figures


def median_spread(values):
    v = np.asarray(values, dtype=float)
    return float(np.median(v)), float(v.max() - v.min())


def measure(rounds):
    cases = {"rotary flexible link (LQR)": rotary_link, "UR5, three flexible links (PD)": ur5}
    for make in cases.values():  # compile and warm up
        control_loop(make)
        overhead(make, 50)
    loops = {name: [] for name in cases}
    calls = {name: [] for name in cases}
    changes = {name: [] for name in cases}
    motions = {name: [] for name in cases}
    bdf, first = [], []
    for _ in range(rounds):
        first.append(first_simulator())
        for name, make in cases.items():
            loops[name].append(control_loop(make))
            calls[name].append(overhead(make))
            changes[name].append(input_cost(make))
            motions[name].append(same_motion_cost(make))
        bdf.append(input_cost(rotary_link, "bdf"))
    out = {"machine": f"{platform.machine()}, {os.cpu_count()} cores, {platform.platform()}",
           "load_average": os.getloadavg()[0],
           "python": platform.python_version(), "rounds": rounds, "dt": DT,
           "loops": {}, "overhead": {}, "input_change": {}, "same_motion": {}}
    for name, runs in changes.items():
        out["input_change"][name] = _pair_figures(runs, ("changed", "held"), 0)
    for name, runs in motions.items():
        out["same_motion"][name] = _pair_figures(runs, ("law", "given"), 1)
    imports, _ = median_spread([r[0][0] for r in first])
    building, spread = median_spread([r[0][1] for r in first])
    floor, _ = median_spread([r[1][0] for r in first])
    out["first_simulator"] = {"imports": imports, "simulator": building,
                              "simulator_spread": spread, "import_floor": floor}
    steps = bdf[0][2]
    out["bdf_rotary_link"] = {
        "steps": steps, "changed_us": median_spread([r[0][0] / steps * 1e6 for r in bdf])[0],
        "changed_us_cpu": median_spread([r[0][1] / steps * 1e6 for r in bdf])[0],
        "integrator_steps_per_period": bdf[0][3] / steps}
    for name, runs in loops.items():
        walls = [r[0] for r in runs]
        steps, states = runs[0][1], runs[0][3]
        wall, spread = median_spread(walls)
        integ, _ = median_spread([r[2] for r in runs])
        out["loops"][name] = {
            "steps": steps, "states": states, "simulated": steps * DT, "wall": wall,
            "wall_spread": spread, "real_time_factor": steps * DT / wall,
            "us_per_step": wall / steps * 1e6, "integration_us_per_step": integ / steps * 1e6}
    for name, runs in calls.items():
        steps = 2000
        figures = {}
        for clock, suffix in ((0, ""), (1, "_cpu")):
            r = [[x[clock] for x in run] for run in runs]
            alone, _ = median_spread([x[0] for x in r])
            outputs, _ = median_spread([(x[1] - x[0]) / steps * 1e6 for x in r])
            plain, sp = median_spread([(x[2] - x[1]) / steps * 1e6 for x in r])
            filed, sf = median_spread([(x[3] - x[1]) / steps * 1e6 for x in r])
            bare, sb = median_spread([(x[2] - x[0]) / steps * 1e6 for x in r])
            figures.update({
                f"integration_us_per_step{suffix}": alone / steps * 1e6,
                f"outputs_us_per_step{suffix}": outputs, f"overhead_us{suffix}": plain,
                f"overhead_spread_us{suffix}": sp, f"overhead_file_us{suffix}": filed,
                f"overhead_file_spread_us{suffix}": sf, f"beyond_integration_us{suffix}": bare,
                f"beyond_integration_spread_us{suffix}": sb})
        out["overhead"][name] = figures
    return out


def table(results):
    lines = ["| control loop at 1 kHz | states | steps | wall (s) | real-time factor | "
             "per step (us) | integrating (us) |", "|---|---|---|---|---|---|---|"]
    for name, r in results["loops"].items():
        lines.append(f"| {name} | {r['states']} | {r['steps']} | {r['wall']:.3f} "
                     f"(+-{r['wall_spread'] / 2:.3f}) | {r['real_time_factor']:.2f} | "
                     f"{r['us_per_step']:.0f} | {r['integration_us_per_step']:.0f} |")
    lines += ["", "| model | clock | integration per step (us) | its outputs (us) | "
              "Simulator.step overhead (us) | with the result file (us) | "
              "beyond the integration alone (us) |", "|---|---|---|---|---|---|---|"]
    for name, r in results["overhead"].items():
        for suffix, clock in (("", "wall"), ("_cpu", "CPU")):
            lines.append(
                f"| {name} | {clock} | {r['integration_us_per_step' + suffix]:.1f} | "
                f"{r['outputs_us_per_step' + suffix]:.1f} | {r['overhead_us' + suffix]:.1f} "
                f"(+-{r['overhead_spread_us' + suffix] / 2:.1f}) | "
                f"{r['overhead_file_us' + suffix]:.1f} "
                f"(+-{r['overhead_file_spread_us' + suffix] / 2:.1f}) | "
                f"{r['beyond_integration_us' + suffix]:.1f} "
                f"(+-{r['beyond_integration_spread_us' + suffix] / 2:.1f}) |")
    if "first_simulator" in results:
        r = results["first_simulator"]
        lines += ["", "| first Simulator() of a process | import flexmbs (s) | Simulator() (s) | "
                  "together (s) | import numpy, scipy.linalg, numba (s) |", "|---|---|---|---|---|",
                  f"| rotary flexible link, warm kernels | {r['imports']:.2f} | "
                  f"{r['simulator']:.2f} (+-{r['simulator_spread'] / 2:.2f}) | "
                  f"{r['imports'] + r['simulator']:.2f} | {r['import_floor']:.2f} |"]
    if "input_change" in results:
        lines += ["", "| model | clock | an input changed at every step (us) | the first "
                  "held, at rest (us) | ratio |", "|---|---|---|---|---|"]
        lines += _pair_rows(results["input_change"], ("changed", "held"))
    if "same_motion" in results:
        lines += ["", "| same motion | clock | the model's own law (us) | its values given "
                  "at every step (us) | ratio |", "|---|---|---|---|---|"]
        lines += _pair_rows(results["same_motion"], ("law", "given"))
    if "input_change" in results and "changed_per_step" in next(iter(
            results["input_change"].values())):
        lines += ["", "| model | way | residuals | Newton iterations | difference "
                  "Jacobians | factorizations | re-formed from the mass |",
                  "|---|---|---|---|---|---|---|"]
        for key, names in (("input_change", ("changed", "held")),
                           ("same_motion", ("law", "given"))):
            for name, r in results.get(key, {}).items():
                for way in names:
                    c = r[f"{way}_per_step"]
                    lines.append(f"| {name} | {way} | {c['nres']:.2f} | {c['nnewton']:.2f} | "
                                 f"{c['njac']:.3f} | {c['nlu']:.3f} | {c['nmass']:.3f} |")
    return "\n".join(lines)


def _pair_rows(results, names):
    """Rows of the two ways' times per step and their ratio, on both clocks."""
    first, second = names
    rows = []
    for name, r in results.items():
        for suffix, clock in (("", "wall"), ("_cpu", "CPU")):
            rows.append(
                f"| {name} | {clock} | {r[first + '_us' + suffix]:.1f} "
                f"(+-{r[first + '_spread_us' + suffix] / 2:.1f}) | "
                f"{r[second + '_us' + suffix]:.1f} "
                f"(+-{r[second + '_spread_us' + suffix] / 2:.1f}) | "
                f"{r['ratio' + suffix]:.2f} (+-{r['ratio_spread' + suffix] / 2:.2f}) |")
    return rows


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--json", help="write the results here")
    p.add_argument("--table", help="print the tables of a results file")
    a = p.parse_args()
    if a.table:
        print(table(json.loads(Path(a.table).read_text())))
        return
    results = measure(a.rounds)
    print(table(results))
    if a.json:
        Path(a.json).write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
