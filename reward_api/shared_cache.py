"""A cache shared by replicas: a Redis behind each process's LRU (optional: REWARD_API_CACHE_REDIS_URL).

    get: process LRU -> Redis (one MGET for the keys asked for while the previous one was on its way) -> miss
    put: process LRU and Redis (one pipeline of `SET key value EX ttl`, batched the same way)

- Bounded in bytes: every new connection sets the server's maxmemory (cache_redis_mb) and allkeys-lru, so a
  Redis restarted empty is bounded again. A server that refuses CONFIG (managed Redis) is accepted only when
  it already has a maxmemory and a policy that evicts; else the service refuses to start, saying what to set.
  An answer over 1/VALUE_SHARE of the bound is not stored there: one answer cannot flush all others.
- A shared Redis is another trust domain: answers travel as JSON, never pickles, and a stored value that is
  not a valid answer is a miss.
- Keys carry a namespace (the versions of the code that grades and the settings that decide grades: two
  service versions never share answers) and a TTL.
- Redis failing never fails grading: an error or an answer slower than TIMEOUT_S is a miss, counted in
  reward_cache_errors{op} and logged at most once per LOG_EVERY_S; Redis is then left alone for
  RETRY_AFTER_S, so a dead or hung Redis costs no time per item.
"""

from __future__ import annotations

import asyncio
import logging
import sys
import time
from collections.abc import Awaitable, Callable
from importlib import metadata
from typing import Any, Generic, TypeVar
from urllib.parse import urlsplit

from prometheus_client import Counter
from redis.asyncio import Redis
from redis.asyncio.connection import AbstractConnection
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.exceptions import RedisError, ResponseError

from reward_api import __version__
from reward_api.cache import LRUCache, digest
from reward_api.config import Config
from reward_api.metrics import Metrics

log = logging.getLogger("reward_api.shared_cache")

TIMEOUT_S = 0.25  # a Redis answer slower than this is a miss: grading never waits on its cache
RETRY_AFTER_S = 2.0  # after a failure, Redis is left alone this long (its items go to the workers)
LOG_EVERY_S = 60.0  # at most one warning this often, however many items miss
MAX_KEYS_PER_CALL = 256  # keys in one MGET or pipeline: a 4,096-item batch is 16 round trips
# Answers come from the workers one at a time: a put waits this long for others to share its round trip
# (a pipeline per answer cost ~50% more main-process CPU per trivial sort item than no shared cache).
PUT_LINGER_S = 0.002
MAX_CONNECTIONS = 4  # one MGET and one pipeline on their way at a time, plus the start-up check
MIN_MB = 2.0  # Redis itself takes ~1 MB of its maxmemory
VALUE_SHARE = 256  # an answer over 1/256 of the bound is not stored in Redis
# Policies that evict our keys at the bound; every key we write has a TTL, so volatile-* evict them too.
EVICTING_POLICIES = frozenset(
    {"allkeys-lru", "allkeys-lfu", "allkeys-random", "volatile-lru", "volatile-lfu", "volatile-random", "volatile-ttl"}
)
# Installed code that decides grades besides the item: this service and the `graders` extra of pyproject.toml.
GRADING_DISTRIBUTIONS = ("reward-service", "math-verify", "latex2sympy2_extended", "sympy", "lingua-language-detector")

T = TypeVar("T")
R = TypeVar("R")
V = TypeVar("V")


class UnboundedRedis(RedisError):
    """The server refuses CONFIG SET and has no bound of its own: it would grow without limit."""


def namespace(config: Config) -> bytes:
    """The key prefix: what decides a grade besides the item (the item's key digests the item and its profile).

    The versions of the grading code and the deadlines (a remembered timeout depends on them), so two service
    versions sharing one Redis never answer each other's items.
    """
    decided = [f"{name}=={_installed_version(name)}" for name in GRADING_DISTRIBUTIONS]
    decided += [
        f"python=={sys.version_info.major}.{sys.version_info.minor}",
        f"item_deadline_s={config.item_deadline_s!r}",
        f"code_deadline_s={config.code_deadline_s!r}",
    ]
    return f"reward-api:{__version__}:{digest(*decided).hex()[:16]}:".encode()


def _installed_version(name: str) -> str:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:  # run from a source tree: __version__ still names it
        return "absent"


def redacted(url: str) -> str:
    """`url` without its password, for messages and logs."""
    parts = urlsplit(url)
    if not parts.password:
        return url
    return parts._replace(netloc=f"{parts.username or ''}:***@{parts.netloc.rpartition('@')[2]}").geturl()


class RedisFailures:
    """What a Redis client of the service failed to do: counted in `counter{op}`, said at most once per
    LOG_EVERY_S (`consequence` says what it means for grading), and after an outage Redis is left alone for
    RETRY_AFTER_S, so a dead or hung Redis costs no time per item."""

    def __init__(self, where: str, counter: Counter, logger: logging.Logger, consequence: str) -> None:
        self.where = where
        self._counter = counter
        self._log = logger
        self._consequence = consequence
        self._rest_until = 0.0
        self._outage_logged = False
        self._log_after = 0.0
        self._unlogged = 0

    @property
    def resting(self) -> bool:
        return time.monotonic() < self._rest_until

    def failed(self, op: str, exc: Exception, rest: bool = False) -> None:
        self._counter.labels(op).inc()
        now = time.monotonic()
        if rest:
            self._rest_until = now + RETRY_AFTER_S
        self._unlogged += 1
        if now < self._log_after:
            return
        self._log.warning(
            "Redis at %s: %s failed (%s: %s); %s; Redis is tried again every %gs (%d failures since the last "
            "message)",
            self.where, op, type(exc).__name__, exc, self._consequence, RETRY_AFTER_S, self._unlogged,
            extra={"redis": self.where, "op": op, "failures": self._unlogged},
        )  # fmt: skip
        self._log_after = now + LOG_EVERY_S
        self._unlogged = 0
        if rest:
            self._outage_logged = True  # its end is worth a line too

    def answered(self) -> None:
        if self._outage_logged:
            self._log.info("Redis at %s answers again", self.where, extra={"redis": self.where})
            self._outage_logged = False


class SharedCache(Generic[V]):
    """A `ResultCache`: this process's LRU in front of a Redis shared by replicas. What it holds goes to Redis as
    `encode` writes it and comes back as `decode` reads it (ValueError: not ours); it knows nothing else of it."""

    def __init__(
        self,
        lru: LRUCache[V],
        config: Config,
        metrics: Metrics,
        encode: Callable[[V], bytes],
        decode: Callable[[bytes], V],
    ) -> None:
        self._encode, self._decode = encode, decode
        self._where = redacted(config.cache_redis_url)
        if config.cache_redis_mb < MIN_MB:
            raise ValueError(f"REWARD_API_CACHE_REDIS_MB={config.cache_redis_mb:g}: expected at least {MIN_MB:g}")
        if config.cache_redis_ttl_s < 1:
            raise ValueError(f"REWARD_API_CACHE_REDIS_TTL_S={config.cache_redis_ttl_s}: expected at least 1")
        max_bytes = int(config.cache_redis_mb * 1024 * 1024)
        try:
            self._redis: Redis = Redis.from_url(
                config.cache_redis_url, socket_timeout=TIMEOUT_S, socket_connect_timeout=TIMEOUT_S,
                retry=Retry(NoBackoff(), 0),  # a failure is a miss at once; RETRY_AFTER_S paces the next try
                max_connections=MAX_CONNECTIONS, redis_connect_func=_Bound(max_bytes).on_connect,
            )  # fmt: skip
        except ValueError as exc:
            raise ValueError(f"REWARD_API_CACHE_REDIS_URL={self._where}: {exc}") from None
        self.lru = lru
        self._metrics = metrics
        self._max_value_bytes = max_bytes // VALUE_SHARE
        self._ttl_s = config.cache_redis_ttl_s
        self._prefix = namespace(config)
        self._get = Batched(self._get_many)
        self._set = Batched(self._set_many, linger_s=PUT_LINGER_S)
        self._failures = RedisFailures(
            self._where, metrics.cache_errors, log, "its items are graded here meanwhile (a miss, never an error)"
        )

    async def start(self) -> None:
        """Refuse to start on a Redis that would grow without bound. One not reachable yet is tried again
        later: replicas need not wait for it, they answer from their own LRU meanwhile."""
        try:
            await self._redis.ping()
        except UnboundedRedis as exc:
            raise ValueError(f"REWARD_API_CACHE_REDIS_URL={self._where}: {exc}") from None
        except Exception as exc:  # the service starts without its shared cache and tries it again later
            self._failures.failed("connect", exc, rest=True)
            return
        log.info("shared cache ready", extra={"redis": self._where, "namespace": self._prefix.decode()})

    async def close(self) -> None:
        await self._redis.aclose()

    async def get(self, key: bytes) -> V | None:
        grades = self.lru.get(key)
        if grades is not None or self._failures.resting:
            return grades
        raw = await self._get(self._prefix + key.hex().encode())
        if raw is None:
            return None
        try:
            grades = self._decode(raw)
        except ValueError as exc:
            self._failures.failed("decode", exc)
            return None
        self._metrics.cache_shared_hits.inc()
        self.lru.put(key, grades)
        return grades

    async def put(self, key: bytes, value: V, pickled: bytes | None = None) -> None:
        """Kept here (`pickled` as LRUCache.put takes it) and in Redis. Awaited (PUT_LINGER_S and a round trip at
        most): a replica asked for the item after this one answered it finds it."""
        self.lru.put(key, value, pickled)
        if self._failures.resting:
            return
        try:
            raw = self._encode(value)
        except (TypeError, ValueError) as exc:  # details a grader filled with something JSON cannot hold
            self._failures.failed("encode", exc)
            return
        if len(raw) <= self._max_value_bytes:
            await self._set((self._prefix + key.hex().encode(), raw))

    async def _get_many(self, keys: list[bytes]) -> list[bytes | None]:
        if self._failures.resting:
            return [None] * len(keys)
        try:
            values = await self._redis.mget(keys)
        except Exception as exc:  # whatever the shared cache does, the item is a miss, never an error
            self._failures.failed("get", exc, rest=True)
            return [None] * len(keys)
        self._failures.answered()
        return values

    async def _set_many(self, entries: list[tuple[bytes, bytes]]) -> list[None]:
        if not self._failures.resting:  # (again: Redis may have failed while these waited)
            try:
                async with self._redis.pipeline(transaction=False) as pipe:
                    for key, raw in entries:
                        pipe.set(key, raw, ex=self._ttl_s)
                    await pipe.execute()
            except Exception as exc:  # an answer not shared is only a later miss
                self._failures.failed("put", exc, rest=True)
            else:
                self._failures.answered()
        return [None] * len(entries)


class _Bound:
    """Bounds the server on every new connection, so a Redis that restarted empty is bounded again."""

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes

    async def on_connect(self, conn: AbstractConnection) -> None:
        await conn.on_connect()  # authenticate and select the database, as redis-py does without this hook
        try:
            await _command(conn, "CONFIG", "SET", "maxmemory", str(self.max_bytes))
            await _command(conn, "CONFIG", "SET", "maxmemory-policy", "allkeys-lru")
        except ResponseError as refused:  # managed Redis: CONFIG renamed or not granted
            self._check_own_bound(_info_fields(await _command(conn, "INFO", "memory")), refused)

    def _check_own_bound(self, info: dict[str, str], refused: ResponseError) -> None:
        maxmemory = int(info.get("maxmemory", "0"))
        policy = info.get("maxmemory_policy", "noeviction")
        if maxmemory > 0 and policy in EVICTING_POLICIES:
            return
        raise UnboundedRedis(
            f"the server refuses CONFIG SET ({refused}) and has no bound of its own (maxmemory {maxmemory}, "
            f"maxmemory-policy {policy}), so the shared cache would grow without limit. Set `maxmemory "
            f"{self.max_bytes}` (bytes: REWARD_API_CACHE_REDIS_MB) and `maxmemory-policy allkeys-lru` on the "
            "server, or let this client run CONFIG SET, or unset REWARD_API_CACHE_REDIS_URL to use each "
            "replica's own cache only"
        )


async def _command(conn: AbstractConnection, *args: str) -> Any:
    """One command on a connection being set up (the client's own command path would take another)."""
    await conn.send_command(*args)
    return await conn.read_response()


def _info_fields(info: bytes | str) -> dict[str, str]:
    text = info.decode() if isinstance(info, bytes) else info
    return dict(line.split(":", 1) for line in text.splitlines() if ":" in line and not line.startswith("#"))


class Batched(Generic[T, R]):
    """Calls made while a round trip is on its way wait for the next one, together: a batch of 4,096 items
    costs a few round trips on one connection, not 4,096 connections or round trips.

    `send` answers a list of arguments with a list of results, and fails only by being cancelled. Each round
    trip waits `linger_s` first, for calls that do not come all in one loop turn.
    """

    def __init__(self, send: Callable[[list[T]], Awaitable[list[R]]], linger_s: float = 0.0) -> None:
        self._send = send
        self._linger_s = linger_s
        self._waiting: list[tuple[T, asyncio.Future[R]]] = []
        self._sending: asyncio.Task[None] | None = None

    async def __call__(self, arg: T) -> R:
        future: asyncio.Future[R] = asyncio.get_running_loop().create_future()
        self._waiting.append((arg, future))
        if self._sending is None or self._sending.done():
            # Starts on the next loop turn: every item of a batch asks first, then one round trip answers all.
            self._sending = asyncio.create_task(self._send_waiting())
        return await future

    async def _send_waiting(self) -> None:
        try:
            while self._waiting:
                if self._linger_s:
                    await asyncio.sleep(self._linger_s)
                batch = self._waiting[:MAX_KEYS_PER_CALL]  # stays listed until answered; new calls join the tail
                results = await self._send([arg for arg, _ in batch])
                del self._waiting[: len(batch)]
                for (_, future), result in zip(batch, results, strict=True):
                    if not future.done():  # its request may be gone
                        future.set_result(result)
        except BaseException:  # cancelled (the loop is closing): nobody is left waiting forever
            for _, future in self._waiting:
                future.cancel()
            self._waiting.clear()
            raise
