"""What the result file's writer does when a write fails or a signal comes: the
signals held off during a commit, the HDF5 view of a file dropped unwritten, the room
for the end kept in a side file, the system's reason named."""

from __future__ import annotations

import contextlib
import os
import re
import signal
from collections.abc import Iterator

import h5py

__all__ = ["DEFERRED_SIGNALS", "discard_view", "signals_deferred", "system_reason", "write_ballast"]

_UNCLOSED: list[h5py.File] = []  # files whose write failed and that did not close


def discard_view(file: h5py.File) -> None:
    """Close an HDF5 file whose view is ahead of the disk (a write of it failed) without
    writing that view over what the disk holds: its descriptor is pointed at a file in
    memory first, so that what closing writes goes there. One that does not close is
    kept unreleased (anything of it released later would write to its descriptor)."""
    try:
        handle = int(file.id.get_vfd_handle())
        sink = (
            os.memfd_create("flexmbs-discarded")
            if hasattr(os, "memfd_create")
            else os.open(os.devnull, os.O_RDWR)
        )
        os.dup2(sink, handle)
        os.close(sink)
    except (OSError, RuntimeError, ValueError, TypeError):
        _UNCLOSED.append(file)
        return
    try:
        file.close()
    except (OSError, RuntimeError, ValueError):
        _UNCLOSED.append(file)


def write_ballast(path: str, nbytes: int) -> str | None:
    """A hidden side file of `nbytes` beside `path`, whose removal gives back the room
    for the end of a run where none can be held (None if it cannot be written)."""
    name = os.path.join(
        os.path.dirname(os.path.abspath(path)), f".{os.path.basename(path)}.{os.getpid()}.room"
    )
    try:
        with open(name, "wb") as f:
            f.write(b"\0" * nbytes)
    except OSError:
        with contextlib.suppress(OSError):
            os.remove(name)
        return None
    return name


def system_reason(exc: BaseException) -> str:
    """The system's reason in an HDF5 write error ("File too large", "No space left on
    device"), else the error's first line."""
    found = re.search(r"error message = '([^']*)'", str(exc))
    if found:
        return found.group(1)
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror
    lines = str(exc).strip().splitlines()
    return lines[0] if lines else type(exc).__name__


DEFERRED_SIGNALS = ("SIGINT", "SIGTERM", "SIGHUP")


@contextlib.contextmanager
def signals_deferred() -> Iterator[None]:
    """Blocks DEFERRED_SIGNALS in this thread while the block runs; one that arrives
    meanwhile is delivered (its handler runs) when it ends. Where signals cannot be
    blocked (not POSIX), the block runs as it is."""
    if not hasattr(signal, "pthread_sigmask"):
        yield
        return
    mask = {getattr(signal, n) for n in DEFERRED_SIGNALS if hasattr(signal, n)}
    old = signal.pthread_sigmask(signal.SIG_BLOCK, mask)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)
