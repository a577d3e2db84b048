"""verl's own SandboxFusion scorer (`verl.utils.reward_score.sandbox_fusion`) grading our added languages.

verl posts each test case as one SandboxFusion `POST /run_code` (`call_sandbox_api`: code, stdin,
compile_timeout = run_timeout = `timeout`, memory_limit_MB, language) and reads back `status`,
`compile_result` (status, return_code, stderr, execution_time) and `run_result` (status, return_code,
stdout, stderr, execution_time). `check_correctness` turns each answer into True (Success, stdout equal
to the expected output but for trailing newlines), False (Success, another output), -1 (the request
failed, or SandboxError), -2 (run failed), -3 (run timed out) or -4 (compile failed); `compute_score`
scores the share of True. Test cases are `inputs`/`outputs` lists, or `assert_case` code appended to the
program (no stdin; any Success passes); `fn_name` only wraps python.

Where verl picks the language: only `check_correctness(..., language=...)` takes one, and it must be
one of verl's SUPPORTED_LANGUAGES (else verl answers -1 itself without a request; SandboxFusion's ids:
`R`, not `r`; D only as `D_ut`; no haskell or ocaml). `compute_score` (what `default_compute_score`
calls for codecontests/apps/codeforces/taco) reads the code out of the completion's code fence but
drops the fence's language name and always calls `check_correctness` with its default, python.
"""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import pytest
from verl.utils.reward_score.sandbox_fusion import compute_score
from verl.utils.reward_score.sandbox_fusion.utils import SUPPORTED_LANGUAGES, check_correctness

from reward_api.local import LocalServer
from sandbox.languages import CANNOT_RUN

# Read two integers, print their sum. The wrong programs are the same programs printing a - b instead.
PROBLEM = {"inputs": ["1 2\n", "10 -3\n", "100 200\n"], "outputs": ["3", "7", "300"]}
DIFFERENCES = ["-1", "13", "-100"]  # what the wrong programs print: no case passes
PYTHON_RIGHT = "a, b = map(int, input().split())\nprint(a + b)\n"
MEMORY_MB = 1024  # verl's default (reward.sandbox_fusion.memory_limit_mb)

# Keyed by the id verl sends; OP is `+` in the right program, `-` in the wrong one.
PROGRAMS = {
    "php": '<?php\n[$a, $b] = fscanf(STDIN, "%d %d");\necho $a OP $b, "\\n";\n',
    "ruby": "a, b = gets.split.map(&:to_i)\nputs a OP b\n",
    "perl": "my ($x, $y) = split ' ', <STDIN>;\nprint $x OP $y, \"\\n\";\n",
    "lua": 'local a, b = io.read("n", "n")\nprint(a OP b)\n',
    "R": 'x <- scan(file("stdin"), what = integer(), quiet = TRUE)\ncat(x[1] OP x[2], "\\n", sep = "")\n',
    "bash": "read a b\necho $((a OP b))\n",
    "csharp": """using System;
class Program {
    static void Main() {
        var p = Console.ReadLine().Split((char[])null, StringSplitOptions.RemoveEmptyEntries);
        Console.WriteLine(long.Parse(p[0]) OP long.Parse(p[1]));
    }
}
""",
    "scala": """object Main {
  def main(args: Array[String]): Unit = {
    val Array(a, b) = scala.io.StdIn.readLine().trim.split("\\\\s+").map(_.toLong)
    println(a OP b)
  }
}
""",
    "kotlin_script": 'val (a, b) = readLine()!!.trim().split(Regex("\\\\s+")).map { it.toLong() }\nprintln(a OP b)\n',
    "racket": "#lang racket/base\n(define a (read))\n(define b (read))\n(displayln (OP a b))\n",
    # SandboxFusion's D is `D_ut` (built with -unittest): a program with main and no unittest blocks runs main.
    "D_ut": 'import std.stdio;\nvoid main() {\n    long a, b;\n    readf(" %d %d", &a, &b);\n    writeln(a OP b);\n}\n',
}
UNRUNNABLE = ["swift", "julia"]  # ids verl sends that we answer with a SandboxError


@pytest.fixture(scope="module")
def fusion_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    env = {"SANDBOX_WORKERS": "2", "SANDBOX_LANGUAGES": "all"}
    with LocalServer.sandbox(tmp_path_factory.mktemp("sandbox"), **env) as server:
        yield f"{server.url}/run_code"


def verl_check(url: str, language: str, code: str) -> tuple[list, list[dict]]:
    """verl's check_correctness on PROBLEM, with its default timeout (10 s for the compile and for each run)."""
    return check_correctness(url, dict(PROBLEM), code, memory_limit_mb=MEMORY_MB, language=language)


def test_verl_addresses_these_ids_and_refuses_ours_it_does_not_name() -> None:
    assert set(PROGRAMS) | set(UNRUNNABLE) <= set(SUPPORTED_LANGUAGES)
    for ours in ("r", "d", "haskell", "ocaml"):  # verl answers -1 itself: no request is made (no server here)
        results, metadata = verl_check("http://127.0.0.1:9/run_code", ours, "main = print 1\n")
        assert results == [-1, -1, -1] and metadata[0]["status"] == "api_error"
        assert f"Unsupported language: {ours}" in metadata[0]["api_request_error"]


@pytest.mark.parametrize("language", list(PROGRAMS))
def test_verl_grades_a_right_and_a_wrong_program(fusion_url: str, language: str) -> None:
    right, right_meta = verl_check(fusion_url, language, PROGRAMS[language].replace("OP", "+"))
    wrong, wrong_meta = verl_check(fusion_url, language, PROGRAMS[language].replace("OP", "-"))
    assert right == [True, True, True], right_meta
    assert [m["status"] for m in right_meta] == ["success"] * 3
    assert [m["stdout"].strip() for m in right_meta] == PROBLEM["outputs"]
    assert wrong == [False, False, False], wrong_meta  # ran fine (Success), printed another answer
    assert [m["status"] for m in wrong_meta] == ["wrong_answer"] * 3
    assert [m["stdout"].strip() for m in wrong_meta] == DIFFERENCES
    assert all(m["exit_code"] == 0 and m["duration"] is not None for m in right_meta + wrong_meta)


def test_verl_reads_a_failed_compile_and_a_time_limit(fusion_url: str) -> None:
    results, metadata = verl_check(fusion_url, "csharp", "class Program { static void Main() { int x = } }\n")
    assert results == [-4, -4, -4], metadata
    assert metadata[0]["status"] == "compile_error" and metadata[0]["compile_status"] == "Finished"
    assert "error CS1525" in metadata[0]["compile_stderr"] and metadata[0]["run_status"] is None
    assert {m["status"] for m in metadata[1:]} <= {"compile_error", "compile_error_skipped"}
    spins = check_correctness(fusion_url, dict(PROBLEM), "while :; do :; done\n", timeout=1, language="bash")
    assert spins[0] == [-3, -3, -3], spins[1]
    assert [m["run_status"] for m in spins[1]] == ["TimeLimitExceeded"] * 3


@pytest.mark.parametrize("language", UNRUNNABLE)
def test_a_language_we_cannot_run_is_a_sandbox_error_to_verl(fusion_url: str, language: str) -> None:
    """Not a silent success nor a wrong answer: verl marks each case -1, `sandbox_error`, and keeps our answer
    (with the reason in `message`) in the metadata; its score is 0.0. verl does not log the message itself."""
    results, metadata = verl_check(fusion_url, language, PROGRAMS["ruby"].replace("OP", "+"))
    assert results == [-1, -1, -1], metadata
    for case in metadata:
        assert case["status"] == "sandbox_error" and case["api_request_error"] is None  # an answer, not an HTTP error
        assert case["api_status"] == "SandboxError" and case["stdout"] is None and case["run_status"] == "Error"
        assert (
            f"language '{language}'" in case["api_response"]["message"]
            and CANNOT_RUN[language] in case["api_response"]["message"]
        )
        assert case["stderr"] == case["api_response"]["message"]  # verl's own metadata carries the reason too


def test_verl_assert_cases_in_d_unittests(fusion_url: str) -> None:
    """verl's `assert_case`: each is appended to the code and run with no stdin; any Success passes it."""
    cases = {"inputs": ["", ""], "outputs": [None, None]}
    cases["assert_case"] = ["unittest { assert(add(1, 2) == 3); }", "unittest { assert(add(10, -3) == 7); }"]
    right = "long add(long a, long b) { return a + b; }\n"
    passed, passed_meta = check_correctness(fusion_url, dict(cases), right, memory_limit_mb=MEMORY_MB, language="D_ut")
    failed, failed_meta = check_correctness(
        fusion_url, dict(cases), right.replace("+", "-"), memory_limit_mb=MEMORY_MB, language="D_ut"
    )
    assert passed == [True, True], passed_meta
    assert failed == [-2, -2], failed_meta  # the failed assertion: exit code 1, a runtime error to verl
    assert all("Assertion failure" in m["stdout"] + m["stderr"] for m in failed_meta)


def test_compute_score_grades_python_fences(fusion_url: str) -> None:
    right = "Here it is:\n```python\na, b = map(int, input().split())\nprint(a + b)\n```\n"
    wrong = right.replace("a + b", "a - b")
    assert compute_score(fusion_url, None, MEMORY_MB, right, PROBLEM)[0] == 1.0
    score, metadata = compute_score(fusion_url, None, MEMORY_MB, wrong, PROBLEM)
    assert score == 0.0 and [m["status"] for m in metadata] == ["wrong_answer"] * 3


def test_compute_score_runs_any_fence_as_python(fusion_url: str) -> None:
    """compute_score strips a ```php fence's name and sends the code as python: a right PHP program scores 0.0."""
    completion = f"```php\n{PROGRAMS['php'].replace('OP', '+')}```\n"
    score, metadata = compute_score(fusion_url, None, MEMORY_MB, completion, PROBLEM)
    assert score == 0.0
    assert [m["status"] for m in metadata] == ["runtime_error"] * 3
    assert "SyntaxError" in metadata[0]["stderr"]


def test_a_burst_from_verls_scorer_at_its_defaults_scores_no_right_program_wrong(fusion_url: str) -> None:
    """verl sends 8 reward workers x 64 requests at once by default and retries only a 504: 400 right programs at once
    wait for a worker within their deadline, none refused with the 503 verl would take for a failed run."""

    def one(i: int) -> tuple[object, object]:  # one case: one request each
        results, metadata = check_correctness(
            fusion_url, {"inputs": ["1 2\n"], "outputs": ["3"]}, f"{PYTHON_RIGHT}# {i}\n"
        )
        return results, metadata[0].get("api_request_error")

    with ThreadPoolExecutor(400) as pool:
        answers = list(pool.map(one, range(400)))
    refused = [answer for answer in answers if answer[0] != [True]]
    assert not refused, (len(refused), refused[:3])
