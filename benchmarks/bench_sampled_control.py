"""A 1 kHz sampled controller against the same loop run continuously.

The rig of docs/guides/test-rig.md (data/models/flexible_link_rig.toml: a DC servo,
a hub in stick-slip bearings, a clamped steel ruler with a tip mass) run over its
2.4 s record in four forms:

* "continuous": the controller continuous, on the hub's coordinate and rate (a
  continuous controller reads joint coordinates and rates: the gauge's input is left
  out);
* "sampled, joint inputs": the same inputs sampled at 1 kHz, held, one sample late;
* "rig": the model file as it is (the encoder's counts, the gauge 4 ms late and its
  differences, at 1 kHz);
* "rigid ruler, continuous" and "rigid ruler, sampled": the first two with the ruler
  a rigid body of its mass (and no gauge): what a sample costs where no elastic mode
  rings after its jump;
* "rig, restart per sample": the rig with every sample a restart of the integrator
  (a new BDF driver at order 1 from its first step), the way runs went before a held
  input's jump was carried across (one round: it is slow).

The held breakpoints carry BDF's history, order, step and iteration matrix across
the jump (flexmbs.solvers.bdf_integrator, bdf_kernels.bdf_carry_jump), and the steps
of a sample are equal and the same from sample to sample (bdf_kernels._aligned_step).
Each figure is the median of --rounds interleaved rounds of `simulate` (the model
compiled, the kernels warm), on the wall clock and in the process's CPU time, at the
model's tolerance (rtol 1e-6) and at 1e-8; the ratio is against "continuous" of the
same round. "Python between the step loops" is the integrator's time outside the
drivers' compiled step loops and carries (statistics' wall_time less
step_loop_time: each sample's return to Python, its controller's update, the
jump's right-hand sides; its share of the run's wall clock times the run's CPU
time), and "the ratio without it" the CPU ratio less that time: how far a sample
loop run inside the compiled step loop would go.

    .venv/bin/python benchmarks/bench_sampled_control.py
    .venv/bin/python benchmarks/bench_sampled_control.py \
        --json benchmarks/results/sampled_control.json
    .venv/bin/python benchmarks/bench_sampled_control.py \
        --table benchmarks/results/sampled_control.json
"""

import argparse
import json
import os
import platform
import re
import tempfile
import time
from pathlib import Path

import numpy as np

import flexmbs
from flexmbs.simulation import sampled_control

MODEL = Path(__file__).resolve().parents[1] / "data" / "models" / "flexible_link_rig.toml"
GAUGE_INPUT = '[[controllers.servo.inputs]]\nsensor = "tip"'


def _joint_inputs(text):
    """The model text with the controller on the hub's coordinate instead of the
    encoder, and without the gauge's input."""
    text = text.replace('sensor = "encoder"\ngain = 20.0', 'joint = "shaft"\ngain = 20.0')
    return text[: text.index(GAUGE_INPUT)]


RIGID_RULER = """[bodies.ruler]
mass = 0.1
com = [0.225, 0.0, 0.0]
inertia = [1e-5, 2e-3, 2e-3]
inertia_about = "com"

"""


def _rigid_ruler(text):
    """The model text with the ruler a rigid body and without the gauge."""
    text = text[: text.index("[bodies.ruler]")] + RIGID_RULER + text[text.index("[joints.shaft]") :]
    return text[: text.index("[sensors.tip]")] + text[text.index("[controllers.servo]") :]


def variants(text):
    """{name: model text} of the forms compared (module text)."""
    joint = _joint_inputs(text)
    continuous = re.sub(r"sample_time = .*\n", "", joint)
    continuous = re.sub(r"delay = .*\n", "", continuous)
    return {
        "continuous": continuous,
        "sampled, joint inputs": joint,
        "rig": text,
        "rigid ruler, continuous": _rigid_ruler(continuous),
        "rigid ruler, sampled": _rigid_ruler(joint),
    }


def with_tolerance(text, rtol, atol):
    text = re.sub(r"\nrtol = .*\n", f"\nrtol = {rtol}\n", text)
    return re.sub(r"\natol = .*\n", f"\natol = {atol}\n", text)


def run(text, folder, name):
    """(wall s, CPU s, statistics) of one `simulate` of the model text."""
    path = Path(folder) / f"{name.replace(' ', '_').replace(',', '')}.toml"
    path.write_text(text)
    model = flexmbs.load_model(str(path))
    wall, cpu = time.perf_counter(), time.process_time()
    sim = flexmbs.simulate(model, str(path.with_suffix(".h5")), progress=False)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    if not sim.success:
        raise RuntimeError(f"{name}: {sim.message}")
    st = sim.statistics
    keep = ("nsteps", "nrejected", "nres", "njac", "nlu", "nnewton", "breakpoints", "held_jumps")
    return (
        wall,
        cpu,
        {k: int(st[k]) for k in keep if k in st}
        | {
            "order_counts": [int(v) for v in st["order_counts"]],
            "integration_s": float(st["wall_time"]),
            "step_loop_s": float(st["step_loop_time"]),
            "hub_end_rad": float(sim.sensor("hub")[-1]),
        },
    )


def restarting(text, folder, name):
    """`run` with no held breakpoint: every sample a restart (as before)."""
    keep = sampled_control.SampledControllers.held_breakpoints
    sampled_control.SampledControllers.held_breakpoints = lambda self, own: np.zeros(0)
    try:
        return run(text, folder, name)
    finally:
        sampled_control.SampledControllers.held_breakpoints = keep


def markdown_table(result):
    """The markdown table of a results file (docs/guides/solvers.md)."""
    lines = [
        "| rtol | the rig's controller | steps | at orders 4-5 | Newton iterations | "
        "CPU (s) | against its continuous peer | Python between the step loops (s) | "
        "the ratio without it |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for rtol, rows in result["tolerances"].items():
        for name, row in rows.items():
            high = sum(row["order_counts"][3:])
            lines.append(
                f"| {rtol} | {name} | {row['nsteps']} | {high} | {row.get('nnewton', '')} | "
                f"{row['cpu_s']:.2f} | {row['cpu_ratio']:.2f} | "
                f"{row.get('python_between_loops_s', float('nan')):.2f} | "
                f"{row.get('cpu_ratio_without_it', float('nan')):.2f} |"
            )
    return "\n".join(lines)


def main():
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--json", help="write the results here")
    p.add_argument("--table", help="print the table of this results file and stop")
    a = p.parse_args()
    if a.table:
        print(markdown_table(json.loads(Path(a.table).read_text())))
        return
    text = MODEL.read_text()
    result = {
        "machine": platform.platform(),
        "cpus": os.cpu_count(),
        "load_before": os.getloadavg()[0],
        "rounds": a.rounds,
        "tolerances": {},
    }
    with tempfile.TemporaryDirectory() as folder:
        for rtol, atol in ((1e-6, 1e-8), (1e-8, 1e-10)):
            forms = {k: with_tolerance(v, rtol, atol) for k, v in variants(text).items()}
            for name, t in forms.items():  # warm: compiled kernels, imports
                run(
                    with_tolerance(t, rtol, atol).replace("t_end = 2.4", "t_end = 0.05"),
                    folder,
                    name,
                )
            rows = {name: [] for name in forms}
            for _ in range(a.rounds):
                for name, t in forms.items():
                    rows[name].append(run(t, folder, name))
            rows["rig, restart per sample"] = [restarting(forms["rig"], folder, "restart")]
            table = {}
            for name, rs in rows.items():
                peer = "rigid ruler, continuous" if name.startswith("rigid") else "continuous"
                base_wall = np.array([r[0] for r in rows[peer]])
                base_cpu = np.array([r[1] for r in rows[peer]])
                wall = np.array([r[0] for r in rs])
                cpu = np.array([r[1] for r in rs])
                k = len(rs)
                # its share of the wall clock, applied to the CPU time (a loaded machine
                # stretches the wall clock of both alike)
                between = cpu * np.array(
                    [(r[2]["integration_s"] - r[2]["step_loop_s"]) / r[0] for r in rs]
                )
                table[name] = {
                    "wall_s": float(np.median(wall)),
                    "cpu_s": float(np.median(cpu)),
                    "wall_spread_s": float(wall.max() - wall.min()),
                    "cpu_spread_s": float(cpu.max() - cpu.min()),
                    "wall_ratio": float(np.median(wall / base_wall[:k])),
                    "cpu_ratio": float(np.median(cpu / base_cpu[:k])),
                    "python_between_loops_s": float(np.median(between)),
                    "cpu_ratio_without_it": float(np.median((cpu - between) / base_cpu[:k])),
                } | rs[-1][2]
                print(
                    f"rtol {rtol:g}  {name:26s} wall {table[name]['wall_s']:7.3f} s "
                    f"cpu {table[name]['cpu_s']:7.3f} s  cpu ratio "
                    f"{table[name]['cpu_ratio']:5.2f}  steps {table[name]['nsteps']}  "
                    f"orders {table[name]['order_counts']}  between loops "
                    f"{table[name]['python_between_loops_s']:.3f} s"
                )
            result["tolerances"][f"{rtol:g}"] = table
    result["load_after"] = os.getloadavg()[0]
    if a.json:
        Path(a.json).write_text(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
