"""Memory soak: does the result cache's configured size bound what the service really holds?

The real service (`reward-api serve` on loopback, one worker per core) with a result cache bounded by bytes
(`--cache-mb`; the entry bound set out of the way) gets distinct mixed items (bench/load.py's normal stream:
math, sort, code) from `--concurrency` clients until `reward_cache_bytes` reaches the bound, then the same for
`--after-s` more seconds, evicting all the while. It prints the server process's resident memory (RSS, from
/proc) against the idle baseline (after a warm-up), as a ratio to the configured size (aim: at most 1.3), and
the growth per 10 minutes after the cache filled (a least-squares slope over samples every few seconds).

    .venv/bin/python bench/cache_soak.py [--cache-mb 32] [--after-s 180] [--root OTHER_CHECKOUT]

`--root` runs the service from another checkout (e.g. a worktree of an older commit) for a before/after.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from front_cpu import isolated_path
from load import NormalItems, memory

from reward_api.local import LocalServer
from tests.scrape import metric

SAMPLE_EVERY_S = 5.0


@dataclass
class Sample:
    at_s: float
    rss_mb: float
    cache_mb: float
    entries: int


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cache-mb", type=float, default=32.0, help="REWARD_API_CACHE_MB of the service")
    parser.add_argument("--after-s", type=float, default=180.0, help="seconds of load after the cache filled")
    parser.add_argument("--fill-timeout-s", type=float, default=900.0, help="give up filling after this long")
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument("--batch-size", type=int, default=256)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--root", type=Path, help="run the service from this checkout instead of this one")
    return parser.parse_args()


async def _load(url: str, items: NormalItems, batch_size: int, stop: asyncio.Event) -> int:
    """Post batches back to back until `stop`; the items answered."""
    answered = 0
    async with httpx.AsyncClient(base_url=url, timeout=None) as client:
        while not stop.is_set():
            response = await client.post("/v1/rewards", json={"items": items.batch(batch_size)})
            response.raise_for_status()
            answered += len(response.json()["results"])
    return answered


def sample(server: LocalServer, started: float) -> Sample:
    assert server.process is not None
    return Sample(
        at_s=time.perf_counter() - started,
        rss_mb=memory(server.process.pid).server_mb,
        cache_mb=metric(server, "reward_cache_bytes") / 2**20,
        entries=int(metric(server, "reward_cache_entries")),
    )


async def soak(server: LocalServer, args: argparse.Namespace) -> tuple[Sample, list[Sample], int]:
    """Fill the cache, then keep loading: the sample when it filled, every sample after, the items answered."""
    items, stop = NormalItems(args.seed), asyncio.Event()
    loaders = [asyncio.create_task(_load(server.url, items, args.batch_size, stop)) for _ in range(args.concurrency)]
    started = time.perf_counter()
    full: Sample | None = None
    after: list[Sample] = []
    try:
        while True:
            await asyncio.sleep(SAMPLE_EVERY_S)
            now = await asyncio.to_thread(sample, server, started)
            print(
                f"\r{now.at_s:6.0f}s  RSS {now.rss_mb:6.1f} MB  cache {now.cache_mb:5.1f}/{args.cache_mb:g} MB "
                f"({now.entries} entries)",
                end="", file=sys.stderr, flush=True,
            )  # fmt: skip
            if full is None:
                if now.cache_mb >= 0.97 * args.cache_mb:
                    full = now
                elif now.at_s > args.fill_timeout_s:
                    sys.exit(f"\nthe cache did not fill in {args.fill_timeout_s:g}s: {now}")
            else:
                after.append(now)
                if now.at_s - full.at_s >= args.after_s:
                    break
    finally:
        stop.set()
        answered = sum(await asyncio.gather(*loaders))
    print(file=sys.stderr)
    return full, after, answered


def slope_per_10_min(samples: list[Sample]) -> float:
    """RSS growth in MB per 10 minutes: the least-squares slope over `samples`."""
    if len(samples) < 2:
        return float("nan")
    return statistics.linear_regression([s.at_s for s in samples], [s.rss_mb for s in samples]).slope * 600


def main() -> None:
    args = parse_args()
    settings = {"REWARD_API_CACHE_MB": str(args.cache_mb), "REWARD_API_CACHE_ENTRIES": "100000000"}
    launcher = None
    if args.root:  # -P: the working directory not first on sys.path, so PYTHONPATH's tree wins
        settings["PYTHONPATH"] = str(args.root.resolve())
        launcher = isolated_path
    with LocalServer(launcher=launcher, **settings) as server:
        assert server.process is not None
        asyncio.run(_warm_up(server.url, NormalItems(args.seed + 1), args))
        idle = sample(server, time.perf_counter())
        full, after, answered = asyncio.run(soak(server, args))
    end = after[-1]
    growth = full.rss_mb - idle.rss_mb
    print(f"service from {args.root or 'this checkout'}; cache bound {args.cache_mb:g} MB; {answered} items answered")
    print(f"{'':28s}{'RSS MB':>10s}{'cache MB':>10s}{'entries':>10s}")
    for name, s in (("idle (after warm-up)", idle), (f"cache full ({full.at_s:.0f} s)", full), ("end", end)):
        print(f"{name:28s}{s.rss_mb:10.1f}{s.cache_mb:10.1f}{s.entries:10d}")
    print(
        f"RSS growth to a full cache: {growth:.1f} MB = {growth / args.cache_mb:.2f}x the configured size (aim <= 1.3)"
    )
    print(f"RSS at the end: {(end.rss_mb - idle.rss_mb) / args.cache_mb:.2f}x the configured size above idle")
    late = after[len(after) // 2 :]  # past one-time steps such as the index's dict table doubling
    print(
        f"RSS growth after it filled: {slope_per_10_min(after):+.1f} MB per 10 minutes over {end.at_s - full.at_s:.0f}"
        f" s; {slope_per_10_min(late):+.1f} MB per 10 minutes over its last {end.at_s - late[0].at_s:.0f} s"
    )


async def _warm_up(url: str, items: NormalItems, args: argparse.Namespace, rounds: int = 4) -> None:
    """Lazy imports, first sandboxes, and the buffers of `--concurrency` requests in flight (what serving this
    load holds besides the cache) before the baseline is read."""
    async with httpx.AsyncClient(base_url=url, timeout=None) as client:
        for _ in range(rounds):
            responses = await asyncio.gather(
                *(
                    client.post("/v1/rewards", json={"items": items.batch(args.batch_size)})
                    for _ in range(args.concurrency)
                )
            )
            for response in responses:
                response.raise_for_status()


if __name__ == "__main__":
    main()
