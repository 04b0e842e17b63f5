"""What a run returns: the Simulation (its outputs, read back from the result file
when they were not kept, its status and statistics) and the names of the state's
columns after q and u."""

import numpy as np

from ..dynamics.energy import ENERGY_COMPONENTS
from ..model.drive_tables import electrical_state_names
from .convergence import Convergence

__all__ = ["Simulation", "state_rest_names"]


class Simulation:
    """What `simulate` returns: the outputs and the run's outcome.

    t (n,) s, y (n, nstate) the states [q, u, w, lambda, mu] at the outputs, energy
    (n, 7) (ENERGY_COMPONENTS), sensors (n, number of sensor values); status
    ("finished" or "failed"), message, statistics, path (the result file or None);
    small_deformation: the text saying which beam left the small-deformation range
    and how far (None if none did; a SmallDeformationWarning was issued then);
    convergence: the convergence check of simulate(..., verify=True) (a
    flexmbs.simulation.convergence.Convergence; None without it). sensor_names, sensor_sizes:
    the sensors' names and numbers of values, in the columns' order of `sensors`;
    sensor(name) the columns of one by its name.
    A run that kept no history in memory (simulate's `history`) reads each of t, y,
    energy and sensors from its result file when it is first asked for.
    """

    def __init__(
        self, t, y, energy, sensors, coordinate_names, status, message, statistics, path=None
    ):
        self._arrays = {"t": t, "y": y, "energy": energy, "sensors": sensors}
        self.coordinate_names = coordinate_names
        self.status = status
        self.message = message
        self.statistics = statistics
        self.path = path
        self.small_deformation: str | None = None
        self.convergence: Convergence | None = None
        self.sensor_names: list[str] = []
        self.sensor_sizes: list[int] = []

    def sensor(self, name):
        """The values of sensor `name` at the outputs: (n,) for a sensor of one value,
        (n, k) for one of k (a marker's position: x, y, z)."""
        if name not in self.sensor_names:
            known = ", ".join(self.sensor_names) or "(none)"
            raise KeyError(f'no sensor "{name}"; the sensors are {known}')
        k = self.sensor_names.index(name)
        start = int(sum(self.sensor_sizes[:k]))
        size = int(self.sensor_sizes[k])
        columns = self.sensors[:, start : start + size]
        return columns[:, 0] if size == 1 else columns

    def _get(self, name):
        if self._arrays[name] is None:
            self._arrays[name] = _read_outputs(self.path, name)
        return self._arrays[name]

    t = property(lambda self: self._get("t"))
    y = property(lambda self: self._get("y"))
    energy = property(lambda self: self._get("energy"))
    sensors = property(lambda self: self._get("sensors"))

    @property
    def success(self):
        return self.status == "finished"


def state_rest_names(cm):
    """Names of the state's columns after q and u: W_nc, each actuator's work
    W_<actuator>, the DC motors' electrical states (W_source_<actuator>,
    W_resistive_<actuator>, i_<actuator>), then lambda_<row> and mu_<row> of each
    active constraint row."""
    rows = range(cm.nconstraints)
    actuators = getattr(cm.model, "actuators", {})
    return (
        ["W_nc"]
        + [f"W_{a}" for a in actuators]
        + electrical_state_names(actuators.values())
        + [f"lambda_{k}" for k in rows]
        + [f"mu_{k}" for k in rows]
    )


def _read_outputs(path, name):
    """One of Simulation's arrays (t, y, energy, sensors) from the result file."""
    import h5py

    with h5py.File(path, "r", locking=False) as f:
        if name == "t":
            return f["time"][:]
        if name == "y":
            return np.hstack([f["q"][:], f["u"][:], f["state_rest"][:]])
        if name == "energy":
            return np.stack([f[f"energy/{c}"][:] for c in ENERGY_COMPONENTS], axis=1)
        names = [
            n.decode() if isinstance(n, bytes) else str(n) for n in f["sensors"].attrs["names"]
        ]
        n = f["time"].shape[0]
        parts = [f[f"sensors/{k}"][:].reshape(n, -1) for k in names]
        return np.hstack(parts) if parts else np.zeros((n, 0))
