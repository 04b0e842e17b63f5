"""Write servo_soft.csv and servo_stiff.csv: two SYNTHETIC records of the geared rig
(data/models/flexible_link_rig_geared.toml) under two gains of its servo, for the fit
of both at once in the how-to "Modelling a test rig" (data/experiments/servo.fit.toml).

    python data/experiments/make_servo_records.py [-o FOLDER] [--t-end T]

Deterministic (seeded). What it does, for each record:

1. runs the model with its own values (the TRUE parameters: bearings' Coulomb
   friction 0.012 N m, static 0.016 N m, viscous 0.002 N m s/rad; the DC motor's
   torque constant 0.25 N m/A; the gear's play 0.004 rad) and the record's own
   settings (RECORDS: the encoder's gain of the servo, 15 or 25 V/rad, and the
   motor's angle at the start), with bdf at rtol RTOL, outputs every 1 ms, through
   the model's speed sweep of the set-point, to T_END;
2. records the motor's angle as its encoder gives it (4096 counts a turn) and the tip
   deflection as its gauge gives it (the model's 4 ms dead time and 1 ms lag, Gaussian
   noise of TIP_NOISE, rounded to the acquisition's 1 um step), at 1 kHz, the record
   starting LEAD s before the run (the rig at rest);
3. writes the CSV with a header that says all of this.
"""

import argparse
import math
from pathlib import Path

import numpy as np
from make_servo_record import write_csv

from flexmbs import __version__
from flexmbs.formats.toml_reader import load_model
from flexmbs.simulation import simulate

HERE = Path(__file__).resolve().parent
MODEL = HERE.parent / "models" / "flexible_link_rig_geared.toml"
RECORDS = {  # name: (seed, the record's model settings)
    "soft": (20251203, ["controllers.servo.inputs.0.gain=15.0"]),
    "stiff": (20251204, ["controllers.servo.inputs.0.gain=25.0", "joints.shaft.initial=0.1"]),
}
RTOL, ATOL = 1e-10, 1e-12
T_END = 1.7  # s of run recorded
LEAD = 0.05  # s of rest recorded before the run's t = 0
COUNT = 2 * math.pi / 4096  # rad, the encoder's count
TIP_NOISE = 0.02  # mm, standard deviation of the gauge's noise
TIP_STEP = 1e-3  # mm, the acquisition's step (the model's tip resolution, 1 um)


def synthetic_record(name, t_end=T_END):
    """(time (n,) s, columns name -> (n,), header lines) of record `name`."""
    seed, settings = RECORDS[name]
    # the gauge's noise goes in before the acquisition's rounding: the run's tip is
    # taken unrounded, and rounded here
    model = load_model(MODEL, settings + ["sensors.tip.resolution=0.0"])
    sim = simulate(model, None, t_end=t_end, rtol=RTOL, atol=ATOL, progress=False)
    if not sim.success:
        raise RuntimeError(f"the run failed: {sim.message}")
    motor = sim.sensor("encoder")
    tip = sim.sensor("tip")[:, 1] * 1e3  # mm
    lead = int(round(LEAD * 1e3))
    motor = np.concatenate([np.full(lead, motor[0]), motor])
    tip = np.concatenate([np.full(lead, tip[0]), tip])
    time = np.arange(len(motor)) * 1e-3
    rng = np.random.default_rng(seed)
    gauge = TIP_STEP * np.round((tip + TIP_NOISE * rng.normal(size=len(tip))) / TIP_STEP)
    header = [
        f"SYNTHETIC RECORD - not measured. Written by data/experiments/make_servo_records.py "
        f"(flexmbs {__version__}), record {name}, seed {seed}.",
        f"Model: data/models/flexible_link_rig_geared.toml with {', '.join(settings)}, bdf "
        f"at rtol {RTOL:g}, atol {ATOL:g}, {sim.t[-1]:g} s.",
        "True parameters: frictions.bearings coulomb 0.012 N m, static 0.016 N m, viscous "
        "0.002 N m s/rad; actuators.motor torque_constant 0.25 N m/A, resistance 5 ohm; "
        "backlashes.gear gap 0.004 rad, stiffness 400 N m/rad.",
        f"Time: the run's t = 0 is at t = {LEAD} s of this record; before it the rig rests.",
        "encoder: the motor's angle, rad, as its encoder gives it (2 pi / 4096 = "
        f"{COUNT:.6g} rad a count).",
        f"gauge: the tip deflection, mm, 4 ms late and through a 1 ms lag (the model's), "
        f"Gaussian noise {TIP_NOISE} mm, rounded to {TIP_STEP:g} mm.",
        f"Sampling: 1 kHz, {len(time)} samples.",
    ]
    return time, {"encoder": motor, "gauge": gauge}, header


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-o", "--output", default=str(HERE), help="folder of the records")
    parser.add_argument("--t-end", type=float, default=T_END, help="s of run recorded")
    args = parser.parse_args()
    for name in RECORDS:
        path = Path(args.output) / f"servo_{name}.csv"
        write_csv(path, *synthetic_record(name, args.t_end))
        print(f"wrote {path}")


if __name__ == "__main__":
    main()
