"""The progress bar of a run on a terminal."""

import shutil
import sys
import time

__all__ = ["Progress"]

PROGRESS_INTERVAL = 0.25  # s between progress-line refreshes


class Progress:
    """The progress bar of a run on a terminal (tqdm): simulated time against t_end,
    the rate (simulated s per wall s, the compilation reported by `watch`, a
    CompileWatch, left out) and the steps taken."""

    def __init__(self, enabled, t0, t_end, watch):
        self.enabled = enabled
        self.t0, self.t_end = t0, t_end
        self.watch = watch
        self.compiled = watch.elapsed()
        self.start = time.perf_counter()
        self.last = -1.0
        self.bar = None
        if enabled:
            from tqdm import tqdm

            size = shutil.get_terminal_size(fallback=(100, 24))
            self.bar = tqdm(  # a terminal of unknown size (0 x 0) gets 100 x 24
                total=t_end - t0,
                file=sys.stderr,
                ncols=size.columns if size.columns > 40 else 100,
                nrows=size.lines if size.lines > 0 else 24,
                bar_format="{percentage:3.0f}%|{bar}| {desc}",
                leave=True,
            )

    def update(self, t, nsteps, force=False):
        now = time.perf_counter()
        if self.bar is None or (not force and now - self.last < PROGRESS_INTERVAL):
            return
        self.last = now
        wall = now - self.start - (self.watch.elapsed() - self.compiled)
        rate = (t - self.t0) / wall if wall > 0 else 0.0
        self.bar.n = min(t - self.t0, self.t_end - self.t0)
        self.bar.set_description_str(
            f"t = {t:.4g}/{self.t_end:.4g} s, {rate:.3g} s/s, {nsteps} steps", refresh=False
        )
        self.bar.refresh()

    def close(self):
        if self.bar is not None:
            self.bar.close()
