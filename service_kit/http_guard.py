"""HTTP hardening shared by both services (reward API and sandbox): what uvicorn and FastAPI leave open.

`RequestGuard`, the outermost ASGI middleware of each app:
- body size: a declared or streamed body over the limit is a 413 before more of it is read;
- authentication: with a token set, a work request without it is a 401 from its headers, before a byte of its
  body is read or counted against the limits below;
- body read time: a body that has not fully arrived within its timeout, or that falls below the minimum rate
  after a few seconds, is a 408 (slow-body clients);
- framing: a request with both Transfer-Encoding and Content-Length is a 400 (request smuggling);
- load shedding: work requests (anything but GET/HEAD) in flight and their body bytes in flight are capped;
  a request beyond the request cap waits up to `admission_wait_s` for a slot (before a byte of its body is
  read), beyond that or beyond the bytes cap a 503 with `Retry-After`, so a burst of large bodies cannot
  exhaust memory; a handler waiting on other requests (a group's other samples) steps out of the request
  count (`set_aside`);
- a client that goes away (`http.disconnect`) before its answer cancels the app's handler, so a gone
  client's batch stops being worked on (logged and counted with code 499, as nginx does);
- one metric sample and one log line per request, 500s included: an exception escaping the app is logged
  with its traceback, counted as 500 and answered with the error body of service_kit/errors.py.

`serve()`, how both CLIs start uvicorn: raises the open-files limit, caps open connections (uvicorn's
`limit_concurrency` answers 503 beyond it), bounds idle keep-alive, and runs `HeaderTimeoutProtocol`, uvicorn's
h11 protocol plus the header-read timeout uvicorn lacks (slowloris).

Settings: `service_kit.settings.HttpSettings`, the part both services' configs share.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import functools
import logging
import math
import resource
import secrets
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import h11
import uvicorn
from prometheus_client import Counter, Histogram
from starlette.types import ASGIApp, Message, Receive, Scope, Send
from uvicorn.protocols.http.h11_impl import H11Protocol

from service_kit.errors import one_detail, send_error
from service_kit.settings import HttpSettings

log = logging.getLogger("service_kit.http_guard")

MB = 1024 * 1024
# nginx's code for "client closed the request before the answer": the handler was cancelled.
CLIENT_CLOSED = 499
# File descriptors kept for everything but client connections: worker pipes, sandboxes, logs, the listener.
_FD_RESERVE = 128
# A shed client is told to come back after about one typical request, within these bounds (seconds).
_RETRY_AFTER_BOUNDS_S = (1, 30)
# A body must keep arriving at min_body_mb_per_s once this long has passed since its request's headers (seconds).
_BODY_RATE_GRACE_S = 5.0
# How often at most the count of connections closed for slow headers is logged (seconds).
_SLOW_HEADER_LOG_EVERY_S = 1.0


@contextlib.contextmanager
def set_aside() -> Iterator[None]:
    """While inside, the current request does not count against `max_requests_in_flight`: it is waiting on other
    requests (the rest of a group), and counting it would keep those out: a deadlock, not a slowdown. Its body
    bytes still count. Outside a RequestGuard (the engine in-process) it does nothing."""
    load = _REQUEST_LOAD.get()
    if load is None:
        yield
        return
    load.release()
    try:
        yield
    finally:
        load.requests += 1  # back in the count at once: its answer is nearly done, it never queues again


@dataclass(frozen=True)
class HttpLimits:
    max_body_bytes: int
    body_timeout_s: float
    min_body_bytes_per_s: float
    max_requests_in_flight: int
    max_body_bytes_in_flight: int
    admission_wait_s: float
    auth_token: str = ""

    @classmethod
    def of(cls, settings: HttpSettings) -> HttpLimits:
        if settings.max_body_mb_in_flight < settings.max_body_mb:
            raise ValueError(
                f"max_body_mb_in_flight={settings.max_body_mb_in_flight} is below max_body_mb={settings.max_body_mb}:"
                " a body of the largest allowed size could never be admitted; raise it"
            )
        return cls(
            max_body_bytes=int(settings.max_body_mb * MB),
            body_timeout_s=settings.body_timeout_s,
            min_body_bytes_per_s=settings.min_body_mb_per_s * MB,
            max_requests_in_flight=settings.max_requests_in_flight,
            max_body_bytes_in_flight=int(settings.max_body_mb_in_flight * MB),
            admission_wait_s=settings.admission_wait_s,
            auth_token=settings.auth_token,
        )


_REQUEST_LOAD: contextvars.ContextVar[_Load | None] = contextvars.ContextVar("request_load", default=None)


class _Refused(Exception):
    """Answer with this error instead of calling the app; the connection is closed (its body may be unread)."""

    def __init__(
        self, status: int, error: str, loc: str | list[str], kind: str, headers: dict[str, str] | None = None
    ) -> None:
        super().__init__(error)
        self.status, self.error, self.kind = status, error, kind
        self.loc = [loc] if isinstance(loc, str) else loc
        self.headers = {"Connection": "close"} | (headers or {})


class _ClientGone(Exception):
    """The client disconnected before its answer."""


class _Exchange:
    """The app's `send`, recording what went out: the status and whether the answer is complete."""

    def __init__(self, send: Send) -> None:
        self._send = send
        self.status: int | None = None
        self.complete = False

    async def send(self, message: Message) -> None:
        if message["type"] == "http.response.start":
            self.status = message["status"]
        elif message["type"] == "http.response.body" and not message.get("more_body", False):
            self.complete = True
        await self._send(message)


class _Load:
    """Work requests and their body bytes in flight in this process (one event loop: plain counters)."""

    def __init__(self, limits: HttpLimits) -> None:
        self.limits = limits
        self.requests = 0
        self.body_bytes = 0
        self.typical_s = 1.0  # moving average of how long a work request takes: the Retry-After we give
        self._waiting: list[asyncio.Future[None]] = []  # requests waiting for a slot, in arrival order

    async def admit(self) -> None:
        """A slot for one more request, waiting up to `admission_wait_s` for one, first come first served."""
        if self.requests >= self.limits.max_requests_in_flight or self._waiting:
            await self._wait_for_slot()
        else:
            self.requests += 1

    async def _wait_for_slot(self) -> None:
        """Takes a slot once this request is first in line and one is free; 503 at the deadline."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.limits.admission_wait_s
        turn = loop.create_future()
        self._waiting.append(turn)
        try:
            while self.requests >= self.limits.max_requests_in_flight or self._waiting[0] is not turn:
                if loop.time() >= deadline:
                    self._shed(f"{self.requests} requests in flight, the most this server takes at once")
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(asyncio.shield(turn), deadline - loop.time())
                turn = self._renew(turn)
            self.requests += 1
        finally:
            self._waiting.remove(turn)
            self._wake_first()

    def _renew(self, turn: asyncio.Future[None]) -> asyncio.Future[None]:
        """A fresh future in `turn`'s place in the queue, to wait on again."""
        if not turn.done():
            return turn
        fresh = asyncio.get_running_loop().create_future()
        self._waiting[self._waiting.index(turn)] = fresh
        return fresh

    def release(self) -> None:
        """One request less in the count: the first one waiting for a slot takes it."""
        self.requests -= 1
        self._wake_first()

    def _wake_first(self) -> None:
        if self._waiting and self.requests < self.limits.max_requests_in_flight and not self._waiting[0].done():
            self._waiting[0].set_result(None)

    def reserve(self, size: int) -> None:
        if self.body_bytes + size > self.limits.max_body_bytes_in_flight:
            self._shed(
                f"{self.body_bytes + size} request body bytes in flight, above the limit of"
                f" {self.limits.max_body_bytes_in_flight}"
            )
        self.body_bytes += size

    def done(self, body_bytes: int, seconds: float) -> None:
        self.release()
        self.body_bytes -= body_bytes
        self.typical_s += 0.1 * (seconds - self.typical_s)

    def _shed(self, why: str) -> None:
        low, high = _RETRY_AFTER_BOUNDS_S
        retry_after = min(high, max(low, math.ceil(self.typical_s)))
        raise _Refused(
            503,
            f"server: overloaded ({why}); retry after {retry_after} s (header Retry-After) or spread the load",
            "server",
            "overloaded",
            {"Retry-After": str(retry_after)},
        )


class RequestGuard:
    """Limits, load shedding, disconnect cancellation, metrics and logs around one ASGI app (see module doc)."""

    def __init__(
        self,
        app: ASGIApp,
        limits: HttpLimits,
        requests: Counter,
        request_seconds: Histogram,
        known_paths: frozenset[str],
        logger: logging.Logger,
        auth_hint: str = "send `Authorization: Bearer <token>`",
    ) -> None:
        self.app = app
        self.auth_hint = auth_hint
        self.limits = limits
        self.load = _Load(limits)
        self.requests = requests
        self.request_seconds = request_seconds
        self.known_paths = known_paths
        self.log = logger

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        exchange = _Exchange(send)
        status = 500
        try:
            await self._guarded(scope, receive, exchange)
            status = exchange.status or 500
        except _Refused as refusal:
            detail = one_detail(refusal.loc, refusal.error, refusal.kind)
            await send_error(exchange.send, refusal.status, refusal.error, detail, refusal.headers)
            status = refusal.status
        except _ClientGone:
            status = CLIENT_CLOSED
        except Exception:
            self.log.exception("request failed", extra={"method": scope["method"], "path": scope["path"]})
            if exchange.status is None:
                error = "server: internal error while handling the request (logged with its traceback); report it"
                await send_error(exchange.send, 500, error, one_detail(["server"], error, "internal_error"))
        finally:
            self._record(scope, status, time.perf_counter() - started)

    async def _guarded(self, scope: Scope, receive: Receive, exchange: _Exchange) -> None:
        declared = _content_length(scope)
        if declared is not None and declared > self.limits.max_body_bytes:
            raise _too_large(self.limits.max_body_bytes)
        if _has_both_framings(scope):
            raise _Refused(
                400,
                "header.transfer-encoding: a request with both Transfer-Encoding and Content-Length is ambiguous "
                "(request smuggling behind proxies); send one of them",
                ["header", "transfer-encoding"],
                "ambiguous_length",
            )
        if scope["method"] in ("GET", "HEAD"):  # probes and metrics: never shed, so a shedding server looks alive
            await self._call_app(scope, await self._read_body(receive, None), receive, exchange)
            return
        if self.limits.auth_token and not bearer_token_matches(scope, self.limits.auth_token):
            # Before admission and before a byte of the body: an unauthorised client holds none of the budget.
            raise _Refused(
                401,
                f"header.authorization: missing or wrong bearer token; {self.auth_hint}",
                ["header", "authorization"],
                "unauthorized",
                {"WWW-Authenticate": "Bearer"},
            )
        await self.load.admit()
        claim, started = _Claim(self.load), time.perf_counter()
        try:
            if declared is not None:
                claim.take(declared)  # before reading a byte of it
            body = await self._read_body(receive, None if declared is not None else claim)
            counted = _REQUEST_LOAD.set(self.load)  # the app's task copies it: `set_aside` finds this load
            try:
                await self._call_app(scope, body, receive, exchange)
            finally:
                _REQUEST_LOAD.reset(counted)
        finally:
            self.load.done(claim.held, time.perf_counter() - started)

    async def _read_body(self, receive: Receive, streamed: _Claim | None) -> bytes:
        """The whole body, within the size limit, the body timeout and the minimum rate; `streamed` claims a
        chunked body's bytes."""
        loop = asyncio.get_running_loop()
        started = loop.time()
        chunks, size = [], 0
        while True:
            # By when the next chunk must have come: the body timeout, and the minimum rate after its grace.
            due = self.limits.body_timeout_s
            if self.limits.min_body_bytes_per_s > 0:  # 0: no minimum rate
                due = min(due, _BODY_RATE_GRACE_S + size / self.limits.min_body_bytes_per_s)
            try:
                message = await asyncio.wait_for(receive(), started + due - loop.time())
            except TimeoutError:
                raise self._too_slow(size, loop.time() - started) from None
            if message["type"] == "http.disconnect":
                raise _ClientGone
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.limits.max_body_bytes:
                raise _too_large(self.limits.max_body_bytes)
            if streamed is not None:
                streamed.take(len(chunk))
            chunks.append(chunk)
            if not message.get("more_body", False):
                return b"".join(chunks)

    def _too_slow(self, size: int, waited_s: float) -> _Refused:
        rate = self.limits.min_body_bytes_per_s / MB
        return _Refused(
            408,
            f"body: the request body did not arrive in time ({size} bytes in {waited_s:.1f} s; the limits are "
            f"{self.limits.body_timeout_s:g} s for the whole body and {rate:g} MB/s after the first "
            f"{_BODY_RATE_GRACE_S:g} s); send it faster or in smaller requests",
            "body",
            "timeout",
        )

    async def _call_app(self, scope: Scope, body: bytes, receive: Receive, exchange: _Exchange) -> None:
        """Run the app on `body`; if the client disconnects before the answer is complete, cancel it."""
        gone = asyncio.Event()
        app_task = asyncio.create_task(self.app(scope, _replay(body, gone), exchange.send))
        watcher = asyncio.create_task(_wait_for_disconnect(receive))
        try:
            await asyncio.wait((app_task, watcher), return_when=asyncio.FIRST_COMPLETED)
            if not app_task.done() and not exchange.complete:
                gone.set()
                app_task.cancel()
                await asyncio.wait((app_task,))
                raise _ClientGone
            await app_task  # its answer is out; background work may still be running
        finally:
            watcher.cancel()
            app_task.cancel()  # a no-op unless this request itself is being cancelled (shutdown)

    def _record(self, scope: Scope, status: int, seconds: float) -> None:
        endpoint = scope["path"] if scope["path"] in self.known_paths else "other"
        self.requests.labels(endpoint, str(status)).inc()
        self.request_seconds.labels(endpoint).observe(seconds)
        extra = {"method": scope["method"], "path": scope["path"], "status": status, "ms": seconds * 1e3}
        if status == CLIENT_CLOSED:
            self.log.info("request: client disconnected before the answer; its work was cancelled", extra=extra)
        else:
            self.log.info("request", extra=extra)


class _Claim:
    """The body bytes one request holds in flight: its declared length at once, or a chunked body as it comes."""

    def __init__(self, load: _Load) -> None:
        self.load = load
        self.held = 0

    def take(self, size: int) -> None:
        self.load.reserve(size)
        self.held += size


def _too_large(limit: int) -> _Refused:
    return _Refused(413, f"body: the request body exceeds {limit} bytes; send smaller requests", "body", "too_large")


def bearer_token_matches(scope: Scope, token: str) -> bool:
    """Whether the request's `Authorization` header is `Bearer <token>`, the scheme in any case (RFC 9110 11.1)."""
    supplied = next((value for name, value in scope["headers"] if name == b"authorization"), b"")
    scheme, _, credentials = supplied.strip().partition(b" ")
    return scheme.lower() == b"bearer" and secrets.compare_digest(credentials.strip(), token.encode())


def _has_both_framings(scope: Scope) -> bool:
    names = {name for name, _ in scope["headers"]}
    return b"transfer-encoding" in names and b"content-length" in names


def _content_length(scope: Scope) -> int | None:
    for name, value in scope["headers"]:
        if name == b"content-length" and value.isdigit():
            return int(value)
    return None


def _replay(body: bytes, gone: asyncio.Event) -> Receive:
    """Hand the app the body already read; after it, `http.disconnect` once the client has gone."""
    sent = False

    async def replay() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        await gone.wait()
        return {"type": "http.disconnect"}

    return replay


async def _wait_for_disconnect(receive: Receive) -> None:
    """Returns when the server reports `http.disconnect`: the client went away, or the answer is complete."""
    while (await receive())["type"] != "http.disconnect":
        pass


class _SlowHeaderCount:
    """Connections closed for slow headers, logged as one count per second at most, never a line each."""

    def __init__(self, header_timeout_s: float) -> None:
        self.header_timeout_s = header_timeout_s
        self.pending = 0
        self.total = 0

    def closed(self, loop: asyncio.AbstractEventLoop) -> None:
        if self.pending == 0:
            loop.call_later(_SLOW_HEADER_LOG_EVERY_S, self._flush)
        self.pending += 1
        self.total += 1

    def _flush(self) -> None:
        log.warning(
            "closed %d connection(s) that sent no complete request headers within %g s (slow or stalled clients,"
            " e.g. slowloris); %d since start",
            self.pending,
            self.header_timeout_s,
            self.total,
            extra={"closed": self.pending, "closed_total": self.total, "header_timeout_s": self.header_timeout_s},
        )
        self.pending = 0


class HeaderTimeoutProtocol(H11Protocol):
    """uvicorn's h11 protocol (the one uvicorn runs here: `auto` picks httptools only when it is installed, and
    `serve` names this class explicitly) plus the header-read timeout uvicorn lacks: a connection is closed when
    a request's headers are not complete `header_timeout_s` after the connection opened or after the request's
    first byte. Without it a client trickling header bytes holds a connection and a file descriptor for ever."""

    def __init__(self, *args: Any, header_timeout_s: float, slow_headers: _SlowHeaderCount, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.header_timeout_s = header_timeout_s
        self.slow_headers = slow_headers
        self._header_timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm()

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        if self.conn.their_state is h11.IDLE and not self.transport.is_closing():
            self._arm()  # a request has begun; its headers are not complete yet
        else:
            self._disarm()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def _arm(self) -> None:
        if self._header_timer is None:  # the deadline counts from the request's first byte, not its last
            self._header_timer = self.loop.call_later(self.header_timeout_s, self._headers_too_slow)

    def _disarm(self) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None

    def _headers_too_slow(self) -> None:
        self._header_timer = None
        if not self.transport.is_closing():
            self.slow_headers.closed(self.loop)
            self.transport.close()


def raise_open_files_limit() -> int:
    """Raise this process's soft RLIMIT_NOFILE to its hard limit (each connection holds a descriptor); the new soft."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = hard if hard != resource.RLIM_INFINITY else 1 << 20
    if soft != resource.RLIM_INFINITY and soft < target:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
        except (ValueError, OSError) as exc:
            log.warning("could not raise the open-files limit from %d to %d: %s", soft, target, exc)
            return soft
    now = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    log.info("open-files limit %d (was %d, hard %d)", now, soft, hard, extra={"nofile": now, "was": soft})
    return now


def connection_cap(max_connections: int, open_files: int) -> int:
    """`max_connections`, lowered so that connections never use the descriptors the rest of the process needs."""
    allowed = max(1, open_files - _FD_RESERVE)
    if max_connections > allowed:
        log.warning(
            "max_connections=%d needs more file descriptors than the open-files limit (%d) leaves; capped at %d:"
            " raise the hard limit (ulimit -Hn) to allow more",
            max_connections,
            open_files,
            allowed,
        )
        return allowed
    return max_connections


def serve(app: ASGIApp, settings: HttpSettings) -> None:
    """Run `app` with uvicorn on `settings.host:port`, hardened (module doc); both services' CLIs start here."""
    protocol = functools.partial(
        HeaderTimeoutProtocol,
        header_timeout_s=settings.header_timeout_s,
        slow_headers=_SlowHeaderCount(settings.header_timeout_s),
    )
    uvicorn.run(
        app,
        host=settings.host,
        port=settings.port,
        http=protocol,  # type: ignore[arg-type]  # uvicorn calls it as it would the class
        limit_concurrency=connection_cap(settings.max_connections, raise_open_files_limit()),
        timeout_keep_alive=settings.keep_alive_s,  # type: ignore[arg-type]  # a float works: it goes to call_later
        log_config=None,
        access_log=False,
        timeout_graceful_shutdown=settings.drain_s,  # type: ignore[arg-type]  # a float works here too
    )
