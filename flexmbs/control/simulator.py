"""A model stepped from Python: a controller in the loop.

    sim = flexmbs.Simulator(model, "run.h5")        # a Model or a model file
    for k in range(1000):
        y = sim.sensors["tip"]                      # what the controller measures
        sim.step(1e-3, inputs={"hub.voltage": -k_p * y})
    sim.close()

`step(dt, inputs)` advances the model by dt with its input ports (flexmbs.model.ports:
an actuator's set-point, torque or voltage, a load's magnitude) held at the values
given (a zero-order hold), and returns its sensors at the new time. The run is the
run `simulate` makes, from the same steps (flexmbs.simulation's run path): the
integrator (`bdf` or `galpha`) keeps its steps and its history from one call to the
next while the inputs keep their values. A changed input makes the forces jump with the
state continuous: galpha goes on across it when its last step ended there, its step,
history and iteration matrix kept and its rates moved by the jump
(flexmbs.solvers.bdf_integrator, GalphaIntegrator.carry_inputs); otherwise the
integrator starts again in place, keeping what the jump leaves valid: the iteration
matrix, and bdf's last step (BdfIntegrator._restart_driver); the model's own breakpoints
and state events (a motor at its limit, a joint at its stop) are handled as in a run
of `simulate`. The result file holds every step's state, energies and sensors, as
`simulate` writes them, committed as the run goes. The sensors a step returns are
what the model's instruments measure (a sensor's `lag`, `dead_time`, `resolution`:
flexmbs.simulation.instruments), as `simulate` records them.

A call enters the compiled step loop once (flexmbs.solvers.bdf_integrator's
`advance_to`: the loop's functions and state held by reference, so that entering it
converts no array), which writes the new state into the next row of a batch of
ROWS_PER_BATCH rows, and the kernel of the outputs once, which writes the row's
energies and sensors beside it; an input is written into the compiled tables where it
changed; the batch goes to the file (and its watches) when full.
What a call costs beyond the integration and the outputs a `simulate` run of the same
rows computes is measured by benchmarks/bench_control_loop.py.
"""

import os
import threading
import time

import numpy as np

from ..dynamics.energy import ENERGY_COMPONENTS
from ..dynamics.outputs import has_reaction_sensors, kinematic_outputs, reaction_outputs
from ..errors import FlexmbsError, ModelError
from ..model.ports import checked_inputs, hold_value
from ..model.run_work import check_step
from ..model.timefunctions import time_function_breakpoints
from ..runtime.compile_notice import CompileWatch
from ..simulation.run import (
    RUN_SETTINGS,
    WALL_BUDGET,
    OutputRecorder,
    build_integrator,
    close_failed_run,
    finish_run,
    open_result,
    prepare_run,
    result_settings,
    start_state,
)
from ..solvers.typed_call import TypedCall

__all__ = ["Simulator", "IntegrationFailed", "STEPPING_METHODS", "ROWS_PER_BATCH"]

STEPPING_METHODS = ("bdf", "galpha")
"""The integrators that restart where an input changes (flexmbs.solvers.events)."""

TIME_SLACK = 64 * np.finfo(float).eps
"""A step's end within this (relative) of the integrator's horizon is the horizon."""

_INF = float("inf")

ROWS_PER_BATCH = 256
"""Steps whose rows are gathered before they go to the result file (and its watches):
a row at a time would cost more than the step itself."""


class IntegrationFailed(FlexmbsError):
    """The integrator could not take the model to the time a step asked for: the
    message says where and why; the result file is closed with it."""


class Simulator:
    """A model (a Model, or the path of a model file) stepped from Python; the result
    file `path` (None: the rows stay in memory). Solver settings not given come from
    the model's [solver] section; `method` is "bdf" or "galpha". The model's t_end is
    not an end: the run goes as far as it is stepped (the integrator's horizon moves
    on by t_end at a time). `history`: keep every row in memory (default: without a
    file). `log(text)`: where the run's warnings go.

    Attributes: `time` (s), `state` (the state vector y = [q, u, works, multipliers]),
    `q`, `u`, `sensors` ({name: value} as the instruments measure it: lag, dead time,
    resolution), `energies` ({component: J}), `inputs` ({port:
    the value it holds, or None while it follows its law}), `ports` (the model's input
    ports, flexmbs.model.ports.Port), `statistics` (the integrator's counters),
    `compiled` (the compiled model). For a thread beside the loop (the live view,
    flexmbs.show(sim, live=True)): `snapshot()`, the time and coordinates of the last
    step, and `hold(inputs)`, inputs for the next step.
    """

    def __init__(
        self,
        model,
        path=None,
        *,
        method=None,
        rtol=None,
        atol=None,
        max_step=None,
        rho_inf=None,
        fixed_step=None,
        formulation=None,
        constraints=None,
        history=None,
        log=None,
    ):
        if isinstance(model, (str, os.PathLike)):
            from ..formats.toml_reader import load_model

            model = load_model(model)
        self.model, self.path, self.log = model, path, log
        self.keep = path is None if history is None else bool(history)
        values = (None, rtol, atol, method, None, max_step, formulation, constraints)
        self._overrides = dict(zip(RUN_SETTINGS, values + (rho_inf, fixed_step)))
        self._closed = True
        self._simulation = None
        self._pending = None  # inputs held from another thread (hold), for the next step
        self._pending_lock = threading.Lock()
        with CompileWatch() as compiling:
            self._run = prepare_run(model, self._overrides)
            self._check_method()
            self._tables = (self._run.cm.arrays.tf_kind.copy(), self._run.cm.arrays.tf_data.copy())
            self._begin(path)
        self._compile_time = compiling.seconds

    # ------------------------------------------------------------------ the run
    def _check_method(self):
        method = self._run.settings.method
        if method not in STEPPING_METHODS:
            raise ModelError(
                f'the stepping API runs with "bdf" or "galpha" (they start again where '
                f'an input changes), got "{method}"',
                "solver",
                "method",
                self.model.source_path or "<python>",
            )

    def _begin(self, path):
        """A run from t = 0: the model's initial state, every port on its law, a new
        result file at `path`."""
        run, cm = self._run, self._run.cm
        cm.arrays.tf_kind[:], cm.arrays.tf_data[:] = self._tables
        # each port's [Port, index of its law's kind, of its value, value held]
        self._slots = {
            name: [port, port.function, int(cm.arrays.tf_ptr[port.function]), None]
            for name, port in cm.ports.items()
        }
        self.path = path
        system, y0 = start_state(run, 0.0, self.log)
        writer = open_result(path, run, result_settings(run, float("nan")))
        self._recorder = OutputRecorder(cm, writer, self.keep, self.log)
        self._ws = self._recorder.ws
        self._instruments = self._recorder.instruments or None
        self._recorder.instruments = None  # applied here, row by row (_output)
        self._arrays, self._sampler = cm.arrays, run.sampler
        self._tf_data = cm.arrays.tf_data  # (an attribute of the held tables costs 2 us)
        self._sensor_parts = []  # (name, its column or None, its columns)
        k = 0
        for name, size in zip(cm.sensor_names, cm.sensor_sizes):
            self._sensor_parts.append((name, k if size == 1 else None, slice(k, k + size)))
            k += size
        self._scalar_sensors = all(size == 1 for size in cm.sensor_sizes)
        self._sensor_names = list(cm.sensor_names)
        self._reactions = has_reaction_sensors(cm.arrays)
        self._kinematic_outputs = TypedCall(kinematic_outputs)
        self._reaction_outputs = TypedCall(reaction_outputs)
        self._t1 = np.zeros(1)
        nrow, ny = ROWS_PER_BATCH, cm.nstate
        self._rows = (
            np.zeros(nrow),
            np.zeros((nrow, ny)),
            np.zeros((nrow, len(ENERGY_COMPONENTS))),
            np.zeros((nrow, cm.nsensor_values)),
        )
        # each row's (t, y, energies, sensors) as (1, ...) views: the step loop writes
        # the state into its row, the outputs kernel the energies and sensors
        self._row_views = [tuple(a[k : k + 1] for a in self._rows) for k in range(nrow)]
        self._nrows = 0
        self._flushed = time.perf_counter()
        self.time = 0.0
        _, self._y, self._energy, self._sensor = self._row_views[0]
        self._y[0] = y0
        self._horizon = run.settings.t_end
        self._integ = build_integrator(run, system, 0.0, y0, lambda: None)
        self._closed = False
        self._simulation = None
        self._output()

    def _output(self):
        """The energies and sensors at the current state, the batch's next row, into
        which the step loop wrote the state (self._y (1, n) is that row)."""
        t, y, energy, sensor = self._row_views[self._nrows]
        t[0] = self.time
        if self._sampler is not None:  # the sampled controllers' outputs in force
            self._ws.ctrl_held[:] = self._sampler.ws.ctrl_held
        self._kinematic_outputs(self._arrays, self._ws, t, y, energy, sensor)
        if self._reactions:
            self._reaction_outputs(self._arrays, self._ws, t, y, sensor)
        if self._instruments is not None:
            sensor[:] = self._instruments.apply(t, sensor)
        self._y, self._energy, self._sensor = y, energy, sensor
        self._latest = (self.time, y)
        self._nrows += 1
        if self._nrows == ROWS_PER_BATCH or time.perf_counter() - self._flushed > WALL_BUDGET:
            self._flush()

    def _flush(self):
        """The gathered rows to the recorder (the result file, the watches, memory)."""
        k = self._nrows
        if k:
            t, y, e, s = (a[:k].copy() for a in self._rows)
            self._recorder.record(t, y, e, s)
            if self._recorder.writer is not None:
                self._recorder.writer.commit_if_due(self.time)
        self._nrows = 0
        self._flushed = time.perf_counter()

    # ------------------------------------------------------------------ stepping
    def step(self, dt, inputs=None):
        """Advance by dt (s) with `inputs` ({port name: value}, flexmbs.model.ports;
        ports not named keep what they had) held over the step; the sensors at the
        new time ({name: value}, as the instruments measure them). A port whose value
        changes is a jump in the forces at the step's start, which the integrator
        goes on across (galpha) or starts again at. IntegrationFailed when the
        integrator cannot reach the new time."""
        if self._closed:
            raise ValueError("the simulator is closed (reset() starts a new run)")
        check_step(self.model, self._run.settings, dt, inputs)
        if not 0.0 < dt < _INF:
            raise ValueError(f"dt must be a positive number of seconds, got {dt!r}")
        t_new = self.time + dt
        if abs(t_new - self._horizon) <= TIME_SLACK * max(abs(t_new), dt):
            t_new = self._horizon  # a sum of steps that means the horizon (round-off)
        if self._pending is not None:
            inputs = self._with_held(inputs)
        restart = self._set_inputs(inputs) if inputs else False
        integ = self._integ
        if t_new > self._horizon:
            self._horizon = max(t_new, self.time + self._run.settings.t_end)
            integ.restart_at(self.time, self._y[0], self._horizon, restart, t_new)
        elif restart and not integ.carry_inputs(self.time, t_new):
            integ.restart_at(self.time, self._y[0], until=t_new)
        row = self._row_views[self._nrows][1]
        n, y = integ.advance_to(t_new, WALL_BUDGET, row)
        while not n and integ.status == "running":
            self._t1[0] = t_new
            n, y = integ.advance(self._t1, WALL_BUDGET)
            if n:
                row[0] = y[0]
        if not n:
            self._fail(integ.message or "the integrator stopped")
        self.time = t_new
        self._output()
        return self.sensors

    def hold(self, inputs):
        """Hold `inputs` ({port name: value}) from the next step on, as if that step
        had been given them, for a thread beside the loop (the live view's sliders,
        flexmbs.viewer.live): the ports a step names itself take the step's values.
        ModelError naming the port for an unknown port or a value that is not a
        finite number."""
        values = {name: self._checked(name, value) for name, value in inputs.items()}
        with self._pending_lock:
            self._pending = {**(self._pending or {}), **values}

    def _with_held(self, inputs):
        """The step's inputs over those held since the last step (hold)."""
        with self._pending_lock:
            held, self._pending = self._pending, None
        return {**held, **inputs} if inputs else held

    def _set_inputs(self, inputs):
        """Hold the inputs' values (written into the compiled tables: hold_value);
        True when one changed."""
        slots, changed, tf_data = self._slots, False, self._tf_data
        for name, value in inputs.items():
            slot = slots.get(name)
            if slot is None or type(value) is not float or not abs(value) < np.inf:
                value = self._checked(name, value)
                slot = slots[name]
            if slot[3] != value:
                if slot[3] is None:
                    hold_value(self._arrays, slot[0], value)
                    self._held_first()
                else:
                    tf_data[slot[2]] = value
                slot[3] = value
                changed = True
        return changed

    def _checked(self, name, value):
        """The value of an input given as other than a finite float, or ModelError
        naming the port (flexmbs.model.ports.checked_inputs)."""
        try:
            return checked_inputs(self._run.cm.ports, {name: value})[self._slots[name][0]]
        except ModelError as exc:
            raise exc.with_source(self.model.source_path or "<python>") from None

    def _held_first(self):
        """A port set aside its law: its breakpoints are no longer the model's."""
        arrays = self._run.cm.arrays
        self._integ.set_breakpoints(
            time_function_breakpoints(arrays.tf_kind, arrays.tf_ptr, arrays.tf_data)
        )

    def _fail(self, message):
        """Close the run as failed and raise IntegrationFailed."""
        integ = self._integ
        if integ.t > self.time:
            self._row_views[self._nrows][1][0] = integ.y
            self.time = integ.t
            self._output()
        text = f"at t = {self.time:.6g} s: {message}"
        self._finish("failed", text)
        raise IntegrationFailed(text)

    # ------------------------------------------------------------------ reading
    def snapshot(self):
        """(time, q) at the last step, the coordinates copied: what another thread
        (the live view) reads while the loop steps, the two of one step."""
        t, y = self._latest
        return t, y[0, : self._run.cm.nq].copy()

    @property
    def state(self):
        """The state y = [q, u, works, multipliers] at `time` (a copy)."""
        return self._y[0].copy()

    @property
    def q(self):
        nq = self._run.cm.nq
        return self._y[0, :nq].copy()

    @property
    def u(self):
        nq = self._run.cm.nq
        return self._y[0, nq : 2 * nq].copy()

    @property
    def compiled(self):
        """The compiled model the run steps (flexmbs.model.compiled.CompiledModel)."""
        return self._run.cm

    @property
    def coordinate_names(self):
        return list(self._run.cm.coordinate_names)

    @property
    def sensors(self):
        """{sensor name: value at `time`}: a number, or an array for a sensor of
        several components (their units: docs/reference/model-file.md), as its
        instrument measures it (its lag, dead time and resolution: flexmbs.simulation.instruments;
        the result file records the same)."""
        values = self._sensor[0]
        listed = values.tolist()
        if self._scalar_sensors:
            return dict(zip(self._sensor_names, listed))
        return {
            name: listed[column] if column is not None else values[part].copy()
            for name, column, part in self._sensor_parts
        }

    @property
    def sensor_values(self):
        """The sensors at `time` as one vector (the result file's column order)."""
        return self._sensor[0].copy()

    @property
    def energies(self):
        """{component: J} at `time` (ENERGY_COMPONENTS; `dissipated` is W_nc)."""
        return dict(zip(ENERGY_COMPONENTS, self._energy[0].tolist()))

    @property
    def ports(self):
        return list(self._run.cm.ports.values())

    @property
    def inputs(self):
        """{port name: the value it holds, None while it follows its law}."""
        return {name: slot[3] for name, slot in self._slots.items()}

    @property
    def statistics(self):
        return self._integ.statistics()

    # ------------------------------------------------------------------ ending
    def reset(self, path=None):
        """Close the run so far (its file finished) and start again from t = 0: the
        initial state, every port on its law; the new run's file is `path` (None:
        the same file, written anew)."""
        if not self._closed:
            self.close()
        self._begin(self.path if path is None else path)

    def close(self):
        """End the run: the rows written, the result file closed as finished. Returns
        the Simulation, as `simulate` does (its arrays read from the file when it
        kept no history). Closing twice returns the same."""
        if not self._closed:
            self._finish("finished", "")
        return self._simulation

    def _finish(self, status, message):
        self._flush()
        self._closed = True
        self._simulation = finish_run(
            self._run,
            self._integ,
            self._recorder,
            status,
            message,
            self.path,
            self._compile_time,
            self.log,
        )

    def __enter__(self):
        return self

    def __exit__(self, kind, exc, traceback):
        if self._closed:
            return
        if exc is None:
            self.close()
            return
        self._flush()
        self._closed = True
        close_failed_run(self._recorder.writer, self._integ, self._recorder, exc)
