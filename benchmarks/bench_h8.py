"""H8, the eight-link tree under PD control (docs/explanation/benchmark-models.md), 5 s from
data/models/huang_eight_link.toml: the final joint errors against the targets, the
largest tip deflections of links 1 and 2 in their frames, the wall time, the energy
balance with the motors' work; the plot docs/h8.png. With --h2, the PD-driven H2 of
examples/h2_strain_feedback.py (5 s, without and with the strain feedback): its energy
balance and tip vibration.

    .venv/bin/python benchmarks/bench_h8.py
    .venv/bin/python benchmarks/bench_h8.py --h2 --json benchmarks/results/h8.json --plot
    docs/h8.png
    .venv/bin/python benchmarks/bench_h8.py --table benchmarks/results/h8.json
"""

import argparse
import importlib.util
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path

import numpy as np
from peers import add_results_options, printed_table

from flexmbs.formats.toml_reader import load_model
from flexmbs.model.library import H8_TARGETS
from flexmbs.simulation import simulate

ROOT = Path(__file__).resolve().parents[1]
MODEL = ROOT / "data" / "models" / "huang_eight_link.toml"
JOINT_SENSORS = 10
ENERGY_NAMES = ("kinetic", "gravity", "strain", "spring", "dissipated")


def balance(sim):
    """(max |E - E0|, the largest energy term's size and name); the terms are
    sim.energy's first five columns (the others are parts of the strain energy)."""
    e = sim.energy[:, :len(ENERGY_NAMES)]
    total = e[:, 0] + e[:, 1] + e[:, 2] + e[:, 3] - e[:, 4]
    sizes = np.abs(e).max(axis=0)
    k = int(np.argmax(sizes))
    return float(np.abs(total - total[0]).max()), float(sizes[k]), ENERGY_NAMES[k]


def run_h8(t_end, rtol, atol, repeat):
    model = load_model(MODEL)
    walls, sim = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        sim = simulate(model, None, t_end=t_end, rtol=rtol, atol=atol)
        walls.append(time.perf_counter() - start)
    targets = np.concatenate([np.atleast_1d(H8_TARGETS[f"joint{k}"]) for k in range(1, 9)])
    names = list(load_model(MODEL).sensors)[:JOINT_SENSORS]
    final = sim.sensors[-1, :JOINT_SENSORS]
    tips = sim.sensors[:, JOINT_SENSORS:JOINT_SENSORS + 6].reshape(-1, 2, 3)
    drift, largest, largest_name = balance(sim)
    row = {"status": sim.status, "wall": statistics.median(walls), "walls": walls,
           "nsteps": int(sim.statistics["nsteps"]), "nres": int(sim.statistics["nres"]),
           "joints": names, "final": final.tolist(), "targets": targets.tolist(),
           "errors": (final - targets).tolist(),
           "max_tip_deflection": {}, "drift": drift, "largest_energy": largest,
           "largest_energy_term": largest_name, "balance": drift / largest,
           "max_strain": float(sim.energy[:, 2].max())}
    print(f"H8, {t_end:g} s, rtol {rtol:g}, atol {atol:g}: {sim.status}; wall "
          f"{row['wall']:.2f} s (median of {repeat}), {row['nsteps']} steps")
    print("joint      final      target     error")
    for name, f, t in zip(names, final, targets):
        unit = "m" if name.startswith("d") else "rad"
        print(f"{name:9s} {f:+9.5f}  {t:+9.5f}  {f - t:+9.5f} {unit}")
    for k in range(2):
        d = tips[:, k]
        at = int(np.argmax(np.linalg.norm(d, axis=1)))
        comp = np.abs(d).max(axis=0)
        row["max_tip_deflection"][f"link{k + 1}"] = {
            "x": float(comp[0]), "y": float(comp[1]), "z": float(comp[2]),
            "norm": float(np.linalg.norm(d[at])), "t": float(sim.t[at])}
        size = 1e3 * np.linalg.norm(d[at])
        print(f"tip of link {k + 1}: largest |deflection| {size:.2f} mm "
              f"at t = {sim.t[at]:.2f} s; largest components x, y, z (link-{k + 1} axes) "
              f"{1e3 * comp[0]:.4f}, {1e3 * comp[1]:.2f}, {1e3 * comp[2]:.2f} mm")
    print(f"energy balance: max |E - E0| = {drift:.2e} J, {drift / largest:.1e} of the "
          f"largest term ({largest_name}, {largest:.3f} J); max strain energy "
          f"{row['max_strain']:.4f} J")
    return row, sim


def run_h2(t_end):
    """The PD-driven H2 of the strain-feedback example, without and with the law."""
    spec = importlib.util.spec_from_file_location(
        "h2_strain_feedback", ROOT / "examples" / "h2_strain_feedback.py")
    example = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = example
    spec.loader.exec_module(example)
    rows = []
    for gain in (0.0, 1e4):
        start = time.perf_counter()
        sim = simulate(example.controlled_h2(gain), None, t_end=t_end)
        wall = time.perf_counter() - start
        drift, largest, name = balance(sim)
        rows.append({"gain": gain, "status": sim.status, "wall": wall,
                     "nsteps": int(sim.statistics["nsteps"]), "drift": drift,
                     "largest_energy": largest, "largest_energy_term": name,
                     "balance": drift / largest,
                     "tip_vibration": example.tip_vibration(sim)})
        print(f"PD-driven H2, {t_end:g} s, strain feedback k_s = {gain:g} N m: "
              f"{sim.status}; wall {wall:.1f} s; energy balance {drift:.2e} J, "
              f"{drift / largest:.1e} of the largest term ({name}, {largest:.3f} J); tip "
              f"vibration over the last 0.5 s {1e3 * rows[-1]['tip_vibration']:.5f} mm")
    return rows


def plot(sim, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    names = list(load_model(MODEL).sensors)
    targets = np.concatenate([np.atleast_1d(H8_TARGETS[f"joint{k}"]) for k in range(1, 9)])
    fig, axes = plt.subplots(2, 2, figsize=(11, 7.5), constrained_layout=True)
    ax = axes[0, 0]
    for k in range(JOINT_SENSORS):
        if k == 2:
            continue
        line, = ax.plot(sim.t, sim.sensors[:, k], label=names[k])
        ax.axhline(targets[k], color=line.get_color(), ls=":", lw=0.8)
    ax.set(xlabel="t (s)", ylabel="rad", title="joint angles (dotted: targets)")
    ax.legend(ncol=3, fontsize=7)
    ax = axes[0, 1]
    ax.plot(sim.t, 1e3 * sim.sensors[:, 2], label="d3")
    ax.axhline(1e3 * targets[2], ls=":", lw=0.8)
    ax.set(xlabel="t (s)", ylabel="mm", title="prismatic joint 3 (dotted: target)")
    ax = axes[1, 0]
    tips = sim.sensors[:, JOINT_SENSORS:JOINT_SENSORS + 6].reshape(-1, 2, 3)
    for k in range(2):
        for c, axis in ((1, "y"), (2, "z")):
            ax.plot(sim.t, 1e3 * tips[:, k, c], label=f"link {k + 1}, {axis}")
    ax.set(xlabel="t (s)", ylabel="mm", title="tip deflections in the links' frames")
    ax.legend(fontsize=7)
    ax = axes[1, 1]
    e = sim.energy
    for k, name in enumerate(ENERGY_NAMES):
        if name != "spring":
            ax.plot(sim.t, e[:, k], label=name if name != "dissipated" else "W_nc")
    total = e[:, 0] + e[:, 1] + e[:, 2] + e[:, 3] - e[:, 4]
    ax.plot(sim.t, total - total[0], "k", lw=1.5, label="E - E0")
    ax.set(xlabel="t (s)", ylabel="J", title="energies (kinetic includes the rotors)")
    ax.legend(fontsize=7)
    fig.suptitle("H8: eight-link tree, PD motors on every joint (flexmbs)")
    fig.savefig(path, dpi=90)
    print(f"plot: {path}")


def _signed(x):
    """A joint error: four decimals from 0.01 on, else two significant digits."""
    if abs(x) >= 0.01:
        return f"{x:+.4f}"
    mantissa, exponent = f"{x:+.1e}".split("e")
    return f"{mantissa}e{int(exponent)}"


def _columns(names):
    """The joints grouped as the table shows them: theta4x, theta4y, theta4z are one
    column, "theta4 x, y, z"; (heading, indices) each."""
    columns = []
    for k, name in enumerate(names):
        base, axis = (name[:-1], name[-1]) if name[-1] in "xyz" else (name, "")
        if axis and columns and columns[-1][0] == base:
            columns[-1][1].append(k)
            columns[-1][2].append(axis)
        else:
            columns.append((base, [k], [axis] if axis else []))
    return [(f"{base} {', '.join(axes)}" if axes else
             base + (" (m)" if base.startswith("d") else ""), ks)
            for base, ks, axes in columns]


def table(results):
    """The documentation's table: H8's joints at the end of the run against their
    targets."""
    h8 = results["h8"]
    columns = _columns(h8["joints"])

    def row(label, values, fmt):
        return (f"| {label} | "
                + " | ".join(", ".join(fmt(values[k]) for k in ks) for _, ks in columns)
                + " |")

    return "\n".join([
        "| joint | " + " | ".join(heading for heading, _ in columns) + " |",
        "|---|" + "---|" * len(columns),
        row("target", h8["targets"], lambda x: f"{x:g}"),
        row("at 5 s", h8["final"], lambda x: f"{x:.5f}"),
        row("error", h8["errors"], _signed)])


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--t-end", type=float, default=5.0)
    p.add_argument("--rtol", type=float, default=1e-8)
    p.add_argument("--atol", type=float, default=1e-10)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--h2", action="store_true", help="also the PD-driven H2 (5 s)")
    p.add_argument("--plot", default=str(ROOT / "docs" / "h8.png"))
    add_results_options(p)
    a = p.parse_args()
    if printed_table(a, table):
        return
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, python "
          f"{platform.python_version()}")
    simulate(load_model(MODEL), None, t_end=0.01)  # warm the kernels
    row, sim = run_h8(a.t_end, a.rtol, a.atol, a.repeat)
    h2 = run_h2(a.t_end) if a.h2 else []
    if a.plot:
        plot(sim, a.plot)
    if a.json:
        Path(a.json).write_text(json.dumps({"machine": platform.platform(), "h8": row,
                                            "h2_pd": h2}, indent=1))


if __name__ == "__main__":
    main()
