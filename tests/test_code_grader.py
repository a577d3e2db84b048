"""The `code` task: program extraction and reference parsing (pure), then the real service
judging real programs in the real sandbox over HTTP."""

from __future__ import annotations

import base64
import json
import time

import httpx
import pytest

from reward_api.config import Config
from reward_api.engine import RewardEngine
from reward_api.graders.base import InvalidItem
from reward_api.graders.code import extract_code
from reward_api.graders.code_reference import CALL_PRELUDE, parse_reference
from reward_api.local import LocalServer
from reward_api.profiles import CodeSettings
from sandbox.judge import AssertTest, CallTest, StdioTest
from tests.test_service import grade

SETTINGS = CodeSettings()


def fenced(code: str, language: str = "python") -> str:
    return f"<think>Read two numbers, print the sum.</think>\nHere it is:\n```{language}\n{code}\n```\n"


# ---------------------------------------------------------------- extraction


@pytest.mark.parametrize(
    ("completion", "code", "language"),
    [
        ("```python\nprint(1)\n```", "print(1)\n", "python"),
        ("```py\na\n```\ntext\n```py\nb\n```", "b\n", "python"),  # the last block
        ("```cpp\nint main(){}\n```\nSample run:\n```text\n3\n```", "int main(){}\n", "cpp"),  # not the output
        ("```\nprint(2)\n```", "print(2)\n", None),  # untagged: the reference's language decides
        ("```C++\nx\n```", "x\n", "cpp"),
        ("```golang\nx\n```", "x\n", "go"),
        ("```rs\nx\n```", "x\n", "rust"),
        ("```js\nx\n```", "x\n", "javascript"),
        ("```java\nx\n```", "x\n", "java"),
        ("```c\nx\n```", "x\n", "c"),
        ('```python title="main.py"\nx\n```', "x\n", "python"),
        ("```bash\nls\n```", "ls\n", "bash"),
        ("```python\nx\n```\nRun it:\n```bash\npython main.py\n```", "x\n", "python"),  # how to run it
        ("```sh\nls\n```\n```text\nout\n```", "ls\n", "bash"),
        ("<think>```python\ndraft\n```</think>\n```python\nfinal\n```", "final\n", "python"),
        ("````markdown\n```python\ninner\n```\n````", "```python\ninner\n```\n", None),  # longer fence nests
        ("1. Code:\n   ```python\n   def f():\n       return 1\n   ```", "def f():\n    return 1\n", "python"),
        ("```python\r\nprint(1)\r\n```\r\n", "print(1)\r\n", "python"),
        ("```python\nok\n```\nthen cut off:\n```python\nunfinished", "ok\n", "python"),
        ("```python\n```", "", "python"),
    ],
)
def test_extract_code(completion: str, code: str, language: str | None) -> None:
    block = extract_code(completion)
    assert block is not None
    assert (block.code, block.language) == (code, language)


@pytest.mark.parametrize(
    "completion",
    [
        "print(1)",
        "Use `print` here.",
        "```python\nprint(1)",  # cut off before the closing fence
        "<think>```python\nprint(1)\n```</think> The program above.",  # code only in the chain of thought
    ],
)
def test_no_code_block(completion: str) -> None:
    assert extract_code(completion) is None


@pytest.mark.parametrize(
    "completion",
    [
        "`" * 1_000_000,
        "```a" * 300_000,
        ("`" * 50 + "x`\n") * 20_000,
        "```python\n" * 200_000,
        "\n" * 1_000_000,
        " " * 1_000_000 + "```",
        "```python\n" + "x = 1\n" * 200_000 + "```\n",
    ],
)
def test_extraction_is_linear_on_megabyte_completions(completion: str) -> None:
    started = time.perf_counter()
    extract_code(completion)
    assert time.perf_counter() - started < 0.5


# ---------------------------------------------------------------- references

APPS_CALL = {"inputs": [[1, 2], [3, 4]], "outputs": [[3], [7]], "fn_name": "add"}
HUMANEVAL = {
    "prompt": 'def inc(x: int) -> int:\n    """x plus one"""\n',
    "test": "def check(candidate):\n    assert candidate(1) == 2\n",
    "entry_point": "inc",
}


@pytest.mark.parametrize(
    ("reference", "kind", "tests", "fn_name"),
    [
        (
            {"inputs": ["1 2\n", "3 4\n"], "outputs": ["3\n", "7\n"]},
            "stdio",
            [StdioTest("1 2\n", "3\n"), StdioTest("3 4\n", "7\n")],
            None,
        ),
        (
            json.dumps({"inputs": [["1 2", "x"]], "outputs": [["3"]]}),  # APPS stores a JSON string; lines join
            "stdio",
            [StdioTest("1 2\nx\n", "3\n")],
            None,
        ),
        (APPS_CALL, "call", [CallTest([1, 2], [3]), CallTest([3, 4], [7])], "add"),
        (
            {"input_output": json.dumps(APPS_CALL), "time_limit": 1},
            "call",
            [CallTest([1, 2], [3]), CallTest([3, 4], [7])],
            "add",
        ),
        (
            {"tests": [{"input": "1 2\n", "output": "3\n"}, {"stdin": "5 5\n", "stdout": 10}]},
            "stdio",
            [StdioTest("1 2\n", "3\n"), StdioTest("5 5\n", "10")],
            None,
        ),
        (
            {
                "tests": [{"input": "[2,7,11,15]\n9", "output": "[0, 1]", "testtype": "functional"}],
                "metadata": json.dumps({"func_name": "twoSum"}),
            },
            "call",
            [CallTest([[2, 7, 11, 15], 9], [0, 1])],
            "twoSum",
        ),
        (
            {"tests": [{"input": '"abc"', "output": '"cba"'}], "fn_name": "rev"},
            "call",
            [CallTest(["abc"], "cba")],
            "rev",
        ),
        (
            {"tests": [{"input": "4\n", "output": "2\n", "testtype": "stdin"}], "metadata": "{}"},
            "stdio",
            [StdioTest("4\n", "2\n")],
            None,
        ),
        (  # DeepCoder's lcbv5 rows: the tests alone, as a JSON string
            json.dumps([{"input": "4\n", "output": "2\n", "testtype": "stdin"}]),
            "stdio",
            [StdioTest("4\n", "2\n")],
            None,
        ),
        (  # DeepCoder's primeintellect rows
            [{"input": "1 2\n", "output": "3\n", "type": "stdin_stdout"}],
            "stdio",
            [StdioTest("1 2\n", "3\n")],
            None,
        ),
        (  # open-r1's verifiable-coding-problems-python: verification_info
            {"language": "python", "test_cases": [{"input": "1 2\n", "output": "3\n", "type": "stdin_stdout"}]},
            "stdio",
            [StdioTest("1 2\n", "3\n")],
            None,
        ),
        (
            HUMANEVAL,
            "assert",
            # the prompt first (its helpers are the reference's), then the program's entry point (sandbox/runner.py)
            [
                AssertTest(
                    f"{HUMANEVAL['prompt']}\ninc = __judge__.solution('inc')\n{HUMANEVAL['test']}\n\ncheck(inc)\n"
                )
            ],
            None,
        ),
        (
            {"test_list": ["assert f(1) == 2", "assert f(2) == 3"], "test_imports": ["import math"]},
            "assert",
            [AssertTest("import math\n\nassert f(1) == 2"), AssertTest("import math\n\nassert f(2) == 3")],
            None,
        ),
        (
            {"test_list": ["assert f(1) == 2"], "test_setup_code": "X = 1"},
            "assert",
            [AssertTest("X = 1\nassert f(1) == 2")],
            None,
        ),
    ],
)
def test_reference_shapes(reference: object, kind: str, tests: list, fn_name: str | None) -> None:
    ref = parse_reference(reference, SETTINGS)
    assert ref.suite.kind == kind
    assert list(ref.suite.tests) == tests
    assert ref.suite.fn_name == fn_name


def test_reference_options_and_profile_defaults() -> None:
    reference = {
        "tests": [{"input": str(i), "output": str(i)} for i in range(10)],
        "language": "C++",
        "time_limit": 1.5,
        "memory_limit": 256,
        "total_time_limit": 30,
        "float_tolerance": 0,
        "case_sensitive": False,
        "stop_on_first_failure": True,
    }
    ref = parse_reference(reference, CodeSettings(max_tests=4), max_run_s=20)
    assert ref.language == "cpp"
    assert (ref.limits.time_s, ref.limits.memory_mb, ref.limits.total_s) == (1.5, 256, 20)  # capped by the service
    assert (ref.suite.comparison.float_tolerance, ref.suite.comparison.case_sensitive) == (0, False)
    assert ref.stop_on_first_failure
    assert (len(ref.suite.tests), ref.tests_in_reference) == (4, 10)

    defaults = parse_reference({"tests": [{"input": "", "output": ""}]}, CodeSettings(all_or_nothing=True))
    assert (defaults.limits.time_s, defaults.limits.memory_mb, defaults.limits.total_s) == (2.0, 512, 60.0)
    assert defaults.stop_on_first_failure  # all-or-nothing needs no more tests after a failure
    assert defaults.language is None


def test_program_prepends_the_prompt_or_the_call_imports() -> None:
    humaneval = parse_reference(HUMANEVAL, SETTINGS)
    assert humaneval.program("    return x + 1\n") == HUMANEVAL["prompt"] + "    return x + 1\n"
    full = "def inc(x):\n    return x + 1\n"
    assert humaneval.program(full) == full
    assert parse_reference(APPS_CALL, SETTINGS).program(full) == CALL_PRELUDE + full


@pytest.mark.parametrize(
    ("reference", "message"),
    [
        (None, "reference: expected an object with tests"),
        ("print(1)", "reference: expected an object with tests"),
        ({"question": "add"}, "reference: expected tests in one of these shapes"),
        ({"inputs": ["1"], "outputs": ["1", "2"]}, "reference.outputs: 2 outputs for 1 inputs"),
        ({"inputs": [], "outputs": []}, "reference.inputs: expected a non-empty list"),
        ({"inputs": [{"a": 1}], "outputs": ["1"]}, "reference.inputs[0]: expected text"),
        ({"input_output": "{not json", "language": "python"}, "reference.input_output: expected an object"),
        ({"input_output": {"inputs": [5], "outputs": [5], "fn_name": "f"}}, "reference.input_output.inputs[0]"),
        ({"inputs": ["1"], "outputs": ["1"], "fn_name": "not a name"}, "reference.fn_name"),
        ({"tests": "1 2"}, "reference.tests: expected a non-empty list"),
        ({"tests": [{"input": "1"}]}, "reference.tests[0].output: missing"),
        ({"tests": [{"input": "1", "output": "1", "testtype": "file"}]}, "reference.tests[0].testtype"),
        ({"tests": [{"input": "1", "output": "1", "testtype": "functional"}]}, "reference.fn_name"),
        ({"tests": [{"input": "[1", "output": "1"}], "fn_name": "f"}, "reference.tests[0].input: expected JSON"),
        ({"tests": [{"input": "1", "output": "x"}], "fn_name": "f"}, "reference.tests[0].output: expected the result"),
        (
            {"tests": [{"input": "1", "output": "1"}, {"input": "1", "output": "1", "testtype": "functional"}]},
            "reference.tests: mixes stdin and functional",
        ),
        ({"tests": [{"input": "1", "output": "1"}], "metadata": [1]}, "reference.metadata: expected an object"),
        ({"test": "def check(c):\n    assert c(1)\n"}, "reference.entry_point"),
        ({"test": "def check(c) assert", "entry_point": "f"}, "reference.test: not valid Python"),
        (HUMANEVAL | {"prompt": "Write a function that adds one."}, "reference.prompt: not valid Python"),
        ({"test_list": []}, "reference.test_list: expected a non-empty list"),
        ({"test_list": ["assert f(1) ==="]}, "reference.test_list[0]: not valid Python"),
        ({"test_list": ["assert f(1)"], "test_imports": "import math"}, "reference.test_imports"),
        ({"test_list": ["assert f(1)"], "language": "cpp"}, "reference.language: assert tests run Python only"),
        (APPS_CALL | {"language": "java"}, "reference.language: call tests run Python only"),
        ({"inputs": ["1"], "outputs": ["1"], "language": "cobol"}, "reference.language: unknown language 'cobol'"),
        ({"inputs": ["1"], "outputs": ["1"], "time_limit": 0}, "reference.time_limit: expected a positive number"),
        ({"inputs": ["1"], "outputs": ["1"], "time_limit": "2s"}, "reference.time_limit"),
        ({"inputs": ["1"], "outputs": ["1"], "memory_limit": -5}, "reference.memory_limit"),
        ({"inputs": ["1"], "outputs": ["1"], "memory_limit": 4000}, "reference.memory_limit: 4000 MB a test is more"),
        ({"inputs": ["1"], "outputs": ["1"], "total_time_limit": True}, "reference.total_time_limit"),
        ({"inputs": ["1"], "outputs": ["1"], "float_tolerance": -1}, "reference.float_tolerance"),
        ({"inputs": ["1"], "outputs": ["1"], "case_sensitive": "no"}, "reference.case_sensitive: expected true"),
        ({"inputs": ["1"], "outputs": ["1"], "stop_on_first_failure": 1}, "reference.stop_on_first_failure"),
        ({"inputs": ["1"], "outputs": ["1"], "files": ["a.txt"]}, "reference.files: expected an object"),
        ({"inputs": ["1"], "outputs": ["1"], "files": {"a.txt": 5}}, "reference.files.a.txt: expected base64 text"),
        ({"inputs": ["1"], "outputs": ["1"], "files": {"a.txt": "**"}}, "reference.files.a.txt: the content is not"),
        ({"inputs": ["1"], "outputs": ["1"], "files": {"../../etc/x": ""}}, "reference.files.../../etc/x: '../../etc"),
        ({"inputs": ["1\ud800"], "outputs": ["1"]}, "reference.inputs[0]: holds '\\ud800', a lone surrogate"),
        ({"tests": [{"input": "1", "output": ["\udfff"]}]}, "reference.tests[0].output: holds '\\udfff'"),
        ({"inputs": ["1"], "outputs": ["1"], "files": {"a\ud800.txt": ""}}, "reference.files.'a\\ud800.txt': holds"),
        (json.dumps({"inputs": ["1"], "outputs": ["1"], "total_time_limit": 5}), "reference.total_time_limit"),
    ],
)
def test_malformed_references_name_the_field(reference: object, message: str) -> None:
    with pytest.raises(InvalidItem) as raised:
        parse_reference(reference, SETTINGS)
    assert message in str(raised.value)


# ---------------------------------------------------------------- the service, over HTTP

A_PLUS_B = {"inputs": ["1 2\n", "5 7\n"], "outputs": ["3\n", "12\n"]}
SPIN = {**A_PLUS_B, "time_limit": 0.5}

# (language, program, reference, verdicts): right answers, a half-right one (max(a, b) + 1 is right
# for 1 2 only), compile errors, runtime errors and endless loops, in five languages.
PROGRAMS = [
    ("python", "a, b = map(int, input().split())\nprint(a + b)", A_PLUS_B, ["accepted"] * 2),
    ("python", "a, b = map(int, input().split())\nprint(max(a, b) + 1)", A_PLUS_B, ["accepted", "wrong_answer"]),
    ("python", "print(1 +)", A_PLUS_B, ["compile_error"] * 2),
    ("python", "print(1 // 0)", A_PLUS_B, ["runtime_error"] * 2),
    ("python", "while True:\n    pass", SPIN, ["time_limit"] * 2),
    (
        "cpp",
        "#include <iostream>\nint main() { long a, b; std::cin >> a >> b; std::cout << a + b << std::endl; }",
        A_PLUS_B,
        ["accepted"] * 2,
    ),
    (
        "cpp",
        "#include <iostream>\n#include <algorithm>\n"
        "int main() { long a, b; std::cin >> a >> b; std::cout << std::max(a, b) + 1; }",
        A_PLUS_B,
        ["accepted", "wrong_answer"],
    ),
    ("cpp", "int main() { return undeclared; }", A_PLUS_B, ["compile_error"] * 2),
    ("cpp", "#include <cstdlib>\nint main() { std::abort(); }", A_PLUS_B, ["runtime_error"] * 2),
    ("cpp", "int main() { volatile long x = 0; for (;;) x++; }", SPIN, ["time_limit"] * 2),
    (
        "javascript",
        "const [a, b] = require('fs').readFileSync(0, 'utf8').trim().split(/\\s+/).map(Number);\nconsole.log(a + b);",
        A_PLUS_B,
        ["accepted"] * 2,
    ),
    (
        "javascript",
        "const [a, b] = require('fs').readFileSync(0, 'utf8').trim().split(/\\s+/).map(Number);\n"
        "console.log(Math.max(a, b) + 1);",
        A_PLUS_B,
        ["accepted", "wrong_answer"],
    ),
    ("javascript", "throw new Error('boom');", A_PLUS_B, ["runtime_error"] * 2),
    ("javascript", "for (;;) {}", SPIN, ["time_limit"] * 2),
    (
        "java",
        "import java.util.*;\npublic class Main { public static void main(String[] x) {\n"
        "  Scanner s = new Scanner(System.in); System.out.println(s.nextLong() + s.nextLong()); } }",
        A_PLUS_B,
        ["accepted"] * 2,
    ),
    (
        "java",
        'public class Main { public static void main(String[] x) { int y = "s"; } }',
        A_PLUS_B,
        ["compile_error"] * 2,
    ),
    (
        "java",
        'public class Main { public static void main(String[] x) { throw new IllegalStateException("boom"); } }',
        A_PLUS_B,
        ["runtime_error"] * 2,
    ),
    (
        "go",
        'package main\nimport "fmt"\nfunc main() { var a, b int; fmt.Scan(&a, &b); fmt.Println(a + b) }',
        A_PLUS_B,
        ["accepted"] * 2,
    ),
    (
        "rust",
        "use std::io::Read;\nfn main() { let mut s = String::new(); std::io::stdin().read_to_string(&mut s).unwrap();\n"
        "  let v: Vec<i64> = s.split_whitespace().map(|t| t.parse().unwrap()).collect();\n"
        '  println!("{}", v[0] + v[1]); }',
        A_PLUS_B,
        ["accepted"] * 2,
    ),
    (
        "c",
        '#include <stdio.h>\nint main() { long a, b; scanf("%ld %ld", &a, &b); printf("%ld\\n", a + b); }',
        A_PLUS_B,
        ["accepted"] * 2,
    ),
    ("python", "x = bytearray(1 << 32)", A_PLUS_B | {"memory_limit": 128}, ["memory_limit"] * 2),
    ("python", "while True:\n    print('y' * 4096)", A_PLUS_B, ["output_limit"] * 2),
]


# A reference whose tests read a file it ships (SandboxFusion's `files`): the program that reads it earns the
# reward; one that guesses does not, nor the reading one when the reference ships no file.
NUMBERS = {"data/numbers.txt": base64.b64encode(b"1 2 3\n").decode()}
WITH_FILES = {"inputs": ["10\n", "20\n"], "outputs": ["16\n", "26\n"], "files": NUMBERS}
READS_FILE = 'print(sum(map(int, open("data/numbers.txt").read().split())) + int(input()))'
FILE_ITEMS = [
    (READS_FILE, WITH_FILES, 1.0),
    ("print(int(input()) + 5)", WITH_FILES, 0.0),
    (READS_FILE, {key: value for key, value in WITH_FILES.items() if key != "files"}, 0.0),
]


def grade_file_items(server: LocalServer) -> None:
    items = [{"task": "code", "completion": fenced(code), "reference": ref} for code, ref, _ in FILE_ITEMS]
    results = grade(server, items)
    assert [r["reward"] for r in results] == [reward for _, _, reward in FILE_ITEMS], results


def test_a_references_files_are_there_for_its_tests(server: LocalServer) -> None:
    grade_file_items(server)


def test_verdicts_across_languages(server: LocalServer) -> None:
    items = [
        {"id": i, "task": "code", "completion": fenced(code, language), "reference": reference}
        for i, (language, code, reference, _) in enumerate(PROGRAMS)
    ]
    results = grade(server, items)
    for (language, code, _, verdicts), result in zip(PROGRAMS, results, strict=True):
        assert result["status"] == "ok", result
        accuracy = result["details"]["accuracy"]
        assert [t["verdict"] for t in accuracy["tests"]] == verdicts, (language, code, accuracy)
        assert result["reward"] == verdicts.count("accepted") / len(verdicts)
        assert accuracy["language"] == language
        assert accuracy["code_chars"] == len(code) + 1
    by_verdict = {
        verdicts[-1] + "/" + language: r for (language, _, _, verdicts), r in zip(PROGRAMS, results, strict=True)
    }
    assert "SyntaxError" in by_verdict["compile_error/python"]["details"]["accuracy"]["compile_error"]
    assert "undeclared" in by_verdict["compile_error/cpp"]["details"]["accuracy"]["compile_error"]
    assert "ZeroDivisionError" in by_verdict["runtime_error/python"]["details"]["accuracy"]["tests"][0]["detail"]
    assert "IllegalStateException" in by_verdict["runtime_error/java"]["details"]["accuracy"]["tests"][0]["detail"]
    assert "expected '12\\n'" in by_verdict["wrong_answer/python"]["details"]["accuracy"]["tests"][1]["detail"]


CLASS_SOLUTION = """class Solution:
    def twoSum(self, nums: List[int], target: int) -> List[int]:
        seen = {}
        for i, x in enumerate(nums):
            if target - x in seen:
                return [seen[target - x], i]
            seen[x] = i
"""
LIVECODEBENCH = {
    "tests": [
        {"input": "[2,7,11,15]\n9", "output": "[0, 1]", "testtype": "functional"},
        {"input": "[3,2,4]\n6", "output": "[1, 2]", "testtype": "functional"},
        {"input": "[3,3]\n6", "output": "[0, 1]", "testtype": "functional"},
    ],
    "metadata": json.dumps({"func_name": "twoSum"}),
}
APPS_CALL_BASED = json.dumps(
    {"fn_name": "count_vowels", "inputs": [["hello"], ["sky"], ["AEIOU"]], "outputs": [[2], [0], [5]]}
)
MBPP = {
    "test_list": [
        "assert similar_elements((3, 4, 5, 6), (5, 7, 4, 10)) == (4, 5)",
        "assert similar_elements((1, 2, 3, 4), (5, 4, 3, 7)) == (3, 4)",
        "assert similar_elements((11, 12, 14, 13), (17, 15, 14, 13)) == (13, 14)",
    ],
    "test_imports": [],
}


@pytest.mark.parametrize(
    ("code", "reference", "reward", "profile"),
    [
        (CLASS_SOLUTION, LIVECODEBENCH, 1.0, None),  # LeetCode style, `List` without an import
        ("class Solution:\n    def twoSum(self, nums, target):\n        return [0, 1]", LIVECODEBENCH, 2 / 3, None),
        ("def count_vowels(s):\n    return sum(c in 'aeiouAEIOU' for c in s)", APPS_CALL_BASED, 1.0, None),
        ("def count_vowels(s):\n    return sum(c in 'aeiou' for c in s)", APPS_CALL_BASED, 2 / 3, None),
        ("def similar_elements(a, b):\n    return tuple(sorted(set(a) & set(b)))", MBPP, 1.0, None),
        ("def similar_elements(a, b):\n    return (4, 5)", MBPP, 1 / 3, None),
        ("    return x + 1", HUMANEVAL, 1.0, None),  # the body only: the prompt goes first
        ("def inc(x):\n    return x - 1", HUMANEVAL, 0.0, None),
        ("def count_vowels(s):\n    return sum(c in 'aeiou' for c in s)", APPS_CALL_BASED, 0.0, "all_or_nothing"),
        ("def count_vowels(s):\n    return sum(c in 'aeiouAEIOU' for c in s)", APPS_CALL_BASED, 1.0, "all_or_nothing"),
    ],
)
def test_function_call_and_assert_suites(server: LocalServer, code, reference, reward, profile) -> None:
    profile = {"name": "accuracy", "code": {"all_or_nothing": True}} if profile else None
    [result] = grade(server, [{"task": "code", "completion": fenced(code), "reference": reference}], profile)
    assert result["status"] == "ok", result
    assert result["reward"] == pytest.approx(reward), result


def test_all_or_nothing_stops_at_the_first_failure(server: LocalServer) -> None:
    reference = {"tests": [{"input": str(i), "output": "0"} for i in range(6)]}
    item = {"task": "code", "completion": fenced("print(min(int(input()), 1))"), "reference": reference}
    [fraction] = grade(server, [item])
    [all_or_nothing] = grade(server, [item], {"name": "accuracy", "code": {"all_or_nothing": True}})
    [stopped] = grade(server, [item | {"reference": reference | {"stop_on_first_failure": True}}])
    assert fraction["reward"] == pytest.approx(1 / 6)
    assert fraction["details"]["accuracy"]["verdicts"] == {"accepted": 1, "wrong_answer": 5}
    assert all_or_nothing["reward"] == 0.0
    verdicts = all_or_nothing["details"]["accuracy"]["verdicts"]
    assert verdicts["skipped"] > 0 and verdicts.get("wrong_answer", 0) >= 1
    assert stopped["details"]["accuracy"]["verdicts"]["skipped"] > 0


def test_details_stay_small_and_max_tests_caps_the_run(server: LocalServer) -> None:
    reference = {"tests": [{"input": str(i), "output": str(i)} for i in range(120)]}
    item = {"task": "code", "completion": fenced("print(input())"), "reference": reference}
    [capped] = grade(server, [item])
    accuracy = capped["details"]["accuracy"]
    assert (accuracy["total"], accuracy["tests_in_reference"], sum(accuracy["verdicts"].values())) == (100, 120, 100)
    assert (len(accuracy["tests"]), accuracy["tests_not_shown"]) == (50, 50)
    [few] = grade(server, [item], {"name": "accuracy", "code": {"max_tests": 5}})
    assert few["details"]["accuracy"]["total"] == 5 and "tests_not_shown" not in few["details"]["accuracy"]


def test_code_deadline_follows_the_item_budget_not_the_math_deadline(server: LocalServer) -> None:
    """The fixture's item deadline is 3 s; a code item gets its own, from its run budget."""
    slow = {"task": "code", "completion": fenced("import time\ntime.sleep(3.5)\nprint(1)")}
    budget_cut = {"task": "code", "completion": fenced("import time\ntime.sleep(30)")}
    results = grade(
        server,
        [
            slow | {"reference": {"tests": [{"input": "", "output": "1"}], "time_limit": 2}},
            budget_cut
            | {"reference": {"tests": [{"input": "", "output": "1"}], "time_limit": 20, "total_time_limit": 2}},
        ],
    )
    assert results[0]["status"] == "ok" and results[0]["reward"] == 1.0, results[0]
    assert results[0]["details"]["seconds"] > 3.5
    assert results[1]["status"] == "ok", results[1]
    assert results[1]["details"]["accuracy"]["run_time_limit"] is True
    assert results[1]["details"]["accuracy"]["verdicts"] == {"skipped": 1}


def test_invalid_references_and_missing_code(server: LocalServer) -> None:
    items = [
        {"task": "code", "completion": fenced("print(1)"), "reference": {"tests": [{"input": "1"}]}},
        {"task": "code", "completion": fenced("print(1)"), "reference": "just run it"},
        {"task": "code", "completion": fenced("print(1)"), "reference": MBPP | {"language": "rust"}},
        {"task": "code", "completion": fenced("print(1)"), "reference": A_PLUS_B | {"total_time_limit": -1}},
        {"task": "code", "completion": "The answer is to add them.", "reference": A_PLUS_B},
        {"task": "code", "completion": fenced("fn main() {}", "rust"), "reference": MBPP},
    ]
    results = grade(server, items)
    assert [r["status"] for r in results] == ["invalid"] * 4 + ["ok"] * 2
    reasons = [r["details"].get("reason", "") for r in results]
    assert "reference.tests[0].output" in reasons[0]
    assert "reference: expected an object with tests" in reasons[1]
    assert "reference.language: assert tests run Python only" in reasons[2]
    assert "reference.total_time_limit" in reasons[3]
    assert results[4]["reward"] == 0 and "no fenced code block" in results[4]["details"]["accuracy"]["reason"]
    assert "assert tests need Python" in results[5]["details"]["accuracy"]["reason"]


def test_test_data_no_run_can_use_is_an_invalid_item_not_an_error(server: LocalServer) -> None:
    """A lone surrogate (a JSON escape, not text) in a test's input or a file's name, and a reference file where
    the program's own source goes: the item is invalid, naming the field; the batch's other items are graded."""
    items = [
        {"task": "code", "completion": fenced("print(input())"), "reference": {"inputs": ["\ud800"], "outputs": ["x"]}},
        {"task": "code", "completion": fenced("print(1)"), "reference": A_PLUS_B | {"files": {"a\udc00": ""}}},
        {"task": "code", "completion": fenced("print(1)"), "reference": A_PLUS_B | {"files": {"main.py": ""}}},
        {"task": "code", "completion": fenced("print(sum(map(int, input().split())))"), "reference": A_PLUS_B},
    ]
    body = json.dumps({"items": items})  # ensure_ascii: the surrogates travel as escapes, as a trainer's JSON has them
    with server.client() as client:
        response = client.post("/v1/rewards", content=body, headers={"content-type": "application/json"})
    assert response.status_code == 200, response.text
    results = response.json()["results"]
    assert [r["status"] for r in results] == ["invalid"] * 3 + ["ok"], results
    reasons = [r["details"].get("reason", "") for r in results]
    assert "reference.inputs[0]: holds '\\ud800', a lone surrogate" in reasons[0]
    assert "reference.files.'a\\udc00': holds" in reasons[1]
    assert "reference.files: 'main.py' would replace the program's own source file" in reasons[2]
    assert results[3]["reward"] == 1.0


def test_task_auto_is_code_when_the_reference_holds_tests(server: LocalServer) -> None:
    right = fenced("a, b = map(int, input().split())\nprint(a + b)")
    items = [
        {"task": "auto", "completion": right, "reference": json.dumps(A_PLUS_B)},  # APPS, as a JSON string
        {"task": "auto", "completion": right, "reference": [{"input": "1 2\n", "output": "3\n"}]},  # DeepCoder
        {"task": "auto", "completion": "\\boxed{3}", "reference": "3"},
        {"task": "auto", "completion": "\\boxed{[1, 2]}", "reference": "[1, 2]"},  # a list, not tests
    ]
    results = grade(server, items)
    assert [(r["status"], r["reward"]) for r in results] == [("ok", 1.0)] * 4, results
    assert [("language" in r["details"]["accuracy"]) for r in results] == [True, True, False, False]


def test_code_and_math_items_in_one_batch(server: LocalServer) -> None:
    right = "a, b = map(int, input().split())\nprint(a + b)"
    items = [
        {"id": "code-right", "task": "code", "completion": fenced(right), "reference": A_PLUS_B},
        {"id": "math", "task": "math", "completion": "<think>2+2</think> \\boxed{4}", "reference": "4"},
        {"id": "code-untagged", "task": "code", "completion": f"</think>\n```\n{right}\n```", "reference": A_PLUS_B},
        {
            "id": "code-cpp-ref",
            "task": "code",
            "completion": "```\nint main(){}\n```",
            "reference": A_PLUS_B | {"language": "cpp"},
        },
        {"id": "math-wrong", "task": "math", "completion": "<think>2+2</think> \\boxed{5}", "reference": "4"},
    ]
    results = grade(server, items, {"name": "r1", "language": {"target_language": "en"}})
    assert [r["id"] for r in results] == [item["id"] for item in items]
    assert [r["status"] for r in results] == ["ok"] * 5
    assert [r["components"]["accuracy"] for r in results] == [1.0, 1.0, 1.0, 0.0, 0.0]
    assert results[0]["components"]["format"] == 1.0 and results[0]["reward"] == 3.0
    assert results[3]["details"]["accuracy"]["language"] == "cpp"  # untagged fence: the reference's language


@pytest.mark.parametrize(
    ("setting", "message"),
    [
        ({"sandbox_isolation": "docker"}, "REWARD_API_SANDBOX_ISOLATION='docker': expected one of"),
        ({"code_deadline_s": 5.0}, "REWARD_API_CODE_DEADLINE_S=5: expected at least"),
    ],
)
def test_bad_sandbox_settings_stop_the_service(setting: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        RewardEngine(Config(**setting))


def test_a_compile_cache_directory_others_can_write_stops_the_service(tmp_path, monkeypatch) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    monkeypatch.setenv("SANDBOX_COMPILE_CACHE_DIR", str(shared))
    with pytest.raises(ValueError, match="SANDBOX_COMPILE_CACHE_DIR"):
        RewardEngine(Config())


def test_without_isolation_the_service_grades_the_rest_and_answers_code_error(tmp_path) -> None:
    """No `bwrap` on PATH: the service starts, grades math, answers code items `error` saying why (never `ok`
    with 0), and says so in /readyz and /metrics."""
    empty_path = tmp_path / "bin"
    empty_path.mkdir()
    code_item = {"task": "code", "completion": fenced("print(sum(map(int, input().split())))"), "reference": A_PLUS_B}
    math_item = {"task": "math", "completion": "\\boxed{4}", "reference": "4"}
    with LocalServer(tmp_path, PATH=str(empty_path), REWARD_API_WORKERS="1") as server:
        code, math = grade(server, [code_item, math_item])
        ready = httpx.get(f"{server.url}/readyz").json()
        metrics = httpx.get(f"{server.url}/metrics").text
    assert math["status"] == "ok" and math["reward"] == 1.0
    assert code["status"] == "error" and "`bwrap` not found" in code["details"]["reason"], code
    assert "REWARD_API_SANDBOX_URLS" in code["details"]["reason"]
    assert (
        ready["ready"] is True and ready["code"]["available"] is False and ready["code"]["isolation"] == "unavailable"
    )
    assert "`bwrap` not found" in ready["code"]["detail"]
    assert 'reward_code_grading_available{isolation="unavailable"} 0.0' in metrics
    assert "code grading is unavailable" in server.log()


def test_require_code_refuses_to_start_without_isolation(tmp_path) -> None:
    empty_path = tmp_path / "bin"
    empty_path.mkdir()
    server = LocalServer(tmp_path, PATH=str(empty_path), REWARD_API_WORKERS="1", REWARD_API_REQUIRE_CODE="true")
    with pytest.raises(RuntimeError) as refused:
        server.start()
    assert "`bwrap` not found" in str(refused.value) and "REWARD_API_REQUIRE_CODE" in str(refused.value)


def test_isolation_none_must_be_chosen_and_then_grades(tmp_path) -> None:
    empty_path = tmp_path / "bin"
    empty_path.mkdir()
    env = {"PATH": str(empty_path), "REWARD_API_WORKERS": "1", "REWARD_API_SANDBOX_ISOLATION": "none"}
    with LocalServer(tmp_path, **env) as server:
        [result] = grade(
            server,
            [{"task": "code", "completion": fenced("print(sum(map(int, input().split())))"), "reference": A_PLUS_B}],
        )
        ready = httpx.get(f"{server.url}/readyz").json()
    assert result["reward"] == 1.0 and result["details"]["accuracy"]["isolation"] == "none", result
    assert ready["code"] == {"available": True, "isolation": "none", "detail": ready["code"]["detail"]}


def test_code_is_judged_on_a_sandbox_service_when_urls_are_configured(tmp_path) -> None:
    """With REWARD_API_SANDBOX_URLS the reward service needs no local sandbox (no `bwrap` on its PATH)."""
    empty_path = tmp_path / "bin"
    empty_path.mkdir()
    with (
        LocalServer.sandbox(tmp_path, SANDBOX_WORKERS="2", SANDBOX_AUTH_TOKEN="s3cret") as sandbox,
        LocalServer(
            tmp_path,
            PATH=str(empty_path),
            REWARD_API_WORKERS="1",
            REWARD_API_SANDBOX_URLS=f"http://127.0.0.1:1, {sandbox.url}",  # the first is down: fail over
            REWARD_API_SANDBOX_AUTH_TOKEN="s3cret",
        ) as server,
    ):
        items = [
            {"task": "code", "completion": fenced(code, language), "reference": reference}
            for language, code, reference, _ in PROGRAMS[:10]
        ]
        results = grade(server, items)
        grade_file_items(server)
        replacing = A_PLUS_B | {"files": {"main.py": ""}}  # the sandbox refuses it (422): the item is invalid
        [replaced] = grade(server, [{"task": "code", "completion": fenced("print(1)"), "reference": replacing}])
    for (_, _, _, verdicts), result in zip(PROGRAMS[:10], results, strict=True):
        assert [t["verdict"] for t in result["details"]["accuracy"]["tests"]] == verdicts, result
    assert replaced["status"] == "invalid", replaced
    assert "'main.py' would replace the program's own source file" in replaced["details"]["reason"], replaced
