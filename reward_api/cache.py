"""A bounded LRU of text-grading results, keyed by a digest of everything that decides them.

Bounded twice: by entries and by bytes, so a few huge answers cannot grow the service without limit, and
the bytes counted are what the process holds: answers are kept pickled in one log-structured buffer (a
tree of dicts and floats per answer took 2-4 times its pickle; a bytes object per answer, in every size
coming and going, fragmented the heap: RSS grew ~50 MB per 10 minutes once the cache was full).

The engine talks to a `ResultCache`: this process's LRU alone (`ProcessCache`, the default), or
the LRU in front of a Redis shared by replicas (reward_api/shared_cache.py, when
REWARD_API_CACHE_REDIS_URL is set).
"""

from __future__ import annotations

import hashlib
import mmap
import pickle
import sys
from collections import OrderedDict
from typing import Generic, Protocol, TypeVar

V = TypeVar("V")

_LENGTH_BITS = 40  # an index entry packs a log position and a length (< 1 TB) into one int
_RELEASE_BYTES = 1 << 20  # pages behind the oldest entry go back to the kernel a megabyte at a time
# Linux's MAP_NORESERVE (Python 3.11's mmap does not name it): the whole bound is mapped at once, but only
# pages written cost memory, so no swap is reserved for the rest.
_MAP_NORESERVE = 0x4000


def digest(*parts: bytes | str) -> bytes:
    """A collision-resistant key; parts are length-prefixed so ("ab", "c") != ("a", "bc")."""
    chunks: list[bytes] = []
    for part in parts:
        data = part.encode("utf-8", "surrogatepass") if isinstance(part, str) else part
        chunks += (len(data).to_bytes(8, "little"), data)
    return hashlib.blake2b(b"".join(chunks), digest_size=20).digest()  # one call: a key per item, on the front


def _index_cost(key: bytes, packed: int) -> int:
    """An index entry's key and packed position; its slot is in the dict's own size (its table and nodes)."""
    return sys.getsizeof(key) + sys.getsizeof(packed)


class LRUCache(Generic[V]):
    """An LRU whose values live pickled (this process's own objects, or its grading workers' answers as they sent
    them; never bytes from outside) in a log:
    one buffer of `max_bytes` written front to back and round again, the oldest entries evicted as the
    write position comes round to them; a hit is written again at the front, so each `get` returns a fresh
    copy. What it holds is its count: the log's span from the oldest entry to the write position (the pages
    behind it given back) and an index entry per answer."""

    def __init__(self, max_entries: int, max_bytes: int) -> None:
        self.max_entries = max_entries
        self.max_bytes = max_bytes
        flags = mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | _MAP_NORESERVE
        self._log = mmap.mmap(-1, max_bytes, flags=flags) if max_bytes > 0 else None
        self._index: OrderedDict[bytes, int] = OrderedDict()  # key -> position << _LENGTH_BITS | length
        self._index_bytes = 0
        self._head = 0  # the log position of the next write; position p is byte p % max_bytes of the buffer
        self._released = 0  # the log position up to which pages were given back

    @property
    def bytes(self) -> int:
        return self._head - self._tail() + self._held_by_index()

    def _held_by_index(self) -> int:
        return self._index_bytes + sys.getsizeof(self._index)

    def get(self, key: bytes) -> V | None:
        packed = self._index.pop(key, None)
        if packed is None:
            return None
        self._index_bytes -= _index_cost(key, packed)
        at, length = (packed >> _LENGTH_BITS) % self.max_bytes, packed & ((1 << _LENGTH_BITS) - 1)
        assert self._log is not None
        blob = self._log[at : at + length]
        self._append(key, blob)
        return pickle.loads(blob)

    def put(self, key: bytes, value: V, pickled: bytes | None = None) -> None:
        """Keep `value`; `pickled`, its pickle where the caller has it (a worker's answer as it came), is kept as it
        is rather than made again. One entry over half the byte budget is not kept."""
        if self.max_entries <= 0:
            return
        blob = pickle.dumps(value, pickle.HIGHEST_PROTOCOL) if pickled is None else pickled
        if len(blob) + _index_cost(key, 0) > self.max_bytes // 2:
            return
        if (old := self._index.pop(key, None)) is not None:
            self._index_bytes -= _index_cost(key, old)
        self._append(key, blob)

    def _tail(self) -> int:
        """The log position of the oldest entry (the write position when there is none)."""
        return next(iter(self._index.values())) >> _LENGTH_BITS if self._index else self._head

    def _append(self, key: bytes, blob: bytes) -> None:
        start = self._head
        if start % self.max_bytes + len(blob) > self.max_bytes:  # no room before the buffer's end: its start
            start += self.max_bytes - start % self.max_bytes
        end = start + len(blob)
        packed = start << _LENGTH_BITS | len(blob)
        cost = _index_cost(key, packed)
        # Within max_bytes of log from the oldest entry, no two entries share a byte of the buffer.
        while self._index and (
            len(self._index) >= self.max_entries or end - self._tail() + self._held_by_index() + cost > self.max_bytes
        ):
            old_key, old = self._index.popitem(last=False)
            self._index_bytes -= _index_cost(old_key, old)
        assert self._log is not None
        at = start % self.max_bytes
        self._log[at : at + len(blob)] = blob
        self._index[key] = packed
        self._index_bytes += cost
        self._head = end
        self._release_behind(self._tail())

    def _release_behind(self, tail: int) -> None:
        """Give the whole pages between the last release and the oldest entry back to the kernel."""
        if tail - self._released < _RELEASE_BYTES:
            return
        assert self._log is not None
        start = max(self._released, tail - self.max_bytes)
        while start < tail:  # at most twice: the freed span may wrap round the buffer's end
            at = start % self.max_bytes
            stop = min(self.max_bytes, at + tail - start)
            first, last = -(-at // mmap.PAGESIZE) * mmap.PAGESIZE, stop // mmap.PAGESIZE * mmap.PAGESIZE
            if last > first:
                self._log.madvise(mmap.MADV_DONTNEED, first, last - first)
            start += stop - at
        self._released = tail

    def __len__(self) -> int:
        return len(self._index)


class ResultCache(Protocol[V]):
    """What the engine asks of its cache: `get` and `put` never fail grading (a shared store that fails is a miss)."""

    lru: LRUCache[V]  # this process's part, for the reward_cache_bytes/entries gauges

    async def start(self) -> None: ...

    async def close(self) -> None: ...

    async def get(self, key: bytes) -> V | None: ...

    async def put(self, key: bytes, value: V, pickled: bytes | None = None) -> None: ...


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

    async def put(self, key: bytes, value: V, pickled: bytes | None = None) -> None:
        self.lru.put(key, value, pickled)
