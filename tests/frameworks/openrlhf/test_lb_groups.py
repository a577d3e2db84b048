"""Groups behind the load balancer: per-sample requests meet on one replica (services/lb/haproxy.cfg).

Three reward-api replicas behind the real HAProxy (tests/compose_stack.py), each sample of a group in a request of
its own, from RewardClient (one client per sample, as verl's reward workers are), OpenRLHF's rollout executor
(`/get_reward`) and slime's `remote_rm` (`/slime`): the balancer hashes on the group (RewardClient's
X-Reward-Group header, the prompt of OpenRLHF's and slime's posts), so every group completes whole on one replica,
the groups spread over the replicas, and each sample's Kimi reward is the one its whole group gives. With the
balancer's least-connections alone, the groups would split and end partial after the replicas' group wait.
"""

from __future__ import annotations

import asyncio
from argparse import Namespace
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import pytest

from reward_api.graders.length import estimate_num_tokens
from tests.compose_stack import ComposeStack
from tests.frameworks.openrlhf.test_openrlhf_slime_compat import (
    KIMI_RESPONSES,
    QWEN,
    Sample,
    chat_tokenizer,
    kimi_reward,
    openrlhf_prompt,
    rollout,
    slime_remote_rm,
)
from tests.scrape import metric
from trainer_client.client import RewardClient

REPLICAS = ["reward-api-1", "reward-api-2", "reward-api-3"]
# A failure shows as `partial` after this wait rather than a long hang.
SMALL = {
    "reward-api-*": {"REWARD_API_WORKERS": "1", "REWARD_API_GROUP_WAIT_S": "30"},
    "sandbox-*": {"SANDBOX_WORKERS": "1"},
}
PROMPTS = [f"Puzzle {n}: what is 2 + 2 ?" for n in range(6)]
LENGTHS = [estimate_num_tokens(response) for response in KIMI_RESPONSES]
EXPECTED = [kimi_reward(i in (0, 1), n, LENGTHS) for i, n in enumerate(LENGTHS)]  # the first two responses are right


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ComposeStack]:
    services = ["sandbox-1", "sandbox-2", *REPLICAS, "lb"]
    with ComposeStack(services, overrides=SMALL, log_dir=tmp_path_factory.mktemp("stack")) as started:
        yield started


def group_items(stack: ComposeStack, outcome: str) -> list[float]:
    return [metric(stack[name], "reward_group_items_total", outcome=outcome) for name in REPLICAS]


def check_whole_groups_spread(stack: ComposeStack, complete_before: list[float], partial_before: list[float]) -> None:
    """Every sample in a whole group (none partial on any replica), and the groups on more than one replica."""
    assert group_items(stack, "partial") == partial_before
    gained = [after - before for after, before in zip(group_items(stack, "complete"), complete_before, strict=True)]
    assert sum(gained) == len(PROMPTS) * len(KIMI_RESPONSES), gained
    assert sum(1 for n in gained if n) >= 2, f"every group went to one replica: {gained}"


def test_reward_client_samples_sent_one_by_one_meet_on_one_replica(stack: ComposeStack) -> None:
    complete, partial = group_items(stack, "complete"), group_items(stack, "partial")

    async def one_sample(prompt: str, response: str) -> float:
        item = {"task": "math", "prompt": prompt, "completion": response, "reference": "4", "group": prompt}
        async with RewardClient(stack["lb"].url, profile="kimi") as client:  # a client per sample: per-sample requests
            [result] = await client.grade([item | {"group_size": len(KIMI_RESPONSES)}])
        assert result.details["group"]["formed"] == "group_size", result
        return result.reward

    async def all_samples() -> list[list[float]]:
        runs = [[one_sample(prompt, response) for response in KIMI_RESPONSES] for prompt in PROMPTS]
        return [list(rewards) for rewards in await asyncio.gather(*(asyncio.gather(*run) for run in runs))]

    for rewards in asyncio.run(all_samples()):
        assert rewards == pytest.approx(EXPECTED)
    check_whole_groups_spread(stack, complete, partial)


def test_openrlhf_per_sample_posts_meet_on_one_replica(stack: ComposeStack) -> None:
    """OpenRLHF's executor posts each sample alone to `--reward.remote_url`: the balancer hashes on its prompt."""
    complete, partial = group_items(stack, "complete"), group_items(stack, "partial")
    tokenizer = chat_tokenizer(QWEN)
    url = f"{stack['lb'].url}/get_reward?profile=kimi&group_size={len(KIMI_RESPONSES)}"
    with ThreadPoolExecutor(len(PROMPTS)) as pool:  # the prompts' rollouts at once, as OpenRLHF's engines run them
        runs = [
            pool.submit(rollout, url, tokenizer, openrlhf_prompt(tokenizer, prompt), "4", KIMI_RESPONSES)
            for prompt in PROMPTS
        ]
        for run in runs:
            assert [output["reward"][0] for output in run.result()] == pytest.approx(EXPECTED)
    check_whole_groups_spread(stack, complete, partial)


def test_slime_remote_rm_posts_meet_on_one_replica(stack: ComposeStack) -> None:
    """slime's `remote_rm` posts each sample alone to `--rm-url`: the balancer hashes on its prompt."""
    complete, partial = group_items(stack, "complete"), group_items(stack, "partial")
    args = Namespace(rm_type="remote_rm", rm_url=f"{stack['lb'].url}/slime?profile=kimi&group_size=4", reward_key=None)

    async def rewarded() -> list[list[float]]:
        groups = [
            asyncio.gather(*(slime_remote_rm(args, Sample(prompt=p, response=r, label="4")) for r in KIMI_RESPONSES))
            for p in PROMPTS
        ]
        return [list(rewards) for rewards in await asyncio.gather(*groups)]

    for rewards in asyncio.run(rewarded()):
        assert rewards == pytest.approx(EXPECTED)
    check_whole_groups_spread(stack, complete, partial)
