"""Runs spread over dask.distributed workers (the `dask` extra): the executor that
`flexmbs sweep` and `flexmbs fit --scheduler` hand their runs to.

Without a scheduler address, a LocalCluster of one single-threaded worker process per
core (or `workers`) on this machine; with one (`tcp://host:8786`), that cluster's
workers. The executor is the client's concurrent.futures view, so the callers only
`submit` and `map`.

The kernels: a worker imports flexmbs as any process does, so it reads the kernels
the installation carries (a wheel's, flexmbs.runtime.kernel_cache) and the user kernel cache
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
import time
import warnings
from collections.abc import Callable, Iterator
from concurrent.futures import Executor, Future
from typing import Any

from ..errors import FlexmbsError

__all__ = ["dask_executor", "LocalClusterWhenSlow", "MAX_LOCAL_WORKERS_PER_CORE"]

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
    with warnings.catch_warnings():  # another cluster's dashboard port: no matter
        warnings.filterwarnings("ignore", "Port .* is already in use", UserWarning)
        cluster = LocalCluster(
            n_workers=n,
            threads_per_worker=1,
            processes=True,
            dashboard_address=None,
            silence_logs=50,
        )
    with cluster, Client(cluster) as client:
        yield client.get_executor()


class LocalClusterWhenSlow(Executor):
    """An Executor that makes its runs here, one after another, until they take more
    than `threshold` s each on average (the first left out: it loads the kernels);
    from then on it sends them to a LocalCluster of `workers` processes
    (dask_executor), started then (`log` is told). A cluster costs seconds to start
    and its workers to load the kernels, which runs of a fraction of a second would
    not win back. `shutdown` (or leaving a `with` block) closes the cluster, if it
    was started."""

    def __init__(
        self,
        workers: int,
        threshold: float = 1.0,
        log: Callable[[str], object] | None = None,
    ) -> None:
        self.workers, self.threshold, self.log = workers, threshold, log
        self.seconds, self.count, self.calls = 0.0, 0, 0
        self._stack = contextlib.ExitStack()
        self._cluster: Executor | None = None

    @property
    def started(self) -> bool:
        """Whether the runs now go to the cluster."""
        return self._cluster is not None

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        if self._cluster is None and self.count and self.seconds / self.count > self.threshold:
            if self.log:
                self.log(
                    f"a run takes {self.seconds / self.count:.2g} s: the runs of each step go "
                    f"side by side on a local dask cluster of {self.workers} workers from here"
                )
            self._cluster = self._stack.enter_context(dask_executor(None, self.workers))
        if self._cluster is not None:
            return self._cluster.submit(fn, *args, **kwargs)
        future: Future[Any] = Future()
        start = time.perf_counter()
        try:
            future.set_result(fn(*args, **kwargs))
        except BaseException as exc:  # the caller's result() raises it, as a pool's would
            future.set_exception(exc)
        self.calls += 1
        if self.calls > 1:  # the first loads the kernels
            self.seconds += time.perf_counter() - start
            self.count += 1
        return future

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        self._stack.close()
        self._cluster = None
