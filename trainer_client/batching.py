"""Per-sample reward calls, coalesced into batched requests: what every adapter sends through.

verl, OpenRLHF and slime now call their reward function once per sample, from many
coroutines, threads or Ray actors at once. One HTTP request per sample wastes the
service's batching; a request per call with a small connection pool serialises them.
`BatchingClient` gathers the items submitted within `window_s` of each other, from any
thread or event loop, and sends them as one `POST /v1/rewards`:

    client = shared_client(ServiceSettings.resolve(profile="r1"))
    result = await client.grade_one(item)          # from any event loop
    results = client.grade_sync(items)             # from plain threads
    future = client.submit(item)                   # concurrent.futures.Future[RewardResult]

With `group_size` (samples per prompt), items carrying a `group` go out at once with their group's size: the
service holds each sample's group reward (Kimi's length reward) until the whole group has arrived, from any
process or reward worker (reward_api/groups.py), and the client sends a group's samples to one replica.

The client owns an event loop on a daemon thread; `shared_client` keeps one per settings
and process (a forked child makes its own), so adapters never hold a client that a
pickle or a fork would break.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import threading
from collections.abc import Iterator, Sequence
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any

from trainer_client.client import RewardClient, RewardResult

DEFAULT_URL = "http://127.0.0.1:8000"
# The frameworks keep up to 64 samples in flight (verl's and slime's defaults); so do we.
DEFAULT_MAX_CONCURRENCY = 64

# Where a result goes: a concurrent Future (thread callers), or an asyncio future and its loop.
_Slot = Future | tuple[asyncio.AbstractEventLoop, asyncio.Future]
_Pending = tuple[dict[str, Any], _Slot]


@dataclass(frozen=True)
class ServiceSettings:
    """Where the service is and how to call it; hashable and picklable (adapters carry it)."""

    urls: tuple[str, ...] = (DEFAULT_URL,)
    profile: str | None = None  # a preset name or an inline profile as JSON; None: the service's default
    token: str | None = None  # bearer token of a secured service (REWARD_API_AUTH_TOKEN there)
    max_concurrency: int = DEFAULT_MAX_CONCURRENCY  # requests in flight
    batch_size: int = 64  # items per request before a batch goes out without waiting for the window
    window_s: float = 0.002  # how long the first item of a batch waits for others
    group_size: int | None = None  # samples per prompt: sent with each grouped item, the service completes groups
    timeout_s: float = 300.0  # per request, retries excluded
    retries: int = 5  # connection errors, 429 and 5xx, with exponential backoff across the URLs

    @classmethod
    def resolve(
        cls,
        urls: str | Sequence[str] | None = None,
        profile: str | dict[str, Any] | None = None,
        token: str | None = None,
        max_concurrency: int | None = None,
        group_size: int | None = None,
        window_s: float | None = None,
        environ: dict[str, str] | None = None,
    ) -> ServiceSettings:
        """Explicit arguments, else `REWARD_SERVICE_URL` (comma-separated), `REWARD_SERVICE_PROFILE`,
        `REWARD_SERVICE_TOKEN`, `REWARD_SERVICE_MAX_CONCURRENCY`, `REWARD_SERVICE_GROUP_SIZE`, else the defaults."""
        env = os.environ if environ is None else environ
        urls = urls or env.get("REWARD_SERVICE_URL") or DEFAULT_URL
        url_list = urls.split(",") if isinstance(urls, str) else list(urls)
        profile = profile or env.get("REWARD_SERVICE_PROFILE") or None
        if isinstance(profile, dict):
            profile = json.dumps(profile, sort_keys=True)
        concurrency = max_concurrency or int(env.get("REWARD_SERVICE_MAX_CONCURRENCY") or DEFAULT_MAX_CONCURRENCY)
        settings = cls(
            urls=tuple(url.strip().rstrip("/") for url in url_list if url.strip()),
            profile=profile,
            token=token or env.get("REWARD_SERVICE_TOKEN") or None,
            max_concurrency=concurrency,
            group_size=group_size if group_size is not None else _int_or_none(env.get("REWARD_SERVICE_GROUP_SIZE")),
            window_s=cls.window_s if window_s is None else window_s,
        )
        settings.check()
        return settings

    def check(self) -> None:
        if not self.urls:
            raise ValueError("reward service: no URL given (set REWARD_SERVICE_URL or pass urls=)")
        if self.max_concurrency < 1 or self.batch_size < 1:
            raise ValueError("reward service: max_concurrency and batch_size must be >= 1")
        if self.group_size is not None and self.group_size < 1:
            raise ValueError(f"reward service: group_size={self.group_size}: expected >= 1 samples per prompt")

    def profile_value(self) -> str | dict[str, Any] | None:
        """What goes into the request: an inline profile travels as an object."""
        if self.profile and self.profile.lstrip().startswith("{"):
            return json.loads(self.profile)
        return self.profile


def _int_or_none(text: str | None) -> int | None:
    return int(text) if text else None


class BatchingClient:
    """Coalesces items submitted from any thread or loop into batched requests; see the module doc."""

    def __init__(self, settings: ServiceSettings) -> None:
        self.settings = settings
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="reward-batching", daemon=True)
        self._thread.start()
        self._client: RewardClient = asyncio.run_coroutine_threadsafe(self._make_client(), self._loop).result()
        # Submissions wait here; the loop is woken once per burst, not once per item (a syscall each).
        self._inbox: list[_Pending] = []
        self._inbox_lock = threading.Lock()
        self._wake_pending = False
        # Touched only on the client's own loop.
        self._ready: list[_Pending] = []
        self._flush_timer: asyncio.TimerHandle | None = None

    async def _make_client(self) -> RewardClient:
        s = self.settings
        return RewardClient(
            list(s.urls), profile=s.profile_value(), batch_size=s.batch_size,
            max_concurrency=s.max_concurrency, timeout_s=s.timeout_s, token=s.token, retries=s.retries,
        )  # fmt: skip

    def submit(self, item: dict[str, Any]) -> Future[RewardResult]:
        [future] = self.submit_many([item])
        return future

    def submit_many(self, items: Sequence[dict[str, Any]]) -> list[Future[RewardResult]]:
        """Thread-safe; items submitted together are never split across requests more than batch_size needs."""
        pending: list[_Pending] = [(dict(item), Future()) for item in items]
        self._post(pending)
        return [future for _, future in pending]

    async def grade(self, items: Sequence[dict[str, Any]]) -> list[RewardResult]:
        """Awaitable from any event loop; results come back to that loop once per batch."""
        return list(await asyncio.gather(*self._post_from_loop(items)))

    async def grade_one(self, item: dict[str, Any]) -> RewardResult:
        [pending] = self._post_from_loop([item])  # no gather: the per-sample path is the hot one
        return await pending

    def _post_from_loop(self, items: Sequence[dict[str, Any]]) -> list[asyncio.Future]:
        loop = asyncio.get_running_loop()
        pending: list[_Pending] = [(dict(item), (loop, loop.create_future())) for item in items]
        self._post(pending)
        return [slot[1] for _, slot in pending]

    async def withdraw(self, groups: Sequence[dict[str, Any]]) -> None:
        """RewardClient.withdraw, on the client's loop, awaitable from any event loop."""
        await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(self._client.withdraw(groups), self._loop))

    def grade_sync(self, items: Sequence[dict[str, Any]]) -> list[RewardResult]:
        return [future.result() for future in self.submit_many(items)]

    def _post(self, pending: list[_Pending]) -> None:
        with self._inbox_lock:
            self._inbox.extend(pending)
            if self._wake_pending:
                return
            self._wake_pending = True
        self._loop.call_soon_threadsafe(self._take_inbox)

    def close(self) -> None:
        if self._loop.is_running():
            asyncio.run_coroutine_threadsafe(self._client.aclose(), self._loop).result()
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(timeout=5)

    # --- on the client's loop -------------------------------------------------------------

    def _take_inbox(self) -> None:
        with self._inbox_lock:
            pending, self._inbox = self._inbox, []
            self._wake_pending = False
        self._accept(pending)

    def _accept(self, pending: list[_Pending]) -> None:
        group_size = self.settings.group_size
        if group_size is not None:
            for item, _ in pending:
                if item.get("group") is not None:
                    item.setdefault("group_size", group_size)
        self._ready.extend(pending)
        self._schedule_flush()

    def _schedule_flush(self) -> None:
        """A full batch goes now; a partial one when the first of its items has waited `window_s`."""
        if len(self._ready) >= self.settings.batch_size:
            self._flush()
        elif self._ready and self._flush_timer is None:
            self._flush_timer = self._loop.call_later(self.settings.window_s, self._flush)

    def _flush(self) -> None:
        if self._flush_timer is not None:
            self._flush_timer.cancel()
            self._flush_timer = None
        batch, self._ready = self._ready, []
        for chunk in _chunks_keeping_groups(batch, self.settings.batch_size):
            self._loop.create_task(self._send(chunk))

    async def _send(self, batch: list[_Pending]) -> None:
        try:
            results: list[Any] = await self._client.grade_batch([item for item, _ in batch])
        except Exception as exc:  # every caller of the batch learns why: never a silent zero
            results = [exc] * len(batch)
        by_loop: dict[asyncio.AbstractEventLoop, list[tuple[asyncio.Future, Any]]] = {}
        for (_, slot), outcome in zip(batch, results, strict=True):
            if isinstance(slot, Future):
                _settle([(slot, outcome)])
            else:
                by_loop.setdefault(slot[0], []).append((slot[1], outcome))
        for loop, settled in by_loop.items():
            with contextlib.suppress(RuntimeError):  # the caller's loop has closed: nobody waits
                loop.call_soon_threadsafe(_settle, settled)


def _settle(settled: Sequence[tuple[Future | asyncio.Future, Any]]) -> None:
    """Hand each waiting caller its result, or the exception that stopped its batch."""
    for future, outcome in settled:
        if future.cancelled():
            continue
        if isinstance(outcome, BaseException):
            future.set_exception(outcome)
        else:
            future.set_result(outcome)


def _chunks_keeping_groups(batch: list[_Pending], size: int) -> Iterator[list[_Pending]]:
    """Requests of about `size` items: a chunk ends only where a group (consecutive items sharing one) ends."""
    chunk: list[_Pending] = []
    for entry in batch:
        group = entry[0].get("group")
        if len(chunk) >= size and (group is None or group != chunk[-1][0].get("group")):
            yield chunk
            chunk = []
        chunk.append(entry)
    if chunk:
        yield chunk


_SHARED: dict[tuple[int, ServiceSettings], BatchingClient] = {}
_SHARED_LOCK = threading.Lock()


def shared_client(settings: ServiceSettings) -> BatchingClient:
    """One client per settings and process: per-sample calls of one process share its batches."""
    key = (os.getpid(), settings)
    with _SHARED_LOCK:
        client = _SHARED.get(key)
        if client is None:
            client = _SHARED[key] = BatchingClient(settings)
        return client
