"""Groups split between replicas meet at one through a real `redis-server` (reward_api/group_relay.py).

Each "replica" here is a GroupRelay over a GroupAssembler of its own, in one event loop: the relay's logic without
HTTP. Every case compares with one assembler that got the whole group (tests/test_groups.py proves that one).
The frameworks' own calling code against replicas is in tests/frameworks/openrlhf/test_groups_across_replicas.py.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any

import pytest

from reward_api.group_relay import GroupRelay
from reward_api.groups import GroupAssembler, Outcome
from reward_api.metrics import Metrics
from tests.redis_process import RedisProcess
from tests.test_groups import kimi, run, sample


@pytest.fixture
def redis_server() -> Iterator[RedisProcess]:
    with RedisProcess() as server:
        yield server


@asynccontextmanager
async def relays(url: str, count: int = 2, wait_s: float = 30) -> Any:
    async with AsyncExitStack() as stack:
        started = []
        for _ in range(count):
            relay = GroupRelay(GroupAssembler(wait_s=wait_s, component=kimi), url, Metrics())
            await relay.start()
            stack.push_async_callback(relay.close)
            started.append(relay)
        yield started


def relayed(relay: GroupRelay, direction: str) -> float:
    return relay._metrics.group_relayed.labels(direction)._value.get()


def errors(relay: GroupRelay, op: str) -> float:
    return relay._metrics.group_relay_errors.labels(op)._value.get()


def one_assembler(lengths: list[int]) -> list[Outcome]:
    async def scenario() -> list[Outcome]:
        assembler = GroupAssembler(wait_s=30, component=kimi)
        return list(await asyncio.gather(*(assembler.join("g", len(lengths), sample(n)) for n in lengths)))

    return run(scenario())


def test_a_group_dealt_out_in_turn_is_answered_as_one_replica_answers_it(redis_server: RedisProcess) -> None:
    lengths = [10, 20, 30, 40, 50, 60]

    async def scenario() -> tuple[list[Outcome], list[GroupRelay]]:
        async with relays(redis_server.url, count=3) as replicas:
            joins = [replicas[i % 3].join("g", len(lengths), sample(n)) for i, n in enumerate(lengths)]
            return list(await asyncio.gather(*joins)), replicas

    outcomes, replicas = run(scenario())
    assert outcomes == one_assembler(lengths)
    assert all(o.formed == "group_size" for o in outcomes)
    assert sum(relayed(r, "sent") for r in replicas) == 4  # two of the six samples reached the owner itself
    assert sum(relayed(r, "served") for r in replicas) == 4


def test_a_sample_whose_request_went_away_is_one_member_when_retried_elsewhere(redis_server: RedisProcess) -> None:
    """A disconnect at a replica that is not the owner, then a retry at a third: not two members."""

    async def scenario() -> list[Outcome]:
        async with relays(redis_server.url, count=3) as (owner, other, third):
            first = asyncio.ensure_future(owner.join("g", 3, sample(10)))
            await asyncio.sleep(0.2)
            lost = asyncio.ensure_future(other.join("g", 3, sample(20)))
            await asyncio.sleep(0.2)
            lost.cancel()  # the trainer's HTTP client gave up; the owner holds the sample as gone
            await asyncio.sleep(0.2)
            retried, last = third.join("g", 3, sample(20)), third.join("g", 3, sample(30))
            return list(await asyncio.gather(first, retried, last))

    outcomes = run(scenario())
    assert [(o.members, o.formed) for o in outcomes] == [(3, "group_size")] * 3
    assert outcomes == one_assembler([10, 20, 30])


def test_a_withdrawal_sent_to_another_replica_completes_the_group_at_the_owner(redis_server: RedisProcess) -> None:
    async def scenario() -> tuple[list[Outcome], float]:
        async with relays(redis_server.url) as (owner, other):
            graded = [asyncio.ensure_future(owner.join("g", 4, sample(n))) for n in (10, 30)]
            await asyncio.sleep(0.2)
            started = time.monotonic()
            await other.withdraw("g", 4, samples=2)
            return list(await asyncio.gather(*graded)), time.monotonic() - started

    outcomes, waited = run(scenario())
    assert [(o.value, o.members, o.formed) for o in outcomes] == [(0.5, 2, "partial"), (-0.5, 2, "partial")]
    assert waited < 5  # at once, not after the 30 s wait


def test_an_owner_that_no_longer_listens_is_taken_over(redis_server: RedisProcess) -> None:
    """The owner replica died after its sample: the others take the group over and end it partial, never hang."""

    async def scenario() -> tuple[list[Outcome], list[GroupRelay]]:
        async with relays(redis_server.url, count=3, wait_s=2) as (owner, *others):
            await owner.join("g", 3, sample(10), wait_s=0)  # its group claimed; the sample answered, then it dies
            await owner.close()
            outcomes = await asyncio.gather(others[0].join("g", 3, sample(20)), others[1].join("g", 3, sample(30)))
            return list(outcomes), others

    outcomes, others = run(scenario())
    assert [(o.members, o.expected, o.formed) for o in outcomes] == [(2, 3, "partial")] * 2
    assert outcomes == run(partial_of([20, 30], 3))
    assert sum(errors(relay, "owner_gone") for relay in others) >= 1


async def partial_of(lengths: list[int], expected: int) -> list[Outcome]:
    assembler = GroupAssembler(wait_s=30, component=kimi)
    joins = [asyncio.ensure_future(assembler.join("g", expected, sample(n), wait_s=1)) for n in lengths]
    return list(await asyncio.gather(*joins))


def test_without_redis_each_replica_keeps_its_groups_and_never_waits_on_it(redis_server: RedisProcess) -> None:
    lengths = [10, 20, 30]

    async def scenario() -> tuple[list[Outcome], list[Outcome], float, GroupRelay]:
        async with relays(redis_server.url, wait_s=1) as (first, second):
            redis_server.kill()
            started = time.monotonic()
            whole = await asyncio.gather(*(first.join("g", 3, sample(n)) for n in lengths))
            took = time.monotonic() - started
            split = await asyncio.gather(first.join("h", 2, sample(10)), second.join("h", 2, sample(20)))
            return list(whole), list(split), took, first

    whole, split, took, first = run(scenario())
    assert whole == one_assembler(lengths) and took < 1  # a group on one replica: answered when whole, at once
    assert [(o.members, o.formed) for o in split] == [(1, "partial")] * 2  # split: each part after the wait
    assert errors(first, "claim") >= 1
