"""Compiling the output quantities on a second core while a run compiles its equations.

On an empty kernel cache a run compiles its kernels one after another on one core:
on the 2-core machine H2's first run spends 42 s on the output quantities (energies and
sensors) and 100 s on the equations of motion and the integrator. The output kernels'
argument types are the same for every model (references to the model's and the
workspace's tables), so another process can compile them into the on-disk cache from
any model while the run compiles the rest; the run then loads them from the cache
(numba looks there before compiling a new signature).

`OutputKernelsElsewhere.start_if_useful()` starts that process when the output kernels
are not in the cache and the process may use a second core (FLEXMBS_COMPILE_ELSEWHERE=0:
never); `python -m flexmbs.simulation.output_kernels` is the process itself.
"""

import glob
import os
import subprocess
import sys

__all__ = ["OutputKernelsElsewhere", "output_kernels_cached", "compile_output_kernels"]

WAIT_LIMIT = 600.0  # s: past this the run compiles the output kernels itself


def output_kernels_cached(cache_dir=None):
    """True when the on-disk kernel cache holds the output quantities' kernel
    (flexmbs.dynamics.outputs.kinematic_outputs; the reaction sensors' kernel compiles
    only for the models that have them)."""
    from ..runtime.config import CACHE, CACHE_DIR, TARGET

    if not CACHE:
        return True  # no cache to fill: nothing another process could hand over
    if cache_dir is None and TARGET.shipped:
        return True  # a wheel's kernels: no second process would make a difference
    pattern = os.path.join(cache_dir or CACHE_DIR, "**", "outputs.kinematic_outputs-*.nbi")
    return bool(glob.glob(pattern, recursive=True))


def _a_core_is_free():
    """True when this process may run on two cores or more. (The load average is no
    guide: the installation that precedes a first run leaves it high for a minute.)"""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not on every system
        cores = os.cpu_count() or 1
    return cores >= 2


class OutputKernelsElsewhere:
    """A process compiling the output kernels into the cache (see the module text)."""

    def __init__(self, process):
        self.process = process

    @classmethod
    def start_if_useful(cls):
        """The running process, or None when the kernels are cached, no second core is
        free, FLEXMBS_COMPILE_ELSEWHERE is 0, or the process cannot be started."""
        if os.environ.get("FLEXMBS_COMPILE_ELSEWHERE", "1") in ("0", "false", "no"):
            return None
        if output_kernels_cached() or not _a_core_is_free():
            return None
        try:
            process = subprocess.Popen(
                [sys.executable, "-m", "flexmbs.simulation.output_kernels"],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
        except OSError:
            return None
        return cls(process)

    def wait(self):
        """Wait for the process (at most WAIT_LIMIT s; then it is stopped) and return
        True when it compiled the kernels into the cache."""
        try:
            self.process.wait(timeout=WAIT_LIMIT)
        except subprocess.TimeoutExpired:
            self.stop()
            return False
        return self.process.returncode == 0 and output_kernels_cached()

    def stop(self):
        """End the process if it is still running (the run failed or was interrupted)."""
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()


def compile_output_kernels():
    """Compile the output quantities' kernels into the cache by evaluating them once
    for the smallest model (one rigid link): their types are every model's."""
    import numpy as np

    from ..dynamics.energy import ENERGY_COMPONENTS
    from ..dynamics.outputs import output_quantities
    from ..model.compiled import compile_model
    from ..model.library import chain_model

    cm = compile_model(chain_model(1))
    y = cm.initial_state()[None, :]
    energy = np.zeros((1, len(ENERGY_COMPONENTS)))
    sensors = np.zeros((1, cm.nsensor_values))
    output_quantities(
        cm.arrays, cm.new_workspace(), np.zeros(1), np.ascontiguousarray(y), energy, sensors
    )


if __name__ == "__main__":
    compile_output_kernels()
