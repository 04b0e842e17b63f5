"""Telling the user when numba compiles, what and for how long.

Kernels compile on first use and are cached on disk (flexmbs.runtime.config); a cold cache
costs minutes on a small machine, which a command must not spend in silence.
`CompileWatch` listens to numba's compile events (numba.core.event, "numba:compile"):
it counts the functions compiled, times the compilation (excluding the loading of
cached kernels, which raises no such event) and names the part being compiled, the
outermost kernel a command asked for (PARTS gives the user's words for it).

    with CompileWatch(write=sys.stderr.write, live=True) as watch:
        ...                      # any command
    watch.seconds, watch.functions

A watch entered before numba is imported (a command that may never need it, such as
`flexmbs info`) does not import it: it starts listening when flexmbs.runtime.config, which every
kernel module imports first, calls `numba_arrived`.
"""

import sys
import time

__all__ = ["CompileWatch", "PARTS", "numba_arrived", "part_name"]

_WAITING: list["CompileWatch"] = []  # watches entered before numba was imported
_WHY: list[str | None] = [
    None
]  # why the kernels compile here (flexmbs.runtime.kernel_cache.Target.why)


def numba_arrived(why=None):
    """Start the watches entered before numba was imported; `why` (a sentence or
    None) is added to the first compilation's notice."""
    _WHY[0] = why
    while _WAITING:
        _WAITING.pop()._listen()


PARTS = {
    "state_derivative_from_ref": "the equations of motion",
    "residual_from_ref": "the equations of motion",
    "dae_residual": "the equations of motion",
    "constrained_residual_from_ref": "the constrained equations of motion",
    "dae_constrained_residual": "the constrained equations of motion",
    "dae_projection_residual": "the projection formulation",
    "mass_block_from_ref": "the mass matrix",
    "dae_mass_block": "the mass matrix",
    "dae_mass_elastic_block": "the mass matrix and elastic tangent",
    "bdf_advance": "the BDF step loop",
    "bdf_initial_conditions": "the BDF start",
    "bdf_start": "the BDF start",
    "galpha_advance": "the generalized-alpha step loop",
    "kinematic_outputs": "the output quantities (energies, sensors)",
    "reaction_outputs": "the reaction sensors",
}
"""The user's name of the part that an outermost compiled kernel belongs to."""


def part_name(function_name):
    """PARTS' name for a kernel, else the kernel's own name."""
    return PARTS.get(function_name, function_name)


class CompileWatch:
    """Counts and times numba's compilations while it is entered (a context manager).

    write(text): where the notices go (None: nowhere); live: one refreshed line (a
    terminal) instead of a line per part. `seconds` is the wall time spent compiling
    (outermost compilations, so nested ones are not counted twice), `functions` the
    number of functions compiled, `parts` [(name, functions, seconds)] in order.
    """

    REFRESH = 0.5  # s between two refreshes of the live line

    def __init__(self, write=None, live=False):
        self.write = write
        self.live = live
        self.seconds = 0.0
        self.functions = 0
        self.parts = []
        self._depth = 0
        self._start = 0.0
        self._part_functions = 0
        self._shown = 0.0
        self._announced = False
        self._installed = None

    def __enter__(self):
        if "numba" in sys.modules:
            self._listen()
        else:
            _WAITING.append(self)
        return self

    def _listen(self):
        from numba.core import event

        watch = self

        class Listener(event.Listener):
            def on_start(self, ev):
                watch.on_start(ev)

            def on_end(self, ev):
                watch.on_end(ev)

        self._installed = event.install_listener("numba:compile", Listener())
        self._installed.__enter__()

    def __exit__(self, *exc):
        if self in _WAITING:
            _WAITING.remove(self)
        if self._installed is not None:
            self._installed.__exit__(*exc)
            self._installed = None
        return False

    def elapsed(self):
        """Seconds spent compiling so far, the compilation under way included."""
        running = time.perf_counter() - self._start if self._depth else 0.0
        return self.seconds + running

    def on_start(self, ev):
        if self._depth == 0:
            self._start = time.perf_counter()
            self._part_functions = 0
            self._part = part_name(ev.data["dispatcher"].py_func.__name__)
            if self.write is not None and not self._announced:
                why = f" ({_WHY[0]})" if _WHY[0] else ""
                self.write(f"flexmbs: compiling kernels (first use; cached for later runs){why}\n")
                self._announced = True
        self._depth += 1

    def on_end(self, ev):
        self._depth -= 1
        self.functions += 1
        self._part_functions += 1
        now = time.perf_counter()
        if self._depth > 0:
            if self.live and self.write is not None and now - self._shown > self.REFRESH:
                self._shown = now
                name = ev.data["dispatcher"].py_func.__name__
                self.write(
                    f"\r  {self._part}: {self._part_functions} functions, "
                    f"{now - self._start:.0f} s ({name})".ljust(78)[:78]
                )
            return
        took = now - self._start
        self.seconds += took
        self.parts.append((self._part, self._part_functions, took))
        if self.write is not None and took > 0.5:
            self.write(
                ("\r" if self.live else "")
                + f"  {self._part}: {self._part_functions} functions in {took:.0f} s".ljust(
                    78 if self.live else 0
                )
                + "\n"
            )
