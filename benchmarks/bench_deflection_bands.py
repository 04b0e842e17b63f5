"""Where a flexible four-bar's deflection differences lie in frequency: `galpha` and
`bdf` against `bdf` at a tight tolerance, band by band.

The flexible four-bar (data/models/four_bar_flexible.toml) has no damping: its coupler
rings at every mode from the release on. `galpha` damps the modes its steps do not
resolve; `bdf` follows them. The largest difference of a deflection over time mixes
the two, so this benchmark splits it by frequency.

Method. Each run covers the first --t-end (0.05 s) with outputs every --sample
(10 us, far above the axial mode's 6.4 kHz). The coupler's middle-node deflection, in
the coupler's frame, is split into its in-plane bending (z) and axial (x) parts; the
difference of each from the reference is band-passed by the discrete Fourier
transform (bands BANDS, Hz) and its largest magnitude over time is reported relative
to the reference's largest magnitude of that part. The reference's own content per
band (its RMS, same scale) says how much of the signal lies there. Joint angles: the
largest difference (rad). Counters and integration time from each run's statistics.

    python benchmarks/bench_deflection_bands.py --json benchmarks/results/deflection_bands.json
    python benchmarks/bench_deflection_bands.py --table benchmarks/results/deflection_bands.json
"""

import argparse
import sys
from pathlib import Path

import numpy as np
from peers import begin, finish, log

from flexmbs.formats.toml_reader import load_model
from flexmbs.simulation import simulate

MODEL = Path(__file__).resolve().parents[1] / "data/models/four_bar_flexible.toml"
BANDS = [(0.0, 500.0), (500.0, 1e3), (1e3, 3e3), (3e3, 1e4), (1e4, np.inf)]
REFERENCE = ("bdf", 1e-8, None)
RUNS = [("bdf", 1e-6, None), ("galpha", 1e-4, 0.9), ("galpha", 1e-5, 0.9),
        ("galpha", 1e-5, 1.0), ("galpha", 1e-6, 0.9)]
JOINTS = slice(0, 2)      # sensors crank, rocker
AXIAL, BENDING = 5, 7     # sensor "bending": the middle node's (x, y, z) in the coupler


def label(config):
    method, rtol, rho = config
    return f"{method} rtol {rtol:.0e}" + ("" if rho is None else f", rho {rho:g}")


def run(config, t_end, sample):
    method, rtol, rho = config
    extra = {} if rho is None else {"rho_inf": rho}
    sim = simulate(load_model(MODEL), None, method=method, rtol=rtol, atol=rtol * 1e-2,
                   t_end=t_end, output_step=sample, **extra)
    st = sim.statistics
    r = {"label": label(config), "config": list(config), "status": sim.status,
         "steps": int(st["nsteps"]), "residuals": int(st["nres"]),
         "jacobians": int(st["njac"]), "reformed": int(st.get("nmass", 0)),
         "wall": float(st["wall_time"])}
    return r, np.asarray(sim.sensors)


def band(x, dt, lo, hi):
    """x band-passed to lo <= f < hi (Hz) by the discrete Fourier transform."""
    spectrum = np.fft.rfft(x)
    f = np.fft.rfftfreq(len(x), dt)
    spectrum[(f < lo) | (f >= hi)] = 0.0
    return np.fft.irfft(spectrum, len(x))


def split(diff, ref, dt):
    scale = np.abs(ref).max()
    return [float(np.abs(band(diff, dt, lo, hi)).max() / scale) for lo, hi in BANDS]


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--t-end", type=float, default=0.05)
    p.add_argument("--sample", type=float, default=1e-5)
    started = begin(p, table)
    if started is None:
        return
    a, info, start = started
    ref, rs = run(REFERENCE, a.t_end, a.sample)
    log(f"reference {ref['label']}: {ref['steps']} steps, {ref['wall']:.2f} s")
    dt = a.sample
    ref["content"] = {name: [float(np.sqrt(np.mean(band(rs[:, c], dt, lo, hi) ** 2))
                                   / np.abs(rs[:, c]).max()) for lo, hi in BANDS]
                      for name, c in (("bending", BENDING), ("axial", AXIAL))}
    out = {"machine": info, "command": " ".join(sys.argv[1:]), "t_end": a.t_end,
           "sample": a.sample, "bands": [[lo, None if np.isinf(hi) else hi]
                                         for lo, hi in BANDS],
           "reference": ref, "runs": []}
    for config in RUNS:
        r, s = run(config, a.t_end, a.sample)
        r["joints_diff"] = float(np.abs(s[:, JOINTS] - rs[:, JOINTS]).max())
        for name, c in (("bending", BENDING), ("axial", AXIAL)):
            r[f"{name}_diff"] = float(np.abs(s[:, c] - rs[:, c]).max()
                                      / np.abs(rs[:, c]).max())
            r[f"{name}_bands"] = split(s[:, c] - rs[:, c], rs[:, c], dt)
        out["runs"].append(r)
        log(f"{r['label']}: {r['steps']} steps, {r['wall']:.2f} s, joints "
            f"{r['joints_diff']:.1e}, bending {r['bending_diff']:.1e} "
            + " ".join(f"{v:.1e}" for v in r["bending_bands"]))
    finish(a, out, start, table)


def _band_name(lo, hi):
    return f"{lo / 1e3:g}-{hi / 1e3:g} kHz" if hi is not None else f"> {lo / 1e3:g} kHz"


def table(results):
    names = [_band_name(lo, hi) for lo, hi in results["bands"]]
    ref = results["reference"]
    lines = [f"Flexible four-bar, first {results['t_end']:g} s sampled every "
             f"{results['sample']:g} s; reference {ref['label']} ({ref['steps']} steps, "
             f"{ref['wall']:.2f} s). Bending: the coupler middle node's in-plane "
             "deflection; each band's largest difference over its largest value.",
             "",
             "| run | steps | s | joints (rad) | bending | axial | "
             + " | ".join(f"bending {n}" for n in names) + " |",
             "|---|---|---|---|---|---|" + "---|" * len(names),
             "| reference content (RMS) | | | | | | "
             + " | ".join(f"{v:.1e}" for v in ref["content"]["bending"]) + " |"]
    for r in results["runs"]:
        lines.append(f"| {r['label']} | {r['steps']} | {r['wall']:.2f} | "
                     f"{r['joints_diff']:.1e} | {r['bending_diff']:.1e} | "
                     f"{r['axial_diff']:.1e} | "
                     + " | ".join(f"{v:.1e}" for v in r["bending_bands"]) + " |")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
