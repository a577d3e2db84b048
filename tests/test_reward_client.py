"""RewardClient against the real reward service on loopback."""

from __future__ import annotations

import asyncio
import re
import signal
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from reward_api.local import LocalServer, free_port
from tests.peers import dropping_peer
from trainer_client import RewardClient, RewardServiceError, SyncRewardClient


def math_items(n: int, offset: int = 0) -> list[dict]:
    """Every third answer is wrong, so order mistakes show."""
    return [
        {"id": i, "task": "math", "completion": f"\\boxed{{{i if i % 3 else -1}}}", "reference": str(i)}
        for i in range(offset, offset + n)
    ]


def expected_rewards(n: int, offset: int = 0) -> list[float]:
    return [0.0 if i % 3 == 0 else 1.0 for i in range(offset, offset + n)]


def request_count(server: LocalServer) -> float:
    text = httpx.get(f"{server.url}/metrics").text
    found = re.search(r'^reward_requests_total\{code="200",endpoint="/v1/rewards"\} (\S+)$', text, re.M)
    return float(found.group(1)) if found else 0.0


def test_results_come_back_in_order_across_batches(server: LocalServer) -> None:
    async def run() -> list:
        async with RewardClient(server.url, batch_size=7, max_concurrency=3) as client:
            return await client.grade(math_items(50))

    before = request_count(server)
    results = asyncio.run(run())
    assert [r.id for r in results] == list(range(50))
    assert [r.reward for r in results] == expected_rewards(50)
    assert request_count(server) - before == 8  # ceil(50 / 7) batches


def test_submit_overlaps_with_other_work_and_profiles_apply(server: LocalServer) -> None:
    async def run() -> tuple[list, list]:
        async with RewardClient(server.url, profile="dapo") as client:
            first = client.submit(math_items(10))
            second = client.submit(math_items(10, offset=10))
            await asyncio.sleep(0)  # the generator would be sampling the next group here
            return await first, await second

    first, second = asyncio.run(run())
    assert [r.reward for r in first + second] == [2 * r - 1 for r in expected_rewards(20)]
    assert set(first[0].components) == {"accuracy", "overlong"}


def test_fails_over_to_a_live_url(server: LocalServer) -> None:
    dead = f"http://127.0.0.1:{free_port()}"

    async def run() -> list[float]:
        async with RewardClient([dead, server.url], backoff_s=0.01) as client:
            return [await client.rewards(math_items(3)) for _ in range(4)]

    assert asyncio.run(run()) == [expected_rewards(3)] * 4


def test_raises_when_no_service_answers() -> None:
    dead = [f"http://127.0.0.1:{free_port()}" for _ in range(2)]

    async def run() -> None:
        async with RewardClient(dead, retries=2, backoff_s=0.01) as client:
            await client.grade(math_items(2))

    with pytest.raises(RewardServiceError, match="no reward service answered after 3 attempts"):
        asyncio.run(run())


def test_a_refused_batch_raises_with_the_services_reason(server: LocalServer) -> None:
    async def run() -> None:
        async with RewardClient(server.url, profile="no-such-profile") as client:
            await client.grade(math_items(1))

    with pytest.raises(RewardServiceError, match=r"422.*unknown profile 'no-such-profile'"):
        asyncio.run(run())


def test_timeouts_are_retried_then_raised(server: LocalServer) -> None:
    slow = [{"task": "math", "completion": "\\boxed{(x+1)^{100000}}" + " " * i, "reference": "1"} for i in range(40)]

    async def run() -> None:
        async with RewardClient(server.url, timeout_s=0.001, retries=1, backoff_s=0.01) as client:
            await client.grade(slow)

    with pytest.raises(RewardServiceError, match="Timeout"):
        asyncio.run(run())


def test_sync_client(server: LocalServer) -> None:
    with SyncRewardClient(server.url, batch_size=4) as client:
        pending = client.submit(math_items(9))
        assert client.rewards(math_items(5, offset=9)) == expected_rewards(5, offset=9)
        assert [r.reward for r in pending.result(timeout=60)] == expected_rewards(9)


@pytest.mark.parametrize(("kwargs", "message"), [({"urls": []}, "at least one"), ({"batch_size": 0}, ">= 1")])
def test_bad_configuration_is_refused(kwargs: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        RewardClient(**({"urls": "http://x"} | kwargs))


@pytest.fixture(scope="module")
def second_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalServer]:
    with LocalServer(tmp_path_factory.mktemp("second"), REWARD_API_WORKERS="1") as srv:
        yield srv


def test_a_dropping_replica_is_left_out_after_its_first_failure(server: LocalServer) -> None:
    async def run(dropping: str) -> list[list[float]]:
        async with RewardClient([dropping, server.url], backoff_s=0.01, down_for_s=60) as client:
            return [await client.rewards(math_items(2, offset=2 * i)) for i in range(12)]

    with dropping_peer() as (url, accepted):
        rewards = asyncio.run(run(url))
    assert rewards == [expected_rewards(2, offset=2 * i) for i in range(12)]
    assert accepted[0] == 1  # tried once, then left out for down_for_s


def test_batches_go_to_the_least_busy_replica(server: LocalServer, second_server: LocalServer) -> None:
    async def run() -> list:
        async with RewardClient([server.url, second_server.url], batch_size=5, max_concurrency=4) as client:
            return await client.grade(math_items(80, offset=5000))  # not in either replica's cache

    before = [request_count(server), request_count(second_server)]
    results = asyncio.run(run())
    assert [r.reward for r in results] == expected_rewards(80, offset=5000)
    sent = [request_count(server) - before[0], request_count(second_server) - before[1]]
    # Both took a share of the 16 batches; the faster one (2 workers, not 1) may take more.
    assert sum(sent) == 16 and min(sent) >= 2, sent


def test_a_replica_killed_mid_run_loses_no_item(server: LocalServer, tmp_path: Path) -> None:
    items = math_items(300)
    with LocalServer(tmp_path, REWARD_API_WORKERS="1") as doomed:

        async def run() -> list:
            async with RewardClient([doomed.url, server.url], batch_size=10, max_concurrency=4) as client:
                pending = client.submit(items)
                while request_count(doomed) < 2:  # the doomed replica is working on this run
                    await asyncio.sleep(0.05)
                assert doomed.process is not None
                doomed.process.send_signal(signal.SIGKILL)
                return await pending

        results = asyncio.run(run())
    assert [r.id for r in results] == list(range(300))
    assert [r.reward for r in results] == expected_rewards(300)
    assert all(r.ok for r in results)
