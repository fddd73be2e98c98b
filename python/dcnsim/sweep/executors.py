"""Where runs execute: a local process pool (default) or Ray. Each run is one independent task."""

from __future__ import annotations

import os
from concurrent.futures import ProcessPoolExecutor, as_completed
from typing import Callable, Optional

from .store import execute


def run_local(root: str, tasks: list, workers: Optional[int], on_done: Callable[[dict], None], on_start=None) -> None:
    workers = workers or os.cpu_count() or 1
    if workers == 1:
        for key, spec in tasks:
            if on_start:
                on_start(key)
            on_done(execute(root, key, spec))
        return
    with ProcessPoolExecutor(max_workers=workers) as pool:
        futures = {}
        for key, spec in tasks:
            futures[pool.submit(execute, root, key, spec)] = key
            if on_start:
                on_start(key)
        for f in as_completed(futures):
            on_done(f.result())


def run_ray(root: str, tasks: list, address: Optional[str], on_done: Callable[[dict], None], on_start=None) -> None:
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
        pending = []
        for key, spec in tasks:
            pending.append(remote.remote(root, key, spec))
            if on_start:
                on_start(key)
        while pending:
            done, pending = ray.wait(pending, num_returns=1)
            for ref in done:
                on_done(ray.get(ref))
    finally:
        if started_here:
            ray.shutdown()
