"""Where a run's outputs go (OutputRecorder): the energies and sensors of each batch
of states computed in a workspace of their own, the result file's rows, the VTKHDF
shapes, the watches of the joints' singular configurations and of the beams'
small-deformation range."""

import warnings

import numpy as np

from ..dynamics.energy import ENERGY_COMPONENTS
from ..elements.deformation_range import DeformationWatch
from ..errors import FlexmbsWarning
from ..kinematics.singularity import SINGULAR_THRESHOLD, singularity_measure, three_rotation_joints
from ..kinematics.timefunctions import evaluate_time_function
from .instruments import InstrumentFilter
from .row_outputs import sampled_output_quantities

__all__ = ["OutputRecorder", "SmallDeformationWarning"]


class SmallDeformationWarning(FlexmbsWarning):
    """A beam of the run left the small-deformation range of the floating-frame beam
    (flexmbs.elements.deformation_range): its results no longer describe the beam.
    Issued by a run without a log; a run with one (the command line's) says it there."""


class OutputRecorder:
    """Where the outputs of a run go: the energies and sensors computed for a batch of
    states (`emit`), the result file's rows, the VTKHDF shapes beside it, the watches
    of the joints' singular configurations and of the beams' small-deformation range,
    and the rows kept in memory (all of them with `keep`, else the last).

    The outputs are computed in a workspace of their own, whose discrete state is that
    of each output's time (the pieces of the time laws in force then, each motor
    limited by value): the integrator's holds the segment it steps, which a state
    event may already have changed when outputs before it are filled from the
    interpolant; the sampled controllers' outputs (`sampler`, flexmbs.simulation.sampled_control)
    are those in force at each output's time. `vtk_path` the VTKHDF file ([output]
    vtk = true), None for none. The sensors are recorded as their instruments give
    them (dead time, lag, resolution: flexmbs.simulation.instruments)."""

    def __init__(self, cm, writer, keep, log=None, vtk_path=None, sampler=None):
        self.cm, self.writer, self.keep, self.log = cm, writer, keep, log
        self.ws = cm.new_workspace()
        self.sampler = sampler
        self.instruments = InstrumentFilter(
            [cm.model.sensors[n] for n in cm.sensor_names], cm.arrays.sensor_offset
        )
        self.rows = ([], [], [], [])  # t, y, energy, sensors
        self.shapes = None
        if vtk_path is not None:
            from ..io.deformed_shape import DeformedShape
            from ..io.vtkhdf import VtkHdfWriter

            self.shapes = VtkHdfWriter(vtk_path, DeformedShape(cm))
        self.singularity = _SingularityWatch(cm)
        self.deformation = DeformationWatch(cm)
        self.deformation_said = False

    def outputs(self, t, y):
        """(energy (k, 7), sensors (k, nsensor_values)) at the states y (k, n) at the
        times t (k,)."""
        e = np.zeros((len(t), len(ENERGY_COMPONENTS)))
        sv = np.zeros((len(t), self.cm.nsensor_values))
        sampled_output_quantities(self.cm, self.ws, self.sampler, t, y, e, sv)
        if self.instruments:
            sv = self.instruments.apply(t, sv)
        return e, sv

    def emit(self, t, y):
        """Record the outputs at the states y (k, n) at the times t (k,)."""
        self.record(t, y, *self.outputs(t, y))

    def record(self, t, y, e, sv):
        """Record rows whose energies e and sensors sv are known."""
        ts, ys, es, ss = self.rows
        if self.keep or not ts:
            ts.append(t)
            ys.append(y)
            es.append(e)
            ss.append(sv)
        else:
            ts[0], ys[0], es[0], ss[0] = t[-1:], y[-1:], e[-1:], sv[-1:]
        self._append_shapes(t, y)
        self.singularity.update(t, y)
        self.deformation.update(t, y)
        if not self.deformation_said and self.deformation.report():
            self._say_small_deformation()
        if self.writer is not None:
            nq = self.cm.nq
            self.writer.append(t, y[:, :nq], y[:, nq : 2 * nq], e, sv, y[:, 2 * nq :])

    @property
    def t_last(self):
        """The time of the last row recorded (s)."""
        return float(self.rows[0][-1][-1])

    def arrays(self):
        """(t, y, energy, sensors) of the rows kept (None each without `keep`: the
        Simulation reads them from the file)."""
        if not self.keep:
            return [None] * 4
        return [np.concatenate(a) for a in self.rows]

    def _append_shapes(self, t, y):
        if self.shapes is None:
            return
        try:
            for tk, yk in zip(t, y):
                self.shapes.append(float(tk), yk[: self.cm.nq])
            self.shapes.flush()
        except OSError as exc:  # the run goes on: the result file is what counts
            if self.log is not None:
                self.log(f"warning: {self.shapes.path} ends at t = {self.shapes.t_last:g} s: {exc}")
            self.shapes.close()
            self.shapes = None

    def _say_small_deformation(self):
        text = "a beam is " + self.deformation.report()
        if self.log is not None:  # the run's warnings go to its log, once
            self.log("warning: " + text)
        else:
            warnings.warn(text, SmallDeformationWarning, stacklevel=4)
        if self.writer is not None:  # in the file from the next commit: a killed run
            self.writer.set_solver_statistics(  # keeps it for `flexmbs energy`
                {"small_deformation": self.deformation.report()}
            )
        self.deformation_said = True

    def close(self):
        """Close the VTKHDF file."""
        if self.shapes is not None:
            self.shapes.close()

    def statistics(self):
        """The watches' findings for the run's statistics."""
        out = {}
        if self.deformation.report():
            out["small_deformation"] = self.deformation.report()
        if self.singularity.report():
            out["joint_singularity"] = self.singularity.report()
        return out


class _SingularityWatch:
    """The smallest singularity measure of each three-rotation joint along the run."""

    def __init__(self, cm):
        self.cm = cm
        self.joints = three_rotation_joints(cm)
        self.worst = {name: (np.inf, 0.0) for name, _ in self.joints}

    def update(self, t, y):
        m = self.cm.arrays

        def angles_of(c):
            k = m.coord_qindex[c]
            if k >= 0:
                return y[:, k]
            out = np.zeros(3)
            vals = []
            for tk in t:
                evaluate_time_function(
                    m.tf_kind, m.tf_ptr, m.tf_data, m.coord_function[c], float(tk), np.nan, out
                )
                vals.append(out[0])
            return np.array(vals)

        for name, first in self.joints:
            s = singularity_measure(self.cm, angles_of, first)
            k = int(np.argmin(s))
            if s[k] < self.worst[name][0]:
                self.worst[name] = (float(s[k]), float(t[k]))

    def report(self):
        """Text for the joints that came near their singular configuration, or ''."""
        near = [
            f'joint "{n}" (|det G| = {s:.2g} at t = {t:.6g} s)'
            for n, (s, t) in self.worst.items()
            if s < SINGULAR_THRESHOLD
        ]
        if not near:
            return ""
        return (
            "near the singular configuration of its three sequential rotations "
            "(the middle rotation at +-90 deg for x-y-z axes): " + "; ".join(near)
        )
