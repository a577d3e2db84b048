"""Program suites through the real sandbox (LocalJudge): test code in the program's own language, run after it.

Each test-framework mode (pytest, go test with testify, GoogleTest, JUnit 5, Jest, React with Testing Library)
gets a solution and tests of which one passes and one fails: each test the reference declares is a verdict,
with its name; a test the solution declares for itself does not count. Then a compile error, a time limit, a
run that fails after its tests pass, D's unittest blocks, rackunit's stderr-only failures, and the per-test
report parsers (sandbox/test_reports.py) on their own.
"""

from __future__ import annotations

import pytest

from sandbox.executor import Limits
from sandbox.judge import LocalJudge, ProgramTest, Verdict
from sandbox.judge import TestSuite as Suite  # not `Test*`: pytest would try to collect it
from sandbox.test_reports import TestOutcome as Outcome  # not `Test*`: pytest would try to collect it
from sandbox.test_reports import declared, parse

LIMITS = Limits(time_s=10, wall_s=15, compile_s=60, total_s=120)
A, WA, RE, CE, TLE = (
    Verdict.ACCEPTED,
    Verdict.WRONG_ANSWER,
    Verdict.RUNTIME_ERROR,
    Verdict.COMPILE_ERROR,
    Verdict.TIME_LIMIT,
)

# language: (solution, with a test of its own that passes; the reference's tests: one passes, one fails)
FRAMEWORKS = {
    "pytest": (
        "def add(a, b):\n    return a + b\n\ndef test_mine():\n    pass\n",
        "def test_small():\n    assert add(1, 2) == 3\n\ndef test_wrong():\n    assert add(1, 2) == 4\n",
    ),
    "go_test": (
        'package main\n\nimport (\n\t"testing"\n\n\t"github.com/stretchr/testify/assert"\n)\n\n'
        "func Add(a, b int) int { return a + b }\n\nfunc TestMine(t *testing.T) {}\n",
        "func TestSmall(t *testing.T) { assert.Equal(t, 3, Add(1, 2)) }\n"
        "func TestWrong(t *testing.T) { assert.Equal(t, 4, Add(1, 2)) }\n",
    ),
    "gtest": (
        "#include <gtest/gtest.h>\nint add(int a, int b) { return a + b; }\nTEST(Mine, Passes) {}\n",
        "TEST(Add, Small) { EXPECT_EQ(3, add(1, 2)); }\nTEST(Add, Wrong) { EXPECT_EQ(4, add(1, 2)); }\n",
    ),
    "junit": (
        "import org.junit.jupiter.api.Test;\nimport static org.junit.jupiter.api.Assertions.*;\n\n"
        "class Adder {\n    static int add(int a, int b) { return a + b; }\n    @Test void mine() {}\n}\n",
        "public class AdderTest {\n    @Test void small() { assertEquals(3, Adder.add(1, 2)); }\n"
        "    @Test void wrong() { assertEquals(4, Adder.add(1, 2)); }\n}\n",
    ),
    "jest": (
        "function add(a: number, b: number): number { return a + b; }\ntest('mine', () => {});\n",
        "describe('add', () => {\n  test('small', () => { expect(add(1, 2)).toBe(3); });\n"
        "  test('wrong', () => { expect(add(1, 2)).toBe(4); });\n});\n",
    ),
    "react": (
        "import React from 'react';\nexport function Counter({ start }: { start: number }) {\n"
        "  const [n, setN] = React.useState(start);\n"
        "  return <button onClick={() => setN(n + 1)}>count {n}</button>;\n}\ntest('mine', () => {});\n",
        "import { render, screen, fireEvent } from '@testing-library/react';\n"
        "test('click', () => {\n  render(<Counter start={1} />);\n  fireEvent.click(screen.getByText('count 1'));\n"
        "  expect(screen.getByText('count 2')).toBeTruthy();\n});\n"
        "test('wrong', () => {\n  render(<Counter start={5} />);\n"
        "  expect(screen.queryByText('count 4')).toBeTruthy();\n});\n",
    ),
}
# The names each framework gives the passing and the failing test.
NAMES = {
    "pytest": ["test_small", "test_wrong"], "go_test": ["TestSmall", "TestWrong"],
    "gtest": ["Add.Small", "Add.Wrong"], "junit": ["small()", "wrong()"], "jest": ["small", "wrong"],
    "react": ["click", "wrong"],
}  # fmt: skip
# A test that never ends, per framework (appended to the solution).
SPINS = {
    "pytest": "def test_spin():\n    while True:\n        pass\n",
    "go_test": "func TestSpin(t *testing.T) {\n\tfor {\n\t\tassert.True(t, true)\n\t}\n}\n",
    "gtest": "TEST(Add, Spin) { for (volatile int i = 0;; i++) {} }\n",
    "junit": "public class SpinTest {\n    @Test void spin() { while (true) {} }\n}\n",
    "jest": "test('spin', () => { while (true) {} });\n",
    "react": "test('spin', () => { while (true) {} });\n",
}
BROKEN = {"go_test": "func TestX(t *testing.T) { undefined_name() }\n", "gtest": "TEST(A, B) { undefined_name(); }\n",
          "junit": "public class XTest {\n    @Test void x() { int y = \"s\"; }\n}\n"}  # fmt: skip


def program(tests: str) -> Suite:
    return Suite("program", (ProgramTest(tests),))


@pytest.fixture(scope="module")
def judge() -> LocalJudge:
    return LocalJudge()


@pytest.mark.parametrize("language", sorted(FRAMEWORKS))
def test_each_declared_test_is_a_verdict(judge: LocalJudge, language: str) -> None:
    solution, tests = FRAMEWORKS[language]
    report = judge.judge(language, solution, program(tests), LIMITS)
    assert report.compile_error is None and report.sandbox_error is None, report.to_dict()
    assert [(t.name, t.verdict) for t in report.tests] == list(zip(NAMES[language], [A, WA], strict=True)), report
    assert report.passed == 1


@pytest.mark.parametrize("language", sorted(FRAMEWORKS))
def test_a_test_that_never_ends_is_a_time_limit(judge: LocalJudge, language: str) -> None:
    solution, _ = FRAMEWORKS[language]
    report = judge.judge(language, solution, program(SPINS[language]), Limits(time_s=3, wall_s=4, compile_s=60))
    assert [t.verdict for t in report.tests] == [TLE], report.to_dict()


@pytest.mark.parametrize("language", sorted(BROKEN))
def test_compile_error(judge: LocalJudge, language: str) -> None:
    report = judge.judge(language, FRAMEWORKS[language][0], program(BROKEN[language]), LIMITS)
    assert [t.verdict for t in report.tests] == [CE] and report.compile_error, report.to_dict()


def test_a_run_that_fails_after_its_tests_pass_is_not_a_pass(judge: LocalJudge) -> None:
    """A solution that ends the process with an error once the tests are done (a module-level atexit)."""
    solution = "import atexit, os\natexit.register(lambda: os._exit(3))\n" + FRAMEWORKS["pytest"][0]
    report = judge.judge("pytest", solution, program("def test_small():\n    assert add(1, 2) == 3\n"), LIMITS)
    assert [(t.name, t.verdict) for t in report.tests] == [("test_small", A), ("(the whole run)", RE)], report


def test_without_a_framework_the_run_is_one_verdict(judge: LocalJudge) -> None:
    """MultiPL-E's D tests: unittest blocks, compiled with -unittest (d runs them as d_ut)."""
    solution = "long add(long a, long b) { return a + b; }\n"
    passing = judge.judge("d_ut", solution, program("unittest { assert(add(1, 2) == 3); }\n"), LIMITS)
    failing = judge.judge("d_ut", solution, program("unittest { assert(add(1, 2) == 4); }\n"), LIMITS)
    assert [t.verdict for t in passing.tests] == [A] and passing.tests[0].name == "", passing.to_dict()
    assert [t.verdict for t in failing.tests] == [WA], failing.to_dict()
    assert "unittest" in failing.tests[0].detail


def test_a_failure_reported_only_on_stderr_fails(judge: LocalJudge) -> None:
    """rackunit prints a failed check and exits 0: MultiPL-E fails a Racket run that writes to stderr."""
    solution = "#lang racket\n(require rackunit)\n(define (add a b) (+ a b))\n"
    right = judge.judge("racket", solution, program("(check-equal? (add 1 2) 3)\n"), LIMITS)
    wrong = judge.judge("racket", solution, program("(check-equal? (add 1 2) 4)\n"), LIMITS)
    assert [t.verdict for t in right.tests] == [A], right.to_dict()
    assert [t.verdict for t in wrong.tests] == [WA] and "FAILURE" in wrong.tests[0].detail, wrong.to_dict()


REPORTS = [
    ("pytest", "PASSED test_main.py::test_a\nFAILED test_main.py::T::test_b - assert 3 == 4\n",
     [Outcome("test_a", True), Outcome("test_b", False, "assert 3 == 4")]),
    ("pytest", "ERROR test_main.py::test_c - fixture 'x' not found\nXFAIL test_main.py::test_d\n",
     [Outcome("test_c", False, "fixture 'x' not found"), Outcome("test_d", False)]),  # XFAIL: failed, as expected
    ("go_test", "--- PASS: TestA (0.00s)\n    --- FAIL: TestA/sub (0.00s)\n--- FAIL: TestB (0.01s)\n",
     [Outcome("TestA", True), Outcome("TestB", False)]),
    ("gtest", "[       OK ] S.A (0 ms)\n[  FAILED  ] S.B (1 ms)\n[  FAILED  ] 1 test, listed below:\n"
     "[  FAILED  ] S.B\n",
     [Outcome("S.A", True), Outcome("S.B", False), Outcome("S.B", False)]),  # every report kept
    ("junit", "│  └─ T ✔\n│     ├─ a() ✔\n│     └─ b() ✘ expected: <4> but was: <3>\n└─ JUnit Vintage ✔\n",
     [Outcome("a()", True), Outcome("b()", False, "expected: <4> but was: <3>")]),
    ("jest", "  add\n    ✓ adds (2 ms)\n    ✕ fails on purpose (1 ms)\n  ✓ top level\n",
     [Outcome("adds", True), Outcome("fails on purpose", False), Outcome("top level", True)]),
    ("jest", "Tests: 0 total\n", []),
]  # fmt: skip


@pytest.mark.parametrize(("report", "output", "expected"), REPORTS)
def test_report_parsers(report: str, output: str, expected: list[Outcome]) -> None:
    assert parse(report, output) == expected


DECLARED = [  # (framework, the reference's test code, the tests it declares as the framework reports them)
    ("pytest", "def test_a():\n    pass\nclass TestB:\n    def test_c(self):\n        pass\ndef helper():\n    pass\n",
     ["test_a", "test_c"]),
    ("go_test", "func TestA(t *testing.T) {}\nfunc TestB(tb *testing.T) {}\nfunc helper(t *testing.T) {}\n",
     ["TestA", "TestB"]),
    ("gtest", "TEST(S, A) {}\nTEST_F(Fixture, B) {}\nTEST(S, DISABLED_C) {}\n", ["S.A", "Fixture.B"]),
    ("gtest", "TEST_P(S, A) {}\n", None),  # parametrized: reported as Prefix/S.A/0, not foreseen
    ("junit", "@Test void a() {}\n@Test\n@Timeout(5)\npublic void b() {}\nvoid helper() {}\n", ["a()", "b()"]),
    ("junit", "@ParameterizedTest\n@ValueSource(ints = {1})\nvoid a(int x) {}\n", None),
    ("jest", "describe('add', () => {\n  test('adds', () => {});\n  it(\"it's\", () => {});\n"
     "  test.skip('later', () => {});\n  xit('never', () => {});\n});\n", ["adds", "it's"]),
    ("jest", "test.each([[1, 2]])('adds %i', (a, b) => {});\n", None),
    ("jest", "describe('nothing here', () => {});\n", None),
]  # fmt: skip


@pytest.mark.parametrize(("report", "code", "expected"), DECLARED)
def test_declared_tests_are_read_from_the_reference(report: str, code: str, expected: list[str] | None) -> None:
    assert declared(report, code) == expected
