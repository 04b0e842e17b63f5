"""The output times of a run: multiples of the output step after its start, then its
end exactly, made a slice at a time."""

import numpy as np

from ..errors import ModelError

__all__ = ["OutputTimes", "output_times", "MAX_OUTPUT_ROWS"]

MAX_OUTPUT_ROWS = 1e8  # output rows of one run
OUTPUT_TIME_SLACK = 1e-9  # of a step: t_end within it of a multiple is that multiple


class OutputTimes:
    """The output times after t0: multiples of `step`, then t_end exactly (s), made
    a slice at a time (`times[a:b]`, an array; `len(times)`), so that a run's memory
    does not grow with its number of outputs."""

    def __init__(self, t0, t_end, step):
        n_out = (t_end - t0) / step
        if n_out > MAX_OUTPUT_ROWS:
            raise ModelError(
                f"{t_end - t0:g} s at a step of {step:g} s would make "
                f"{n_out:.3g} output rows (at most {MAX_OUTPUT_ROWS:.0e}): "
                "expected a larger step",
                "output",
                "step",
            )
        self.t0, self.t_end, self.step = t0, t_end, step
        self.n_steps = int(np.floor(n_out + OUTPUT_TIME_SLACK))
        last = t0 + step * self.n_steps
        self.extra = self.n_steps == 0 or t_end - last > OUTPUT_TIME_SLACK * step

    def __len__(self):
        return self.n_steps + self.extra

    def __getitem__(self, index):
        a, b, _ = index.indices(len(self))
        out = self.t0 + self.step * np.arange(a + 1, max(a, b) + 1, dtype=float)
        if self.extra and b == len(self) and b > a:
            out[-1] = self.t_end
        if b == len(self) and b > a:
            out[-1] = min(out[-1], self.t_end)
        return out


def output_times(t0, t_end, step):
    """All the output times after t0 (OutputTimes) as one array (s)."""
    times = OutputTimes(t0, t_end, step)
    return times[0 : len(times)]
