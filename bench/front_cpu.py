"""Front CPU: what one replica's HTTP process (HTTP, validation, dispatch) spends per item next to its grading
workers, on cheap math items (integers boxed, short completions), where the front is what caps a replica.

`reward-api serve` on loopback (`--workers` grading workers, cache off) grades `--items` distinct items sent in
batches of `--batch-size`, `--concurrency` in flight (pre-encoded bodies, so the client costs little of the
machine's CPU). CPU seconds are read from /proc before and after: the server process is the front, everything
it started (the forkserver and its workers) the workers. Prints CPU seconds per 1,000 items in each, the front's
share of the total, and items/s.

`--baseline-root DIR` runs the same against the service in another source tree (e.g. `git worktree add
/tmp/front_base HEAD` before a change) in the same run, phases taking turns, and prints after / before ratios.
`--ray` adds the same items through Ray Serve (one replica of services/ray/serve.yaml with `--workers` CPUs on
a local cluster, reward_api/ray_serve.py), with CPU per item of every process of the cluster (its proxy, Serve
controller and daemons count as serving) against the plain service's; with `--baseline-root`, from both trees.
Each setup is first watched idle for `--idle-s`: what it burns doing nothing (Ray's daemons: GCS, raylets, agents,
dashboard, a cost per cluster whatever the load) is printed, and CPU per item is given both in all and above that.

    .venv/bin/python bench/front_cpu.py [--items 20000] [--baseline-root /tmp/front_base] [--ray]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import random
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import httpx
import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent))  # scale.py, proc_tree.py
from scale import cpu_seconds, ray_cluster_pids

from reward_api.local import LocalServer


@dataclass(frozen=True)
class Figures:
    label: str
    items: int
    seconds: float
    front_cpu_s: float  # serving: HTTP, JSON, validation, dispatch (and for Ray, its proxy and daemons)
    workers_cpu_s: float  # grading pools
    idle_cpu_s: float  # what the setup burns idle over as long (Ray's daemons: a cost per cluster, not per item)

    @property
    def items_per_s(self) -> float:
        return self.items / self.seconds

    def per_1k(self, cpu_s: float) -> float:
        return cpu_s / self.items * 1000

    @property
    def total_cpu_s(self) -> float:
        return self.front_cpu_s + self.workers_cpu_s

    @property
    def busy_cpu_s(self) -> float:
        return self.total_cpu_s - self.idle_cpu_s

    @property
    def front_share(self) -> float:
        return self.front_cpu_s / self.total_cpu_s


def cheap_items(count: int, seed: int) -> list[dict[str, str]]:
    """`count` distinct math items whose grading is cheap: an integer in \\boxed{}, right half the time."""
    rng = random.Random(seed)
    items = []
    for number in rng.sample(range(10**9), count):
        answer = number if rng.random() < 0.5 else number + 1
        completion = f"<think>Adding up the terms gives {answer}.</think> The answer is \\boxed{{{answer}}}."
        items.append({"task": "math", "completion": completion, "reference": str(number)})
    return items


def bodies(items: list[dict[str, str]], batch_size: int) -> list[bytes]:
    return [orjson.dumps({"items": items[i : i + batch_size]}) for i in range(0, len(items), batch_size)]


async def post_all(url: str, requests: Sequence[bytes], concurrency: int) -> float:
    """Seconds to send every body to `url`/v1/rewards, `concurrency` at once; every result must be `ok`."""
    gate = asyncio.Semaphore(concurrency)
    headers = {"content-type": "application/json"}
    limits = httpx.Limits(max_connections=concurrency)
    async with httpx.AsyncClient(base_url=url, timeout=600, limits=limits) as client:

        async def send(body: bytes) -> None:
            async with gate:
                response = await client.post("/v1/rewards", content=body, headers=headers)
            response.raise_for_status()
            bad = [r for r in orjson.loads(response.content)["results"] if r["status"] != "ok"]
            if bad:
                raise RuntimeError(f"{len(bad)} items not graded `ok`, e.g. {bad[0]}")

        started = time.perf_counter()
        await asyncio.gather(*(send(body) for body in requests))
        return time.perf_counter() - started


def measure(
    label: str, url: str, cpu: Callable[[], tuple[float, float]], seed: int, args: argparse.Namespace
) -> Figures:
    """Warm up, then grade `args.items` fresh items; `cpu()` gives (grading, all) CPU seconds of the setup so far."""
    asyncio.run(post_all(url, bodies(cheap_items(args.batch_size * args.concurrency, seed + 1), args.batch_size), 2))
    requests = bodies(cheap_items(args.items, seed), args.batch_size)
    _, idle_before = cpu()
    time.sleep(args.idle_s)
    grading_before, all_before = cpu()
    idle_rate = (all_before - idle_before) / args.idle_s
    seconds = asyncio.run(post_all(url, requests, args.concurrency))
    grading_after, all_after = cpu()
    grading = grading_after - grading_before
    figures = Figures(label, args.items, seconds, all_after - all_before - grading, grading, idle_rate * seconds)
    print(
        f"  {label:34s} {figures.items_per_s:8.0f} items/s  front {figures.per_1k(figures.front_cpu_s):6.3f}"
        f"  workers {figures.per_1k(figures.workers_cpu_s):6.3f} CPU s/1k items"
        f"  (idle {idle_rate:.2f} cores; load average {os.getloadavg()[0]:.1f})",
        flush=True,
    )
    return figures


def _settings(args: argparse.Namespace) -> dict[str, str]:
    """Every setup alike: `--workers` normal workers (no heavy lane: every item here is cheap), no cache."""
    return {
        "REWARD_API_WORKERS": str(args.workers),
        "REWARD_API_HEAVY_WORKERS": "0",
        "REWARD_API_CACHE_ENTRIES": "0",
        "REWARD_API_LOG_LEVEL": "warning",
    }


def plain(label: str, root: Path | None, seed: int, args: argparse.Namespace) -> Figures:
    """`reward-api serve` from `root` (this checkout when None)."""
    settings = _settings(args)
    launcher = None
    if root is not None:  # -P: no script folder first on sys.path, so PYTHONPATH's tree wins over the editable one
        settings["PYTHONPATH"] = str(root)
        launcher = isolated_path
    with LocalServer(launcher=launcher, **settings) as server:
        assert server.process is not None
        pid = server.process.pid
        return measure(label, server.url, lambda: cpu_seconds([pid]), seed, args)


def isolated_path(argv: list[str], env: dict[str, str]) -> list[str]:
    """A LocalServer launcher for a service from another tree: -P, no working directory first on sys.path."""
    return [argv[0], "-P", *argv[1:]]


def through_ray(label: str, root: Path | None, seed: int, args: argparse.Namespace) -> Figures:
    """One replica of services/ray/serve.yaml with `--workers` CPUs on a local cluster, its code from `root` (this
    checkout when None): Ray's workers put the folder `ray start` ran in first on their path, then PYTHONPATH."""
    from reward_api.ray_serve import local_serve_cluster  # Ray is optional: only this phase needs it

    print(f"  {label}: starting a local Ray cluster (a minute or more) ...", flush=True)
    saved = os.environ.get("PYTHONPATH")
    if root is not None:
        os.environ["PYTHONPATH"] = str(root)
    try:
        with (
            contextlib.chdir(root or Path.cwd()),
            local_serve_cluster(replicas=1, cpus_per_replica=args.workers, settings=_settings(args)) as cluster,
        ):
            pids = ray_cluster_pids(cluster)
            return measure(label, cluster.url, lambda: cpu_seconds(pids), seed, args)
    finally:
        if root is not None:
            os.environ.pop("PYTHONPATH")
            if saved is not None:
                os.environ["PYTHONPATH"] = saved


def summary(name: str, runs: list[Figures]) -> Figures:
    """The fastest of a setup's runs: other work on the machine only ever slows a run down."""
    best = max(runs, key=lambda f: f.items_per_s)
    print(
        f"{name:10s} front {best.per_1k(best.front_cpu_s):6.3f}  workers {best.per_1k(best.workers_cpu_s):6.3f}"
        f"  total {best.per_1k(best.total_cpu_s):6.3f} ({best.per_1k(best.busy_cpu_s):6.3f} above idle) CPU s/1k items;"
        f"  front share {best.front_share:5.1%};"
        f"  {best.items_per_s:7.0f} items/s"
    )
    return best


def _per_item_ratio(a: Figures, b: Figures, cpu: str) -> float:
    return a.per_1k(getattr(a, cpu)) / b.per_1k(getattr(b, cpu))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--items", type=int, default=20000)
    parser.add_argument("--batch-size", type=int, default=256)
    parser.add_argument("--concurrency", type=int, default=4, help="batches in flight at once")
    parser.add_argument("--workers", type=int, default=2, help="grading workers")
    parser.add_argument("--repeats", type=int, default=2, help="runs per setup, taking turns; the fastest counts")
    parser.add_argument("--baseline-root", type=Path, help="a source tree to measure the same way as the baseline")
    parser.add_argument("--ray", action="store_true", help="also through Ray Serve (a local cluster)")
    parser.add_argument("--idle-s", type=float, default=5.0, help="seconds each setup is watched idle first")
    args = parser.parse_args()
    print(
        f"{args.items} cheap math items, batches of {args.batch_size}, {args.concurrency} in flight, "
        f"{args.workers} workers, cache off; {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}"
    )
    after_runs, before_runs = [], []
    for repeat in range(args.repeats):
        if args.baseline_root is not None:
            before_runs.append(plain(f"before ({args.baseline_root})", args.baseline_root, 100 * repeat + 1, args))
        after_runs.append(plain("after (this tree)", None, 100 * repeat + 2, args))
    after = summary("after", after_runs)
    if before_runs:
        before = summary("before", before_runs)
        print(
            f"after / before: items/s {after.items_per_s / before.items_per_s:.2f}x;  front CPU per item"
            f" {_per_item_ratio(after, before, 'front_cpu_s'):.2f}x;  total CPU per item"
            f" {_per_item_ratio(after, before, 'total_cpu_s'):.2f}x"
        )
    if not args.ray:
        return
    ray = summary("ray after", [through_ray("Ray Serve after (this tree)", None, 1000, args)])
    _ray_ratio(ray, after)
    if before_runs:
        ray_before = summary("ray before", [through_ray(f"Ray Serve before ({args.baseline_root})",
                                                        args.baseline_root, 1001, args)])  # fmt: skip
        _ray_ratio(ray_before, before)


def _ray_ratio(ray: Figures, plain: Figures) -> None:
    print(
        f"Ray Serve / plain service ({ray.label}): CPU per item {_per_item_ratio(ray, plain, 'total_cpu_s'):.2f}x;"
        f"  above what each burns idle {_per_item_ratio(ray, plain, 'busy_cpu_s'):.2f}x;"
        f"  serving CPU per item {_per_item_ratio(ray, plain, 'front_cpu_s'):.2f}x"
    )


if __name__ == "__main__":
    main()
