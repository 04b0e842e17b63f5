"""A kernel loaded from the kernel cache keeps its linking module unparsed
(flexmbs.runtime.cached_library) until a compilation links it: it runs as compiled, and a new
function that calls it compiles, links it and runs as it should. numba's runtime
module is saved in the user cache by the first process that looks a kernel up there,
read from there by the next, and compiled again over a file that cannot be read."""

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
JIT = os.environ.get("NUMBA_DISABLE_JIT") != "1"

_LOAD_THEN_LINK = textwrap.dedent("""
    import json
    import numba
    import numpy as np
    from numba.core.runtime import rtsys
    from flexmbs.numerics.linalg import cross
    from flexmbs.runtime.cached_library import LinkOnDemandLibrary

    a, b, out = np.array([1.0, 0, 0]), np.array([0, 1.0, 0]), np.zeros(3)
    cross(a, b, out)
    library = cross.overloads[cross.signatures[0]].library
    loaded = {"out": out.tolist(), "hits": sum(cross._cache_hits.values()),
              "class": type(library).__name__,
              "lazy": isinstance(library, LinkOnDemandLibrary) and library.links_on_demand,
              "runtime_read": getattr(rtsys.library, "links_on_demand", False)}

    @numba.njit
    def twice_cross(a, b, out):
        cross(a, b, out)
        out *= 2.0

    twice = np.zeros(3)
    twice_cross(np.array([0, 1.0, 0]), np.array([0, 0, 1.0]), twice)
    print(json.dumps({**loaded, "twice": twice.tolist(),
                      "lazy_after_link": getattr(library, "links_on_demand", False)}))
""")


def _runtime_files(cache):
    return list(Path(cache).rglob("nrt-*.bin"))


def _run(cache, **env):
    run_env = {k: v for k, v in os.environ.items()
               if k not in ("NUMBA_CACHE_DIR", "FLEXMBS_FULL_REFRESH")}
    run_env.update(FLEXMBS_CACHE_DIR=str(cache), PYTHONPATH=str(ROOT), **env)
    r = subprocess.run([sys.executable, "-c", _LOAD_THEN_LINK], env=run_env,
                       capture_output=True, text=True, timeout=900, cwd="/")
    assert r.returncode == 0, r.stderr[-2000:]
    return json.loads(r.stdout.strip().splitlines()[-1])


@pytest.mark.skipif(not JIT, reason="numba off")
def test_a_cached_kernel_links_on_demand_into_a_new_compilation(tmp_path):
    compiled = _run(tmp_path)  # an empty cache: cross compiles and is saved
    assert compiled["hits"] == 0 and not compiled["lazy"]
    assert compiled["out"] == [0, 0, 1] and compiled["twice"] == [2, 0, 0]
    assert not compiled["runtime_read"] and len(_runtime_files(tmp_path)) == 1

    loaded = _run(tmp_path)
    assert loaded["hits"] == 1 and loaded["class"] == "LinkOnDemandLibrary"
    assert loaded["lazy"], "a kernel loaded from the cache parsed its linking module"
    assert loaded["out"] == [0, 0, 1]
    assert loaded["twice"] == [2, 0, 0] and not loaded["lazy_after_link"]
    assert loaded["runtime_read"], "the runtime's module was compiled again"
    _runtime_files(tmp_path)[0].write_bytes(b"not a pickle")
    spoilt = _run(tmp_path)  # an unreadable runtime file: compiled and saved again
    assert not spoilt["runtime_read"] and spoilt["twice"] == [2, 0, 0]
    assert _runtime_files(tmp_path)[0].read_bytes() != b"not a pickle"

    numbas_way = _run(tmp_path, FLEXMBS_FULL_REFRESH="1")
    assert numbas_way["hits"] == 1 and numbas_way["class"] == "JITCodeLibrary"
    assert numbas_way["out"] == [0, 0, 1] and numbas_way["twice"] == [2, 0, 0]
