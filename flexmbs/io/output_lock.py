"""One writer per output file: a run holds a lock on its result file from before it
compiles until its file is closed, and a second run on the same path is refused.

The lock is a hidden file beside the output, `.NAME.lock`, that records the holder
(host, process id, start time, command line) and is held with an exclusive `flock`
while the run goes. The operating system lets go of a `flock` when its process ends,
however it ends (SIGKILL, a crash), so a lock file left behind by a run that is gone
is stale and taken over; on a file system without `flock` the recorded host and
process id decide: a process of this host that is gone left a stale lock, one that
lives (or one of another host) holds it.
"""

from __future__ import annotations

import contextlib
import datetime
import errno
import json
import os
import socket
import sys
from types import TracebackType
from typing import Any

from ..errors import FlexmbsError

try:  # POSIX; elsewhere only the recorded holder decides
    import fcntl
except ImportError:  # pragma: no cover - not POSIX
    fcntl = None  # type: ignore[assignment]

__all__ = [
    "OutputLock",
    "OutputLocked",
    "lock_path",
    "lock_holder",
    "refuse_if_locked",
    "process_lives",
]


class OutputLocked(FlexmbsError):
    """Another run holds the lock on the output file."""


def lock_path(path: str | os.PathLike[str]) -> str:
    """The lock file of the output `path`: `.NAME.lock` in its folder."""
    path = os.path.abspath(os.fspath(path))
    return os.path.join(os.path.dirname(path), f".{os.path.basename(path)}.lock")


def process_lives(host: str, pid: int) -> bool:
    """Whether process `pid` of `host` may still run: one of this host that exists
    (another user's too), or any of another host (which cannot be asked)."""
    if host != socket.gethostname():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _holder_text(holder: dict[str, Any]) -> str:
    """The holder for a message: its process, host, start and command."""
    text = f"pid {holder.get('pid', '?')} on {holder.get('host', '?')}"
    if holder.get("started"):
        text += f", since {holder['started']}"
    if holder.get("command"):
        text += f": {holder['command']}"
    return text


def _read_holder(fd: int) -> dict[str, Any]:
    """The holder a lock file records ({} when empty or unreadable)."""
    try:
        os.lseek(fd, 0, os.SEEK_SET)
        data = os.read(fd, 65536)
        holder = json.loads(data.decode("utf-8")) if data.strip() else {}
    except (OSError, ValueError):
        return {}
    return holder if isinstance(holder, dict) else {}


def lock_holder(path: str | os.PathLike[str]) -> dict[str, Any] | None:
    """The holder of the lock on the output `path` while another process holds it
    (host, pid, started, command), None when nobody does (no lock file, or a stale
    one)."""
    name = lock_path(path)
    try:
        fd = os.open(name, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return None
    try:
        holder = _read_holder(fd)
        if fcntl is not None:
            try:
                fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
            except BlockingIOError:
                return holder or {"pid": "?", "host": "?"}
            except OSError:
                pass  # no flock here: the recorded holder decides
            else:
                return None
        return holder if _recorded_holder_lives(holder) else None
    finally:
        os.close(fd)


def _locked(path: str | os.PathLike[str], holder: dict[str, Any]) -> OutputLocked:
    return OutputLocked(
        f"{os.fspath(path)}: another run is writing it "
        f"({_holder_text(holder)}); wait for it to end or choose another -o"
    )


def refuse_if_locked(path: str | os.PathLike[str]) -> None:
    """OutputLocked, naming the holder, while another process holds the lock on the
    output `path` (a look only: the run takes the lock itself)."""
    holder = lock_holder(path)
    if holder is not None:
        raise _locked(path, holder)


def _recorded_holder_lives(holder: dict[str, Any]) -> bool:
    """Whether the recorded holder may still run (process_lives)."""
    try:
        return bool(holder) and process_lives(str(holder.get("host")), int(holder["pid"]))
    except (KeyError, TypeError, ValueError):
        return False


class OutputLock:
    """The lock on one output file (use `acquire`/`release`, or `with`).

    `acquire` raises OutputLocked, naming the holder, when another run holds it;
    `stale` then tells whether a lock left by a run that is gone was taken over (its
    holder, for a message), and the hidden partial files such a run left beside the
    output are removed.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = os.fspath(path)
        self.lock_file = lock_path(path)
        self._fd = -1
        self.stale: dict[str, Any] | None = None

    @property
    def held(self) -> bool:
        return self._fd >= 0

    def acquire(self) -> OutputLock:
        if self.held:
            return self
        folder = os.path.dirname(self.lock_file)
        try:
            os.makedirs(folder, exist_ok=True)
        except OSError:
            return self  # the writer then names the folder's problem
        for _ in range(100):  # a holder may remove its lock file meanwhile
            try:
                fd = os.open(
                    self.lock_file, os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o644
                )
            except OSError as exc:
                if exc.errno in (errno.EROFS, errno.EACCES, errno.EPERM):
                    return self  # a folder that cannot be written on: the writer says so
                raise
            holder = _read_holder(fd)
            if not self._lock_fd(fd, holder):
                os.close(fd)
                raise _locked(self.path, holder)
            try:
                same = os.path.samestat(os.fstat(fd), os.stat(self.lock_file))
            except FileNotFoundError:
                same = False
            if not same:  # its holder removed it as we locked it: lock the new one
                os.close(fd)
                continue
            mine = holder.get("pid") == os.getpid() and holder.get("host") == socket.gethostname()
            self.stale = holder if holder and not mine else None
            self._fd = fd
            self._record()
            if self.stale is not None:
                self._remove_partials(self.stale)
            return self
        raise OutputLocked(f"{self.path}: its lock file {self.lock_file} keeps changing")

    def _lock_fd(self, fd: int, holder: dict[str, Any]) -> bool:
        """Lock the open lock file; False when another process holds it."""
        if fcntl is not None:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return True
            except BlockingIOError:
                return False
            except OSError:
                pass  # no flock on this file system
        return not _recorded_holder_lives(holder) or (
            holder.get("pid") == os.getpid() and holder.get("host") == socket.gethostname()
        )

    def _record(self) -> None:
        holder = {
            "host": socket.gethostname(),
            "pid": os.getpid(),
            "started": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
            "command": " ".join(
                os.path.basename(a) if i == 0 else a for i, a in enumerate(sys.argv)
            ),
        }
        data = json.dumps(holder).encode("utf-8")
        try:
            os.ftruncate(self._fd, 0)
            os.lseek(self._fd, 0, os.SEEK_SET)
            os.write(self._fd, data)
        except OSError:  # a full disk: the lock holds all the same, its holder unnamed
            pass

    def _remove_partials(self, holder: dict[str, Any]) -> None:
        """The hidden partial file the stale holder left (`.NAME.PID.partial`)."""
        folder, name = os.path.split(os.path.abspath(self.path))
        with contextlib.suppress(OSError, TypeError, ValueError):
            os.remove(os.path.join(folder, f".{name}.{int(holder.get('pid', -1))}.partial"))

    def release(self) -> None:
        """Remove the lock file and let go of it (nothing when not held)."""
        if not self.held:
            return
        with contextlib.suppress(OSError):
            os.remove(self.lock_file)
        os.close(self._fd)
        self._fd = -1

    def __enter__(self) -> OutputLock:
        return self.acquire()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.release()
