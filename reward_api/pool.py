"""A pool of grading processes with a hard deadline on every call.

Graders run untrusted-shaped input through sympy, regexes and parsers that can hang
in C code where no Python-level timer reaches. So every call runs in a worker
process, and the parent enforces the deadline from outside:

- inside the worker, a SIGALRM (the worker's own main thread, so signals work)
  interrupts ordinary Python code at `soft_fraction * deadline`, and the worker
  answers `timeout` and lives on;
- in the parent, a call still unanswered at the deadline gets its worker killed
  (SIGKILL) and replaced; the call answers `timeout`. A worker that dies on its own
  (segfault, OOM kill) is replaced the same way and its call answers `error`.

Workers are forked from a forkserver that has already imported the graders, so a
replacement starts in milliseconds, not seconds.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import multiprocessing
import resource
import signal
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import Any, Literal

log = logging.getLogger("reward_api.pool")

SOFT_FRACTION = 0.9  # the in-worker alarm fires before the parent's hard kill
_START_TIMEOUT_S = 120.0


@dataclass(frozen=True)
class CallOutcome:
    status: Literal["ok", "timeout", "error"]
    value: Any = None
    error: str | None = None
    seconds: float = 0.0


class _DeadlineExceeded(BaseException):
    """Raised by the worker's alarm; a BaseException so graders' `except Exception` can't swallow it."""


def _on_alarm(signum: int, frame: object) -> None:
    raise _DeadlineExceeded


def _worker_main(conn: Connection, memory_mb: int, initializer: Callable[[], None] | None) -> None:
    if memory_mb > 0:
        limit = memory_mb * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    signal.signal(signal.SIGALRM, _on_alarm)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    if initializer is not None:
        initializer()
    conn.send(("ready", None))
    while True:
        try:
            func, args, soft_deadline_s = conn.recv()
        except (EOFError, OSError):
            return
        conn.send(_call_with_alarm(func, args, soft_deadline_s))


def _call_with_alarm(func: Callable[..., Any], args: Sequence[Any], soft_deadline_s: float) -> tuple:
    signal.setitimer(signal.ITIMER_REAL, soft_deadline_s)
    try:
        reply: tuple = ("ok", func(*args))
    except _DeadlineExceeded:
        reply = ("timeout", f"deadline of {soft_deadline_s:.3g}s exceeded")
    except MemoryError:
        reply = ("error", "out of memory (worker address-space limit)")
    except Exception as exc:  # a grader bug must not kill the worker: report it per item
        reply = ("error", f"{type(exc).__name__}: {str(exc)[:500]}")
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
    return reply


class _Worker:
    def __init__(self, process: multiprocessing.process.BaseProcess, conn: Connection) -> None:
        self.process = process
        self.conn = conn

    def kill(self) -> None:
        with contextlib.suppress(Exception):
            self.process.kill()
        self.process.join(timeout=5)
        self.conn.close()


def _wait_reply(conn: Connection, timeout_s: float) -> tuple:
    """Blocking wait for one reply (runs on a waiter thread, never the event loop)."""
    try:
        if not conn.poll(timeout_s):
            return ("hard_timeout", None)
        return conn.recv()
    except (EOFError, OSError):
        return ("crashed", None)


class WorkerPool:
    """`await pool.call(func, *args)` runs `func(*args)` in a worker under the deadline.

    `func` must be a module-level function (it is pickled by name).
    """

    def __init__(
        self,
        size: int,
        deadline_s: float,
        memory_mb: int = 0,
        initializer: Callable[[], None] | None = None,
        preload: Sequence[str] = (),
        on_restart: Callable[[str], None] | None = None,
    ) -> None:
        if size < 1:
            raise ValueError(f"pool size must be >= 1, got {size}")
        self.size = size
        self.deadline_s = deadline_s
        self._memory_mb = memory_mb
        self._initializer = initializer
        self._on_restart = on_restart or (lambda reason: None)
        self._ctx = multiprocessing.get_context("forkserver")
        self._ctx.set_forkserver_preload(list(preload))
        self._idle: asyncio.Queue[_Worker] = asyncio.Queue()
        self._all: set[_Worker] = set()
        self._waiters = ThreadPoolExecutor(max_workers=2 * size + 2, thread_name_prefix="pool-wait")
        self._replacing: set[asyncio.Task] = set()
        self._closed = False
        self.restarts = 0

    async def start(self) -> None:
        workers = await asyncio.gather(*(self._spawn() for _ in range(self.size)))
        for worker in workers:
            self._idle.put_nowait(worker)

    @property
    def alive(self) -> int:
        return len(self._all)

    @property
    def ready(self) -> bool:
        return not self._closed and self.alive == self.size

    async def call(self, func: Callable[..., Any], *args: Any, deadline_s: float | None = None) -> CallOutcome:
        deadline = self.deadline_s if deadline_s is None else deadline_s
        worker = await self._idle.get()
        started = time.perf_counter()
        loop = asyncio.get_running_loop()
        try:
            worker.conn.send((func, args, deadline * SOFT_FRACTION))
            kind, payload = await loop.run_in_executor(self._waiters, _wait_reply, worker.conn, deadline)
        except BaseException:  # cancelled mid-call, or the pipe broke: the worker's state is unknown
            self._replace(worker, "cancelled")
            raise
        seconds = time.perf_counter() - started
        if kind == "hard_timeout":
            self._replace(worker, "deadline")
            return CallOutcome("timeout", error=f"killed at the {deadline:.3g}s deadline", seconds=seconds)
        if kind == "crashed":
            worker.process.join(timeout=1)  # reap it so the exit code is known
            code = worker.process.exitcode
            self._replace(worker, "crash")
            return CallOutcome("error", error=f"grading process died (exit code {code})", seconds=seconds)
        self._idle.put_nowait(worker)
        if kind == "ok":
            return CallOutcome("ok", value=payload, seconds=seconds)
        return CallOutcome(kind, error=payload, seconds=seconds)

    async def close(self) -> None:
        self._closed = True
        for task in list(self._replacing):
            task.cancel()
        for worker in list(self._all):
            worker.kill()
        self._all.clear()
        self._waiters.shutdown(wait=False, cancel_futures=True)

    def _replace(self, worker: _Worker, reason: str) -> None:
        worker.kill()
        self._all.discard(worker)
        self.restarts += 1
        self._on_restart(reason)
        log.warning("grading worker replaced", extra={"reason": reason})
        if self._closed:
            return
        task = asyncio.get_running_loop().create_task(self._respawn())
        self._replacing.add(task)
        task.add_done_callback(self._replacing.discard)

    async def _respawn(self) -> None:
        delay = 0.1
        while not self._closed:
            try:
                self._idle.put_nowait(await self._spawn())
                return
            except Exception:
                log.exception("could not start a grading worker; retrying in %.1fs", delay)
                await asyncio.sleep(delay)
                delay = min(delay * 2, 10.0)

    async def _spawn(self) -> _Worker:
        parent_conn, child_conn = self._ctx.Pipe(duplex=True)
        process = self._ctx.Process(
            target=_worker_main,
            args=(child_conn, self._memory_mb, self._initializer),
            daemon=True,
            name="reward-grader",
        )
        loop = asyncio.get_running_loop()
        await loop.run_in_executor(self._waiters, process.start)
        child_conn.close()
        worker = _Worker(process, parent_conn)
        kind, _ = await loop.run_in_executor(self._waiters, _wait_reply, parent_conn, _START_TIMEOUT_S)
        if kind != "ready":
            worker.kill()
            raise RuntimeError(f"grading worker failed to start ({kind}, exit code {process.exitcode})")
        self._all.add(worker)
        return worker
