"""Each test's memory cgroup (sandbox/cgroups.py TestSlot, sandbox/runner.py MemorySlot), through the real sandbox.

Tests running at once each have a memory cgroup of their own inside the run's: one test past its memory is that
test's memory limit, never its neighbours', and the slot is whole again for the test after it. A test that cannot
join its slot never runs: the run is lost with the reason, not graded as the program's failure.
"""

from __future__ import annotations

import os
import re

import pytest

from sandbox import runner
from sandbox.executor import Executor, Limits
from sandbox.executor import TestInput as Input
from sandbox.judge import LocalJudge, StdioTest, Verdict
from sandbox.judge import TestSuite as Suite

A, MLE = Verdict.ACCEPTED, Verdict.MEMORY_LIMIT
# Input 2 and 5 hog; the others each take 150 MB of a 256 MB bound: two of them at once fit no single bound.
HOG_ON_SOME = """
n = int(input())
keep = bytearray(150 << 20)
if n in (2, 5):
    chunks = []
    while True:
        chunks.append(bytearray(1 << 20))
print(n)
"""


@pytest.fixture(scope="module")
def executor() -> Executor:
    return Executor(parallel=2)


def test_a_hog_is_its_own_tests_memory_limit_only(executor: Executor) -> None:
    suite = Suite("stdio", tuple(StdioTest(f"{n}\n", str(n)) for n in range(1, 7)))
    report = LocalJudge(executor).judge("python", HOG_ON_SOME, suite, Limits(time_s=5, wall_s=10, memory_mb=256))
    assert [test.verdict for test in report.tests] == [A, MLE, A, A, MLE, A], report.to_dict()
    assert "over the memory limit (256 MB)" in report.tests[1].detail


def test_tests_run_at_once_in_slots_of_their_own(executor: Executor) -> None:
    """Each test's memory cgroup, as the test reads it: a slot's name (the run's own cgroup is its namespace's root)."""
    code = (  # v1: the memory hierarchy's line; v2: the one line
        "lines = open('/proc/self/cgroup').read().splitlines()\n"
        "print(([l for l in lines if ':memory:' in l] or [l for l in lines if l.startswith('0::')])[0])"
    )
    execution = executor.run("python", code, [Input()] * 4, Limits(time_s=5, wall_s=10))
    slots = {re.search(r"(test-\d+)$", test.stdout.strip()).group(1) for test in execution.tests}
    assert slots <= {"test-0", "test-1"} and slots, [test.stdout for test in execution.tests]


def test_a_test_that_cannot_join_its_slot_never_runs_and_loses_the_run() -> None:
    """A slot whose descriptor refuses the write (here: opened read-only) stands for a kernel that refuses the move."""
    read_only = os.open(os.devnull, os.O_RDONLY)
    [slot] = runner.memory_slots([[read_only, read_only]])
    spec = {"index": 0, "argv": ["/bin/sh", "-c", "echo ran"], "stdin_path": None, "address_space": True}
    spec["python_codes"] = None
    results: list[dict] = []
    with pytest.raises(SystemExit, match=r"runner: a test could not join its memory cgroup: .*Bad file descriptor"):
        runner.run_children([spec], 1, Limits().runner_limits(), results.append, slots=[slot])
    assert results == []
    os.close(read_only)
