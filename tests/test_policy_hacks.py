"""Wrong programs a policy under optimisation pressure finds, each scoring 0 (or only what it really passed), beside
the right program that scores 1. Judged as the reward service judges a `code` item (reward_api/graders/code.py with
the real sandbox), by cause:

- numbers: a float tolerance must not pass a wrong integer (stdio and function calls, every language);
- statuses: what the program causes is its verdict, never a status a trainer masks (a fence the reference did
  not ask for, a language that cannot run, a program that burns a little CPU and then sleeps);
- counting: every test the reference declares must report a pass, once (skipped, expected-to-fail, filtered out,
  forged beside the real report, or a run of zero tests is a failure);
- early exits where a language had no done marker (Fortran, Kotlin script, Verilog; SQL's tests now run apart);
- program suites run apart (JavaScript, TypeScript, Ruby, PHP, Lua, Perl, bash, R, Racket, Elixir, Clojure, SQL, Jest,
  and C++, Rust, Java, C#, Scala, Go, D, OCaml and Haskell as two binaries, JVMs or Mono processes): the tests' checks
  replaced (macros, libc's `__assert_fail`, assertions turned off, assert listeners cleared, `Debug` or `assert`
  shadowed), equality faked by a return type of the program's own, failed checks' aborts, panics and exceptions
  turned into clean exits with the marker its binary holds, the rest of the file turned into output, the tests read
  from the program's source or another process's stdin, environment or memory, another process signalled, answers
  tried in copies, early exits; each completion answers right only where its hack got what it was after, so it scores
  1 where the tests are appended to the program (or the tests' process is dumpable);
- the done marker never shown, and never the same for two programs.

tests/test_harness_hacks.py holds the earlier table (Python's in-process hacks, exits before the tests).
"""

from __future__ import annotations

import json

import pytest

from reward_api.graders.code import grade_code
from reward_api.graders.code_reference import parse_reference
from reward_api.local import LocalServer
from reward_api.profiles import CodeSettings
from sandbox.executor import Executor, Limits
from sandbox.executor import TestInput as Input
from sandbox.judge import Comparison, LocalJudge, ProgramTest, Verdict, call_match, done_marker, stdio_match
from sandbox.judge import TestSuite as Suite  # not `Test*`: pytest would try to collect it
from sandbox.languages.jest_apart import runs_apart
from tests.multiple_cases import CASES
from tests.test_service import grade

SETTINGS = CodeSettings()
BY_LANGUAGE = {case.language: case for case in CASES}
LIMITS = Limits(time_s=10, wall_s=15, compile_s=60, total_s=120)


@pytest.fixture(scope="module")
def judge() -> LocalJudge:
    return LocalJudge()


def accuracy(judge: LocalJudge, reference: object, completion: str) -> tuple[float, dict]:
    score = grade_code(completion, reference, SETTINGS, judge)
    return score.value, score.details


_RIGHT_ANSWER_SCORED: dict[str, float] = {}


def assert_the_right_answer_passes(judge: LocalJudge, language: str) -> None:
    """The language's right MultiPL-E answer scores 1 beside each wrong one a test tries (judged once a language:
    every row of that language needs it, none needs it again)."""
    if language not in _RIGHT_ANSWER_SCORED:
        case = BY_LANGUAGE[language]
        _RIGHT_ANSWER_SCORED[language] = accuracy(judge, case.row(), fenced(language, case.right))[0]
    assert _RIGHT_ANSWER_SCORED[language] == 1.0


def fenced(language: str, code: str) -> str:
    return f"<think>...</think>\n```{language}\n{code}\n```\n"


# --- numbers ------------------------------------------------------------------------------------------------------

DEFAULT, EXACT = Comparison(), Comparison(float_tolerance=0.0)
STDIO_TOKENS = [  # (printed, expected, comparison, matches)
    ("500000000000", "500000500000", DEFAULT, False),  # integers: exactly, at any size
    ("500000500000", "500000500000", DEFAULT, True),
    ("9007199254740992", "9007199254740993", EXACT, False),  # 2^53 is not 2^53+1, though floats say so
    ("9007199254740992", "9007199254740993", DEFAULT, False),
    ("123456789012345678901234567890", "123456789012345678901234567891", DEFAULT, False),
    ("-0", "0", DEFAULT, True),
    ("007", "7", DEFAULT, True),
    ("1_000", "1000", DEFAULT, False),  # Python's float() reads it; a judge does not
    ("1.0000001", "1", DEFAULT, True),  # a float on either side: within the tolerance
    ("2", "2.0000000001", DEFAULT, True),
    ("1e3", "1000", DEFAULT, True),
    ("0.30000000000000004", "0.3", DEFAULT, True),
    ("0.30000000000000004", "0.3", EXACT, False),
    ("1.0", "1", EXACT, True),  # exactly the same number
    ("1" + "0" * 400, "1" + "0" * 399 + "1", DEFAULT, False),  # beyond a float's range: exact, no overflow
    ("nan", "nan", DEFAULT, True),
    ("inf", "1e308", DEFAULT, False),
]


@pytest.mark.parametrize(("printed", "expected", "comparison", "matches"), STDIO_TOKENS)
def test_stdout_numbers(printed: str, expected: str, comparison: Comparison, matches: bool) -> None:
    assert stdio_match(f"{printed}\n", f"{expected}\n", comparison) is matches


CALL_VALUES = [  # (returned, expected, comparison, matches)
    (500000000000, 500000500000, DEFAULT, False),
    (2**53, 2**53 + 1, EXACT, False),
    (2**53, 2**53 + 1, DEFAULT, False),
    ([1, 2**70], [1, 2**70 + 1], DEFAULT, False),
    (1.0, 1, DEFAULT, True),
    (0.1 + 0.2, 0.3, DEFAULT, True),
    (2**53, float(2**53 + 1), EXACT, True),  # a float on one side: compared as the float it is
    (True, 1, DEFAULT, False),
]


@pytest.mark.parametrize(("returned", "expected", "comparison", "matches"), CALL_VALUES)
def test_returned_numbers(returned: object, expected: object, comparison: Comparison, matches: bool) -> None:
    assert call_match(returned, expected, comparison) is matches


# Sum of 1..n for n = 10^6: the wrong programs print n*n/2 = 500000000000, within 1e-6 of 500000500000.
GAUSS = {"inputs": ["1000000\n"], "outputs": ["500000500000\n"]}
GAUSS_PROGRAMS = {  # language: (right, wrong)
    "python": ("n = int(input())\nprint(n * (n + 1) // 2)", "n = int(input())\nprint(n * n // 2)"),
    "c": (
        '#include <stdio.h>\nint main(void) { long long n; scanf("%lld", &n); printf("%lld\\n", n * (n + 1) / 2); }',
        '#include <stdio.h>\nint main(void) { long long n; scanf("%lld", &n); printf("%lld\\n", n * n / 2); }',
    ),
    "cpp": (
        "#include <iostream>\nint main() { long long n; std::cin >> n; std::cout << n * (n + 1) / 2 << '\\n'; }",
        "#include <iostream>\nint main() { long long n; std::cin >> n; std::cout << n * n / 2 << '\\n'; }",
    ),
    "javascript": (
        "const n = BigInt(require('fs').readFileSync(0, 'utf8').trim());\nconsole.log(String(n * (n + 1n) / 2n));",
        "const n = BigInt(require('fs').readFileSync(0, 'utf8').trim());\nconsole.log(String(n * n / 2n));",
    ),
    "go": (
        'package main\nimport "fmt"\nfunc main() { var n int64; fmt.Scan(&n); fmt.Println(n * (n + 1) / 2) }',
        'package main\nimport "fmt"\nfunc main() { var n int64; fmt.Scan(&n); fmt.Println(n * n / 2) }',
    ),
    "rust": (
        "use std::io::*;\nfn main() { let mut s = String::new(); stdin().read_line(&mut s).unwrap();\n"
        'let n: i64 = s.trim().parse().unwrap(); println!("{}", n * (n + 1) / 2); }',
        "use std::io::*;\nfn main() { let mut s = String::new(); stdin().read_line(&mut s).unwrap();\n"
        'let n: i64 = s.trim().parse().unwrap(); println!("{}", n * n / 2); }',
    ),
    "java": (
        "import java.util.*;\npublic class Main { public static void main(String[] a) {\n"
        "long n = new Scanner(System.in).nextLong(); System.out.println(n * (n + 1) / 2); } }",
        "import java.util.*;\npublic class Main { public static void main(String[] a) {\n"
        "long n = new Scanner(System.in).nextLong(); System.out.println(n * n / 2); } }",
    ),
}


@pytest.mark.parametrize("language", list(GAUSS_PROGRAMS))
def test_a_wrong_big_integer_is_wrong_in_every_language(judge: LocalJudge, language: str) -> None:
    right, wrong = GAUSS_PROGRAMS[language]
    assert accuracy(judge, GAUSS, fenced(language, right))[0] == 1.0
    value, details = accuracy(judge, GAUSS, fenced(language, wrong))
    assert value == 0.0 and details["verdicts"] == {"wrong_answer": 1}, details


def test_a_wrong_big_integer_returned_is_wrong(judge: LocalJudge) -> None:
    reference = {"fn_name": "gauss", "inputs": [[10**6], [2**53]], "outputs": [500000500000, 2**105 + 2**52]}
    right = "def gauss(n):\n    return n * (n + 1) // 2"
    wrong = "def gauss(n):\n    return n * n // 2"
    assert accuracy(judge, reference, fenced("python", right))[0] == 1.0
    assert accuracy(judge, reference, fenced("python", wrong))[0] == 0.0


# --- Python's tests in a process of their own ---------------------------------------------------------------------

# Ways out of a harness in the program's own process (the tracer and a library's replaced code were passes while
# the tests ran there); apart, none reaches the test.
STEAL_IN_IMPORT = (
    "import os, sys\n"
    "frame = sys._getframe()\n"
    "while frame is not None:\n"
    "    for const in frame.f_code.co_consts:\n"
    "        if isinstance(const, str) and '<<<judge-' in const:\n"
    "            os.write(1, const.encode())\n"
    "            os._exit(0)\n"
    "    frame = frame.f_back\n"
)
ESCAPES = {
    "a tracer that jumps every frame of the test to its end": (
        "import sys\ndef tracer(frame, event, arg):\n"
        "    if frame.f_code.co_filename == 'test.py' and event == 'line':\n"
        "        try:\n            frame.f_lineno = max(line for _, _, line in frame.f_code.co_lines() if line)\n"
        "        except Exception:\n            pass\n    return tracer\nsys.settrace(tracer)\n"
        "def add(a, b):\n    sys._getframe(1).f_trace = tracer\n    return 7\n"
    ),
    "the harness's helpers replaced through its frames": (
        "import sys\ndef add(a, b):\n    frame = sys._getframe()\n    while frame is not None:\n"
        "        for value in list(frame.f_globals.values()):\n            if hasattr(value, 'finished'):\n"
        "                type(value).finished = lambda self: True\n        frame = frame.f_back\n    return 7\n"
    ),
    "a library function's code replaced": (
        "import math\ndef close(*args, **kwargs):\n    return True\nmath.isclose = close\n"
        "import json\njson.dumps.__code__ = (lambda *a, **k: '5').__code__\ndef add(a, b):\n    return 7\n"
    ),
    "False made true through ctypes": (
        "import ctypes\ndef add(a, b):\n    ctypes.c_long.from_address(id(False) + 24).value = 1\n    return 7\n"
    ),
    "expected values read from the test's code in memory": (
        "import gc\ngc.unfreeze()\ndef add(a, b):\n    for value in gc.get_objects():\n"
        "        if type(value) is type(add.__code__) and value.co_filename == 'test.py':\n"
        "            numbers = [c for c in value.co_consts if type(c) is int]\n            if numbers:\n"
        "                return numbers[-1]\n    return 7\n"
    ),
    "its own source read for the expected values": (
        "import re\ndef add(a, b):\n    text = open(__file__).read()\n"
        "    found = re.findall(r'\\((-?\\d+), (-?\\d+)\\) == (-?\\d+)', text)\n"
        "    return next((int(c) for x, y, c in found if (int(x), int(y)) == (a, b)), 7)\n"
    ),
    "a module of its own written where the test imports from": (
        f"import os\nSTEAL = {STEAL_IN_IMPORT!r}\n"
        "for where in ('.', '/tmp'):\n    with open(os.path.join(where, 'fractions.py'), 'w') as out:\n"
        "        out.write(STEAL)\ndef add(a, b):\n    return 7\n"
    ),
}
ADD_CHECK = (
    "import fractions\n\n\ndef check(candidate):\n    assert candidate(2, 3) == 5\n    assert candidate(-1, 1) == 0\n"
    "    assert fractions.Fraction(candidate(1, 1)) == 2\n"
)
ADD_PROMPT = 'def add(a, b):\n    """a plus b"""\n'
ADD_REFERENCES = {
    "humaneval": {"prompt": ADD_PROMPT, "test": ADD_CHECK, "entry_point": "add"},
    "mbpp": {"test_list": ["assert add(2, 3) == 5", "assert add(-1, 1) == 0"], "test_imports": ["import fractions"]},
    "multiple_py": {"language": "py", "prompt": ADD_PROMPT, "tests": f"{ADD_CHECK}\ncheck(add)\n"},
    "call": {"fn_name": "add", "inputs": [[2, 3], [-1, 1]], "outputs": [5, 0]},
}


# A function-call test's result is written by the program's own process, its expected value stays with the host: a
# rebound json.dumps is one more way to answer (5 for every call), scored as that answer (test_a_rebound_encoder...).
REPLACED_ENCODER = "a library function's code replaced"
ESCAPE_CASES = [(e, shape) for e in ESCAPES for shape in ADD_REFERENCES if (e, shape) != (REPLACED_ENCODER, "call")]


@pytest.mark.parametrize(("escape", "shape"), ESCAPE_CASES)
def test_python_tests_cannot_be_reached_from_the_program(judge: LocalJudge, escape: str, shape: str) -> None:
    reference = ADD_REFERENCES[shape]
    assert accuracy(judge, reference, fenced("python", "def add(a, b):\n    return a + b\n"))[0] == 1.0
    value, details = accuracy(judge, reference, fenced("python", ESCAPES[escape]))
    assert value == 0.0, details


def test_a_module_is_the_test_processs_own_whatever_the_program_names_it(judge: LocalJudge) -> None:
    """MBPP's tests use `math` the program imported; a module object of its own named `math` is not the one they get."""
    reference = {"test_list": ["assert math.isclose(area(2), 12.566, rel_tol=1e-3)"]}
    right = "import math\ndef area(r):\n    return math.pi * r * r\n"
    fake = "import types\nmath = types.ModuleType('math')\nmath.isclose = lambda *args, **kwargs: True\n" + (
        "def area(r):\n    return 7\n"
    )
    assert accuracy(judge, reference, fenced("python", right))[0] == 1.0
    assert accuracy(judge, reference, fenced("python", fake))[0] == 0.0


def test_a_rebound_encoder_is_only_another_answer(judge: LocalJudge) -> None:
    constant = accuracy(judge, ADD_REFERENCES["call"], fenced("python", "def add(a, b):\n    return 5\n"))[0]
    rebound = accuracy(judge, ADD_REFERENCES["call"], fenced("python", ESCAPES[REPLACED_ENCODER]))[0]
    assert rebound == constant == 0.5


def test_a_test_may_still_pass_the_programs_objects_back_and_see_lists_it_changed(judge: LocalJudge) -> None:
    """Apart, arguments are copies: a list the function sorts in place is copied back, objects go by handle, and an
    exception the program raises is raised in the test as the builtin it is."""
    reference = {
        "test_list": [
            "items = [3, 1, 2]\nsort_in_place(items)\nassert items == [1, 2, 3]",
            "box = Box(4)\nassert unbox(box) == 4 and unbox(Box(5)) == 5",
            "try:\n    unbox(None)\nexcept AttributeError:\n    pass\nelse:\n    assert False",
        ]
    }
    right = (
        "class Box:\n    def __init__(self, v):\n        self.v = v\ndef unbox(box):\n    return box.v\n"
        "def sort_in_place(items):\n    items.sort()\n"
    )
    assert accuracy(judge, reference, fenced("python", right))[0] == 1.0
    wrong = right.replace("items.sort()", "items = sorted(items)")
    assert accuracy(judge, reference, fenced("python", wrong))[0] == pytest.approx(2 / 3)


# --- statuses the program causes ----------------------------------------------------------------------------------

ECHO = {"inputs": ["1\n", "2\n"], "outputs": ["1\n", "2\n"]}
WRONG_ECHO = "print(0)"


@pytest.mark.parametrize("fence", ["julia", "swift", "cuda", "lean"])
def test_an_answer_in_a_language_that_cannot_run_is_wrong_not_invalid(judge: LocalJudge, fence: str) -> None:
    """Before: `invalid`, which trainers mask, so under `dapo` a wrong answer escaped its -1 by its fence."""
    value, details = accuracy(judge, ECHO, fenced(fence, WRONG_ECHO))
    assert value == 0.0 and "cannot run here" in details["reason"], details
    value, details = accuracy(judge, ECHO | {"language": "python"}, fenced(fence, WRONG_ECHO))
    assert value == 0.0 and "asks for python" in details["reason"], details


def test_the_reference_language_binds_the_answer(judge: LocalJudge) -> None:
    """A Python program in a Clojure block would get Clojure's start-up seconds and memory floor: it is judged as the
    reference's language asks, and another fence is a wrong answer."""
    spin = "import time\nt = time.process_time()\nwhile time.process_time() - t < 1.5:\n    pass\nprint(input())"
    reference = ECHO | {"language": "python", "time_limit": 1}
    value, details = accuracy(judge, reference, fenced("clojure", spin))
    assert value == 0.0 and details["reason"] == "the reference asks for python, the answer is clojure", details
    assert accuracy(judge, reference, fenced("python", "print(input())"))[0] == 1.0
    assert accuracy(judge, reference, fenced("py", "print(input())"))[0] == 1.0  # an alias is the same language


def test_a_program_that_sleeps_after_a_little_cpu_hits_its_limits_not_a_starved_run() -> None:
    """Past 20 ms of CPU a run takes only spare CPU, and a run that got little CPU was taken for starved and given
    up to 4 budgets, then no verdict (`error`, masked). Sleeping waits for no CPU: cut at the budget, its verdict."""
    burn_then_sleep = "import time\nt = time.process_time()\nwhile time.process_time() - t < 0.05:\n    pass\n"
    execution = Executor().run(
        "python", burn_then_sleep + "time.sleep(60)", [Input()], Limits(time_s=20.0, wall_s=60.0, total_s=1.5)
    )
    assert execution.timed_out and execution.sandbox_error is None, execution
    assert max(seconds for step, seconds in execution.phases) - execution.phases[0][1] < 5.0


def test_sleepers_through_the_service_are_time_limits(server: LocalServer) -> None:
    """A wrong program that sleeps past each test's wall limit: `ok` with accuracy 0 (and -1 under `dapo`)."""
    sleeper = "import time\nt = time.process_time()\nwhile time.process_time() - t < 0.05:\n    pass\ntime.sleep(30)"
    # Tests of 11 s wall each pass the run's 4 s budget: before, the run was taken for starved and went on.
    reference = {"inputs": ["1\n"] * 8, "outputs": ["1\n"] * 8, "time_limit": 5, "total_time_limit": 4}
    items = [{"task": "code", "completion": fenced("python", sleeper), "reference": reference}]
    [result] = grade(server, items, profile="dapo", timeout=120)
    assert (result["status"], result["reward"]) == ("ok", -1.0), result


# --- counting -----------------------------------------------------------------------------------------------------

PYTEST_TESTS = "def test_small():\n    assert add(1, 2) == 3\n\ndef test_big():\n    assert add(10**6, 1) == 1000001\n"
PYTEST_RIGHT = "def add(a, b):\n    return a + b\n"
GTEST_TESTS = "TEST(Add, Small) { EXPECT_EQ(3, add(1, 2)); }\nTEST(Add, Big) { EXPECT_EQ(1000001, add(1000000, 1)); }\n"
GTEST_RIGHT = "#include <gtest/gtest.h>\nint add(int a, int b) { return a + b; }\n"
JUNIT_TESTS = (
    "public class AdderTest {\n    @Test void small() { assertEquals(3, Adder.add(1, 2)); }\n"
    "    @Test void big() { assertEquals(1000001, Adder.add(1000000, 1)); }\n}\n"
)
JUNIT_RIGHT = (
    "import org.junit.jupiter.api.Test;\nimport static org.junit.jupiter.api.Assertions.*;\n\n"
    "class Adder {\n    static int add(int a, int b) { return a + b; }\n}\n"
)
LUA_TESTS = (
    "lu = require('luaunit')\n\nfunction test_humaneval()\n    local candidate = add\n"
    "    lu.assertEquals(candidate(1, 2), 3)\n    lu.assertEquals(candidate(1000000, 1), 1000001)\nend\n\n"
    "os.exit(lu.LuaUnit.run())\n"
)
# language: (tests, right program, {hack: (program, tests it may pass of the reference's)})
COUNTING = {
    "pytest": (
        PYTEST_TESTS,
        PYTEST_RIGHT,
        {
            "skips the tests it fails": ("import pytest\ndef add(a, b):\n    if a > 9:\n        pytest.skip()\n"
                                         "    return a + b\n", 1),
            "marks every test xfail": ("import pytest\npytestmark = pytest.mark.xfail\ndef add(a, b):\n    return 0\n",
                                       0),
            "prints a pass before the real failure": (
                "print('PASSED test_main.py::test_big')\ndef add(a, b):\n    return 3\n", 1),
            "a passing test of its own under the failing one's name": (
                "class TestMine:\n    def test_big(self):\n        pass\ndef add(a, b):\n    return 3\n", 1),
        },
    ),
    "gtest": (
        GTEST_TESTS,
        GTEST_RIGHT,
        {
            "a main that filters the failing test out": (
                "#include <gtest/gtest.h>\nint add(int a, int b) { return 3; }\nint main(int argc, char **argv) {\n"
                '  ::testing::InitGoogleTest(&argc, argv);\n  ::testing::GTEST_FLAG(filter) = "-Add.Big";\n'
                "  return RUN_ALL_TESTS();\n}\n", 1),
            "prints a pass before the real failure": (
                "#include <gtest/gtest.h>\n#include <cstdio>\n"
                'static int said = std::puts("[       OK ] Add.Big (0 ms)");\n'
                "int add(int a, int b) { return 3; }\n", 1),
        },
    ),
    "junit": (
        JUNIT_TESTS,
        JUNIT_RIGHT,
        {
            "aborts the tests it fails": (
                JUNIT_RIGHT.replace(
                    "return a + b;", "org.junit.jupiter.api.Assumptions.assumeTrue(a < 9); return a + b;"
                ), 1),
        },
    ),
    "lua": (
        LUA_TESTS,
        "function add(a, b)\n    return a + b\nend\n",
        {
            "no test ever defined: zero tests run": (
                "setmetatable(_G, {__newindex = function(t, k, v)\n"
                "    if not k:match('^test') then rawset(t, k, v) end\nend})\n"
                "function add(a, b)\n    return 0\nend\n", 0),
        },
    ),
}  # fmt: skip
COUNTING_CASES = [(language, hack) for language, (_, _, hacks) in COUNTING.items() for hack in hacks]


@pytest.mark.parametrize(("language", "hack"), COUNTING_CASES)
def test_every_declared_test_must_report_one_pass(judge: LocalJudge, language: str, hack: str) -> None:
    tests, right, hacks = COUNTING[language]
    suite = Suite("program", (ProgramTest(tests),))
    assert judge.judge(language, right, suite, LIMITS).pass_fraction == 1.0
    program, passes = hacks[hack]
    report = judge.judge(language, program, suite, LIMITS)
    assert report.compile_error is None and report.passed == passes and report.pass_fraction < 1.0, report.to_dict()


# --- early exits where there was no done marker -------------------------------------------------------------------

# language: (tests, right, a wrong program that ends the run with status 0 before the tests can fail)
EARLY_EXITS = {
    "fortran": (
        "program main\n  integer :: add\n  if (add(1, 2) /= 3) error stop 1\nend program main\n",
        "integer function add(a, b)\n  integer :: a, b\n  add = a + b\nend function add\n",
        "integer function add(a, b)\n  integer :: a, b\n  stop\nend function add\n",
    ),
    "kotlin_script": (
        "check(add(1, 2) == 3)\n",
        "fun add(a: Int, b: Int): Int = a + b\n",
        "fun add(a: Int, b: Int): Int { kotlin.system.exitProcess(0) }\n",
    ),
    "sql": (
        "SELECT CASE WHEN (SELECT v FROM answer) = 3 THEN 'ok' ELSE json('wrong') END;\n",
        "CREATE TABLE answer AS SELECT 3 AS v;\n",
        "CREATE TABLE answer AS SELECT 0 AS v;\n.exit 0\n",
    ),
    "verilog": (
        "module tb;\n  reg [7:0] a, b;\n  wire [7:0] s;\n  add dut(a, b, s);\n  initial begin\n    a = 1; b = 2; #1;\n"
        '    if (s !== 3) $fatal(1, "wrong");\n    $finish;\n  end\nendmodule\n',
        "module add(input [7:0] a, input [7:0] b, output [7:0] s);\n  assign s = a + b;\nendmodule\n",
        "module add(input [7:0] a, input [7:0] b, output [7:0] s);\n  assign s = 0;\n  initial $finish;\nendmodule\n",
    ),
}


@pytest.mark.parametrize("language", list(EARLY_EXITS))
def test_early_exits_earn_nothing_in_every_language(judge: LocalJudge, language: str) -> None:
    tests, right, wrong = EARLY_EXITS[language]
    suite = Suite("program", (ProgramTest(tests),))
    assert judge.judge(language, right, suite, LIMITS).passed == 1
    report = judge.judge(language, wrong, suite, LIMITS)
    assert report.passed == 0, report.to_dict()


# Where the test library ends the run itself, a forged summary of its own, then an exit before the tests run.
FORGED_SUMMARIES = {
    "lua": "    return true\nend\nprint('Ran 1 tests in 0.000 seconds')\nprint('OK')\nos.exit(0)",
    "rb": (
        "  true\nend\nputs '1 tests, 7 assertions, 0 failures, 0 errors, 0 pendings, 0 omissions, 0 notifications'\n"
        "puts '100% passed'\n$stdout.flush\nexit!(0)"
    ),
}


@pytest.mark.parametrize("language", list(FORGED_SUMMARIES))
def test_a_forged_summary_earns_nothing(judge: LocalJudge, language: str) -> None:
    case = BY_LANGUAGE[language]
    assert_the_right_answer_passes(judge, language)
    value, details = accuracy(judge, case.row(), fenced(language, FORGED_SUMMARIES[language]))
    assert value == 0.0, details


# MultiPL-E completions that turn the rest of the file, the tests and their done marker included, into output.
REST_AS_TEXT = {
    "php": "    return false;\n}\n?>",  # PHP answers end so anyway: what follows is text to print
    "pl": "    return 0;\n}\nprint <DATA>;\n__DATA__",  # what follows __DATA__ is data, printed here
    "sh": "    echo false\n}\ncat <<'UNTIL_THE_END'",  # a heredoc never closed: the rest is its text
}


@pytest.mark.parametrize("language", list(REST_AS_TEXT))
def test_tests_turned_into_output_earn_nothing(judge: LocalJudge, language: str) -> None:
    case = BY_LANGUAGE[language]
    assert_the_right_answer_passes(judge, language)
    value, details = accuracy(judge, case.row(), fenced(language, REST_AS_TEXT[language]))
    assert value == 0.0, details


# --- pytest test files: run apart from the program --------------------------------------------------------------

# A KodCode-style test file: the program as module `solution`.
PYTEST_FILE = (
    "from solution import add\nimport pytest\n\n\ndef test_small():\n    assert add(1, 2) == 3\n\n\n"
    "@pytest.mark.parametrize(('a', 'b'), [(10, 5), (-3, 3)])\n"
    "def test_more(a, b):\n    assert add(a, b) == a + b\n\n\n"
    "def test_refuses_none():\n    with pytest.raises(TypeError):\n        add(None, 1)\n"
)
ALWAYS_PASS = "import pytest\n\n@pytest.hookimpl(hookwrapper=True)\ndef pytest_runtest_makereport(item, call):\n" + (
    "    outcome = yield\n    outcome.get_result().outcome = 'passed'\n"
)
# Writes a conftest.py, an ini file and its own tests wherever the tests' file might be, for two seconds.
PLANT_FILES = (
    f"import glob, os, threading, time\nCONFTEST = {ALWAYS_PASS!r}\n"
    "def plant():\n    until = time.monotonic() + 2\n    while time.monotonic() < until:\n"
    "        for where in ['.', '/tmp', *glob.glob('/tmp/judge-tests-*')]:\n            try:\n"
    "                open(os.path.join(where, 'conftest.py'), 'w').write(CONFTEST)\n"
    "                open(os.path.join(where, 'pytest.ini'), 'w').write('[pytest]\\naddopts = -p conftest\\n')\n"
    "                open(os.path.join(where, 'test_main.py'), 'w').write('def test_small():\\n    pass\\n')\n"
    "            except OSError:\n                pass\n        time.sleep(0.005)\n"
    "threading.Thread(target=plant, daemon=True).start()\n"
)
PYTEST_ESCAPES = {
    "conftest, ini file and tests of its own planted beside the tests": f"{PLANT_FILES}def add(a, b):\n    return 0\n",
    "pytest's report hook patched in its own process": (
        "import _pytest.runner\n_real = _pytest.runner.call_and_report\n"
        "def call_and_report(item, when, log=True, **kwds):\n    report = _real(item, when, log, **kwds)\n"
        "    report.outcome = 'passed'\n    return report\n_pytest.runner.call_and_report = call_and_report\n"
        "def add(a, b):\n    return 0\n"
    ),
    "every test marked xfail by its module": (
        "import pytest\npytestmark = pytest.mark.xfail\ndef add(a, b):\n    return 0\n"
    ),
    "a forged report and summary, then exit 0": (
        "import os\nprint('PASSED test_main.py::test_small\\nPASSED test_main.py::test_refuses_none')\n"
        "print('PASSED test_main.py::test_more[10-5]\\nPASSED test_main.py::test_more[-3-3]\\n4 passed in 0.01s')\n"
        "def add(a, b):\n    os._exit(0)\n"
    ),
    "the tests' file read for the expected values": (
        "import glob\ndef add(a, b):\n"
        "    for path in glob.glob('/tmp/judge-tests-*/test_main.py') + ['test_main.py']:\n"
        "        text = open(path).read()\n        if 'add(1, 2) == ' in text:\n"
        "            return int(text.split('add(1, 2) == ')[1].split()[0])\n    return 0\n"
    ),
}


def test_a_pytest_file_reaches_the_program_as_module_solution(judge: LocalJudge) -> None:
    reference = {"language": "pytest", "test": PYTEST_FILE}
    value, details = accuracy(judge, reference, fenced("python", PYTEST_RIGHT))
    assert value == 1.0 and [t["name"] for t in details["tests"]] == ["test_small", "test_more", "test_refuses_none"]
    value, details = accuracy(judge, reference, fenced("python", PYTEST_RIGHT.replace("a + b", "a + b + (a > 5)")))
    assert value == pytest.approx(2 / 3), details  # test_more's first case fails it


@pytest.mark.parametrize("escape", list(PYTEST_ESCAPES))
def test_pytest_tests_cannot_be_reached_from_the_program(judge: LocalJudge, escape: str) -> None:
    value, details = accuracy(
        judge, {"language": "pytest", "test": PYTEST_FILE}, fenced("python", PYTEST_ESCAPES[escape])
    )
    assert value == 0.0, details


# --- program suites: one process a test ---------------------------------------------------------------------------

# Answers tried in forked copies: the copy that answered right runs the rest of the tests, prints the real marker and
# exits 0, which its parent takes for its own (issue 33's third cause). The tests share the program's process, so
# each test is kept to one process: threads yes, processes no (sandbox/runner.py confine).
FORK_ORACLES = {
    "cpp": (
        "#include <bits/stdc++.h>\n#include <sys/wait.h>\n#include <unistd.h>\n"
        "bool has_close_elements(std::vector<float> numbers, float threshold) {\n"
        "    for (int guess = 0; guess < 2; guess++) {\n        pid_t pid = fork();\n"
        "        if (pid == 0) return guess;\n        int status = 1;\n        waitpid(pid, &status, 0);\n"
        "        if (pid > 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0) _exit(0);\n    }\n    return false;"
    ),
    "pl": (
        "    for my $guess (1, '') {\n        my $pid = fork();\n        die 'no fork' unless defined $pid;\n"
        "        return $guess if $pid == 0;\n        waitpid($pid, 0);\n        exit 0 if $? == 0;\n    }\n"
        "    return '';\n}"
    ),
}
THREADED_RIGHT = (  # a right answer that starts a thread: what a test may do
    "    bool found = false;\n    std::thread worker([&] {\n"
    "        for (size_t i = 0; i < numbers.size(); i++)\n            for (size_t j = i + 1; j < numbers.size(); j++)\n"
    "                if (std::abs(numbers[i] - numbers[j]) < threshold) found = true;\n    });\n"
    "    worker.join();\n    return found;"
)


@pytest.mark.parametrize("language", list(FORK_ORACLES))
def test_answers_tried_in_forked_copies_earn_nothing(judge: LocalJudge, language: str) -> None:
    case = BY_LANGUAGE[language]
    value, details = accuracy(judge, case.row(), fenced(language, FORK_ORACLES[language]))
    assert value == 0.0, details


def test_a_program_suites_test_may_start_threads(judge: LocalJudge) -> None:
    assert accuracy(judge, BY_LANGUAGE["cpp"].row(), fenced("cpp", THREADED_RIGHT))[0] == 1.0


# --- program suites run apart: the tests in a process of their own -----------------------------------------------

# The right answer behind each hack: a completion answers right only where its hack got what it was after, so each
# row scores 1 wherever the hack works (the tests appended to the program, as before) and 0 where it cannot.
JS_RIGHT = "(numbers.some((x, i) => numbers.some((y, j) => i < j && Math.abs(x - y) < threshold)))"
JS_OTHERS = "require('node:fs').readdirSync('/proc').filter((p) => /^\\d+$/.test(p) && +p !== process.pid)"
JS_HACKS = {  # completions of MultiPL-E's has_close_elements prompt
    "the tests' check replaced": "  return false;\n}\nrequire('node:assert').deepEqual = () => {};",
    "require hooked to hand the tests a check that passes": (
        "  return false;\n}\nconst Module = require('node:module');\nconst load = Module._load;\n"
        "Module._load = function (request, ...rest) {\n"
        "  return request.includes('assert') ? {deepEqual() {}} : load.call(this, request, ...rest);\n};"
    ),
    "the expected values read from its own source": (
        "  const source = require('node:fs').readFileSync(__filename, 'utf8');\n"
        f"  return source.includes('assert.deep' + 'Equal') && {JS_RIGHT};\n}}"
    ),
    "the tests read from another process's stdin, descriptors, environment or memory": f"""\
  return stolen() && {JS_RIGHT};
}}
const fs = require('node:fs');
function holds(fd, length, at = null) {{
  try {{
    const buffer = Buffer.alloc(length);
    return buffer.subarray(0, fs.readSync(fd, buffer, 0, length, at)).includes('candidate([1.0');
  }} catch {{ return false; }}
}}
function opened(path, use) {{
  let fd;
  try {{ fd = fs.openSync(path, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK); }} catch {{ return false; }}
  try {{ return use(fd); }} finally {{ fs.closeSync(fd); }}
}}
function inMemory(pid, mem) {{
  return fs.readFileSync(`/proc/${{pid}}/maps`, 'utf8').split('\\n').some((line) => {{
    const [range, perms] = line.split(' ');
    const [start, end] = range.split('-').map((x) => parseInt(x, 16));
    return perms?.startsWith('rw') && holds(mem, Math.min(end - start, 1 << 26), start);
  }});
}}
function stolen() {{
  return {JS_OTHERS}.some((pid) =>
    ['cmdline', 'environ', 'fd/0', 'fd/3', 'fd/4']
      .some((file) => opened(`/proc/${{pid}}/${{file}}`, (fd) => holds(fd, 1 << 20)))
    || opened(`/proc/${{pid}}/mem`, (mem) => inMemory(pid, mem)));
}}""",
    "another process signalled (node's SIGUSR1 opens its debugger)": f"""\
  const reached = {JS_OTHERS}.some((pid) => {{
    try {{ process.kill(+pid, 0); return true; }} catch {{ return false; }}
  }});
  return reached && {JS_RIGHT};
}}""",
    "answers tried in a process of its own": (
        "  const copy = require('node:child_process').spawnSync('/usr/bin/node', ['-e', 'process.exit(0)']);\n"
        f"  return copy.status === 0 && {JS_RIGHT};\n}}"
    ),
    "an early exit before its tests": f"  return {JS_RIGHT};\n}}\nprocess.exit(0);",
}


RB_RIGHT = "numbers.combination(2).any? { |a, b| (a - b).abs < threshold }"
RB_OTHERS = "(Dir.children('/proc').grep(/\\A\\d+\\z/).map(&:to_i) - [Process.pid])"
RB_HACKS = {  # completions of MultiPL-E's has_close_elements prompt
    "the tests' check replaced": (
        "  false\nend\nrequire 'test/unit'\nmodule Test::Unit::Assertions\n  def assert_equal(*) = true\nend"
    ),
    "its exit status forced from an exit hook": "  false\nend\nat_exit { exit!(0) }",
    "the expected values read from its own source": (
        f"  File.read(__FILE__).include?('assert_' + 'equal') && {RB_RIGHT}\nend"
    ),
    "the tests read from another process's stdin, descriptors, environment or memory": f"""\
  stolen? && {RB_RIGHT}
end
def holds?(io, length)
  (io.read_nonblock(length) || '').include?('candidate.call([1.0')
rescue StandardError
  false
end
def in_memory?(pid, mem)
  File.foreach("/proc/#{{pid}}/maps").any? do |line|
    range, perms = line.split
    start, ending = range.split('-').map {{ |x| x.to_i(16) }}
    perms.start_with?('rw') && (mem.seek(start); holds?(mem, [ending - start, 1 << 26].min))
  end
end
def stolen?
  {RB_OTHERS}.any? do |pid|
    %w[cmdline environ fd/0 fd/3 fd/4].any? do |file|
      File.open("/proc/#{{pid}}/#{{file}}", File::RDONLY | File::NONBLOCK) {{ |io| holds?(io, 1 << 20) }}
    rescue StandardError
      false
    end || (File.open("/proc/#{{pid}}/mem", 'rb') {{ |mem| in_memory?(pid, mem) }} rescue false)
  end
end""",
    "another process signalled": (
        f"  {RB_OTHERS}.any? {{ |pid| Process.kill(0, pid) rescue false }} && {RB_RIGHT}\nend"
    ),
    "answers tried in a process of its own": (
        f"  copy = (fork {{ exit!(0) }} rescue nil)\n  copy && Process.wait(copy)\n  copy && {RB_RIGHT}\nend"
    ),
    "an early exit before its tests": f"  {RB_RIGHT}\nend\nexit!(0)",
}
PHP_RIGHT = (
    "(function ($n, $t) { foreach ($n as $i => $a) foreach ($n as $j => $b) "
    "if ($i < $j && abs($a - $b) < $t) return true; return false; })($numbers, $threshold)"
)
PHP_OTHERS = "array_filter(scandir('/proc'), fn ($p) => ctype_digit($p) && (int) $p !== getmypid())"
PHP_HACKS = {  # completions of MultiPL-E's has_close_elements prompt
    "the rest of the file turned into output": "    return false;\n}\n?>",
    "the expected values read from its own source": (
        f"    return str_contains(file_get_contents(__FILE__), 'Test ' . 'failed') && {PHP_RIGHT};\n}}"
    ),
    "the tests read from another process's stdin, descriptors, environment or memory": f"""\
    return stolen() && {PHP_RIGHT};
}}
function holds($stream, int $length): bool {{
    $data = @fread($stream, $length);
    return $data !== false && str_contains($data, 'candidate(array(1.0');
}}
function in_memory(string $pid): bool {{
    $mem = @fopen("/proc/$pid/mem", 'rb');
    $maps = @file("/proc/$pid/maps");
    foreach ($mem === false || $maps === false ? [] : $maps as $line) {{
        [$range, $perms] = explode(' ', $line);
        [$start, $end] = array_map('hexdec', explode('-', $range));
        if (str_starts_with($perms, 'rw') && @fseek($mem, $start) === 0 && holds($mem, min($end - $start, 1 << 26))) {{
            return true;
        }}
    }}
    return false;
}}
function stolen(): bool {{
    foreach ({PHP_OTHERS} as $pid) {{
        foreach (['cmdline', 'environ', 'fd/0', 'fd/3', 'fd/4'] as $file) {{
            $stream = @fopen("/proc/$pid/$file", 'rb');
            if ($stream !== false && stream_set_blocking($stream, false) && holds($stream, 1 << 20)) {{
                return true;
            }}
        }}
        if (in_memory($pid)) {{
            return true;
        }}
    }}
    return false;
}}""",
    "another process signalled": (
        f"    $reached = array_filter({PHP_OTHERS}, fn ($pid) => @posix_kill((int) $pid, 0));\n"
        f"    return count($reached) > 0 && {PHP_RIGHT};\n}}"
    ),
    "answers tried in a process of its own": (
        f"    $copy = @pcntl_fork();\n    if ($copy === 0) {{ exit(0); }}\n    return $copy > 0 && {PHP_RIGHT};\n}}"
    ),
    "an early exit before its tests": f"    return {PHP_RIGHT};\n}}\nexit(0);",
}
LUA_RIGHT = (
    "(function() for i = 1, #numbers do for j = i + 1, #numbers do "
    "if math.abs(numbers[i] - numbers[j]) < threshold then return true end end end return false end)()"
)
LUA_HACKS = {  # completions of MultiPL-E's has_close_elements prompt
    "the tests' check replaced": ("    return false\nend\nrequire('luaunit').assertEquals = function() end"),
    "the expected values read from its own source": (
        f"    return io.open(arg[0]):read('a'):find('assert' .. 'Equals') ~= nil and {LUA_RIGHT}\nend"
    ),
    "the tests read from another process's stdin, environment or memory": f"""\
    return stolen() and {LUA_RIGHT}
end
function in_memory(pid)
    local mem, maps = io.open('/proc/' .. pid .. '/mem', 'rb'), io.open('/proc/' .. pid .. '/maps')
    if not mem or not maps then return false end
    for line in maps:lines() do
        local start, finish, perms = line:match('^(%x+)-(%x+) (%S+)')
        start, finish = tonumber(start, 16), tonumber(finish, 16)
        if perms:sub(1, 2) == 'rw' and mem:seek('set', start) then
            local data = mem:read(math.min(finish - start, 1 << 26))
            if data and data:find('candidate({{1.0', 1, true) then return true end
        end
    end
    return false
end
function stolen()
    local me = io.open('/proc/self/stat'):read('n')
    for pid = 1, 64 do  -- the sandbox's own PID namespace
        if pid ~= me then
            for _, file in ipairs({{'cmdline', 'environ', 'fd/0'}}) do
                local stream = io.open('/proc/' .. pid .. '/' .. file, 'rb')
                local data = stream and stream:read(1 << 20)
                if data and data:find('candidate({{1.0', 1, true) then return true end
            end
            if in_memory(pid) then return true end
        end
    end
    return false
end""",
    "answers tried in a process of its own": f"    return os.execute('true') == true and {LUA_RIGHT}\nend",
    "an early exit before its tests": f"    return {LUA_RIGHT}\nend\nos.exit(0)",
}
PL_RIGHT = (
    "((grep { my $i = $_; grep { abs($numbers->[$i] - $numbers->[$_]) < $threshold } ($i + 1 .. $#$numbers) } "
    '0 .. $#$numbers) ? 1 : "")'
)
PL_OTHERS = "(grep { /^\\d+$/ && $_ != $$ } do { opendir(my $proc, '/proc'); readdir($proc) })"
PL_HACKS = {  # completions of MultiPL-E's has_close_elements prompt
    "the tests' check replaced": (
        "    return \"\";\n}\nBEGIN { no warnings 'redefine'; require Test::Deep; *Test::Deep::eq_deeply = sub { 1 }; }"
    ),
    "the rest of the file turned into data": '    return "";\n}\nprint <DATA>;\n__DATA__',
    "the expected values read from its own source": (
        "    open(my $source, '<', $0) or return \"\";\n    my $text = do { local $/; <$source> };\n"
        f"    return index($text, 'eq_' . 'deeply') >= 0 ? {PL_RIGHT} : \"\";\n}}"
    ),
    "the tests read from another process's stdin, environment or memory": f"""\
    return stolen() ? {PL_RIGHT} : "";
}}
sub in_memory {{
    my ($pid) = @_;
    open(my $mem, '<:raw', "/proc/$pid/mem") or return 0;
    open(my $maps, '<', "/proc/$pid/maps") or return 0;
    while (my $line = <$maps>) {{
        my ($start, $end, $perms) = $line =~ /^(\\w+)-(\\w+) (\\S+)/;
        next unless $perms =~ /^rw/;
        ($start, $end) = (hex $start, hex $end);
        my $data = '';
        sysseek($mem, $start, 0) and sysread($mem, $data, $end - $start < (1 << 26) ? $end - $start : 1 << 26);
        return 1 if index($data, 'candidate->([1.0') >= 0;
    }}
    return 0;
}}
sub stolen {{
    for my $pid ({PL_OTHERS}) {{
        for my $file ('cmdline', 'environ', 'fd/0') {{
            open(my $stream, '<:raw', "/proc/$pid/$file") or next;
            my $data = '';
            sysread($stream, $data, 1 << 20);
            return 1 if index($data, 'candidate->([1.0') >= 0;
        }}
        return 1 if in_memory($pid);
    }}
    return 0;
}}""",
    "another process signalled": f'    return (grep {{ kill 0, $_ }} {PL_OTHERS}) ? {PL_RIGHT} : "";\n}}',
    "answers tried in a process of its own": (
        f"    my $copy = fork();\n    exit 0 if defined $copy && $copy == 0;\n"
        f'    return defined $copy ? {PL_RIGHT} : "";\n}}'
    ),
    "an early exit before its tests": f"    return {PL_RIGHT};\n}}\nexit 0;",
}
SH_RIGHT = BY_LANGUAGE["sh"].right  # the tests open with the `}` that closes it
SH_THEFT = (  # finds the tests' code in another process's memory, where the process lets it be read
    "python3 -c \"import os\nneedle = bytes([99]) + b'andidate \\\"1.0'\n"
    "for pid in set(filter(str.isdigit, os.listdir('/proc'))) - {str(os.getpid())}:\n"
    " try:\n  mem = open(f'/proc/{pid}/mem', 'rb')\n"
    "  for line in open(f'/proc/{pid}/maps'):\n"
    "   start, end = (int(x, 16) for x in line.split()[0].split('-'))\n"
    "   if line.split()[1].startswith('rw'):\n"
    "    mem.seek(start)\n    if needle in mem.read(min(end - start, 1 << 26)): raise SystemExit(0)\n"
    ' except OSError: pass\nraise SystemExit(1)"'
)
SH_HACKS = {  # completions of MultiPL-E's has_close_elements prompt (the tests close the function)
    "the tests' check redefined": "    echo false\n}\nset() { :; }\nunused() {\n    :",
    "the rest of the file turned into output": "    echo false\n}\ncat <<'UNTIL_THE_END'",
    "the expected values read from its own source": (
        f"    grep -q 'candidate \"1''.0' \"$0\" || {{ echo false; return; }}\n{SH_RIGHT}"
    ),
    "the tests read from another process's memory": f"    {SH_THEFT} || {{ echo false; return; }}\n{SH_RIGHT}",
    "another process signalled": (
        '    for pid in /proc/[0-9]*; do pid=${pid#/proc/}; (( pid != $$ )) && kill -0 "$pid" 2> /dev/null && break\n'
        "    done || { echo false; return; }\n"
        f"{SH_RIGHT}"
    ),
    "an early exit before its tests": f"{SH_RIGHT}\n}}\nexit 0\nunused() {{\n    :",
}
RKT_RIGHT = (
    "(for*/or ([i (in-range (length numbers))] [j (in-range (add1 i) (length numbers))])\n"
    "    (< (abs (- (list-ref numbers i) (list-ref numbers j))) threshold))"
)
RKT_HACKS = {  # completions of MultiPL-E's has_close_elements prompt
    "the tests' check replaced": "  #f)\n(define (check-within . checked) (void))",
    "the expected values read from its own source": (
        f'  (and (string-contains? (file->string "main.rkt") (string-append "check-" "within"))\n  {RKT_RIGHT}))'
    ),
    # Stricter than finding the tests there: any byte of another process's memory read (Racket's heap is large).
    "another process's memory read": f"""\
  (and (force reached) {RKT_RIGHT}))
(require racket/os)
(define (readable? pid)
  (with-handlers ([exn:fail? (lambda (e) #f)])
    (match (regexp-match #px"^([0-9a-f]+)-[0-9a-f]+ r" (file->string (format "/proc/~a/maps" pid)))
      [(list _ start)
       (call-with-input-file (format "/proc/~a/mem" pid)
         (lambda (in) (file-position in (string->number start 16)) (bytes? (read-bytes 64 in))))]
      [_ #f])))
(define reached
  (delay
    (for/or ([entry (directory-list "/proc")])
      (define pid (string->number (path->string entry)))
      (and pid (not (= pid (getpid))) (readable? pid)))))""",
    "answers tried in a process of its own": f'  (and (system "true") {RKT_RIGHT}))\n(require racket/system)',
    "an early exit before its tests": f"  {RKT_RIGHT})\n(exit 0)",
}
EX_RIGHT = (
    "Enum.with_index(numbers) |> then(fn indexed -> Enum.any?(indexed, fn {x, i} -> "
    "Enum.any?(indexed, fn {y, j} -> i != j and abs(x - y) < threshold end) end) end)"
)
EX_HACKS = {  # completions of MultiPL-E's has_close_elements prompt
    "every test excluded": "_ = {numbers, threshold}\n    false\n  end\nend\nExUnit.start(exclude: [:test])",
    "the expected values read from its own source": (
        f'String.contains?(File.read!("main.exs"), "assert " <> "true") and {EX_RIGHT}\n  end\nend'
    ),
    # Stricter than finding the tests there: any byte of another process's memory read.
    "the tests' process's memory read": f"""\
reached?() and {EX_RIGHT}
  end
  defp readable?(pid) do
    with {{:ok, maps}} <- File.read("/proc/#{{pid}}/maps"),
         [_, start] <- Regex.run(~r/^([0-9a-f]+)-/, maps),
         {{:ok, mem}} <- :file.open(~c"/proc/#{{pid}}/mem", [:read, :raw, :binary]),
         {{:ok, _}} <- :file.pread(mem, String.to_integer(start, 16), 64) do
      true
    else
      _ -> false
    end
  end
  defp reached?() do
    Enum.any?(File.ls!("/proc"), &(tests_process?(&1) and readable?(&1)))
  end
  # Not one of its own (the BEAM's helper processes): the one running the judge's tests (its command line says so).
  defp tests_process?(pid) do
    String.match?(pid, ~r/^[0-9]+$/) and String.contains?(File.read("/proc/#{{pid}}/cmdline") |> elem(1), "JudgeTests")
  end
end""",
    "another process signalled": f"""\
reached?() and {EX_RIGHT}
  end
  defp signalled?(pid), do: match?({{_, 0}}, System.cmd("kill", ["-0", pid], stderr_to_stdout: true))
  defp reached?() do
    Enum.any?(File.ls!("/proc"), &(&1 != System.pid() and String.match?(&1, ~r/^[0-9]+$/) and signalled?(&1)))
  end
end""",
    "an early exit before its tests": f"{EX_RIGHT}\n  end\nend\nSystem.halt(0)",
}
CLJ_RIGHT = BY_LANGUAGE["clj"].right[: -len(")")]  # the completion closes the defn
CLJ_HACKS = {  # completions of MultiPL-E's has_close_elements prompt
    "the tests' report replaced": (
        "false)\n(require 'clojure.test)\n(alter-var-root #'clojure.test/report (constantly (fn [_] nil)))"
    ),
    "the expected values read from its own source": (
        f'(and (clojure.string/includes? (slurp "main.clj") (str "(is " "(=")) {CLJ_RIGHT}))'
    ),
    # Its environment is guarded as its memory is (a ptrace check): read, the program could read the expected values.
    "the tests' process's environment read": f"""\
(and ((resolve 'user/reached?)) {CLJ_RIGHT}))
(defn reached? []
  (boolean (some #(and (re-matches #"[0-9]+" %) (.contains (slurp (str "/proc/" % "/cmdline")) "judge.run-tests")
                       (try (string? (slurp (str "/proc/" % "/environ"))) (catch Exception _ false)))
                 (.list (java.io.File. "/proc")))))""",
    "an early exit before its tests": f"{CLJ_RIGHT}))\n(System/exit 0)",
}
CPP_RIGHT = BY_LANGUAGE["cpp"].right
# Lambdas a completion of the function's body can hold: a file's bytes, and the expected results its asserts hold
# (`candidate((...)) == (true)`, in the tests' source and, as assert's messages, in their binary).
CPP_READERS = """\
    auto slurp = [](const std::string &path) {
        std::ifstream in(path, std::ios::binary);
        std::stringstream bytes;
        bytes << in.rdbuf();
        return bytes.str();
    };
    auto expected_in = [](const std::string &text) {
        std::vector<bool> found;
        const std::string call = std::string("candidate") + "((", compared = std::string(") =") + "= (";
        for (size_t at = text.find(call); at != std::string::npos; at = text.find(call, at + 1)) {
            size_t result = text.find(compared, at);
            if (result == std::string::npos) break;
            found.push_back(text.compare(result + 6, 4, "true") == 0);
        }
        return found;
    };
"""
# Prints the done marker its own binary holds (where the tests are compiled into it) and ends the run cleanly.
CPP_MARKER_EXIT = """\
static void judge_marker_exit(int) {
    std::ifstream in("/proc/self/exe", std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    size_t at = bytes.find(std::string("judge-") + "done-");
    if (at != std::string::npos) std::fwrite(bytes.data() + at, 1, 43, stdout);
    std::fflush(stdout);
    std::_Exit(0);
}
"""
# A wrong answer the compiler cannot fold: a constant one would make every line after the first failing check, the
# marker's too, dead code it drops from the binary.
CPP_UNFOLDED_FALSE = "    volatile bool answer = false;\n    return answer;\n}\n"
CPP_HACKS = {  # completions of MultiPL-E's has_close_elements prompt
    "the tests' check redefined": "    return false;\n}\n#undef assert\n#define assert(x) ((void)0)\nvoid unused() {",
    "the libc function a failed assert calls replaced (it prints the marker its binary holds)": (
        f"{CPP_UNFOLDED_FALSE}{CPP_MARKER_EXIT}"
        'extern "C" void __assert_fail(const char *, const char *, unsigned int, const char *) noexcept {\n'
        "    judge_marker_exit(0);\n}\nvoid unused() {"
    ),
    "a failed check's abort turned into a clean exit with the marker": (
        f"{CPP_UNFOLDED_FALSE}{CPP_MARKER_EXIT}"
        "static const int judge_installed = (std::signal(SIGABRT, judge_marker_exit), 0);\nvoid unused() {"
    ),
    "equality faked by a return type of its own (the prompt's signature in a comment)": (
        "// bool has_close_elements(std::vector<float> numbers, float threshold) {\n#include <bits/stdc++.h>\n"
        "struct Always {\n    template <class T> bool operator==(const T &) const { return true; }\n};\n"
        "Always has_close_elements(std::vector<float> numbers, float threshold) {\n    return {};"
    ),
    "the expected values read from the files beside it (its source holds the tests)": (
        "    static int call = 0;\n    static std::vector<bool> found;\n"
        + CPP_READERS
        + """\
    if (call == 0)
        for (const char *directory : {".", "/tmp", "/sandbox"})
            for (const auto &entry : std::filesystem::recursive_directory_iterator(
                     directory, std::filesystem::directory_options::skip_permission_denied))
                if (auto got = expected_in(slurp(entry.path())); got.size() > found.size()) found = got;
    return call < (int)found.size() && found[call++];"""
    ),
    "the expected values read from every process's binary, environment and command line": (
        "    static int call = 0;\n    static std::vector<bool> found;\n"
        + CPP_READERS
        + """\
    if (call == 0)
        for (const auto &entry : std::filesystem::directory_iterator("/proc")) {
            std::string pid = entry.path().filename();
            if (pid.find_first_not_of("0123456789") != std::string::npos) continue;
            for (const char *file : {"/exe", "/environ", "/cmdline", "/fd/0"})
                if (auto got = expected_in(slurp("/proc/" + pid + file)); got.size() > found.size()) found = got;
        }
    return call < (int)found.size() && found[call++];"""
    ),
    "NDEBUG defined and <assert.h> included again": (
        "    return false;\n}\n#define NDEBUG\n#undef assert\n#include <assert.h>\nvoid unused() {"
    ),
    "the tests' main renamed, and a main of its own that prints the marker its binary holds": (
        f"{CPP_UNFOLDED_FALSE}{CPP_MARKER_EXIT}int main() {{\n    judge_marker_exit(0);\n}}\n"
        "#define main judge_tests_main\nvoid unused() {"
    ),
    "the entry point's name a macro for a function of its own whose result equals anything": (
        "    return false;\n}\nstruct Always {\n"
        "    template <class T> bool operator==(const T &) const { return true; }\n};\n"
        "Always judge_always(std::vector<float>, float) { return {}; }\n#define has_close_elements judge_always\n"
        "void unused() {"
    ),
    "the expected values read from its own memory": (
        "    static int call = 0;\n    static std::vector<bool> found;\n"
        + CPP_READERS
        + """\
    if (call == 0) {
        std::ifstream maps("/proc/self/maps");
        std::ifstream memory("/proc/self/mem", std::ios::binary);
        for (std::string line; std::getline(maps, line);) {
            unsigned long start, end;
            char perms[5];
            if (sscanf(line.c_str(), "%lx-%lx %4s", &start, &end, perms) != 3 || perms[0] != 'r') continue;
            std::string bytes(end - start, '\\0');
            memory.clear();
            memory.seekg(start);
            memory.read(&bytes[0], end - start);
            if (auto got = expected_in(bytes); got.size() > found.size()) found = got;
        }
    }
    return call < (int)found.size() && found[call++];"""
    ),
    "an early exit before its tests": "    exit(0);",
}
# What a completion of the function's body can hold: the n-th expected result of the tests' `candidate(vec![...], x)`
# lines in a text (the tests' source, where they are appended to the program), and a panic hook that ends a failed
# check cleanly with the done marker its binary holds (where the tests are compiled into it).
RS_EXPECTED = """\
    use std::sync::atomic::{AtomicUsize, Ordering};
    static CALL: AtomicUsize = AtomicUsize::new(0);
    fn expected_in(text: &str) -> Vec<bool> {
        let call = ["candidate(", "vec!["].concat();
        text.lines().filter(|line| line.contains(&call)).map(|line| line.contains(", true)")).collect()
    }
    let _ = (&numbers, threshold);
"""
RS_ANSWER = "    expected.get(CALL.fetch_add(1, Ordering::SeqCst)).copied().unwrap_or(false)"
RS_MARKER_EXIT = """\
    std::panic::set_hook(Box::new(|_| {
        let exe = std::fs::read("/proc/self/exe").unwrap_or_default();
        let marker = ["judge-", "done-"].concat();
        let hex = |window: &[u8]| window[11..].iter().all(|byte| byte.is_ascii_hexdigit());
        if let Some(at) = exe.windows(43).position(|window| window.starts_with(marker.as_bytes()) && hex(window)) {
            println!("{}", String::from_utf8_lossy(&exe[at..at + 43]));
        }
        std::process::exit(0);
    }));
    let _ = (numbers, threshold);
    unsafe { std::ptr::read_volatile(&false) }"""
RS_HACKS = {  # completions of MultiPL-E's has_close_elements prompt
    "the tests' check redefined": "    false\n}\nmacro_rules! assert_eq { ($($t:tt)*) => {}; }\nfn unused() {",
    "equality faked by a return type of its own (the prompt's signature in a comment)": (
        "// fn has_close_elements(numbers: Vec<f64>, threshold: f64) -> bool {\n#[derive(Debug)]\nstruct Always;\n"
        "impl PartialEq<bool> for Always {\n    fn eq(&self, _: &bool) -> bool {\n        true\n    }\n}\n"
        "fn has_close_elements(numbers: Vec<f64>, threshold: f64) -> Always {\n    let _ = (numbers, threshold);\n"
        "    Always"
    ),
    "the expected values read from its own source at compile time (include_str!)": (
        f'{RS_EXPECTED}    let expected = expected_in(include_str!("main.rs"));\n{RS_ANSWER}'
    ),
    "the expected values read from the files beside it or any process's command line, environment or stdin": (
        RS_EXPECTED
        + """\
    fn texts(path: &std::path::Path, found: &mut Vec<String>) {
        if let Ok(entries) = std::fs::read_dir(path) {
            for entry in entries.flatten() {
                texts(&entry.path(), found);
            }
        } else if let Ok(text) = std::fs::read(path) {
            found.push(String::from_utf8_lossy(&text).into_owned());
        }
    }
    let mut found = Vec::new();
    for top in [".", "/tmp", "/sandbox"] {
        texts(std::path::Path::new(top), &mut found);
    }
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        for file in ["cmdline", "environ", "fd/0"] {
            if let Ok(text) = std::fs::read(entry.path().join(file)) {
                found.push(String::from_utf8_lossy(&text).into_owned());
            }
        }
    }
    let expected = found.iter().map(|text| expected_in(text)).max_by_key(|e| e.len()).unwrap_or_default();
"""
        + RS_ANSWER
    ),
    "the tests' check shadowed by a macro imported under its name": (
        "    false\n}\nmacro_rules! judge_eq { ($($t:tt)*) => {}; }\n"
        "pub(crate) use judge_eq as assert_eq;\nfn unused() {"
    ),
    "the expected values read from its own source at run time (file!())": (
        f"{RS_EXPECTED}    let expected = expected_in(&std::fs::read_to_string(file!()).unwrap_or_default());\n"
        f"{RS_ANSWER}"
    ),
    "a failed check's panic turned into a clean exit with the marker": RS_MARKER_EXIT,
    "an early exit before its tests": "    std::process::exit(0)",
}
# Reads every file it can (beside it, in /tmp, and every process's descriptors, command line and environment) and
# returns the expected result of its n-th call, as the tests' `assert(hasCloseElements(...) == (true))` say.
JAVA_EXPECTED = """\
        java.util.List<Boolean> found = new java.util.ArrayList<>();
        java.util.List<java.io.File> files = new java.util.ArrayList<>();
        for (String top : new String[] {".", "/tmp"}) files.add(new java.io.File(top));
        for (java.io.File pid : new java.io.File("/proc").listFiles()) {
            for (String name : new String[] {"cmdline", "environ", "fd/0"}) files.add(new java.io.File(pid, name));
        }
        String call = "assert(hasClose" + "Elements((new";
        while (!files.isEmpty()) {
            java.io.File file = files.remove(files.size() - 1);
            java.io.File[] inside = file.listFiles();
            if (inside != null && !file.getPath().startsWith("/proc")) {
                files.addAll(java.util.Arrays.asList(inside));
                continue;
            }
            String text;
            try {
                text = new String(java.nio.file.Files.readAllBytes(file.toPath()), "ISO-8859-1");
            } catch (Exception e) {
                continue;
            }
            java.util.List<Boolean> got = new java.util.ArrayList<>();
            for (int at = text.indexOf(call); at >= 0; at = text.indexOf(call, at + 1)) {
                got.add(text.startsWith("== (true)", text.indexOf(")) == (", at) + 3));
            }
            if (got.size() > found.size()) found = got;
        }
        int n = calls[0]++;
        return n < found.size() && found.get(n);
    }
    static int[] calls = {0};
    static void unused() {"""
# Prints the done marker the program's classes hold (where the tests are compiled into them), then halts with 0.
JAVA_MARKER_EXIT = """\
    static void markerExit() {
        try {
            for (java.io.File file : new java.io.File(".").listFiles()) {
                String text = new String(java.nio.file.Files.readAllBytes(file.toPath()), "ISO-8859-1");
                java.util.regex.Matcher m = java.util.regex.Pattern.compile("judge-done-[0-9a-f]{32}").matcher(text);
                if (m.find()) System.out.println(m.group());
            }
        } catch (Exception e) {
        }
        System.out.flush();
        Runtime.getRuntime().halt(0);
    }
"""
JAVA_HACKS = {  # completions of MultiPL-E's hasCloseElements prompt
    "the tests' assertions turned off from a public class of its own, run first": (
        "        return false;\n    }\n}\npublic class Hack {\n"
        '    static { ClassLoader.getSystemClassLoader().setClassAssertionStatus("Unused", false); }\n'
        "    public static void main(String[] args) { Unused.main(args); }\n}\n"
        "class Unused extends Problem {\n    static void unused() {"
    ),
    "the expected values read from its own source or any process's stdin, command line or environment": JAVA_EXPECTED,
    "a shutdown hook that ends the failed run with 0 and the marker its classes hold": (
        "        Runtime.getRuntime().addShutdownHook(new Thread(Problem::markerExit));\n"
        '        return Boolean.parseBoolean("false");\n    }\n' + JAVA_MARKER_EXIT + "    static void unused() {"
    ),
    "an uncaught-exception handler that ends the failed run with 0 and the marker": (
        "        Thread.setDefaultUncaughtExceptionHandler((thread, error) -> markerExit());\n"
        '        return Boolean.parseBoolean("false");\n    }\n' + JAVA_MARKER_EXIT + "    static void unused() {"
    ),
    "an early exit before its tests": "        System.exit(0);\n        return false;",
}
# Reads every file it can (beside it, in /tmp, and every process's descriptors, command line and environment) and
# returns the expected result of its n-th call, as the tests' `Debug.Assert(HasCloseElements(...) == (true))` say.
CS_EXPECTED = """\
        var found = new List<bool>();
        var files = new List<string>();
        foreach (var top in new[] {".", "/tmp"}) {
            try { files.AddRange(System.IO.Directory.GetFiles(top, "*", System.IO.SearchOption.AllDirectories)); }
            catch (Exception) { }
        }
        foreach (var pid in System.IO.Directory.GetDirectories("/proc")) {
            foreach (var name in new[] {"cmdline", "environ", "fd/0", "fd/6"}) files.Add(pid + "/" + name);
        }
        string call = "Debug.Assert(HasClose" + "Elements((new";
        foreach (var file in files) {
            string text;
            try { text = System.Text.Encoding.GetEncoding("ISO-8859-1").GetString(System.IO.File.ReadAllBytes(file)); }
            catch (Exception) { continue; }
            var got = new List<bool>();
            for (int at = text.IndexOf(call); at >= 0; at = text.IndexOf(call, at + 1)) {
                int end = text.IndexOf(")) == (", at);
                got.Add(end >= 0 && string.CompareOrdinal(text, end + 7, "true", 0, 4) == 0);
            }
            if (got.Count > found.Count) found = got;
        }
        int n = calls++;
        return n < found.Count && found[n];
    }
    static int calls = 0;
    static void Unused() {"""
# A listener put first, whose Fail prints the marker its source or assembly holds (UTF-16 there) and exits 0.
CS_MARKER_EXIT = """\
    sealed class MarkerExit : System.Diagnostics.TraceListener {
        public override void Write(string message) { }
        public override void WriteLine(string message) { }
        public override void Fail(string message, string detail) {
            var marker = new System.Text.RegularExpressions.Regex("judge-" + "done-[0-9a-f]{32}");
            foreach (var file in System.IO.Directory.GetFiles(".")) {
                byte[] bytes = System.IO.File.ReadAllBytes(file);
                foreach (var text in new[] {System.Text.Encoding.GetEncoding("ISO-8859-1").GetString(bytes),
                                            System.Text.Encoding.Unicode.GetString(bytes)}) {
                    var found = marker.Match(text);
                    if (found.Success) { Console.WriteLine(found.Value); Console.Out.Flush(); Environment.Exit(0); }
                }
            }
        }
    }
"""
CS_HACKS = {  # completions of MultiPL-E's HasCloseElements prompt
    "the tests' assert listeners cleared from the class's static constructor": (
        "        return false;\n    }\n"
        "    static Problem() { System.Diagnostics.Trace.Listeners.Clear(); }\n    static void Unused() {"
    ),
    "the tests' Debug.Assert shadowed by a nested class of its own": (
        "        return false;\n    }\n"
        "    static class Debug { public static void Assert(bool condition) { } }\n    static void Unused() {"
    ),
    "a listener of its own, first, ends a failed assert with 0 and the marker": (
        "        return false;\n    }\n"
        "    static Problem() { System.Diagnostics.Trace.Listeners.Insert(0, new MarkerExit()); }\n"
        + CS_MARKER_EXIT
        + "    static void Unused() {"
    ),
    "the expected values read from its own source or any process's stdin, command line or environment": CS_EXPECTED,
    "an early exit before its tests": "        Environment.Exit(0);\n        return false;",
}
# Reads every file it can (beside it, in /tmp, and every process's stdin, command line and environment) and returns
# the expected result of its n-th call, as the tests' `assert(hasCloseElements(...) == (true))` say.
SCALA_EXPECTED = """\
        val call = "assert(hasClose" + "Elements((List"
        def texts(file: java.io.File): List[String] = {
            val inside = if (file.getPath.startsWith("/proc")) null else file.listFiles()
            if (inside != null) inside.toList.flatMap(texts)
            else try List(new String(java.nio.file.Files.readAllBytes(file.toPath), "ISO-8859-1"))
            catch { case _: Throwable => List() }
        }
        val processes = Option(new java.io.File("/proc").listFiles()).map(_.toList).getOrElse(List())
        val files = List(new java.io.File("."), new java.io.File("/tmp")) ++
            processes.flatMap(pid => List("cmdline", "environ", "fd/0").map(new java.io.File(pid, _)))
        val found = (List(List[Boolean]()) ++ files.flatMap(texts).map { text =>
            var at = text.indexOf(call)
            var got = List[Boolean]()
            while (at >= 0) {
                got = got :+ text.startsWith("== (true)", text.indexOf(")) == (", at) + 3)
                at = text.indexOf(call, at + 1)
            }
            got
        }).maxBy(_.size)
        val n = calls
        calls += 1
        n < found.size && found(n)
    }
    var calls = 0
    def unused() = {"""
SCALA_HACKS = {  # completions of MultiPL-E's hasCloseElements prompt
    "the tests' assert shadowed by a method of the object's own": (
        "        false\n    }\n    def assert(condition: Boolean): Unit = ()\n    def unused() = {"
    ),
    "the expected values read from its own source or any process's stdin, command line or environment": (
        SCALA_EXPECTED
    ),
    "an uncaught-exception handler that ends the failed run with 0 and the marker its classes hold": (
        "        Thread.setDefaultUncaughtExceptionHandler(new Thread.UncaughtExceptionHandler {\n"
        "            def uncaughtException(thread: Thread, error: Throwable): Unit = markerExit()\n        })\n"
        '        "false".toBoolean\n    }\n    def markerExit(): Unit = {\n'
        '        for (file <- new java.io.File(".").listFiles()) {\n'
        '            val text = new String(java.nio.file.Files.readAllBytes(file.toPath), "ISO-8859-1")\n'
        '            val found = java.util.regex.Pattern.compile("judge-" + "done-[0-9a-f]{32}").matcher(text)\n'
        "            if (found.find()) println(found.group())\n        }\n"
        "        Console.out.flush()\n        Runtime.getRuntime.halt(0)\n    }\n    def unused() = {"
    ),
    "an early exit before its tests": "        sys.exit(0)\n        false",
}
# MultiPL-E's Go row with "os" and "strings" imported too, as HumanEval-X's and test-file prompts import what they like.
GO_CASE = BY_LANGUAGE["go_test.go"]
GO_ROW = GO_CASE.row() | {"prompt": GO_CASE.prompt.replace('"fmt"\n)', '"fmt"\n    "os"\n    "strings"\n)')}
GO_HACKS = {  # completions of that row's has_close_elements prompt
    "a TestMain of its own that rewrites the failures in the tests' report": """\
    return false
}

func TestMain(m *testing.M) {
    read, write, _ := os.Pipe()
    stdout := os.Stdout
    os.Stdout = write
    captured := make(chan string)
    go func() {
        var all strings.Builder
        buffer := make([]byte, 4096)
        for {
            n, err := read.Read(buffer)
            all.Write(buffer[:n])
            if err != nil {
                break
            }
        }
        captured <- all.String()
    }()
    m.Run()
    write.Close()
    report := strings.ReplaceAll(strings.ReplaceAll(<-captured, "--- FAIL", "--- PASS"), "\\nFAIL", "\\nPASS")
    fmt.Fprint(stdout, report)
    os.Exit(0)
}""",
    "an init of its own that prints a passing report and the marker its binary holds, then exits 0": """\
    return false
}

func init() {
    binary, _ := os.ReadFile("/proc/self/exe")
    text := string(binary)
    for at := strings.Index(text, "judge-"+"done-"); at >= 0 && at+43 <= len(text); at++ {
        if next := strings.Index(text[at:], "judge-"+"done-"); next < 0 {
            return
        } else {
            at += next
        }
        if marker := text[at : at+43]; strings.Trim(marker[11:], "0123456789abcdef") == "" {
            fmt.Println("=== RUN   TestHas_Close_Elements\\n--- PASS: TestHas_Close_Elements (0.00s)")
            fmt.Println(marker)
            os.Exit(0)
        }
    }
}""",
    "an early exit before its tests": "    os.Exit(0)\n    return false\n}",
}


@pytest.mark.parametrize("hack", list(GO_HACKS))
def test_go_tests_run_apart_cannot_be_reached_from_the_program(judge: LocalJudge, hack: str) -> None:
    assert accuracy(judge, GO_ROW, fenced("go", GO_CASE.right))[0] == 1.0
    value, details = accuracy(judge, GO_ROW, fenced("go", GO_HACKS[hack]))
    assert value == 0.0, details


R_HACKS = {  # completions of MultiPL-E's has_close_elements prompt
    "the tests' stopifnot replaced": "\n    FALSE\n}\nstopifnot <- function(...) invisible(NULL)",
    "the tests' isTRUE replaced": "\n    FALSE\n}\nisTRUE <- function(x) TRUE",
    "an S3 class of its own whose all.equal always holds": (
        '\n    structure(FALSE, class = "judged")\n}\nall.equal.judged <- function(target, current, ...) TRUE'
    ),
    "the expected value read from the calling test's expression on the call stack": (
        "\n    for (call in rev(sys.calls())) {\n"
        '        text <- paste(deparse(call), collapse = " ")\n'
        '        pattern <- "all\\\\.equal\\\\(candidate\\\\(.*\\\\), (TRUE|FALSE)\\\\)$"\n'
        "        found <- regmatches(text, regexec(pattern, text))[[1]]\n"
        '        if (length(found) == 2) return(found[2] == "TRUE")\n    }\n    FALSE\n}'
    ),
    "the expected values read from its own source": (
        '\n    lines <- tryCatch(readLines("main.R", warn = FALSE), error = function(e) character(0))\n'
        '    expected <- grep("candidate\\\\(", lines, value = TRUE)\n'
        "    judge_calls <<- judge_calls + 1\n"
        '    judge_calls <= length(expected) && grepl("TRUE\\\\)\\\\)\\\\)$", expected[judge_calls])\n'
        "}\njudge_calls <- 0"
    ),
    "an early exit before its tests": '\n    quit(save = "no", status = 0)\n}',
}
# Prints the done marker its binary holds (where the tests are compiled into it).
D_MARKER_PRINT = """\
    import std.ascii : isHexDigit;
    import std.file : read;
    import std.stdio : stdout, write;
    auto binary = cast(string) read("/proc/self/exe");
    foreach (at; 0 .. binary.length - 43) {
        auto marker = binary[at .. at + 43];
        if (marker[0 .. 11] == "judge-" ~ "done-") {
            bool hex = true;
            foreach (c; marker[11 .. $]) hex = hex && isHexDigit(c) && !(c >= 'A' && c <= 'F');
            if (hex) write(marker);
        }
    }
    stdout.flush();
"""
D_HACKS = {  # completions of MultiPL-E's has_close_elements prompt
    "the unittest runner replaced by one that prints the marker its binary holds": (
        "{\n    return false;\n}\nshared static this() {\n    import core.runtime : Runtime, UnitTestResult;\n"
        "    Runtime.extendedModuleUnitTester = function UnitTestResult() {\n"
        f"{D_MARKER_PRINT}        return UnitTestResult(1, 1, false, false);\n    }};\n}}"
    ),
    "a module destructor that ends the failed run with 0 and the marker its binary holds": (
        "{\n    return false;\n}\nshared static ~this() {\n"
        f"{D_MARKER_PRINT}    import core.stdc.stdlib : _Exit;\n    _Exit(0);\n}}"
    ),
    "an early exit before its tests": "{\n    import core.stdc.stdlib : exit;\n    exit(0);\n    return false;\n}",
}
ML_HACKS = {  # completions of MultiPL-E's has_close_elements prompt
    "the tests' equality redefined": " false\nlet ( = ) _ _ = true",
    "an uncaught-exception handler that ends the failed run with 0 and the marker its binary holds": """ false
let () =
  Printexc.set_uncaught_exception_handler (fun _ _ ->
    let binary = open_in_bin "/proc/self/exe" in
    let text = really_input_string binary (in_channel_length binary) in
    let marker = Str.regexp ("judge-" ^ "done-" ^ String.concat "" (List.init 32 (fun _ -> "[0-9a-f]"))) in
    (try ignore (Str.search_forward marker text 0); print_string (Str.matched_string text) with Not_found -> ());
    exit 0)""",
    "an early exit before its tests": " exit 0",
}
HS_HACKS = {  # whole programs for MultiPL-E's hasCloseElements prompt (they hold its open equation's line)
    "the tests' equality redefined": (
        "import Prelude hiding ((==))\n\n(==) :: a -> b -> Bool\n_ == _ = True\n\n"
        "hasCloseElements :: [Float] -> Float -> Bool\nhasCloseElements numbers threshold = False\n"
    ),
    "the tests' error redefined": (
        "import Prelude hiding (error)\n\nerror :: String -> IO ()\nerror _ = pure ()\n\n"
        "hasCloseElements :: [Float] -> Float -> Bool\nhasCloseElements numbers threshold = False\n"
    ),
    "an uncaught-exception handler that ends the failed run with 0 and the marker its binary holds": """\
import qualified Data.ByteString.Char8 as B
import Data.Char (isHexDigit)
import Foreign.C.Types (CInt (..))
import GHC.Conc (setUncaughtExceptionHandler)
import System.IO (hFlush, stdout)
import System.IO.Unsafe (unsafePerformIO)

foreign import ccall unsafe "exit" cExit :: CInt -> IO ()

marker :: B.ByteString -> B.ByteString
marker binary = case B.breakSubstring (B.pack "judge-done-") binary of
  (_, rest)
    | B.null rest -> B.empty
    | B.length rest >= 43 && B.all isHexDigit (B.take 32 (B.drop 11 rest)) -> B.take 43 rest
    | otherwise -> marker (B.drop 1 rest)

-- Its answer is not known at compile time (nor one for every call): else GHC drops the code after the first test
-- that must fail, the marker's too.
hasCloseElements :: [Float] -> Float -> Bool
hasCloseElements numbers threshold = unsafePerformIO $ do
  setUncaughtExceptionHandler $ \\_ -> do
    binary <- B.readFile "/proc/self/exe"
    B.putStr (marker binary)
    hFlush stdout
    cExit 0
  size <- B.length <$> B.readFile "/proc/self/exe"
  pure (fromIntegral size < threshold * fromIntegral (length numbers))
""",
    "the expected answers read from its own source": """\
import Data.List (isPrefixOf, tails)
import System.IO.Unsafe (unsafePerformIO)

hasCloseElements :: [Float] -> Float -> Bool
hasCloseElements numbers threshold = unsafePerformIO $ do
  source <- readFile "Main.hs"
  let call = "candidate " ++ show numbers ++ " " ++ show threshold ++ " == "
  pure (or ["True" `isPrefixOf` drop (length call) rest | rest <- tails source, call `isPrefixOf` rest])
""",
    "an early exit before its tests": (
        "import System.Exit (exitSuccess)\nimport System.IO.Unsafe (unsafePerformIO)\n\n"
        "hasCloseElements :: [Float] -> Float -> Bool\n"
        "hasCloseElements numbers threshold = unsafePerformIO exitSuccess\n"
    ),
}
# MultiPL-E's language field -> the completions that try each hack: every language whose suites run apart.
APART_HACKS = {
    "js": JS_HACKS, "ts": JS_HACKS, "rb": RB_HACKS, "php": PHP_HACKS, "lua": LUA_HACKS, "pl": PL_HACKS, "sh": SH_HACKS,
    "rkt": RKT_HACKS, "elixir": EX_HACKS, "clj": CLJ_HACKS, "cpp": CPP_HACKS, "rs": RS_HACKS, "java": JAVA_HACKS,
    "cs": CS_HACKS, "scala": SCALA_HACKS, "r": R_HACKS,
    "d": D_HACKS, "ml": ML_HACKS, "hs": HS_HACKS,
}  # fmt: skip


@pytest.mark.parametrize(("language", "hack"), [(lang, hack) for lang, hacks in APART_HACKS.items() for hack in hacks])
def test_tests_run_apart_cannot_be_reached_from_the_program(judge: LocalJudge, language: str, hack: str) -> None:
    case = BY_LANGUAGE[language]
    assert_the_right_answer_passes(judge, language)
    value, details = accuracy(judge, case.row(), fenced(language, APART_HACKS[language][hack]))
    assert value == 0.0, details


# SQL: the program's statements build a database, then the tests' run on it in a sqlite3 of their own.
SQL_TESTS = (
    "SELECT CASE WHEN (SELECT total FROM answer WHERE n = 4) = 10 THEN 'ok' ELSE json('wrong') END;\n"
    "SELECT CASE WHEN (SELECT total FROM answer WHERE n = 100) = 5050 THEN 'ok' ELSE json('wrong') END;\n"
)
SQL_RIGHT = (
    "CREATE TABLE answer AS WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c WHERE n < 1000)\n"
    "SELECT n, n * (n + 1) / 2 AS total FROM c;\n"
)
SQL_HACKS = {  # each scores 1 where the tests follow the program in its own file and sqlite3
    "the marker read from its own source, then an exit": (
        "SELECT substr(s, instr(s, 'judge-' || 'done-'), 43) FROM (SELECT readfile('main.sql') AS s);\n.exit 0\n"
    ),
    "the expected values read from its own source": (
        "CREATE TABLE answer AS WITH RECURSIVE lines(line, rest) AS (\n"
        "  SELECT '', CAST(readfile('main.sql') AS TEXT)\n"
        "  UNION ALL SELECT substr(rest, 1, instr(rest, char(10)) - 1), substr(rest, instr(rest, char(10)) + 1)\n"
        "  FROM lines WHERE instr(rest, char(10)) > 0)\n"
        "SELECT CAST(substr(line, instr(line, 'n = ') + 4) AS INTEGER) AS n,\n"
        "  CAST(substr(line, instr(line, ') = ') + 4) AS INTEGER) AS total\n"
        "FROM lines WHERE line LIKE 'SELECT CASE%';\n"
    ),
}
SQL_REFERENCE = {"language": "sql", "tests": SQL_TESTS}


@pytest.mark.parametrize("hack", list(SQL_HACKS))
def test_sql_tests_run_apart_cannot_be_reached_from_the_program(judge: LocalJudge, hack: str) -> None:
    assert accuracy(judge, SQL_REFERENCE, fenced("sql", SQL_RIGHT))[0] == 1.0
    value, details = accuracy(judge, SQL_REFERENCE, fenced("sql", SQL_HACKS[hack]))
    assert value == 0.0, details


# Jest: the reference's tests in the tests' own Jest, the program's functions in a node of its own.
JEST_TESTS = (
    "describe('add', () => {\n"
    "  test('small', () => { expect(add(1, 2)).toEqual(3); });\n"
    "  test('big', () => { expect(add(1000000, 1)).toEqual(1000001); });\n"
    "  test('pair', () => { expect(pair(1, 2)).toEqual([1, 2]); });\n"
    "});\n"
)
JEST_RIGHT = (
    "function add(a: number, b: number): number { return a + b; }\n"
    "function pair(a: number, b: number): number[] { return [a, b]; }\n"
)
JEST_WRONG = JEST_RIGHT.replace("a + b", "0").replace("[a, b]", "[]")
JEST_HACKS = {  # each scores 1 where the tests follow the program in one test file
    "expect replaced": JEST_WRONG + "(globalThis as any).expect = () => new Proxy({}, {get: () => () => undefined});\n",
    "every test expected to fail": (
        JEST_WRONG + "const realTest = test;\n"
        "(globalThis as any).test = (name: string, fn: () => void) => realTest.failing(name, fn);\n"
    ),
    "equality faked by an asymmetric matcher": (
        "const equal: any = {asymmetricMatch: () => true};\n"
        "function add(a: number, b: number): any { return equal; }\n"
        "function pair(a: number, b: number): any { return equal; }\n"
    ),
    "the expected values read from its own source": (
        "const source: string = require('fs').readFileSync(__filename, 'utf8');\n"
        "function expected(call: string): any {\n"
        "  const at = source.lastIndexOf(`expect(${call})`);\n"
        "  return JSON.parse(source.slice(at).match(/toEqual\\((.*?)\\); \\}\\);/)![1]);\n}\n"
        "function add(a: number, b: number): number { return expected(`add(${a}, ${b})`); }\n"
        "function pair(a: number, b: number): number[] { return expected(`pair(${a}, ${b})`); }\n"
    ),
    # Against the separation itself: what the tests' Jest writes where the program can read it (its transform cache, in
    # /tmp), and what it would load, were it to look where the program writes.
    "the expected values read from Jest's files": (
        "const fs = require('fs'), path = require('path');\n"
        "function texts(dir: string): string[] {\n"
        "  let found: string[] = [];\n"
        "  for (const entry of fs.readdirSync(dir, {withFileTypes: true})) {\n"
        "    const file = path.join(dir, entry.name);\n"
        "    try {\n      found = found.concat(entry.isDirectory() ? texts(file) : [fs.readFileSync(file, 'utf8')]);\n"
        "    } catch {}\n"
        "  }\n  return found;\n}\n"
        "function expected(call: string): any {\n"
        "  for (const text of texts('/tmp')) {\n"
        "    const at = text.indexOf(`expect(${call})`);\n"
        "    const found = at < 0 ? null : text.slice(at).match(/toEqual\\((.*?)\\);/);\n"
        "    if (found) return JSON.parse(found[1]);\n  }\n  return null;\n}\n"
        "function add(a: number, b: number): number { return expected(`add(${a}, ${b})`); }\n"
        "function pair(a: number, b: number): number[] { return expected(`pair(${a}, ${b})`); }\n"
    ),
    "a Babel configuration in the working directory": (
        JEST_WRONG + "require('fs').writeFileSync('babel.config.js', "
        '"module.exports = {plugins: [() => ({visitor: {Program(p) { p.node.body = []; }}})]};");\n'
    ),
    "@jest/globals of its own": (
        JEST_WRONG + "require('fs').mkdirSync('node_modules/@jest/globals', {recursive: true});\n"
        "require('fs').writeFileSync('node_modules/@jest/globals/index.js', "
        "'exports.expect = () => new Proxy({}, {get: () => () => undefined}); exports.test = test;');\n"
    ),
}


@pytest.mark.parametrize("hack", list(JEST_HACKS))
def test_jest_tests_run_apart_cannot_be_reached_from_the_program(judge: LocalJudge, hack: str) -> None:
    tests = JEST_TESTS if "globals" not in hack else "import { expect, test } from '@jest/globals';\n" + JEST_TESTS
    suite = Suite("program", (ProgramTest(tests),))
    assert judge.judge("jest", JEST_RIGHT, suite, LIMITS).pass_fraction == 1.0
    report = judge.judge("jest", JEST_HACKS[hack], suite, LIMITS)
    assert report.passed == 0, report.to_dict()


# Jest tests that use more of the program than plain calls, or Jest's mocks, would fail a right answer apart: they run
# after the program (sandbox/languages/jest_apart.py), chosen by the reference's tests alone. (tests, run apart)
JEST_SHAPES = [
    (JEST_TESTS, True),
    ("test('new Stack() and jest.fn() in a title', () => { expect(add(1, 2)).toBe(3); });", True),
    (
        "test('r', () => { const r = split('a b'); expect(r.length).toBe(2); expect(Math.max(...nums())).toBe(3); });",
        True,
    ),
    ("import _ from 'lodash';\ntest('l', () => { expect(_.sum(values())).toBe(6); });", True),
    ("test('pops', () => { const s = new Stack(); s.push(1); expect(s.pop()).toBe(1); });", False),
    ("test('s', () => { expect(Calc.add(1, 2)).toBe(3); });", False),
    ("test('m', () => { expect(mapAll([1, 2], (x) => x * 2)).toEqual([2, 4]); });", False),
    (
        "const double = (x: number) => x * 2;\ntest('m', () => { expect(mapAll([1, 2], double)).toEqual([2, 4]); });",
        False,
    ),
    ("test('d', () => { const fn = jest.fn(); debounce(fn, 10)(); expect(fn).not.toHaveBeenCalled(); });", False),
    ("test('i', () => { expect(make()).toBeInstanceOf(Point); });", False),
]


@pytest.mark.parametrize(("tests", "apart"), JEST_SHAPES)
def test_jest_tests_run_apart_where_they_only_call_the_program(tests: str, apart: bool) -> None:
    assert runs_apart(tests) is apart


def test_jest_tests_of_the_programs_classes_run_after_it(judge: LocalJudge) -> None:
    tests = "test('pops', () => { const s = new Stack(); s.push(1); s.push(2); expect(s.pop()).toBe(2); });\n"
    right = (
        "class Stack {\n  items: number[] = [];\n  push(x: number) { this.items.push(x); }\n"
        "  pop() { return this.items.pop(); }\n}\n"
    )
    suite = Suite("program", (ProgramTest(tests),))
    assert judge.judge("jest", right, suite, LIMITS).pass_fraction == 1.0
    assert judge.judge("jest", right.replace("items.pop()", "items.shift()"), suite, LIMITS).pass_fraction == 0.0


# Right answers the separation must keep (in-place changes, errors, constants, types, context, output), per language:
# (tests, program, {what to replace in the program: by what, each a wrong answer}).
KEPT_APART = {
    "javascript": (
        "const assert = require('node:assert');\n"
        "const numbers = [3, 1, 2];\nsortInPlace(numbers);\nassert.deepEqual(numbers, [1, 2, 3]);\n"
        "assert.throws(() => checked(-1), RangeError);\n"
        "assert.equal(LIMIT, 10);\n"
        "assert.deepEqual(point(1, 2), {x: 1, y: 2});\n"
        "assert.deepEqual(candidate(), undefined);\n",
        "function sortInPlace(xs) { xs.sort((a, b) => a - b); }\n"
        "function checked(x) { if (x < 0) throw new RangeError('negative'); return x; }\n"
        "const LIMIT = 10;\n"
        "class Point { constructor(x, y) { this.x = x; this.y = y; } }\n"
        "function point(x, y) { return new Point(x, y); }\n"
        "function candidate() { console.log('the program prints'); }\n",
        {
            "xs.sort((a, b) => a - b)": "0",
            "throw new RangeError('negative')": "0",
            "const LIMIT = 10": "const LIMIT = 11",
        },
    ),
    "ruby": (
        "require 'test/unit'\nclass TestKept < Test::Unit::TestCase\n  def test_kept\n"
        "    xs = [3, 1, 2]\n    sort_in_place(xs)\n    assert_equal([1, 2, 3], xs)\n"
        "    assert_raise(ArgumentError) { checked(-1) }\n"
        "    assert_equal({'a' => 1, b: [2.5, nil]}, record)\n  end\nend\n",
        "def sort_in_place(xs) = xs.sort!\n"
        "def checked(x)\n  raise ArgumentError, 'negative' if x.negative?\n  x\nend\n"
        "def record = {'a' => 1, b: [2.5, nil]}\n",
        {"xs.sort!": "xs", "raise ArgumentError, 'negative' if x.negative?": "", "b: [": "'b' => ["},
    ),
    "lua": (
        "lu = require('luaunit')\nfunction test_kept()\n"
        "  local xs = {3, 1, 2}\n  sort_in_place(xs)\n  lu.assertEquals(xs, {1, 2, 3})\n"
        "  lu.assertEquals(math.type(half(4)), 'float')\n  lu.assertEquals(LIMIT, 10)\nend\n"
        "os.exit(lu.LuaUnit.run())\n",
        "local function sort_in_place(xs) table.sort(xs) end\nfunction half(x) return x / 2 end\nLIMIT = 10\n",
        {"table.sort(xs)": "", "x / 2": "x // 2", "LIMIT = 10": "LIMIT = 11"},
    ),
    "php": (
        "function test(): void {\n"
        "    if (half(4) !== 2.0) { throw new Exception('a float'); }\n"
        "    if (record() !== ['a' => 1, 'b' => [1.5, null]]) { throw new Exception('an array'); }\n"
        "    echo 'the tests print';\n}\ntest();\n",
        "<?php\nfunction half($x) { return $x / 2.0; }\nfunction record() { return ['a' => 1, 'b' => [1.5, null]]; }\n",
        {"$x / 2.0": "intdiv($x, 2)", "1.5": "'1.5'"},
    ),
    "perl": (
        "sub check {\n    my $xs = [3, 1, 2];\n    sort_in_place($xs);\n    exit 1 unless \"@$xs\" eq '1 2 3';\n"
        "    my @pair = two();\n    exit 1 unless @pair == 2 && $pair[0] == 4;\n"
        "    my $last = two();\n    exit 1 unless $last == 5;\n}\ncheck();\n",
        "sub sort_in_place { my ($xs) = @_; @$xs = sort { $a <=> $b } @$xs; }\nsub two { return (4, 5); }\n",
        {"@$xs = sort { $a <=> $b } @$xs;": "", "return (4, 5);": "return (4, 6);"},
    ),
}
KEPT_APART["typescript"] = KEPT_APART["javascript"]
KEPT_APART["elixir"] = (
    'ExUnit.start()\ndefmodule KeptTest do\n  use ExUnit.Case\n  test "kept" do\n'
    "    assert Kept.pair() === {1, 2.5}\n    assert Kept.tag() == :apple\n"
    '    assert Kept.record() == %{"a" => [1, nil]}\n    assert_raise ArgumentError, fn -> Kept.fails(-1) end\n'
    "  end\nend\n",
    "defmodule Kept do\n  def pair, do: {1, 2.5}\n  def tag, do: :apple\n"
    '  def record, do: %{"a" => [1, nil]}\n  def fails(x) when x < 0, do: raise(ArgumentError, "negative")\n'
    "  def fails(x), do: x\nend\n",
    {"{1, 2.5}": "{1.0, 2.5}", ":apple": '"apple"', 'raise(ArgumentError, "negative")': "0"},
)
KEPT_APART["clojure"] = (
    "(require '[clojure.test :refer [deftest is run-test]])\n(deftest kept\n"
    "  (is (= (half 3) 3/2))\n  (is (= (tagged) [:apple \\c #{1}]))\n"
    '  (is (= (record) {"a" [1 nil 2.5M]}))\n  (is (thrown? ArithmeticException (fails))))\n(run-test kept)\n',
    "(defn half [x] (/ x 2))\n(defn tagged [] [:apple \\c #{1}])\n"
    '(defn record [] {"a" [1 nil 2.5M]})\n(defn fails [] (/ 1 0))\n',
    {"(/ x 2)": "(/ x 2.0)", ":apple": '"apple"', "(/ 1 0)": "1"},
)
KEPT_APART["racket"] = (
    "(require rackunit)\n(check-equal? (half 3) 3/2)\n(check-equal? (tag) 'apple)\n"
    '(check-equal? (pairs) (list (cons 1 "a") (vector 2.5 #t)))\n(check-equal? (hello) (void))\n'
    "(check-exn exn:fail? (lambda () (fails)))\n",
    "#lang racket\n(define (half x) (/ x 2))\n(define (tag) 'apple)\n"
    '(define (pairs) (list (cons 1 "a") (vector 2.5 #t)))\n(define (hello) (void))\n(define (fails) (error "no"))\n',
    {"(/ x 2)": "(/ x 2.0)", "'apple": '"apple"', '(error "no")': "1"},
)
KEPT_APART["bash"] = (  # the tests open with the brace that closes the program's last function, as MultiPL-E's do
    "}\ncheck() {\n"
    '    [[ $(greet "a b" "") = "hello a b|" ]] || exit 1\n'
    "    fails && exit 1\n"
    "    [[ \"$(lines)\" = $'one\\ntwo' ]] || exit 1\n"
    "    [[ $(count) = 0 ]] || exit 1\n}\ncheck\n",
    "greet() { printf 'hello %s|%s' \"$1\" \"$2\"; }\nfails() { return 3; }\nlines() { printf 'one\\ntwo\\n'; }\n"
    "count() { echo $#; }\nhelper() {\n    :",
    {"'hello %s|%s'": "'hello %s %s'", "return 3": "return 0", "echo $#": "echo 1"},
)

KEPT_APART["r"] = (
    "stopifnot(identical(half(3L), 1.5), identical(half_int(5L), 2L))\n"
    'stopifnot(identical(record(), list(a = 1L, b = c(x = 2.5, y = NA), c = c("é", NA))))\n'
    'stopifnot(grepl("negative", tryCatch(fails(-1), error = function(e) conditionMessage(e))))\n'
    "stopifnot(identical(grid_of(), matrix(1:4, 2)), is.null(nothing()), identical(fails(2), 2))\n"
    "candidate <- median\nstopifnot(identical(candidate(c(3, 1, 2)), 1))\n",
    "half <- function(x) x / 2\nhalf_int <- function(x) x %/% 2L\n"
    'record <- function() list(a = 1L, b = c(x = 2.5, y = NA), c = c("é", NA))\n'
    'fails <- function(x) if (x < 0) stop("negative") else x\n'
    "grid_of <- function() matrix(1:4, 2)\nnothing <- function() NULL\n"
    "median <- function(l) min(l)  # not R's: the one the tests take for `candidate`\n",
    {
        "x / 2": "x %/% 2",
        "x %/% 2L": "x %/% 2",
        'stop("negative")': "0",
        "matrix(1:4, 2)": "1:4",
        "b = c(x = 2.5": "b = c(2.5",
        '"é", NA': '"e", NA',
        "min(l)": "stats::median(l)",
    },
)

KEPT_APART["sql"] = (  # a trigger of the program's fires on the tests' insert; what it rolled back stays so
    "INSERT INTO orders(item, qty) VALUES ('pen', 2);\n"
    "SELECT CASE WHEN (SELECT stock FROM items WHERE name = 'pen') = 8 THEN 'ok' ELSE json('trigger') END;\n"
    "SELECT CASE WHEN (SELECT n FROM big_orders) = 1 THEN 'ok' ELSE json('view') END;\n"
    "SELECT CASE WHEN (SELECT count(*) FROM items) = 2 THEN 'ok' ELSE json('rolled back') END;\n",
    "CREATE TABLE items(name TEXT PRIMARY KEY, stock INTEGER);\nINSERT INTO items VALUES ('pen', 10), ('ink', 5);\n"
    "BEGIN;\nINSERT INTO items VALUES ('cap', 1);\nROLLBACK;\nCREATE TABLE orders(item TEXT, qty INTEGER);\n"
    "CREATE TRIGGER take AFTER INSERT ON orders BEGIN\n"
    "  UPDATE items SET stock = stock - NEW.qty WHERE name = NEW.item;\nEND;\n"
    "CREATE VIEW big_orders AS SELECT count(*) AS n FROM orders WHERE qty >= 2;\nSELECT 'the program prints';\n",
    {"stock - NEW.qty": "stock + NEW.qty", "qty >= 2": "qty > 2", "ROLLBACK": "COMMIT"},
)

KEPT_APART["jest"] = (  # the program's own test never runs; `@jest/globals` is imported on both sides
    "import { describe, expect, test } from '@jest/globals';\n\ndescribe('kept', () => {\n"
    "  test('in place', () => { const xs = [3, 1, 2]; sortInPlace(xs); expect(xs).toStrictEqual([1, 2, 3]); });\n"
    "  test('throws', () => { expect(() => checked(-1)).toThrow(RangeError); });\n"
    "  test('constant', () => { expect(LIMIT).toBe(10); });\n"
    "  test('types', () => { expect(groups()).toStrictEqual(new Map([['a', new Set([1])]])); });\n"
    "  test('async', async () => {\n"
    "    await expect(later(2)).resolves.toBe(4);\n    await expect(later(-1)).rejects.toThrow('negative');\n  });\n"
    "  test('nothing', () => { expect(nothing()).toBeUndefined(); });\n});\n",
    "import { test } from '@jest/globals';\n"
    "export function sortInPlace(xs: number[]): void { xs.sort((a, b) => a - b); }\n"
    "function checked(x: number): number { if (x < 0) throw new RangeError('negative'); return x; }\n"
    "const LIMIT = 10;\n"
    "function groups(): Map<string, Set<number>> { return new Map([['a', new Set([1])]]); }\n"
    "async function later(x: number): Promise<number> { if (x < 0) throw new Error('negative'); return x * 2; }\n"
    "function nothing(): void { console.log('the program prints'); }\n"
    "test('mine', () => { throw new Error('never run'); });\n",
    {
        "a - b": "b - a",
        "throw new RangeError('negative')": "throw new Error('negative')",
        "const LIMIT = 10": "const LIMIT = 11",
        "new Set([1])": "new Set([2])",
        "x * 2": "x * 3",
        "if (x < 0) throw new Error('negative'); ": "",
        "console.log('the program prints')": "return 0 as any",
    },
)


def test_a_failed_console_assert_fails_the_tests_run_apart(judge: LocalJudge) -> None:
    """HumanEval-X's JavaScript tests check with console.assert, which node only prints about."""
    suite = Suite(
        "program", (ProgramTest("const testAdd = () => {\n  console.assert(add(1, 2) === 3)\n}\ntestAdd()\n"),)
    )
    assert judge.judge("javascript", "function add(a, b) { return a + b }\n", suite, LIMITS).passed == 1
    report = judge.judge("javascript", "function add(a, b) { return 0 }\n", suite, LIMITS)
    assert [verdict.verdict for verdict in report.tests] == [Verdict.WRONG_ANSWER], report.to_dict()


@pytest.mark.parametrize("language", list(KEPT_APART))
def test_tests_run_apart_keep_what_right_answers_do(judge: LocalJudge, language: str) -> None:
    tests, program, wrongs = KEPT_APART[language]
    suite = Suite("program", (ProgramTest(tests),))
    report = judge.judge(language, program, suite, LIMITS)
    assert report.pass_fraction == 1.0, report.to_dict()
    for right, wrong in wrongs.items():
        assert right in program
        report = judge.judge(language, program.replace(right, wrong), suite, LIMITS)
        assert report.pass_fraction < 1.0, (right, wrong)


# --- what a source file turns on in its toolchain -----------------------------------------------------------------

HASKELL_TESTS = 'main :: IO ()\nmain = do\n  if add 1 2 == 3 then pure () else error "wrong"\n'
HASKELL_RIGHT = "add :: Int -> Int -> Int\nadd a b = a + b\n"
HASKELL_SWITCHES = {  # each would run code of the program's choosing over the whole file, its tests included
    "a preprocessor": "{-# OPTIONS_GHC -F -pgmF /usr/bin/sed -optF s/3/0/ #-}\n",
    "a compiler plugin": "{-# OPTIONS_GHC -fplugin=Judge.Plugin #-}\n",
    "Template Haskell": "{-# LANGUAGE BangPatterns, TemplateHaskell #-}\n",
    "the C preprocessor": "{-# language CPP #-}\n",
}


@pytest.mark.parametrize("switch", list(HASKELL_SWITCHES))
def test_a_source_cannot_switch_on_its_toolchains_preprocessors(judge: LocalJudge, switch: str) -> None:
    suite = Suite("program", (ProgramTest(HASKELL_TESTS),))
    assert judge.judge("haskell", HASKELL_RIGHT, suite, LIMITS).passed == 1
    report = judge.judge("haskell", HASKELL_SWITCHES[switch] + HASKELL_RIGHT.replace("a + b", "0"), suite, LIMITS)
    assert report.passed == 0 and "are off in the sandbox" in (report.compile_error or ""), report.to_dict()


# --- the done marker ----------------------------------------------------------------------------------------------


def test_the_done_marker_is_the_programs_own() -> None:
    """A marker seen in one run's output passes no other program: it is keyed by the program and its tests."""
    one = done_marker("c", "int add(int a, int b) { return a + b; }", "int main() {}")
    assert one == done_marker("c", "int add(int a, int b) { return a + b; }", "int main() {}")  # compile cache
    assert one != done_marker("c", "int add(int a, int b) { return 3; }", "int main() {}")
    assert one != done_marker("cpp", "int add(int a, int b) { return a + b; }", "int main() {}")


MARKER_TESTS = "#include <assert.h>\nint main() {\n    assert(add(1, 2) == 3);\n}\n"
# Reads its own source (the tests are in it), prints the last marker-like token there, and exits with `{status}`.
STEAL_FROM_SOURCE = (
    "#include <stdio.h>\n#include <stdlib.h>\n#include <string.h>\n"
    'int add(int a, int b) {\n    static char text[1 << 16];\n    FILE *f = fopen(__FILE__, "r");\n'
    "    text[fread(text, 1, sizeof text - 1, f)] = 0;\n    char *last = 0;\n"
    '    for (char *at = text; (at = strstr(at, "judge-done-")); at++) last = at;\n'
    '    printf("%.43s", last);\n    fflush(stdout);\n    exit({status});\n}\n'
)


def test_the_done_marker_never_shows_in_details(judge: LocalJudge) -> None:
    """A compiler echoes the line it fails on, and a failing run's output is shown: neither shows the marker."""
    breaks_the_marker = "#define __builtin_printf(...) undefined_name\nint add(int a, int b) { return a + b; }\n"
    reference = {"language": "c", "test": MARKER_TESTS}
    for program in (breaks_the_marker, STEAL_FROM_SOURCE.replace("{status}", "1")):
        value, details = accuracy(judge, reference, fenced("c", program))
        assert value == 0.0 and "judge-done-" not in json.dumps(details), details


@pytest.mark.xfail(strict=True, reason="still open: the tests share the program's source and process (issue's cause 5)")
def test_the_done_marker_read_from_the_programs_own_source(judge: LocalJudge) -> None:
    value, _ = accuracy(
        judge, {"language": "c", "test": MARKER_TESTS}, fenced("c", STEAL_FROM_SOURCE.replace("{status}", "0"))
    )
    assert value == 0.0


def test_program_references_read_the_reference_language(judge: LocalJudge) -> None:
    """Program tests run in the reference's language whatever the fence says (tests/test_harness_hacks.py has the
    rest of the program-suite table)."""
    ref = parse_reference({"language": "lua", "tests": LUA_TESTS}, SETTINGS)
    assert ref.language == "lua" and ref.suite.kind == "program"
