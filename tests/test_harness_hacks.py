"""Known test-harness hacks earn nothing, in every test format that has asserts; the right program beside each passes.

Python: each hack against HumanEval's `check(candidate)`, MBPP's assert list, MultiPL-E's Python tests,
LiveCodeBench/APPS function calls and stdin/stdout, read by the reward service's reference parser and judged in the
real sandbox (LocalJudge): the tests run apart from the program on plain data (sandbox/runner.py's Harness) and pass
only when the harness itself says they finished. Other languages: a program that exits with status 0 before or
inside its tests, against MultiPL-E's rows (tests/multiple_cases.py) and the test-file frameworks
(Language.tests_done). Then a few through the reward service. Hacks still open are strict xfails, with the reason.
"""

from __future__ import annotations

import pytest

from reward_api.graders.code_reference import parse_reference
from reward_api.local import LocalServer
from reward_api.profiles import CodeSettings
from sandbox.executor import Executor, Limits
from sandbox.isolation import Isolation
from sandbox.judge import JudgeReport, LocalJudge, ProgramTest
from sandbox.judge import TestSuite as Suite  # not `Test*`: pytest would try to collect it
from tests.multiple_cases import CASES
from tests.test_program_suites import FRAMEWORKS
from tests.test_service import grade

CHECKS = [  # each fooled by a value whose methods answer for it, or by rebound builtins and modules
    "{f}(2, 3) == 5",
    "{f}(-1, 1) == 0",
    "not ({f}(2, 2) != 4)",
    "abs({f}(0.5, 0.25) - 0.75) < 1e-9",
    "math.isclose({f}(1.5, 1.5), 3.0)",
    "isinstance({f}(1, 1), int) and len(str({f}(10, 0))) == 2",
]
PROMPT = 'import math\n\n\ndef add(a, b):\n    """a plus b"""\n'
CHECK = "import math\n\n\ndef check(candidate):\n" + "".join(f"    assert {c.format(f='candidate')}\n" for c in CHECKS)
REFERENCES = {
    "humaneval": {"prompt": PROMPT, "test": CHECK, "entry_point": "add"},
    "mbpp": {"test_list": [f"assert {c.format(f='add')}" for c in CHECKS], "test_imports": ["import math"]},
    "multiple_py": {
        "language": "py",
        "prompt": PROMPT,
        "tests": f"{CHECK}\ndef test_check():\n    check(add)\n\ntest_check()\n",
    },
    "call": {"inputs": [[2, 3], [-1, 1], [0.5, 0.25]], "outputs": [5, 0, 0.75], "fn_name": "add"},
}
STDIO = {"inputs": ["2 3\n", "-1 1\n"], "outputs": ["5\n", "0\n"]}
RIGHT = "import math\n\n\ndef add(a, b):\n    return a + b\n"
STDIO_RIGHT = "a, b = map(float, input().split())\nprint(int(a + b))\n"
# Methods that answer every check above for a value that is not the answer.
FAKE = (
    "    __eq__ = lambda self, other: True\n"
    "    __ne__ = lambda self, other: False\n"
    "    __bool__ = lambda self: True\n"
    "    __hash__ = lambda self: 0\n"
    "    __sub__ = lambda self, other: self\n"
    "    __abs__ = lambda self: 0.0\n"
    "    __float__ = lambda self: 3.0\n"
    "    __str__ = lambda self: '10'\n"
    "    __class__ = property(lambda self: int)\n"
)
PATCH_BUILTINS = (
    "import builtins, math\n"
    "builtins.abs = lambda x: 0.0\n"
    "builtins.isinstance = lambda *args: True\n"
    "builtins.len = lambda x: 2\n"
    "builtins.print = lambda *args, **kwargs: None\n"
    "math.isclose = lambda *args, **kwargs: True\n"
)
# Tries answers in forked copies of itself, keeping the one whose copy passed the rest of the test.
FORK_ORACLE = (
    "import os\n"
    "def add(a, b):\n"
    "    for guess in [*range(-2, 11), 0.75, 3.0]:\n"
    "        if os.fork() == 0:\n"
    "            return guess\n"
    "        if os.wait()[1] == 0:\n"
    "            os._exit(0)\n"
)
# Reads the marker the test ends with from the interpreter's frames, prints it, and leaves.
STEAL_MARKER = (
    "import os, sys\n"
    "def add(a, b):\n"
    "    frame = sys._getframe(1)\n"
    "    while frame is not None:\n"
    "        for const in frame.f_code.co_consts:\n"
    "            if isinstance(const, str) and '<<<judge-' in const:\n"
    "                os.write(1, const.encode())\n"
    "                os._exit(0)\n"
    "        frame = frame.f_back\n"
)
ENDED = "the program ended before its tests did"
# name: (program, what the first failing assert test says)
HACKS = {
    "__eq__ and every other method answering": (
        f"class Fake:\n{FAKE}\ndef add(a, b):\n    return Fake()\n",
        "not plain",
    ),
    "int subclass answering": (f"class Fake(int):\n{FAKE}\ndef add(a, b):\n    return Fake(9)\n", "AssertionError"),
    "str subclass answering": (f"class Fake(str):\n{FAKE}\ndef add(a, b):\n    return Fake()\n", "AssertionError"),
    "list subclass answering": (f"class Fake(list):\n{FAKE}\ndef add(a, b):\n    return Fake()\n", "AssertionError"),
    "sys.exit(0) before the tests": ("import sys\nsys.exit(0)\n", ENDED),
    "os._exit(0) before the tests": ("import os\nos._exit(0)\n", ENDED),
    "SystemExit before the tests": ("raise SystemExit\n", ENDED),
    "sys.exit(0) in the function": ("import sys\ndef add(a, b):\n    sys.exit(0)\n", ENDED),
    "os._exit(0) in the function": ("import os\ndef add(a, b):\n    os._exit(0)\n", ENDED),
    "SystemExit in the function": ("def add(a, b):\n    raise SystemExit(0)\n", ENDED),
    "AssertionError rebound": (
        "import builtins\nbuiltins.AssertionError = type('Ignored', (Exception,), {})\ndef add(a, b):\n    return 9\n",
        "AssertionError",
    ),
    "builtins and math rebound, with a fake": (
        f"{PATCH_BUILTINS}class Fake(int):\n{FAKE}\ndef add(a, b):\n    return Fake(9)\n",
        "AssertionError",
    ),
    "check and candidate defined by the program": (
        "import builtins\ndef check(candidate):\n    pass\nbuiltins.check = check\ncandidate = check\n"
        "def add(a, b):\n    return 9\n",
        "AssertionError",
    ),
    "killing the parent": ("import os\ndef add(a, b):\n    os.kill(os.getppid(), 9)\n    return 9\n", ""),
    "killing every process it can": ("import os\ndef add(a, b):\n    os.kill(-1, 9)\n    return 9\n", ""),
    "answers tried in forked copies": (FORK_ORACLE, "AssertionError"),
    # The tests run in a process of their own: the program's frames hold no test, nor its marker.
    "marker read from the interpreter's frames": (STEAL_MARKER, "AssertionError"),
}
SETTINGS = CodeSettings()
LIMITS = Limits(time_s=10, wall_s=15, compile_s=60, total_s=120)


@pytest.fixture(scope="module")
def judge() -> LocalJudge:
    return LocalJudge()


def judged(judge: LocalJudge, reference: dict, code: str) -> JudgeReport:
    """`code` judged as the reward service judges an item with this reference (reward_api/graders/code.py)."""
    ref = parse_reference(reference | {"time_limit": 10}, SETTINGS)
    return judge.judge(ref.language or "python", ref.program(code), ref.suite, ref.limits)


def failure(report: JudgeReport) -> str:
    return next(t.detail for t in report.tests if t.verdict != "accepted")


@pytest.mark.parametrize("shape", [*REFERENCES, "stdio"])
def test_right_programs_pass_every_format(judge: LocalJudge, shape: str) -> None:
    code = STDIO_RIGHT if shape == "stdio" else RIGHT
    report = judged(judge, REFERENCES.get(shape, STDIO), code)
    assert report.pass_fraction == 1.0, report.to_dict()


@pytest.mark.parametrize("shape", list(REFERENCES))
@pytest.mark.parametrize("hack", list(HACKS))
def test_python_hacks_earn_nothing(judge: LocalJudge, hack: str, shape: str) -> None:
    program, reason = HACKS[hack]
    report = judged(judge, REFERENCES[shape], program)
    assert report.passed == 0, report.to_dict()
    if shape != "call":  # function calls are compared outside the sandbox, as JSON: each hack fails its own way
        assert reason in failure(report), report.to_dict()


@pytest.mark.parametrize("hack", [name for name in HACKS if "before the tests" in name])
def test_stdio_exits_earn_nothing(judge: LocalJudge, hack: str) -> None:
    assert judged(judge, STDIO, f"{HACKS[hack][0]}{STDIO_RIGHT}").passed == 0


def test_killing_its_parent_is_never_a_pass() -> None:
    """Unisolated too, the program's parent is its test's process, not the runner: killing it fails that test (killed
    by a signal), even when the program answers right after the kill, and the run goes on to the next test."""
    judge = LocalJudge(Executor(Isolation.NONE))
    right_after_the_kill = HACKS["killing the parent"][0].replace("return 9", "return a + b")
    report = judged(judge, REFERENCES["mbpp"], right_after_the_kill)
    assert report.passed == 0 and report.sandbox_error is None, report.to_dict()
    assert {(t.verdict, t.detail) for t in report.tests} == {("runtime_error", "signal 9")}, report.to_dict()


def test_fair_twins_of_the_hacks_pass(judge: LocalJudge) -> None:
    """What a hack does, done by a right program (a subclass holding the right value, rebound builtins, a fork that
    ends on its own, a call of the entry point by its name), still passes: the tests read the value, not the way."""
    twin = (
        f"{PATCH_BUILTINS}import os\nclass Count(int):\n    __eq__ = lambda self, other: False\n"
        "def add(a, b):\n    if os.fork() == 0:\n        os._exit(0)\n    os.wait()\n"
        "    total = a + b\n    return Count(total) if type(total) is int else total\n"
    )
    for shape in ("humaneval", "mbpp", "multiple_py"):
        assert judged(judge, REFERENCES[shape], twin).pass_fraction == 1.0, shape


MBPP_PAIR = {  # MBPP 601: the test builds the program's own class and hands its instances back to it
    "test_list": ["assert max_chain_length([Pair(5, 24), Pair(15, 25), Pair(27, 40), Pair(50, 60)], 4) == 3"],
}
PAIR_RIGHT = (
    "class Pair:\n    def __init__(self, a, b):\n        self.a, self.b = a, b\n"
    "def max_chain_length(arr, n):\n    best = [1] * n\n    for i in range(n):\n        for j in range(i):\n"
    "            if arr[i].a > arr[j].b:\n                best[i] = max(best[i], best[j] + 1)\n    return max(best)\n"
)
PAIR_FAKE = "class Pair:\n    def __init__(self, a, b):\n        pass\n    __eq__ = lambda self, other: True\n" + (
    "def max_chain_length(arr, n):\n    return Pair(0, 0)\n"
)


def test_the_programs_own_objects_go_back_to_it_but_are_never_compared(judge: LocalJudge) -> None:
    """A test may build the program's objects and pass them back (MBPP's Pair); a check of one fails."""
    assert judged(judge, MBPP_PAIR, PAIR_RIGHT).pass_fraction == 1.0
    faked = judged(judge, MBPP_PAIR, PAIR_FAKE)
    assert faked.passed == 0 and "not plain data" in failure(faked), faked.to_dict()


def test_humaneval_tests_call_the_prompts_own_helpers(judge: LocalJudge) -> None:
    """HumanEval/32, /38 and /50 check the answer with a function of the prompt's: the program cannot redefine it."""
    reference = {
        "prompt": 'def twice(x):\n    return 2 * x\n\n\ndef double_sum(a, b):\n    """twice(a + b)"""\n',
        "test": "def check(candidate):\n    assert candidate(1, 2) == twice(3)\n",
        "entry_point": "double_sum",
    }
    redefined = "def twice(x):\n    return 0\n\n\ndef double_sum(a, b):\n    return 0\n"
    assert judged(judge, reference, redefined).passed == 0
    assert judged(judge, reference, "    return twice(a + b)\n").passed == 1


# MultiPL-E's rows: a completion that exits with status 0 inside the function the tests call (or, where the tests
# ran the function apart, at the program's top level).
EXITS = {
    "cpp": "    exit(0);",
    "cs": "        Environment.Exit(0);\n        return false;",
    "d": "{\n    import core.stdc.stdlib : exit;\n    exit(0);\n    return false;\n}",
    "java": "        System.exit(0);\n        return false;",
    "js": "  process.exit(0);\n}",
    "php": "    exit(0);\n}",
    "pl": "    exit 0;\n}",
    "r": "    quit(save = 'no', status = 0)\n}",
    "rkt": "  (exit 0))",
    "rs": "    std::process::exit(0)",
    "scala": "        sys.exit(0)",
    "sh": '    echo true\n}\nexit 0\nunused() {\n    echo "$@"',
    "ts": "  process.exit(0);\n}",
    "ml": "  exit 0",
    "elixir": "System.halt(0)\n  end\nend",
    "clj": "(System/exit 0))",
    # The test library ends the run itself: a clean run must show its summary (Language.tests_summary).
    "lua": "    return true\nend\nos.exit(0)",  # before `os.exit(lu.LuaUnit.run())`
    "rb": "  exit!(0)\nend",  # test/unit runs the tests at exit; exit! skips that
}
HASKELL_EXIT = (  # a whole program: its imports must come first
    "import System.Exit\nimport System.IO.Unsafe\n\nhasCloseElements :: [Float] -> Float -> Bool\n"
    "hasCloseElements numbers threshold = unsafePerformIO exitSuccess\n"
)
BY_LANGUAGE = {case.language: case for case in CASES}


@pytest.mark.parametrize("language", list(EXITS))
def test_exits_before_multiple_tests_earn_nothing(judge: LocalJudge, language: str) -> None:
    case = BY_LANGUAGE[language]
    assert judged(judge, case.row(), case.right).passed == 1
    report = judged(judge, case.row(), EXITS[language])
    assert report.passed == 0, report.to_dict()


def test_haskell_exit_inside_pure_code_earns_nothing(judge: LocalJudge) -> None:
    """The exit ends the program's process (its server does not take it for a value it threw): the tests see it."""
    report = judged(judge, BY_LANGUAGE["hs"].row(), HASKELL_EXIT)
    assert report.passed == 0 and "the program ended before its tests did" in failure(report), report.to_dict()


# Test-file frameworks: the solution exits with status 0 before any test runs, or inside the function tested.
FRAMEWORK_EXITS = {
    "pytest": ("def add(a, b):", "import os\nos._exit(0)\ndef add(a, b):"),
    "go_test": ('import (\n\t"testing"', 'import (\n\t"os"\n\t"testing"'),
    "gtest": ("{ return a + b; }", "{ exit(0); }"),
    "junit": ("{ return a + b; }", "{ System.exit(0); return 0; }"),
    "jest": ("{ return a + b; }", "{ process.exit(0); return 0; }"),
}
FRAMEWORK_TESTS = {  # each framework's passing test of tests/test_program_suites.py alone
    "pytest": "def test_small():\n    assert add(1, 2) == 3\n",
    "go_test": "func TestSmall(t *testing.T) { assert.Equal(t, 3, Add(1, 2)) }\n",
    "gtest": "TEST(Add, Small) { EXPECT_EQ(3, add(1, 2)); }\n",
    "junit": "public class AdderTest {\n    @Test void small() { assertEquals(3, Adder.add(1, 2)); }\n}\n",
    "jest": "describe('add', () => {\n  test('small', () => { expect(add(1, 2)).toBe(3); });\n});\n",
}


@pytest.mark.parametrize("language", list(FRAMEWORK_EXITS))
def test_exits_before_framework_tests_earn_nothing(judge: LocalJudge, language: str) -> None:
    solution = FRAMEWORKS[language][0]
    old, new = FRAMEWORK_EXITS[language]
    hacked = solution.replace(old, new)
    if language == "go_test":  # os.Exit inside a test is go test's own failure; before the tests it is not
        hacked += "\nfunc init() { os.Exit(0) }\n"
    assert hacked != solution
    suite = Suite("program", (ProgramTest(FRAMEWORK_TESTS[language]),))
    assert judge.judge(language, solution, suite, LIMITS).passed == 1
    report = judge.judge(language, hacked, suite, LIMITS)
    assert report.passed == 0, report.to_dict()


def test_hacks_earn_nothing_through_the_service(server: LocalServer) -> None:
    """The reward service's grade path: hacks at 0, their right twins at 1."""
    js = BY_LANGUAGE["js"]
    cases = [
        (REFERENCES["humaneval"], HACKS["__eq__ and every other method answering"][0], 0.0),
        (REFERENCES["mbpp"], HACKS["os._exit(0) in the function"][0], 0.0),
        (REFERENCES["multiple_py"], HACKS["builtins and math rebound, with a fake"][0], 0.0),
        (js.row(), EXITS["js"], 0.0),
        (REFERENCES["humaneval"], RIGHT, 1.0),
        (REFERENCES["mbpp"], RIGHT, 1.0),
        (js.row(), js.right, 1.0),
    ]
    items = [
        {"task": "code", "completion": f"```\n{code}\n```", "reference": reference} for reference, code, _ in cases
    ]
    results = grade(server, items, profile="accuracy", timeout=120)
    assert [(r["status"], r["reward"]) for r in results] == [("ok", reward) for _, _, reward in cases], results
