"""Adapter throughput: per-sample calls from 64 concurrent callers vs the native batch API.

verl, OpenRLHF and slime call their reward function once per sample, many at a time. Each
adapter gathers those calls into batched requests (trainer_client.batching); this measures
how close that comes to sending the batches ourselves. The same items, in the same run,
against the same service (`reward-api serve` on loopback, cache off):

- native: RewardClient.grade(items), batches of 256, 4 in flight;
- verl:     64 coroutines awaiting `compute_score(data_source=, solution_str=, ground_truth=, extra_info=)`;
- openrlhf: 64 threads calling `reward_func([query], [prompt], [label])` (as its executor does);
- slime:    64 coroutines awaiting `reward(args, sample)`;
- trl:      one call per 64-sample batch (TRL hands its whole batch to the function).

Prints items/s for each and the ratio to native (target >= 0.8). Every run grades fresh
completions (the workers memoise parses: repeats would flatter whoever comes later), and
the paths take turns over `--rounds` rounds (the fastest of each counts: this machine is noisy).

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
from trainer_client.client import SyncRewardClient

PROMPT = "<|im_start|>user\nSolve the problem and put the answer in \\boxed{}.<|im_end|>\n<|im_start|>assistant\n"


def bench_items(count: int, seed: int) -> list[tuple[str, str]]:
    """Realistic math items without the pathological ones: this measures transport, not deadlines."""
    return make_items(count, seed=seed, pathological_share=0)


def native(client: SyncRewardClient, items: list[tuple[str, str]]) -> list[float]:
    return client.rewards([{"task": "math", "completion": c, "reference": r} for c, r in items])


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


def timed(run: Callable[[list[tuple[str, str]]], list[float]], items: list[tuple[str, str]]) -> tuple[float, float]:
    """Items/s, and this process's CPU ms per item (the client's share of the 2 cores)."""
    started, cpu = time.perf_counter(), time.process_time()
    rewards = run(items)
    assert len(rewards) == len(items) and 0.25 < sum(rewards) / len(rewards) < 0.75, "half the answers are right"
    return len(items) / (time.perf_counter() - started), 1000 * (time.process_time() - cpu) / len(items)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=2048)
    parser.add_argument("--callers", type=int, default=64)
    parser.add_argument("--rounds", type=int, default=2, help="each path runs this often; the fastest round counts")
    args = parser.parse_args()
    with (
        LocalServer(REWARD_API_CACHE_ENTRIES="0") as server,
        SyncRewardClient(server.url, batch_size=256, max_concurrency=4) as client,
    ):
        url = server.url
        runs: dict[str, Callable[[list[tuple[str, str]]], list[float]]] = {
            "native batch API": lambda items: native(client, items),
            "verl compute_score": lambda items: asyncio.run(verl(url, items, args.callers)),
            "openrlhf reward_func": lambda items: openrlhf(url, items, args.callers),
            "slime reward": lambda items: asyncio.run(slime(url, items, args.callers)),
            "trl reward function": lambda items: trl(url, items, args.callers),
        }
        # Every run grades completions no run has seen (the workers memoise parses, so repeats would be
        # cheaper than training's fresh samples); the references repeat, as a prompt's do in training.
        pool = bench_items(args.items * (1 + args.rounds * len(runs)), seed=11)
        slices = [pool[i : i + args.items] for i in range(0, len(pool), args.items)]
        warm_up = slices.pop()  # every path's client made, workers loaded, references parsed: none of it timed
        for run in runs.values():
            run(warm_up[: args.callers])
        rounds = [{name: timed(run, slices.pop()) for name, run in runs.items()} for _ in range(args.rounds)]
        measured = {name: max((r[name] for r in rounds), key=lambda m: m[0]) for name in runs}
    base_rate, _ = measured["native batch API"]
    print(
        f"{args.items} fresh math items per run, {args.callers} concurrent per-sample callers, {os.cpu_count()} cores"
    )
    print(f"{'path':<22} {'items/s':>9} {'vs native':>10} {'client CPU ms/item':>19}")
    for name, (rate, cpu_ms) in measured.items():
        print(f"{name:<22} {rate:>9.1f} {rate / base_rate:>9.2f}x {cpu_ms:>19.3f}")


if __name__ == "__main__":
    main()
