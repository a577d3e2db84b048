"""Judge a program against a test suite: run it in the sandbox, compare outputs outside it.

Three kinds of suites, as RL code data ships them:
- stdio (APPS, CodeContests, TACO, LiveCodeBench, Codeforces): stdin in, stdout compared
  token by token with whitespace normalised, floats within a tolerance, optionally
  case-insensitive;
- call (APPS/TACO `fn_name`, LeetCode): call a function (or a method of `Solution`) with
  JSON arguments and compare the returned value as JSON; Python only;
- assert (HumanEval `check(candidate)`, MBPP `test_list`, MultiPL-E's Python tests): a test is a piece of code run
  in a process of its own that calls the solution's, in another, on plain data (sandbox/runner.py's run_apart); it
  passes when that process ends well, having written this run's marker after the test's last line. Python only;
- program (MultiPL-E's tests, HumanEval-X's, a pytest, JUnit, Jest, go test or GoogleTest file's
  tests): test code in the solution's own language, any language (Python's runs as an assert test's), appended to
  the solution and run as one program. Where the language's framework reports each test (sandbox/test_reports.py), each
  test the reference's code declares is a verdict; else the run is one, passed when the program
  exits cleanly (and, for languages whose test libraries report failures only on stderr, writes
  nothing there, as MultiPL-E judges them), having printed the marker its tests print once they have all run
  (Language.tests_done), where the language has a place for one.
"""

from __future__ import annotations

import enum
import hmac
import json
import math
import re
import secrets
from collections import Counter
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, replace
from typing import Any, Literal, Protocol

from sandbox.executor import Cancel, Execution, Executor, Limits, ProcessResult, TestInput
from sandbox.languages import Language
from sandbox.test_reports import TestOutcome, declared, parse, reported_name

DETAIL_CHARS = 300
# What runtimes print when an allocation fails (besides the cgroup's own OOM kills).
_MEMORY_MARKERS = (
    "MemoryError",
    "std::bad_alloc",
    "java.lang.OutOfMemoryError",
    "memory allocation of",
    "JavaScript heap out of memory",
    "runtime: out of memory",
    "fatal error: out of memory",
    "Cannot allocate memory",
    "Native memory allocation",  # the JVM's own malloc failing ("insufficient memory for the Java Runtime")
)


# Keys the markers program suites print once their tests have run (done_marker).
_MARKER_KEY = secrets.token_bytes(32)


def done_marker(language: str, program: str, tests: str) -> str:
    """What a program suite's own code prints once its tests have run: a secret of this program and its tests alone
    (an HMAC under this process's key), so the same program is the same source (its compile is kept:
    sandbox/compile_cache.py), and a marker seen in one run's output (a forged run's details) passes no other."""
    digest = hmac.new(_MARKER_KEY, f"{language}\0{program}\0{tests}".encode(errors="surrogatepass"), "sha256")
    return f"judge-done-{digest.hexdigest()[:32]}"


class Verdict(enum.StrEnum):
    ACCEPTED = "accepted"
    WRONG_ANSWER = "wrong_answer"
    TIME_LIMIT = "time_limit"
    MEMORY_LIMIT = "memory_limit"
    RUNTIME_ERROR = "runtime_error"
    COMPILE_ERROR = "compile_error"
    OUTPUT_LIMIT = "output_limit"
    SKIPPED = "skipped"  # not run: an earlier failure stopped the run, or the run's budget ran out


@dataclass(frozen=True)
class StdioTest:
    input: str
    output: str


@dataclass(frozen=True)
class CallTest:
    args: list[Any]
    expected: Any


@dataclass(frozen=True)
class AssertTest:
    code: str  # run apart from the solution, with its names (and `__judge__`: sandbox/runner.py's Harness)


@dataclass(frozen=True)
class ProgramTest:
    code: str  # test code in the program's language, run after the solution as one program
    # The code the program continues (MultiPL-E's, HumanEval-X's prompt): its open function is what compiled tests
    # apart from the program call (Language.apart_split)
    prompt: str | None = None


@dataclass(frozen=True)
class Comparison:
    float_tolerance: float = 1e-6  # absolute or relative, whichever is looser
    case_sensitive: bool = True


@dataclass(frozen=True)
class TestSuite:
    kind: Literal["stdio", "call", "assert", "program"]
    tests: tuple[StdioTest | CallTest | AssertTest | ProgramTest, ...]  # program: exactly one
    fn_name: str | None = None
    comparison: Comparison = Comparison()
    # Written before the program compiles (sandbox/files.py's paths): input files the tests read, headers.
    files: Mapping[str, bytes] = field(default_factory=dict)


@dataclass
class TestVerdict:
    verdict: Verdict
    time_s: float = 0.0
    detail: str = ""
    name: str = ""  # as the test framework reports it (program suites)


@dataclass
class JudgeReport:
    tests: list[TestVerdict]
    compile_error: str | None = None
    sandbox_error: str | None = None
    details: dict[str, Any] = field(default_factory=dict)

    @property
    def passed(self) -> int:
        return sum(t.verdict is Verdict.ACCEPTED for t in self.tests)

    @property
    def pass_fraction(self) -> float:
        return self.passed / len(self.tests) if self.tests else 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "passed": self.passed,
            "total": len(self.tests),
            "compile_error": self.compile_error,
            "sandbox_error": self.sandbox_error,
            "tests": [asdict(t) | {"verdict": str(t.verdict)} for t in self.tests],
        } | self.details


class JudgeBackend(Protocol):
    """Where judging happens: in this process (LocalJudge) or a sandbox service (RemoteJudge)."""

    def judge(
        self, language: str, code: str, suite: TestSuite, limits: Limits, stop_on_first_failure: bool = False
    ) -> JudgeReport: ...


class LocalJudge:
    """Judges in this process, with this host's sandbox."""

    def __init__(self, executor: Executor | None = None) -> None:
        self.executor = executor or Executor()

    def judge(
        self,
        language: str,
        code: str,
        suite: TestSuite,
        limits: Limits,
        stop_on_first_failure: bool = False,
        cancel: Cancel | None = None,
    ) -> JudgeReport:
        if suite.kind == "program":
            lang = self.executor.language(language)
            if not lang.python_zygote:
                return self._judge_program(lang, code, suite, limits, cancel)
            # Python's test code runs as an assert test's: apart from the program, on plain data (runner.py's Harness).
            suite = TestSuite("assert", (AssertTest(suite.tests[0].code),))
        # Printed by the judge's own code after the solution's: a fresh secret per run, so a
        # solution that exits early (sys.exit(0) before the asserts) or prints a forged result fails.
        marker = f"\n<<<judge-{secrets.token_hex(8)}>>>"
        inputs = [_test_input(suite, test, marker) for test in suite.tests]

        def passed(index: int, result: ProcessResult) -> bool:
            return _verdict(suite, suite.tests[index], result, marker).verdict is Verdict.ACCEPTED

        # Only a run that may stop early waits on each verdict: the others judge once it is over.
        stop = passed if stop_on_first_failure else None
        execution = self.executor.run(language, code, inputs, limits, stop, cancel, files=suite.files)
        verdicts = [
            None if result is None else _verdict(suite, test, result, marker)
            for test, result in zip(suite.tests, execution.tests, strict=True)
        ]
        report = _report(execution, verdicts)
        report.details["isolation"] = self.executor.level.name
        return report

    def _judge_program(
        self, lang: Language, code: str, suite: TestSuite, limits: Limits, cancel: Cancel | None
    ) -> JudgeReport:
        [test] = suite.tests
        assert isinstance(test, ProgramTest)
        marker = done_marker(lang.name, code, test.code)
        language: str | Language
        tests_binary = None
        if lang.apart_harness:  # the tests in a process of their own, the program as Python in another
            harness = lang.apart_harness.replace("{tests}", repr(test.code)).replace("{marker}", repr(marker))
            language, program, inputs, done = "python", code, [TestInput(python_code=harness)], marker
            run_limits = lang.fit(limits)
        elif (units := _compiled_apart(lang, code, test)) is not None:  # two binaries (run_suite_apart)
            program, tests_unit = units
            built = self.executor.build(lang.tests_builder(), tests_unit, limits)
            if not built.ok:  # the reference's tests, not the program: no verdict
                why = _tail(str(built.result.get("stderr", "")))
                return JudgeReport([TestVerdict(Verdict.SKIPPED)], sandbox_error=f"{_UNBUILT}: {why}")
            tests_binary = built.artifacts["tests"][1]
            language, inputs, done = lang.program_builder(), [TestInput(tests_apart=("", marker))], marker
            run_limits = limits
        elif lang.apart_tests and lang.apart_split is None and (lang.apart_when is None or lang.apart_when(test.code)):
            # the tests and the program each in a process (below)
            program, tests_apart = _with_its_closer(code, test.code)
            language, inputs, done = lang.program_builder(), [TestInput(tests_apart=(tests_apart, marker))], marker
            run_limits = limits
        else:  # the tests after the program, as one program
            tests = lang.with_tests_done(test.code, marker)
            # In the program's process, its tests must not be tried in copies of it (answers kept from the one that
            # passed): one process, where the language's runtime allows.
            run_limits = replace(limits, single_process=not lang.forks)
            language, program, inputs = lang, f"{code}\n{tests or test.code}\n", [TestInput()]
            done = marker if tests else None
        execution = self.executor.run(
            language, program, inputs, run_limits, cancel=cancel, files=suite.files, tests_binary=tests_binary
        )
        result = execution.tests[0]
        report = _report(execution, [None if result is None else TestVerdict(Verdict.SKIPPED)])
        if result is not None and report.compile_error is None:
            # Run apart, the tests' own output shares a stdout and a stderr with the program, which could print a pass
            # for a test whose real report never came: per-test verdicts only from the report the runner forwards,
            # else one verdict, from the tests' exit status and their word that they all ran.
            reports_in = _tests_report(result, marker) if inputs[0].tests_apart is not None else None
            judged_as = replace(lang, report="") if reports_in == "" else lang
            report.tests = program_verdicts(judged_as, test.code, result, done, reports_in)
        # Never shown (a compiler echoes the line it fails on): a policy that reads details would learn to print it.
        hidden = "<tests-done marker>"
        for verdict in report.tests:
            verdict.detail = verdict.detail.replace(marker, hidden)
        if report.compile_error is not None:
            report.compile_error = report.compile_error.replace(marker, hidden)
        report.details["isolation"] = self.executor.level.name
        return report


_UNBUILT = "the reference's tests did not compile apart from the program"


def _compiled_apart(lang: Language, code: str, test: ProgramTest) -> tuple[str, str] | None:
    """(the program's source with its server, the tests' source) where the language compiles its tests apart and
    the prompt's entry point can be served (Language.apart_split); else None: the tests run after the program."""
    if lang.apart_split is None or test.prompt is None:
        return None
    return lang.apart_split(test.prompt, *_with_its_closer(code, test.code))


# MultiPL-E's tests open by closing the prompt's function where the completion leaves it open (bash's `}`).
_LEADING_CLOSER = re.compile(r"\A\s*\}[ \t]*(?:\n|\Z)")


def _with_its_closer(code: str, tests: str) -> tuple[str, str]:
    """(program, tests) for a program suite run apart: a brace that opens the tests and closes the program's
    function goes with the program."""
    opened = _LEADING_CLOSER.match(tests)
    return (f"{code}\n}}\n", tests[opened.end() :]) if opened else (code, tests)


# On stderr: Python's traceback of a failed assert, or of a value the program gave a test that is not plain data
# (sandbox/runner.py's NotPlainData).
_PYTHON_ASSERTION = re.compile("AssertionError|NotPlainData")
# How test libraries say a check failed, on stdout or stderr (assert, AssertError, Assertion failure, FAIL, Failure).
_TEST_FAILURE = re.compile(r"assert|\bfail", re.IGNORECASE)


def _failure(
    result: ProcessResult, failed_check: re.Pattern[str] | None, in_stdout: bool = False
) -> TestVerdict | None:
    """The verdict of a run that did not end cleanly (None when it did): a wrong answer when its stderr (and its
    stdout, `in_stdout`) matches `failed_check`, else a limit or runtime error."""
    time_s = result.wall_s
    if result.status == "output_limit":
        return TestVerdict(Verdict.OUTPUT_LIMIT, time_s)
    if result.status == "timeout":
        return TestVerdict(Verdict.TIME_LIMIT, time_s)
    if result.ok:
        return None
    if result.oom_killed or result.memory_exhausted or any(text in result.stderr for text in _MEMORY_MARKERS):
        return TestVerdict(Verdict.MEMORY_LIMIT, time_s, _tail(result.stderr))
    searched = f"{result.stderr}\n{result.stdout}" if in_stdout else result.stderr
    if failed_check is not None and failed_check.search(searched):
        return TestVerdict(Verdict.WRONG_ANSWER, time_s, _tail(result.stderr or result.stdout))
    how = f"signal {result.signal}" if result.status == "signaled" else f"exit code {result.exit_code}"
    return TestVerdict(Verdict.RUNTIME_ERROR, time_s, f"{how}: {_tail(result.stderr)}".rstrip(": "))


def _tests_finished(lang: Language, tests_code: str, result: ProcessResult, done: str | None) -> bool:
    """Whether the run shows that its tests all ran: the marker `done` they print after them, and the summary the
    language's test library prints (Language.tests_summary) when the tests use that library (LuaUnit's run of zero
    tests passes). The marker as the source quotes it is the tests' code printed as text, never run (a PHP answer
    ending in `?>`, Perl's `__DATA__`, an unterminated heredoc): not a sign they ran."""
    output = result.stdout + result.stderr
    if done is not None and (done not in output or re.search(f"[\"']{re.escape(done)}", output)):
        return False
    if lang.tests_summary is not None and lang.tests_summary[0] in tests_code:
        return re.search(lang.tests_summary[1], output) is not None
    return True


def _tests_report(result: ProcessResult, done: str) -> str:
    """What the tests run apart reported of each test (empty: nothing): the text after the marker, which only the runner
    writes, once the tests and the program have ended (runner.py run_suite_apart)."""
    _, found, after = result.stdout.rpartition(done)
    return after.strip() and after if found else ""


def program_verdicts(
    lang: Language, tests_code: str, result: ProcessResult, done: str | None = None, reports_in: str | None = None
) -> list[TestVerdict]:
    """The verdicts of one run of a program suite: one per test the framework reports and `tests_code` declares
    (a test the solution adds for itself is not counted), else one for the whole run. With `done` (what the tests
    print once they have all run: Language.tests_done), a run that exits cleanly without it fails whole, whatever
    it printed of its tests. The reports are read from `reports_in` where given (tests run apart: _tests_report;
    empty, one verdict for the whole run), else from the whole output."""
    whole = _failure(result, _TEST_FAILURE, in_stdout=True) or TestVerdict(Verdict.ACCEPTED, result.wall_s)
    if whole.verdict is Verdict.ACCEPTED and not _tests_finished(lang, tests_code, result, done):
        return [TestVerdict(Verdict.WRONG_ANSWER, result.wall_s, "the program ended before its tests did")]
    if whole.verdict is Verdict.ACCEPTED and lang.stderr_fails and result.stderr.strip():
        whole = TestVerdict(Verdict.WRONG_ANSWER, result.wall_s, f"wrote to stderr: {_tail(result.stderr)}")
    output = f"{result.stdout}\n{result.stderr}"
    if whole.verdict is Verdict.ACCEPTED and lang.failure_pattern and re.search(lang.failure_pattern, output, re.M):
        whole = TestVerdict(Verdict.WRONG_ANSWER, result.wall_s, f"a check failed: {_tail(output)}")
    if not lang.report or whole.verdict in (Verdict.TIME_LIMIT, Verdict.OUTPUT_LIMIT, Verdict.MEMORY_LIMIT):
        return [whole]
    reports = parse(lang.report, output if reports_in is None else reports_in)
    names = declared(lang.report, tests_code)
    verdicts = _declared_verdicts(lang.report, names, reports) if names else _named_verdicts(reports, tests_code)
    if not verdicts and whole.verdict is Verdict.ACCEPTED:  # the framework never ran them: the program ended first
        return [TestVerdict(Verdict.WRONG_ANSWER, result.wall_s, "none of the tests reported a result")]
    if not verdicts:
        return [whole]
    if whole.verdict is not Verdict.ACCEPTED and all(v.verdict is Verdict.ACCEPTED for v in verdicts):
        verdicts.append(replace(whole, name="(the whole run)"))  # it failed outside the tests: not a pass
    return verdicts


def _declared_verdicts(report: str, names: list[str], reports: list[TestOutcome]) -> list[TestVerdict]:
    """A verdict for each test the reference declares (test_reports.declared): it passes when the run reported it,
    as many times as it is declared (each case of a parametrized one), and every report says it passed. A test
    skipped, aborted, expected to fail, filtered out or reported twice (a forged pass printed beside the real
    result) fails; tests the program declares for itself count for nothing."""
    verdicts = []
    for name, declared_times in Counter(names).items():
        own = [o for o in reports if reported_name(report, o.name) == name]
        times = Counter(o.name for o in own)
        failed = next((o for o in own if not o.passed), None)
        if not own:
            verdicts.append(TestVerdict(Verdict.WRONG_ANSWER, detail="the run reported no result for it", name=name))
        elif failed is not None:
            verdicts.append(TestVerdict(Verdict.WRONG_ANSWER, detail=_tail(failed.detail), name=name))
        elif any(count != declared_times for count in times.values()):
            detail = f"reported {max(times.values())} times where it is declared {declared_times}"
            verdicts.append(TestVerdict(Verdict.WRONG_ANSWER, detail=detail, name=name))
        else:
            verdicts.append(TestVerdict(Verdict.ACCEPTED, name=name))
    return verdicts


def _named_verdicts(reports: list[TestOutcome], tests_code: str) -> list[TestVerdict]:
    """Where the reference's declarations cannot be read: a verdict for each reported name whose words all appear in
    the reference's tests, failed by any report of it that failed."""
    verdicts: dict[str, TestVerdict] = {}
    for outcome in reports:
        if not _declared(outcome, tests_code) or (outcome.passed and outcome.name in verdicts):
            continue
        verdict = Verdict.ACCEPTED if outcome.passed else Verdict.WRONG_ANSWER
        verdicts[outcome.name] = TestVerdict(verdict, detail=_tail(outcome.detail), name=outcome.name)
    return list(verdicts.values())


def _declared(outcome: TestOutcome, tests_code: str) -> bool:
    """Whether every word of the test's name appears in the reference's test code."""
    words = re.findall(r"\w+", outcome.name.partition("[")[0])
    return bool(words) and all(re.search(rf"\b{re.escape(word)}\b", tests_code) for word in words)


def _test_input(suite: TestSuite, test: StdioTest | CallTest | AssertTest, marker: str) -> TestInput:
    if isinstance(test, StdioTest):
        return TestInput(stdin=test.input)
    if isinstance(test, AssertTest):
        return TestInput(python_code=f"{test.code}\n__judge__.done({marker!r})\n")
    return TestInput(python_call=(suite.fn_name or "", list(test.args), marker))


def _verdict(
    suite: TestSuite, test: StdioTest | CallTest | AssertTest, result: ProcessResult, marker: str
) -> TestVerdict:
    time_s = result.wall_s
    if (failed := _failure(result, _PYTHON_ASSERTION if isinstance(test, AssertTest) else None)) is not None:
        return failed
    if isinstance(test, AssertTest):
        if result.stdout.endswith(marker):
            return TestVerdict(Verdict.ACCEPTED, time_s)
        return TestVerdict(Verdict.WRONG_ANSWER, time_s, "the program ended before its tests did")
    if isinstance(test, StdioTest):
        if stdio_match(result.stdout, test.output, suite.comparison):
            return TestVerdict(Verdict.ACCEPTED, time_s)
        return TestVerdict(Verdict.WRONG_ANSWER, time_s, _mismatch(result.stdout, test.output))
    return _call_verdict(test, result, suite.comparison, time_s, marker)


def _call_verdict(
    test: CallTest, result: ProcessResult, comparison: Comparison, time_s: float, marker: str
) -> TestVerdict:
    _, found, payload = result.stdout.rpartition(marker)
    if not found:
        return TestVerdict(Verdict.RUNTIME_ERROR, time_s, "the function returned no printable result")
    try:
        got = json.loads(payload)
    except json.JSONDecodeError:
        return TestVerdict(Verdict.RUNTIME_ERROR, time_s, "the function's result is not JSON-serialisable")
    if call_match(got, test.expected, comparison):
        return TestVerdict(Verdict.ACCEPTED, time_s)
    return TestVerdict(Verdict.WRONG_ANSWER, time_s, _mismatch(json.dumps(got), json.dumps(test.expected)))


def stdio_match(got: str, expected: str, comparison: Comparison) -> bool:
    """Tokens equal after whitespace normalisation; numeric tokens within the tolerance."""
    if got == expected:
        return True
    got_tokens, want_tokens = got.split(), expected.split()
    if len(got_tokens) != len(want_tokens):
        return False
    return all(_token_match(g, w, comparison) for g, w in zip(got_tokens, want_tokens, strict=True))


def _token_match(got: str, want: str, comparison: Comparison) -> bool:
    """Equal tokens; numbers equal as numbers: integers exactly, at any size; within the tolerance only where either
    side is written as a float (a float tolerance on integers would pass 500000000000 for 500000500000)."""
    if got == want or (not comparison.case_sensitive and got.lower() == want.lower()):
        return True
    a, b = _number(got), _number(want)
    if a is None or b is None:
        return False
    return _numbers_match(a, b, comparison.float_tolerance)


_INTEGER = re.compile(r"[+-]?\d+")
_FLOAT = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|[+-]?(?:nan|inf|infinity)", re.IGNORECASE)


def _number(token: str) -> int | float | None:
    """A token written as a number: an int (exact, any size) or a float; None otherwise (`1_000` is text)."""
    if _INTEGER.fullmatch(token):
        return int(token)
    if _FLOAT.fullmatch(token):
        return float(token)
    return None


def _numbers_match(a: int | float, b: int | float, tolerance: float) -> bool:
    """Two integers compare exactly; where either is a float, within `tolerance` (absolute or relative, whichever is
    looser; 0: exactly, compared as Python compares an int and a float, without rounding the int)."""
    if isinstance(a, int) and isinstance(b, int):
        return a == b
    if a == b:
        return True
    try:
        return tolerance > 0 and _close(float(a), float(b), tolerance)
    except OverflowError:  # an integer beyond a float's range is near no float
        return False


def call_match(got: Any, expected: Any, comparison: Comparison) -> bool:
    """JSON values equal (floats within tolerance); like APPS, `[x]` also matches a returned `x`."""
    if _json_equal(got, expected, comparison):
        return True
    return isinstance(expected, list) and len(expected) == 1 and _json_equal(got, expected[0], comparison)


def _json_equal(a: Any, b: Any, comparison: Comparison) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return _numbers_match(a, b, comparison.float_tolerance)
    if isinstance(a, str) and isinstance(b, str):
        return a == b or (not comparison.case_sensitive and a.lower() == b.lower())
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_json_equal(x, y, comparison) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_json_equal(a[k], b[k], comparison) for k in a)
    return a == b


def _close(a: float, b: float, tolerance: float) -> bool:
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return abs(a - b) <= tolerance * max(1.0, abs(b))


def _report(execution: Execution, verdicts: list[TestVerdict | None]) -> JudgeReport:
    compile_result = execution.compile
    if compile_result is not None and not compile_result.ok:
        reason = "compile time limit" if compile_result.status == "timeout" else _tail(compile_result.stderr)
        return compile_error_report(len(verdicts), reason or "compile failed")
    report = JudgeReport(
        tests=[v if v is not None else TestVerdict(Verdict.SKIPPED) for v in verdicts],
        sandbox_error=execution.sandbox_error,
    )
    if execution.timed_out:
        report.details["run_time_limit"] = True
    if execution.leftover_processes:
        report.details["leftover_processes_killed"] = execution.leftover_processes
    report.details |= execution.details
    return report


def compile_error_report(count: int, reason: str) -> JudgeReport:
    """The report of a program that did not compile (or is over the source limit): every test a compile error."""
    return JudgeReport(tests=[TestVerdict(Verdict.COMPILE_ERROR) for _ in range(count)], compile_error=reason)


def _tail(text: str) -> str:
    text = text.strip()
    return text if len(text) <= DETAIL_CHARS else "..." + text[-DETAIL_CHARS:]


def _mismatch(got: str, expected: str) -> str:
    return f"expected {_head(expected)!r}, got {_head(got)!r}"


def _head(text: str) -> str:
    return text if len(text) <= 80 else text[:77] + "..."
