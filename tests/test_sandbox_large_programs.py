"""Large programs get the verdict they deserve, or a 413: never an infrastructure error, never a traceback.

Real sandbox (bubblewrap, cgroups) through LocalJudge, the sandbox service on loopback, and the reward
service's code grader judging in-process and through that sandbox service. The programs:

- a correct 2 MB Python solution padded with `t = t + 1` lines, the densest common Python: compiling it
  takes ~450 MB, more than the sandbox holds for two tests of 64 MB, which used to kill the runner
  ("sandbox runner ended with code 137": the item was `error`);
- programs over sandbox.executor.MAX_SOURCE_MB: a compile error naming the limit when judged, a 413
  with the error contract from the sandbox service;
- Python that compiles too long or needs more memory to compile than allowed: compile errors;
- a program or test inputs larger than the sandbox's disk: said in one line (they used to be the
  runner's traceback).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import replace

import httpx
import pytest

from reward_api.local import LocalServer
from sandbox.executor import MAX_SOURCE_MB, Limits
from sandbox.judge import AssertTest, LocalJudge, StdioTest, Verdict
from sandbox.judge import TestSuite as Suite  # not `Test*`: pytest would try to collect it

ADD = "import sys\na, b = map(int, sys.stdin.read().split())\n"
SUITE = Suite("stdio", (StdioTest("1 2", "3"), StdioTest("4 5", "9")))
WIRE_SUITE = {"kind": "stdio", "tests": [{"input": "1 2", "output": "3"}, {"input": "4 5", "output": "9"}]}
LIMITS = Limits(time_s=2, memory_mb=64, total_s=60)
OVER_LIMIT_MB = MAX_SOURCE_MB + 1
NO_DISK = "the program does not fit the sandbox's disk (limits.disk_mb)"
BOUND_S = 30.0  # "does not hang": every run here ends far sooner on an idle machine


def dense_program(mb: float, answer: str = "a + b") -> str:
    """A solution padded to `mb` MB with `t = t + 1` lines (~200 bytes of compile memory per byte)."""
    return ADD + "t = 0\n" + "t = t + 1\n" * int(mb * 1e6 / 10) + f"print({answer})\n"


def oversized_program() -> str:
    """A solution followed by a literal table: just over the source limit."""
    row = "    " + ", ".join(str(i * 7919 % 1000003) for i in range(16)) + ",\n"
    return ADD + "TABLE = [\n" + row * (OVER_LIMIT_MB * 1024 * 1024 // len(row) + 1) + "]\nprint(a + b)\n"


def completion(code: str) -> str:
    return f"<think>add them</think>\n```python\n{code}```\n"


@pytest.fixture(scope="module")
def judge() -> LocalJudge:
    return LocalJudge()


@pytest.fixture(scope="module")
def remote_rewards(tmp_path_factory: pytest.TempPathFactory, sandbox: LocalServer) -> Iterator[LocalServer]:
    """The reward service judging code through the sandbox service."""
    env = {"REWARD_API_WORKERS": "1", "REWARD_API_SANDBOX_URLS": sandbox.url}
    with LocalServer(tmp_path_factory.mktemp("rewards"), **env) as server:
        yield server


# --- the judge ---------------------------------------------------------------------------------


@pytest.mark.parametrize(("answer", "verdict"), [("a + b", Verdict.ACCEPTED), ("a - b", Verdict.WRONG_ANSWER)])
def test_a_2_mb_python_program_gets_the_verdict_it_deserves(judge: LocalJudge, answer: str, verdict: Verdict) -> None:
    started = time.monotonic()
    report = judge.judge("python", dense_program(2, answer), SUITE, LIMITS)
    assert report.sandbox_error is None and report.compile_error is None, report.to_dict()
    assert [t.verdict for t in report.tests] == [verdict, verdict], report.to_dict()
    assert time.monotonic() - started < BOUND_S


def test_assert_tests_compile_with_the_program(judge: LocalJudge) -> None:
    """A test's own code (HumanEval+ ships megabytes of them) compiles under the compile limits too, and
    one that does not compile fails that test, saying so, rather than the run."""
    padding = "t = 0\n" + "t = t + 1\n" * 200_000  # 2 MB
    suite = Suite("assert", (AssertTest(padding + "assert add(1, 2) == 3"), AssertTest("assert add(1, 2) == (3")))
    report = judge.judge("python", "def add(a, b):\n    return a + b\n", suite, LIMITS)
    assert report.sandbox_error is None and report.compile_error is None, report.to_dict()
    assert [t.verdict for t in report.tests] == [Verdict.ACCEPTED, Verdict.RUNTIME_ERROR], report.to_dict()
    assert "the test's code does not compile: SyntaxError: '(' was never closed" in report.tests[1].detail


@pytest.mark.parametrize(
    ("program", "limits", "reason"),
    [
        # Each `def f` shadows the last: CPython compiles these in time quadratic in their count
        # (0.2 MB: 3 s of CPU, 2 MB: 340 s).
        ("def f(a):a=a+1;return a\n" * 20_000, replace(LIMITS, compile_s=1), "compile time limit"),
        (dense_program(1), replace(LIMITS, compile_memory_mb=128), "more than its memory limit (128 MB)"),
    ],
    ids=["compiles-too-long", "compiles-too-big"],
)
def test_python_that_compiles_too_long_or_too_big_is_a_compile_error(
    judge: LocalJudge, program: str, limits: Limits, reason: str
) -> None:
    started = time.monotonic()
    report = judge.judge("python", program, SUITE, limits)
    assert report.sandbox_error is None, report.to_dict()
    assert [t.verdict for t in report.tests] == [Verdict.COMPILE_ERROR] * 2
    assert reason in (report.compile_error or ""), report.compile_error
    assert time.monotonic() - started < BOUND_S


@pytest.mark.parametrize("language", ["python", "cpp"])
def test_a_program_over_the_source_limit_is_a_compile_error_naming_it(judge: LocalJudge, language: str) -> None:
    report = judge.judge(language, oversized_program(), SUITE, LIMITS)
    assert report.sandbox_error is None
    assert [t.verdict for t in report.tests] == [Verdict.COMPILE_ERROR] * 2
    assert f"the program is {OVER_LIMIT_MB}.0 MB of source; the limit is {MAX_SOURCE_MB} MB" in report.compile_error


def test_a_program_larger_than_the_disk_is_a_compile_error(judge: LocalJudge) -> None:
    report = judge.judge("python", dense_program(5), SUITE, replace(LIMITS, disk_mb=4))
    assert report.sandbox_error is None, report.to_dict()
    assert [t.verdict for t in report.tests] == [Verdict.COMPILE_ERROR] * 2
    assert report.compile_error == f"{NO_DISK}: No space left on device"


def test_inputs_larger_than_the_disk_are_a_sandbox_error_in_one_line(judge: LocalJudge) -> None:
    """Not the program's fault: a sandbox error (the item is `error`), but one that says what to change."""
    suite = Suite("stdio", (StdioTest("1 2 " + " " * (5 << 20), "3"),))
    report = judge.judge("python", ADD + "print(a + b)\n", suite, replace(LIMITS, disk_mb=4))
    assert report.sandbox_error is not None and "Traceback" not in report.sandbox_error
    assert "the tests' inputs do not fit the sandbox's disk (limits.disk_mb)" in report.sandbox_error


# --- the sandbox service -----------------------------------------------------------------------


def _post(server: LocalServer, path: str, body: dict) -> httpx.Response:
    with server.client() as client:
        return client.post(path, json=body, timeout=120)


def test_run_code_runs_a_2_mb_python_program(sandbox: LocalServer) -> None:
    body = {"code": dense_program(2), "language": "python", "stdin": "1 2", "memory_limit_MB": 64}
    answer = _post(sandbox, "/run_code", body).json()
    assert answer["status"] == "Success", answer
    assert answer["compile_result"] is None and answer["run_result"]["stdout"] == "3\n"


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("/run_code", {"language": "python", "stdin": "1 2"}),
        ("/v1/judge", {"language": "python", "suite": WIRE_SUITE}),
    ],
)
def test_a_program_over_the_source_limit_is_a_413_with_the_error_contract(
    sandbox: LocalServer, path: str, body: dict
) -> None:
    response = _post(sandbox, path, body | {"code": oversized_program()})
    assert response.status_code == 413, response.text
    answer = response.json()
    assert answer["error"].startswith(f"code: the program is {OVER_LIMIT_MB}.0 MB of source; the limit is ")
    assert [(d["loc"], d["type"]) for d in answer["detail"]] == [(["body", "code"], "too_large")]


def test_a_100_mb_run_code_body_is_a_413_with_the_error_contract(sandbox: LocalServer) -> None:
    body = {"code": "print(1)\n" + "#" * (100 << 20), "language": "python"}
    response = _post(sandbox, "/run_code", body)
    assert response.status_code == 413, response.text[:500]
    assert set(response.json()) == {"error", "detail"} and "Traceback" not in response.text


def test_judge_says_a_program_does_not_fit_the_disk_instead_of_a_traceback(sandbox: LocalServer) -> None:
    body = {"language": "python", "code": dense_program(5), "suite": WIRE_SUITE, "limits": {"disk_mb": 4}}
    report = _post(sandbox, "/v1/judge", body).json()
    assert report["sandbox_error"] is None, report
    assert report["compile_error"] == f"{NO_DISK}: No space left on device"


# --- the reward service's code grader ----------------------------------------------------------


@pytest.mark.parametrize("where", ["in-process", "sandbox-service"])
def test_the_code_grader_gives_large_programs_a_verdict(request: pytest.FixtureRequest, where: str) -> None:
    server = request.getfixturevalue("server" if where == "in-process" else "remote_rewards")
    reference = {"tests": WIRE_SUITE["tests"], "memory_limit": LIMITS.memory_mb}
    items = [
        {"id": "2mb", "task": "code", "completion": completion(dense_program(2)), "reference": reference},
        {"id": "over", "task": "code", "completion": completion(oversized_program()), "reference": reference},
    ]
    with server.client() as client:
        response = client.post("/v1/rewards", json={"items": items}, timeout=180)
    assert response.status_code == 200, response.text[:500]
    fits, over = response.json()["results"]
    assert (fits["status"], fits["reward"]) == ("ok", 1.0), fits
    assert (over["status"], over["reward"]) == ("ok", 0.0), over
    details = over["details"]["accuracy"]
    assert details["verdicts"] == {"compile_error": 2}
    assert f"the limit is {MAX_SOURCE_MB} MB" in details["compile_error"]
