"""Adapter throughput: per-sample calls from 64 concurrent callers vs the native batch API.

verl, OpenRLHF and slime call their reward function once per sample, many at a time. Each
adapter gathers those calls into batched requests (trainer_client.batching); this measures
how close that comes to sending the batches ourselves. The same items, in the same run,
against the same service (`reward-api serve` on loopback, cache off):

- native: RewardClient.grade(items), batches of 256;
- verl:     64 coroutines awaiting `compute_score(data_source=, solution_str=, ground_truth=, extra_info=)`;
- openrlhf: 64 threads calling `reward_func([query], [prompt], [label])` (as its executor does);
- slime:    64 coroutines awaiting `reward(args, sample)`;
- trl:      one call per 64-sample batch (TRL hands its whole batch to the function).

Prints items/s for each and the ratio to native (target >= 0.8); the items are graded once
before timing so that every path meets equally warm workers.

    .venv/bin/python bench/adapter_throughput.py [--items 2048] [--callers 64]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from types import SimpleNamespace

sys.path.insert(0, str(Path(__file__).resolve().parent))
from math_items import make_items

from reward_api.local import LocalServer
from trainer_client.client import RewardClient

PROMPT = "<|im_start|>user\nSolve the problem and put the answer in \\boxed{}.<|im_end|>\n<|im_start|>assistant\n"


def bench_items(count: int) -> list[tuple[str, str]]:
    """Realistic math items without the pathological ones: this measures transport, not deadlines."""
    return make_items(count, seed=7, pathological_share=0)


async def native(url: str, items: list[tuple[str, str]]) -> list[float]:
    async with RewardClient(url, batch_size=256, max_concurrency=4) as client:
        results = await client.grade([{"task": "math", "completion": c, "reference": r} for c, r in items])
    return [r.reward for r in results]


async def verl(url: str, items: list[tuple[str, str]], callers: int) -> list[float]:
    from trainer_client.adapters.verl import compute_score

    gate = asyncio.Semaphore(callers)

    async def one(index: int, completion: str, reference: str) -> float:
        async with gate:
            score = await compute_score(
                data_source="bench", solution_str=completion, ground_truth=reference,
                extra_info={"index": index, "split": "train"}, url=url,
            )  # fmt: skip
            return score["score"]

    return list(await asyncio.gather(*(one(i, c, r) for i, (c, r) in enumerate(items))))


def openrlhf(url: str, items: list[tuple[str, str]], callers: int) -> list[float]:
    os.environ["REWARD_SERVICE_URL"] = url
    from trainer_client.adapters.openrlhf import reward_func

    def one(item: tuple[str, str]) -> float:
        completion, reference = item
        return reward_func([PROMPT + completion], [PROMPT], [reference])["rewards"][0]

    with ThreadPoolExecutor(callers) as threads:
        return list(threads.map(one, items))


async def slime(url: str, items: list[tuple[str, str]], callers: int) -> list[float]:
    from trainer_client.adapters.slime import reward

    args = SimpleNamespace(reward_service_url=url, n_samples_per_prompt=None)
    gate = asyncio.Semaphore(callers)

    async def one(index: int, completion: str, reference: str) -> float:
        sample = SimpleNamespace(prompt="", response=completion, label=reference, group_index=index)
        async with gate:
            return await reward(args, sample)

    return list(await asyncio.gather(*(one(i, c, r) for i, (c, r) in enumerate(items))))


def trl(url: str, items: list[tuple[str, str]], batch: int) -> list[float]:
    from trainer_client.adapters.trl import reward_function

    function = reward_function(reference_column="answer", urls=url)
    rewards: list[float] = []
    for start in range(0, len(items), batch):
        chunk = items[start : start + batch]
        rewards += function(
            prompts=[PROMPT] * len(chunk), completions=[c for c, _ in chunk], answer=[r for _, r in chunk]
        )
    return rewards


def timed(run: Callable[[], list[float]]) -> tuple[float, float, list[float]]:
    """Wall seconds, this process's CPU seconds (the client's share of the 2 cores), rewards."""
    started, cpu = time.perf_counter(), time.process_time()
    rewards = run()
    return time.perf_counter() - started, time.process_time() - cpu, rewards


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=2048)
    parser.add_argument("--callers", type=int, default=64)
    args = parser.parse_args()
    items = bench_items(args.items)
    with LocalServer(REWARD_API_CACHE_ENTRIES="0") as server:
        url = server.url
        # Grade everything once first: the workers' parser caches then favour no path over another.
        asyncio.run(native(url, items))
        runs = {
            "native batch API": lambda: asyncio.run(native(url, items)),
            "verl compute_score": lambda: asyncio.run(verl(url, items, args.callers)),
            "openrlhf reward_func": lambda: openrlhf(url, items, args.callers),
            "slime reward": lambda: asyncio.run(slime(url, items, args.callers)),
            "trl reward function": lambda: trl(url, items, args.callers),
        }
        measured = {name: timed(run) for name, run in runs.items()}
    base_seconds, _, base_rewards = measured["native batch API"]
    print(f"{len(items)} math items, {args.callers} concurrent per-sample callers, {os.cpu_count()} cores")
    print(f"{'path':<22} {'items/s':>9} {'vs native':>10} {'client CPU ms/item':>19} {'same rewards':>13}")
    for name, (seconds, cpu, rewards) in measured.items():
        same = sum(a == b for a, b in zip(rewards, base_rewards, strict=True))
        print(
            f"{name:<22} {len(items) / seconds:>9.1f} {base_seconds / seconds:>9.2f}x "
            f"{1000 * cpu / len(items):>19.3f} {same:>7}/{len(items)}"
        )


if __name__ == "__main__":
    main()
