"""Hard math grading throughput: math-verify in-process on one core vs the HTTP service, cold and warm.

Items are competition-style answers that need more than a number comparison (sets, intervals,
equations, symbolic expressions, labelled and Unicode forms): every correct answer of the
project's tables (tests/math_collected_cases.py, tests/test_math_hard_forms.py, the hard rows of
bench/math_items.py) and its wrong twin, boxed at the end of an R1-style chain of thought. Each
is repeated in a cosmetic variant (a thin space or `\\displaystyle` the grader cleans away), so
that a repeat misses the answer-level caches, as another sample of the same group would.

    (a) math-verify, in this process, pinned to one core, its timers at the service's deadline;
    (b) the service (`reward-api serve` on loopback, 2 workers, cache off), started fresh and warmed
        up on easy items only: cold, the first pass over the hard items; warm, a second pass.

Prints items/s for each, the ratios to math-verify and per worker core, latency percentiles, and
the service's worker time by the method that decided each item (`details.accuracy.method`). On a
machine shared with other work, wall-clock rates swing between runs; items per CPU-second (the
service's: every process under `reward-api serve`, read from /proc) are the steadier comparison.

    .venv/bin/python bench/math_hard_throughput.py [--items 1300] [--workers 2] [--deadline 2]
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import random
import sys
import time
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from math_items import HARD, make_items
from math_throughput import percentile, service
from scale import cpu_seconds

from reward_api.local import LocalServer
from tests.math_collected_cases import ACCEPTED_TODAY, CASES
from tests.test_math_hard_forms import FAMILIES

Reference = str | list[str]

COT = (
    "Let me think about this step by step. I restate the problem, name the unknowns and set up the "
    "relations between them. Then I solve, simplify, and check every candidate against the constraints, "
    "discarding those that fail. "
)
# Written around an answer, cleaned away by the grader: a repeat is the same answer in other text. Answers
# in CJK prose repeat as they are (spacing commands there would end the prose the grader strips).
VARIANTS = ("{}", "{}\\,", "\\displaystyle {}")


def hard_pairs() -> list[tuple[str, Reference]]:
    """(answer, reference) for every correct answer and its wrong twin of the project's hard tables."""
    rows = [(c.answer, c.reference, c.wrong) for c in (*CASES, *ACCEPTED_TODAY)]
    rows += [row for family in FAMILIES.values() for row in family]
    rows += [(right, reference, wrong) for reference, right, wrong in HARD]
    return [(answer, _listed(ref)) for answer, ref, wrong in rows for answer in (answer, wrong)]


def _listed(reference: str | tuple[str, ...] | list[str]) -> Reference:
    return reference if isinstance(reference, str) else list(reference)


def make_hard_items(count: int, seed: int = 0) -> list[tuple[str, Reference]]:
    """`count` (completion, reference) items: the hard pairs in turn, each pass in its next variant, shuffled."""
    rng = random.Random(seed)
    pairs = hard_pairs()
    items = []
    for index in range(count):
        answer, reference = pairs[index % len(pairs)]
        variant = VARIANTS[index // len(pairs) % len(VARIANTS)] if answer.isascii() else "{}"
        items.append((completion(variant.format(answer), rng, index), reference))
    rng.shuffle(items)
    return items


def completion(answer: str, rng: random.Random, case: int) -> str:
    thinking = f"Problem {case}. " + COT * rng.randint(4, 24)
    return f"<think>{thinking}</think>\nSo the final answer is $\\boxed{{{answer}}}$."


@dataclass
class Pass:
    """One pass over the items: wall seconds, CPU seconds spent on it, and a result per item."""

    seconds: float
    cpu_seconds: float
    results: list[dict]


def math_verify_pass(items: list[tuple[str, Reference]], deadline_s: float) -> tuple[Pass, list[float]]:
    """math-verify pinned to one core; a list reference's items all go into `gold`, as bench/math_hard_forms.py.
    Results are `{"reward": 0 or 1}`; the latencies come second."""
    from math_verify import parse, verify

    logging.getLogger("math_verify").setLevel(logging.CRITICAL)  # it logs each timeout with the whole completion
    timeout = max(1, round(deadline_s))  # math-verify takes whole seconds
    seconds, results = [], []
    affinity = os.sched_getaffinity(0)
    os.sched_setaffinity(0, {min(affinity)})
    try:
        started, cpu_started = time.perf_counter(), time.process_time()
        for text, reference in items:
            t0 = time.perf_counter()
            references = [reference] if isinstance(reference, str) else reference
            gold = [found for ref in references for found in parse(f"${ref}$", parsing_timeout=timeout)]
            pred = parse(text, parsing_timeout=timeout)
            results.append({"reward": float(verify(gold, pred, timeout_seconds=timeout))})
            seconds.append(time.perf_counter() - t0)
        done = Pass(time.perf_counter() - started, time.process_time() - cpu_started, results)
    finally:
        os.sched_setaffinity(0, affinity)
    return done, seconds


def service_pass(server: LocalServer, items: list[tuple[str, Reference]], args: argparse.Namespace) -> Pass:
    """The items through `POST /v1/rewards`; CPU is the whole service's (HTTP process, forkserver, workers)."""
    assert server.process is not None
    cpu_before = cpu_seconds([server.process.pid])[1]
    seconds, results = asyncio.run(service(server.url, items, args.batch_size, args.concurrency))
    return Pass(seconds, cpu_seconds([server.process.pid])[1] - cpu_before, results)


def by_method(results: list[dict]) -> dict[str, tuple[int, float]]:
    """(items, worker seconds) per deciding method, most time first."""
    table: dict[str, list] = defaultdict(lambda: [0, 0.0])
    for result in results:
        accuracy = result["details"].get("accuracy", {})  # the math grader's component
        row = table[result["status"] if result["status"] != "ok" else accuracy.get("method", "?")]
        row[0] += 1
        row[1] += result["details"].get("seconds", 0.0)
    return dict(sorted(((k, (n, s)) for k, (n, s) in table.items()), key=lambda kv: -kv[1][1]))


def print_pass(name: str, run: Pass, items: list[tuple[str, Reference]], base: Pass, workers: int) -> None:
    rate, base_rate = len(items) / run.seconds, len(items) / base.seconds
    cpu_rate, base_cpu_rate = len(items) / run.cpu_seconds, len(items) / base.cpu_seconds
    print(
        f"service {name}, {workers} workers: {rate:7.1f} items/s ({run.seconds:.1f}s), {rate / base_rate:5.2f}x "
        f"math-verify, {rate / workers / base_rate:5.2f}x per worker core"
    )
    print(
        f"    CPU {run.cpu_seconds:.1f}s (all its processes): {cpu_rate:7.1f} items per CPU-second, "
        f"{cpu_rate / base_cpu_rate:5.2f}x math-verify's"
    )
    latency = [r["details"].get("seconds", 0.0) for r in run.results]
    p50, p90, top = percentile(latency, 50), percentile(latency, 90), max(latency)
    print(
        f"    worker time {sum(latency):.1f}s; item p50 {p50 * 1e3:.1f} ms, p90 {p90 * 1e3:.1f} ms, "
        f"max {top * 1e3:.0f} ms; statuses {_statuses(run.results)}"
    )
    for method, (count, total) in by_method(run.results).items():
        print(f"    {method:18s} {count:5d} items {total:7.2f}s  ({total / count * 1e3:6.1f} ms each)")
    for result, (text, reference) in zip(run.results, items, strict=True):
        if result["status"] != "ok":
            answer = text.rsplit("\\boxed{", 1)[-1].removesuffix("}$.")
            print(f"    {result['status']}: {answer[:60]!r} against {str(reference)[:40]!r}")


def _statuses(results: list[dict]) -> dict[str, int]:
    counts: dict[str, int] = defaultdict(int)
    for result in results:
        counts[result["status"]] += 1
    return dict(counts)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--items", type=int, default=1300)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--batch-size", type=int, default=256)
    parser.add_argument("--concurrency", type=int, default=2, help="batches in flight at once")
    parser.add_argument("--deadline", type=float, default=2.0, help="per-item deadline, both sides (s)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    items = make_hard_items(args.items, seed=args.seed)
    print(f"{len(items)} hard items ({len(hard_pairs())} distinct answers), deadline {args.deadline}s, "
          f"{os.cpu_count()} cores")  # fmt: skip

    settings = {
        "REWARD_API_WORKERS": str(args.workers),
        "REWARD_API_ITEM_DEADLINE_S": str(args.deadline),
        "REWARD_API_CACHE_ENTRIES": "0",
        "REWARD_API_LOG_LEVEL": "warning",
    }
    with LocalServer(**settings) as server:
        warm_up = make_items(64, seed=args.seed + 1, pathological_share=0)  # lazy imports, connections
        asyncio.run(service(server.url, warm_up, args.batch_size, 1))
        cold = service_pass(server, items, args)
        warm = service_pass(server, items, args)

    base, base_latency = math_verify_pass(items, args.deadline)
    print(
        f"math-verify, in-process, 1 core: {len(items) / base.seconds:7.1f} items/s ({base.seconds:.1f}s), "
        f"{len(items) / base.cpu_seconds:.1f} items per CPU-second"
    )
    p50, p90 = percentile(base_latency, 50), percentile(base_latency, 90)
    print(f"    item p50 {p50 * 1e3:.1f} ms, p90 {p90 * 1e3:.1f} ms, max {max(base_latency) * 1e3:.0f} ms")
    print_pass("cold", cold, items, base, args.workers)
    print_pass("warm", warm, items, base, args.workers)
    ours, theirs = ([r["reward"] == 1.0 for r in run.results] for run in (cold, base))
    changed = sum(a["reward"] != b["reward"] for a, b in zip(cold.results, warm.results, strict=True))
    print(
        f"accepted: ours {sum(ours)}, math-verify {sum(theirs)}; verdicts differing from math-verify: "
        f"{sum(a != b for a, b in zip(ours, theirs, strict=True))}; cold vs warm differing: {changed}"
    )


if __name__ == "__main__":
    main()
