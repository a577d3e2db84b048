"""The pool's code lane: calls side by side in one worker, stopped one at a time, and programs that run long
taking only spare CPU (sandbox/cpu_priority.py) and stopped when they starve while every slot is taken.

Real sandbox runs throughout: the calls grade Python programs with the code grader in the worker.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from reward_api.pool import WorkerPool
from sandbox import cpu_priority
from sandbox.cgroups import find_cgroups
from sandbox.executor import Cancel, Executor, Limits
from sandbox.executor import TestInput as Input
from tests import pool_jobs
from tests.test_pool import run, with_pool

SPIN = "while True:\n    pass"
ECHO = "print(input())"


def lane(calls: int, deadline_s: float = 30.0):
    """One normal worker and one code worker running `calls` calls at once."""
    return {"size": 1, "deadline_s": deadline_s, "children_size": 1, "children_calls": calls, "memory_mb": 2048}


def runs_of(worker_pid: int) -> list[Path]:
    return [run for run in find_cgroups().runs() if run.name.split("-")[2] == str(worker_pid)]


def test_code_calls_run_side_by_side_in_one_worker() -> None:
    async def body(pool: WorkerPool):
        return await asyncio.gather(*(pool.call(pool_jobs.sleep_span, 1.0, in_children=True) for _ in range(4)))

    outcomes, restarts = run(with_pool(body, **lane(calls=4)))
    assert [o.status for o in outcomes] == ["ok"] * 4
    assert max(o.value[0] for o in outcomes) < min(o.value[1] for o in outcomes)  # all four were running at once
    assert restarts == []


def test_a_code_call_past_its_deadline_is_stopped_and_its_worker_lives() -> None:
    async def body(pool: WorkerPool):
        worker = (await pool.call(pool_jobs.pid, in_children=True)).value
        spinner = pool.call(pool_jobs.judge_python, SPIN, 20.0, in_children=True, deadline_s=2.0)
        echo = pool.call(pool_jobs.judge_python, ECHO, 2.0, in_children=True)
        stopped, graded = await asyncio.gather(spinner, echo)
        await asyncio.sleep(0.5)  # the stopped run's teardown, in the worker
        return worker, stopped, graded, (await pool.call(pool_jobs.pid, in_children=True)).value

    (worker, stopped, graded, worker_after), restarts = run(with_pool(body, **lane(calls=2)))
    assert stopped.status == "timeout" and "stopped at the 2s deadline" in stopped.error, stopped
    assert stopped.seconds < 10  # not its program's 20 s time limit
    assert graded.status == "ok" and graded.value[0] == 1.0  # the call beside it was graded
    assert worker_after == worker and restarts == []  # stopped through its grader: the worker lives
    assert runs_of(worker) == []  # and the stopped program's run is gone


def test_a_cancelled_code_call_stops_only_itself() -> None:
    async def body(pool: WorkerPool):
        worker = (await pool.call(pool_jobs.pid, in_children=True)).value
        spinner = asyncio.ensure_future(pool.call(pool_jobs.judge_python, SPIN, 20.0, in_children=True))
        sleeper = asyncio.ensure_future(pool.call(pool_jobs.sleep_span, 2.0, in_children=True))
        await asyncio.sleep(1.0)
        spinner.cancel()  # its request went away
        slept = await sleeper
        await asyncio.sleep(0.5)
        return slept, runs_of(worker)

    (slept, runs_left), restarts = run(with_pool(body, **lane(calls=2)))
    assert slept.status == "ok"
    assert runs_left == [] and restarts == []


def test_a_killed_code_worker_answers_every_call_after_one_retry(tmp_path: Path) -> None:
    pids = tmp_path / "pids"

    async def body(pool: WorkerPool):
        calls = [pool.call(pool_jobs.write_pid_then_sleep, str(pids), 2.0, in_children=True) for _ in range(3)]
        tasks = [asyncio.ensure_future(call) for call in calls]
        while not pids.exists() or len(pids.read_text().split()) < 3:
            await asyncio.sleep(0.05)
        os.kill(int(pids.read_text().split()[0]), signal.SIGKILL)
        return await asyncio.gather(*tasks)

    outcomes, restarts = run(with_pool(body, **lane(calls=3)))
    assert [o.status for o in outcomes] == ["ok"] * 3  # each retried once on the replacement
    assert restarts == ["crash"]
    first = int(pids.read_text().split()[0])
    assert all(o.value != first for o in outcomes)


def test_starved_programs_past_half_the_slots_are_stopped() -> None:
    """Two CPU hogs at normal priority hold both cores: programs that run long get only spare CPU, none. With
    every slot taken and more than half of them held by such programs, the excess is stopped rather than held
    until its deadline; the rest keep their slots (a merely slow program gets its CPU later)."""
    hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(os.cpu_count() or 1)]
    try:

        async def body(pool: WorkerPool):
            spinners = [pool.call(pool_jobs.judge_python, SPIN, 40.0, in_children=True) for _ in range(2)]
            return await asyncio.gather(*spinners)

        outcomes, restarts = run(with_pool(body, **lane(calls=2, deadline_s=10.0)))
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()
    stopped = [o for o in outcomes if o.error and "stopped: its programs got" in o.error]
    held = [o for o in outcomes if o.error and "stopped at the 10s deadline" in o.error]
    assert len(stopped) == 1 and len(held) == 1, outcomes
    assert stopped[0].status == "timeout" and stopped[0].seconds < 8  # well before its 10 s deadline
    assert held[0].status == "timeout"
    assert restarts == []


def idle_class(pid: int) -> bool:
    """Whether process `pid` gets only spare CPU: SCHED_IDLE itself, or in a cpu cgroup with cpu.idle 1 (its own or
    one it is inside of: a test's memory slot inside its run's)."""
    if os.sched_getscheduler(pid) == os.SCHED_IDLE:
        return True
    for line in Path(f"/proc/{pid}/cgroup").read_text().splitlines():
        _, controllers, path = line.split(":", 2)
        mount = {"": "/sys/fs/cgroup", "cpu": "/sys/fs/cgroup/cpu"}.get(controllers)
        if mount is None:
            continue
        group = Path(f"{mount}{path}")
        for directory in (group, *group.parents):
            idle = directory / "cpu.idle"
            if directory.is_relative_to(mount) and idle.exists() and idle.read_text().strip() == "1":
                return True
    return False


# A stdin/stdout test, and an assert test, whose program runs in a process of its own below the test's (run_apart).
LONG_RUNNERS = {
    "stdio": (SPIN, Input()),
    "assert": ("def spin():\n    while True:\n        pass\n", Input(python_code="spin()")),
}


@pytest.mark.parametrize("shape", list(LONG_RUNNERS))
def test_a_program_that_runs_long_moves_to_idle_cpu_and_keeps_its_verdict(shape: str) -> None:
    """Past 20 ms of CPU a test runs long: its run moves to idle CPU (every process of it), and its time limit
    still counts only the CPU it had, so the verdict is a time limit, not a wall-clock cut."""
    executor, cancel, seen = Executor(), Cancel(), {}

    def watch() -> None:
        while "idle" not in seen and "ended" not in seen:
            if cancel.yielded:
                time.sleep(0.1)  # the move itself
                mine = [run for run in find_cgroups().runs() if run.name.split("-")[2] == str(os.getpid())]
                groups = [group for run in mine for group in (run, *run.iterdir()) if group.is_dir()]  # and its slots
                pids = [int(pid) for group in groups for pid in (group / "cgroup.procs").read_text().split()]
                seen["idle"] = {pid: idle_class(pid) for pid in pids}
            time.sleep(0.01)

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    program, test = LONG_RUNNERS[shape]
    execution = executor.run("python", program, [test], Limits(time_s=1.0), cancel=cancel)
    seen["ended"] = True
    watcher.join()
    [result] = execution.tests
    # Its CPU limit ended it (SIGXCPU), not the runner's wall clock (which kills and records no signal), after most of
    # that second as rusage reads it: on a loaded machine rusage has read 0.82 s at the 1 s limit.
    assert result.status == "timeout" and result.signal == signal.SIGXCPU and result.cpu_s > 0.6, result
    assert seen.get("idle"), "the run never moved to idle CPU"
    assert all(seen["idle"].values()), f"processes of the run not idle: {seen['idle']}"


@pytest.mark.parametrize(
    ("program", "behind_a_hog", "expected"),
    [
        ("import time\ntime.sleep(60)", False, False),  # it sleeps: it wants no CPU
        (SPIN, False, False),  # it spins and has a CPU
        (SPIN, True, True),  # it spins, idle, behind a hog on its one CPU
    ],
)
def test_held_back_tells_a_program_waiting_for_a_cpu(program: str, behind_a_hog: bool, expected: bool) -> None:
    """schedstat's wait counts only waits that ended: held_back looks at what the threads do now."""
    hogs = [subprocess.Popen([sys.executable, "-c", SPIN]) for _ in range(behind_a_hog)]
    watched = subprocess.Popen([sys.executable, "-c", program])
    try:
        if behind_a_hog:
            for process in (*hogs, watched):
                os.sched_setaffinity(process.pid, {min(os.sched_getaffinity(0))})
            os.sched_setscheduler(watched.pid, os.SCHED_IDLE, os.sched_param(0))
        time.sleep(0.5)  # started, and at its work
        assert cpu_priority.held_back([watched.pid]) is expected
    finally:
        for process in (*hogs, watched):
            process.kill()
            process.wait()


def test_a_run_starved_past_its_budget_gets_no_verdict_and_one_that_ran_does() -> None:
    """The whole run's time budget does not count time it was starved: a spinning program behind CPU hogs is
    given up without a verdict (never a time limit that reads as a too-slow program), one that was not
    starved (it sleeps) is cut at its budget as always."""
    limits = Limits(time_s=20.0, wall_s=60.0, total_s=1.5)
    # The sandbox and two hogs share one CPU, pinned: on every machine, whatever its cores, balancer or CPU quota,
    # the hogs hold that CPU (with hogs spread over all cores, CI once gave the run enough to read as not starved).
    everywhere = os.sched_getaffinity(0)
    os.sched_setaffinity(0, {min(everywhere)})
    try:
        executor = Executor()
        slept = executor.run("python", "import time\ntime.sleep(60)", [Input()], limits)
        assert slept.timed_out and slept.sandbox_error is None  # cut at the budget: its verdict stands
        hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(2)]
        try:
            starved = executor.run("python", SPIN, [Input()], limits)
        finally:
            for hog in hogs:
                hog.kill()
                hog.wait()
    finally:
        os.sched_setaffinity(0, everywhere)
    assert starved.timed_out and starved.sandbox_error is not None, starved
    assert "too little CPU" in starved.sandbox_error
