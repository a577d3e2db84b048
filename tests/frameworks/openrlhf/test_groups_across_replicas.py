"""Groups whose samples reach two replicas, which share a real `redis-server` (reward_api/group_relay.py).

OpenRLHF's `--reward.remote_url A,B` (its executor cycles the URLs per sample) and a round-robin HAProxy (the real
one, per-sample requests from RewardClient and slime's `remote_rm`) deal each group's samples out to both replicas:
every sample gets the reward its whole group gives on one replica, none `partial`, and samples did travel between
the replicas. Without the shared Redis each replica would answer its part `partial` after the group wait.
"""

from __future__ import annotations

import asyncio
import shutil
import subprocess
import time
from argparse import Namespace
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from pathlib import Path

import httpx
import pytest
import redis

from reward_api.local import LocalServer, free_port
from tests.frameworks.openrlhf.test_lb_groups import EXPECTED, PROMPTS
from tests.frameworks.openrlhf.test_openrlhf_slime_compat import (
    KIMI_RESPONSES,
    QWEN,
    Sample,
    chat_tokenizer,
    openrlhf_prompt,
    rollout,
    slime_remote_rm,
)
from tests.redis_process import RedisProcess
from tests.scrape import metric
from trainer_client.client import RewardClient

# Each replica's channel in Redis (reward_api/group_relay.py's, which imports more than this environment holds).
RELAY_CHANNELS = "reward-api:groups:replica:*"
HAPROXY = shutil.which("haproxy") or shutil.which("haproxy", path="/usr/sbin") or "haproxy"
# Round robin: each request to the next replica, whatever it carries.
ROUND_ROBIN_CFG = """
defaults
    mode http
    timeout connect 5s
    timeout client 120s
    timeout server 120s
frontend rewards
    bind 127.0.0.1:{port}
    default_backend replicas
backend replicas
    balance roundrobin
{servers}
"""


SMALL = {"REWARD_API_WORKERS": "1", "REWARD_API_HEAVY_WORKERS": "0", "REWARD_API_CODE_WORKERS": "0"}


@pytest.fixture(scope="module")
def redis_url() -> Iterator[str]:
    with RedisProcess() as server:
        yield server.url


@pytest.fixture(scope="module")
def replicas(redis_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[list[LocalServer]]:
    # A failure shows as `partial` after 30 s rather than a long hang.
    env = SMALL | {"REWARD_API_GROUP_WAIT_S": "30", "REWARD_API_CACHE_REDIS_URL": redis_url}
    logs = tmp_path_factory.mktemp("replicas")
    with ExitStack() as stack:
        yield [stack.enter_context(LocalServer(logs, **env)) for _ in range(2)]


@pytest.fixture(scope="module")
def round_robin(replicas: list[LocalServer], tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    port = free_port()
    servers = "\n".join(f"    server r{i} 127.0.0.1:{replica.port}" for i, replica in enumerate(replicas))
    config = tmp_path_factory.mktemp("lb") / "haproxy.cfg"
    config.write_text(ROUND_ROBIN_CFG.format(port=port, servers=servers))
    process = subprocess.Popen([HAPROXY, "-db", "-f", str(config)], stdout=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until_answering(url, process)
        yield url
    finally:
        process.kill()
        process.wait()


def wait_until_answering(url: str, process: subprocess.Popen) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and process.poll() is None:
        try:
            httpx.get(f"{url}/healthz", timeout=2)
            return
        except httpx.TransportError:
            time.sleep(0.1)
    raise RuntimeError(f"haproxy did not answer on {url} (exit {process.poll()})")


def wait_until_listeners(redis_url: str, count: int) -> None:
    with redis.Redis.from_url(redis_url) as client:
        deadline = time.monotonic() + 30
        while len(client.pubsub_channels(RELAY_CHANNELS)) != count:
            assert time.monotonic() < deadline, "Redis still lists the killed replica's channel"
            time.sleep(0.05)


def group_items(replicas: list[LocalServer], outcome: str) -> float:
    return sum(metric(replica, "reward_group_items_total", outcome=outcome) for replica in replicas)


def relayed(replicas: list[LocalServer]) -> float:
    return sum(metric(replica, "reward_group_relayed_total", direction="sent") for replica in replicas)


class Counted:
    """What the replicas' counters gained during the block: whole groups, partial ones, samples relayed."""

    def __init__(self, replicas: list[LocalServer]) -> None:
        self.replicas = replicas

    def __enter__(self) -> Counted:
        self.before = self._now()
        return self

    def __exit__(self, *exc: object) -> None:
        self.complete, self.partial, self.relayed = (
            after - before for after, before in zip(self._now(), self.before, strict=True)
        )

    def _now(self) -> tuple[float, float, float]:
        return group_items(self.replicas, "complete"), group_items(self.replicas, "partial"), relayed(self.replicas)


def assert_whole_groups_that_travelled(counted: Counted) -> None:
    samples = len(PROMPTS) * len(KIMI_RESPONSES)
    assert (counted.complete, counted.partial) == (samples, 0)
    assert counted.relayed >= samples / 4, "the samples did not reach both replicas: nothing was proven"


def test_openrlhf_cycling_two_urls_gets_the_rewards_of_one_replica(replicas: list[LocalServer]) -> None:
    """`--reward.remote_url A,B`: OpenRLHF splits it on the comma and its executor takes the next URL per sample."""
    tokenizer = chat_tokenizer(QWEN)
    urls = [f"{replica.url}/get_reward?profile=kimi&group_size={len(KIMI_RESPONSES)}" for replica in replicas]
    with Counted(replicas) as counted, ThreadPoolExecutor(len(PROMPTS)) as pool:
        runs = [
            pool.submit(rollout, urls, tokenizer, openrlhf_prompt(tokenizer, prompt), "4", KIMI_RESPONSES)
            for prompt in PROMPTS
        ]
        for run in runs:
            assert [output["reward"][0] for output in run.result()] == pytest.approx(EXPECTED)
    assert_whole_groups_that_travelled(counted)


def test_round_robin_balancer_per_sample_requests_get_the_rewards_of_one_replica(
    replicas: list[LocalServer], round_robin: str
) -> None:
    async def native(prompt: str, response: str) -> float:
        item = {"task": "math", "prompt": prompt, "completion": response, "reference": "4", "group": prompt}
        async with RewardClient(round_robin, profile="kimi") as client:  # a client per sample
            [result] = await client.grade([item | {"group_size": len(KIMI_RESPONSES)}])
        assert result.details["group"]["formed"] == "group_size", result
        return result.reward

    slime_args = Namespace(
        rm_type="remote_rm", rm_url=f"{round_robin}/slime?profile=kimi&group_size=4", reward_key=None
    )

    async def slime(prompt: str, response: str) -> float:
        return await slime_remote_rm(slime_args, Sample(prompt=f"slime: {prompt}", response=response, label="4"))

    async def every_group() -> list[list[float]]:
        groups = [asyncio.gather(*(send(p, r) for r in KIMI_RESPONSES)) for send in (native, slime) for p in PROMPTS]
        return [list(rewards) for rewards in await asyncio.gather(*groups)]

    with Counted(replicas) as counted:
        for rewards in asyncio.run(every_group()):
            assert rewards == pytest.approx(EXPECTED)
    assert counted.partial == 0 and counted.complete == 2 * len(PROMPTS) * len(KIMI_RESPONSES)
    assert counted.relayed >= len(PROMPTS) * len(KIMI_RESPONSES) / 2


def test_a_replica_that_dies_mid_group_leaves_its_group_partial_within_the_bound(
    replicas: list[LocalServer], redis_url: str, tmp_path: Path
) -> None:
    """The owner of a group is killed after its samples: the other replica takes the group over and answers its
    own samples over what came, within the request's bound: never a hang, never a 0 for a right answer."""
    doomed = LocalServer(tmp_path, REWARD_API_CACHE_REDIS_URL=redis_url, **SMALL).start()
    try:
        item = {"task": "math", "prompt": "p", "reference": "4", "group": "doomed", "group_size": 4}
        samples = [item | {"completion": response} for response in KIMI_RESPONSES]
        with httpx.Client(timeout=60) as client:
            first = client.post(f"{doomed.url}/v1/rewards", json={"items": samples[:2], "profile": "kimi",
                                                                    "group_wait_s": 0.1})  # fmt: skip
            assert first.status_code == 200  # the group is the doomed replica's now
            doomed.process.kill()
            wait_until_listeners(redis_url, len(replicas))  # Redis saw it go: its channel has no listener
            started = time.monotonic()
            rest = client.post(f"{replicas[0].url}/v1/rewards", json={"items": samples[2:], "profile": "kimi",
                                                                       "group_wait_s": 3})  # fmt: skip
            waited = time.monotonic() - started
    finally:
        doomed.stop()
    results = rest.json()["results"]
    assert [r["details"]["group"] for r in results] == [{"members": 2, "expected": 4, "formed": "partial"}] * 2
    assert all(r["status"] == "ok" for r in results)
    assert waited < 15, f"waited {waited:.0f}s for a group whose owner was gone (its bound: 3 s)"
    assert metric(replicas[0], "reward_group_relay_errors_total", op="owner_gone") >= 1
