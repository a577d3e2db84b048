"""The judge: its pure comparisons (stdio_match, call_match), the call harness, and verdicts of real runs.

Tables of (got, expected, comparison, match) for the comparisons; the harness and the
verdict mapping go through LocalJudge, i.e. the real sandbox.
"""

from __future__ import annotations

import pytest

from sandbox.executor import Executor, Limits
from sandbox.judge import (
    AssertTest,
    CallTest,
    Comparison,
    JudgeReport,
    LocalJudge,
    StdioTest,
    Verdict,
    call_match,
    stdio_match,
)
from sandbox.judge import TestSuite as Suite  # not `Test*`: pytest would try to collect it
from tests.verdicts import CE, MLE, OLE, RE, SKIP, TLE, WA, A

STRICT = Comparison()
NOCASE = Comparison(case_sensitive=False)
FAST = Limits(time_s=1, wall_s=2)


@pytest.fixture(scope="module")
def judge() -> LocalJudge:
    return LocalJudge()


# --- stdio_match -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("got", "expected", "comparison", "match"),
    [
        # whitespace and trailing newlines
        ("3", "3", STRICT, True),
        ("3\n", "3", STRICT, True),
        ("3", "3\n\n\n", STRICT, True),
        ("1 2 3\n", "1\n2\n3", STRICT, True),
        ("  1\t2   3  ", "1 2 3", STRICT, True),
        ("1 2\r\n3\r\n", "1 2\n3\n", STRICT, True),
        ("", "", STRICT, True),
        ("", "\n", STRICT, True),
        # token count and order
        ("\n", "0", STRICT, False),
        ("1 2", "1 2 3", STRICT, False),
        ("1 2 3", "1 2", STRICT, False),
        ("12", "1 2", STRICT, False),
        ("1 2", "2 1", STRICT, False),
        ("yes", "yes no", STRICT, False),
        # numbers: within 1e-6, absolute below 1 and relative above
        ("0.3333333", "0.333333333", STRICT, True),
        ("0.333", "0.333333", STRICT, False),
        ("1000000.5", "1000000", STRICT, True),
        ("1000002", "1000000", STRICT, False),
        ("1e3", "1000", STRICT, True),
        ("1.0", "1", STRICT, True),
        ("-0.0", "0", STRICT, True),
        ("2.5 x 3", "2.5000001 x 3.0", STRICT, True),
        ("nan", "nan", STRICT, True),
        ("nan", "0", STRICT, False),
        ("inf", "inf", STRICT, True),
        ("0.5", "0.4", Comparison(float_tolerance=0.2), True),
        ("0.5", "0.4", Comparison(float_tolerance=0.05), False),
        ("0.1", "0.1000001", Comparison(float_tolerance=0), False),
        ("3", "3.0", Comparison(float_tolerance=0), True),
        ("3", "three", STRICT, False),
        # case
        ("YES", "yes", STRICT, False),
        ("YES", "yes", NOCASE, True),
        ("Yes\nNO", "yes no", NOCASE, True),
        ("abc", "abd", NOCASE, False),
    ],
)
def test_stdio_match(got: str, expected: str, comparison: Comparison, match: bool) -> None:
    assert stdio_match(got, expected, comparison) is match


# --- call_match --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("got", "expected", "comparison", "match"),
    [
        # APPS wraps a returned value in a list: [x] also matches x
        (3, 3, STRICT, True),
        (3, [3], STRICT, True),
        ([3], [3], STRICT, True),
        ([3], [[3]], STRICT, True),
        ([1, 2], [[1, 2]], STRICT, True),
        ([], [[]], STRICT, True),
        ([[1, 2]], [1, 2], STRICT, False),
        (3, [3, 3], STRICT, False),
        ([1, 2], [1, 2, 3], STRICT, False),
        ([1, 2], [2, 1], STRICT, False),
        # nested lists and dicts
        ([[1, 2], [3]], [[1, 2], [3]], STRICT, True),
        ([[1, 2], [3]], [[1, 2], [4]], STRICT, False),
        ({"a": 1, "b": [1, 2]}, {"b": [1, 2], "a": 1}, STRICT, True),
        ({"a": 1}, {"a": 1, "b": 2}, STRICT, False),
        ({"a": [1.0000001]}, {"a": [1]}, STRICT, True),
        ({"a": 1}, [{"a": 1}], STRICT, True),
        # bools are not ints
        (True, True, STRICT, True),
        (True, 1, STRICT, False),
        (1, True, STRICT, False),
        (False, 0, STRICT, False),
        ([True, False], [1, 0], STRICT, False),
        (True, [True], STRICT, True),
        # numbers
        (1, 1.0, STRICT, True),
        (0.1 + 0.2, 0.3, STRICT, True),
        (1e9 + 1, 1e9, STRICT, True),
        (1.1, 1, STRICT, False),
        (0.5, 0.4, Comparison(float_tolerance=0.2), True),
        # strings, None, mixed types
        ("abc", "abc", STRICT, True),
        ("abc", "ABC", STRICT, False),
        ("abc", "ABC", NOCASE, True),
        ("1", 1, STRICT, False),
        (None, None, STRICT, True),
        (None, [None], STRICT, True),
        (None, 0, STRICT, False),
        ([], {}, STRICT, False),
    ],
)
def test_call_match(got: object, expected: object, comparison: Comparison, match: bool) -> None:
    assert call_match(got, expected, comparison) is match


# --- the call harness, through real Python runs --------------------------------------------


@pytest.mark.parametrize(
    ("code", "fn_name", "args", "expected", "verdict", "detail"),
    [
        ("def add(a, b):\n    return a + b", "add", [1, 2], 3, A, ""),
        ("def add(a, b):\n    return a + b", "add", [1, 2], [3], A, ""),
        ("def add(a, b):\n    return a - b", "add", [1, 2], 3, WA, "expected '3', got '-1'"),
        ("class Solution:\n    def two(self, nums, t):\n        return [0, 1]", "two", [[2, 7], 9], [0, 1], A, ""),
        ("def f(x):\n    print('debug', x)\n    return x * 2", "f", [21], 42, A, ""),
        ("print('module-level noise')\ndef f():\n    return 'ok'", "f", [], "ok", A, ""),
        ("def f(grid):\n    return sum(map(sum, grid))", "f", [[[1, 2], [3, 4]]], 10, A, ""),
        ("def f(s):\n    return s[::-1]", "f", ["a'b\"c\\ü\n"], "\nü\\c\"b'a", A, ""),
        ("def f():\n    return (1, 2)", "f", [], [1, 2], A, ""),
        ("def f():\n    return {3}", "f", [], [3], A, ""),
        ("def f():\n    return {1: [2]}", "f", [], {"1": [2]}, A, ""),
        ("def f():\n    return None", "f", [], None, A, ""),
        ("def f():\n    return 0.1 + 0.2", "f", [], 0.3, A, ""),
        ("def f():\n    return True", "f", [], 1, WA, ""),
        ("def f():\n    return object()", "f", [], 1, RE, "not JSON data"),
        ("def f():\n    return 1 / 0", "f", [], 1, RE, "ZeroDivisionError"),
        ("def g():\n    return 1", "f", [], 1, RE, "function 'f' is not defined"),
        ("def f(a):\n    return a", "f", [], 1, RE, "TypeError"),
    ],
)
def test_call_harness(
    judge: LocalJudge, code: str, fn_name: str, args: list, expected: object, verdict: Verdict, detail: str
) -> None:
    report = judge.judge("python", code, Suite("call", (CallTest(args, expected),), fn_name=fn_name), FAST)
    [result] = report.tests
    assert (result.verdict, report.sandbox_error) == (verdict, None), report.to_dict()
    assert detail in result.detail


# --- verdicts of real runs ---------------------------------------------------------------------

ECHO = Suite("stdio", (StdioTest("7\n", "7"),))


@pytest.mark.parametrize(
    ("code", "suite", "limits", "verdicts", "detail"),
    [
        ("print(input())", ECHO, FAST, [A], ""),
        ("print(int(input()) + 1)", ECHO, FAST, [WA], "expected '7', got '8\\n'"),
        ("import sys\nsys.exit(3)", ECHO, FAST, [RE], "exit code 3"),
        ("raise ValueError('boom')", ECHO, FAST, [RE], "ValueError: boom"),
        ("import os, signal\nos.kill(os.getpid(), signal.SIGSEGV)", ECHO, FAST, [RE], "signal 11"),
        ("while True:\n    pass", ECHO, FAST, [TLE], ""),
        ("import time\ntime.sleep(60)", ECHO, FAST, [TLE], ""),
        # touched as it is made: its memory cgroup kills it (or, where the host refuses 10 GB at once, MemoryError)
        ("x = bytearray(10**10)", ECHO, FAST, [MLE], ""),
        ("x = bytearray(10**9)", ECHO, FAST, [MLE], "over the memory limit (512 MB)"),
        ("while True:\n    print('y' * 1000)", ECHO, Limits(time_s=1, output_bytes=10_000), [OLE], ""),
        ("def f(:\n    pass", ECHO, FAST, [CE], ""),
        # a correct program may mention memory on stderr: it is still accepted
        ("import sys\nprint('Cannot allocate memory', file=sys.stderr)\nprint(input())", ECHO, FAST, [A], ""),
        # assertion suites: AssertionError is a wrong answer, anything else a runtime error
        (
            "def add(a, b):\n    return a + b",
            Suite("assert", (AssertTest("assert add(1, 2) == 3"), AssertTest("assert add(2, 2) == 5"))),
            FAST,
            [A, WA],
            "",
        ),
        ("def add(a, b):\n    return a + b", Suite("assert", (AssertTest("add(1)"),)), FAST, [RE], "TypeError"),
        (
            "x = int(input())\nprint(x * x)",
            Suite("stdio", (StdioTest("3", "9"), StdioTest("0.5", "0.25"), StdioTest("-2", "4"))),
            FAST,
            [A, RE, A],
            "ValueError",
        ),
    ],
)
def test_verdicts_of_real_runs(
    judge: LocalJudge, code: str, suite: Suite, limits: Limits, verdicts: list[Verdict], detail: str
) -> None:
    report = judge.judge("python", code, suite, limits)
    assert [t.verdict for t in report.tests] == verdicts, report.to_dict()
    assert report.sandbox_error is None
    failed = [t for t in report.tests if t.verdict is not A]
    assert detail in (report.compile_error or (failed[0].detail if failed else ""))


# A shell reports a child's death by signal N as its own exit 128+N (go_test's binary runs under `sh -c`): a child
# stopped at its CPU limit is a time limit, whichever signal stopped it; a SIGKILL's code without the CPU spent (the
# shell's own `exit`) is the program's runtime error.
@pytest.mark.parametrize(
    ("code", "verdict"),
    [
        ("( while :; do :; done ); exit $?", TLE),  # SIGXCPU at the soft limit: 128 + 24
        ("( trap '' XCPU; while :; do :; done ); exit $?", TLE),  # ignored, as Go does: SIGKILL at the hard one
        ("exit 137", RE),
    ],
)
def test_a_child_stopped_at_its_cpu_limit_under_a_shell_is_a_time_limit(
    judge: LocalJudge, code: str, verdict: Verdict
) -> None:
    report = judge.judge("bash", code, ECHO, Limits(time_s=1, wall_s=10))  # the CPU limit ends it, not the wall
    assert [t.verdict for t in report.tests] == [verdict], report.to_dict()


def test_compile_error_is_reported_for_every_test(judge: LocalJudge) -> None:
    report = judge.judge("python", "def f(:\n    pass", Suite("stdio", (StdioTest("", ""),) * 3), FAST)
    assert [t.verdict for t in report.tests] == [CE] * 3
    assert "SyntaxError" in report.compile_error
    assert report.to_dict()["passed"] == 0 and report.pass_fraction == 0.0


def test_stop_on_first_failure_skips_the_rest() -> None:
    one_at_a_time = LocalJudge(Executor(parallel=1))
    suite = Suite("stdio", tuple(StdioTest(f"{i}\n", f"{i}") for i in (1, 2, 3, 4)))
    report = one_at_a_time.judge("python", "n = int(input())\nprint(n if n != 2 else 0)", suite, FAST, True)
    assert [t.verdict for t in report.tests] == [A, WA, SKIP, SKIP]
    everything = one_at_a_time.judge("python", "n = int(input())\nprint(n if n != 2 else 0)", suite, FAST)
    assert [t.verdict for t in everything.tests] == [A, WA, A, A]


def test_run_time_budget_skips_what_it_did_not_reach() -> None:
    suite = Suite("stdio", tuple(StdioTest("", "") for _ in range(6)))
    report = LocalJudge(Executor(parallel=1)).judge("python", "import time\ntime.sleep(0.4)", suite, Limits(total_s=1))
    verdicts = [t.verdict for t in report.tests]
    assert verdicts[0] is A and verdicts[-1] is SKIP, verdicts
    assert report.details.get("run_time_limit") is True


def test_every_test_of_a_large_run_gets_its_own_output(judge: LocalJudge) -> None:
    """A thousand quick tests in one run: no output may be lost or mixed up between them."""
    suite = Suite("stdio", tuple(StdioTest(f"{i} {i}\n", str(2 * i)) for i in range(1000)))
    report: JudgeReport = judge.judge("python", "print(sum(map(int, input().split())))", suite, FAST)
    wrong = {i: t.detail for i, t in enumerate(report.tests) if t.verdict is not A}
    assert wrong == {}
