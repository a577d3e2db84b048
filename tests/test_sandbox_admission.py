"""The sandbox under SandboxFusion's own client and verl's deadline.

The `sandbox-fusion` 0.3.7 package (`sandbox_fusion.run_code`) posts to `<endpoint>/run_code` and sends no headers,
so the token travels in the URL. verl 0.9.1's client (tests/frameworks/verl/test_verl_sandbox_client.py, in verl's
environment) reads for compile_timeout + run_timeout + 10 s and retries only a 504: a run that cannot start in
time gets that 504 first.
"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest
import sandbox_fusion

from reward_api.local import LocalServer
from sandbox.service import earliest_start_s
from tests.test_sandbox_service import DOUBLE, TOKEN, _metric

# verl's sandbox client reads for compile_timeout + run_timeout + this (its API_TIMEOUT, which
# tests/frameworks/verl/test_verl_sandbox_client.py checks).
VERL_API_TIMEOUT_S = 10


def _metrics(server: LocalServer) -> str:
    return httpx.get(f"{server.url}/metrics").text


@pytest.mark.parametrize("language", ["python", "cpp"])
def test_sandbox_fusion_client_run_code(sandbox: LocalServer, language: str) -> None:
    request = sandbox_fusion.RunCodeRequest(code=DOUBLE[language], language=language, stdin="21\n")
    response = sandbox_fusion.run_code(request, endpoint=sandbox.url, max_attempts=1)
    assert response.status == sandbox_fusion.RunStatus.Success
    assert response.run_result.status == sandbox_fusion.CommandRunStatus.Finished
    assert response.run_result.stdout == "42\n"
    assert (response.compile_result is None) == (language == "python")


def test_a_run_that_cannot_start_in_time_gets_504_before_its_client_gives_up(guarded_sandbox: LocalServer) -> None:
    """One worker, busy for 10 s: a run whose client reads for 10.5 s may wait 8 s (its limits count 2.5 s)."""
    busy = {"code": "import time\ntime.sleep(10)", "language": "python", "run_timeout": 12}
    late = {"code": "print(1)", "language": "python", "compile_timeout": 0, "run_timeout": 0.5}
    client_deadline_s = late["compile_timeout"] + late["run_timeout"] + VERL_API_TIMEOUT_S
    url = f"{guarded_sandbox.url}/run_code?token={TOKEN}"
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
    assert _metric(_metrics(guarded_sandbox), 'sandbox_rejected_total{endpoint="/run_code",reason="expired"}') == 1
    assert '"reason": "expired"' in guarded_sandbox.log()


def test_sandbox_fusion_client_with_the_token_in_its_endpoint_and_no_token_in_the_log(
    guarded_sandbox: LocalServer,
) -> None:
    url, code = guarded_sandbox.url, {"code": "1", "language": "python"}
    request = sandbox_fusion.RunCodeRequest(code="print(6 * 7)", language="python")
    response = sandbox_fusion.run_code(request, endpoint=f"{url}/token/{TOKEN}", max_attempts=1)
    assert response.run_result.stdout == "42\n"
    assert httpx.post(f"{url}/run_code?token={TOKEN}", json=code).is_success
    headers = {"Authorization": f"Bearer {TOKEN}"}  # the header keeps working
    assert httpx.post(f"{url}/run_code", json=code, headers=headers).is_success
    log = guarded_sandbox.log()
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
