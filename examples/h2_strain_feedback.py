"""Collocated strain feedback on H2, written as a user force law.

H2 (docs/explanation/benchmark-models.md; flexmbs.model.library.huang_two_link) with a PD
motor on each joint: joint 1 holds 1.5 rad, joint 2 moves from -1.0 to 0.0 rad in
0.5 s (a quintic trajectory), which sets the flexible link ringing. Strain gauges at the root of the
link, on the faces y = -c and y = +c of the tube (c = 6.35 mm), half their difference
(a half bridge: the axial strain cancels), read the bending strain of the face y = -c

    eps = c v''(0) = c (6 v_tip / L^2 - 2 tz_tip / L)

(the one-element beam clamped at joint 2: v_tip and tz_tip are its tip's deflection
and rotation in the plane of joint 2, coordinates link2.n1.v and link2.n1.tz). The law
adds tau = -k_s eps to the joint-2 torque. In terms of the root bending moment
M = EI v''(0), tau = -(k_s c / EI) M: the joint gives way to the beam's bending by a
fraction g = k_s c / EI of it, so that the bending couples into the joint's motion,
where the PD's kd takes its energy out (stable for g < 1; k_s = 10000 is g = 0.62).

    .venv/bin/python examples/h2_strain_feedback.py [--t-end 3] [--gain 10000]

prints, for the run without and with the feedback, the vibration of the tip left
after the move and the energy balance (the law's work is in W_nc).
"""

import argparse
import time

import numpy as np

import flexmbs
from flexmbs.model import Constant, Trajectory
from flexmbs.model.library import huang_two_link

GAUGE = 6.35e-3  # m, the gauges' distance from the section's neutral axis
LENGTH = 1.02  # m, the flexible link


@flexmbs.user_law
def strain_feedback(t, q, u, params, out):
    """Joint torque -k_s eps (N m), eps = c (6 v / L^2 - 2 tz / L) the root bending
    strain.
    params: k_s (N m), c (m), L (m), then the q indices of v and tz."""
    k_s, c, length = params[0], params[1], params[2]
    v = q[int(params[3])]
    tz = q[int(params[4])]
    out[0] = -k_s * c * (6.0 * v / length ** 2 - 2.0 * tz / length)


def controlled_h2(gain):
    """H2 with PD motors on both joints, joint 2's set-point moving from -1.0 to 0.0
    rad in 0.5 s, and the strain feedback of gain `gain` (N m) on joint 2."""
    model = huang_two_link()
    model.add_actuator("motor1", "joint1", kp=200.0, kd=20.0, setpoint=Constant(1.5))
    model.add_actuator("motor2", "joint2", kp=20.0, kd=2.0,
                       setpoint=Trajectory(times=(0.0, 0.5), values=(-1.0, 0.0)))
    model.add_user_law("strain_feedback", strain_feedback, joint="joint2",
                       params=[gain, GAUGE, LENGTH],
                       read_coordinates=["link2.n1.v", "link2.n1.tz"])
    model.add_sensor("root_strain", "beam_strain", body="link2", element=0, at="start",
                     point=(-GAUGE, 0.0))  # the gauge on the face y = -c (axial included)
    return model


def tip_vibration(sim, span=0.5):
    """Peak-to-peak of the tip's in-plane elastic deflection (m) over the last `span`
    seconds of the run."""
    deflection = sim.sensors[:, 4]  # tip_deflection, the y component (link-2 axes)
    return float(np.ptp(deflection[sim.t >= sim.t[-1] - span]))


def energy_balance(sim):
    """max |E(t) - E(0)| relative to the largest energy term: kinetic, gravity,
    strain, spring or W_nc (columns 0 to 4 of sim.energy)."""
    e = sim.energy[:, :5]
    total = e[:, 0] + e[:, 1] + e[:, 2] + e[:, 3] - e[:, 4]
    return float(np.abs(total - total[0]).max() / np.abs(e).max())


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--t-end", type=float, default=3.0, help="s (default 3)")
    parser.add_argument("--gain", type=float, default=1e4, help="k_s, N m (default 1e4)")
    args = parser.parse_args(argv)
    results = {}
    for gain in (0.0, args.gain):
        start = time.perf_counter()
        sim = flexmbs.simulate(controlled_h2(gain), None, t_end=args.t_end)
        wall = time.perf_counter() - start
        results[gain] = tip_vibration(sim)
        print(f"k_s = {gain:8.0f} N m: tip vibration over the last 0.5 s "
              f"{1e3 * results[gain]:.4f} mm peak to peak; theta2 = "
              f"{sim.sensors[-1, 1]:+.4f} rad; energy balance {energy_balance(sim):.1e} "
              f"of the largest term; {wall:.1f} s")
    print(f"the strain feedback leaves {results[0.0] / results[args.gain]:.1f} times less "
          "vibration")
    return results


if __name__ == "__main__":
    main()
