"""State feedback on a rotary flexible link, in Python at 1 kHz.

The rig of examples/rotary_flexible_link.toml: a hub on a geared DC servo turns a
steel ruler; the controller sets the amplifier's voltage. Its design: linearize the
model at rest (flexmbs.linearize), take its state-space form with the servo's
voltage as input (Linearization.to_statespace, python-control) and compute the
linear-quadratic regulator that moves the hub while keeping the ruler's tip still
(control.lqr). Its run: flexmbs.Simulator steps the nonlinear model 1 ms at a time,
the controller reading the state (the hub's angle and the ruler's modal amplitudes,
and their rates) and holding the voltage u = -K (x - x_ref) over the step. The same
move under a PD on the hub alone, tuned to the same rise, leaves the ruler ringing.

    .venv/bin/python examples/rotary_flexible_link.py [--t-end 3] [--figure PATH]

prints the residual vibration of the tip after each move, the real-time factor of the
loop, and the Python time of a step beyond the integration; writes the figure
(docs/guides/rotary_flexible_link.png in the documentation).
"""

import argparse
import time
from pathlib import Path

import numpy as np

import flexmbs

MODEL = Path(__file__).with_suffix(".toml")
DT = 1e-3            # s: the controller's period
MOVE = np.radians(30.0)
STEPS = ((0.2, MOVE), (1.6, 0.0))  # (s, rad): the hub's reference
VOLTAGE = "servo.voltage"


def reference(t):
    """The hub's reference angle at t (rad)."""
    value = 0.0
    for start, angle in STEPS:
        if t >= start:
            value = angle
    return value


def design(model):
    """(K, the linear model): the LQR gains on x = [q, u] of the model linearized at
    rest, weighing the hub's error (1 per 0.05 rad), the tip's deflection (1 per
    2 mm) and the voltage (1 per 3 V)."""
    import control

    cm = flexmbs.compile_model(model)
    lin = flexmbs.linearize(cm)
    sys = lin.to_statespace(inputs=[VOLTAGE], outputs=["theta", "tip[1]"])
    weights = np.diag([1 / 0.05 ** 2, 1 / 0.002 ** 2])
    q = sys.C.T @ weights @ sys.C + 1e-6 * np.eye(sys.nstates)
    k, _, poles = control.lqr(sys, q, np.array([[1 / 3.0 ** 2]]))
    return np.asarray(k), sys, lin


def run(model, gains, t_end, label):
    """Step the model at 1 kHz under u = -K (x - x_ref); returns (t, theta, tip,
    voltage, wall time, integration time)."""
    rows = []
    start = time.perf_counter()
    with flexmbs.Simulator(model) as sim:
        nq = len(sim.coordinate_names)
        target = np.zeros(2 * nq)
        while sim.time < t_end - 1e-12:
            x = sim.state[: 2 * nq]
            target[0] = reference(sim.time)
            u = float(-(gains @ (x - target))[0])
            s = sim.step(DT, inputs={VOLTAGE: u})
            rows.append((sim.time, s["theta"], s["tip"][1], s["voltage"]))
        integration = sim.statistics["wall_time"]
    wall = time.perf_counter() - start
    t, theta, tip, voltage = np.array(rows).T
    print(f"{label}: {len(rows)} steps of {DT * 1e3:g} ms, {t_end / wall:.2f} x real time "
          f"({wall / len(rows) * 1e6:.0f} us a step, {integration / len(rows) * 1e6:.0f} us "
          f"of it integrating)")
    return t, theta, tip, voltage


def ringing(t, tip, after):
    """The tip's largest deflection from 0.5 s after `after` on (m)."""
    window = (t > after + 0.5) & (t < after + 1.3)
    return np.abs(tip[window]).max()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--t-end", type=float, default=3.0)
    parser.add_argument("--figure", default=None, help="write the figure (PNG) here")
    args = parser.parse_args()
    model = flexmbs.load_model(MODEL)
    gains, sys, lin = design(model)
    print(f"the linear model: {sys.nstates} states, poles at "
          + ", ".join(f"{f:.2f} Hz" for f in lin.natural_frequencies[lin.poles.imag > 0]))
    print("LQR gains on [q, u]:", np.array2string(gains[0], precision=3))
    pd_gains = np.zeros_like(gains)  # the hub alone: u = -kp (theta - ref) - kd theta'
    nq = gains.shape[1] // 2
    pd_gains[0, 0], pd_gains[0, nq] = gains[0, 0], gains[0, nq]
    lqr = run(model, gains, args.t_end, "LQR")
    pd = run(model, pd_gains, args.t_end, "PD on the hub")
    for label, (t, _, tip, _) in (("LQR", lqr), ("PD on the hub", pd)):
        print(f"{label}: the tip rings at {ringing(t, tip, STEPS[0][0]) * 1e3:.2f} mm "
              f"after the first move")
    if args.figure:
        figure(lqr, pd, args.figure)


def figure(lqr, pd, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(3, 1, figsize=(7.5, 6.5), sharex=True)
    for (t, theta, tip, voltage), label, style in ((pd, "PD on the hub", "C1"),
                                                   (lqr, "LQR (hub and ruler)", "C0")):
        axes[0].plot(t, np.degrees(theta), style, label=label)
        axes[1].plot(t, tip * 1e3, style)
        axes[2].plot(t, voltage, style)
    axes[0].plot(lqr[0], [np.degrees(reference(t)) for t in lqr[0]], "k:", label="reference")
    axes[0].set_ylabel("hub angle (deg)")
    axes[1].set_ylabel("tip deflection (mm)")
    axes[2].set_ylabel("motor voltage (V)")
    axes[2].set_xlabel("time (s)")
    axes[0].legend(loc="upper right", fontsize=8)
    for ax in axes:
        ax.grid(alpha=0.3)
    fig.suptitle("Rotary flexible link: state feedback from Python at 1 kHz (flexmbs.Simulator)",
                 fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
