"""The kernel cache's compile lock (flexmbs.runtime.kernel_cache.compile_locked): of two
processes that need one kernel for one signature, one compiles it and the other waits
and loads it; a lock file left by a process that was killed blocks nobody; a holder
that is alive but stuck is waited for FLEXMBS_COMPILE_WAIT seconds, then the kernel is
compiled all the same."""

import json
import os
import signal
import subprocess
import sys
import time

import pytest

pytest.importorskip("fcntl")

CHILD = r"""
import json, sys
import numpy as np
import numba
from flexmbs.runtime.kernel_cache import compile_counts, compile_lock_path, exclusive_file_lock
from flexmbs.kinematics.rotations import rotation_about_axis as kernel

args = (np.array([0.0, 0.0, 1.0]), 0.3, np.empty((3, 3)))
types = tuple(numba.typeof(a) for a in args)


def report():
    print(json.dumps({"compiled": sum(kernel._cache_misses.values()),
                      "loaded": sum(kernel._cache_hits.values()), **compile_counts}),
          flush=True)


if sys.argv[1] == "hold":  # take the kernel's lock, compile when told, then let go
    with exclusive_file_lock(compile_lock_path(kernel, types), 60) as held:
        print("held" if held else "not held", flush=True)
        sys.stdin.readline()
        kernel(*args)
        report()
    sys.stdin.readline()
else:
    print("calling", flush=True)
    kernel(*args)
    report()
"""


def _child(env, mode):
    return subprocess.Popen(
        [sys.executable, "-c", CHILD, mode],
        env=env,
        text=True,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


@pytest.fixture
def empty_cache(tmp_path):
    """The environment of a process whose kernel cache is empty."""
    env = dict(os.environ, FLEXMBS_CACHE_DIR=str(tmp_path / "kernels"), FLEXMBS_KERNELS="generic")
    env.pop("NUMBA_CACHE_DIR", None)
    env.pop("FLEXMBS_COMPILE_WAIT", None)
    return env


def _stopped(*processes):
    for p in processes:
        if p.poll() is None:
            p.kill()
        p.wait(timeout=60)


def test_a_kernel_another_process_is_compiling_is_loaded_not_compiled(empty_cache):
    holder = _child(empty_cache, "hold")
    waiter = None
    try:
        assert holder.stdout.readline().strip() == "held"
        waiter = _child(empty_cache, "call")
        assert waiter.stdout.readline().strip() == "calling"
        # the waiter says so once it has waited 2 s for the lock's holder
        for line in waiter.stderr:
            if "waiting" in line:
                break
        else:
            pytest.fail("the process calling the kernel ended without waiting for it")
        assert f"waiting for process {holder.pid}, which compiles rotation_about_axis" in line
        holder.stdin.write("compile\n")
        holder.stdin.flush()
        compiled = json.loads(holder.stdout.readline())
        holder.stdin.write("exit\n")
        holder.stdin.flush()
        out, err = waiter.communicate(timeout=300)
        assert waiter.returncode == 0, err
        loaded = json.loads(out)
    finally:
        _stopped(holder, *([waiter] if waiter else []))
    assert (compiled["compiled"], compiled["loaded"]) == (1, 0)
    assert (loaded["compiled"], loaded["loaded"]) == (0, 1)
    assert loaded["waits"] == 1 and loaded["wait_seconds"] > 2.0
    assert loaded["timeouts"] == 0


def test_a_lock_left_by_a_killed_process_blocks_nobody(empty_cache):
    holder = _child(empty_cache, "hold")
    try:
        assert holder.stdout.readline().strip() == "held"
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait(timeout=60)
    locks = [
        os.path.join(d, f)
        for d, _, files in os.walk(empty_cache["FLEXMBS_CACHE_DIR"])
        for f in files
        if f.endswith(".lock")
    ]
    assert len(locks) == 1  # left behind, naming the dead holder
    with open(locks[0]) as f:
        assert f.read().strip() == str(holder.pid)
    start = time.perf_counter()
    out, err = _child(dict(empty_cache, FLEXMBS_COMPILE_WAIT="600"), "call").communicate(
        timeout=300
    )
    result = json.loads(out.splitlines()[-1])
    assert (result["compiled"], result["loaded"], result["waits"]) == (1, 0, 0)
    assert "waiting" not in err
    assert time.perf_counter() - start < 300  # well short of the 600 s a held lock costs


def test_a_stuck_holder_is_waited_for_then_the_kernel_compiles(empty_cache):
    holder = _child(empty_cache, "hold")
    try:
        assert holder.stdout.readline().strip() == "held"
        out, err = _child(dict(empty_cache, FLEXMBS_COMPILE_WAIT="3"), "call").communicate(
            timeout=300
        )
    finally:
        _stopped(holder)
    result = json.loads(out.splitlines()[-1])
    assert (result["compiled"], result["loaded"], result["timeouts"]) == (1, 0, 1)
    assert f"waiting for process {holder.pid}" in err


def test_a_held_lock_is_taken_again_by_its_process(tmp_path):
    from flexmbs.runtime.kernel_cache import exclusive_file_lock

    path = str(tmp_path / "a" / "k.lock")  # the folder is made
    with exclusive_file_lock(path, 0.0) as outer:
        with exclusive_file_lock(path, 0.0) as inner:
            assert outer and inner
        probe = subprocess.run(
            [
                sys.executable,
                "-c",
                "import sys; from flexmbs.runtime.kernel_cache import exclusive_file_lock as lock\n"
                f"with lock({path!r}, 0.2) as held: sys.exit(0 if held else 3)",
            ],
            timeout=120,
        )
        assert probe.returncode == 3  # held here: another process cannot take it
    with exclusive_file_lock(path, 0.0) as again:
        assert again
