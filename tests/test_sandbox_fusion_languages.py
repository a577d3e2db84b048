"""Every language id of SandboxFusion's client (`sandbox-fusion` from PyPI, `models.Language`) through its own
`run_code` against our `/run_code`, and the languages a sandbox serves (SANDBOX_LANGUAGES, GET /v1/languages).

A language we run: a program reading `a b` prints their sum (`Success`), a program that does not compile fails
as SandboxFusion reports it (compiled languages: `compile_result` with a non-zero return code and no run;
interpreted ones: a failed run), and a program that spins is `TimeLimitExceeded`. An id we cannot run gets its
reason as a SandboxError, which the client raises with our message: never a 422, never a silent failure.
"""

from __future__ import annotations

import typing

import httpx
import pytest
from sandbox_fusion import RunCodeRequest, models, run_code, summary_run_code_result
from sandbox_fusion.models import SummaryMapping

from reward_api.local import LocalServer
from sandbox.languages import CANNOT_RUN, LANGUAGES, parse_languages
from tests.test_program_suites import FRAMEWORKS, SPINS
from tests.test_sandbox_languages import COMPILE_ERRORS, PROGRAMS

FUSION_IDS = typing.get_args(models.Language)
OURS = {"nodejs": "javascript", "R": "r"}  # SandboxFusion's ids that are aliases here
RUNS = [fusion_id for fusion_id in FUSION_IDS if fusion_id not in CANNOT_RUN]
SUMMARY = SummaryMapping(
    Success="ok", Failed="failed", CompileFailed="compile", CompileTimeout="compile_timeout", RunFailed="run",
    RunTimeout="timeout",
)  # fmt: skip
BROKEN = {language: code for language, code, _ in COMPILE_ERRORS}
# Interpreted languages' broken programs: each fails when run, as `php main.php` would.
BROKEN |= {
    "javascript": "console.log(;\n", "php": "<?php echo (;\n", "bash": "if then fi\n", "lua": "print(\n",
    "r": "print(\n", "perl": "print(;\n", "ruby": "puts(\n", "racket": "#lang racket/base\n(display\n",
    "kotlin_script": 'val x: Int = "s"\n', "typescript": "let x = ;\n", "d_ut": BROKEN["d"],
}  # fmt: skip
# SandboxFusion's test-file modes: (a file whose tests pass, one with a failing test, one with a test that spins).
TEST_FILES = {
    language: (
        solution + tests.replace("count 4", "count 5") if language == "react" else solution + tests.replace("4", "3"),
        solution + tests,
        solution + SPINS[language],
    )
    for language, (solution, tests) in FRAMEWORKS.items()
}
TEST_FILES["sql"] = (
    "CREATE TABLE t(x INTEGER);\nINSERT INTO t VALUES (1), (2);\nSELECT sum(x) FROM t;\n",
    "SELECT * FROM missing_table;\n",
    "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c;\n",
)


def fusion_run(sandbox: LocalServer, language: str, code: str, stdin: str = "", run_timeout: float = 5) -> str:
    request = RunCodeRequest(code=code, language=language, stdin=stdin, run_timeout=run_timeout, compile_timeout=60)
    result = run_code(request, endpoint=sandbox.url, max_attempts=1)
    return summary_run_code_result(result, SUMMARY) + ":" + (result.run_result.stdout if result.run_result else "")


def test_every_fusion_id_is_run_or_answered() -> None:
    assert set(FUSION_IDS) == set(RUNS) | set(CANNOT_RUN)
    assert {OURS.get(fusion_id, fusion_id.lower()) for fusion_id in RUNS} <= set(LANGUAGES)


@pytest.mark.parametrize("fusion_id", [fusion_id for fusion_id in RUNS if fusion_id.lower() not in TEST_FILES])
def test_fusion_client_runs_our_languages(sandbox: LocalServer, fusion_id: str) -> None:
    language = OURS.get(fusion_id, fusion_id.lower())
    assert fusion_run(sandbox, fusion_id, PROGRAMS[language], stdin="1 2\n").strip() == "ok:3"
    broken = fusion_run(sandbox, fusion_id, BROKEN[language])
    assert broken.startswith("compile:" if LANGUAGES[language].compile else "run:"), broken
    assert fusion_run(sandbox, fusion_id, PROGRAMS[language], stdin="-1 1\n", run_timeout=1) == "timeout:"


@pytest.mark.parametrize("fusion_id", sorted(TEST_FILES))
def test_fusion_client_runs_test_files(sandbox: LocalServer, fusion_id: str) -> None:
    passing, failing, spinning = TEST_FILES[fusion_id]
    assert fusion_run(sandbox, fusion_id, passing, run_timeout=20).startswith("ok:")
    assert fusion_run(sandbox, fusion_id, failing, run_timeout=20).startswith("run:")
    assert fusion_run(sandbox, fusion_id, spinning, run_timeout=3).startswith("timeout:")


@pytest.mark.parametrize("fusion_id", sorted(CANNOT_RUN))
def test_fusion_client_gets_the_reason_for_ids_we_do_not_run(sandbox: LocalServer, fusion_id: str) -> None:
    with pytest.raises(Exception, match=f"Sandbox responded with error: language '{fusion_id}'") as raised:
        run_code(RunCodeRequest(code="x", language=fusion_id), endpoint=sandbox.url, max_attempts=1)
    assert CANNOT_RUN[fusion_id] in str(raised.value)


def test_languages_endpoint_reports_versions_and_limits(sandbox: LocalServer) -> None:
    answer = httpx.get(f"{sandbox.url}/v1/languages", timeout=120).json()
    entries = {entry["id"]: entry for entry in answer["languages"]}
    assert set(entries) == set(LANGUAGES) | set(CANNOT_RUN)
    assert all(entries[name]["available"] for name in LANGUAGES), [e for e in entries.values() if not e["available"]]
    assert entries["php"]["version"].startswith("PHP 8.") and entries["kotlin_script"]["limits"]["start_s"] > 0
    assert entries["python"]["modes"] == ["stdio", "call", "assert", "program"] and entries["ocaml"]["compiled"]
    assert entries["junit"]["per_test_report"] == "junit" and entries["go"]["tests_run_as"] == "go_test"
    assert entries["julia"]["reason"].startswith("cannot run here")


def code_item(language: str, code: str) -> dict:
    return {"task": "code", "completion": f"```{language}\n{code}```", "reference": {"inputs": [""], "outputs": ["7"]}}


ITEMS = [
    code_item("php", "<?php echo 7;\n"),
    code_item("ruby", "puts 7\n"),
    code_item("python2", "print 7\n"),
    code_item("python", "print(7)\n"),
]


def test_a_language_not_enabled_is_refused_with_what_to_do(tmp_path_factory: pytest.TempPathFactory) -> None:
    """A sandbox serving python and php, graded through directly, by RemoteJudge and in-process alike."""
    env = {"SANDBOX_WORKERS": "1", "SANDBOX_LANGUAGES": "python,php"}
    with LocalServer.sandbox(tmp_path_factory.mktemp("few"), **env) as few, few.client() as client:
        answer = client.post("/run_code", json={"code": "puts 1", "language": "ruby"}).json()
        suite = {"kind": "stdio", "tests": [{"input": "", "output": "1"}]}
        judged = client.post("/v1/judge", json={"code": "puts 1", "language": "ruby", "suite": suite})
        php = client.post("/run_code", json={"code": "<?php echo 7;", "language": "php"}).json()
        ready = client.get("/readyz").json()
        remote = {"REWARD_API_SANDBOX_URLS": few.url, "REWARD_API_WORKERS": "1"}
        with LocalServer(tmp_path_factory.mktemp("remote"), **remote) as service, service.client() as rewards:
            by_remote = rewards.post("/v1/rewards", json={"items": ITEMS}).json()["results"]
            remote_languages = rewards.get("/v1/languages").json()
    assert answer["status"] == "SandboxError" and "'ruby' is not enabled" in answer["message"]
    assert "add it to SANDBOX_LANGUAGES" in answer["message"]
    assert judged.status_code == 422 and judged.json()["detail"][0]["loc"][-1] == "language", judged.text
    assert php["status"] == "Success" and php["run_result"]["stdout"] == "7"
    assert ready["languages"] == ["python", "php"] and ready["languages_unavailable"] == {}
    assert remote_languages["sandbox"] == few.url
    assert [entry["enabled"] for entry in remote_languages["languages"][:2]] == [True, False]  # python, c
    local_env = {"SANDBOX_LANGUAGES": "python,php", "REWARD_API_WORKERS": "1"}
    with LocalServer(tmp_path_factory.mktemp("local"), **local_env) as service, service.client() as rewards:
        in_process = rewards.post("/v1/rewards", json={"items": ITEMS}).json()["results"]
    # The answer's fence chose a language the sandbox does not run: a wrong answer saying why, never a status a trainer
    # masks (under `dapo` a wrong answer would escape its -1 by its fence).
    for results in (by_remote, in_process):
        assert [(r["status"], r["reward"]) for r in results] == [("ok", 1.0), ("ok", 0.0), ("ok", 0.0), ("ok", 1.0)]
        reasons = [r["details"]["accuracy"]["reason"] for r in results[1:3]]
        assert "'ruby' is not enabled" in reasons[0] and "add it to SANDBOX_LANGUAGES" in reasons[0], reasons
        assert "'python2' cannot run here: Python 2 reached its end of life" in reasons[1], reasons


def test_languages_setting_parses_ids_aliases_and_sets() -> None:
    default = ["python", "c", "cpp", "java", "javascript", "go", "rust"]
    assert [lang.name for lang in parse_languages("default")] == default
    assert [lang.name for lang in parse_languages("py, nodejs,R,default")][:3] == ["python", "javascript", "r"]
    assert len(parse_languages("all")) == len(LANGUAGES)
    with pytest.raises(ValueError, match="SANDBOX_LANGUAGES: unknown language 'cobol'"):
        parse_languages("python,cobol")
    with pytest.raises(ValueError, match="'julia' cannot run here"):
        parse_languages("julia")
