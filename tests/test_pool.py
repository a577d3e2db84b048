"""The worker pool: deadlines enforced from outside, crashes and hangs replaced, errors reported."""

from __future__ import annotations

import asyncio
import multiprocessing
import multiprocessing.connection
import os
import signal
import threading
import time

import pytest

from reward_api.pool import LOW_NICENESS, WorkerPool, start_worker_process, worker_exit_code
from tests import pool_jobs


def run(coro):
    return asyncio.run(coro)


async def with_pool(body, size: int = 2, deadline_s: float = 1.0, memory_mb: int = 512, **options):
    restarts: list[str] = []
    pool = WorkerPool(size, deadline_s, memory_mb=memory_mb, on_restart=restarts.append, **options)
    await pool.start()
    try:
        return await body(pool), restarts
    finally:
        await pool.close()


async def until_full(pool: WorkerPool) -> int:
    """Replacements start in the background; give them time to come up."""
    for _ in range(300):
        if pool.alive == pool.size:
            break
        await asyncio.sleep(0.1)
    return pool.alive


@pytest.mark.parametrize(
    ("job", "deadline_s", "status", "error_part", "restarts"),
    [
        (pool_jobs.spin_forever, 1.0, "timeout", "deadline", []),
        (pool_jobs.hang_where_no_alarm_reaches, 1.0, "timeout", "killed", ["deadline"]),
        (pool_jobs.crash, 10.0, "error", "exit code 3", ["crash", "crash"]),  # retried once, then reported
        (pool_jobs.raise_value_error, 10.0, "error", "ValueError: bad input", []),
        (pool_jobs.allocate_without_bound, 10.0, "error", "out of memory", ["memory"]),  # its heap stays grown
    ],
)
def test_faults_are_reported_per_call_and_the_pool_recovers(job, deadline_s, status, error_part, restarts) -> None:
    async def body(pool: WorkerPool):
        outcome = await pool.call(job)
        after = await asyncio.gather(*(pool.call(pool_jobs.add, i, 1) for i in range(6)))
        return outcome, after, await until_full(pool)

    expected_restarts = restarts
    (outcome, after, alive), restarts = run(with_pool(body, deadline_s=deadline_s, slow_after_s=10))
    assert outcome.status == status
    assert error_part in outcome.error
    assert outcome.seconds < deadline_s + 3.0  # the deadline, plus generous scheduling slack
    assert [o.value for o in after] == [1, 2, 3, 4, 5, 6]
    assert restarts == expected_restarts
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
    assert restarts == ["crash", "crash"]


def test_an_exit_code_is_read_whole_while_another_worker_starts() -> None:
    """multiprocessing polls every earlier child as it starts one (in a pool thread), and a poll racing the pool's
    own read split a crashed worker's exit status between them: the pool once reported exit code 255."""
    context = multiprocessing.get_context("forkserver")
    codes = []
    for _ in range(300):
        crashed = context.Process(target=os._exit, args=(3,))
        start_worker_process(crashed)
        multiprocessing.connection.wait([crashed.sentinel])  # reaped by the forkserver: its exit status waits
        another = context.Process(target=time.sleep, args=(0.2,))
        starting = threading.Thread(target=start_worker_process, args=(another,))
        starting.start()
        codes.append(worker_exit_code(crashed))
        starting.join()
    assert codes == [3] * 300


def test_pool_size_must_be_positive() -> None:
    with pytest.raises(ValueError, match="pool size"):
        WorkerPool(0, 1.0)


def test_a_worker_killed_from_outside_has_its_call_retried_on_a_fresh_worker(tmp_path) -> None:
    pids = tmp_path / "pids"

    async def body(pool: WorkerPool):
        call = asyncio.ensure_future(pool.call(pool_jobs.write_pid_then_sleep, str(pids), 1.0))
        while not pids.exists():
            await asyncio.sleep(0.02)
        os.kill(int(pids.read_text().split()[0]), signal.SIGKILL)
        return await call

    outcome, restarts = run(with_pool(body, deadline_s=10, slow_after_s=10))
    first, second = (int(pid) for pid in pids.read_text().split())
    assert outcome.status == "ok" and outcome.value == second != first
    assert restarts == ["crash"]


@pytest.mark.parametrize("heavy", [False, True])
def test_a_worker_killed_while_idle_is_replaced_before_a_call_needs_it(heavy: bool) -> None:
    """Seen from its exit, not from the next call it would get: until then /readyz counted a dead worker."""

    async def body(pool: WorkerPool):
        victim = (await pool.call(pool_jobs.pid, heavy=heavy)).value
        os.kill(victim, signal.SIGKILL)
        for _ in range(250):  # no call is made meanwhile
            if pool.restarts and pool.alive == 1:
                break
            await asyncio.sleep(0.02)
        replaced_unasked = pool.restarts
        return victim, replaced_unasked, (await pool.call(pool_jobs.pid, heavy=heavy)).value

    (victim, replaced_unasked, successor), restarts = run(with_pool(body, size=1, heavy_size=1))
    assert replaced_unasked == 1 and successor != victim
    assert restarts == ["crash"]  # its stale slot was skipped, not its death handled twice


def test_slow_calls_step_aside_and_run_at_low_priority() -> None:
    """One worker: without demotion the quick calls would queue behind the 1.5 s one."""

    async def body(pool: WorkerPool):
        slow = asyncio.ensure_future(pool.call(pool_jobs.spin_then_report_niceness, 2.0))
        for _ in range(50):  # past slow_after_s of CPU it is demoted, and a fresh worker takes its place
            if pool.slow:
                break
            await asyncio.sleep(0.05)
        demoted_now = pool.slow
        quick = [await pool.call(pool_jobs.add, i, 1) for i in range(10)]
        slow_done_before_quick = slow.done()
        return demoted_now, quick, slow_done_before_quick, await slow, await until_full(pool), pool.slow

    (demoted_now, quick, slow_done_first, slow, alive, demoted_after), restarts = run(
        with_pool(body, size=1, deadline_s=10, slow_after_s=0.2)
    )
    assert demoted_now == 1
    assert [o.value for o in quick] == list(range(1, 11)) and not slow_done_first
    assert slow.status == "ok" and slow.value == LOW_NICENESS
    assert alive == 1 and demoted_after == 0 and restarts == []


def test_past_the_cap_a_slow_call_is_cut_so_the_pool_keeps_flowing() -> None:
    async def body(pool: WorkerPool):
        aside = asyncio.ensure_future(pool.call(pool_jobs.spin_then_report_niceness, 2.0))
        while not pool.slow:  # demoted: the one slot for slow calls is taken
            await asyncio.sleep(0.05)
        cut = await pool.call(pool_jobs.spin_forever)
        quick = await pool.call(pool_jobs.add, 1, 1)
        return cut, quick.value, aside.done(), (await aside).status

    (cut, quick, aside_done, aside_status), restarts = run(
        with_pool(body, size=1, deadline_s=10, slow_after_s=0.2, max_slow=1)
    )
    assert cut.status == "timeout" and "saturated with slow items" in cut.error
    assert cut.seconds < 5  # cut near slow_after_s, long before its 10 s deadline
    assert quick == 2 and not aside_done and aside_status == "ok"
    assert restarts == []  # the cut worker answered its alarm and stayed


def test_work_in_child_processes_is_not_cut_but_waits_in_line() -> None:
    async def body(pool: WorkerPool):
        slow = asyncio.ensure_future(pool.call(pool_jobs.spin_then_report_niceness, 0.6, in_children=True))
        await asyncio.sleep(0.3)
        quick = await pool.call(pool_jobs.add, 1, 1)
        return slow.done(), quick.value, (await slow)

    (slow_done_before_quick, quick, slow), _ = run(with_pool(body, size=1, deadline_s=10, max_slow=0))
    assert slow_done_before_quick is True and quick == 2  # quick waited in line
    assert slow.status == "ok" and slow.value == 0  # never reniced


def test_the_wait_for_a_free_worker_is_bounded() -> None:
    async def body(pool: WorkerPool):
        hung = asyncio.ensure_future(pool.call(pool_jobs.hang_where_no_alarm_reaches))
        await asyncio.sleep(0.05)
        queued = await pool.call(pool_jobs.add, 1, 1, wait_until=time.monotonic() + 0.5)
        return queued, (await hung).status

    (queued, hung), _ = run(with_pool(body, size=1, deadline_s=1.5, max_slow=0))
    assert queued.status == "timeout" and "no grading worker was free" in queued.error
    assert hung == "timeout"


def test_arguments_that_cannot_be_pickled_fail_the_call_not_the_worker() -> None:
    nested: list = []
    for _ in range(100_000):
        nested = [nested]

    async def body(pool: WorkerPool):
        return await pool.call(pool_jobs.add, nested, 1), await pool.call(pool_jobs.add, 2, 2)

    (refused, after), restarts = run(with_pool(body))
    assert refused.status == "error" and "cannot be sent" in refused.error
    assert after.value == 4 and restarts == []


def test_a_soft_timeout_reports_the_cpu_the_call_burnt() -> None:
    async def body(pool: WorkerPool):
        return await pool.call(pool_jobs.spin_forever), await pool.call(pool_jobs.add, 1, 1)

    (spun, quick), _ = run(with_pool(body, deadline_s=1.0, slow_after_s=10))
    assert spun.status == "timeout" and spun.cpu_seconds > 0.1  # up to 0.9 s, less on a busy machine
    assert quick.cpu_seconds < spun.cpu_seconds / 2


def test_calls_that_look_costly_run_in_the_heavy_lane_and_step_down_once_slow() -> None:
    """One normal and one heavy worker: the heavy call never holds the normal one, and is never demoted. A heavy
    call runs at normal priority until it has burnt slow_after_s (issue 20: at the lowest priority from its start,
    one that needed milliseconds got no CPU while normal calls kept the cores busy); a slow one is lowered where it
    runs, and its worker is replaced afterwards, so the lane's next call starts at normal priority again."""
    normal = os.getpriority(os.PRIO_PROCESS, 0)  # the workers' niceness unless lowered

    async def body(pool: WorkerPool):
        cheap = await pool.call(pool_jobs.spin_then_report_niceness, 0.01, heavy=True)
        heavy = asyncio.ensure_future(pool.call(pool_jobs.spin_then_report_niceness, 1.0, heavy=True))
        quick = [await pool.call(pool_jobs.add, i, 1) for i in range(10)]
        heavy_done_before_quick = heavy.done()
        slow = await heavy
        after = await pool.call(pool_jobs.spin_then_report_niceness, 0.01, heavy=True)
        return quick, heavy_done_before_quick, cheap, slow, pool.slow, after

    (quick, heavy_done_first, cheap, slow, demoted, after), restarts = run(
        with_pool(body, size=1, heavy_size=1, deadline_s=10, slow_after_s=0.2)
    )
    assert [o.value for o in quick] == list(range(1, 11)) and not heavy_done_first
    assert cheap.status == "ok" and cheap.value == normal
    assert slow.status == "ok" and slow.value == LOW_NICENESS
    assert after.status == "ok" and after.value == normal
    assert demoted == 0 and restarts == []
