"""Scaling out: items/s of a fixed math workload for 1, 2 and 3 reward-api replicas behind HAProxy (and Ray Serve),
as ratios to one local service measured in the same run, plus what the balancer costs.

Setups, each graded the same way (RewardClient, the trainer's client: `--batch-size` items per request,
`--concurrency` requests in flight, enough to keep 3 replicas busy):
  local:        one `reward-api serve` (LocalServer) with `--workers` grading workers: the baseline;
  HAProxy x N:  docker-compose.yml's reward-api replicas (each with `--workers`) behind its HAProxy, started as
                processes on loopback (tests/compose_stack.py); 3, then 2, then 1 replica (a replica stopped
                between phases; HAProxy routes around it once its health check says DOWN);
  direct:       the last replica alone, without the balancer: throughput and the latency of one-item requests
                against the same through HAProxy are the balancer's overhead;
  Ray Serve:    2 replicas (each with `--workers`) of services/ray/serve.yaml on a local two-node Ray cluster
                (reward_api/ray_serve.py local_serve_cluster), through Serve's HTTP proxy; `--no-ray` skips it.
Every phase grades items nobody graded before (bench/math_items.py with a seed per run; the result cache is off
too), after an untimed warm-up of its own, `--repeats` times: the fastest run counts, since other work on the
machine only ever slows a run down (the load average is printed with each run).

Cores: each setup's service processes (servers, grading workers, HAProxy) are read from /proc before and after a
phase: their CPU seconds over the phase's wall time are the cores it kept busy. Efficiency per core is items per
busy core-second against the baseline's. This machine's cores bound every figure: with 2 cores, replicas past
2 x `--workers` grading processes add no throughput, only contention; the report says so.

    .venv/bin/python bench/scale.py [--items 10000] [--workers 1] [--quick] [--no-ray]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx
from tqdm import tqdm

sys.path.insert(0, str(Path(__file__).resolve().parent))  # math_items
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/compose_stack.py
from math_items import make_items
from proc_tree import CLOCK_TICKS, descendants, processes

from reward_api.local import LocalServer
from tests.compose_stack import ComposeStack
from trainer_client.client import RewardClient

if TYPE_CHECKING:  # Ray is optional: only its phase imports it
    from reward_api.ray_serve import LocalServeCluster

REPLICAS = ["reward-api-1", "reward-api-2", "reward-api-3"]
LATENCY_REQUESTS = 200  # one-item requests timed one after another, direct and through the balancer
RAY_REPLICAS = 2  # Serve's replicas: as many as this machine's cores hold (compare with HAProxy -> 2)


@dataclass(frozen=True)
class Row:
    key: str  # its name in the summary line
    setup: str
    workers: int  # grading workers in all
    items_per_s: float
    busy_cores: float  # CPU seconds of the setup's processes per second of the phase
    grading_cores: float  # ... of those in grading workers; the rest is serving: HTTP, JSON, balancer, Ray

    def per_core(self) -> float:
        return self.items_per_s / self.busy_cores if self.busy_cores > 0 else float("nan")


# ------------------------------------------------------------------------------ CPU of process trees

# A grading pool's processes: the forkserver that preloads the graders, and the workers it forks (same command line);
# Ray's dashboard runs its modules from a forkserver too (with this checkout on its path), so the preload marks ours.
POOL_MARKERS = (b"multiprocessing.forkserver", b"reward_api.prewarm")


def cpu_seconds(roots: Iterable[int]) -> tuple[float, float]:
    """CPU seconds used so far by `roots` and all their descendants: (in grading pools, in all)."""
    table = processes()
    tree = [table[pid] for pid in [*(pid for pid in roots if pid in table), *descendants(table, roots)]]
    grading = sum(p.ticks for p in tree if all(marker in p.cmdline for marker in POOL_MARKERS))
    return grading / CLOCK_TICKS, sum(p.ticks for p in tree) / CLOCK_TICKS


# ------------------------------------------------------------------------------ load


def math_workload(count: int, seed: int) -> list[dict[str, Any]]:
    """`count` distinct math items (no pathological ones: they would measure the deadline, not the replicas)."""
    return [
        {"task": "math", "completion": completion, "reference": reference}
        for completion, reference in make_items(count, seed=seed, pathological_share=0)
    ]


async def _grade(url: str, items: list[dict[str, Any]], args: argparse.Namespace, label: str) -> float:
    """Seconds to grade `items` through RewardClient; every item must come back `ok`."""
    chunk = args.batch_size * args.concurrency
    async with RewardClient(url, batch_size=args.batch_size, max_concurrency=args.concurrency) as client:
        started = time.perf_counter()
        tasks = [client.grade(items[i : i + chunk]) for i in range(0, len(items), chunk)]
        with tqdm(total=len(items), desc=label, unit="item", leave=False, disable=args.quiet) as progress:
            for done in asyncio.as_completed(tasks):
                results = await done
                if bad := [r for r in results if not r.ok]:
                    raise RuntimeError(f"{label}: {len(bad)} items not graded, e.g. {bad[0]}")
                progress.update(len(results))
        return time.perf_counter() - started


def measure(
    key: str, setup: str, url: str, pids: Sequence[int], workers: int, seed: int, args: argparse.Namespace
) -> Row:
    """Warm up, then grade `args.items` fresh items `args.repeats` times; the fastest run (other work on the
    machine only slows a run down) with the cores the setup's processes (the trees under `pids`) kept busy."""
    asyncio.run(_grade(url, math_workload(args.batch_size * args.concurrency, seed=10_000 + seed), args, "warm-up"))
    runs = []
    for repeat in range(args.repeats):
        items = math_workload(args.items, seed=seed * 100 + repeat)
        grading_before, all_before = cpu_seconds(pids)
        seconds = asyncio.run(_grade(url, items, args, setup))
        grading_after, all_after = cpu_seconds(pids)
        busy, grading = (all_after - all_before) / seconds, (grading_after - grading_before) / seconds
        runs.append(Row(key, setup, workers, len(items) / seconds, busy, grading))
        tqdm.write(
            f"{setup:28s} {runs[-1].items_per_s:8.1f} items/s  {busy:4.2f} cores busy"
            f"  (load average {os.getloadavg()[0]:.1f})"
        )
    return max(runs, key=lambda row: row.items_per_s)


def one_item_latency_ms(urls: Sequence[str], count: int) -> list[float]:
    """Median round trip of a one-item request (a distinct item each time) to each URL, sent one after another,
    taking turns so that other work on the machine slows every URL alike."""
    seconds: list[list[float]] = [[] for _ in urls]
    with httpx.Client(timeout=60) as client:
        for number, item in enumerate(math_workload(count * len(urls), seed=20_000)):
            which = number % len(urls)
            started = time.perf_counter()
            client.post(f"{urls[which]}/v1/rewards", json={"items": [item]}).raise_for_status()
            seconds[which].append(time.perf_counter() - started)
    return [statistics.median(each) * 1e3 for each in seconds]


# ------------------------------------------------------------------------------ setups


def baseline(args: argparse.Namespace, settings: dict[str, str]) -> Row:
    with LocalServer(**settings) as server:
        assert server.process is not None
        pids = [server.process.pid]
        return measure("local", f"local, {args.workers} worker(s)", server.url, pids, args.workers, 1, args)


def behind_haproxy(args: argparse.Namespace, settings: dict[str, str]) -> tuple[list[Row], float, float]:
    """Rows for 3, 2, 1 replicas behind HAProxy, the last replica direct, and one-item latencies (direct, LB)."""
    rows = []
    with ComposeStack([*REPLICAS, "lb"], overrides={"reward-api-*": settings}) as stack:
        lb = stack["lb"]
        for count in (3, 2, 1):
            up = REPLICAS[:count]
            pids = [stack[name].process.pid for name in [*up, "lb"]]  # type: ignore[union-attr]
            setup = f"HAProxy -> {count} replica(s)"
            rows.append(measure(f"lb{count}", setup, lb.url, pids, args.workers * count, 1 + count, args))
            if count > 1:  # the next phase runs without the last replica: HAProxy routes around it
                stack.kill(REPLICAS[count - 1])
                stack.wait_lb_status(REPLICAS[count - 1], "DOWN")
        alone = stack[REPLICAS[0]]
        pids = [alone.process.pid]  # type: ignore[union-attr]
        rows.append(measure("direct", "1 replica direct, no LB", alone.url, pids, args.workers, 5, args))
        direct_ms, via_lb_ms = one_item_latency_ms([alone.url, lb.url], args.latency_requests)
    return rows, direct_ms, via_lb_ms


def through_ray_serve(args: argparse.Namespace, settings: dict[str, str]) -> Row:
    """RAY_REPLICAS replicas of `--workers` on a local two-node Ray cluster (reward_api/ray_serve.py), deployed
    with `serve deploy` as users do, graded through Serve's HTTP proxy."""
    from reward_api.ray_serve import local_serve_cluster  # Ray is optional: only this phase needs it

    tqdm.write("starting a local Ray cluster and deploying the service (a minute or more on a busy machine) ...")
    with local_serve_cluster(replicas=RAY_REPLICAS, cpus_per_replica=args.workers, settings=settings) as cluster:
        setup = f"Ray Serve -> {RAY_REPLICAS} replica(s)"
        pids = ray_cluster_pids(cluster)
        return measure(f"ray{RAY_REPLICAS}", setup, cluster.url, pids, args.workers * RAY_REPLICAS, 6, args)


def ray_cluster_pids(cluster: LocalServeCluster) -> list[int]:
    """The roots of a local Ray cluster's process trees: its daemons (GCS, raylets, dashboard) name the cluster's
    temporary folder; the Serve controller, proxies and replicas are the raylets' workers, so the daemons' trees
    hold everything the cluster spends."""
    folder = str(cluster.config_path.parent).encode()
    return [pid for pid, process in processes().items() if folder in process.cmdline]


# ------------------------------------------------------------------------------ report


def report(rows: list[Row], direct_ms: float, via_lb_ms: float, args: argparse.Namespace) -> None:
    base = rows[0]
    cores = os.cpu_count() or 1
    print(f"\n{args.items} distinct math items per phase, batches of {args.batch_size}, {args.concurrency} in flight;")
    print(f"{args.workers} grading worker(s) per replica; {cores} cores on this machine\n")
    print(f"{'setup':28s} {'workers':>7s} {'items/s':>9s} {'ratio':>6s} {'busy cores':>10s} {'grading':>7s}", end="")
    print(f" {'serving':>7s} {'per core':>9s} {'eff/core':>8s}")
    for row in rows:
        print(
            f"{row.setup:28s} {row.workers:7d} {row.items_per_s:9.1f} {row.items_per_s / base.items_per_s:6.2f}"
            f" {row.busy_cores:10.2f} {row.grading_cores:7.2f} {row.busy_cores - row.grading_cores:7.2f}"
            f" {row.per_core():9.1f}"
            f" {row.per_core() / base.per_core():8.2f}"
        )
    by_key = {row.key: row for row in rows}
    lb_one, direct = by_key["lb1"], by_key["direct"]
    print(
        f"\nbalancer overhead: 1 replica direct {direct.items_per_s:.1f} items/s, through HAProxy"
        f" {lb_one.items_per_s:.1f} items/s ({lb_one.items_per_s / direct.items_per_s - 1:+.1%});"
        f" one-item request p50 {direct_ms:.2f} ms direct, {via_lb_ms:.2f} ms through HAProxy"
        f" ({via_lb_ms - direct_ms:+.2f} ms)"
    )
    print(
        f"scaling stops at the cores: {cores} cores hold {cores // max(args.workers, 1)} replica(s) of"
        f" {args.workers} worker(s); more replicas on them only share the same cores"
    )
    ratios = " ".join(f"{row.key}={row.items_per_s / base.items_per_s:.2f}" for row in rows[1:])
    print(f"summary: items/s ratio to local: {ratios}; lb overhead {lb_one.items_per_s / direct.items_per_s - 1:+.1%}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--items", type=int, default=10000, help="distinct items graded per phase")
    parser.add_argument("--workers", type=int, default=1, help="grading workers per replica and of the baseline")
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--concurrency", type=int, default=6, help="requests in flight (2 per replica at 3)")
    parser.add_argument("--latency-requests", type=int, default=LATENCY_REQUESTS)
    parser.add_argument("--quick", action="store_true", help="a smoke run: few items, every phase")
    parser.add_argument("--repeats", type=int, default=2, help="timed runs per setup; the fastest counts")
    parser.add_argument("--quiet", action="store_true", help="no progress bars")
    parser.add_argument("--no-ray", action="store_true", help="skip Ray Serve (its local cluster takes a minute)")
    args = parser.parse_args()
    if args.quick:
        args.items, args.latency_requests, args.repeats = 300, 20, 1
    # Every replica and the baseline alike: no result cache (every item is fresh anyway), quiet logs.
    settings = {
        "REWARD_API_WORKERS": str(args.workers),
        "REWARD_API_CACHE_ENTRIES": "0",
        # Items that look costly go to a heavy lane, at nice 19 once slow; on a shared machine other users'
        # processes starve it, and the figures would measure them. Every worker here is a normal one.
        "REWARD_API_HEAVY_WORKERS": "0",
        "REWARD_API_LOG_LEVEL": "warning",
    }
    print(
        f"load average before the run: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores (other work lowers figures)"
    )
    rows = [baseline(args, settings)]
    lb_rows, direct_ms, via_lb_ms = behind_haproxy(args, settings)
    rows += lb_rows
    if not args.no_ray:
        rows.append(through_ray_serve(args, settings))
    report(rows, direct_ms, via_lb_ms, args)


if __name__ == "__main__":
    main()
