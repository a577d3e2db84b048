"""A pool of grading processes with a hard deadline on every call, where slow calls
cannot starve the others.

Graders run untrusted-shaped input through sympy, regexes and parsers that can hang
in C code where no Python-level timer reaches. So every call runs in a worker
process, and the parent enforces the deadline from outside:

- a call's deadline counts from when a worker takes it; the wait for a free worker is
  bounded apart (`wait_until`): a call still waiting then answers `timeout` unrun;
- inside the worker, a SIGALRM (the worker's own main thread, so signals work)
  interrupts ordinary Python code at `SOFT_FRACTION` of the time left, and the worker
  answers `timeout` and lives on;
- in the parent, a call still unanswered at the deadline gets its worker killed
  (SIGKILL) and replaced; the call answers `timeout`.

Slow calls step aside. A call still running after `slow_after_s` is *demoted*: its
worker leaves the pool for the rest of that call (reniced to the lowest CPU priority
unless the caller says its work runs in child processes), a fresh worker takes its
place at once, and the demoted one exits when its call ends. Normal calls never
queue behind slow ones, and slow ones get the CPU the normal ones leave. At most
`max_slow` calls are demoted at once; past that a slow call is cut at `slow_after_s`
(it answers `timeout`). Calls whose work runs in child processes with limits of their
own (sandboxed code) are demoted without renicing, under a cap of their own, and past
it keep their worker rather than be cut.

Calls that look costly before they start (the caller says so: `heavy=True`) go to a
heavy lane of `heavy_size` workers: they never take a normal worker. A heavy call runs at
normal priority until it has burnt `slow_after_s` of CPU, like any call, and then keeps its
worker, reniced to the lowest priority (never cut: this lane is where costly calls may take
their time); that worker is replaced when the call ends. The guess is cheap and often wrong,
and a call at the lowest priority from its start got no CPU at all while normal calls kept
the cores busy: one that needed milliseconds answered `timeout` at its deadline (issue 20).

Calls whose work runs in child processes (`in_children=True`: sandboxed programs, which
mostly means waiting) go to a lane of `children_size` workers of their own, each running
up to `children_calls` such calls side by side in threads: a program spinning to its time
limit holds a thread, not a process, and never the workers normal items need. The sandbox
gives such programs only spare CPU once they have run a moment (sandbox/cpu_priority.py),
so under load they starve rather than slow anything else. When every slot of a worker is
taken and the programs it waits for have run a while but together get almost no CPU (the
machine is busy with other grading), those calls are stopped and answer `timeout`:
holding them would only make the calls queued behind them wait. A call of this lane is
stopped through its grader (reward_api/call_control.py), never by killing its process,
which others share.

Faults: a worker that dies during a call (killed from outside, segfault) is replaced
and the call is retried once on a fresh worker; a call that kills two workers answers
`error`. A worker that caught MemoryError answers `error` and is replaced, since its
heap stays grown. A call whose arguments cannot be pickled answers `error` without
touching a worker.

Workers are forked from a forkserver that has already imported the graders, so a
replacement starts in milliseconds, not seconds.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import itertools
import logging
import math
import multiprocessing
import os
import pickle
import resource
import select
import signal
import struct
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any, Literal, NamedTuple, NoReturn

from reward_api import call_control
from reward_api.call_control import CallControl
from sandbox.cpu_priority import starving, stat_fields, threads_of

log = logging.getLogger("reward_api.pool")

SOFT_FRACTION = 0.9  # the in-worker alarm fires before the parent's hard kill
LOW_NICENESS = 19  # slow calls' workers: only the CPU normal workers leave (~1.5% of a core)
_START_TIMEOUT_S = 120.0
_CUT_GRACE_S = 1.0  # a cut call not answering its alarm by then is stuck in C code: its worker is replaced
_SOFT_DEADLINE = struct.Struct("d")  # prefixes each request: the worker's alarm, in seconds
# Side-by-side workers: each request starts with (stop?, call id); a stop request carries its reason, an
# answer starts with its call id.
_CALL_HEADER = struct.Struct("?q")
_CALL_ID = struct.Struct("q")
STARVED_LOOK_S = 0.25  # how often a side-by-side worker looks at the CPU its calls' programs get
STARVED_CORES = 0.1  # ...and together getting less than this share of one core, they are starved
_CALL_STACK_BYTES = 2 * 1024 * 1024  # each thread of a side-by-side worker, and the threads its calls start
_STUCK_S = 10.0  # a stopped side-by-side call still unanswered then: its worker is replaced
_CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
# A request this small is written on the event loop: the idle worker has emptied the pipe, whose buffer holds it.
_DIRECT_SEND_BYTES = 32 * 1024
# multiprocessing.Connection's framing, read here in bulk (_Worker.take_answers): a length, or -1 and a long one
_FRAME, _LONG_FRAME = struct.Struct("!i"), struct.Struct("!Q")
_READ_BYTES = 1 << 20
_ANSWERS_NAP_S = 0.002  # with more of a chunk to come, wait this long for answers to gather before looking
# What a call's answer costs its worker: these kinds discard it, for this reason.
_LOST = {"hard_timeout": "deadline", "died": "crash", "out_of_memory": "memory"}
# What pickling raises for what it cannot carry: a lambda, a socket, a list nested a thousand deep.
_UNPICKLABLE = (pickle.PicklingError, RecursionError, TypeError, AttributeError)
# multiprocessing's Process.start() polls every child started before it, and two polls of one dead child at once
# split its exit status between them (the loser reads 255): starts (in threads) and exit-code reads take turns.
_CHILD_STATUS_LOCK = threading.Lock()


class CallOutcome(NamedTuple):
    """A call's outcome: immutable, and a tuple because the front makes one per item (a frozen dataclass's
    __init__ took three times as long)."""

    status: Literal["ok", "timeout", "error"]
    value: Any = None
    error: str | None = None
    seconds: float = 0.0  # in a worker
    queued_seconds: float = 0.0  # waiting for a free worker first
    cpu_seconds: float = 0.0  # CPU the worker itself spent (a timeout with little CPU was starved, not costly)
    worker_died: bool = False  # the worker process died during the call (retried once)
    pickled: bytes | None = None  # an `ok` value as the worker pickled it: a cache keeps these bytes, not a re-pickle


class _DeadlineExceeded(BaseException):
    """Raised by the worker's alarm; a BaseException so graders' `except Exception` can't swallow it."""


def _on_alarm(signum: int, frame: object) -> None:
    raise _DeadlineExceeded


def _worker_main(
    conn: Connection, memory_mb: int, initializer: Callable[[], None] | None, calls_at_once: int = 1
) -> None:
    if memory_mb > 0:
        limit = memory_mb * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    signal.signal(signal.SIGALRM, _on_alarm)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    if initializer is not None:
        initializer()
    conn.send_bytes(pickle.dumps(("ready", None, time.process_time())))
    if calls_at_once > 1:
        _serve_side_by_side(conn, calls_at_once)
    while True:
        try:
            request = conn.recv_bytes()
        except (EOFError, OSError):
            return
        (soft_deadline_s,) = _SOFT_DEADLINE.unpack_from(request)
        func, calls = pickle.loads(memoryview(request)[_SOFT_DEADLINE.size :])
        for args in calls:  # a chunk (WorkerPool.call_many): each call has its own alarm and answer
            kind, payload = _call_with_alarm(func, args, soft_deadline_s)
            conn.send_bytes(_reply(kind, payload, time.process_time()))
            if kind == "out_of_memory":
                return  # the heap stays grown after a MemoryError: the parent starts a fresh worker


def _call_with_alarm(func: Callable[..., Any], args: Sequence[Any], soft_deadline_s: float) -> tuple[str, Any]:
    try:
        signal.setitimer(signal.ITIMER_REAL, soft_deadline_s)
        try:
            return ("ok", func(*args))
        finally:  # an alarm that fires in here still lands in the handlers below
            signal.setitimer(signal.ITIMER_REAL, 0)
    except _DeadlineExceeded:
        return ("timeout", f"deadline of {soft_deadline_s:.3g}s exceeded")
    except MemoryError:
        return ("out_of_memory", "out of memory (worker address-space limit)")
    except Exception as exc:  # a grader bug must not kill the worker: report it per item
        return ("error", f"{type(exc).__name__}: {str(exc)[:500]}")


def _reply(kind: str, payload: Any, cpu_seconds: float) -> bytes:
    """An answer: its kind, payload, the CPU seconds given, and when it ended (time.monotonic(), one clock for
    every process): the parent may read it later, with the answers after it. An `ok` value is pickled on its own,
    so that the parent has its bytes (CallOutcome.pickled)."""
    ended = time.monotonic()
    try:
        if kind == "ok":
            payload = pickle.dumps(payload, pickle.HIGHEST_PROTOCOL)
        return pickle.dumps((kind, payload, cpu_seconds, ended))
    except _UNPICKLABLE as exc:
        error = f"the grader's answer could not be sent back ({type(exc).__name__}: {str(exc)[:200]})"
        return pickle.dumps(("error", error, cpu_seconds, ended))


def _serve_side_by_side(conn: Connection, calls_at_once: int) -> NoReturn:
    """Run up to `calls_at_once` calls at once, each in a thread, until the parent goes (then exit at once:
    threads still waiting on programs must not hold the process)."""
    send_lock = threading.Lock()
    controls: dict[int, CallControl] = {}
    threading.stack_size(_CALL_STACK_BYTES)  # many threads under the worker's address-space limit
    threads = ThreadPoolExecutor(calls_at_once, thread_name_prefix="call")

    def run(call_id: int, func: Callable[..., Any], args: Sequence[Any]) -> None:
        control = controls[call_id]
        call_control.set_current(control)
        cpu_before = time.thread_time()
        try:
            kind, payload = "ok", func(*args)
        except Exception as exc:  # MemoryError too: the other calls of this process go on
            kind, payload = "error", f"{type(exc).__name__}: {str(exc)[:500]}"
        finally:
            call_control.set_current(None)
        if control.stop_reason is not None:
            kind, payload = "stopped", control.stop_reason
        reply = _CALL_ID.pack(call_id) + _reply(kind, payload, time.thread_time() - cpu_before)
        with send_lock:
            del controls[call_id]  # before answering: the parent may send the next call at once
            conn.send_bytes(reply)

    threading.Thread(target=_stop_starved_calls, args=(controls, calls_at_once), daemon=True).start()
    while True:
        try:
            request = conn.recv_bytes()
        except (EOFError, OSError):
            os._exit(0)
        stop, call_id = _CALL_HEADER.unpack_from(request)
        body = memoryview(request)[_CALL_HEADER.size :]
        if stop:
            if (control := controls.get(call_id)) is not None:
                control.stop(bytes(body).decode())
            continue
        func, args = pickle.loads(body)
        controls[call_id] = CallControl()
        threads.submit(run, call_id, func, args)


def _stop_starved_calls(controls: dict[int, CallControl], calls_at_once: int) -> None:
    """While every slot is taken, and the calls whose programs run long (yielded: they take only spare CPU) and
    starve (they waited for a CPU, or wait for one now: cpu_priority.starving; a program that sleeps does not) hold
    more than half of them and together get almost no CPU, stop the excess, those that have had the least CPU first:
    other work holds the machine, and they would hold their slots until their deadlines while the calls queued behind
    them wait. Half the slots stay for programs that are merely slow (a few heavy tests in a batch get their CPU once
    the programs queued before them have run)."""
    last: dict[int, tuple[float, float, float]] = {}  # call id -> (time, CPU, CPU wait) at the previous look
    while True:
        time.sleep(STARVED_LOOK_S)
        if len(controls) < calls_at_once:
            last.clear()
            continue
        now, rates = time.monotonic(), {}
        for call_id, control in list(controls.items()):
            usage = control.yielded_usage()
            if usage is None:
                last.pop(call_id, None)
                continue
            cpu, waited = usage
            if call_id in last:
                seen_at, cpu_then, waited_then = last[call_id]
                if starving(cpu - cpu_then, waited - waited_then, now - seen_at, control.held_back):
                    rates[call_id] = (cpu - cpu_then) / (now - seen_at)
            last[call_id] = (now, cpu, waited)
        for call_id in set(last) - set(controls):
            del last[call_id]
        excess = len(rates) - calls_at_once // 2
        if excess <= 0 or sum(rates.values()) >= STARVED_CORES:
            continue
        for call_id in sorted(rates, key=lambda call_id: last[call_id][1])[:excess]:
            rate = rates[call_id]
            if (control := controls.get(call_id)) is not None:
                control.stop(
                    f"stopped: its programs got {rate:.0%} of a core while every one of this worker's "
                    f"{calls_at_once} code slots was taken (REWARD_API_CODE_CALLS) and other grading held the "
                    "CPU; the service is saturated with programs that run long"
                )


class _Worker:
    def __init__(self, process: multiprocessing.process.BaseProcess, conn: Connection, lane: _Lane) -> None:
        self.process = process
        self.conn = conn
        self.lane = lane
        self.cpu_seen = 0.0  # the worker's process_time() at its last answer
        self.received = bytearray()  # a one-call-at-a-time worker's pipe, read in bulk: a message's start
        self.answers: deque[tuple[str, Any, float, float]] = deque()  # read, not yet taken
        self.demoted = False
        self.lowered = False  # reniced to LOW_NICENESS (it cannot be un-niced)
        self.calls: dict[int, asyncio.Future] = {}  # side-by-side lane: calls sent and not yet answered
        self.free_slots = 0  # its entries in its lane's idle queue: all of them when it runs no call
        self.send_lock = asyncio.Lock()  # side-by-side lane: one message at a time on the pipe

    @property
    def low_priority(self) -> bool:
        """Already out of the normal workers' way: demoted, or reniced in the heavy lane."""
        return self.demoted or self.lowered

    def cpu_now(self) -> float:
        """The worker's CPU seconds so far, read from outside (it may be stuck in C code)."""
        try:
            fields = stat_fields(Path(f"/proc/{self.process.pid}/stat"))
            return (int(fields[11]) + int(fields[12])) / _CLOCK_TICKS  # utime + stime
        except (OSError, IndexError, ValueError):
            return self.cpu_seen

    def lower(self) -> None:
        """Lower every thread's priority to LOW_NICENESS (Linux niceness is per thread)."""
        self.lowered = True
        for thread in threads_of(self.process.pid):
            with contextlib.suppress(OSError):
                os.setpriority(os.PRIO_PROCESS, thread, LOW_NICENESS)

    def take_answers(self) -> bool:
        """Read all the answers the pipe holds (after `select` saw it readable), at least one; False at its end.
        One read serves every answer that came meanwhile: a cheap call's answer costs the parent little more
        than its unpickling."""
        while True:
            data = os.read(self.conn.fileno(), _READ_BYTES)
            if not data:
                return False
            self.received += data
            self.answers.extend(pickle.loads(message) for message in _whole_messages(self.received))
            if self.answers:
                return True  # else the rest of a message is on its way (answers are small): read on

    def kill(self) -> None:
        """SIGKILL, without waiting: the forkserver, its parent, reaps it (the event loop must not block).
        A side-by-side worker's pipe is closed by its reader thread when it sees the end."""
        with contextlib.suppress(Exception):
            self.process.kill()
        if self.lane.calls_at_once == 1:
            self.conn.close()


@dataclass(eq=False)
class _Chunk:
    """Calls sent to workers together (WorkerPool.call_many), and their outcomes as they come."""

    func: Callable[..., Any]
    calls: Sequence[tuple[Any, ...]]
    asked: float
    wait_until: float
    deadline: float
    outcomes: list[CallOutcome | None] = field(init=False)
    retried: set[int] = field(default_factory=set)  # calls whose worker died once: retried once

    def __post_init__(self) -> None:
        self.outcomes = [None] * len(self.calls)


@dataclass(eq=False)
class _Lane:
    """Workers of one kind: how many there should be, those alive, and a free slot per call each may take
    (one for most lanes; a worker appears in `idle` once per free slot). In a lane where slow calls stay
    (the heavy lane), a slow call keeps its worker, lowered, instead of stepping aside or being cut."""

    size: int
    calls_at_once: int = 1
    slow_calls_stay: bool = False
    workers: set[_Worker] = field(default_factory=set)
    idle: asyncio.Queue[_Worker] = field(default_factory=asyncio.Queue)


def _whole_messages(received: bytearray) -> list[bytearray]:
    """The complete messages at the start of `received`, taken out of it."""
    messages, at = [], 0
    while len(received) - at >= _FRAME.size:
        (size,) = _FRAME.unpack_from(received, at)
        start = at + _FRAME.size
        if size == -1:
            if len(received) - start < _LONG_FRAME.size:
                break
            (size,) = _LONG_FRAME.unpack_from(received, start)
            start += _LONG_FRAME.size
        if len(received) - start < size:
            break
        messages.append(received[start : start + size])
        at = start + size
    del received[:at]
    return messages


def _ok(pickled: bytes, timing: dict[str, float]) -> CallOutcome:
    """A call's value, from the bytes its worker pickled it to (kept with it)."""
    return CallOutcome("ok", value=pickle.loads(pickled), pickled=pickled, **timing)


def _unpicklable(exc: BaseException) -> CallOutcome:
    return CallOutcome("error", error=f"the item cannot be sent to a grading process ({type(exc).__name__})")


def start_worker_process(process: multiprocessing.process.BaseProcess) -> None:
    with _CHILD_STATUS_LOCK:
        process.start()


def worker_exit_code(process: multiprocessing.process.BaseProcess, wait_s: float = 1.0) -> int | None:
    """A dead worker's exit code, once the forkserver (its parent) has reaped it; None if not within `wait_s`."""
    with _CHILD_STATUS_LOCK:
        process.join(wait_s)
        return process.exitcode


def _no_worker_in_time(asked: float) -> CallOutcome:
    """A call that waited for a free worker (or slot) until its `wait_until`: answered unrun."""
    waited = time.monotonic() - asked
    error = f"no grading worker was free within {waited:.3g}s: the service is overloaded"
    return CallOutcome("timeout", error=error, queued_seconds=waited)


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
        slow_after_s: float = 0.25,
        max_slow: int | None = None,
        heavy_size: int = 0,
        children_size: int = 0,
        children_calls: int = 1,
    ) -> None:
        if size < 1:
            raise ValueError(f"pool size must be >= 1, got {size}")
        if slow_after_s <= 0:
            raise ValueError(f"slow_after_s must be > 0, got {slow_after_s}")
        self.size = size
        self.deadline_s = deadline_s
        self.slow_after_s = slow_after_s
        self.max_slow = 4 * size if max_slow is None else max_slow
        self._memory_mb = memory_mb
        self._initializer = initializer
        self._on_restart = on_restart or (lambda reason: None)
        self._ctx = multiprocessing.get_context("forkserver")
        self._ctx.set_forkserver_preload(list(preload))
        self._normal = _Lane(size)
        self._heavy = _Lane(heavy_size, slow_calls_stay=True)
        self._children = _Lane(children_size, calls_at_once=max(1, children_calls))
        self._slow: set[_Worker] = set()  # demoted, each finishing one slow call
        self._slow_in_children: set[_Worker] = set()  # the same, for calls whose work is in child processes
        self._threads = ThreadPoolExecutor(max_workers=4, thread_name_prefix="pool-io")
        self._replacing: set[asyncio.Task] = set()
        self._closed = False
        self._started = False
        self._failing_spawns = 0  # replacements retrying after a failed start: the pool cannot heal itself now
        self._call_ids = itertools.count(1)
        self.restarts = 0

    async def start(self) -> None:
        lanes = [lane for lane in (self._normal, self._heavy, self._children) for _ in range(lane.size)]
        for worker in await asyncio.gather(*(self._spawn(lane) for lane in lanes)):
            self._open(worker)
        self._started = True

    @property
    def alive(self) -> int:
        """Workers of the normal lane."""
        return len(self._normal.workers)

    @property
    def slow(self) -> int:
        """Calls running demoted right now."""
        return len(self._slow) + len(self._slow_in_children)

    @property
    def ready(self) -> bool:
        """Started, and replacing workers as they go. A worker being replaced (after a deadline or a slow call)
        is normal work, not unreadiness: a load balancer must not take a busy replica out for it."""
        return self._started and not self._closed and self._failing_spawns == 0

    async def call(
        self,
        func: Callable[..., Any],
        *args: Any,
        deadline_s: float | None = None,
        wait_until: float | None = None,
        in_children: bool = False,
        heavy: bool = False,
    ) -> CallOutcome:
        """Run `func(*args)` in a worker within `deadline_s` (default: the pool's), if a worker is free
        by `wait_until` (time.monotonic(); default: wait as long as it takes).

        `in_children=True` is for calls whose work runs in child processes of their own limits (sandboxed
        programs): they take the children lane when the pool has one, and demoting such a call frees its
        slot but keeps its priority. `heavy=True` sends a call that looks costly to the heavy lane, when the
        pool has one.
        """
        asked = time.monotonic()
        deadline = self.deadline_s if deadline_s is None else deadline_s
        wait_until = math.inf if wait_until is None else wait_until
        lane = self._normal
        if heavy and self._heavy.size:
            lane = self._heavy
        elif in_children and self._children.size:
            lane = self._children
        beside = lane.calls_at_once > 1
        try:  # a one-call-at-a-time worker takes a chunk of calls (call_many): this one alone
            request = pickle.dumps((func, args if beside else [args]), protocol=pickle.HIGHEST_PROTOCOL)
        except _UNPICKLABLE as exc:
            return _unpicklable(exc)
        renice = not in_children
        attempt = functools.partial(self._attempt, lane, request, asked, wait_until, deadline, renice)
        if beside:
            attempt = functools.partial(self._attempt_beside, lane, request, asked, wait_until, deadline)
        outcome = await attempt()
        if outcome.worker_died:
            log.warning("grading process died mid-call; retrying the call once on a fresh worker")
            outcome = await attempt()
        return outcome

    async def call_many(
        self,
        func: Callable[..., Any],
        calls: Sequence[tuple[Any, ...]],
        deadline_s: float | None = None,
        wait_until: float | None = None,
    ) -> list[CallOutcome]:
        """`call(func, *args)` for each of `calls` on the normal lane, as a chunk: one message to one worker, which
        answers each call as it ends. That spares a pipe round trip per call, most of what a cheap call costs here.

        Each call keeps what `call` gives it: its deadline counts from when the worker takes it (the answer to the
        call before), a slow one steps aside, one that kills its worker is retried once. Calls after one whose worker
        is lost (deadline, death, memory) or steps aside go to another worker at once, as a chunk of their own.
        """
        asked = time.monotonic()
        deadline = self.deadline_s if deadline_s is None else deadline_s
        chunk = _Chunk(func, calls, asked, math.inf if wait_until is None else wait_until, deadline)
        await self._attempt_chunk(chunk, list(range(len(calls))))
        return chunk.outcomes  # type: ignore[return-value]  # every call has its outcome now

    async def _attempt_chunk(self, chunk: _Chunk, indices: list[int]) -> None:
        """Run the calls `indices` of `chunk` on one normal worker, setting their outcomes."""
        try:
            request = pickle.dumps((chunk.func, [chunk.calls[i] for i in indices]), protocol=pickle.HIGHEST_PROTOCOL)
        except _UNPICKLABLE:  # some call's arguments: each alone, so that only those calls fail
            alone = [self.call(chunk.func, *chunk.calls[i], deadline_s=chunk.deadline, wait_until=chunk.wait_until)
                     for i in indices]  # fmt: skip
            for i, outcome in zip(indices, await asyncio.gather(*alone), strict=True):
                chunk.outcomes[i] = outcome
            return
        worker = await self._acquire(self._normal, chunk.wait_until)
        if worker is None:
            for i in indices:
                chunk.outcomes[i] = _no_worker_in_time(chunk.asked)
            return
        aside: list[asyncio.Task] = []  # the calls after one that stepped aside, sent to other workers then
        try:
            later = await self._run_chunk(worker, request, chunk, indices, aside)
            if later:
                await self._attempt_chunk(chunk, later)
            await asyncio.gather(*aside)
        finally:
            for task in aside:
                task.cancel()

    async def _run_chunk(
        self, worker: _Worker, request: bytes, chunk: _Chunk, indices: list[int], aside: list[asyncio.Task]
    ) -> list[int]:
        """Send the calls `indices` to `worker` and take their answers in turn; the calls to run on another worker
        (those after one that cost the worker, and one to retry) are returned once the worker is released."""
        started = time.monotonic()
        # A worker that died while idle reads as dead at once: its first call is retried.
        await self._send_request(worker, _SOFT_DEADLINE.pack(chunk.deadline * SOFT_FRACTION) + request)
        holding = True
        try:
            for position, i in enumerate(indices):
                rest = indices[position + 1 :]

                def step_aside(rest: list[int] = rest) -> None:
                    if rest:
                        aside.append(asyncio.ensure_future(self._attempt_chunk(chunk, rest)))

                kind, payload, cpu, ended = await self._answer(
                    worker, started + chunk.deadline, True, step_aside, more_to_come=bool(rest)
                )
                timing = {"seconds": ended - started, "queued_seconds": started - chunk.asked, "cpu_seconds": cpu}
                outcome = self._outcome(worker, kind, payload, timing, chunk.deadline)
                holding = kind not in _LOST
                later = []
                if outcome.worker_died and i not in chunk.retried:
                    chunk.retried.add(i)
                    log.warning("grading process died mid-call; retrying the call once on a fresh worker")
                    later.append(i)
                else:
                    chunk.outcomes[i] = outcome
                if not holding or worker.demoted:  # the calls after it go elsewhere (a demoted one's went already)
                    return later if worker.demoted else [*later, *rest]
                started = ended  # the next call began in the worker when this one ended
            return []
        except BaseException:  # cancelled mid-call: the worker's state is unknown
            if holding:
                holding = False
                self._discard(worker, "cancelled")
            raise
        finally:
            if holding:
                self._release(worker)  # back to the pool, or gone if it was demoted

    async def close(self) -> None:
        self._closed = True
        for task in list(self._replacing):
            task.cancel()
        for workers in self._worker_sets():
            for worker in list(workers):
                worker.kill()
            workers.clear()
        self._threads.shutdown(wait=False, cancel_futures=True)

    async def _attempt(
        self, lane: _Lane, request: bytes, asked: float, wait_until: float, deadline: float, renice: bool
    ) -> CallOutcome:
        worker = await self._acquire(lane, wait_until)
        if worker is None:
            return _no_worker_in_time(asked)
        try:
            started = time.monotonic()
            kind, payload, cpu, ended = await self._run(worker, request, started + deadline, renice)
        except BaseException:  # cancelled mid-call: the worker's state is unknown
            self._discard(worker, "cancelled")
            raise
        timing = {"seconds": ended - started, "queued_seconds": started - asked, "cpu_seconds": cpu}
        outcome = self._outcome(worker, kind, payload, timing, deadline)
        if kind not in _LOST:
            self._release(worker)
        return outcome

    def _outcome(
        self, worker: _Worker, kind: str, payload: Any, timing: dict[str, float], deadline: float
    ) -> CallOutcome:
        """A one-call-at-a-time worker's answer to one call; a worker the call cost (`_LOST`) is discarded here."""
        exit_code = worker_exit_code(worker.process) if kind == "died" else None  # before the discard kills it
        if kind in _LOST:
            self._discard(worker, _LOST[kind])
        if kind == "ok":
            return _ok(payload, timing)
        if kind == "cut":
            error = (
                f"stopped after {self.slow_after_s:g}s: {self.max_slow} slow items were already running aside, "
                "the most allowed (REWARD_API_MAX_SLOW_CALLS); the service is saturated with slow items"
            )
            return CallOutcome("timeout", error=error, **timing)
        if kind == "hard_timeout":
            return CallOutcome("timeout", error=f"killed at the {deadline:.3g}s deadline", **timing)
        if kind == "died":
            error = f"grading process died (exit code {exit_code})"
            return CallOutcome("error", error=error, worker_died=True, **timing)
        # "out_of_memory"; "timeout" (its own alarm) or "error" (a grader's exception): the worker lives on
        return CallOutcome("error" if kind == "out_of_memory" else kind, error=payload, **timing)  # type: ignore[arg-type]

    async def _attempt_beside(
        self, lane: _Lane, request: bytes, asked: float, wait_until: float, deadline: float
    ) -> CallOutcome:
        """One call on a side-by-side worker: sent with an id, answered by the worker's reader thread."""
        worker = await self._acquire(lane, wait_until)
        if worker is None:
            return _no_worker_in_time(asked)
        started = time.monotonic()
        call_id = next(self._call_ids)
        answer = worker.calls[call_id] = asyncio.get_running_loop().create_future()
        try:
            await self._send(worker, _CALL_HEADER.pack(False, call_id) + request)
            kind, payload, cpu = await asyncio.wait_for(asyncio.shield(answer), deadline)
        except TimeoutError:
            kind, payload, cpu = "timeout", f"stopped at the {deadline:.3g}s deadline", 0.0
            self._stop_beside(worker, call_id, payload)
        except BaseException:  # cancelled: nobody waits for it any more
            self._stop_beside(worker, call_id, "cancelled")
            raise
        timing = {"seconds": time.monotonic() - started, "queued_seconds": started - asked, "cpu_seconds": cpu}
        if kind == "ok":
            return _ok(payload, timing)
        if kind == "died":
            return CallOutcome("error", error=payload, worker_died=True, **timing)
        return CallOutcome("timeout" if kind == "stopped" else kind, error=payload, **timing)  # type: ignore[arg-type]

    async def _send(self, worker: _Worker, message: bytes) -> None:
        async with worker.send_lock:  # off the loop: an item can be megabytes
            with contextlib.suppress(OSError):  # it died: its reader answers the call `died`
                await asyncio.get_running_loop().run_in_executor(self._threads, worker.conn.send_bytes, message)

    def _stop_beside(self, worker: _Worker, call_id: int, reason: str) -> None:
        """Ask a side-by-side worker to stop one call; one that cannot stop it by _STUCK_S is replaced."""
        if call_id not in worker.calls:
            return
        message = _CALL_HEADER.pack(True, call_id) + reason.encode()
        task = asyncio.get_running_loop().create_task(self._send(worker, message))
        self._replacing.add(task)
        task.add_done_callback(self._replacing.discard)

        def check() -> None:
            if call_id in worker.calls and worker in worker.lane.workers:
                log.warning("a stopped code call did not end within %gs; replacing its worker", _STUCK_S)
                self._discard(worker, "deadline")

        asyncio.get_running_loop().call_later(_STUCK_S, check)

    def _read_answers(self, worker: _Worker, loop: asyncio.AbstractEventLoop) -> None:
        """A side-by-side worker's answers, in a thread of its own until the worker's pipe ends."""
        while True:
            try:
                data = worker.conn.recv_bytes()
            except (EOFError, OSError):
                break
            with contextlib.suppress(RuntimeError):  # the loop is closed: the pool is gone
                loop.call_soon_threadsafe(self._answered, worker, data)
        worker.conn.close()
        with contextlib.suppress(RuntimeError):
            loop.call_soon_threadsafe(self._worker_gone, worker)

    def _answered(self, worker: _Worker, data: bytes) -> None:
        (call_id,) = _CALL_ID.unpack_from(data)
        kind, payload, cpu, _ = pickle.loads(memoryview(data)[_CALL_ID.size :])
        answer = worker.calls.pop(call_id, None)
        if answer is not None and not answer.done():
            answer.set_result((kind, payload, cpu))
        if worker in worker.lane.workers:
            self._free_slot(worker)  # its slot is free again

    def _worker_gone(self, worker: _Worker) -> None:
        """A side-by-side worker's pipe ended: its calls answer `died` (each is retried once), and it is replaced."""
        for answer in worker.calls.values():
            if not answer.done():
                answer.set_result(("died", "grading process died", 0.0))
        worker.calls.clear()
        if worker in worker.lane.workers and not self._closed:
            self._discard(worker, "crash")

    async def _acquire(self, lane: _Lane, wait_until: float) -> _Worker | None:
        """A free slot of `lane`, or None at `wait_until`; slots of workers gone since are skipped."""
        while True:
            if wait_until == math.inf:
                worker = await lane.idle.get()
            else:
                try:
                    worker = await asyncio.wait_for(lane.idle.get(), max(0.0, wait_until - time.monotonic()))
                except TimeoutError:
                    return None
            worker.free_slots -= 1
            if worker in lane.workers:
                return worker

    async def _run(
        self, worker: _Worker, request: bytes, expires_at: float, renice: bool
    ) -> tuple[str, Any, float, float]:
        """Send one call and wait for its answer: (kind, payload, cpu_seconds, ended_at)."""
        left = expires_at - time.monotonic()
        if not await self._send_request(worker, _SOFT_DEADLINE.pack(max(left, 0.001) * SOFT_FRACTION) + request):
            return ("died", None, 0.0, time.monotonic())
        return await self._answer(worker, expires_at, renice)

    async def _send_request(self, worker: _Worker, message: bytes) -> bool:
        """Send a request to an idle one-call-at-a-time worker; False when it died while idle (killed from outside)."""
        try:
            if len(message) <= _DIRECT_SEND_BYTES:
                worker.conn.send_bytes(message)
            else:  # off the loop: an item can be megabytes
                await asyncio.get_running_loop().run_in_executor(self._threads, worker.conn.send_bytes, message)
        except OSError:
            return False
        return True

    async def _answer(
        self,
        worker: _Worker,
        expires_at: float,
        renice: bool,
        on_aside: Callable[[], None] | None = None,
        more_to_come: bool = False,
    ) -> tuple[str, Any, float, float]:
        """Wait for the answer to the call a worker is running: (kind, payload, cpu_seconds, ended_at).
        `on_aside` is called if the call is demoted (its worker leaves the pool). With `more_to_come` (calls of
        its chunk after it), an answer not there yet is given a moment for the next ones to come with it."""
        cpu_before = worker.cpu_seen
        cut = False
        if worker.answers:  # read with an earlier call's
            kind, payload, worker.cpu_seen, ended = worker.answers.popleft()
            return kind, payload, worker.cpu_seen - cpu_before, ended
        if more_to_come and not select.select([worker.conn.fileno()], [], [], 0)[0]:
            await asyncio.sleep(_ANSWERS_NAP_S)
        # Look at the call every slow_after_s. It is slow once it has burnt slow_after_s of CPU (a call that
        # merely waited for a core on a busy machine is not), or run that long when its work is in child
        # processes. A slow call steps aside if a slot for slow calls is free, else (CPU-bound) it is cut; in the
        # heavy lane it stays, lowered.
        while not await self._readable(worker.conn, self._step(worker, cut, expires_at)):
            if time.monotonic() >= expires_at:
                return ("hard_timeout", None, worker.cpu_now() - cpu_before, time.monotonic())
            if worker.low_priority or cut or (renice and worker.cpu_now() - cpu_before < self.slow_after_s):
                continue
            if worker.lane.slow_calls_stay:
                worker.lower()
            elif len(self._slow if renice else self._slow_in_children) < self.max_slow:
                self._demote(worker, renice)
                if on_aside is not None:
                    on_aside()
            elif renice:
                cut = True
                os.kill(worker.process.pid, signal.SIGALRM)  # its own alarm: it answers `timeout` and lives on
                expires_at = min(expires_at, time.monotonic() + _CUT_GRACE_S)
        try:  # on the loop: the answer has begun to arrive, and answers are small (grade details are bounded)
            if not worker.take_answers():
                return ("died", None, worker.cpu_now() - cpu_before, time.monotonic())
        except OSError:
            return ("died", None, worker.cpu_now() - cpu_before, time.monotonic())
        kind, payload, worker.cpu_seen, ended = worker.answers.popleft()
        return ("cut" if cut and kind == "timeout" else kind, payload, worker.cpu_seen - cpu_before, ended)

    def _step(self, worker: _Worker, cut: bool, expires_at: float) -> float:
        """How long to wait for an answer before looking at the call again."""
        left = max(0.0, expires_at - time.monotonic())
        return left if worker.low_priority or cut else min(self.slow_after_s, left)

    @staticmethod
    async def _readable(conn: Connection, timeout_s: float) -> bool:
        """Wait for the worker's pipe to have data (an answer, or EOF when it died), without a thread."""
        fd = conn.fileno()
        if select.select([fd], [], [], 0)[0]:  # (conn.poll builds a selector each time: many times the cost)
            return True
        loop = asyncio.get_running_loop()
        ready = loop.create_future()
        loop.add_reader(fd, lambda: ready.done() or ready.set_result(True))
        try:
            async with asyncio.timeout(max(0.0, timeout_s)):  # (wait_for makes a future and a callback more)
                await ready
            return True
        except TimeoutError:
            return False
        finally:
            loop.remove_reader(fd)
            os.set_blocking(fd, True)  # uvloop leaves a watched fd non-blocking; sends and receives block

    def _demote(self, worker: _Worker, renice: bool) -> None:
        """Take a slow call's worker out of the pool and start its replacement now."""
        worker.demoted = True
        worker.lane.workers.discard(worker)
        (self._slow if renice else self._slow_in_children).add(worker)
        if renice:
            worker.lower()  # (sandboxed programs lower their own priority: cpu_priority.py)
        self._start_replacement(worker.lane)

    def _release(self, worker: _Worker) -> None:
        """A worker whose call ended: back to the pool, or gone if it was demoted or lowered (it cannot be
        un-niced; a lowered one is replaced in its lane)."""
        if worker.demoted or worker.lowered:
            self._forget(worker)
            worker.kill()
            if not worker.demoted:
                self._start_replacement(worker.lane)
        else:
            self._free_slot(worker)

    @staticmethod
    def _free_slot(worker: _Worker) -> None:
        worker.free_slots += 1
        worker.lane.idle.put_nowait(worker)

    def _watch_exit(self, worker: _Worker) -> None:
        """A one-call-at-a-time worker that dies while idle (killed from outside, out of memory) is replaced at
        once, not when a call next picks it: until then /readyz and the lane would count a dead worker. A death
        during a call is the call's to handle (its outcome says why). Side-by-side workers' readers see the end
        of their pipes themselves."""
        loop = asyncio.get_running_loop()
        sentinel = worker.process.sentinel

        def exited() -> None:
            loop.remove_reader(sentinel)
            idle = worker.free_slots == worker.lane.calls_at_once
            if idle and worker in worker.lane.workers and not self._closed:
                self._discard(worker, "crash")

        loop.add_reader(sentinel, exited)

    def _discard(self, worker: _Worker, reason: str) -> None:
        """Kill a worker; a pool worker is replaced (a demoted one was replaced when it was demoted)."""
        worker.kill()
        self._forget(worker)
        self.restarts += 1
        self._on_restart(reason)
        log.warning("grading worker replaced", extra={"reason": reason})
        if not worker.demoted:
            self._start_replacement(worker.lane)

    def _worker_sets(self) -> tuple[set[_Worker], ...]:
        return (self._normal.workers, self._heavy.workers, self._children.workers, self._slow, self._slow_in_children)

    def _forget(self, worker: _Worker) -> None:
        for workers in self._worker_sets():
            workers.discard(worker)

    def _start_replacement(self, lane: _Lane) -> None:
        if self._closed:
            return
        task = asyncio.get_running_loop().create_task(self._respawn(lane))
        self._replacing.add(task)
        task.add_done_callback(self._replacing.discard)

    async def _respawn(self, lane: _Lane) -> None:
        delay = 0.1
        failed = False
        try:
            while not self._closed:
                try:
                    self._open(await self._spawn(lane))
                    return
                except Exception:
                    log.exception("could not start a grading worker; retrying in %.1fs", delay)
                    if not failed:
                        failed = True
                        self._failing_spawns += 1
                    await asyncio.sleep(delay)
                    delay = min(delay * 2, 10.0)
        finally:
            self._failing_spawns -= failed

    async def _spawn(self, lane: _Lane) -> _Worker:
        parent_conn, child_conn = self._ctx.Pipe(duplex=True)
        process = self._ctx.Process(
            target=_worker_main,
            args=(child_conn, self._memory_mb, self._initializer, lane.calls_at_once),
            daemon=True,
            name="reward-grader",
        )
        loop = asyncio.get_running_loop()
        await loop.run_in_executor(self._threads, start_worker_process, process)
        child_conn.close()
        worker = _Worker(process, parent_conn, lane)
        if not await self._readable(parent_conn, _START_TIMEOUT_S):
            worker.kill()
            raise RuntimeError(f"grading worker failed to start within {_START_TIMEOUT_S:g}s")
        try:
            _, _, worker.cpu_seen = pickle.loads(await loop.run_in_executor(self._threads, parent_conn.recv_bytes))
        except (EOFError, OSError):
            worker.kill()
            raise RuntimeError(f"grading worker failed to start (exit code {worker_exit_code(process)})") from None
        lane.workers.add(worker)
        return worker

    def _open(self, worker: _Worker) -> None:
        """A started worker takes calls: a slot per call it may run at once, and its reader when that is several
        (else a watch on its exit)."""
        lane = worker.lane
        if lane.calls_at_once > 1:
            reader = threading.Thread(
                target=self._read_answers, args=(worker, asyncio.get_running_loop()), daemon=True, name="pool-answers"
            )
            reader.start()
        else:
            self._watch_exit(worker)
        for _ in range(lane.calls_at_once):
            self._free_slot(worker)
