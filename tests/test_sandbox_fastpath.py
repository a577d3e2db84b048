"""The sandbox's fast path (issue 20): every Python test is a fork of the run's warm runner, never an interpreter
started for it; a run's steps are recorded for bench/sandbox_phases.py; the runner lowers its own priority; a
caller that cannot stop a run early lets its tests start without waiting on each result."""

from __future__ import annotations

import pytest

from sandbox.cpu_priority import FRESH_NICENESS
from sandbox.executor import Executor, Limits, ProcessResult
from sandbox.executor import TestInput as Input
from sandbox.judge import AssertTest, CallTest, LocalJudge, StdioTest, Verdict
from sandbox.judge import TestSuite as Suite

LIMITS = Limits(time_s=2)
# True in a test forked from the runner: the sandbox's interpreter started as the runner (python3 -S -I -c ...),
# the runner being PID 1 of the sandbox, `hops` parents up (1: the program's parent; 2 for an assert test, whose
# process forked the program's: sandbox/runner.py run_apart), and the runner's objects frozen out of the collector.
FORKED = """
import gc, os
def parent_of(pid):
    with open(f"/proc/{pid}/stat") as handle:
        return int(handle.read().rsplit(")", 1)[1].split()[1])
def forked(hops=1):
    with open("/proc/self/cmdline", "rb") as handle:
        argv = handle.read().split(b"\\0")
    parents = [os.getppid()]
    while len(parents) < hops:
        parents.append(parent_of(parents[-1]))
    runner_there = parents[-1] == 1 and 1 not in parents[:-1]
    return argv[1:4] == [b"-S", b"-I", b"-c"] and runner_there and gc.get_freeze_count() > 0
"""


@pytest.fixture(scope="module")
def executor() -> Executor:
    return Executor(parallel=1, compile_cache=None)


@pytest.mark.parametrize(
    "suite",
    [
        Suite("stdio", (StdioTest("", "True"), StdioTest("", "True"))),
        Suite("call", (CallTest([], True), CallTest([], True)), fn_name="forked"),
        Suite("assert", (AssertTest("assert forked(2)"), AssertTest("assert forked(2)"))),
    ],
    ids=["stdio", "call", "assert"],
)
def test_every_python_test_is_a_fork_of_the_warm_runner(executor: Executor, suite: Suite) -> None:
    code = FORKED + ("print(forked())\n" if suite.kind == "stdio" else "")
    report = LocalJudge(executor).judge("python", code, suite, LIMITS)
    assert [t.verdict for t in report.tests] == [Verdict.ACCEPTED] * 2, report.to_dict()


def test_a_run_records_its_steps_in_order(executor: Executor) -> None:
    execution = executor.run("python", "print(input())\n", [Input("a\n"), Input("b\n")], LIMITS)
    assert [r.stdout for r in execution.tests if r is not None] == ["a\n", "b\n"]
    names = [name for name, _ in execution.phases]
    assert names == ["start", "cgroup", "spawned", "runner", "compiled", "test", "test", "exited", "closed"]
    # The runner's start is on the same clock, between its cgroup and its compile; so is its launch ("spawned"),
    # which a run forked from the zygote may mark after the runner started (its init answers once it is set up).
    times = [when for name, when in execution.phases if name != "spawned"]
    assert times == sorted(times)
    cgroup, spawned, compiled = (dict(execution.phases)[name] for name in ("cgroup", "spawned", "compiled"))
    assert cgroup <= spawned <= compiled


def test_tests_run_at_the_fresh_niceness_the_runner_sets_itself(executor: Executor) -> None:
    execution = executor.run("python", "import os\nprint(os.nice(0))\n", [Input()], LIMITS)
    assert execution.tests[0] is not None and execution.tests[0].stdout.strip() == str(FRESH_NICENESS)


def test_a_caller_that_stops_the_run_still_stops_it(executor: Executor) -> None:
    seen: list[int] = []

    def first_only(index: int, result: ProcessResult) -> bool:
        seen.append(index)
        return False

    execution = executor.run("python", "print(1)\n", [Input()] * 5, LIMITS, on_result=first_only)
    assert seen == [0] and execution.tests[1:] == [None] * 4


def test_stop_on_first_failure_skips_the_rest_and_the_others_judge_every_test(executor: Executor) -> None:
    suite = Suite("stdio", (StdioTest("1\n", "1"), StdioTest("2\n", "3"), StdioTest("3\n", "3")))
    judge = LocalJudge(executor)
    stopped = judge.judge("python", "print(input())\n", suite, LIMITS, stop_on_first_failure=True)
    assert [t.verdict for t in stopped.tests] == [Verdict.ACCEPTED, Verdict.WRONG_ANSWER, Verdict.SKIPPED]
    every = judge.judge("python", "print(input())\n", suite, LIMITS)
    assert [t.verdict for t in every.tests] == [Verdict.ACCEPTED, Verdict.WRONG_ANSWER, Verdict.ACCEPTED]
