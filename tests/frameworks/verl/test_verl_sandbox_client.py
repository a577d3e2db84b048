"""The sandbox under verl 0.9.1's own SandboxFusion client (`verl/utils/reward_score/sandbox_fusion`).

compute_score -> check_correctness -> call_sandbox_api reads for compile_timeout + run_timeout + API_TIMEOUT
(10 s) and retries only a 504; it sends no headers, so a token travels in the URL. The sandbox's side of the
504 (a run that cannot start before that deadline) is tests/test_sandbox_admission.py's.
"""

from __future__ import annotations

import json
import multiprocessing
from concurrent.futures import ThreadPoolExecutor
from functools import partial

import pytest
from verl.utils.reward_score import sandbox_fusion as verl_sandbox_fusion
from verl.utils.reward_score.sandbox_fusion import utils as verl_client

from reward_api.local import LocalServer
from tests.conftest import SANDBOX_TOKEN
from tests.scrape import metric

SLOW_SQUARE = "```python\nimport time\nn = int(input())\ntime.sleep(n)\nprint(n * n)\n```"
SLOW_TESTS = {"inputs": ["5", "6", "7"], "outputs": ["25", "36", "49"]}
SAMPLES = 4  # x 3 tests of 5-7 s: 36 s of work for 2 workers, past verl's 30 s read timeout
TOKEN = SANDBOX_TOKEN


def test_the_client_reads_for_the_deadline_the_sandbox_answers_504_within() -> None:
    """tests/test_sandbox_admission.py's 504 comes before compile + run + this many seconds."""
    assert verl_client.API_TIMEOUT == 10


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
    assert metric(sandbox, "sandbox_rejected_total", endpoint="/run_code", reason="expired") >= 1


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
def test_verl_client_with_the_token_in_its_url(guarded_sandbox: LocalServer, path: str, status: int) -> None:
    url = guarded_sandbox.url + path
    answer, error = verl_client.call_sandbox_api(url, "print(6 * 7)", None, 10, 10, 1024, "python")
    if status == 200:
        assert error is None and answer["run_result"]["stdout"] == "42\n"
    else:
        assert answer is None and f"{status} Client Error" in error
    assert TOKEN not in guarded_sandbox.log()  # logged without the token
