"""What a grading call running beside others (a worker of the pool's code lane) lets the pool see and stop.

Such a call shares its process with other calls, so the pool cannot kill the process to stop it, nor
time it by the process's CPU. The call's grader registers what it is waiting for instead: anything with
`cancel()` (stop it now), `cpu_seconds()` (CPU its child processes have had), `cpu_wait_seconds()` and
`held_back()` (the waits for a CPU they ended, and whether they wait for one now) and `yielded` (they have run
long and take only spare CPU now), like sandbox.executor's Cancel. Outside such a worker `current()` is
None and graders go on as usual.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Protocol


class Stoppable(Protocol):
    def cancel(self) -> None: ...
    def cpu_seconds(self) -> float: ...
    def cpu_wait_seconds(self) -> float: ...
    def held_back(self) -> bool: ...
    @property
    def yielded(self) -> bool: ...


@dataclass(eq=False)
class CallControl:
    stop_reason: str | None = None  # set when the pool stopped the call: its answer is `timeout` with this
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _waiting_on: Stoppable | None = None

    def attach(self, stoppable: Stoppable | None) -> None:
        """What the call is waiting for now (None: nothing); a call stopped before attaching is stopped on it."""
        with self._lock:
            self._waiting_on = stoppable
            if stoppable is not None and self.stop_reason is not None:
                stoppable.cancel()

    def stop(self, reason: str) -> None:
        with self._lock:
            self.stop_reason = reason
            if self._waiting_on is not None:
                self._waiting_on.cancel()

    def yielded_usage(self) -> tuple[float, float] | None:
        """(CPU, time waiting for a CPU) of the programs it waits for, once they have yielded (run long); None
        before, or when none."""
        waiting_on = self._waiting_on
        if waiting_on is None or not waiting_on.yielded:
            return None
        return waiting_on.cpu_seconds(), waiting_on.cpu_wait_seconds()

    def held_back(self) -> bool:
        """Whether the programs it waits for want a CPU now and other work holds it (cpu_priority.held_back)."""
        waiting_on = self._waiting_on
        return waiting_on is not None and waiting_on.held_back()


_local = threading.local()


def current() -> CallControl | None:
    """The control of the call this thread runs, in a worker that runs calls side by side; else None."""
    return getattr(_local, "control", None)


def set_current(control: CallControl | None) -> None:
    _local.control = control
