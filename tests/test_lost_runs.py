"""Runs lost to something outside them: the sandbox's `bwrap`, its runner, or (runs forked from the warm zygote,
sandbox/zygote.py) the run's init or the zygote itself SIGKILLed mid-run from outside, as a node's OOM killer or
an operator might. Never a verdict: the run is retried once in a fresh sandbox, and a run lost again is a sandbox
error, which the reward service answers as `error` and does not cache. A run stopped by its own limits or by its
caller is not lost."""

from __future__ import annotations

import gc
import json
import os
import signal
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from reward_api.local import LocalServer
from sandbox.cpu_priority import descendants
from sandbox.executor import Execution, Executor, Limits
from sandbox.executor import TestInput as Input
from sandbox.judge import LocalJudge, StdioTest
from sandbox.judge import TestSuite as Suite

# Six tests of 0.3 s each, one at a time: a run of about two seconds to be killed in.
SLOW_ECHO = "import time\ntime.sleep(0.3)\nprint(input())\n"
INPUTS = [Input(f"{n}\n") for n in range(6)]
LIMITS = Limits(time_s=2, wall_s=3)
Finder = Callable[[int], list[int]]


def _comm(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        return ""


def _parent(pid: int) -> int:
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[1])
    except OSError:
        return 0


def _a_runs_own_bwrap(pid: int) -> bool:
    """A run's own `bwrap` (its runner is the namespace's PID 1), not a zygote's."""
    try:
        return b"--as-pid-1" in Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return False


def _outer_bwraps(ancestor: int) -> list[int]:
    return [pid for pid in descendants(ancestor) if _comm(pid) == "bwrap" and _comm(_parent(pid)) != "bwrap"]


def bwrap_of(ancestor: int) -> list[int]:
    """The `bwrap` of each run started in one of its own below `ancestor` (never a zygote's, which an earlier test's
    executor may still hold)."""
    return [pid for pid in _outer_bwraps(ancestor) if _a_runs_own_bwrap(pid)]


def _below(find: Finder) -> Finder:
    """The direct children of what `find` finds."""
    return lambda ancestor: [pid for above in find(ancestor) for pid in descendants(above) if _parent(pid) == above]


def _python_below_bwrap(runs: bool) -> Finder:
    """The python3 processes whose parent is a `bwrap`: each run's runner (`runs`), or the zygote."""

    def find(ancestor: int) -> list[int]:
        below = [pid for pid in descendants(ancestor) if _comm(pid) == "python3" and _comm(_parent(pid)) == "bwrap"]
        return [pid for pid in below if _a_runs_own_bwrap(_parent(pid)) == runs]

    return find


runner_of = _python_below_bwrap(runs=True)  # a run in a bwrap of its own: its runner
zygote_of = _python_below_bwrap(runs=False)
# The zygote goes on in a PID namespace of its own, as its launcher's child; each run's init (its runner) is its child.
zygote_runner_of = _below(_below(zygote_of))
# How a run is lost from outside, in each way a run starts: (the executor's zygote setting, the sandbox, its runner).
# A run forked from the zygote has no process around its init: the init is its sandbox.
LAUNCHES = {"bwrap": (False, bwrap_of, runner_of), "zygote": (True, zygote_runner_of, zygote_runner_of)}


@pytest.fixture(autouse=True)
def _no_zygote_of_earlier_tests() -> None:
    """Executors of earlier tests, unreachable but in reference cycles, end their zygotes when collected: before a test
    looks for the zygote of its own."""
    gc.collect()


@contextmanager
def killing(find: Finder, ancestor: int, times: int | None, after_s: float = 0.6) -> Iterator[list]:
    """SIGKILLs what `find` finds below `ancestor`, `after_s` after it appears, `times` times (None: until the block
    ends). Yields the list of pids killed."""
    killed: list[int] = []
    done = threading.Event()

    def loop() -> None:
        seen: dict[int, float] = {}
        while not done.is_set() and (times is None or len(killed) < times):
            now = time.monotonic()
            for pid in find(ancestor)[:1]:
                if pid in killed:
                    continue
                if now - seen.setdefault(pid, now) >= after_s:
                    os.kill(pid, signal.SIGKILL)
                    killed.append(pid)
            time.sleep(0.02)

    thread = threading.Thread(target=loop, daemon=True)
    thread.start()
    try:
        yield killed
    finally:
        done.set()
        thread.join()


def echoed(execution: Execution) -> list[str | None]:
    return [None if test is None else test.stdout.strip() for test in execution.tests]


@pytest.mark.parametrize("launch", LAUNCHES)
def test_a_sandbox_killed_once_is_run_again(launch: str) -> None:
    zygote, sandbox_of, _ = LAUNCHES[launch]
    with killing(sandbox_of, os.getpid(), times=1) as killed:
        execution = Executor(zygote=zygote).run("python", SLOW_ECHO, INPUTS, LIMITS)
    assert len(killed) == 1
    assert execution.sandbox_error is None and not execution.lost
    assert echoed(execution) == [str(n) for n in range(6)]
    assert "killed by signal 9" in execution.details["retried_after"]


@pytest.mark.parametrize("launch", LAUNCHES)
def test_a_runner_killed_once_is_run_again(launch: str) -> None:
    zygote, _, runner_in = LAUNCHES[launch]
    with killing(runner_in, os.getpid(), times=1) as killed:
        execution = Executor(zygote=zygote).run("python", SLOW_ECHO, INPUTS, LIMITS)
    assert len(killed) == 1
    assert execution.sandbox_error is None and echoed(execution) == [str(n) for n in range(6)]
    assert "before" in execution.details["retried_after"]


def test_a_zygote_killed_mid_run_loses_the_run_and_is_started_again() -> None:
    """Its runs in flight die with it (each init's parent-death signal): retried in a zygote started afresh."""
    executor = Executor(zygote=True)
    with killing(zygote_of, os.getpid(), times=1) as killed:
        execution = executor.run("python", SLOW_ECHO, INPUTS, LIMITS)
    assert len(killed) == 1
    assert execution.sandbox_error is None and echoed(execution) == [str(n) for n in range(6)]
    assert "before" in execution.details["retried_after"]
    assert zygote_of(os.getpid()) and killed[0] not in zygote_of(os.getpid())  # a new one serves


@pytest.mark.parametrize("launch", LAUNCHES)
def test_a_sandbox_lost_twice_is_an_error_not_a_verdict(launch: str) -> None:
    zygote, sandbox_of, _ = LAUNCHES[launch]
    with killing(sandbox_of, os.getpid(), times=None) as killed:
        execution = Executor(zygote=zygote).run("python", SLOW_ECHO, INPUTS, LIMITS)
    assert len(killed) == 2
    assert execution.lost
    assert "killed by signal 9" in execution.sandbox_error and "no verdict" in execution.sandbox_error
    report = LocalJudge().judge("python", SLOW_ECHO, Suite("stdio", (StdioTest("1\n", "1"),) * 6), LIMITS)
    assert report.sandbox_error is None and report.passed == 6  # the killer is gone: the same suite passes


@pytest.mark.parametrize("launch", LAUNCHES)
def test_a_sandbox_lost_while_compiling_is_an_error(launch: str) -> None:
    zygote, sandbox_of, _ = LAUNCHES[launch]
    program = "#include <bits/stdc++.h>\nint main() { std::cout << 2 << std::endl; }\n"  # a second or so of g++
    with killing(sandbox_of, os.getpid(), times=None, after_s=0.2) as killed:
        execution = Executor(compile_cache=None, zygote=zygote).run("cpp", program, [Input("")], LIMITS)
    assert killed and execution.lost and execution.compile is None
    assert "no verdict" in execution.sandbox_error


def test_runs_stopped_by_their_limits_or_their_caller_are_not_lost() -> None:
    executor = Executor()
    budget = executor.run("python", SLOW_ECHO, INPUTS, Limits(time_s=2, wall_s=3, total_s=0.8))
    assert budget.timed_out and not budget.lost and budget.sandbox_error is None
    first = executor.run("python", SLOW_ECHO, INPUTS, LIMITS, on_result=lambda index, result: False)
    assert not first.lost and echoed(first).count(None) >= 4


def test_the_reward_service_answers_error_and_caches_nothing(tmp_path: Path) -> None:
    item = {
        "task": "code",
        "completion": f"```python\n{SLOW_ECHO}```",
        "reference": {"tests": [{"input": f"{n}\n", "output": f"{n}\n"} for n in range(6)]},
    }
    with LocalServer(tmp_path, REWARD_API_WORKERS="1") as server:
        with killing(zygote_runner_of, server.process.pid, times=None):
            lost = _grade(server, item)
        again = _grade(server, item)
    assert lost["status"] == "error" and "no verdict" in json.dumps(lost), lost
    assert again["status"] == "ok" and again["reward"] == 1.0, again  # graded afresh, not the error from a cache


def _grade(server: LocalServer, item: dict) -> dict:
    response = httpx.post(f"{server.url}/v1/rewards", json={"items": [item]}, timeout=120)
    assert response.status_code == 200, response.text
    return response.json()["results"][0]
