"""Group load: one request per sample, late members, against one request per group.

slime's `--rm-url`, OpenRLHF's `/get_reward` and verl's reward workers send a prompt's samples in requests of their
own, all at once, far more of them than the service's in-flight cap (REWARD_API_MAX_REQUESTS_IN_FLIGHT, 256), and
each group's last sample comes late (its rollout took longer). Requests waiting for their group leave the cap
(reward_api/groups.py), so this is no deadlock: every group completes whole once its last sample arrives. The same
groups (Kimi's length reward, `group_size` 8) are graded in the same run, against the same service:

- per-sample: every sample its own POST /v1/rewards, all at once; each group's last one `--late-s` after the rest;
- per-group:  a POST per group holding its 8 samples, sent when its last sample is ready (the baseline);
- split:      per-sample, dealt in turn to two more replicas that share a Redis (a round-robin balancer,
  OpenRLHF's `--reward.remote_url A,B`): each group completes at one of them (reward_api/group_relay.py).

Prints the seconds each took, items/s, the ratios of per-sample and split to per-group time (1.0: they cost
nothing beyond the wait for the late member), and checks that every group was whole and all gave the same rewards.

    .venv/bin/python bench/group_load.py [--samples 1000] [--late-s 2]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import aiohttp

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from reward_api.local import LocalServer
from tests.redis_process import RedisProcess

GROUP_SIZE = 8


def samples(count: int, tag: str) -> list[list[dict[str, Any]]]:
    """`count` samples in groups of GROUP_SIZE: right and wrong answers of several lengths, fresh per `tag`."""
    groups = []
    for g in range(count // GROUP_SIZE):
        group = []
        for k in range(GROUP_SIZE):
            reasoning = " ".join(["step"] * (5 + 7 * k)) + f" ({tag} {g})"
            answer = "42" if k % 3 else "41"
            group.append({"task": "math", "completion": f"<think>{reasoning}</think> \\boxed{{{answer}}}",
                          "reference": "42", "group": f"{tag}-{g}", "group_size": GROUP_SIZE})  # fmt: skip
        groups.append(group)
    return groups


async def post(http: aiohttp.ClientSession, url: str, items: list[dict[str, Any]], delay_s: float) -> list[dict]:
    await asyncio.sleep(delay_s)
    async with http.post(f"{url}/v1/rewards", json={"profile": "kimi", "items": items}) as response:
        response.raise_for_status()
        return (await response.json())["results"]


def session() -> aiohttp.ClientSession:
    """aiohttp, as slime and OpenRLHF post (httpx's pool slows down at a thousand connections open at once)."""
    return aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0), timeout=aiohttp.ClientTimeout(total=300))


async def per_sample(urls: list[str], groups: list[list[dict[str, Any]]], late_s: float) -> list[list[dict]]:
    """Each sample alone, to the URLs in turn (one URL: all to it)."""
    async with session() as http:
        runs = [
            [
                post(http, urls[(g * GROUP_SIZE + k) % len(urls)], [item], late_s if k == GROUP_SIZE - 1 else 0.0)
                for k, item in enumerate(group)
            ]
            for g, group in enumerate(groups)
        ]
        answers = await asyncio.gather(*(asyncio.gather(*run) for run in runs))
    return [[result for [result] in answer] for answer in answers]


async def per_group(url: str, groups: list[list[dict[str, Any]]], late_s: float) -> list[list[dict]]:
    async with session() as http:
        return list(await asyncio.gather(*(post(http, url, group, late_s) for group in groups)))


def timed(run: Any) -> tuple[float, list[list[dict]]]:
    start = time.perf_counter()
    answer = asyncio.run(run)
    return time.perf_counter() - start, answer


def check(answers: list[list[dict]]) -> list[float]:
    """Every result ok and graded over its whole group; the rewards in order."""
    for group in answers:
        for result in group:
            assert result["status"] == "ok", result
            assert result["details"]["group"]["formed"] == "group_size", result["details"]["group"]
    return [result["reward"] for group in answers for result in group]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=1000)
    parser.add_argument("--late-s", type=float, default=2.0, help="how late each group's last sample comes")
    args = parser.parse_args()
    logs = Path(tempfile.mkdtemp(prefix="group-load-"))
    with LocalServer(logs) as server:
        baseline_s, baseline = timed(per_group(server.url, samples(args.samples, "per-group"), args.late_s))
        sample_s, answers = timed(per_sample([server.url], samples(args.samples, "per-sample"), args.late_s))
    with RedisProcess() as redis_server, ExitStack() as stack:
        # The same cores in all: the two replicas share them, one grading worker each.
        replicas = [
            stack.enter_context(LocalServer(logs, REWARD_API_WORKERS="1", REWARD_API_CACHE_REDIS_URL=redis_server.url))
            for _ in range(2)
        ]
        split_s, split = timed(per_sample([r.url for r in replicas], samples(args.samples, "split-half"), args.late_s))
    assert check(answers) == check(baseline) == check(split), "per-sample requests gave other rewards"
    count = len(answers) * GROUP_SIZE
    print(f"{count} samples in groups of {GROUP_SIZE}, each group's last sample {args.late_s:g} s late")
    print(f"per-group  ({len(answers)} requests): {baseline_s:6.2f} s, {count / baseline_s:7.1f} items/s")
    print(f"per-sample ({count} requests): {sample_s:6.2f} s, {count / sample_s:7.1f} items/s")
    print(f"split      ({count} requests, 2 replicas in turn): {split_s:6.2f} s, {count / split_s:7.1f} items/s")
    print(f"per-sample / per-group time: {sample_s / baseline_s:.2f}x; split / per-group: {split_s / baseline_s:.2f}x;"
          " every group whole, the same rewards")  # fmt: skip


if __name__ == "__main__":
    main()
