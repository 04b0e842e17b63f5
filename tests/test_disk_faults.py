"""Result files on a disk that fills for real (tests/disk_faults.py, on a small tmpfs):
another process fills it while a run writes, repeatedly and at different points; it
fills and frees while the writer commits; a run starts with less room than one commit;
room cannot be held (the free space seen decides); a write fails for a reason the
writer did not see coming. Every time, the rows committed stay readable, each value
as written, the status says why the run stopped, and freeing the disk changes
nothing.

The tmpfs is mounted by the scenario itself: as root, or as the root of a user
namespace (`unshare --user --map-root-user --mount`, which an unprivileged CI runner
allows where the kernel lets users make namespaces). Where neither can mount, the
tests that need a small disk are skipped and say why; the last one needs none."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
SCRIPT = HERE / "disk_faults.py"
NO_ROOM = "no room for the result file"


def _mount_prefix():
    """The command prefix under which the scenario can mount a tmpfs, or None."""
    probe = "d=$(mktemp -d) && mount -t tmpfs -o size=64k tmpfs $d && umount $d && rmdir $d"
    tries = [[]] if os.geteuid() == 0 else []
    if shutil.which("unshare"):
        tries.append(["unshare", "--user", "--map-root-user", "--mount"])
    for prefix in tries:
        if subprocess.run([*prefix, "sh", "-c", probe], capture_output=True).returncode == 0:
            return prefix
    return None


PREFIX = _mount_prefix()
needs_mount = pytest.mark.skipif(
    PREFIX is None, reason="no tmpfs can be mounted here (not root, no user namespaces)")


def scenario(name, tmp_path, trials=1, prefix=None):
    """The JSON lines the scenario prints, one a trial."""
    cmd = [*(PREFIX if prefix is None else prefix), sys.executable, str(SCRIPT), name,
           str(tmp_path / "disk"), str(trials)]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=3600)
    assert r.returncode == 0, r.stderr
    assert "Traceback" not in r.stderr and "Exception ignored" not in r.stderr, r.stderr
    return [json.loads(line) for line in r.stdout.splitlines()]


def stopped_for_want_of_room(trial, seen):
    """The run stopped with one reason, the one the file records, and the rows it
    says are written are the file's, each as written."""
    assert NO_ROOM in trial["said"], trial
    assert seen["values_as_written"] and not seen["damage"], trial
    assert seen["status"].startswith("failed: " + NO_ROOM), trial
    assert trial["said"].endswith(seen["status"].split("; the run stops, ")[1]), trial


@needs_mount
def test_a_disk_filled_by_another_process_keeps_every_commit(tmp_path):
    """dd fills the disk while the writer commits, at three points of a run: each time
    the committed rows are in the file, every value as written, the status says no
    room, and the file reads the same once the disk is freed."""
    trials = scenario("filled", tmp_path, trials=3)
    assert len(trials) == 3
    for trial in trials:
        stopped_for_want_of_room(trial, trial["full"])
        assert trial["full"]["rows"] > 0 and trial["freed"] == trial["full"]
    assert len({t["full"]["rows"] for t in trials}) == 3  # filled at three points


@needs_mount
def test_flexmbs_run_on_a_disk_another_process_fills(tmp_path):
    """The command as a user runs it: dd fills the disk mid-run; exit status 1, one
    line naming the file, the rows up to the last commit readable, evenly spaced."""
    (trial,) = scenario("run", tmp_path)
    assert trial["exit"] == 1, trial
    lines = trial["stderr"].strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("flexmbs: error: ") and NO_ROOM in lines[0]
    assert trial["rows"] > 1000 and trial["steps_even"]
    assert trial["status"].startswith("failed: " + NO_ROOM)
    assert f"the rows up to t = {(trial['rows'] - 1) * 2e-5:g} s are written" in lines[0]
    assert trial["freed_rows"] == trial["rows"]


@needs_mount
def test_a_disk_that_fills_and_frees_while_the_writer_commits(tmp_path):
    """Another process fills the disk, frees part of it and fills it again, over and
    over, while the writer commits: the room a commit holds first cannot be taken, so
    no write of a commit fails; the run stops for want of room with its rows whole."""
    for trial in scenario("churned", tmp_path, trials=2):
        assert "writing the result file failed" not in trial["said"], trial
        stopped_for_want_of_room(trial, trial["freed"])


@needs_mount
def test_less_room_than_one_commit_writes_the_rows_that_fit(tmp_path):
    """1.5 MB left when the run starts, 6 MB of rows in its first commit: the rows that
    fit are written, not none."""
    (trial,) = scenario("tight", tmp_path)
    stopped_for_want_of_room(trial, trial["full"])
    assert 0 < trial["full"]["rows"] < 20_000


@needs_mount
def test_where_room_cannot_be_held_a_failed_write_leaves_the_last_commit(tmp_path):
    """On a file system without fallocate the writer holds each commit's room by
    writing zeros past the file's end, so another process filling the disk meanwhile
    cannot fail a commit half-way: the file holds every committed row as written and
    the status says why the run stopped."""
    for trial in scenario("unheld", tmp_path, trials=2):
        seen = trial["freed"]
        assert seen["values_as_written"] and not seen["damage"], trial
        assert seen["status"].startswith("failed: "), trial
        assert seen["status"][len("failed: "):] in trial["said"], trial


def test_a_write_that_fails_unforeseen_leaves_the_last_commit(tmp_path):
    """A write past a file-size limit the writer is not told of fails inside HDF5 in
    the middle of a commit: the file holds the commit before, every value as written,
    and says why (no small disk needed: runs everywhere)."""
    for trial in scenario("efbig", tmp_path, trials=2, prefix=[]):
        assert "writing the result file failed: File too large" in trial["said"], trial
        full = trial["full"]
        assert full["rows"] >= trial["first_commit"] and full["values_as_written"], trial
        t_last = (full["rows"] - 1) * 1e-3
        assert trial["said"].endswith(f"the rows up to t = {t_last:g} s are written"), trial
        assert full["status"] == "failed: writing the result file failed: File too large"
