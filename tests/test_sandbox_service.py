"""The real sandbox service over HTTP: /v1/judge, SandboxFusion's /run_code, health, metrics, RemoteJudge."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx
import pytest

from reward_api.local import LocalServer, free_port
from sandbox import fusion, wire
from sandbox.cgroups import find_cgroups, host_version
from sandbox.client import RemoteJudge, SandboxUnavailable
from sandbox.executor import Executor, Limits
from sandbox.executor import TestInput as Input
from sandbox.judge import CallTest, Comparison, JudgeReport, StdioTest, Verdict
from sandbox.judge import TestSuite as Suite  # not `Test*`: pytest would try to collect it
from sandbox.judge import TestVerdict as Outcome
from tests.conftest import SANDBOX_TOKEN
from tests.peers import dropping_peer
from tests.scrape import metric

TOKEN = SANDBOX_TOKEN
SUM = "a, b = map(int, input().split())\nprint(a + b)\n"
SUM_SUITE = {"kind": "stdio", "tests": [{"input": "1 2\n", "output": "3"}, {"input": "5 5\n", "output": "10\n"}]}


# Tests of one submission one at a time: with several at once the runner may lose a test's
# output (test_parallel_tests_keep_their_output).


def judge(server: LocalServer, body: dict, status: int = 200) -> dict:
    with server.client() as client:
        response = client.post("/v1/judge", json=body)
    assert response.status_code == status, response.text
    return response.json()


def run_code(server: LocalServer, **body) -> dict:
    with server.client() as client:
        response = client.post("/run_code", json=body)
    assert response.status_code == 200, response.text
    answer = response.json()
    assert set(answer) == {"status", "message", "compile_result", "run_result", "executor_pod_name", "files"}
    for result in (answer["compile_result"], answer["run_result"]):
        if result is not None:
            assert set(result) == {"status", "execution_time", "return_code", "stdout", "stderr"}
    return answer


def verdicts(report: dict) -> list[str]:
    return [t["verdict"] for t in report["tests"]]


# --- /v1/judge ---------------------------------------------------------------------------


def test_judge_stdio_suite(sandbox: LocalServer) -> None:
    suite = {
        "kind": "stdio",
        "tests": [*SUM_SUITE["tests"], {"input": "2 2\n", "output": "5"}],
        "comparison": {"float_tolerance": 0.01},
    }
    report = judge(sandbox, {"language": "python", "code": SUM, "suite": suite})
    assert verdicts(report) == ["accepted", "accepted", "wrong_answer"]
    assert report["passed"] == 2 and report["total"] == 3
    assert "expected '5', got '4" in report["tests"][2]["detail"]


def test_judge_call_suite_with_solution_class(sandbox: LocalServer) -> None:
    code = "class Solution:\n    def twoSum(self, nums, target):\n        seen = {}\n"
    code += "        for i, n in enumerate(nums):\n            if target - n in seen:\n"
    code += "                return [seen[target - n], i]\n            seen[n] = i\n"
    suite = {
        "kind": "call",
        "fn_name": "twoSum",
        "tests": [{"args": [[2, 7, 11, 15], 9], "expected": [0, 1]}, {"args": [[3, 3], 6], "expected": [1, 0]}],
    }
    report = judge(sandbox, {"language": "python", "code": code, "suite": suite})
    assert verdicts(report) == ["accepted", "wrong_answer"]


def test_judge_assert_suite_humaneval_style(sandbox: LocalServer) -> None:
    code = "def add(a, b):\n    return a + b\n"
    check = "def check(candidate):\n    assert candidate(1, 2) == 3\n    assert candidate(-1, 1) == 0\ncheck(add)\n"
    suite = {"kind": "assert", "tests": [{"code": check}, {"code": "assert add(2, 2) == 5"}, {"code": "add(1)"}]}
    report = judge(sandbox, {"language": "python", "code": code, "suite": suite})
    assert verdicts(report) == ["accepted", "wrong_answer", "runtime_error"]
    assert "TypeError" in report["tests"][2]["detail"]


def test_judge_compile_error_time_limit_and_stop_on_first_failure(sandbox: LocalServer) -> None:
    broken = judge(sandbox, {"language": "cpp", "code": "int main( {", "suite": SUM_SUITE})
    assert verdicts(broken) == ["compile_error", "compile_error"] and "main.cpp" in broken["compile_error"]

    spin = {"language": "python", "code": "while True: pass", "suite": SUM_SUITE, "limits": {"time_s": 0.5}}
    # Tests run in parallel: whichever times out first stops the run, the other may be skipped.
    spun = verdicts(judge(sandbox, spin | {"stop_on_first_failure": True}))
    assert "time_limit" in spun and set(spun) <= {"time_limit", "skipped"}

    wrong = {"language": "python", "code": "print(0)", "suite": SUM_SUITE, "limits": {"time_s": 1}}
    stopped = verdicts(judge(sandbox, wrong | {"stop_on_first_failure": True}))
    assert stopped.count("wrong_answer") >= 1 and set(stopped) <= {"wrong_answer", "skipped"}


def _request(suite: dict | None = None, **fields) -> dict:
    return {"language": "python", "code": "x", "suite": suite or SUM_SUITE} | fields


def test_parallel_tests_keep_their_output() -> None:
    executor = Executor(parallel=4)
    for _ in range(10):
        run = executor.run("python", SUM, [Input(f"{i} 1\n") for i in range(40)], Limits())
        assert [t.stdout for t in run.tests] == [f"{i + 1}\n" for i in range(40)]


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"language": "python", "suite": SUM_SUITE}, "code: Field required"),
        (_request(language="cobol"), "language: Value error, unknown language 'cobol'"),
        (_request({"kind": "stdio", "tests": [{"input": ""}]}), "suite.stdio.tests.0.output: Field required"),
        (_request({"kind": "call", "tests": [{"args": [], "expected": 1}]}), "suite.call.fn_name: Field required"),
        (_request({"kind": "stdio", "tests": []}), "suite.stdio.tests: List should have at least 1"),
        (_request({"kind": "fuzz", "tests": []}), "suite: Input tag 'fuzz'"),
        (_request(limits={"time_s": -1}), "limits.time_s: Input should be greater than 0"),
        (_request(limits={"time": 1}), "limits.time: Extra inputs"),
        (_request(limits={"memory_mb": 4000}), "limits.memory_mb: Input should be less than or equal to 2048"),
        (_request({"kind": "assert", "tests": [{"code": "1"}]}, language="cpp"), "suite: Value error, assert suites"),
    ],
)
def test_malformed_judge_requests_get_422_naming_the_field(sandbox: LocalServer, body: dict, field: str) -> None:
    error = judge(sandbox, body, status=422)["error"]
    assert error.startswith(field), error


def test_non_json_body_gets_422(sandbox: LocalServer) -> None:
    with sandbox.client() as client:
        response = client.post("/v1/judge", content=b"{not json", headers={"content-type": "application/json"})
    assert response.status_code == 422 and "error" in response.json()


# --- SandboxFusion /run_code --------------------------------------------------------------

DOUBLE = {
    "python": "print(int(input()) * 2)",
    "nodejs": 'console.log(Number(require("fs").readFileSync(0, "utf8")) * 2)',
    "cpp": "#include <iostream>\nint main() { long n; std::cin >> n; std::cout << n * 2 << std::endl; }",
    "c": '#include <stdio.h>\nint main(void) { long n; scanf("%ld", &n); printf("%ld\\n", n * 2); }',
    "java": "import java.util.*;\npublic class Main { public static void main(String[] a) {"
    " System.out.println(new Scanner(System.in).nextLong() * 2); } }",
    "go": 'package main\nimport "fmt"\nfunc main() { var n int; fmt.Scan(&n); fmt.Println(n * 2) }',
    "rust": "use std::io::*;\nfn main() { let mut s = String::new(); stdin().read_line(&mut s).unwrap();"
    ' let n: i64 = s.trim().parse().unwrap(); println!("{}", n * 2); }',
}
COMPILED = {"cpp", "c", "java", "go", "rust"}


@pytest.mark.parametrize("language", sorted(DOUBLE))
def test_run_code_success_passes_stdin(sandbox: LocalServer, language: str) -> None:
    answer = run_code(sandbox, code=DOUBLE[language], language=language, stdin="21\n")
    assert answer["status"] == "Success" and answer["message"] == ""
    assert answer["executor_pod_name"] is None and answer["files"] == {}
    run = answer["run_result"]
    assert run["status"] == "Finished" and run["return_code"] == 0 and run["stdout"] == "42\n"
    assert isinstance(run["execution_time"], float)
    if language in COMPILED:
        assert answer["compile_result"]["status"] == "Finished" and answer["compile_result"]["return_code"] == 0
    else:
        assert answer["compile_result"] is None


@pytest.mark.parametrize(
    ("language", "code"),
    [
        ("cpp", "int main() { return x; }"),
        ("java", "public class Main { void f() { int x = ; } }"),
        ("rust", "fn main() {"),
    ],
)
def test_run_code_compile_error_is_failed_with_compile_result(sandbox: LocalServer, language: str, code: str) -> None:
    answer = run_code(sandbox, code=code, language=language)
    assert answer["status"] == "Failed" and answer["message"] == ""
    assert answer["compile_result"]["status"] == "Finished" and answer["compile_result"]["return_code"] != 0
    assert answer["compile_result"]["stderr"]
    assert answer["run_result"] is None


def test_run_code_runtime_errors(sandbox: LocalServer) -> None:
    python = run_code(sandbox, code="raise ValueError('boom')", language="python")
    assert python["status"] == "Failed" and python["compile_result"] is None
    assert python["run_result"]["status"] == "Finished" and python["run_result"]["return_code"] == 1
    assert "ValueError: boom" in python["run_result"]["stderr"]

    aborted = run_code(sandbox, code="#include <cstdlib>\nint main() { std::abort(); }", language="cpp")
    assert aborted["status"] == "Failed" and aborted["run_result"]["return_code"] == -6  # -SIGABRT, like asyncio

    syntax = run_code(sandbox, code="def f(:\n    pass", language="python")  # a failed run, as `python main.py`
    assert syntax["compile_result"] is None and syntax["run_result"]["return_code"] == 1
    assert "SyntaxError" in syntax["run_result"]["stderr"]

    exits = run_code(sandbox, code="import sys; print('out'); sys.exit(3)", language="python", stdin=None)
    assert exits["status"] == "Failed" and exits["run_result"]["return_code"] == 3
    assert exits["run_result"]["stdout"] == "out\n"


@pytest.mark.parametrize("code", ["while True: pass", "import time\nprint('started', flush=True)\ntime.sleep(60)"])
def test_run_code_timeout_is_time_limit_exceeded(sandbox: LocalServer, code: str) -> None:
    started = time.monotonic()
    answer = run_code(sandbox, code=code, language="python", run_timeout=1)
    assert time.monotonic() - started < 5
    assert answer["status"] == "Failed" and answer["message"] == ""
    run = answer["run_result"]
    assert run["status"] == "TimeLimitExceeded" and run["return_code"] is None
    assert 0.9 <= run["execution_time"] < 3


def test_run_code_accepts_every_sandboxfusion_field(sandbox: LocalServer) -> None:
    body = {
        "code": "print(input())",
        "language": "python",
        "stdin": "hello",
        "compile_timeout": 10,
        "run_timeout": 10,
        "memory_limit_MB": 1024,
        "files": {},
        "fetch_files": [],
    }  # exactly what verl's call_sandbox_api sends
    answer = run_code(sandbox, **body)
    assert answer["status"] == "Success" and answer["run_result"]["stdout"] == "hello\n"


def test_run_code_languages_sandboxfusion_knows_but_we_do_not_run(sandbox: LocalServer) -> None:
    julia = run_code(sandbox, code="println(1)", language="julia")
    assert julia["status"] == "SandboxError" and "'julia' cannot run here: Julia has no package" in julia["message"]
    assert julia["run_result"]["status"] == "Error"
    with sandbox.client() as client:
        unknown = client.post("/run_code", json={"code": "x", "language": "cobol"})
        missing = client.post("/run_code", json={"language": "python"})
    assert unknown.status_code == 422 and unknown.json()["error"].startswith("language")
    assert missing.status_code == 422 and missing.json()["error"].startswith("code")
    with sandbox.client() as client:
        greedy = client.post("/run_code", json={"code": "x", "language": "python", "memory_limit_MB": 10**9})
    assert greedy.status_code == 422 and greedy.json()["error"].startswith("memory_limit_MB"), greedy.text


VERL_WRAPPER = """
from collections import *
from math import *
from sys import *
from json import *
from typing import *
import sys, json
{generation}
def _execute_user_function():
    _args = [json.loads(line) for line in sys.stdin.read().split('\\n')]
    return globals()['add'](*_args)
if __name__ == '__main__':
    print(str(_execute_user_function()))
"""


def test_run_code_as_verl_calls_it(sandbox: LocalServer) -> None:
    """verl's fn_name wrapper shape (star imports, __main__ guard, JSON lines on stdin), read as verl reads it."""
    code = VERL_WRAPPER.format(generation="def add(a: List[int], b: int) -> int:\n    return sum(a) + b\n")
    body = {"code": code, "language": "python", "stdin": "[1, 2]\n3", "compile_timeout": 10, "run_timeout": 10}
    answer = run_code(sandbox, **body, memory_limit_MB=1024, files={}, fetch_files=[])
    assert answer["status"] == "Success" and answer["run_result"]["status"] == "Finished"
    assert answer["run_result"]["stdout"].rstrip("\n") == "6"


def test_run_code_memory_limit(sandbox: LocalServer) -> None:
    """A program past `memory_limit_MB` is killed by its memory cgroup (SIGKILL: -9, as asyncio reports it), which
    its stderr says; SandboxFusion bounds address space instead, where Python raises MemoryError: `Failed` either
    way. Below the limit, a 2 GiB reservation that is not touched costs nothing."""
    answer = run_code(sandbox, code="x = bytearray(512 * 1024 * 1024)", language="python", memory_limit_MB=128)
    assert answer["status"] == "Failed" and answer["run_result"]["return_code"] == -9
    assert "Killed: over the memory limit (128 MB)" in answer["run_result"]["stderr"]
    reserve = "import mmap\narena = mmap.mmap(-1, 2 << 30)\narena[0] = 7\nprint(arena[0])"
    answer = run_code(sandbox, code=reserve, language="python", memory_limit_MB=128)
    assert answer["status"] == "Success" and answer["run_result"]["stdout"] == "7\n"


def _result(status: str, return_code: int | None, stderr: str = "") -> dict:
    return {"status": status, "return_code": return_code, "stderr": stderr}


@pytest.mark.parametrize(
    ("compile_result", "run_result", "status"),
    [
        (None, _result("Finished", 0), "Success"),
        (None, _result("Finished", -9), "Failed"),
        (None, _result("TimeLimitExceeded", None), "Failed"),
        (_result("Finished", 1, "e"), None, "Failed"),
        (_result("TimeLimitExceeded", None), None, "Failed"),
        (_result("Finished", 0), _result("Error", None, "x"), "SandboxError"),
    ],
)
def test_sandboxfusion_status_rules(compile_result: dict | None, run_result: dict | None, status: str) -> None:
    answer = fusion.response(compile_result, run_result)
    assert answer["status"] == status
    assert answer["message"] == ("x" if status == "SandboxError" else "")


def test_wire_round_trip() -> None:
    suite = Suite(kind="call", fn_name="f", tests=(CallTest([1, [2]], {"a": 1.5}),), comparison=Comparison(0.1, False))
    assert wire.suite_from_dict(wire.suite_to_dict(suite)) == suite
    limits = Limits(time_s=0.5, wall_s=3, memory_mb=64)
    assert wire.limits_from_dict(wire.limits_to_dict(limits)) == limits
    report = JudgeReport(tests=[Outcome(Verdict.TIME_LIMIT, 1.0, "slow")], details={"run_time_limit": True})
    assert wire.report_from_dict(report.to_dict()) == report
    with pytest.raises(wire.WireError, match=r"^report.tests.0.verdict: Input should be"):
        wire.report_from_dict({"passed": 0, "total": 1, "tests": [{"verdict": "great"}]})


# --- health, metrics, auth -----------------------------------------------------------------


def _metric(text: str, name: str) -> float:
    for line in text.splitlines():
        if line.startswith(name + " ") or line.startswith(name + "{"):
            return float(line.split()[-1])
    return 0.0


def test_healthz_answers_while_every_worker_spins(sandbox: LocalServer) -> None:
    spin = {"code": "while True: pass", "language": "python", "run_timeout": 3}
    with ThreadPoolExecutor(3) as pool, sandbox.client() as client:
        runs = [pool.submit(run_code, sandbox, **spin) for _ in range(3)]  # 2 workers: one run waits
        time.sleep(0.5)
        for _ in range(10):
            started = time.monotonic()
            assert client.get("/healthz").json() == {"status": "ok"}
            assert time.monotonic() - started < 0.5
        metrics = client.get("/metrics").text
        assert _metric(metrics, "sandbox_runs_in_flight") == 2
        assert _metric(metrics, "sandbox_runs_waiting") == 1
        assert all(run.result()["run_result"]["status"] == "TimeLimitExceeded" for run in runs)


def test_readyz_and_metrics(sandbox: LocalServer) -> None:
    judge(sandbox, {"language": "python", "code": SUM, "suite": SUM_SUITE})
    with sandbox.client() as client:
        ready = client.get("/readyz")
        text = client.get("/metrics").text
    assert ready.status_code == 200 and ready.json()["ready"] is True
    assert ready.json()["isolation"] == f"bwrap+cgroup{host_version()}"
    assert _metric(text, 'sandbox_runs_total{endpoint="/v1/judge",language="python",outcome="passed"}') >= 1
    assert _metric(text, 'sandbox_tests_total{language="python",verdict="accepted"}') >= 2
    assert _metric(text, 'sandbox_run_seconds_count{endpoint="/v1/judge",language="python"}') >= 1
    assert _metric(text, 'sandbox_requests_total{code="200",endpoint="/v1/judge"}') >= 1
    assert _metric(text, "sandbox_workers") == 2
    assert "sandbox_errors_total" in text


def test_bearer_token(guarded_sandbox: LocalServer) -> None:
    body = {"language": "python", "code": SUM, "suite": SUM_SUITE}
    with guarded_sandbox.client() as client:
        assert client.post("/v1/judge", json=body).status_code == 401
        assert client.post("/run_code", json={"code": "1", "language": "python"}).status_code == 401
        assert client.post("/v1/judge", json=body, headers={"Authorization": f"Bearer {TOKEN}"}).status_code == 200
        assert client.get("/healthz").status_code == 200


# --- RemoteJudge -------------------------------------------------------------------------

STDIO = Suite(kind="stdio", tests=(StdioTest("1 2\n", "3"), StdioTest("2 2\n", "5")))


def _judged(server: LocalServer) -> float:
    with server.client() as client:
        text = client.get("/metrics").text
    return _metric(text, 'sandbox_runs_total{endpoint="/v1/judge",language="python",outcome="failed"}')


def test_remote_judge_round_robin(sandbox: LocalServer, guarded_sandbox: LocalServer) -> None:
    before = [_judged(sandbox), _judged(guarded_sandbox)]
    with RemoteJudge([sandbox.url, guarded_sandbox.url], token=TOKEN) as remote:
        reports = [remote.judge("python", SUM, STDIO, Limits(time_s=1)) for _ in range(4)]
    assert all([t.verdict for t in r.tests] == [Verdict.ACCEPTED, Verdict.WRONG_ANSWER] for r in reports)
    assert [_judged(sandbox) - before[0], _judged(guarded_sandbox) - before[1]] == [2, 2]


def test_remote_judge_call_suite_matches_local_verdicts(sandbox: LocalServer) -> None:
    suite = Suite(kind="call", fn_name="f", tests=(CallTest([2], 4), CallTest([3], 10)))
    with RemoteJudge(sandbox.url) as remote:
        report = remote.judge("python", "def f(x):\n    return x * x\n", suite, Limits(), stop_on_first_failure=False)
    assert [t.verdict for t in report.tests] == [Verdict.ACCEPTED, Verdict.WRONG_ANSWER]
    assert report.passed == 1 and report.pass_fraction == 0.5


class _Failing(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        self.send_response(503)
        self.end_headers()
        self.wfile.write(b"overloaded")

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture()
def failing_url() -> Iterator[str]:
    """A server that answers every POST with 503."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Failing)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_remote_judge_fails_over_dead_and_5xx_urls(sandbox: LocalServer, failing_url: str) -> None:
    dead = f"http://127.0.0.1:{free_port()}"
    with RemoteJudge([dead, failing_url, sandbox.url]) as remote:
        for _ in range(3):
            assert remote.judge("python", SUM, STDIO, Limits(time_s=1)).passed == 1
    with RemoteJudge([dead, failing_url]) as remote, pytest.raises(SandboxUnavailable) as raised:
        remote.judge("python", SUM, STDIO, Limits(time_s=1))
    assert dead in str(raised.value) and "HTTP 503" in str(raised.value)


def test_one_sandbox_url_is_tried_twice() -> None:
    """Behind one Service name (Kubernetes, a load balancer) a second try may reach a live sandbox."""
    with dropping_peer() as (url, accepted), RemoteJudge(url) as remote, pytest.raises(SandboxUnavailable):
        remote.judge("python", SUM, STDIO, Limits(time_s=1))
    assert accepted[0] == 2


def test_remote_judge_rejected_request_is_value_error(sandbox: LocalServer) -> None:
    with RemoteJudge(sandbox.url) as remote, pytest.raises(ValueError, match=r"language: .*unknown language 'cobol'"):
        remote.judge("cobol", "x", STDIO, Limits())


# --- CLI: isolation is never downgraded silently ---------------------------------------------


def test_serve_refuses_to_start_without_isolation_tools() -> None:
    env = {"PATH": "/nonexistent", "SANDBOX_PORT": str(free_port())}
    done = subprocess.run(
        [sys.executable, "-m", "sandbox.cli", "serve"], env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 2
    assert "refusing to start: `bwrap` not found: install it (apt-get install bubblewrap)" in done.stderr
    assert "--isolation none" in done.stderr


def test_insecure_mode_is_explicit_and_logged(tmp_path) -> None:
    with LocalServer.sandbox(tmp_path, SANDBOX_ISOLATION="none", SANDBOX_WORKERS="1") as server:
        answer = run_code(server, code="print(6 * 7)", language="python")
        assert httpx.get(f"{server.url}/readyz").json()["isolation"] == "none"
    assert answer["run_result"]["stdout"] == "42\n"
    assert "INSECURE" in server.log()


# --- runs and their clients --------------------------------------------------------------

SLEEP = {
    "language": "python",
    "code": "import time\ntime.sleep(4)\nprint(3)\n",
    "suite": {"kind": "stdio", "tests": [{"input": "", "output": "3"}]},
    "limits": {"time_s": 10, "wall_s": 30, "total_s": 60},
}


def _new_runs(before: set) -> set:
    return set(find_cgroups().runs()) - before


def test_a_run_whose_client_went_away_is_killed(sandbox: LocalServer) -> None:
    """The client gives up after 1 s; its 4 s program is killed at once, not left to its limits."""
    before = set(find_cgroups().runs())
    cancelled = metric(sandbox, "sandbox_runs_cancelled_total", endpoint="/v1/judge")
    with pytest.raises(httpx.ReadTimeout), httpx.Client(base_url=sandbox.url, timeout=1.0) as client:
        client.post("/v1/judge", json=SLEEP)
    gone_by = time.monotonic() + 2.5  # well before the program would have ended by itself
    while _new_runs(before) and time.monotonic() < gone_by:
        time.sleep(0.05)
    assert _new_runs(before) == set(), "the run went on after its client left"
    assert metric(sandbox, "sandbox_runs_cancelled_total", endpoint="/v1/judge") == cancelled + 1


@pytest.mark.parametrize(("drain_s", "finished"), [(20, True), (0.5, False)])
def test_runs_in_progress_get_drain_s_to_finish_on_sigterm(tmp_path, drain_s: float, finished: bool) -> None:
    """SIGTERM (a rollout) lets a 4 s run finish within SANDBOX_DRAIN_S; a shorter drain cuts it (500)."""
    with LocalServer.sandbox(tmp_path, SANDBOX_WORKERS="1", SANDBOX_DRAIN_S=str(drain_s)) as server:
        before = set(find_cgroups().runs())
        with ThreadPoolExecutor(1) as pool:
            answer = pool.submit(lambda: httpx.post(f"{server.url}/v1/judge", json=SLEEP, timeout=30))
            while not _new_runs(before):
                time.sleep(0.05)
            server.process.terminate()
            response = answer.result()
        if finished:
            assert response.status_code == 200 and verdicts(response.json()) == ["accepted"], response.text
        else:
            assert response.status_code == 500, response.text
        server.process.wait(timeout=30)  # it exits once drained
        assert _new_runs(before) == set()
