"""Python's compile step gives one verdict and one message whether the runner compiles the source itself (up to
sandbox.runner.INLINE_COMPILE_BYTES) or in a child of its own under the compile limits (past it).

Each row runs twice in the real sandbox (LocalJudge): as written, and padded past the threshold with a trailing
comment, which changes neither what compiles nor the message (the error's line stays where it was)."""

from __future__ import annotations

import pytest

from sandbox.executor import Limits
from sandbox.judge import AssertTest, LocalJudge, StdioTest, Verdict
from sandbox.judge import TestSuite as Suite  # not `Test*`: pytest would try to collect it
from sandbox.runner import INLINE_COMPILE_BYTES

SUITE = Suite("stdio", (StdioTest("1 2", "3"), StdioTest("4 5", "9")))
LIMITS = Limits(time_s=2, memory_mb=256)
ADD = "a, b = map(int, input().split())\nprint(a + b)\n"

# (name, program, verdict, what the compile error says: None when it compiles)
CASES = [
    ("adds", ADD, Verdict.ACCEPTED, None),
    ("unclosed", "print(1", Verdict.COMPILE_ERROR, "SyntaxError: '(' was never closed (main.py, line 1)"),
    ("parens", "x = " + "(" * 300 + "1" + ")" * 300, Verdict.COMPILE_ERROR, "too many nested parentheses"),
    ("null-byte", "x = 1\0\n", Verdict.COMPILE_ERROR, "null bytes"),
    ("attributes", "x = a" + ".b" * 3000 + "\n", Verdict.COMPILE_ERROR, "RecursionError"),
    ("lambdas", "f = " + "lambda: " * 900 + "1\n" + ADD, Verdict.ACCEPTED, None),
    ("shadowed-defs", "def f(a):a=a+1;return a\n" * 300 + ADD, Verdict.ACCEPTED, None),
    ("indent", "if True:\nprint(1)\n", Verdict.COMPILE_ERROR, "IndentationError: expected an indented block"),
]


def padded(program: str) -> str:
    return program + "\n#" + "x" * INLINE_COMPILE_BYTES + "\n"


@pytest.fixture(scope="module")
def judge() -> LocalJudge:
    return LocalJudge()


@pytest.mark.parametrize(("program", "verdict", "says"), [case[1:] for case in CASES], ids=[case[0] for case in CASES])
def test_the_runner_and_a_compile_child_agree(judge: LocalJudge, program: str, verdict: Verdict, says: str) -> None:
    assert len(program.encode()) <= INLINE_COMPILE_BYTES < len(padded(program).encode())
    inline, in_child = (judge.judge("python", source, SUITE, LIMITS) for source in (program, padded(program)))
    for report in (inline, in_child):
        assert report.sandbox_error is None, report.to_dict()
        assert [test.verdict for test in report.tests] == [verdict] * 2, report.to_dict()
    assert inline.compile_error == in_child.compile_error
    if says is not None:
        assert says in inline.compile_error


def test_a_test_whose_code_does_not_compile_fails_alone_when_compiled_in_the_runner(judge: LocalJudge) -> None:
    suite = Suite("assert", (AssertTest("assert add(1, 2) == 3"), AssertTest("assert add(1, 2) == (3")))
    report = judge.judge("python", "def add(a, b):\n    return a + b\n", suite, LIMITS)
    assert report.sandbox_error is None and report.compile_error is None, report.to_dict()
    assert [test.verdict for test in report.tests] == [Verdict.ACCEPTED, Verdict.RUNTIME_ERROR], report.to_dict()
    assert "the test's code does not compile: SyntaxError: '(' was never closed" in report.tests[1].detail
