"""Write rig_30deg_synthetic.csv: a SYNTHETIC experiment of the RIG, for trying
`flexmbs compare` and `flexmbs fit` until measured files are at hand.

    python data/experiments/make_synthetic_rig.py [-o FILE]

Deterministic (seeded): rerunning it writes the same file. What it does:

1. runs data/models/huang_rig.toml (the true parameters are that file's values:
   springs 0.1 N m/rad, dampers 0.098 N m s/rad at both joints, alpha = 0.00025 s,
   tip mass 0.604 kg, released at rest from theta1 = 0, theta2 = 30 deg) with bdf at
   rtol 1e-10, atol 1e-12, outputs every OUTPUT_STEP;
2. samples it at 200 Hz on a record that starts RELEASE s before the release (the
   rig held at rest: the model's initial values), DURATION s in all; the sample times
   fall on outputs of the run, so no interpolation enters;
3. turns the sensors into the raw voltages of the rig's instruments, inverting the
   calibrations of rig_30deg_synthetic.map.toml (docs/explanation/benchmark-models.md,
   RIG), and adds independent Gaussian noise of NOISE_V volts to each channel;
4. writes the CSV with a header that says all of this.
"""

import argparse
import os
from pathlib import Path

import numpy as np

from flexmbs import __version__
from flexmbs.analysis.channel_map import load_channel_map
from flexmbs.formats.toml_reader import load_model
from flexmbs.simulation import simulate

HERE = Path(__file__).resolve().parent
MODEL = HERE.parent / "models" / "huang_rig.toml"
MAP = HERE / "rig_30deg_synthetic.map.toml"
OUT = HERE / "rig_30deg_synthetic.csv"

SEED = 20240607
SAMPLE_RATE = 200  # Hz, the rig's
DURATION = 10.0  # s of record
RELEASE = 0.7135  # s: record time of the release (the simulation's t = 0)
OUTPUT_STEP = 0.0005  # s; RELEASE and 1/SAMPLE_RATE are multiples of it
RTOL, ATOL = 1e-10, 1e-12
# standard deviation of the noise added to each raw channel (V): a potentiometer read by
# a 12-bit converter over 0-5 V has steps of 1.2 mV (0.35 mV rms); the strain bridge
# amplifier's noise is taken as 5 uV rms (0.14 microstrain)
NOISE_V = {"pot1": 1e-3, "pot2": 1e-3, "bridge": 5e-6}
DIGITS = 7  # decimals of the voltages written (0.1 uV)


def synthetic_record():
    """(time (n,) s, raw channels name -> (n,) V, the header comment lines)."""
    model = load_model(MODEL)
    cmap = load_channel_map(MAP)
    n = int(round(DURATION * SAMPLE_RATE))
    per_sample = int(round(1.0 / (SAMPLE_RATE * OUTPUT_STEP)))
    release_outputs = int(round(RELEASE / OUTPUT_STEP))
    t_end = (n - 1) * per_sample * OUTPUT_STEP - RELEASE
    sim = simulate(model, None, t_end=t_end, rtol=RTOL, atol=ATOL, output_step=OUTPUT_STEP)
    if not sim.success:
        raise RuntimeError(f"the RIG run failed: {sim.message}")
    columns = _sensor_columns(model, sim)
    time = np.arange(n) / SAMPLE_RATE
    index = np.arange(n) * per_sample - release_outputs  # output row of each sample
    held = index < 0  # before the release: the initial state
    index = np.maximum(index, 0)
    assert np.allclose(sim.t[index][~held], time[~held] - RELEASE, atol=1e-9)
    noise = measurement_noise([ch.experiment for ch in cmap.channels], n)
    raw = {ch.experiment: ch.raw_from_si(columns[ch.sensor][index]) + noise[ch.experiment]
           for ch in cmap.channels}
    header = _header(cmap, n, t_end)
    return time, raw, header


def measurement_noise(channels, n):
    """The noise (V) added to each raw channel: name -> (n,), drawn in the order of
    `channels` (the map's) from the seeded generator."""
    rng = np.random.default_rng(SEED)
    return {name: rng.normal(0.0, NOISE_V[name], n) for name in channels}


def _sensor_columns(model, sim):
    """Sensor name -> (n,) values of the run, for the sensors of one value."""
    from flexmbs.model.compiled import compile_model
    cm = compile_model(model)
    starts = np.concatenate([[0], np.cumsum(cm.sensor_sizes)])
    return {name: sim.sensors[:, starts[k]] for k, (name, size)
            in enumerate(zip(cm.sensor_names, cm.sensor_sizes)) if size == 1}


def _header(cmap, n, t_end):
    lines = [
        "SYNTHETIC EXPERIMENT - not measured. Written by data/experiments/"
        f"make_synthetic_rig.py (flexmbs {__version__}), seed {SEED}.",
        "Model: data/models/huang_rig.toml (RIG, Huang chapter 4), run with bdf, "
        f"rtol {RTOL:g}, atol {ATOL:g}, for {t_end:g} s.",
        "True parameters: joint1 and joint2 stiffness 0.1 N m/rad, damping 0.098 N m s/rad; "
        "link2 alpha 0.00025 s; tip mass 0.604 kg;",
        "  released at rest from theta1 = 0, theta2 = 30 deg (0.5235987755982988 rad).",
        f"Time offset: the release (the simulation's t = 0) is at t = {RELEASE} s of this "
        "record; before it the rig is held at rest.",
        "Channels: raw voltages through the RIG instruments (calibrations of "
        "rig_30deg_synthetic.map.toml):",
        "  pot1:   theta1 = (1.27 - V) * 100 deg",
        "  pot2:   theta2 = (V - 1.26) * 115 deg",
        "  bridge: strain = V / 36.7 - 0.00007 (bending strain at the clamped end of link 2, "
        "tube surface)",
        "Noise: independent Gaussian per sample, standard deviation "
        + ", ".join(f"{k} {v:g} V" for k, v in NOISE_V.items())
        + f"; voltages rounded to {10.0 ** -DIGITS:g} V.",
        f"Sampling: {SAMPLE_RATE} Hz, {n} samples, {DURATION:g} s.",
    ]
    return lines


def write_csv(path, time, raw, header):
    names = list(raw)
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        for line in header:
            f.write(f"# {line}\n")
        f.write("time [s]," + ",".join(f"{n} [V]" for n in names) + "\n")
        for k in range(len(time)):
            f.write(f"{time[k]:.3f}," + ",".join(f"{raw[n][k]:.{DIGITS}f}" for n in names)
                    + "\n")


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("-o", "--output", default=str(OUT), help=f"CSV file (default {OUT.name})")
    args = p.parse_args()
    time, raw, header = synthetic_record()
    write_csv(args.output, time, raw, header)
    print(f"wrote {os.path.relpath(args.output)}: {len(time)} samples")


if __name__ == "__main__":
    main()
