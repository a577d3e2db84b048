"""Notebook sessions for tool-calling rollouts: a Python kernel that lives across requests, in a sandbox of its own.

A rollout's code-interpreter calls share state (a variable set in one turn is read in the next), so each session
keeps one kernel process (sandbox/jupyter.py's SESSION_KERNEL) in a sandbox made for it alone: the same namespaces,
cgroup and tmpfs bounds as a run, held for the session's whole life. Its bounds count over that life: memory (the
cgroup and the kernel's address space), processes, disk, and CPU seconds (the kernel's RLIMIT_CPU: past them it
ends). A session no request used for `idle_timeout_s` is closed, and at most `max_live` live at once.

Retries are safe: a request carrying a `request_id` the session already answered gets that answer again, not a
second run of its cells (a client that timed out and retried would otherwise run them twice); a create naming a
`session_id` that exists returns it.
"""

from __future__ import annotations

import json
import os
import secrets
import select
import threading
import time
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from sandbox.executor import Executor
from sandbox.files import FETCH_BYTES, fetched_by_name
from sandbox.isolation import SandboxSize, preamble
from sandbox.jupyter import SESSION_KERNEL, session_filter

_KERNEL_OVERHEAD_MB = 64  # the kernel's own interpreter, on top of what its cells may use
_ANSWERS_KEPT = 32  # per session, for retried requests
_READ_BYTES = 1 << 16


class SessionError(RuntimeError):
    """A session that cannot be made or used; the message says why and what to do."""


class SessionsFull(SessionError):
    pass


class UnknownSession(SessionError):
    pass


@dataclass(frozen=True)
class SessionLimits:
    """What a session asked for, within the service's most (sandbox/service.py's session_* settings)."""

    memory_mb: int
    cpu_s: float  # over the session's whole life
    idle_timeout_s: float
    processes: int = 64
    disk_mb: int = 64


class Session:
    """One kernel in its sandbox; `run` blocks (call it from a worker thread), one request at a time."""

    def __init__(self, session_id: str, executor: Executor, limits: SessionLimits) -> None:
        self.id = session_id
        self.limits = limits
        size = SandboxSize(
            memory_mb=limits.memory_mb + _KERNEL_OVERHEAD_MB, pids=limits.processes, disk_mb=limits.disk_mb
        )
        self._sandbox = executor.sandbox(size)
        try:
            process = self._sandbox.spawn()
        except OSError as exc:  # its cgroup is made: taken down again
            self._sandbox.__exit__(None, None, None)
            raise SessionError(f"the session's sandbox did not start: {exc}") from exc
        config = {"memory_mb": limits.memory_mb, "cpu_s": limits.cpu_s, "fetch_bytes": FETCH_BYTES}
        config = json.dumps(config | {"syscall_filter": session_filter()}) + "\n"
        assert process.stdin is not None and process.stdout is not None
        self._stdin, self._stdout = process.stdin, process.stdout.fileno()
        self._lock = threading.Lock()
        self._answers: OrderedDict[str, dict[str, Any]] = OrderedDict()
        self._received = bytearray()  # the kernel's answers as they arrive: a line each
        self.ended: str | None = None  # why it can run no more
        self.last_used = time.monotonic()
        self._write(preamble(SESSION_KERNEL) + config.encode())

    def run(
        self,
        cells: list[str],
        cell_timeout: float,
        total_timeout: float,
        request_id: str | None,
        files: Mapping[str, str],
        fetch: Mapping[str, str],
    ) -> dict[str, Any]:
        """The cells' results, as /run_jupyter's; a session past its bounds or its time ends, and says so.

        `files` (absolute sandbox path -> base64) are written before the cells run and `fetch` (the caller's name ->
        absolute sandbox path, sandbox/files.py) read after, as a run's: they come back by the caller's name."""
        with self._lock:
            self.last_used = time.monotonic()
            if request_id is not None and request_id in self._answers:
                return self._answers[request_id]
            answer = self._run(cells, cell_timeout, total_timeout, files, fetch)
            if request_id is not None:
                self._answers[request_id] = answer
                while len(self._answers) > _ANSWERS_KEPT:
                    self._answers.popitem(last=False)
            self.last_used = time.monotonic()
            return answer

    def _run(
        self,
        cells: list[str],
        cell_timeout: float,
        total_timeout: float,
        files: Mapping[str, str],
        fetch: Mapping[str, str],
    ) -> dict[str, Any]:
        if self.ended is not None:
            return _failed(self.ended)
        request = {"cells": cells, "cell_timeout": cell_timeout, "files": files, "fetch": sorted(set(fetch.values()))}
        self._write((json.dumps(request) + "\n").encode())
        line = self._read_line(time.monotonic() + total_timeout)
        if line is None:
            return _failed(self.ended or "the session ended")
        answer = json.loads(line)
        if "error" in answer:  # its files did not fit: the session lives on, its cells did not run
            return {"status": "SandboxError", "message": answer["error"], "cells": [], "files": {}}
        fetched = fetched_by_name(fetch, answer["files"])
        return {"status": "Success", "message": "", "cells": answer["cells"], "files": fetched}

    def _write(self, data: bytes) -> None:
        try:
            self._stdin.write(data)
            self._stdin.flush()
        except (BrokenPipeError, ValueError):
            self._end(self._why_gone())

    def _read_line(self, deadline: float) -> bytes | None:
        scanned = 0
        while (end := self._received.find(b"\n", scanned)) < 0:
            scanned = len(self._received)
            left = deadline - time.monotonic()
            if self.ended is not None:
                return None
            if left <= 0 or not select.select([self._stdout], [], [], left)[0]:
                self._end("its cells ran past total_timeout: the session was ended (its state is gone)")
                return None
            chunk = os.read(self._stdout, _READ_BYTES)
            if not chunk:
                self._end(self._why_gone())
                return None
            self._received += chunk
        line = bytes(self._received[:end])
        del self._received[: end + 1]
        return line

    def _why_gone(self) -> str:
        if self._past_cpu():
            return self._cpu_spent()
        return "the session's kernel ended (a cell exited it, or it ran out of memory or processes); open a new one"

    def _past_cpu(self) -> bool:
        return self._sandbox.cpu_seconds() >= self.limits.cpu_s

    def _cpu_spent(self) -> str:
        return f"the session used its {self.limits.cpu_s:g} CPU seconds and ended; open a new one"

    def check_cpu(self) -> None:
        """End a session whose processes together (a cell's children too, which its kernel's own limit does not
        count) used its CPU seconds."""
        if self.ended is None and self._past_cpu():
            self._end(self._cpu_spent())

    def _end(self, why: str) -> None:
        if self.ended is None:
            self.ended = why
            self._sandbox.kill()

    def idle_for(self, now: float) -> float:
        """Seconds since a request last used it; none while one runs. One that ended is kept as long, to say why."""
        return 0.0 if self._lock.locked() else now - self.last_used

    def close(self) -> None:
        self._end("the session was closed")
        self._sandbox.__exit__(None, None, None)


class Sessions:
    """The live sessions of one service."""

    def __init__(self, executor: Executor, max_live: int) -> None:
        self.executor = executor
        self.max_live = max_live
        self._live: dict[str, Session] = {}
        self._lock = threading.Lock()

    def create(self, session_id: str | None, limits: SessionLimits) -> Session:
        with self._lock:
            if session_id is not None and session_id in self._live:
                return self._live[session_id]  # a retried create
            if len(self._live) >= self.max_live:
                raise SessionsFull(
                    f"{self.max_live} sessions are live, the most this sandbox keeps (SANDBOX_MAX_SESSIONS): close "
                    "one (DELETE /v1/sessions/{id}) or retry when an idle one has expired"
                )
            session_id = session_id or secrets.token_hex(16)
            self._live[session_id] = session = Session(session_id, self.executor, limits)
            return session

    def get(self, session_id: str) -> Session:
        with self._lock:
            session = self._live.get(session_id)
        if session is None:
            raise UnknownSession(
                f"no live session {session_id!r}: it was closed, idle past its idle_timeout_s, or never made; "
                "open one with POST /v1/sessions"
            )
        return session

    def close(self, session_id: str) -> None:
        with self._lock:
            session = self._live.pop(session_id, None)
        if session is None:
            raise UnknownSession(f"no live session {session_id!r}")
        session.close()

    def close_idle(self) -> int:
        """End the sessions past their CPU seconds; close those idle past their idle_timeout_s; how many closed."""
        now = time.monotonic()
        with self._lock:
            live = list(self._live.values())
        for session in live:
            session.check_cpu()
        with self._lock:
            gone = [s for s in self._live.values() if s.idle_for(now) > s.limits.idle_timeout_s]
            for session in gone:
                del self._live[session.id]
        for session in gone:
            session.close()
        return len(gone)

    def close_all(self) -> None:
        with self._lock:
            sessions, self._live = list(self._live.values()), {}
        for session in sessions:
            session.close()


def _failed(why: str) -> dict[str, Any]:
    return {"status": "Failed", "message": why, "cells": [], "files": {}}
