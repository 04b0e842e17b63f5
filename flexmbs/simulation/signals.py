"""The signals that end a run as Ctrl-C does."""

import contextlib
import signal
import threading

from ..errors import RunTerminated

__all__ = ["TERMINATING_SIGNALS", "signals_end_the_run"]

TERMINATING_SIGNALS = ("SIGTERM", "SIGHUP")
"""Signals that end a run as Ctrl-C does (RunTerminated), the last state written."""


@contextlib.contextmanager
def signals_end_the_run():
    """While a run goes: TERMINATING_SIGNALS raise RunTerminated (in the main thread;
    elsewhere the handlers cannot be set and the signals keep theirs)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum, frame):
        raise RunTerminated(signum)

    previous = {}
    for name in TERMINATING_SIGNALS:
        if hasattr(signal, name):
            sig = getattr(signal, name)
            previous[sig] = signal.signal(sig, handler)
    try:
        yield
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)
