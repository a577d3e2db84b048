"""Runs lost to something outside them: the sandbox's `bwrap` or its runner SIGKILLed mid-run from outside, as a
node's OOM killer or an operator might. Never a verdict: the run is retried once in a fresh sandbox, and a run lost
again is a sandbox error, which the reward service answers as `error` and does not cache. A run stopped by its own
limits or by its caller is not lost."""

from __future__ import annotations

import json
import os
import signal
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

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


def _comm(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        return ""


def bwrap_of(ancestor: int) -> list[int]:
    """The sandboxes' outer bubblewrap processes below `ancestor` (the runner is their namespace's PID 1)."""
    return [pid for pid in descendants(ancestor) if _comm(pid) == "bwrap"]


def runner_of(ancestor: int) -> list[int]:
    """The runners: the python3 children of those bubblewrap processes."""
    return [pid for bwrap in bwrap_of(ancestor) for pid in descendants(bwrap) if _comm(pid) == "python3"][:1]


@contextmanager
def killing(find: Callable[[int], list[int]], ancestor: int, times: int | None, after_s: float = 0.6) -> Iterator[list]:
    """SIGKILLs what `find` finds below `ancestor`, `after_s` after it appears, `times` times (None: until the block
    ends). Yields the list of pids killed."""
    killed: list[int] = []
    done = threading.Event()

    def loop() -> None:
        seen: dict[int, float] = {}
        while not done.is_set() and (times is None or len(killed) < times):
            now = time.monotonic()
            for pid in find(ancestor):
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


def test_a_sandbox_killed_once_is_run_again() -> None:
    with killing(bwrap_of, os.getpid(), times=1) as killed:
        execution = Executor().run("python", SLOW_ECHO, INPUTS, LIMITS)
    assert len(killed) == 1
    assert execution.sandbox_error is None and not execution.lost
    assert echoed(execution) == [str(n) for n in range(6)]
    assert "killed by signal 9" in execution.details["retried_after"]


def test_a_runner_killed_once_is_run_again() -> None:
    with killing(runner_of, os.getpid(), times=1) as killed:
        execution = Executor().run("python", SLOW_ECHO, INPUTS, LIMITS)
    assert len(killed) == 1
    assert execution.sandbox_error is None and echoed(execution) == [str(n) for n in range(6)]
    assert "before" in execution.details["retried_after"]


def test_a_sandbox_lost_twice_is_an_error_not_a_verdict() -> None:
    with killing(bwrap_of, os.getpid(), times=None) as killed:
        execution = Executor().run("python", SLOW_ECHO, INPUTS, LIMITS)
    assert len(killed) == 2
    assert execution.lost
    assert "killed by signal 9" in execution.sandbox_error and "no verdict" in execution.sandbox_error
    report = LocalJudge().judge("python", SLOW_ECHO, Suite("stdio", (StdioTest("1\n", "1"),) * 6), LIMITS)
    assert report.sandbox_error is None and report.passed == 6  # the killer is gone: the same suite passes


def test_a_sandbox_lost_while_compiling_is_an_error() -> None:
    program = "#include <bits/stdc++.h>\nint main() { std::cout << 2 << std::endl; }\n"  # a second or so of g++
    with killing(bwrap_of, os.getpid(), times=None, after_s=0.2) as killed:
        execution = Executor(compile_cache=None).run("cpp", program, [Input("")], LIMITS)
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
        with killing(bwrap_of, server.process.pid, times=None):
            lost = _grade(server, item)
        again = _grade(server, item)
    assert lost["status"] == "error" and "no verdict" in json.dumps(lost), lost
    assert again["status"] == "ok" and again["reward"] == 1.0, again  # graded afresh, not the error from a cache


def _grade(server: LocalServer, item: dict) -> dict:
    response = httpx.post(f"{server.url}/v1/rewards", json={"items": [item]}, timeout=120)
    assert response.status_code == 200, response.text
    return response.json()["results"][0]
