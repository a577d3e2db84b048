"""C# judged as SandboxFusion's `dotnet run` judges it, on Mono (sandbox/languages/csharp.py): through the real
sandbox (LocalJudge) and through our /run_code with SandboxFusion's own client (`sandbox-fusion` from PyPI).

A failed Debug.Assert, Trace.Assert or Debug.Fail ends the program with exit code 134 and its message on stderr,
as .NET's FailFast does (Mono's own listener prints it and goes on, exit 0); passing asserts change nothing. An int
Main's exit code is the run's, and an unhandled exception is still a runtime error with its message. A program
without `using System;` compiles (.NET 6's implicit usings), one with a `#define` first too, and a compile error
names the program's own line. Each right program has a wrong twin.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest
from sandbox_fusion import RunCodeRequest, run_code

from reward_api.local import LocalServer
from sandbox.compile_cache import CompileCache
from sandbox.executor import Executor, Limits
from sandbox.executor import TestInput as Input
from sandbox.judge import LocalJudge, ProgramTest, StdioTest, Verdict
from sandbox.judge import TestSuite as Suite


@dataclass(frozen=True)
class Row:
    name: str
    code: str
    suite: Suite
    expected: Verdict
    detail: str = ""  # in the verdict's detail, or the compile error


# MultiPL-E's shape: the solution, then the tests' Main closing its class.
SOLUTION = "using System;\nusing System.Diagnostics;\nclass Problem {\n    public static int Add(int a, int b) {\n"
RIGHT, WRONG = "        return a + b;\n    }\n", "        return a - b;\n    }\n"


def asserts(check: str) -> Suite:
    tests = f"    public static void Main(string[] args) {{\n{check}    }}\n}}\n"
    return Suite("program", (ProgramTest(tests),))


DEBUG_ASSERTS = asserts("        Debug.Assert(Add(1, 2) == 3);\n        Debug.Assert(Add(2, 2) == 4);\n")
TRACE_ASSERTS = asserts('        Trace.Assert(Add(2, 2) == 4, "Add(2, 2)");\n')
TASK_ASSERTS = asserts("        System.Threading.Tasks.Task.Run(() => Debug.Assert(Add(2, 2) == 4)).Wait();\n")
SUM = Suite("stdio", (StdioTest("1 2\n", "3"), StdioTest("20 22\n", "42")))

# No `using` at all: Console, List and LINQ come from the implicit usings.
IMPLICIT = """class P {
    static void Main() {
        var numbers = new List<int>(Console.ReadLine().Split().Select(int.Parse));
        Console.WriteLine(numbers.Sum());
    }
}
"""
# StringBuilder's System.Text is no implicit using in .NET either.
NOT_IMPLICIT = IMPLICIT.replace("Console.WriteLine(numbers.Sum());", "Console.WriteLine(new StringBuilder());")
DEFINE_FIRST = "// a comment first\n#define FAST\n#undef SLOW\n" + IMPLICIT.replace(
    "Console.WriteLine", "#if FAST && !SLOW\n        Console.WriteLine"
).replace("numbers.Sum());", "numbers.Sum());\n#endif")
DEFINE_AFTER_CODE = IMPLICIT + "#define TOO_LATE\n"
EXIT_CODE = """using System;
using System.Linq;
class P {
    static int Main() {
        Console.WriteLine(Console.ReadLine().Split().Select(int.Parse).Sum());
        return 0;
    }
}
"""
THROWS = EXIT_CODE.replace("return 0;", 'throw new InvalidOperationException("boom");').replace("int Main", "void Main")
CATCHES = THROWS.replace("throw", "try { throw").replace('("boom");', '("boom"); } catch (Exception) { }')

# Past the runner's YIELD_CPU_NS of CPU a test goes SCHED_IDLE, and a thread Mono starts then warns that it knows no
# such policy, on Mono's log (stdout unless MONO_LOG_DEST says otherwise): the answer must stay the answer.
THREAD_AFTER_SPINNING = """using System;
using System.Linq;
using System.Threading;
class P {
    static void Main() {
        var started = DateTime.Now;
        long spins = 0;
        while ((DateTime.Now - started).TotalMilliseconds < 200) spins++;
        var numbers = Console.ReadLine().Split().Select(int.Parse).ToArray();
        var worker = new Thread(() => Console.WriteLine(numbers.Sum() + (spins < 0 ? 1 : 0)));
        worker.Start();
        worker.Join();
    }
}
"""

# The error is on the program's line 6, after a #define (the implicit usings go after it).
COMPILE_ERROR = '#define FAST\nusing System;\n\n// below\nclass P {\n    static void Main() { int x = "s"; }\n}\n'

ROWS = [
    Row("debug-assert-holds", SOLUTION + RIGHT, DEBUG_ASSERTS, Verdict.ACCEPTED),
    Row("debug-assert-fails", SOLUTION + WRONG, DEBUG_ASSERTS, Verdict.WRONG_ANSWER, "Assertion failed"),
    Row("trace-assert-holds", SOLUTION + RIGHT, TRACE_ASSERTS, Verdict.ACCEPTED),
    Row("trace-assert-fails", SOLUTION + WRONG, TRACE_ASSERTS, Verdict.WRONG_ANSWER, "Add(2, 2)"),
    Row("assert-in-a-task-holds", SOLUTION + RIGHT, TASK_ASSERTS, Verdict.ACCEPTED),
    Row("assert-in-a-task-fails", SOLUTION + WRONG, TASK_ASSERTS, Verdict.WRONG_ANSWER, "Assertion failed"),
    Row("implicit-usings", IMPLICIT, SUM, Verdict.ACCEPTED),
    Row("not-an-implicit-using", NOT_IMPLICIT, SUM, Verdict.COMPILE_ERROR, "StringBuilder"),
    Row("define-before-the-code", DEFINE_FIRST, SUM, Verdict.ACCEPTED),
    Row("define-after-the-code", DEFINE_AFTER_CODE, SUM, Verdict.COMPILE_ERROR, "CS1032"),
    Row("compile-error-line", COMPILE_ERROR, SUM, Verdict.COMPILE_ERROR, "main.cs(6,"),
    Row("main-returns-0", EXIT_CODE, SUM, Verdict.ACCEPTED),
    Row("main-returns-3", EXIT_CODE.replace("return 0;", "return 3;"), SUM, Verdict.RUNTIME_ERROR, "exit code 3"),
    Row("exception-caught", CATCHES, SUM, Verdict.ACCEPTED),
    Row("a-thread-started-at-idle-priority", THREAD_AFTER_SPINNING, SUM, Verdict.ACCEPTED),
    Row("exception-unhandled", THROWS, SUM, Verdict.RUNTIME_ERROR, "InvalidOperationException: boom"),
]


@pytest.fixture(scope="module")
def judge() -> LocalJudge:
    return LocalJudge()


@pytest.mark.parametrize("row", ROWS, ids=[row.name for row in ROWS])
def test_csharp_verdicts(judge: LocalJudge, row: Row) -> None:
    report = judge.judge("csharp", row.code, row.suite, Limits(time_s=5, wall_s=10, compile_s=30))
    assert report.sandbox_error is None, report.to_dict()
    assert {t.verdict for t in report.tests} == {row.expected}, report.to_dict()
    said = report.compile_error or "".join(t.detail for t in report.tests)
    assert row.detail in said, report.to_dict()


def test_a_cached_compile_still_ends_at_a_failed_assert(tmp_path: Path) -> None:
    """What the compile wrote besides main.exe (main.exe.config, which installs the listener) is kept with it."""
    executor = Executor(compile_cache=CompileCache(tmp_path, 64 * 1024 * 1024))
    program = SOLUTION + WRONG + DEBUG_ASSERTS.tests[0].code
    runs = [executor.run("csharp", program, [Input()], Limits(time_s=5, compile_s=30)) for _ in range(2)]
    assert [run.details.get("compile_cache") for run in runs] == ["miss", "hit"], runs
    for run in runs:
        [result] = run.tests
        assert result is not None and result.exit_code == 134 and "Assertion failed" in result.stderr, run


@dataclass(frozen=True)
class Run:
    name: str
    code: str
    status: str  # SandboxFusion's RunStatus
    exit_code: int | None  # None: it did not compile
    says: str  # in its stderr, or its compile output
    stdin: str = ""
    stdout: str = ""


# SandboxFusion's own runner tests (sandbox/tests/runners/test_csharp.py there), as written.
FUSION_ASSERT = """
    using System;
    using System.Diagnostics;

    public class Program
    {
        public static void Main(string[] args)
        {
            Debug.Assert(1 == 2, "Assertion failed");
        }
    }
    """
FUSION_STDIN = """
    public class Program
    {
        public static void Main(string[] args)
        {
            Console.WriteLine(Convert.ToInt32(Console.ReadLine()));
        }
    }
                             """
DEBUG_FAIL = FUSION_ASSERT.replace('Assert(1 == 2, "Assertion failed")', 'Fail("gave up")')
STDIN_NOT_IMPLICIT = FUSION_STDIN.replace("Convert", "new StringBuilder().Append")

RUNS = [
    Run("sandboxfusion-assertion-error", FUSION_ASSERT, "Failed", 134, "Assertion failed"),
    Run("assertion-holds", FUSION_ASSERT.replace("1 == 2", "1 == 1"), "Success", 0, ""),
    Run("debug-fail", DEBUG_FAIL, "Failed", 134, "gave up"),
    Run("sandboxfusion-stdin", FUSION_STDIN, "Success", 0, "", stdin="65535", stdout="65535\n"),
    Run("stdin-without-an-implicit-using", STDIN_NOT_IMPLICIT, "Failed", None, "StringBuilder"),
    Run("main-returns-0", EXIT_CODE, "Success", 0, "", stdin="1 2", stdout="3\n"),
    Run("main-returns-3", EXIT_CODE.replace("return 0;", "return 3;"), "Failed", 3, "", stdin="1 2", stdout="3\n"),
    Run("exception-caught", CATCHES, "Success", 0, "", stdin="1 2", stdout="3\n"),
    Run("exception-unhandled", THROWS, "Failed", 1, "InvalidOperationException: boom", stdin="1 2", stdout="3\n"),
    Run("compile-error-line", COMPILE_ERROR, "Failed", None, "main.cs(6,"),
]


@pytest.mark.parametrize("run", RUNS, ids=[run.name for run in RUNS])
def test_csharp_through_run_code(sandbox: LocalServer, run: Run) -> None:
    request = RunCodeRequest(code=run.code, language="csharp", stdin=run.stdin, run_timeout=10, compile_timeout=60)
    result = run_code(request, endpoint=sandbox.url, max_attempts=1)
    assert result.status.value == run.status, result
    if run.exit_code is None:
        compiled = result.compile_result
        assert compiled is not None and compiled.return_code != 0 and result.run_result is None, result
        assert run.says in f"{compiled.stdout}{compiled.stderr}", result
        return
    assert result.run_result is not None and result.run_result.return_code == run.exit_code, result
    assert run.says in (result.run_result.stderr or "") and result.run_result.stdout == run.stdout, result
