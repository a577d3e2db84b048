"""The front's fast path: cheap items go to the worker pool in chunks (WorkerPool.call_many), each call keeping its
own deadline, fault handling and stepping aside; the service answers them exactly as one by one."""

from __future__ import annotations

import asyncio
import operator
import pickle
import time
from typing import Any

import httpx
import pytest

from reward_api.config import Config
from reward_api.engine import RewardEngine
from reward_api.grading import TextGrades
from reward_api.local import LocalServer
from reward_api.pool import CallOutcome, WorkerPool
from reward_api.profiles import resolve_profile
from tests import pool_jobs
from tests.test_pool import until_full, with_pool

# A chunk runs one function: operator.call, each call naming its job (a module-level function of a module that
# imports fast: a worker imports it, within the call's deadline, on a loaded machine too).
run_job = operator.call


def test_a_chunk_answers_each_call_in_order() -> None:
    async def body(pool: WorkerPool):
        return await pool.call_many(run_job, [(pool_jobs.add, i, 1) for i in range(50)])

    outcomes, restarts = asyncio.run(with_pool(body))
    assert [o.status for o in outcomes] == ["ok"] * 50
    assert [o.value for o in outcomes] == list(range(1, 51))
    assert [pickle.loads(o.pickled) for o in outcomes] == list(range(1, 51))  # the bytes each came in
    assert restarts == []


@pytest.mark.parametrize(
    ("job", "deadline_s", "status", "error_part", "restarts"),
    [
        (pool_jobs.spin_forever, 1.0, "timeout", "deadline", []),
        (pool_jobs.hang_where_no_alarm_reaches, 1.0, "timeout", "killed", ["deadline"]),
        (pool_jobs.crash, 10.0, "error", "exit code 3", ["crash", "crash"]),  # retried once, then reported
        (pool_jobs.raise_value_error, 10.0, "error", "ValueError: bad input", []),
        (pool_jobs.allocate_without_bound, 10.0, "error", "out of memory", ["memory"]),
    ],
)
def test_a_fault_in_a_chunk_is_its_own_call_s_and_the_calls_after_it_are_graded(
    job, deadline_s, status, error_part, restarts
) -> None:
    async def body(pool: WorkerPool):
        calls = [(pool_jobs.add, 1, 1), (pool_jobs.add, 2, 2), (job,), *((pool_jobs.add, i, 10) for i in range(5))]
        outcomes = await pool.call_many(run_job, calls)
        return outcomes, await until_full(pool)

    expected_restarts = restarts
    (outcomes, alive), restarts = asyncio.run(with_pool(body, deadline_s=deadline_s, slow_after_s=10))
    fault = outcomes[2]
    assert fault.status == status and error_part in fault.error
    assert fault.seconds < deadline_s + 3.0
    rest = outcomes[:2] + outcomes[3:]
    assert [o.value for o in rest] == [2, 4, *range(10, 15)] and {o.status for o in rest} == {"ok"}
    assert restarts == expected_restarts
    assert alive == 2


def test_the_calls_after_a_slow_one_do_not_wait_for_it() -> None:
    """One worker: the spinning call steps aside, and the calls queued behind it in its chunk go to its replacement."""

    async def body(pool: WorkerPool):
        return await pool.call_many(run_job, [(pool_jobs.spin_then_report_niceness, 2.0), *[(time.monotonic,)] * 5])

    outcomes, _ = asyncio.run(with_pool(body, size=1, deadline_s=10, slow_after_s=0.2))
    slow, quick = outcomes[0], outcomes[1:]
    assert slow.status == "ok" and slow.value > 0  # ran at a lower priority once aside
    assert {o.status for o in quick} == {"ok"}
    assert max(o.value for o in quick) - min(o.value for o in quick) < 1.0
    assert max(o.queued_seconds for o in quick) < 1.5  # not the 2 s the slow one spins


def test_a_cancelled_chunk_gives_its_worker_back() -> None:
    async def body(pool: WorkerPool):
        chunk = asyncio.ensure_future(pool.call_many(run_job, [(pool_jobs.spin_forever,), (pool_jobs.add, 1, 1)]))
        await asyncio.sleep(0.3)
        chunk.cancel()
        with pytest.raises(asyncio.CancelledError):
            await chunk
        return await until_full(pool), (await pool.call(pool_jobs.add, 2, 2)).value

    (alive, value), restarts = asyncio.run(with_pool(body, deadline_s=30, slow_after_s=10))
    assert (alive, value) == (2, 4)
    assert restarts == ["cancelled"]


def cheap(i: int) -> dict[str, Any]:
    return {"id": i, "task": "math", "completion": f"\\boxed{{{i}}}", "reference": str(i)}


async def with_engine(body, **settings: Any):
    """An engine with one normal worker whose chunked pool calls are counted (which items went to a worker);
    `settings` override its Config (the cache is off unless they say).

    A pool test before it may have started this process's forkserver without the graders preloaded: then each
    worker imports them itself, which takes seconds on a loaded machine and more than the default worker memory
    limit allows. Hence a long deadline, no limit, and no stepping aside (nor cut) for a worker still importing."""
    defaults = {
        "workers": 1, "cache_entries": 0, "heavy_workers": 0, "code_workers": 0, "item_deadline_s": 60,
        "worker_memory_mb": 0, "slow_after_s": 30,
    }  # fmt: skip
    config = Config.from_env({}, **defaults | settings)
    engine = RewardEngine(config)
    await engine.start()
    sent: list[str] = []
    call_many = engine.pool.call_many

    async def counted(func, calls, *args, **kwargs):
        sent.extend(job.completion for (job,) in calls)
        return await call_many(func, calls, *args, **kwargs)

    engine.pool.call_many = counted  # type: ignore[method-assign]
    try:
        return await body(engine), sent
    finally:
        await engine.close()


def test_identical_items_in_flight_share_one_worker_call_across_requests() -> None:
    profile = resolve_profile("accuracy")

    async def body(engine: RewardEngine):
        return await asyncio.gather(
            engine.grade([cheap(i) for i in range(40)], profile),
            engine.grade([cheap(i) for i in range(20, 60)], profile),
        )

    (first, second), sent = asyncio.run(with_engine(body))
    assert [r.reward for r in first + second] == [1.0] * 80, [r.details for r in first + second if r.reward != 1.0][:2]
    assert sorted(sent) == sorted(f"\\boxed{{{i}}}" for i in range(60))  # items 20-39 were graded once


def test_a_request_that_goes_stops_its_own_chunks_but_not_the_items_another_request_shares() -> None:
    profile = resolve_profile("accuracy")

    async def body(engine: RewardEngine):
        other = {"task": "math", "completion": "\\boxed{1}", "reference": "1"}
        gone = asyncio.ensure_future(engine.grade([cheap(i) for i in range(2000)], profile))
        await asyncio.sleep(0)  # its chunks are sent
        staying = asyncio.ensure_future(engine.grade([cheap(1999), other], profile))
        await asyncio.sleep(0.02)
        gone.cancel()
        with pytest.raises(asyncio.CancelledError):
            await gone
        return await staying, await engine.grade([cheap(1500)], profile)

    (staying, again), _ = asyncio.run(with_engine(body))
    assert [r.status for r in staying] == ["ok", "ok"] and staying[0].reward == 1.0
    assert again[0].status == "ok" and again[0].reward == 1.0  # a cancelled item is graded anew, not left waiting


def test_the_cache_keeps_the_worker_s_bytes_and_never_a_failed_call() -> None:
    """An `ok` answer is kept as the bytes its worker pickled it to (not pickled again) and a repeat is an equal
    answer from the cache; a call that failed is not kept: its item goes to a worker again."""
    profile = resolve_profile("accuracy")
    kept: list[tuple[TextGrades, bytes | None]] = []

    async def body(engine: RewardEngine):
        put, call_many = engine.cache.lru.put, engine.pool.call_many

        def keep(key: bytes, value: TextGrades, pickled: bytes | None = None) -> None:
            kept.append((value, pickled))
            put(key, value, pickled)

        async def second_fails(func, calls, *args, **kwargs):
            outcomes = await call_many(func, calls, *args, **kwargs)
            return [CallOutcome("error", error="lost") if job.completion == "\\boxed{2}" else outcome
                    for (job,), outcome in zip(calls, outcomes, strict=True)]  # fmt: skip

        engine.cache.lru.put = keep  # type: ignore[method-assign]
        engine.pool.call_many = second_fails  # type: ignore[method-assign]
        first = await engine.grade([cheap(1), cheap(2)], profile)
        kept_first = len(kept)
        engine.pool.call_many = call_many  # type: ignore[method-assign]
        return first, kept_first, await engine.grade([cheap(1), cheap(2)], profile)

    (first, kept_first, again), sent = asyncio.run(with_engine(body, cache_entries=100))
    assert [r.status for r in first] == ["ok", "error"] and first[1].details["reason"] == "lost"
    assert kept_first == 1  # the failed call's item was not kept
    value, pickled = kept[0]
    assert pickled is not None and pickle.loads(pickled) == value
    assert [r.status for r in again] == ["ok", "ok"] and again[0].details.get("cached") is True
    assert (again[0].reward, again[0].components) == (first[0].reward, first[0].components)
    assert again[0].details["accuracy"] == first[0].details["accuracy"]
    assert sent == ["\\boxed{1}", "\\boxed{2}", "\\boxed{2}"]  # the failed item went to a worker again


@pytest.fixture(scope="module")
def server():
    with LocalServer(REWARD_API_WORKERS="2", REWARD_API_CACHE_ENTRIES="0", REWARD_API_LOG_LEVEL="warning") as running:
        yield running


def test_a_batch_mixing_cheap_costly_repeated_and_bad_items_is_answered_in_order(server: LocalServer) -> None:
    cheap = [{"id": i, "task": "math", "completion": f"\\boxed{{{i}}}", "reference": str(i % 7)} for i in range(100)]
    items: list[Any] = [
        *cheap,
        {"id": "costly", "task": "math", "completion": "\\boxed{\\int_0^1 x dx}", "reference": "\\frac{1}{2}"},
        {"id": "again", "task": "math", "completion": "\\boxed{3}", "reference": "3"},
        {"id": "again2", "task": "math", "completion": "\\boxed{3}", "reference": "3"},  # shares the call above
        {"id": "no-task", "completion": "\\boxed{3}"},
        {"id": "unknown", "task": "nope", "completion": "x"},
        "not an object",
    ]
    results = httpx.post(f"{server.url}/v1/rewards", json={"items": items}, timeout=60).json()["results"]
    assert [r["id"] for r in results] == [*range(100), "costly", "again", "again2", "no-task", "unknown", None]
    assert [r["reward"] for r in results[:100]] == [float(i % 7 == i) for i in range(100)]
    assert [r["status"] for r in results[100:]] == ["ok", "ok", "ok", "invalid", "invalid", "invalid"]
    assert [r["reward"] for r in results[100:103]] == [1.0, 1.0, 1.0]
    assert results[103]["details"]["reason"].startswith("items[103].task")
