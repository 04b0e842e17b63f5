"""Sampled controllers in a run: their sample instants as breakpoints, their
outputs held between the instants they take effect (a zero-order hold), as
discrete state in the workspace (ws.ctrl_held; flexmbs.model.controllers).

Controller k with sample time T, delay D and inputs i:

* at t_j - d_i (d_i the dead time of input i's sensor) it reads the input: the
  sensor's value at the state there (flexmbs.dynamics.api's sensor kernel), through
  the sensor's lag and resolution (flexmbs.simulation.instruments.SampledInstrument); a joint
  input reads its coordinate or rate;
* at t_j = t0 + j T it forms u_j = offset + sum_i [gain_i e_i - rate_gain_i
  D_i,j + integral_gain_i T sum_l<=j e_i,l], e_i = r_i(t_j) - y_i,j, D the backward
  difference (y_i,j - y_i,j-1) / T through the input's rate filter (`filtered_rate`),
  limited to [min, max];
* at t_j + D the output takes effect: ws.ctrl_held[k] = u_j, held until the next.

Every such instant inside the run is a breakpoint of the integrators, which call
`at_breakpoint(t, y)` at the start of each segment (System.sample); those away from
the model's own breakpoints are held breakpoints (`held_breakpoints`), where only
a held output changes and `bdf` carries its history across. The values in
force over time are kept (`held_at`) so that the outputs, computed after the
integrator has gone on, see the value of their own time.
"""

from __future__ import annotations

import heapq
from collections import deque

import numpy as np

from ..kinematics.timefunctions import evaluate_time_function
from ..model.timefunctions import compile_time_functions
from ..solvers.events import BREAKPOINT_FUZZ, EPS, sorted_times
from ..solvers.typed_call import TypedCall
from .instruments import SampledInstrument

__all__ = ["SampledControllers"]

MEASURE, COMPUTE, APPLY = 0, 1, 2


def filtered_rate(difference, pole, stages):
    """The rate of a sampled input through its low-pass: each stage of `stages` (its
    outputs, updated in place) d_k = a d_k-1 + (1 - a) x_k, x_k the stage's input
    (the first's the backward difference (y_k - y_k-1) / T), a = `pole` =
    exp(-2 pi f_c T): a first-order lag of cut-off f_c sampled under a hold. No
    stage: the difference itself."""
    x = difference
    for i in range(len(stages)):
        stages[i] = pole * stages[i] + (1.0 - pole) * x
        x = stages[i]
    return x


class SampledControllers:
    """The sampled controllers of a compiled model `cm` over a run [t0, t_end] on
    workspace `ws` (module text). `sensors_at(t, y)` -> the sensor values at a
    state."""

    def __init__(self, cm, ws, t0, t_end, sensors_at):
        self.ws = ws
        self.sensors_at = sensors_at
        self.nq = cm.nq
        model = cm.model
        names = list(model.controllers)
        self.ctrl = []
        events = []  # (time, kind, controller, input)
        marks = [np.zeros(0)]  # the instants of reads, computes and applies
        setpoints = []
        for k, name in enumerate(names):
            c = model.controllers[name]
            if not c.sampled:
                continue
            inputs = []
            for inp in c.inputs:
                if inp.sensor is not None:
                    s = model.sensors[inp.sensor]
                    col = int(cm.arrays.sensor_offset[cm.sensor_names.index(inp.sensor)])
                    col += inp.component
                    source = ("sensor", col)
                    dead, lag, resolution = s.controller_instrument()
                    instrument = SampledInstrument(lag, resolution)
                else:
                    cols = cm.coordinate_names
                    joint = model.joints[inp.joint]
                    qk = cols.index(joint.coordinate_names()[inp.coordinate])
                    source = ("rate" if inp.rate else "coordinate", qk)
                    dead = 0.0
                    instrument = SampledInstrument(0.0, 0.0)
                sp = -1
                if inp.setpoint is not None:
                    sp = len(setpoints)
                    setpoints.append(inp.setpoint)
                inputs.append(
                    {
                        "input": inp,
                        "source": source,
                        "dead": dead,
                        "instrument": instrument,
                        "setpoint": sp,
                        "measured": deque(),
                        "previous": None,
                        "integral": 0.0,
                        "pole": float(np.exp(-2.0 * np.pi * inp.rate_cutoff * c.sample_time)),
                        "stages": np.zeros(inp.rate_filter_order if inp.rate_cutoff else 0),
                    }
                )
            self.ctrl.append({"k": k, "c": c, "inputs": inputs})
            n = int(np.floor((t_end - t0) / c.sample_time * (1 + 1e-12))) + 1
            times = t0 + c.sample_time * np.arange(n)
            times = times[times < t_end]
            kc = len(self.ctrl) - 1
            for i, entry in enumerate(inputs):
                if entry["dead"] > 0.0:
                    events += [(t, MEASURE, kc, i) for t in times - entry["dead"]]
                    marks.append(times - entry["dead"])
            events += [(t, COMPUTE, kc, -1) for t in times]
            marks += [times, times + c.delay]
        self.kind, self.ptr, self.data = compile_time_functions(setpoints)
        self.tf3 = np.zeros(3)
        self._evaluate = TypedCall(evaluate_time_function)  # (no dispatch: once a sample)
        events.sort(key=lambda e: (max(e[0], t0), e[1]))
        self.events = events
        self.next = 0
        self.applies: list[tuple[float, int, float]] = []  # pending (time, k, value), a heap
        self._sensors = None  # the sensor values at the instant being processed
        self.history_t: list[float] = [t0]
        self.history_v: list[np.ndarray] = [ws.ctrl_held.copy()]
        self.t0, self.t_end = t0, t_end
        self.row_outputs = None
        """The outputs' kernel per batch of rows of one held value (set by the run)."""
        times = sorted_times(np.concatenate(marks))
        self.breakpoints = times[(times > t0) & (times < t_end)]
        """The instants inside the run at which a controller reads, computes or
        applies (s)."""

    def held_breakpoints(self, own):
        """The breakpoints (s, sorted) farther than the breakpoints' fuzz from every
        time in `own` (where the model's own laws jump or kink): at those only the
        held outputs change, the forces jump and the state and the forces'
        derivatives do not (System.held_breakpoints)."""
        mine = self.breakpoints
        own = np.sort(np.asarray(own, dtype=float).ravel())
        if not own.size or not mine.size:
            return mine
        fuzz = BREAKPOINT_FUZZ * EPS * np.maximum(1.0, np.abs(mine))
        k = np.searchsorted(own, mine)
        below = np.abs(mine - own[np.maximum(k - 1, 0)])
        above = np.abs(own[np.minimum(k, own.size - 1)] - mine)
        return mine[np.minimum(below, above) > fuzz]

    def _setpoint(self, sp, t):
        if sp < 0:
            return 0.0
        self._evaluate(self.kind, self.ptr, self.data, sp, float(t), np.nan, self.tf3)
        return float(self.tf3[0])

    def _read(self, entry, t, y):
        kind, col = entry["source"]
        if kind == "sensor":
            if self._sensors is None:  # once per instant: the sensor kernel
                self._sensors = self.sensors_at(t, y)
            raw = self._sensors[col]
        elif kind == "rate":
            raw = y[self.nq + col]
        else:
            raw = y[col]
        return entry["instrument"].read(t, float(raw))

    def _output(self, entry, te, t, y):
        """u_j of controller `entry` at its sample te (s), its inputs read at the
        state y at t (or dead_time earlier, in order), limited to its range."""
        c = entry["c"]
        u = c.offset
        for inp in entry["inputs"]:
            if inp["dead"] > 0.0:  # read dead_time earlier, in order
                yk = inp["measured"].popleft()
            else:
                yk = self._read(inp, t, y)
            e = self._setpoint(inp["setpoint"], te) - yk
            prev = inp["previous"] if inp["previous"] is not None else yk
            inp["previous"] = yk
            inp["integral"] += e * c.sample_time
            g = inp["input"]
            u += g.gain * e - g.rate_gain * filtered_rate(
                (yk - prev) / c.sample_time, inp["pole"], inp["stages"]
            )
            u += g.integral_gain * inp["integral"]
        return min(max(u, c.limits[0]), c.limits[1])  # (NaN stays NaN, as np.clip)

    def at_breakpoint(self, t, y):
        """Process the instants up to t (within the breakpoints' fuzz): read,
        compute and apply at the state y there."""
        limit = t + BREAKPOINT_FUZZ * EPS * max(1.0, abs(t))
        events = self.events
        self._sensors = None
        while self.next < len(events) and events[self.next][0] <= limit:
            te, kind, kc, i = events[self.next]
            self.next += 1
            entry = self.ctrl[kc]
            if kind == MEASURE:
                entry["inputs"][i]["measured"].append(self._read(entry["inputs"][i], t, y))
                continue
            u = float(self._output(entry, te, t, y))
            heapq.heappush(self.applies, (te + entry["c"].delay, entry["k"], u))
        applies = self.applies
        if not applies or applies[0][0] > limit:
            return
        while applies and applies[0][0] <= limit:
            _, k, u = heapq.heappop(applies)
            self.ws.ctrl_held[k] = u
        self.history_t.append(float(t))
        self.history_v.append(self.ws.ctrl_held.copy())

    def held_at(self, t):
        """Indices into the history (history_v) of the held outputs in force at the
        times t."""
        return np.searchsorted(np.array(self.history_t), t, side="right") - 1

    def forget_before(self, t):
        """Drop the history before the value in force at t (the outputs up to t are
        written)."""
        k = int(np.searchsorted(np.array(self.history_t), t, side="right")) - 1
        if k > 0:
            self.history_t = self.history_t[k:]
            self.history_v = self.history_v[k:]
