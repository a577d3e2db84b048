"""Code grading throughput: our sandboxed judge vs a plain unsandboxed subprocess per test.

The same suites (bench/code_problems.py: 26 small Python problems, stdin/stdout and
function-call, 10 generated tests each) are graded
  (a) by our judge: LocalJudge in this process, each submission compiled once and its
      tests forked inside one bubblewrap + cgroup sandbox, forked from the warm zygote
      (sandbox/zygote.py), and again with a `bwrap` and interpreter started per submission
      (SANDBOX_ZYGOTE=0); and, with --http, through `sandbox serve` on loopback with RemoteJudge;
  (b) by the baseline: one plain unsandboxed `subprocess.run([sys.executable, "-c", ...])`
      per test, the way open-r1 judges locally, no isolation at all; and a stricter one
      with `-S` (no site import: the cheapest interpreter start there is).
Both run `--threads` at a time (default: one per core) and decide pass/fail with the same
comparison (sandbox/judge.py's stdio_match and call_match); their verdicts must agree.
Prints tests/s for each and the ratio ours / baseline.

    .venv/bin/python bench/code_throughput.py [--rounds 3] [--http] [--kind stdio|call|assert|pytest]

`--kind` grades one kind of test alone: `stdio` or `call` (function calls, in the program's process), or `assert`:
the function-call problems whose answer is a top-level function, each test as an MBPP-style `assert f(...) == ...`,
which runs in a process of its own apart from the program's (sandbox/runner.py's run_apart: two processes a test),
against the same asserts after the program in a plain interpreter; or `pytest`: the same as a pytest file that
imports the program as `solution` (KodCode's shape), which pytest runs in the test's process apart from the
program's, against `python -m pytest` on solution.py and the file in a directory (no `-S` baseline: pytest needs
site-packages).

With --languages SPEC (`all`, `default` or comma-separated ids, as SANDBOX_LANGUAGES takes) it instead
prints a table, one row per language that runs stdin/stdout programs (the test-framework modes and
sql, tests/test_sandbox_languages.py's NOT_STDIO, are left out, and languages whose toolchain is
missing, saying so): each language's program from tests/test_sandbox_languages.py (reads `a b`,
prints a + b) runs --language-tests stdin tests
(20; a tenth of them, at least 2, where the runtime's start-up is a second or more: kotlin_script,
clojure; half on the JVM and other runtimes with a start-up allowance: java, scala, r, csharp,
racket, elixir) in one sandbox run (Executor, `--threads` tests at a time), then again, identical.
Columns, for compiled languages: a sandbox run with no tests, the first time (compiling: its wall time) and
again (the compile cache's hit, sandbox/compile_cache.py: the kept output unpacked instead); compiling once
outside any sandbox with the same argv in a temp dir. Then tests/s in the sandbox over both runs with
tests (compiles cached, so with the sandbox's set-up); tests/s of a plain subprocess per test running the
same compiled program or interpreter with the Language's run argv, `--threads` at a time, over two passes;
and their ratio sandbox / plain (above 1: the sandbox is faster). Progress goes to stderr.

    .venv/bin/python bench/code_throughput.py --languages all [--language-tests 20]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/test_sandbox_languages.py
from code_problems import make_suites

from reward_api.local import LocalServer
from sandbox.client import RemoteJudge
from sandbox.compile_cache import CompileCache
from sandbox.executor import Executor, Limits, TestInput
from sandbox.judge import (
    AssertTest,
    CallTest,
    Comparison,
    JudgeBackend,
    LocalJudge,
    ProgramTest,
    StdioTest,
    Verdict,
    call_match,
    stdio_match,
)
from sandbox.judge import TestSuite as Suite
from sandbox.languages import Language, parse_languages
from sandbox.test_reports import declared, parse
from tests.test_sandbox_languages import NOT_STDIO, PROGRAMS

LIMITS = Limits(time_s=2)
RESULT_MARKER = "\n<<<baseline-result>>>"


def plain_call(fn_name: str, args: list, marker: str) -> str:
    """What a plain interpreter runs after the program for a function-call test: the call, then the marker and the
    result as JSON (as the sandbox runner's run_call writes them)."""
    return (
        f"import json\nfunction = globals().get({fn_name!r}) or getattr(globals()['Solution'](), {fn_name!r})\n"
        f"print({marker!r} + json.dumps(function(*json.loads({json.dumps(args)!r})), default=list), end='')\n"
    )


BASELINE = "baseline (plain subprocess)"
Work = list[tuple[str, Suite]]  # (code, suite) per submission


def ours(backend: JudgeBackend, work: Work, threads: int) -> list[bool]:
    """One judge call per submission, `threads` submissions at a time."""

    def grade(item: tuple[str, Suite]) -> list[bool]:
        language = "pytest" if item[1].kind == "program" else "python"
        report = backend.judge(language, item[0], item[1], LIMITS)
        return [t.verdict is Verdict.ACCEPTED for t in report.tests]

    with ThreadPoolExecutor(threads) as pool:
        return [ok for oks in pool.map(grade, work) for ok in oks]


def baseline(work: Work, threads: int, flags: tuple[str, ...] = ()) -> list[bool]:
    """One unsandboxed interpreter per test (per pytest file), `threads` at a time."""
    tests = [(code, suite, test) for code, suite in work for test in suite.tests]
    with ThreadPoolExecutor(threads) as pool:
        return [ok for oks in pool.map(lambda t: _run_plain(*t, flags), tests) for ok in oks]


def as_asserts(suite: Suite) -> Suite:
    """A function-call suite's tests as assert tests (MBPP's shape)."""
    asserts = [AssertTest(f"assert {suite.fn_name}(*{test.args!r}) == {test.expected!r}") for test in suite.tests]
    return Suite("assert", tuple(asserts))


def as_pytest_file(suite: Suite) -> Suite:
    """A function-call suite's tests as a pytest file that imports the program as `solution` (KodCode's shape)."""
    tests = "".join(
        f"\n\ndef test_{i}():\n    assert {suite.fn_name}(*{test.args!r}) == {test.expected!r}\n"
        for i, test in enumerate(suite.tests)
    )
    return Suite("program", (ProgramTest(f"from solution import {suite.fn_name}\n{tests}"),))


def verdict_count(suite: Suite) -> int:
    """The verdicts a suite gets: one per test, one per test function of a pytest file."""
    return sum(len(declared("pytest", t.code) or []) if isinstance(t, ProgramTest) else 1 for t in suite.tests)


def defines(code: str, name: str | None) -> bool:
    """Whether `code` defines `name` as a top-level function (not a method of `Solution`)."""
    return name is not None and re.search(rf"^def {re.escape(name)}\(", code, re.MULTILINE) is not None


def _run_plain(
    code: str, suite: Suite, test: StdioTest | CallTest | AssertTest | ProgramTest, flags: tuple[str, ...]
) -> list[bool]:
    if isinstance(test, ProgramTest):
        return _run_pytest_file(code, test.code)
    return [_run_one_plain(code, suite, test, flags)]


def _run_pytest_file(code: str, tests: str) -> list[bool]:
    """`python -m pytest` on solution.py and the test file in a directory of their own: each test's verdict."""
    with tempfile.TemporaryDirectory(prefix="bench-pytest-") as directory:
        Path(directory, "solution.py").write_text(code)
        Path(directory, "test_main.py").write_text(tests)
        argv = [sys.executable, "-m", "pytest", "-q", "-rA", "-p", "no:cacheprovider", "test_main.py"]
        done = subprocess.run(argv, cwd=directory, capture_output=True, text=True, timeout=PLAIN_TIMEOUT_S)
    outcomes = {outcome.name: outcome.passed for outcome in parse("pytest", done.stdout)}
    return [outcomes.get(name, False) for name in declared("pytest", tests) or []]


def _run_one_plain(code: str, suite: Suite, test: StdioTest | CallTest | AssertTest, flags: tuple[str, ...]) -> bool:
    if isinstance(test, AssertTest):
        program = f"{code}\n{test.code}\n"
    elif isinstance(test, CallTest):
        program = code + "\n" + plain_call(suite.fn_name or "", test.args, RESULT_MARKER)
    else:
        program = code
    stdin = test.input if isinstance(test, StdioTest) else ""
    try:
        done = subprocess.run(
            [sys.executable, *flags, "-c", program],
            input=stdin,
            capture_output=True,
            text=True,
            timeout=2 * LIMITS.time_s + 1,
        )
    except subprocess.TimeoutExpired:
        return False
    if done.returncode != 0:
        return False
    if isinstance(test, AssertTest):
        return True
    if isinstance(test, StdioTest):
        return stdio_match(done.stdout, test.output, suite.comparison)
    _, marker, payload = done.stdout.rpartition(RESULT_MARKER)
    try:
        return bool(marker) and call_match(json.loads(payload), test.expected, suite.comparison)
    except ValueError:  # not JSON: a runtime error for the judge too
        return False


def timed(run: Callable[[], list[bool]]) -> tuple[float, list[bool]]:
    started = time.perf_counter()
    verdicts = run()
    return time.perf_counter() - started, verdicts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=3, help="alternating timed rounds of each grader")
    parser.add_argument("--tests", type=int, default=10, help="tests per problem")
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--http", action="store_true", help="also grade through `sandbox serve` on loopback")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--kind", choices=("stdio", "call", "assert", "pytest"), help="only tests of this kind (assert, pytest: apart)"
    )
    parser.add_argument("--languages", metavar="SPEC", help="a per-language table instead (all, default, or ids)")
    parser.add_argument("--language-tests", type=int, default=20, help="stdin tests per language (--languages)")
    args = parser.parse_args()
    if args.languages:
        try:
            languages = parse_languages(args.languages)
        except ValueError as exc:
            parser.error(str(exc))
        sys.exit(per_language(languages, args.language_tests, args.threads, args.seed))

    suites = make_suites(args.tests, args.seed)
    if args.kind in ("assert", "pytest"):
        calls = [(p, suite) for p, suite in suites if suite.kind == "call" and defines(p.code, p.fn_name)]
        convert = as_asserts if args.kind == "assert" else as_pytest_file
        work = [(p.code, convert(suite)) for p, suite in calls]
    else:
        work = [(p.code, suite) for p, suite in suites if args.kind in (None, suite.kind)]
    count = sum(verdict_count(suite) for _, suite in work)
    print(
        f"{len(work)} submissions, {count} tests, {args.threads} threads, {args.rounds} rounds, python {sys.executable}"
    )

    # Tests of one submission run one at a time in its sandbox: at most `threads` programs run at once, as in (b).
    # Runs forked from the warm zygote (sandbox/zygote.py), and the same with a bwrap and interpreter per run.
    languages = parse_languages("default,pytest") if args.kind == "pytest" else ()  # (): SANDBOX_LANGUAGES's
    forked = LocalJudge(Executor(parallel=1, zygote=True, languages=languages))
    fresh = LocalJudge(Executor(parallel=1, zygote=False, languages=languages))
    graders: dict[str, Callable[[], list[bool]]] = {
        "ours (sandboxed, in-process)": lambda: ours(forked, work, args.threads),
        "ours, a bwrap per run": lambda: ours(fresh, work, args.threads),
        BASELINE: lambda: baseline(work, args.threads),
    }
    if args.kind != "pytest":  # pytest needs site-packages
        graders["baseline, no site (-S)"] = lambda: baseline(work, args.threads, ("-S",))
    with contextlib.ExitStack() as stack:
        if args.http:
            env = {"SANDBOX_WORKERS": str(args.threads), "SANDBOX_PARALLEL": "1", "SANDBOX_LOG_LEVEL": "warning"}
            server = stack.enter_context(LocalServer.sandbox(**env))
            remote = stack.enter_context(RemoteJudge(server.url))
            graders["ours (sandboxed, over HTTP)"] = lambda: ours(remote, work, args.threads)
        seconds, verdicts = _measure(graders, args.rounds)
    _report(seconds, verdicts, count * args.rounds)


def _measure(graders: dict[str, Callable[[], list[bool]]], rounds: int) -> tuple[dict, dict]:
    for run in graders.values():  # warm-up: page cache, imports, connections
        run()
    seconds = dict.fromkeys(graders, 0.0)
    verdicts: dict[str, list[bool]] = {}
    for _ in range(rounds):
        for name, run in graders.items():
            elapsed, verdicts[name] = timed(run)
            seconds[name] += elapsed
    return seconds, verdicts


def _report(seconds: dict[str, float], verdicts: dict[str, list[bool]], tests: int) -> None:
    reference = verdicts[BASELINE]
    for name, elapsed in seconds.items():
        agree = "same verdicts as baseline" if verdicts[name] == reference else "VERDICTS DIFFER FROM BASELINE"
        print(f"{name:32s} {tests / elapsed:8.1f} tests/s   {sum(verdicts[name])}/{len(reference)} passed, {agree}")
    for ours_name in (name for name in seconds if name.startswith("ours")):
        for base_name in (name for name in seconds if name.startswith("baseline")):
            print(f"ratio {ours_name} / {base_name}: {seconds[base_name] / seconds[ours_name]:.2f}x")
    if any(v != reference for v in verdicts.values()):
        sys.exit(1)


PLAIN_TIMEOUT_S = 60.0


@dataclass
class LanguageRow:
    name: str
    tests: int
    compiled: bool  # has a compile step (else the compile columns stay blank)
    compile_s: list[float] = field(default_factory=list)  # a sandbox run with no tests: compiling, then cached
    plain_compile_s: float | None = None
    sandbox_s: float = 0.0  # both runs with tests
    plain_s: float = 0.0  # both passes
    problems: list[str] = field(default_factory=list)


def per_language(languages: tuple[Language, ...], tests: int, threads: int, seed: int) -> int:
    """Prints the per-language table; 1 when a run failed or gave a wrong answer, else 0."""
    with tempfile.TemporaryDirectory(prefix="bench-compile-cache-") as cache_dir:
        cache = CompileCache(cache_dir, 1 << 30)
        rows = _language_rows(Executor(parallel=threads, languages=languages, compile_cache=cache), tests, seed)
    _print_table(rows)
    for row in rows:
        for problem in row.problems:
            print(f"{row.name}: {problem}")
    return 1 if any(row.problems for row in rows) else 0


def _language_rows(executor: Executor, tests: int, seed: int) -> list[LanguageRow]:
    threads = executor.parallel
    print(
        f"{tests} stdin tests per language (fewer where the runtime starts slowly: column tests), "
        f"{threads} threads, sandbox {executor.level.name}"
    )
    rows: list[LanguageRow] = []
    runnable = []
    for lang in executor.languages.values():
        if (why := _why_skipped(lang)) is not None:
            print(f"skipped {lang.name}: {why}")
        else:
            runnable.append(lang)
    rng = random.Random(seed)
    for index, lang in enumerate(runnable, 1):
        count = _test_count(lang, tests)
        cases = [(rng.randint(1, 10**6), rng.randint(-(10**6), 10**6)) for _ in range(count)]
        stdio = [(f"{a} {b}\n", str(a + b)) for a, b in cases]
        print(f"[{index}/{len(runnable)}] {lang.name}: {count} tests", file=sys.stderr, flush=True)
        rows.append(_measure_language(executor, lang, stdio, threads))
    return rows


def _why_skipped(lang: Language) -> str | None:
    if lang.name in NOT_STDIO:
        return "its programs are test files or SQL, not stdin/stdout programs"
    if (tool := lang.missing_tool()) is not None:
        return f"toolchain missing ({tool})"
    return None


def _test_count(lang: Language, tests: int) -> int:
    """Fewer tests where each one starts a slow runtime (a test of kotlin_script compiles the script)."""
    if lang.start_s >= 1:
        return max(2, tests // 10)
    if lang.start_s > 0 or lang.run[0].endswith("/java"):
        return max(2, tests // 2)
    return tests


def _measure_language(executor: Executor, lang: Language, stdio: list[tuple[str, str]], threads: int) -> LanguageRow:
    code = PROGRAMS[lang.name]
    row = LanguageRow(lang.name, len(stdio), lang.compile is not None)
    with tempfile.TemporaryDirectory(prefix=f"bench-{lang.name}-") as tmp:
        plain = _PlainProgram(lang, code, LIMITS.memory_mb, Path(tmp))
        _progress(lang, "compiling outside the sandbox")
        row.plain_compile_s, error = plain.compile()
        if error is not None:
            row.problems.append(f"plain compile failed: {error}")
        if lang.compile is not None:
            for what in ("compiling", "cached compile"):
                _progress(lang, f"sandbox run without tests, {what}")
                _compile_run(executor, lang, code, row)
        for run in (1, 2):
            _progress(lang, f"sandbox run {run}")
            _sandbox_run(executor, lang, code, stdio, row)
            if error is None:
                _progress(lang, f"plain pass {run}")
                started = time.perf_counter()
                with ThreadPoolExecutor(threads) as pool:
                    outputs = list(pool.map(plain.run, (stdin for stdin, _ in stdio)))
                row.plain_s += time.perf_counter() - started
                matches = zip(outputs, stdio, strict=True)
                wrong = sum(not stdio_match(got or "", want, Comparison()) for got, (_, want) in matches)
                if wrong:
                    row.problems.append(f"plain pass {run}: {wrong}/{len(stdio)} tests failed")
    return row


def _compile_run(executor: Executor, lang: Language, code: str, row: LanguageRow) -> None:
    started = time.perf_counter()
    execution = executor.run(lang, code, [], LIMITS)
    row.compile_s.append(time.perf_counter() - started)
    if execution.sandbox_error or execution.compile is None or not execution.compile.ok:
        why = execution.sandbox_error or (execution.compile.stderr.strip()[-300:] if execution.compile else "")
        row.problems.append(f"compile run {len(row.compile_s)} failed: {why}")


def _sandbox_run(executor: Executor, lang: Language, code: str, stdio: list[tuple[str, str]], row: LanguageRow) -> None:
    started = time.perf_counter()
    execution = executor.run(lang, code, [TestInput(stdin) for stdin, _ in stdio], LIMITS)
    row.sandbox_s += time.perf_counter() - started
    if execution.sandbox_error or (execution.compile is not None and not execution.compile.ok):
        why = execution.sandbox_error or execution.compile.stderr.strip()[-300:]  # type: ignore[union-attr]
        row.problems.append(f"sandbox run failed: {why}")
        return
    wrong = [
        result
        for result, (_, want) in zip(execution.tests, stdio, strict=True)
        if result is None or not result.ok or not stdio_match(result.stdout, want, Comparison())
    ]
    if wrong:
        r = wrong[0]
        first = "not run" if r is None else f"{r.status}, exit {r.exit_code}, {r.wall_s:.1f} s: {r.stderr[-200:]!r}"
        row.problems.append(f"sandbox run: {len(wrong)}/{len(stdio)} tests failed; first: {first}")


class _PlainProgram:
    """The program compiled and run outside any sandbox, in a temp dir, with the Language's argv and env
    (its /tmp paths, such as GOCACHE and ghc's -outputdir, moved into the temp dir, which is also HOME)."""

    def __init__(self, lang: Language, code: str, memory_mb: int, tmp: Path) -> None:
        source, self.compile_argv, self.run_argv = lang.commands(code, memory_mb)
        (tmp / source).write_text(code)
        self.tmp = tmp
        env = {"PATH": "/usr/bin:/bin", "HOME": "/tmp", "LANG": "C.UTF-8", "TMPDIR": "/tmp"} | lang.env
        self.env = {name: self._moved(value) for name, value in env.items()}
        if self.compile_argv:
            self.compile_argv = [self._moved(part) for part in self.compile_argv]
        self.run_argv = [self._moved(part) for part in self.run_argv]

    def _moved(self, text: str) -> str:
        return str(self.tmp) if text == "/tmp" else text.replace("/tmp/", f"{self.tmp}/")

    def compile(self) -> tuple[float | None, str | None]:
        """The compile step's wall seconds (None: interpreted) and its error (None: compiled)."""
        if not self.compile_argv:
            return None, None
        started = time.perf_counter()
        try:
            done = subprocess.run(
                self.compile_argv, cwd=self.tmp, env=self.env, capture_output=True, text=True, timeout=300
            )
        except subprocess.TimeoutExpired:
            return time.perf_counter() - started, "timed out"
        elapsed = time.perf_counter() - started
        return elapsed, None if done.returncode == 0 else (done.stderr.strip()[-300:] or f"exit {done.returncode}")

    def run(self, stdin: str) -> str | None:
        """One test's stdout (None: it failed)."""
        try:
            done = subprocess.run(
                self.run_argv,
                cwd=self.tmp,
                env=self.env,
                input=stdin,
                capture_output=True,
                text=True,
                timeout=PLAIN_TIMEOUT_S,
            )
        except subprocess.TimeoutExpired:
            return None
        return done.stdout if done.returncode == 0 else None


def _progress(lang: Language, what: str) -> None:
    print(f"    {lang.name}: {what}", file=sys.stderr, flush=True)


def _print_table(rows: list[LanguageRow]) -> None:
    def seconds(value: float | None) -> str:
        return "" if value is None else f"{value:.2f}"

    header = (
        "language",
        "tests",
        "compile s",
        "compile s (cached)",
        "plain compile s",
        "sandbox tests/s",
        "plain tests/s",
        "ratio sandbox/plain",
    )
    lines = [header]
    for row in rows:
        sandbox_rate = 2 * row.tests / row.sandbox_s if row.sandbox_s else 0.0
        plain_rate = 2 * row.tests / row.plain_s if row.plain_s else 0.0
        compiled = [seconds(s) for s in row.compile_s] if row.compiled else ["", ""]
        plain = (f"{plain_rate:.1f}", f"{sandbox_rate / plain_rate:.2f}x") if plain_rate else ("", "")
        lines.append((row.name, str(row.tests), *compiled, seconds(row.plain_compile_s), f"{sandbox_rate:.1f}", *plain))
    widths = [max(len(line[column]) for line in lines) for column in range(len(header))]
    for line in lines:
        cells = [
            cell.ljust(width) if column == 0 else cell.rjust(width)
            for column, (cell, width) in enumerate(zip(line, widths, strict=True))
        ]
        print("  ".join(cells).rstrip())


if __name__ == "__main__":
    main()
