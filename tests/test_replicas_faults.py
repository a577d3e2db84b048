"""Replicas under faults, on loopback: docker-compose.yml's services run as processes (tests/compose_stack.py).

3 reward-api replicas behind the real HAProxy (services/lb/haproxy.cfg), judging code on 2 sandbox services, take
a trainer's load (RewardClient) while one replica and one sandbox are SIGKILLed: every item is answered, with the
results a single local service gives, HAProxy marks the dead replica DOWN and routes around it, and the replica,
started again as compose's restart policy would, comes back UP and takes requests again. The trainer client alone,
spread over the 3 replica URLs without a balancer, loses nothing either when one dies.
"""

from __future__ import annotations

import asyncio
import re
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from reward_api.local import LocalServer
from tests.compose_stack import COMPOSE_FILE, ComposeStack
from tests.scrape import metric
from trainer_client.client import RewardClient, RewardResult

REPLICAS = ["reward-api-1", "reward-api-2", "reward-api-3"]
SANDBOXES = ["sandbox-1", "sandbox-2"]
SMALL = {"reward-api-*": {"REWARD_API_WORKERS": "1"}, "sandbox-*": {"SANDBOX_WORKERS": "1"}}
WAIT_S = 30.0  # a generous bound on "does not hang": health checks flip in ~4 s (inter 2 s, fall/rise 2)

A_PLUS_B = {"inputs": ["1 2\n", "5 7\n"], "outputs": ["3\n", "12\n"]}
# (completion, reference, the reward a right grader gives): right and wrong answers, easy and symbolic.
MATH = [
    ("\\boxed{42}", "42", 1.0),
    ("\\boxed{41}", "42", 0.0),
    ("The answer is $\\frac{1}{2}$.", "0.5", 1.0),
    ("\\boxed{(x+1)^2}", "x^2 + 2x + 1", 1.0),
    ("\\boxed{(x-1)^2}", "x^2 + 2x + 1", 0.0),
    ("\\boxed{\\sqrt{12}}", "2\\sqrt{3}", 1.0),
    ("\\boxed{3\\sqrt{2}}", "2\\sqrt{3}", 0.0),
    ("\\boxed{120}", "\\binom{10}{3}", 1.0),
]
CODE = [
    ("a, b = map(int, input().split())\nprint(a + b)", 1.0),
    ("a, b = map(int, input().split())\nprint(a - b)", 0.0),
    ("a, b = map(int, input().split())\nprint(max(a, b) + 1)", None),  # right on one test of two
]


def _cases() -> list[tuple[dict[str, Any], float | None]]:
    """(item, its known reward or None): 3 code items first (they take longest), then the math items 3 times."""
    code = [
        ({"task": "code", "completion": f"Here it is:\n```python\n{program}\n```\n", "reference": A_PLUS_B}, reward)
        for program, reward in CODE
    ]
    math = [({"task": "math", "completion": c, "reference": r}, reward) for c, r, reward in MATH]
    return code + math * 3


BATCH = [item for item, _ in _cases()]
KNOWN = [reward for _, reward in _cases()]


def _round(number: int) -> list[dict[str, Any]]:
    """The batch again, as a fresh rollout: a prompt of its own keeps the result cache from answering it."""
    return [item | {"id": f"{number}-{i}", "prompt": f"rollout {number}"} for i, item in enumerate(BATCH)]


def _outcome(results: list[RewardResult]) -> list[tuple[float, str]]:
    return [(result.reward, result.status) for result in results]


@pytest.fixture(scope="module")
def expected(tmp_path_factory: pytest.TempPathFactory) -> list[tuple[float, str]]:
    """The batch graded by one local service (code judged in-process): what every replica must answer."""
    with LocalServer(tmp_path_factory.mktemp("single"), REWARD_API_WORKERS="1") as single:
        results = asyncio.run(_grade_once([single.url], _round(0)))
    outcome = _outcome(results)
    assert [status for _, status in outcome] == ["ok"] * len(BATCH)
    for (reward, _), known, item in zip(outcome, KNOWN, BATCH, strict=True):
        assert known is None or reward == known, item
    return outcome


@pytest.fixture(scope="module")
def compose(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ComposeStack]:
    with ComposeStack([*SANDBOXES, *REPLICAS, "lb"], overrides=SMALL, log_dir=tmp_path_factory.mktemp("stack")) as st:
        yield st


@pytest.fixture
def stack(compose: ComposeStack) -> ComposeStack:
    """The stack with every service up, whatever a test before this one killed."""
    for name in compose.services:
        if not compose[name].running:
            compose.restart(name)
    return compose


async def _grade_once(urls: list[str], items: list[dict[str, Any]]) -> list[RewardResult]:
    async with RewardClient(urls, batch_size=8) as client:
        return await client.grade(items)


class Load:
    """A trainer on a thread: rollout after rollout through RewardClient until stopped; every result kept."""

    def __init__(self, urls: list[str]) -> None:
        self.urls = urls
        self.rounds: list[list[RewardResult]] = []
        self._stop = threading.Event()
        self._pool = ThreadPoolExecutor(max_workers=1)
        self._done: Future[None] | None = None

    async def _run(self) -> None:
        # batch_size 8 and 4 in flight: each rollout's requests land on several replicas at once.
        async with RewardClient(self.urls, batch_size=8, max_concurrency=4, timeout_s=WAIT_S * 2) as client:
            while not self._stop.is_set():
                self.rounds.append(await client.grade(_round(len(self.rounds) + 1)))

    def __enter__(self) -> Load:
        self._done = self._pool.submit(asyncio.run, self._run())
        return self

    def wait_rounds(self, more: int) -> None:
        """Until `more` further rollouts are graded (the load is flowing); raises what the trainer raised."""
        target = len(self.rounds) + more
        deadline = time.monotonic() + WAIT_S * 2
        while len(self.rounds) < target:
            assert self._done is not None
            if self._done.done():
                self._done.result()
            assert time.monotonic() < deadline, f"{len(self.rounds)} rollouts graded, waited for {target}"
            time.sleep(0.05)

    def finish(self) -> list[list[RewardResult]]:
        """Stop after the rollout in flight; RewardServiceError (or any error) of the trainer is raised here."""
        self._stop.set()
        assert self._done is not None
        self._done.result(timeout=WAIT_S * 4)
        return self.rounds

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._pool.shutdown(wait=True)


def test_the_stack_moves_every_compose_address_to_loopback_and_free_ports() -> None:
    """No service started from docker-compose.yml sees a compose host name or a fixed port of the port plan."""
    stack = ComposeStack([*SANDBOXES, *REPLICAS, "lb"], overrides=SMALL)
    fixed = "|".join(str(port) for port in stack.ports)
    names = "|".join(re.escape(name) for name in [*SANDBOXES, *REPLICAS, "redis"])
    for service in stack.services.values():
        for key, value in service.env.items():
            assert not re.search(rf"(?<![\w.-])({names}):|(?<![\d.])({fixed})(?!\d)", value), (service.name, key, value)
            assert "0.0.0.0" not in value, (service.name, key, value)
    assert set(stack.ports) >= {8000, 8001, 8002, 8003, 8081, 8082, 8404}
    assert stack["lb"].argv[-1] == str(COMPOSE_FILE.parent / "services" / "lb" / "haproxy.cfg")
    assert stack["reward-api-2"].env["REWARD_API_SANDBOX_URLS"] == ",".join(
        f"http://127.0.0.1:{stack[name].port}" for name in SANDBOXES
    )


def test_each_compose_service_passes_its_own_healthcheck(stack: ComposeStack) -> None:
    """Compose's healthcheck (`python3 -m service_kit.probe /readyz`) passes in each service's environment."""
    for name in [*SANDBOXES, *REPLICAS]:
        check = stack.healthcheck(name)
        assert check.returncode == 0, f"{name}: {check.stderr}"
    assert {name: row["status"] for name, row in stack.lb_servers().items()} == dict.fromkeys(REPLICAS, "UP")


def test_killing_a_replica_and_a_sandbox_behind_haproxy_loses_no_item(
    stack: ComposeStack, expected: list[tuple[float, str]]
) -> None:
    victim = "reward-api-2"
    with Load([stack["lb"].url]) as load:
        load.wait_rounds(2)
        stack.kill(victim)
        stack.kill("sandbox-1")
        load.wait_rounds(1)

        # Routed around: HAProxy's health check marks it DOWN and rollouts keep being graded by the other two.
        stack.wait_lb_status(victim, "DOWN", WAIT_S)
        answered_by_victim = int(stack.lb_servers()[victim]["hrsp_2xx"])
        load.wait_rounds(2)
        assert int(stack.lb_servers()[victim]["hrsp_2xx"]) == answered_by_victim

        # Replaced: started again (compose's restart policy), it comes back UP and takes requests again.
        stack.restart("sandbox-1")
        stack.restart(victim)
        stack.wait_lb_status(victim, "UP", WAIT_S)
        deadline = time.monotonic() + WAIT_S
        while int(stack.lb_servers()[victim]["hrsp_2xx"]) == answered_by_victim:
            assert time.monotonic() < deadline, f"HAProxy sent nothing to {victim} since it came back UP"
            load.wait_rounds(1)
        rounds = load.finish()

    assert len(rounds) >= 6
    for number, results in enumerate(rounds, start=1):
        assert [r.id for r in results] == [item["id"] for item in _round(number)]
        assert _outcome(results) == expected, f"rollout {number} differs from the single service's results"
    for name in ("sandbox-1", victim):
        check = stack.healthcheck(name)
        assert check.returncode == 0, f"{name} after its restart: {check.stderr}"


def test_killed_sandbox_takes_code_again_once_restarted(stack: ComposeStack) -> None:
    """A sandbox replaced after a SIGKILL is judged on again: the replicas skip it only while it was down."""
    stack.kill("sandbox-1")
    stack.restart("sandbox-1")
    code = [item for item in BATCH if item["task"] == "code"]
    deadline = time.monotonic() + WAIT_S
    number = 0
    # RemoteJudge puts a URL that failed last for 10 s, then round-robins onto it again.
    while metric(stack["sandbox-1"], "sandbox_requests_total", endpoint="/v1/judge") == 0:
        assert time.monotonic() < deadline, "no replica judged code on the restarted sandbox-1"
        number += 1
        items = [item | {"prompt": f"probe {number}"} for item in code]
        results = asyncio.run(_grade_once([stack[name].url for name in REPLICAS], items))
        assert [r.status for r in results] == ["ok"] * len(code)
        time.sleep(0.5)


def test_the_client_alone_spreads_over_replica_urls_and_loses_no_item_when_one_dies(
    stack: ComposeStack, expected: list[tuple[float, str]]
) -> None:
    victim = "reward-api-3"
    urls = [stack[name].url for name in REPLICAS]
    with Load(urls) as load:
        load.wait_rounds(1)
        # Mid-rollout: the victim has just answered one of this client's requests; with 4 in flight over 3
        # replicas it most likely holds another, which the client must then get answered elsewhere.
        deadline = time.monotonic() + WAIT_S
        before = metric(stack[victim], "reward_requests_total", endpoint="/v1/rewards")
        while metric(stack[victim], "reward_requests_total", endpoint="/v1/rewards") == before:
            assert time.monotonic() < deadline, f"the client sent nothing to {victim}"
            time.sleep(0.02)
        stack.kill(victim)
        load.wait_rounds(3)
        rounds = load.finish()
    for number, results in enumerate(rounds, start=1):
        assert _outcome(results) == expected, f"rollout {number} differs from the single service's results"
    assert all(metric(stack[name], "reward_requests_total", endpoint="/v1/rewards") > 0 for name in REPLICAS[:2])


def test_the_scale_benchmark_runs_and_prints_its_figures() -> None:
    """bench/scale.py --quick: every setup grades its items and the summary line has a ratio for each."""
    script = Path(__file__).resolve().parents[1] / "bench" / "scale.py"
    done = subprocess.run(
        [sys.executable, str(script), "--quick", "--quiet", "--no-ray"], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    summary = re.search(r"summary: items/s ratio to local: (.*); lb overhead", done.stdout)
    assert summary, done.stdout
    ratios = dict(pair.split("=") for pair in summary.group(1).split())
    assert set(ratios) >= {"lb1", "lb2", "lb3", "direct"}
    assert all(float(ratio) > 0 for ratio in ratios.values())
    assert "balancer overhead" in done.stdout and "scaling stops at the cores" in done.stdout
