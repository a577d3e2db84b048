"""The sandbox under SandboxFusion's own clients, from their PyPI releases.

verl 0.9.1 (`verl/utils/reward_score/sandbox_fusion`: compute_score -> check_correctness ->
call_sandbox_api) reads for compile_timeout + run_timeout + 10 s and retries only a 504; the
`sandbox-fusion` 0.3.7 package (`sandbox_fusion.run_code`) posts to `<endpoint>/run_code`. Neither
sends headers, so the token travels in the URL.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import json
import multiprocessing
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from pathlib import Path
from types import ModuleType

import httpx
import pytest
import sandbox_fusion

from reward_api.local import LocalServer
from sandbox.service import earliest_start_s
from tests.test_sandbox_service import DOUBLE, TOKEN, _metric

SLOW_SQUARE = "```python\nimport time\nn = int(input())\ntime.sleep(n)\nprint(n * n)\n```"
SLOW_TESTS = {"inputs": ["5", "6", "7"], "outputs": ["25", "36", "49"]}
SAMPLES = 4  # x 3 tests of 5-7 s: 36 s of work for 2 workers, past verl's 30 s read timeout
WORKERS = 2


def _verl_sandbox_fusion() -> ModuleType:
    """verl's `verl.utils.reward_score.sandbox_fusion` package, from the installed release's files.

    Loaded on its own: `verl/__init__.py` imports torch, tensordict and Ray, which this client does not use.
    """
    assert importlib.metadata.version("verl") == "0.9.1"
    verl_root = Path(importlib.util.find_spec("verl").submodule_search_locations[0])
    package = verl_root / "utils" / "reward_score" / "sandbox_fusion"
    spec = importlib.util.spec_from_file_location(
        "verl_sandbox_fusion", package / "__init__.py", submodule_search_locations=[str(package)]
    )
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


verl_sandbox_fusion = _verl_sandbox_fusion()
verl_client = sys.modules["verl_sandbox_fusion.utils"]


@pytest.fixture(scope="module")
def sandbox(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalServer]:
    with LocalServer.sandbox(tmp_path_factory.mktemp("sandbox"), SANDBOX_WORKERS=str(WORKERS)) as server:
        yield server


@pytest.fixture(scope="module")
def guarded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalServer]:
    env = {"SANDBOX_WORKERS": "1", "SANDBOX_AUTH_TOKEN": TOKEN}
    with LocalServer.sandbox(tmp_path_factory.mktemp("guarded"), **env) as server:
        yield server


def _metrics(server: LocalServer) -> str:
    return httpx.get(f"{server.url}/metrics").text


def test_verl_client_at_max_concurrent_64_gets_every_slow_correct_program_scored(sandbox: LocalServer) -> None:
    """verl's reward loop scores samples on threads; each sample's tests go out at once under max_concurrent=64."""
    with multiprocessing.Manager() as manager:
        compute_score = partial(  # as verl.trainer.ppo.reward.load_reward_manager and default_compute_score call it
            verl_sandbox_fusion.compute_score,
            f"{sandbox.url}/run_code",
            manager.Semaphore(64),
            1024,
            continuous=True,
        )
        with ThreadPoolExecutor(SAMPLES) as samples:
            scored = list(samples.map(lambda _: compute_score(SLOW_SQUARE, json.dumps(SLOW_TESTS)), range(SAMPLES)))

    for score, cases in scored:
        assert [(case["status"], case["api_request_error"]) for case in cases] == [("success", None)] * 3
        assert score == 1.0
    # Some of the 12 could not start in time for verl's deadline: answered 504, retried by verl, then run.
    assert _metric(_metrics(sandbox), 'sandbox_rejected_total{endpoint="/run_code",reason="expired"}') >= 1


@pytest.mark.parametrize("language", ["python", "cpp"])
def test_sandbox_fusion_client_run_code(sandbox: LocalServer, language: str) -> None:
    request = sandbox_fusion.RunCodeRequest(code=DOUBLE[language], language=language, stdin="21\n")
    response = sandbox_fusion.run_code(request, endpoint=sandbox.url, max_attempts=1)
    assert response.status == sandbox_fusion.RunStatus.Success
    assert response.run_result.status == sandbox_fusion.CommandRunStatus.Finished
    assert response.run_result.stdout == "42\n"
    assert (response.compile_result is None) == (language == "python")


def test_a_run_that_cannot_start_in_time_gets_504_before_its_client_gives_up(guarded: LocalServer) -> None:
    """One worker, busy for 10 s: a run whose client reads for 10.5 s may wait 8 s (its limits count 2.5 s)."""
    busy = {"code": "import time\ntime.sleep(10)", "language": "python", "run_timeout": 12}
    late = {"code": "print(1)", "language": "python", "compile_timeout": 0, "run_timeout": 0.5}
    client_deadline_s = late["compile_timeout"] + late["run_timeout"] + verl_client.API_TIMEOUT
    url = f"{guarded.url}/run_code?token={TOKEN}"
    with ThreadPoolExecutor(1) as pool:
        running = pool.submit(httpx.post, url, json=busy, timeout=30)
        time.sleep(0.5)
        started = time.monotonic()
        rejected = httpx.post(url, json=late, timeout=client_deadline_s)
        waited_s = time.monotonic() - started
        assert running.result().json()["status"] == "Success"
    assert rejected.status_code == 504 and int(rejected.headers["retry-after"]) >= 1
    assert "could start this run within 8.0s" in rejected.json()["error"]
    assert waited_s < client_deadline_s
    assert _metric(_metrics(guarded), 'sandbox_rejected_total{endpoint="/run_code",reason="expired"}') == 1
    assert '"reason": "expired"' in guarded.log()


@pytest.mark.parametrize(
    ("path", "status"),
    [
        (f"/run_code?token={TOKEN}", 200),
        (f"/token/{TOKEN}/run_code", 200),
        ("/run_code", 401),
        (f"/run_code?token=not-{TOKEN}", 401),
        (f"/token/not-{TOKEN}/run_code", 401),
    ],
)
def test_verl_client_with_the_token_in_its_url(guarded: LocalServer, path: str, status: int) -> None:
    answer, error = verl_client.call_sandbox_api(guarded.url + path, "print(6 * 7)", None, 10, 10, 1024, "python")
    if status == 200:
        assert error is None and answer["run_result"]["stdout"] == "42\n"
    else:
        assert answer is None and f"{status} Client Error" in error


def test_sandbox_fusion_client_with_the_token_in_its_endpoint_and_no_token_in_the_log(guarded: LocalServer) -> None:
    request = sandbox_fusion.RunCodeRequest(code="print(6 * 7)", language="python")
    response = sandbox_fusion.run_code(request, endpoint=f"{guarded.url}/token/{TOKEN}", max_attempts=1)
    assert response.run_result.stdout == "42\n"
    verl_client.call_sandbox_api(f"{guarded.url}/run_code?token={TOKEN}", "print(1)", None, 10, 10, 1024, "python")
    headers = {"Authorization": f"Bearer {TOKEN}"}  # the header keeps working
    assert httpx.post(f"{guarded.url}/run_code", json={"code": "1", "language": "python"}, headers=headers).is_success
    log = guarded.log()
    assert log.count('"path": "/run_code", "status": 200') >= 3  # the requests were logged, the token was not
    assert TOKEN not in log


@pytest.mark.parametrize(
    ("ahead", "workers", "fastest_run_s", "earliest_s"),
    [
        (0, 2, 0.1, 0.0),  # next in line: a running run may end now
        (1, 2, 0.1, 0.0),  # the second in line: two runs may end now
        (2, 2, 0.1, 0.1),  # the third waits for one of the first two waiting runs, at least
        (9, 2, 0.5, 2.0),
        (9, 1, 0.5, 4.5),
        (100, 2, None, 0.0),  # nothing measured yet: no bound
    ],
)
def test_earliest_start(ahead: int, workers: int, fastest_run_s: float | None, earliest_s: float) -> None:
    assert earliest_start_s(ahead, workers, fastest_run_s) == pytest.approx(earliest_s)
