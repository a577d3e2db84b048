"""A batched, async client of the reward service, with a sync wrapper.

    async with RewardClient("http://127.0.0.1:8000", profile="r1") as client:
        pending = client.submit(items_of_group_0)   # starts grading now
        ...                                          # keep generating
        results = await pending                      # RewardResult per item, in order

It splits work into batches, keeps at most `max_concurrency` requests in flight,
reuses connections, retries connection errors, 429 and 5xx with exponential backoff
(waiting at least as long as a 429/503's Retry-After asks, up to MAX_RETRY_AFTER_S),
and raises RewardServiceError when the service cannot answer: a trainer never gets
silent zeros.

Given several replica URLs, each batch goes to the replica with the fewest of this
client's requests in progress (where there is capacity), except items that carry their
group's size (`group_size`): those go to their group's home replica (a hash of the group),
where the service completes the group from every client's samples. Behind one URL (a load
balancer) those items go one request per group bucket, the bucket in the `X-Reward-Group`
header, which services/lb/haproxy.cfg hashes on. A replica that drops or
refuses a connection or answers 5xx is left out for `down_for_s` and the batch is
retried on another one at once; a replica that sheds load (429/503) keeps its place
but the retry prefers the others. When every replica is out, they are all tried again.
"""

from __future__ import annotations

import asyncio
import email.utils
import json
import random
import threading
import time
import zlib
from collections.abc import Coroutine, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any

try:
    import httpx
except ImportError as exc:  # `pip install reward-service` without the extra
    raise ImportError("trainer_client needs httpx: pip install 'reward-service[client]'") from exc


class RewardServiceError(RuntimeError):
    """The reward service could not grade a batch; the message says why and where."""


@dataclass(frozen=True)
class RewardResult:
    reward: float
    components: dict[str, float]
    status: str
    details: dict[str, Any] = field(default_factory=dict)
    id: str | int | None = None

    @property
    def ok(self) -> bool:
        return self.status == "ok"


_RETRY_STATUS = {429, 500, 502, 503, 504}
# Answers that shed load; their Retry-After is honoured (the wait is at least that long).
_SHED_STATUS = {429, 503}
# The share of the request timeout a grouped item may wait for the rest of its group; the rest is for grading.
_GROUP_WAIT_SHARE = 0.8
# Sized groups go out in this many buckets, a request per bucket, the bucket in GROUP_HEADER: a load balancer that
# hashes on the header (services/lb/haproxy.cfg) sends every sample of a group to one replica, from any client.
GROUP_BUCKETS = 64
GROUP_HEADER = "X-Reward-Group"
# Where a part of a batch goes: its home replica (None: any) and its group bucket (None: not a sized group).
_Route = tuple[str | None, str | None]
# The longest Retry-After honoured: a server asking for more is not worth stalling a training step on.
MAX_RETRY_AFTER_S = 60.0


class RewardClient:
    def __init__(
        self,
        urls: str | Sequence[str],
        *,
        profile: str | dict[str, Any] | None = None,
        batch_size: int = 256,
        max_concurrency: int = 4,
        timeout_s: float = 300.0,
        retries: int = 5,
        backoff_s: float = 0.5,
        token: str | None = None,
        down_for_s: float = 10.0,
    ) -> None:
        self.urls = [url.rstrip("/") for url in ([urls] if isinstance(urls, str) else urls)]
        if not self.urls:
            raise ValueError("RewardClient needs at least one service URL")
        if batch_size < 1 or max_concurrency < 1:
            raise ValueError("batch_size and max_concurrency must be >= 1")
        self.profile = profile
        self.batch_size = batch_size
        self.retries = retries
        self.backoff_s = backoff_s
        self.down_for_s = down_for_s
        self._gate = asyncio.Semaphore(max_concurrency)
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        limits = httpx.Limits(max_connections=max_concurrency, max_keepalive_connections=max_concurrency)
        self._http = httpx.AsyncClient(timeout=timeout_s, headers=headers, limits=limits)
        # A grouped item waits for its group's other samples at most this long: an answer before the timeout.
        self.group_wait_s = min(_GROUP_WAIT_SHARE * timeout_s, 3600.0)
        self._in_flight = dict.fromkeys(self.urls, 0)
        self._down_until = dict.fromkeys(self.urls, 0.0)
        self._turn = 0  # breaks ties between equally busy replicas in turn

    async def __aenter__(self) -> RewardClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self._http.aclose()

    async def grade(self, items: Sequence[dict[str, Any]]) -> list[RewardResult]:
        """One result per item, in order; batches go out concurrently."""
        batches = [items[i : i + self.batch_size] for i in range(0, len(items), self.batch_size)]
        answers = await asyncio.gather(*(self.grade_batch(batch) for batch in batches))
        return [result for answer in answers for result in answer]

    async def rewards(self, items: Sequence[dict[str, Any]]) -> list[float]:
        return [result.reward for result in await self.grade(items)]

    def submit(self, items: Sequence[dict[str, Any]]) -> asyncio.Task[list[RewardResult]]:
        """Start grading now; await the task when the rewards are needed."""
        return asyncio.get_running_loop().create_task(self.grade(list(items)))

    async def grade_batch(self, items: Sequence[dict[str, Any]]) -> list[RewardResult]:
        """One request for these items (a group's items stay together), retried as a whole; items that carry
        `group_size` go in one request per group bucket, to their home replica when there are several."""
        parts = self._routes(items)
        answers = await asyncio.gather(*(self._grade_part([items[i] for i in part], route) for route, part in parts))
        results: list[RewardResult | None] = [None] * len(items)
        for (_, part), answer in zip(parts, answers, strict=True):
            for index, result in zip(part, answer, strict=True):
                results[index] = result
        return results  # type: ignore[return-value]

    async def _grade_part(self, items: list[dict[str, Any]], route: _Route) -> list[RewardResult]:
        body: dict[str, Any] = {"items": items}
        if self.profile is not None:
            body["profile"] = self.profile
        if any(item.get("group_size") is not None for item in items):
            body["group_wait_s"] = self.group_wait_s
        async with self._gate:
            payload = await self._post_with_retries("/v1/rewards", body, *route)
        results = payload.get("results")
        if not isinstance(results, list) or len(results) != len(items):
            got = len(results) if isinstance(results, list) else type(results).__name__
            raise RewardServiceError(f"the service answered {got} results for {len(items)} items")
        return [RewardResult(**{k: r[k] for k in ("reward", "components", "status", "details", "id")}) for r in results]

    async def withdraw(self, groups: Sequence[dict[str, Any]]) -> None:
        """Samples that will not come, `{"group", "group_size", "samples"}` each (an aborted or filtered rollout):
        their groups complete over the others at once. Sent where the groups' items go."""
        body = {"profile": self.profile} if self.profile is not None else {}
        parts = self._routes(groups)
        await asyncio.gather(*(
            self._post_with_retries("/v1/groups/withdraw", body | {"groups": [groups[i] for i in part]}, *route)
            for route, part in parts
        ))  # fmt: skip

    def _routes(self, items: Sequence[dict[str, Any]]) -> list[tuple[_Route, list[int]]]:
        """Item indices by where they must be graded: a sized group's bucket, and its home replica (the same in
        every client with the same URLs) when there are several; (None, None) for the rest (any replica)."""
        parts: dict[_Route, list[int]] = {}
        for index, item in enumerate(items):
            route: _Route = (None, None)
            if item.get("group_size") is not None and item.get("group") is not None:
                digest = zlib.crc32(json.dumps(item["group"], default=str).encode())
                home = self.urls[digest % len(self.urls)] if len(self.urls) > 1 else None
                route = (home, str(digest % GROUP_BUCKETS))
            parts.setdefault(route, []).append(index)
        return list(parts.items())

    async def _post_with_retries(
        self, path: str, body: dict[str, Any], home: str | None = None, bucket: str | None = None
    ) -> dict[str, Any]:
        """To `home` while it is up, else the least busy replica; retries on another replica when there is one,
        else with exponential backoff; waits at least as long as a 429/503's Retry-After asks. `bucket`: the
        group bucket, sent as GROUP_HEADER for a load balancer to hash on."""
        headers = {GROUP_HEADER: bucket} if bucket is not None else None
        failures: list[str] = []
        tried: set[str] = set()
        shed = 0
        for attempt in range(self.retries + 1):
            url = self._pick_url(avoid=tried, home=home)
            tried.add(url)
            retry_after_s = 0.0
            self._in_flight[url] += 1
            try:
                response = await self._http.post(url + path, json=body, headers=headers)
            except httpx.TransportError as exc:  # connection refused, reset, timeout
                failures.append(f"{url}: {type(exc).__name__}: {exc}")
                self._set_down(url)
            else:
                if response.status_code < 400:
                    return response.json()
                if response.status_code not in _RETRY_STATUS:
                    raise RewardServiceError(f"{url}{path} refused the batch ({response.status_code}): {response.text}")
                failure = f"{url}: HTTP {response.status_code}"
                if response.status_code in _SHED_STATUS and (asked := _retry_after_s(response)) is not None:
                    retry_after_s = min(asked, MAX_RETRY_AFTER_S)
                    failure += f" (Retry-After {asked:g} s)"
                    shed += 1
                elif response.status_code not in _SHED_STATUS:
                    self._set_down(url)
                failures.append(failure)
            finally:
                self._in_flight[url] -= 1
            if attempt < self.retries and not self._untried_replica_up(tried):
                backoff_s = self.backoff_s * 2**attempt * (0.5 + random.random())
                await asyncio.sleep(max(backoff_s, retry_after_s))
        advice = (
            f"; {shed} answer(s) shed load and asked to retry later (Retry-After, honoured up to"
            f" {MAX_RETRY_AFTER_S:g} s): the service is overloaded; add replicas, lower max_concurrency"
            " or raise retries"
            if shed
            else ""
        )
        raise RewardServiceError(
            f"no reward service answered after {self.retries + 1} attempts: " + "; ".join(failures[-3:]) + advice
        )

    def _pick_url(self, avoid: set[str], home: str | None = None) -> str:
        """`home` when it is up and not yet tried; else the least busy replica that is up and not yet tried for
        this batch; failing that, the least busy that is up; when every replica is down, the one whose time out
        ends first."""
        now = time.monotonic()
        if home is not None and home not in avoid and self._down_until[home] <= now:
            return home
        up = [url for url in self.urls if self._down_until[url] <= now]
        candidates = [url for url in up if url not in avoid] or up
        if not candidates:
            return min(self.urls, key=self._down_until.__getitem__)
        self._turn += 1
        start = self._turn % len(candidates)
        in_turn = candidates[start:] + candidates[:start]
        return min(in_turn, key=self._in_flight.__getitem__)

    def _untried_replica_up(self, tried: set[str]) -> bool:
        now = time.monotonic()
        return any(url not in tried and self._down_until[url] <= now for url in self.urls)

    def _set_down(self, url: str) -> None:
        if len(self.urls) > 1:  # a single URL is always tried again after the backoff
            self._down_until[url] = time.monotonic() + self.down_for_s


def _retry_after_s(response: httpx.Response) -> float | None:
    """The Retry-After header in seconds (a number of seconds or an HTTP date); None if absent or unreadable."""
    value = response.headers.get("retry-after", "").strip()
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


class SyncRewardClient:
    """RewardClient for synchronous code: an event loop on a background thread.

    `grade(items)` blocks; `submit(items)` returns a concurrent.futures.Future at once.
    """

    def __init__(self, urls: str | Sequence[str], **options: Any) -> None:
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="reward-client", daemon=True)
        self._thread.start()
        self._client: RewardClient = self._run(self._make(urls, options)).result()

    @staticmethod
    async def _make(urls: str | Sequence[str], options: dict[str, Any]) -> RewardClient:
        return RewardClient(urls, **options)  # built on the loop that will use it

    def _run(self, coro: Coroutine[Any, Any, Any]) -> Future:
        return asyncio.run_coroutine_threadsafe(coro, self._loop)

    def grade(self, items: Sequence[dict[str, Any]]) -> list[RewardResult]:
        return self.submit(items).result()

    def rewards(self, items: Sequence[dict[str, Any]]) -> list[float]:
        return [result.reward for result in self.grade(items)]

    def submit(self, items: Sequence[dict[str, Any]]) -> Future[list[RewardResult]]:
        return self._run(self._client.grade(list(items)))

    def close(self) -> None:
        if self._loop.is_running():
            self._run(self._client.aclose()).result()
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(timeout=5)
        self._loop.close()

    def __enter__(self) -> SyncRewardClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
