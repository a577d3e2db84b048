"""The cache shared by replicas: two real replicas and a real `redis-server` on loopback.

An item graded on one replica is answered from Redis on the other; Redis stays within its byte bound
(it evicts); Redis hung or killed mid-run costs misses, never an item, and restarted empty it is bounded
and shared again; a Redis that refuses CONFIG and has no bound of its own stops the start. Answers travel
as JSON: its round trip is table-tested here.
"""

from __future__ import annotations

import asyncio
import logging
import math
import pickle
import random
import signal
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from pathlib import Path

import httpx
import pytest

from reward_api import __version__
from reward_api.cache import LRUCache
from reward_api.config import Config
from reward_api.graders.base import Score
from reward_api.grading import TextGrades, decode_grades, encode_grades
from reward_api.local import LocalServer, free_port
from reward_api.metrics import Metrics
from reward_api.shared_cache import SharedCache, namespace
from tests.redis_process import RedisProcess
from tests.scrape import metric

BOUND_MB = 4
BOUND_BYTES = BOUND_MB * 1024 * 1024
SORTED_N = 128  # numbers per sort item: its echo in the answer is ~2.5 KB, the most details keep


@pytest.fixture(scope="module")
def redis_server() -> Iterator[RedisProcess]:
    with RedisProcess() as server:
        yield server


@pytest.fixture(scope="module")
def replicas(redis_server: RedisProcess, tmp_path_factory: pytest.TempPathFactory) -> Iterator[list[LocalServer]]:
    """Two replicas of one worker each, sharing `redis_server`."""
    env = {
        "REWARD_API_WORKERS": "1",
        "REWARD_API_HEAVY_WORKERS": "0",
        "REWARD_API_CACHE_REDIS_URL": redis_server.url,
        "REWARD_API_CACHE_REDIS_MB": str(BOUND_MB),
    }
    logs = tmp_path_factory.mktemp("replicas")
    with ExitStack() as stack:
        yield [stack.enter_context(LocalServer(logs, **env)) for _ in range(2)]


def sort_item(seed: int, right: bool = True, n: int = 8) -> dict:
    """A sort item of its own (seeded numbers); answered sorted, or reversed (a known partial reward)."""
    numbers = random.Random(seed).sample(range(10**17, 10**18), n)
    answer = sorted(numbers, reverse=not right)
    return {"id": seed, "task": "sort", "completion": " ".join(map(str, answer)), "reference": numbers}


def expected_reward(item: dict) -> float:
    """Sorted: 1. Reversed (distinct numbers): every number included, no pair in order: n / (2n - 1)."""
    n = len(item["reference"])
    return 1.0 if item["completion"].split() == sorted(item["completion"].split(), key=int) else n / (2 * n - 1)


def grade(server: LocalServer, items: list[dict]) -> list[dict]:
    response = httpx.post(f"{server.url}/v1/rewards", json={"items": items}, timeout=60)
    response.raise_for_status()
    return response.json()["results"]


def assert_graded_right(items: list[dict], results: list[dict]) -> None:
    assert [r["id"] for r in results] == [item["id"] for item in items]
    for item, result in zip(items, results, strict=True):
        assert result["status"] == "ok", result
        assert result["reward"] == pytest.approx(expected_reward(item)), (item["id"], result)


def cache_errors(server: LocalServer) -> float:
    return metric(server, "reward_cache_errors_total")


def mget_calls(server: RedisProcess) -> int:
    with server.client() as client:
        return client.info("commandstats").get("cmdstat_mget", {}).get("calls", 0)


def test_an_item_graded_on_one_replica_is_answered_from_the_cache_on_the_other(
    replicas: list[LocalServer], redis_server: RedisProcess
) -> None:
    a, b = replicas
    items = [sort_item(seed, right=seed % 2 == 0) for seed in range(100, 120)]
    shared_hits = metric(b, "reward_cache_shared_hits_total")
    first = grade(a, items)
    mgets = mget_calls(redis_server)
    second = grade(b, items)
    assert mget_calls(redis_server) - mgets == 1  # the batch's keys in one round trip, not one per item
    assert_graded_right(items, first)
    assert all("cached" not in result["details"] for result in first)
    assert all(result["details"]["cached"] is True for result in second)
    assert [r["reward"] for r in second] == [r["reward"] for r in first]
    assert [r["components"] for r in second] == [r["components"] for r in first]
    assert metric(b, "reward_cache_shared_hits_total") - shared_hits == len(items)


def test_redis_stays_within_its_byte_bound_by_evicting(replicas: list[LocalServer], redis_server: RedisProcess) -> None:
    a, _ = replicas
    items = [sort_item(seed, n=SORTED_N) for seed in range(10_000, 13_000)]  # ~7.5 MB of answers
    for start in range(0, len(items), 500):
        assert_graded_right(items[start : start + 500], grade(a, items[start : start + 500]))
    with redis_server.client() as client:
        config = client.config_get("maxmemory*")
        memory = client.info("memory")
        evicted = client.info("stats")["evicted_keys"]
        kept = client.dbsize()
    assert int(config["maxmemory"]) == BOUND_BYTES
    assert config["maxmemory-policy"] == "allkeys-lru"
    assert memory["used_memory"] <= BOUND_BYTES * 1.05, memory["used_memory"]
    assert evicted > 0
    assert 0 < kept < len(items)


def test_a_hung_redis_is_a_miss_not_a_wait(replicas: list[LocalServer], redis_server: RedisProcess) -> None:
    a, b = replicas
    errors = cache_errors(a)
    items = [sort_item(seed, right=seed % 3 > 0) for seed in range(200, 260)]
    redis_server.signal(signal.SIGSTOP)
    try:
        started = time.monotonic()
        assert_graded_right(items, grade(a, items))
        assert time.monotonic() - started < 30  # not held up by a Redis that never answers
        assert cache_errors(a) > errors
    finally:
        redis_server.signal(signal.SIGCONT)
    wait_until_shared(a, b, seed=300)


def test_redis_killed_mid_run_costs_misses_not_items_and_is_used_again_restarted(
    replicas: list[LocalServer], redis_server: RedisProcess
) -> None:
    a, b = replicas
    errors = [cache_errors(a), cache_errors(b)]
    batches = [[sort_item(seed, right=seed % 3 > 0) for seed in range(1000 + 40 * i, 1040 + 40 * i)] for i in range(12)]
    with ThreadPoolExecutor(2) as pool:
        pending = [pool.submit(grade, replicas[i % 2], batch) for i, batch in enumerate(batches)]
        pending[1].result()
        redis_server.kill()
        answered = [future.result() for future in pending]
    for batch, results in zip(batches, answered, strict=True):
        assert_graded_right(batch, results)
    # Both replicas meet the dead Redis: each grades the items the other graded before (no shared answer now).
    assert_graded_right(batches[1], grade(a, batches[1]))
    assert_graded_right(batches[0], grade(b, batches[0]))
    assert cache_errors(a) > errors[0] and cache_errors(b) > errors[1]
    assert all(httpx.get(f"{server.url}/readyz", timeout=10).status_code == 200 for server in replicas)

    redis_server.start()  # the same port, empty, and with no maxmemory of its own
    wait_until_shared(a, b, seed=2000)
    with redis_server.client() as client:
        assert int(client.config_get("maxmemory")["maxmemory"]) == BOUND_BYTES  # bounded again on reconnect


def wait_until_shared(a: LocalServer, b: LocalServer, seed: int) -> None:
    """Redis is back in use (each replica tries it again a few seconds after a failure): an item graded on
    `a` comes from the cache on `b`. Fresh items each try, so no process LRU answers them."""
    deadline = time.monotonic() + 30
    while True:
        item = sort_item(seed)
        assert_graded_right([item], grade(a, [item]))
        if grade(b, [item])[0]["details"].get("cached"):
            return
        assert time.monotonic() < deadline, "the replicas did not use the shared cache again within 30 s"
        seed += 1
        time.sleep(0.5)


def test_a_redis_that_refuses_config_and_has_no_bound_stops_the_start(tmp_path: Path) -> None:
    with RedisProcess("--rename-command", "CONFIG", "") as server:
        replica = LocalServer(tmp_path, 60, REWARD_API_WORKERS="1", REWARD_API_CACHE_REDIS_URL=server.url)
        with pytest.raises(RuntimeError, match="exited") as failed:
            replica.start()
    message = str(failed.value)
    assert f"REWARD_API_CACHE_REDIS_URL={server.url}" in message
    assert "refuses CONFIG SET" in message and "`maxmemory-policy allkeys-lru`" in message


def shared_cache(url: str, metrics: Metrics) -> SharedCache:
    config = Config(cache_redis_url=url, cache_redis_mb=BOUND_MB)
    return SharedCache(LRUCache(100, 1 << 20), config, metrics, encode_grades, decode_grades)


def test_a_managed_redis_with_its_own_bound_is_accepted_and_big_answers_stay_local() -> None:
    """CONFIG refused, but maxmemory and an evicting policy already set: used as it is."""
    policy = ["--rename-command", "CONFIG", "", "--maxmemory", "8mb", "--maxmemory-policy", "allkeys-lfu"]
    small = TextGrades("ok", {"accuracy": Score(1.0, {"n": 3})})
    big = TextGrades("ok", {"accuracy": Score(0.5, {"echo": "x" * (BOUND_BYTES // 200)})})  # > 1/256 of the bound

    async def scenario(url: str) -> tuple[TextGrades | None, TextGrades | None]:
        writer, reader = shared_cache(url, Metrics()), shared_cache(url, Metrics())
        for cache in (writer, reader):
            await cache.start()
        await writer.put(b"small", small)
        await writer.put(b"big", big)
        try:
            return await reader.get(b"small"), await reader.get(b"big")
        finally:
            await writer.close()
            await reader.close()

    with RedisProcess(*policy) as server:
        assert asyncio.run(scenario(server.url)) == (small, None)
        with server.client() as client:
            [key] = client.keys()
            assert 0 < client.ttl(key) <= Config().cache_redis_ttl_s
    assert key == namespace(Config()) + b"small".hex().encode()


def test_stored_values_that_are_not_answers_are_misses_counted_and_logged_once(
    redis_server: RedisProcess, caplog: pytest.LogCaptureFixture
) -> None:
    """Whoever else writes to the shared Redis (a pickle of a real answer, garbage) gets a miss, not an answer."""
    metrics = Metrics()
    keys = [f"planted-{i}".encode() for i in range(50)]
    with redis_server.client() as client:
        for i, key in enumerate(keys):
            planted = pickle.dumps(TextGrades("ok", {"accuracy": Score(1.0)})) if i % 2 else b"{not json"
            client.set(namespace(Config()) + key.hex().encode(), planted, ex=60)

    async def scenario() -> list[TextGrades | None]:
        cache = shared_cache(redis_server.url, metrics)
        await cache.start()
        try:
            return await asyncio.gather(*(cache.get(key) for key in keys))
        finally:
            await cache.close()

    with caplog.at_level(logging.WARNING, logger="reward_api.shared_cache"):
        assert asyncio.run(scenario()) == [None] * len(keys)
    assert metrics.registry.get_sample_value("reward_cache_errors_total", {"op": "decode"}) == len(keys)
    assert len(caplog.records) == 1 and "decode failed" in caplog.records[0].getMessage()


def test_service_versions_and_deadlines_that_decide_grades_get_namespaces_of_their_own() -> None:
    assert namespace(Config()).startswith(f"reward-api:{__version__}:".encode())
    assert namespace(Config()) == namespace(Config(cache_mb=1, workers=3))  # settings that decide no grade
    assert namespace(Config(item_deadline_s=3)) != namespace(Config())  # a remembered timeout depends on it


def test_a_redis_not_there_at_start_is_a_miss_not_a_failed_start() -> None:
    metrics = Metrics()

    async def scenario() -> TextGrades | None:
        cache = shared_cache(f"redis://127.0.0.1:{free_port()}/0", metrics)
        await cache.start()
        try:
            return await cache.get(b"anything")
        finally:
            await cache.close()

    assert asyncio.run(scenario()) is None
    assert metrics.registry.get_sample_value("reward_cache_errors_total", {"op": "connect"}) == 1


GRADES = [
    TextGrades("ok", {"accuracy": Score(1.0, {"extracted": "\\frac{1}{2}", "gold": ["1/2", 0.5]})}),
    TextGrades("ok", {"accuracy": Score(0.25, {"response": [3, -1, 2**62], "metric": "distance"}), "format": Score(0)}),
    TextGrades("ok", {"language": Score(0.5, {"text": "中文 mélangé \ud800 alone", "nested": {"a": [[None]]}})}),
    TextGrades("ok", {"accuracy": Score(-math.inf, {"tests": [{"verdict": "wrong", "stdout": "x" * 2000}] * 3})}),
    TextGrades("invalid", reason="reference: no numbers to sort; give a list of ints"),
    TextGrades("timeout", reason="item took its whole 10s deadline (remembered)"),
]


@pytest.mark.parametrize("grades", GRADES)
def test_answers_round_trip_through_json(grades: TextGrades) -> None:
    raw = encode_grades(grades)
    assert raw.isascii() and not raw.startswith(b"\x80")  # JSON text, not a pickle
    assert decode_grades(raw) == grades


@pytest.mark.parametrize(
    "raw",
    [
        b"\x80\x04\x95 a pickle",
        b'{"status": "ok", "scores": {"accuracy": {"value": "high"}}}',
        b'{"status": "done", "scores": {}, "reason": null}',
        b'["ok", {}]',
    ],
)
def test_a_stored_value_that_is_not_an_answer_is_refused(raw: bytes) -> None:
    with pytest.raises(ValueError):
        decode_grades(raw)
