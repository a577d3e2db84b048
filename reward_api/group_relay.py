"""Groups split between replicas meet at one, through the shared cache's Redis (REWARD_API_CACHE_REDIS_URL).

A group's samples do not always reach one replica: OpenRLHF's `--reward.remote_url A,B` cycles its URLs per
sample, a round-robin balancer deals requests out in turn, a replica restarts between two samples. Alone, each
replica would see part of the group and answer it `partial` after the wait, with Kimi values over that part.
With a Redis shared by the replicas:

    the first replica to see a group owns it: a key in Redis, set if absent, renewed by each sample
    a sample that reaches another replica is graded there as always; only its member (digest, length,
        correctness) travels, on the owner's Redis channel, and joins the owner's GroupAssembler as a sample of
        its own would; the outcome comes back on the sender's channel
    a request that goes away sends `cancel`: the owner counts its sample gone, as for a local disconnect

So every rule of groups.py (bounds, retries, copies, withdrawals, late samples) holds for a split group as for a
whole one, and a group that reaches one replica (HAProxy hashing on the group) costs one Redis round trip a
batch. Nothing waits on a failure: while Redis fails, each replica keeps its groups to itself (split ones end
`partial`); an owner that no longer listens (it died) is replaced by the sender; an owner that does not answer
within the sample's bound leaves the sample its group as this replica knows it (`partial`). Each is counted in
reward_group_relay_errors and logged.

Messages are JSON, never pickles, and are validated: a shared Redis is another trust domain.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import uuid
from collections.abc import Coroutine
from dataclasses import astuple
from typing import Annotated, Literal

from pydantic import BaseModel, Field, TypeAdapter, ValidationError
from redis.asyncio import Redis
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff

from reward_api.groups import Formed, GroupAssembler, Member, Outcome
from reward_api.metrics import Metrics
from reward_api.shared_cache import RETRY_AFTER_S, Batched, RedisFailures, redacted

log = logging.getLogger("reward_api.group_relay")

PREFIX = "reward-api:groups:"
# An owner key outlives its group's life and its late window (2 x the group wait) by this much (seconds).
OWNER_MARGIN_S = 10.0
# An outcome may come back this long after the sample's own bound: the owner answers at the bound (seconds).
ANSWER_MARGIN_S = 2.0
# A Redis answer slower than this is a failure (seconds): far above a round trip, since a failure splits groups.
TIMEOUT_S = 2.0
# A start waits this long for its subscription (seconds); one Redis refuses goes on in the background.
SUBSCRIBE_WAIT_S = 1.0
# The listener's connection is checked this often, so a Redis that went away is noticed and subscribed to again.
HEALTH_CHECK_S = 5

# Owner of KEYS[1]: the one set, or ARGV[1] if none is; renewed to ARGV[2] ms either way.
_CLAIM = """
local owner = redis.call('GET', KEYS[1])
if not owner then owner = ARGV[1] end
redis.call('SET', KEYS[1], owner, 'PX', ARGV[2])
return owner
"""
# ARGV[2] takes KEYS[1] over if its owner is still ARGV[1] (which no longer listens) or none; the owner after.
_TAKE_OVER = """
local owner = redis.call('GET', KEYS[1])
if owner and owner ~= ARGV[1] then return owner end
redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
return ARGV[2]
"""


class _Join(BaseModel):
    op: Literal["join"] = "join"
    id: str
    reply: str  # the sender's replica
    key: str
    expected: int = Field(ge=1)
    member: tuple[str, int, bool]  # Member's fields
    wait_s: float | None = Field(None, ge=0)


class _Cancel(BaseModel):
    op: Literal["cancel"] = "cancel"
    id: str


class _Withdraw(BaseModel):
    op: Literal["withdraw"] = "withdraw"
    key: str
    expected: int = Field(ge=1)
    samples: int = Field(ge=1)


class _Answer(BaseModel):
    op: Literal["outcome"] = "outcome"
    id: str
    value: float
    members: int
    expected: int
    formed: Formed


_MESSAGE: TypeAdapter[_Join | _Cancel | _Withdraw | _Answer] = TypeAdapter(
    Annotated[_Join | _Cancel | _Withdraw | _Answer, Field(discriminator="op")]
)


class GroupRelay:
    """`join` and `withdraw` as GroupAssembler's, for groups whose samples reach several replicas."""

    def __init__(self, assembler: GroupAssembler, redis_url: str, metrics: Metrics) -> None:
        self.assembler = assembler
        self.replica = uuid.uuid4().hex
        self._metrics = metrics
        # Claims and messages fail at TIMEOUT_S; the listener blocks on its connection, checked for health.
        self._redis = Redis.from_url(
            redis_url, socket_timeout=TIMEOUT_S, socket_connect_timeout=TIMEOUT_S, retry=Retry(NoBackoff(), 0)
        )
        self._listener_redis = Redis.from_url(
            redis_url, socket_connect_timeout=TIMEOUT_S, health_check_interval=HEALTH_CHECK_S
        )
        self._claim_script = self._redis.register_script(_CLAIM)
        self._take_over_script = self._redis.register_script(_TAKE_OVER)
        # A burst's claims and messages (a thousand per-sample requests at once) in a few round trips on one
        # connection each, not a connection a sample.
        self._claims = Batched(self._claim_many)
        self._publishes = Batched(self._publish_many)
        self._owner_ttl_ms = int((2 * assembler.wait_s + OWNER_MARGIN_S) * 1000)
        self._answers: dict[str, asyncio.Future[Outcome]] = {}  # our samples joined elsewhere, by message id
        self._serving: dict[str, asyncio.Task[None]] = {}  # other replicas' samples joined here, by message id
        self._background: set[asyncio.Task[object]] = set()
        self._listener: asyncio.Task[None] | None = None
        self._failures = RedisFailures(
            redacted(redis_url),
            metrics.group_relay_errors,
            log,
            "a group split between replicas meanwhile ends partial",
        )

    async def start(self) -> None:
        """Listen on this replica's channel; a Redis not reachable yet is tried again in the background."""
        subscribed = asyncio.get_running_loop().create_future()
        self._listener = asyncio.create_task(self._listen(subscribed))
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.shield(subscribed), SUBSCRIBE_WAIT_S)

    async def close(self) -> None:
        for task in [self._listener, *self._serving.values(), *self._background]:
            if task is not None:
                task.cancel()
        await self._redis.aclose()
        await self._listener_redis.aclose()

    async def join(self, key: str, expected: int, member: Member, wait_s: float | None = None) -> Outcome:
        owner = await self._claims((key, expected))
        if owner != self.replica:
            answer: asyncio.Future[Outcome] = asyncio.get_running_loop().create_future()
            join = _Join(
                id=uuid.uuid4().hex, reply=self.replica, key=key, expected=expected, member=astuple(member),
                wait_s=wait_s,
            )  # fmt: skip
            self._answers[join.id] = answer
            try:
                if (holder := await self._deliver(owner, join)) is not None:
                    return await self._answer(join, holder, answer, member)
            finally:
                self._answers.pop(join.id, None)
        return await self.assembler.join(key, expected, member, wait_s)

    async def withdraw(self, key: str, expected: int, samples: int) -> None:
        owner = await self._claims((key, expected))
        withdrawal = _Withdraw(key=key, expected=expected, samples=samples)
        if owner == self.replica or await self._deliver(owner, withdrawal) is None:
            self.assembler.withdraw(key, expected, samples)

    async def _answer(self, join: _Join, holder: str, answer: asyncio.Future[Outcome], member: Member) -> Outcome:
        """The outcome `holder` sends back for `join`."""
        try:
            return await asyncio.wait_for(asyncio.shield(answer), self.assembler.bound(join.wait_s) + ANSWER_MARGIN_S)
        except TimeoutError:
            self._failures.failed(
                "no_answer", TimeoutError(f"replica {holder} holding group {join.key} did not answer")
            )
            # The group as this replica knows it, at once: what the owner holds is out of reach.
            return await self.assembler.join(join.key, join.expected, member, wait_s=0)
        except asyncio.CancelledError:  # the request went away: the holder counts the sample gone
            self._in_background(self._publish(holder, _Cancel(id=join.id)))
            raise

    async def _deliver(self, owner: str, message: _Join | _Withdraw) -> str | None:
        """Send `message` to the group's owner, or to whoever takes over from an owner that no longer listens: the
        replica that got it, or None when this replica holds the group (it took it over, or Redis failed)."""
        for _ in range(2):  # the owner, then the replica that took over from it (this one or another)
            listeners = await self._publish(owner, message)
            if listeners:
                self._metrics.group_relayed.labels("sent").inc()
                return owner
            if listeners is None:
                return None
            owner = await self._take_over(message.key, message.expected, owner)
            if owner == self.replica:
                return None
        return None

    async def _take_over(self, key: str, expected: int, gone: str) -> str:
        self._metrics.group_relay_errors.labels("owner_gone").inc()
        log.warning("group %s: its owner replica %s no longer listens; taken over", key, gone)
        try:
            owner = await self._take_over_script(
                keys=[_owner_key(key, expected)], args=[gone, self.replica, self._owner_ttl_ms]
            )
        except Exception as exc:
            self._failures.failed("take_over", exc, rest=True)
            return self.replica
        return owner.decode()

    async def _claim_many(self, groups: list[tuple[str, int]]) -> list[str]:
        if self._failures.resting:
            return [self.replica] * len(groups)
        try:
            async with self._redis.pipeline(transaction=False) as pipe:
                for key, expected in groups:
                    await self._claim_script(
                        keys=[_owner_key(key, expected)], args=[self.replica, self._owner_ttl_ms], client=pipe
                    )
                owners = await pipe.execute()
        except Exception as exc:  # the groups stay on this replica meanwhile
            self._failures.failed("claim", exc, rest=True)
            return [self.replica] * len(groups)
        self._failures.answered()
        return [owner.decode() for owner in owners]

    async def _publish(self, replica: str, message: BaseModel) -> int | None:
        """How many listened on `replica`'s channel; None: Redis failed."""
        return await self._publishes((_channel(replica), message.model_dump_json()))

    async def _publish_many(self, messages: list[tuple[str, str]]) -> list[int | None]:
        if self._failures.resting:
            return [None] * len(messages)
        try:
            async with self._redis.pipeline(transaction=False) as pipe:
                for channel, payload in messages:
                    pipe.publish(channel, payload)
                return await pipe.execute()
        except Exception as exc:
            self._failures.failed("publish", exc, rest=True)
            return [None] * len(messages)

    async def _listen(self, subscribed: asyncio.Future[None]) -> None:
        while True:
            try:
                async with self._listener_redis.pubsub(ignore_subscribe_messages=True) as pubsub:
                    await pubsub.subscribe(_channel(self.replica))
                    if not subscribed.done():
                        subscribed.set_result(None)
                    async for message in pubsub.listen():
                        if message["type"] == "message":
                            self._received(message["data"])
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # subscribed again after a pause; senders take its groups over meanwhile
                self._failures.failed("listen", exc)
                await asyncio.sleep(RETRY_AFTER_S)

    def _received(self, raw: bytes) -> None:
        try:
            message = _MESSAGE.validate_json(raw)
        except ValidationError as exc:
            self._failures.failed("decode", exc)
            return
        if isinstance(message, _Join):
            self._metrics.group_relayed.labels("served").inc()
            task = self._serving[message.id] = asyncio.create_task(self._serve(message))
            task.add_done_callback(lambda _: self._serving.pop(message.id, None))
        elif isinstance(message, _Cancel):
            if (task := self._serving.get(message.id)) is not None:
                task.cancel()
        elif isinstance(message, _Withdraw):
            self.assembler.withdraw(message.key, message.expected, message.samples)
        elif (answer := self._answers.get(message.id)) is not None and not answer.done():
            answer.set_result(Outcome(message.value, message.members, message.expected, message.formed))

    async def _serve(self, join: _Join) -> None:
        outcome = await self.assembler.join(join.key, join.expected, Member(*join.member), join.wait_s)
        answer = _Answer(id=join.id, value=outcome.value, members=outcome.members, expected=outcome.expected,
                         formed=outcome.formed)  # fmt: skip
        await self._publish(join.reply, answer)

    def _in_background(self, work: Coroutine[object, object, object]) -> None:
        task = asyncio.create_task(work)
        self._background.add(task)
        task.add_done_callback(self._background.discard)


def _owner_key(key: str, expected: int) -> str:
    return f"{PREFIX}owner:{key}:{expected}"


def _channel(replica: str) -> str:
    return f"{PREFIX}replica:{replica}"
