"""Math grading throughput: math-verify in-process on one core vs the HTTP service.

The same items (bench/math_items.py) are graded
  (a) by math-verify, in this process, pinned to one core, with its timers set to the
      service's deadline;
  (b) by the service (`reward-api serve` on loopback, one worker per core, cache off)
      through `POST /v1/rewards` in batches of 256.
Prints items/s for both, their ratio, and item latency percentiles.

    .venv/bin/python bench/math_throughput.py [--items 3000] [--deadline 2]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
from math_items import make_items

from reward_api.local import LocalServer


def baseline_math_verify(items: list[tuple[str, str]], deadline_s: float) -> tuple[float, list[float], list[bool]]:
    from math_verify import parse, verify

    seconds, verdicts = [], []
    affinity = os.sched_getaffinity(0)
    os.sched_setaffinity(0, {min(affinity)})
    try:
        started = time.perf_counter()
        for completion, reference in items:
            t0 = time.perf_counter()
            timeout = max(1, round(deadline_s))  # math-verify takes whole seconds
            gold = parse(f"${reference}$", parsing_timeout=timeout)  # math-verify reads gold as LaTeX in $...$
            pred = parse(completion, parsing_timeout=timeout)
            verdicts.append(verify(gold, pred, timeout_seconds=timeout))
            seconds.append(time.perf_counter() - t0)
        total = time.perf_counter() - started
    finally:
        os.sched_setaffinity(0, affinity)
    return total, seconds, verdicts


async def service(url: str, items: list[tuple[str, str]], batch_size: int, concurrency: int) -> tuple[float, list]:
    batches = [
        [{"task": "math", "completion": c, "reference": r} for c, r in items[i : i + batch_size]]
        for i in range(0, len(items), batch_size)
    ]
    gate = asyncio.Semaphore(concurrency)
    async with httpx.AsyncClient(base_url=url, timeout=600) as client:

        async def send(batch: list[dict]) -> list[dict]:
            async with gate:
                response = await client.post("/v1/rewards", json={"items": batch})
                response.raise_for_status()
                return response.json()["results"]

        started = time.perf_counter()
        answers = await asyncio.gather(*(send(b) for b in batches))
        total = time.perf_counter() - started
    return total, [result for batch in answers for result in batch]


def percentile(values: list[float], q: float) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[q - 1] if len(values) > 1 else values[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--items", type=int, default=3000)
    parser.add_argument("--batch-size", type=int, default=256)
    parser.add_argument("--concurrency", type=int, default=2, help="batches in flight at once")
    parser.add_argument("--deadline", type=float, default=2.0, help="per-item deadline, both sides (s)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    items = make_items(args.items, seed=args.seed)
    print(f"{len(items)} items, deadline {args.deadline}s, {os.cpu_count()} cores")

    with LocalServer(
        REWARD_API_ITEM_DEADLINE_S=str(args.deadline), REWARD_API_CACHE_ENTRIES="0", REWARD_API_LOG_LEVEL="warning"
    ) as server:
        asyncio.run(service(server.url, items[:64], args.batch_size, 1))  # warm-up: lazy imports, connections
        service_s, results = asyncio.run(service(server.url, items, args.batch_size, args.concurrency))

    baseline_s, baseline_lat, baseline_verdicts = baseline_math_verify(items, args.deadline)

    service_lat = [r["details"].get("seconds", 0.0) for r in results]
    statuses = {s: sum(r["status"] == s for r in results) for s in ("ok", "timeout", "error", "invalid")}
    ours = [r["reward"] == 1.0 for r in results]
    disagree = sum(a != b for a, b in zip(ours, baseline_verdicts, strict=True))
    base_rate, service_rate = len(items) / baseline_s, len(items) / service_s

    print(f"math-verify, in-process, 1 core : {base_rate:8.1f} items/s  ({baseline_s:.1f}s)")
    print(f"service, HTTP, batches of {args.batch_size:<4}: {service_rate:8.1f} items/s  ({service_s:.1f}s)")
    print(f"ratio service / math-verify     : {service_rate / base_rate:8.2f}x")
    for name, lat in (("math-verify", baseline_lat), ("service", service_lat)):
        p50, p99, top = (percentile(lat, 50) * 1e3, percentile(lat, 99) * 1e3, max(lat) * 1e3)
        print(f"{name:12s} item latency  p50 {p50:7.1f} ms   p99 {p99:7.1f} ms   max {top:7.1f} ms")
    print(f"service statuses: {statuses}; verdicts differing from math-verify: {disagree}")
    slow = [s for s in baseline_lat if s >= 0.9 * max(1, round(args.deadline))]
    if slow:
        rest_rate = (len(items) - len(slow)) / (baseline_s - sum(slow))
        print(
            f"math-verify spent {sum(slow):.1f}s on {len(slow)} items that hit its timeout; without them it grades "
            f"{rest_rate:.1f} items/s (service ratio {service_rate / rest_rate:.2f}x)"
        )


if __name__ == "__main__":
    main()
