"""Functions the pool tests run inside worker processes (importable by name)."""

from __future__ import annotations

import os
import signal
import time


def add(a: int, b: int) -> int:
    return a + b


def pid() -> int:
    return os.getpid()


def spin_forever() -> None:
    while True:
        pass


def hang_where_no_alarm_reaches() -> None:
    """Like a hang inside C code: the worker's own alarm is blocked, only the parent's kill helps."""
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGALRM})
    time.sleep(3600)


def crash() -> None:
    os._exit(3)


def raise_value_error() -> None:
    raise ValueError("bad input")


def allocate_without_bound() -> None:
    chunks = []
    while True:
        chunks.append(bytearray(64 * 1024 * 1024))


def write_pid_then_sleep(path: str, seconds: float) -> int:
    """Tell the test which process to kill from outside, then work for a while."""
    with open(path, "a") as out:
        out.write(f"{os.getpid()}\n")
    time.sleep(seconds)
    return os.getpid()


def spin_then_report_niceness(seconds: float) -> int:
    """Burn `seconds` of CPU (past the pool's `slow_after_s`, however busy the machine), then say at which
    priority this ran."""
    until = time.process_time() + seconds
    while time.process_time() < until:
        pass
    return os.getpriority(os.PRIO_PROCESS, 0)


def sleep_span(seconds: float) -> tuple[float, float]:
    """When it started and ended: calls running side by side overlap."""
    started = time.monotonic()
    time.sleep(seconds)
    return started, time.monotonic()


_judge = None


def judge_python(code: str, time_limit_s: float) -> tuple[float, dict]:
    """Grade `code` on one stdio test with the real code grader and this worker's own sandbox."""
    global _judge
    from reward_api.graders.code import grade_code
    from reward_api.profiles import CodeSettings
    from sandbox.executor import Executor
    from sandbox.judge import LocalJudge

    _judge = _judge or LocalJudge(Executor())
    reference = {"inputs": ["1\n"], "outputs": ["1"], "time_limit": time_limit_s}
    score = grade_code(f"```python\n{code}\n```", reference, CodeSettings(), _judge)
    return score.value, score.details
