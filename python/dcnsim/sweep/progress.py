"""A one-line progress report over the runs of a sweep (done, running, failed, ETA)."""

from __future__ import annotations

import sys
import time
from typing import TYPE_CHECKING, Optional

if TYPE_CHECKING:
    from .store import RunStatus


class Progress:
    def __init__(self, total: int, cached: int, quiet: bool) -> None:
        self.total, self.done, self.failed, self.running = total, cached, 0, 0
        self.waiting = 0  # runs another sweep on the same directory is simulating
        self.cached = cached
        self.quiet = quiet
        self.t0 = time.time()

    def start(self, _key: Optional[str] = None) -> None:
        self.running += 1
        self.show()

    def finish(self, r: RunStatus, elsewhere: bool = False) -> None:
        """A run ended: here (it was running) or, with `elsewhere`, in another sweep we waited on."""
        if elsewhere:
            self.waiting -= 1
        else:
            self.running = max(0, self.running - 1)
        if r["status"] == "busy":
            self.waiting += 1
        elif r["status"] == "failed":
            self.failed += 1
            if not self.quiet:
                print(f"\nrun {r['key']} failed: {r['error']}: {r['message']}", file=sys.stderr)
        else:
            self.done += 1
        self.show()

    def show(self) -> None:
        if self.quiet:
            return
        fresh = self.done - self.cached
        elapsed = time.time() - self.t0
        left = self.total - self.done - self.failed
        eta = f"{elapsed / fresh * left:.0f}s" if fresh > 0 and left > 0 else "-"
        elsewhere = f", {self.waiting} running in another sweep" if self.waiting else ""
        print(f"\r[dcnsim sweep] {self.done}/{self.total} done ({self.cached} cached), {self.running} in flight"
              f"{elsewhere}, {self.failed} failed, ETA {eta}   ", end="", file=sys.stderr, flush=True)

    def close(self) -> None:
        if not self.quiet:
            print(file=sys.stderr)
