"""The worker pool: deadlines enforced from outside, crashes and hangs replaced, errors reported."""

from __future__ import annotations

import asyncio
import time

import pytest

from reward_api.pool import WorkerPool
from tests import pool_jobs


def run(coro):
    return asyncio.run(coro)


async def with_pool(body, size: int = 2, deadline_s: float = 1.0, memory_mb: int = 512):
    restarts: list[str] = []
    pool = WorkerPool(size, deadline_s, memory_mb=memory_mb, on_restart=restarts.append)
    await pool.start()
    try:
        return await body(pool), restarts
    finally:
        await pool.close()


async def until_full(pool: WorkerPool) -> int:
    """Replacements start in the background; give them time to come up."""
    for _ in range(100):
        if pool.alive == pool.size:
            break
        await asyncio.sleep(0.1)
    return pool.alive


@pytest.mark.parametrize(
    ("job", "status", "error_part", "restart"),
    [
        (pool_jobs.spin_forever, "timeout", "deadline", None),
        (pool_jobs.hang_where_no_alarm_reaches, "timeout", "killed", "deadline"),
        (pool_jobs.crash, "error", "exit code 3", "crash"),
        (pool_jobs.raise_value_error, "error", "ValueError: bad input", None),
        (pool_jobs.allocate_without_bound, "error", "out of memory", None),
    ],
)
def test_faults_are_reported_per_call_and_the_pool_recovers(job, status, error_part, restart) -> None:
    async def body(pool: WorkerPool):
        started = time.monotonic()
        outcome = await pool.call(job)
        elapsed = time.monotonic() - started
        after = await asyncio.gather(*(pool.call(pool_jobs.add, i, 1) for i in range(6)))
        return outcome, elapsed, after, await until_full(pool)

    (outcome, elapsed, after, alive), restarts = run(with_pool(body))
    assert outcome.status == status
    assert error_part in outcome.error
    assert elapsed < 1.0 + 2.0  # the deadline, plus generous scheduling slack
    assert [o.value for o in after] == [1, 2, 3, 4, 5, 6]
    assert restarts == ([restart] if restart else [])
    assert alive == 2


def test_a_hung_call_does_not_block_the_other_worker() -> None:
    async def body(pool: WorkerPool):
        hung = asyncio.ensure_future(pool.call(pool_jobs.hang_where_no_alarm_reaches))
        await asyncio.sleep(0.05)
        started = time.monotonic()
        quick = [await pool.call(pool_jobs.add, 1, 1) for _ in range(20)]
        quick_elapsed = time.monotonic() - started
        return (await hung).status, quick, quick_elapsed

    (hung_status, quick, quick_elapsed), _ = run(with_pool(body, deadline_s=2.0))
    assert hung_status == "timeout"
    assert all(o.value == 2 for o in quick)
    assert quick_elapsed < 2.0  # the hang (2 s deadline) is not waited for


def test_replaced_workers_are_new_processes() -> None:
    async def body(pool: WorkerPool):
        before = {(await pool.call(pool_jobs.pid)).value for _ in range(4)}
        await pool.call(pool_jobs.crash)
        await asyncio.sleep(0.5)
        after = {(await pool.call(pool_jobs.pid)).value for _ in range(8)}
        return before, after

    (before, after), restarts = run(with_pool(body, size=1))
    assert len(before) == 1 and len(after) == 1 and before != after
    assert restarts == ["crash"]


def test_pool_size_must_be_positive() -> None:
    with pytest.raises(ValueError, match="pool size"):
        WorkerPool(0, 1.0)
