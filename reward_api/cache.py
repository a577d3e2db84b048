"""A bounded LRU of text-grading results, keyed by a digest of everything that decides them.

Bounded twice: by entries and by bytes (each entry's size is its pickled answer from the
worker, plus the key), so a few huge answers cannot grow the service without limit.

The engine talks to a `ResultCache`: this process's LRU alone (`ProcessCache`, the default), or
the LRU in front of a Redis shared by replicas (reward_api/shared_cache.py, when
REWARD_API_CACHE_REDIS_URL is set).
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from typing import TYPE_CHECKING, Generic, Protocol, TypeVar

if TYPE_CHECKING:
    from reward_api.config import Config
    from reward_api.grading import TextGrades
    from reward_api.metrics import Metrics

V = TypeVar("V")

_ENTRY_OVERHEAD = 200  # key, dict slot and object headers, roughly


def digest(*parts: bytes | str) -> bytes:
    """A collision-resistant key; parts are length-prefixed so ("ab", "c") != ("a", "bc")."""
    h = hashlib.blake2b(digest_size=20)
    for part in parts:
        data = part.encode("utf-8", "surrogatepass") if isinstance(part, str) else part
        h.update(len(data).to_bytes(8, "little"))
        h.update(data)
    return h.digest()


class LRUCache(Generic[V]):
    def __init__(self, max_entries: int, max_bytes: int) -> None:
        self.max_entries = max_entries
        self.max_bytes = max_bytes
        self.bytes = 0
        self._entries: OrderedDict[bytes, tuple[V, int]] = OrderedDict()

    def get(self, key: bytes) -> V | None:
        entry = self._entries.get(key)
        if entry is None:
            return None
        self._entries.move_to_end(key)
        return entry[0]

    def put(self, key: bytes, value: V, size_bytes: int) -> None:
        """Keep `value`; `size_bytes` is what it costs in memory. One entry over half the budget is not kept."""
        size = size_bytes + _ENTRY_OVERHEAD
        if self.max_entries <= 0 or size > self.max_bytes // 2:
            return
        old = self._entries.pop(key, None)
        if old is not None:
            self.bytes -= old[1]
        self._entries[key] = (value, size)
        self.bytes += size
        while len(self._entries) > self.max_entries or self.bytes > self.max_bytes:
            _, (_, evicted) = self._entries.popitem(last=False)
            self.bytes -= evicted

    def __len__(self) -> int:
        return len(self._entries)


class ResultCache(Protocol[V]):
    """What the engine asks of its cache: `get` and `put` never fail grading (a shared store that fails is a miss)."""

    lru: LRUCache[V]  # this process's part, for the reward_cache_bytes/entries gauges

    async def start(self) -> None: ...

    async def close(self) -> None: ...

    async def get(self, key: bytes) -> V | None: ...

    async def put(self, key: bytes, value: V, size_bytes: int) -> None: ...


class ProcessCache(Generic[V]):
    """The default `ResultCache`: this process's LRU alone."""

    def __init__(self, lru: LRUCache[V]) -> None:
        self.lru = lru

    async def start(self) -> None:
        pass

    async def close(self) -> None:
        pass

    async def get(self, key: bytes) -> V | None:
        return self.lru.get(key)

    async def put(self, key: bytes, value: V, size_bytes: int) -> None:
        self.lru.put(key, value, size_bytes)


def open_result_cache(config: Config, metrics: Metrics) -> ResultCache[TextGrades]:
    """The process LRU, with the shared Redis behind it when one is configured."""
    lru: LRUCache[TextGrades] = LRUCache(config.cache_entries, int(config.cache_mb * 1024 * 1024))
    if not config.cache_redis_url:
        return ProcessCache(lru)
    try:
        from reward_api.shared_cache import SharedCache  # imports redis, needed only then
    except ImportError as exc:
        raise ValueError(
            f"REWARD_API_CACHE_REDIS_URL is set but the redis package is not there ({exc}): "
            "pip install 'reward-service[server]', or unset REWARD_API_CACHE_REDIS_URL"
        ) from None
    return SharedCache(lru, config, metrics)
