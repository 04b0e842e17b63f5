"""Room on a disk held for a file before it is written: a write that lands in blocks
already held cannot fail for want of space, whatever another process does meanwhile.

`reserve(fd, nbytes)` holds `nbytes` past the end of the open file `fd` without
changing its size (Linux `fallocate` with FALLOC_FL_KEEP_SIZE, which tmpfs, ext4, xfs
and btrfs support): the blocks are the file's from then on, counted by `du`, and a
later write that grows the file into them needs no new block. `release(fd)` gives back
what is held past the end (a truncation to the file's own size). Where holding is not
possible (another system, a file system without it), `reserve` says so with None and
the caller holds the room by writing it: `hold_by_writing(fd, start, nbytes)` writes
zeros over the bytes from `start` (where the file's writer will write next) that lie
past the file's end, so the disk gives its blocks to the file before the writer needs
them. The file then ends in zeros its writer has not used (its size grows to
start + nbytes); a reader that reads the file by its own structure (HDF5) ignores them.

The limit a file-size limit (RLIMIT_FSIZE, `ulimit -f`) sets is not room that can be
held: `room_for` counts it.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import os
import resource
import shutil
import sys

__all__ = ["reserve", "hold_by_writing", "release", "room_for", "NO_ROOM_ERRORS"]

FALLOC_FL_KEEP_SIZE = 0x01
NO_ROOM_ERRORS = (errno.ENOSPC, errno.EDQUOT, errno.EFBIG)
"""The errors that mean "no room": the disk is full, a quota is reached, or the file
would pass its size limit."""
UNSUPPORTED_ERRORS = (errno.EOPNOTSUPP, errno.ENOSYS, errno.EINVAL, errno.ENODEV)


def _load_fallocate() -> ctypes._CFuncPtr | None:  # type: ignore[name-defined]
    """libc's fallocate(2), or None where there is none (not Linux)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        fallocate = libc.fallocate
    except (OSError, AttributeError):
        return None
    fallocate.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_int64, ctypes.c_int64]
    fallocate.restype = ctypes.c_int
    return fallocate


_FALLOCATE = _load_fallocate()


def reserve(fd: int, nbytes: int) -> bool | None:
    """Hold `nbytes` bytes of disk past the end of the open file `fd` (its size stays).

    True when they are held; False when the disk (or a quota) has not that much room;
    None when holding room is not possible here (the caller then relies on the free
    space it sees). Other errors (EIO, EBADF) are raised as OSError.
    """
    if _FALLOCATE is None:
        return None
    if nbytes <= 0:
        return True
    end = os.fstat(fd).st_size
    if _FALLOCATE(fd, FALLOC_FL_KEEP_SIZE, end, int(nbytes)) == 0:
        return True
    code = ctypes.get_errno()
    if code in NO_ROOM_ERRORS:
        return False
    if code in UNSUPPORTED_ERRORS:
        return None
    if code == errno.EINTR:
        return reserve(fd, nbytes)
    raise OSError(code, os.strerror(code))


ZERO_BLOCK = 1 << 20
"""Bytes of zeros written at a time by hold_by_writing."""


def hold_by_writing(fd: int, start: int, nbytes: int) -> bool:
    """Hold the bytes [start, start + nbytes) of the open file `fd` by writing zeros over
    the part of them past its end (what lies before the end is the file's already).

    True when they are held; False when the disk (or a quota, or a file-size limit)
    has not that much room, the file then cut back to its size before. Other errors
    are raised as OSError.
    """
    size = os.fstat(fd).st_size
    at, end = max(size, int(start)), int(start) + int(nbytes)
    zeros = bytes(min(ZERO_BLOCK, max(end - at, 0)))
    try:
        while at < end:
            at += os.pwrite(fd, zeros[: end - at], at)
    except OSError as exc:
        if exc.errno not in NO_ROOM_ERRORS:
            raise
        os.ftruncate(fd, size)
        return False
    return True


def release(fd: int) -> None:
    """Give back the blocks held past the end of the open file `fd` (a truncation to
    its own size frees them on Linux's file systems)."""
    try:
        os.ftruncate(fd, os.fstat(fd).st_size)
    except OSError:
        pass


def held_past_end(fd: int) -> int:
    """Bytes of disk the open file `fd` holds past its end (blocks allocated beyond its
    size: what `reserve` held and no write has used yet), within a block."""
    st = os.fstat(fd)
    return max(0, st.st_blocks * 512 - st.st_size)


def room_for(path: str) -> int:
    """Bytes `path` may still grow by as far as can be seen: the free space of its disk
    (to an unprivileged user), or less under a file-size limit (RLIMIT_FSIZE)."""
    folder = os.path.dirname(os.path.abspath(path))
    room = shutil.disk_usage(folder).free
    return min(room, size_limit_room(path))


def size_limit_room(path: str) -> int:
    """Bytes `path` may grow by before it reaches the file-size limit of `ulimit -f`
    (a very large number without one)."""
    soft, _ = resource.getrlimit(resource.RLIMIT_FSIZE)
    if soft == resource.RLIM_INFINITY:
        return 2**62
    size = os.path.getsize(path) if os.path.exists(path) else 0
    return max(0, soft - size)
