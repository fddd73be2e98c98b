"""Where runs execute: a local process pool (default) or Ray. Each run is one independent task.

A task that dies without a result (a crashed worker process, a lost Ray worker) is recorded as a
failure of its run like any other; the sweep goes on."""

from __future__ import annotations

import multiprocessing
import os
import signal
from concurrent.futures import ProcessPoolExecutor, as_completed
from typing import Any, Callable, Dict, List, Optional, Tuple

from ..spec import StopEvent
from .checks import JsonObject
from .store import RunStatus, Store, SweepTag, execute

#: A run to simulate: its key, spec and the sweep that asks for it.
Task = Tuple[str, JsonObject, SweepTag]


def _lost(root: str, key: str, e: BaseException) -> RunStatus:
    """The failure record of a run whose task ended without reporting (the worker died)."""
    wrapped = RuntimeError(f"the worker running it ended without a result ({type(e).__name__}: {e})")
    return Store(root).record_failure(key, wrapped)


def _init_worker(stop: StopEvent) -> None:
    """Worker processes ignore Ctrl-C: a SIGINT reaching a worker between tasks would kill it, and
    the pool would fork a replacement that never saw the signal and runs a queued task to the end.
    The sweep process alone handles Ctrl-C and sets `stop`, which ends every worker's run."""
    from .. import spec

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    spec.set_external_stop(stop)


def run_local(root: str, tasks: List[Task], workers: Optional[int], on_done: Callable[[RunStatus], None],
              on_start: Optional[Callable[[str], None]] = None, flow_tables: bool = True) -> None:
    workers = workers or os.cpu_count() or 1
    if workers == 1:
        for key, spec, tag in tasks:
            if on_start:
                on_start(key)
            on_done(execute(root, key, spec, flow_tables, tag))
        return
    stop = multiprocessing.get_context().Event()
    pool_size = min(workers, len(tasks)) or 1
    with ProcessPoolExecutor(max_workers=pool_size, initializer=_init_worker, initargs=(stop,)) as pool:
        futures: Dict[Any, str] = {}
        for key, spec, tag in tasks:
            futures[pool.submit(execute, root, key, spec, flow_tables, tag)] = key
            if on_start:
                on_start(key)
        try:
            for f in as_completed(futures):
                try:
                    r = f.result()
                except Exception as e:  # BrokenProcessPool, or a result that could not be sent back
                    r = _lost(root, futures[f], e)
                on_done(r)
        except KeyboardInterrupt:
            # Stop the runs in progress, drop what is queued, and wait until every worker has
            # cleaned up (temporary directories, claims) before reporting the interruption.
            stop.set()
            pool.shutdown(wait=True, cancel_futures=True)
            raise


def run_ray(root: str, tasks: List[Task], address: Optional[str], on_done: Callable[[RunStatus], None],
            on_start: Optional[Callable[[str], None]] = None, flow_tables: bool = True) -> None:
    try:
        import ray
    except ImportError:
        raise RuntimeError("the ray executor needs Ray: pip install 'dcnsim[ray]'") from None
    started_here = False
    if not ray.is_initialized():
        # No address: a local Ray instance on this machine; an address: an existing cluster.
        ray.init(address=address, include_dashboard=False, log_to_driver=False, ignore_reinit_error=True)
        started_here = True
    try:
        remote = ray.remote(num_cpus=1, max_retries=2)(execute)
        pending: Dict[Any, str] = {}
        for key, spec, tag in tasks:
            pending[remote.remote(root, key, spec, flow_tables, tag)] = key
            if on_start:
                on_start(key)
        while pending:
            done, _ = ray.wait(list(pending), num_returns=1)
            for ref in done:
                key = pending.pop(ref)
                try:
                    r = ray.get(ref)
                except Exception as e:  # a task that raised or a worker that died
                    r = _lost(root, key, e)
                on_done(r)
    finally:
        if started_here:
            ray.shutdown()
