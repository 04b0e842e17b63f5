"""Write servo_synthetic.csv: a SYNTHETIC record of the rotary flexible link under
its digital servo (data/models/flexible_link_rig.toml), for the how-to
"Modelling a test rig" and the fit of its friction and its motor.

    python data/experiments/make_servo_record.py [-o FILE]

Deterministic (seeded). What it does:

1. runs the model with its own values (the TRUE parameters: bearings' Coulomb
   friction 0.012 N m, static 0.016 N m, viscous 0.002 N m s/rad; the DC motor's
   torque constant 0.25 N m/A and armature resistance 5 ohm) with bdf at rtol RTOL,
   outputs every 1 ms, through the model's own set-point: a speed sweep (ramps at
   +2, -4 and +1 rad/s, then a hold), so that the hub turns at many speeds both ways
   and the record tells the viscous friction, which grows with the speed, from the
   Coulomb friction, which does not;
2. records the hub angle as its encoder gives it (4096 counts a turn: the record
   is quantized to 1.53 mrad) and the tip deflection as its gauge gives it (the
   model's 4 ms dead time, Gaussian noise of TIP_NOISE, printed to TIP_DIGITS),
   at 1 kHz, the record starting LEAD s before the run (the rig at rest);
3. writes the CSV with a header that says all of this.
"""

import argparse
import math
from pathlib import Path

import numpy as np

from flexmbs import __version__
from flexmbs.formats.toml_reader import load_model
from flexmbs.simulation import simulate

HERE = Path(__file__).resolve().parent
MODEL = HERE.parent / "models" / "flexible_link_rig.toml"
OUT = HERE / "servo_synthetic.csv"

SEED = 20251127
RTOL, ATOL = 1e-9, 1e-11
LEAD = 0.05  # s of rest recorded before the run's t = 0
COUNT = 2 * math.pi / 4096  # rad, the encoder's count
TIP_NOISE = 0.02  # mm, standard deviation of the gauge's noise
TIP_DIGITS = 3  # decimals of the tip deflection written (1 um)


def synthetic_record():
    """(time (n,) s, columns name -> (n,), header lines)."""
    model = load_model(MODEL)
    sim = simulate(model, None, rtol=RTOL, atol=ATOL, progress=False)
    if not sim.success:
        raise RuntimeError(f"the run failed: {sim.message}")
    hub = sim.sensor("hub")
    tip = sim.sensor("tip")[:, 1] * 1e3  # mm
    lead = int(round(LEAD * 1e3))
    hub = np.concatenate([np.full(lead, hub[0]), hub])
    tip = np.concatenate([np.full(lead, tip[0]), tip])
    time = np.arange(len(hub)) * 1e-3
    rng = np.random.default_rng(SEED)
    encoder = COUNT * np.round(hub / COUNT)
    gauge = np.round(tip + TIP_NOISE * rng.normal(size=len(tip)), TIP_DIGITS)
    header = [
        "SYNTHETIC RECORD - not measured. Written by data/experiments/"
        f"make_servo_record.py (flexmbs {__version__}), seed {SEED}.",
        f"Model: data/models/flexible_link_rig.toml with its own values, bdf at rtol "
        f"{RTOL:g}, atol {ATOL:g}, {sim.t[-1]:g} s.",
        "True parameters: frictions.bearings coulomb 0.012 N m, static 0.016 N m, "
        "viscous 0.002 N m s/rad; actuators.motor torque_constant 0.25 N m/A, "
        "resistance 5 ohm.",
        "Set-point of the hub: the model's speed sweep (ramps at +2, -4 and +1 rad/s "
        "from 0.1 s to 1.6 s, then held at -0.4 rad).",
        f"Time: the run's t = 0 is at t = {LEAD} s of this record; before it the rig rests.",
        f"encoder: the hub angle, rad, rounded to the encoder's count 2 pi / 4096 = "
        f"{COUNT:.6g} rad.",
        f"gauge: the tip deflection, mm, 4 ms late (the model's dead time), Gaussian noise "
        f"{TIP_NOISE} mm, printed to {10.0 ** -TIP_DIGITS:g} mm.",
        f"Sampling: 1 kHz, {len(time)} samples.",
    ]
    return time, {"encoder": encoder, "gauge": gauge}, header


def write_csv(path, time, columns, header, gauge_digits=TIP_DIGITS):
    """The record as CSV: its header as comment lines, then time, encoder and gauge."""
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        for line in header:
            f.write(f"# {line}\n")
        f.write("time [s],encoder [rad],gauge [mm]\n")
        for k, t in enumerate(time):
            f.write(f"{t:.3f},{columns['encoder'][k]:.9f},{columns['gauge'][k]:.{gauge_digits}f}\n")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-o", "--output", default=str(OUT))
    args = parser.parse_args()
    write_csv(args.output, *synthetic_record())
    print(f"wrote {args.output}")


if __name__ == "__main__":
    main()
