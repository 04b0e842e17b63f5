"""Runs spread over dask.distributed workers (the `dask` extra): the executor that
`flexmbs sweep` and `flexmbs fit --scheduler` hand their runs to.

Without a scheduler address, a LocalCluster of one single-threaded worker process per
core (or `workers`) on this machine; with one (`tcp://host:8786`), that cluster's
workers. The executor is the client's concurrent.futures view, so the callers only
`submit` and `map`.

The kernels: a worker imports flexmbs as any process does, so it reads the kernels
the installation carries (a wheel's, flexmbs.kernel_cache) and the user kernel cache
(`FLEXMBS_CACHE_DIR`, else `~/.cache/flexmbs`), for the processor this machine's runs
use (`flexmbs precompile --native` may have chosen native ones). Local workers inherit
this process's environment and so read the same places; after `flexmbs precompile`
(or with a wheel's kernels) they compile nothing. Otherwise the callers first warm the
cache by one run on one worker, so the other workers load the kernels instead of
compiling them all at once. Workers of a remote cluster read their own installation's
kernels, or a cache folder on a shared file system named by FLEXMBS_CACHE_DIR in their
environment.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from concurrent.futures import Executor

from ..errors import FlexmbsError

__all__ = ["dask_executor", "MAX_LOCAL_WORKERS_PER_CORE"]

MAX_LOCAL_WORKERS_PER_CORE = 4
"""A local cluster has at most this many worker processes a core: each runs one case
at a time, so more only share the cores and the memory."""


@contextlib.contextmanager
def dask_executor(scheduler: str | None = None, workers: int | None = None) -> Iterator[Executor]:
    """A concurrent.futures Executor over dask.distributed workers (the module
    docstring); the cluster it started, if any, is closed on exit."""
    try:
        from distributed import Client, LocalCluster
    except ImportError:
        raise FlexmbsError(
            "running on workers needs dask.distributed: pip install 'flexmbs[dask]'"
        ) from None
    if scheduler is not None:
        try:
            client = Client(scheduler, timeout="20s")
        except OSError as exc:
            raise FlexmbsError(f"--scheduler {scheduler}: cannot connect ({exc})") from None
        with client:
            yield client.get_executor()
        return
    cores = os.cpu_count() or 1
    n = workers or cores
    if n > MAX_LOCAL_WORKERS_PER_CORE * cores:
        raise FlexmbsError(
            f"--workers {n}: a local cluster has at most {MAX_LOCAL_WORKERS_PER_CORE} worker "
            f"processes a core ({MAX_LOCAL_WORKERS_PER_CORE * cores} on this machine's "
            f"{cores}): each runs one case at a time, so more only share the cores"
        )
    with (
        LocalCluster(
            n_workers=n,
            threads_per_worker=1,
            processes=True,
            dashboard_address=None,
            silence_logs=50,
        ) as cluster,
        Client(cluster) as client,
    ):
        yield client.get_executor()
