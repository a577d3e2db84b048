"""Sustained mixed load: normal items alone, then the same stream with 5% items that take the whole deadline.

The real service (`reward-api serve` on loopback; one worker per core, cache on, code judged
in-process: the defaults users run) gets two phases of `--seconds` each:
  A: normal items only: math (bench/math_items.py, no pathological ones), sort, and code
     (bench/code_problems.py with freshly generated tests);
  B: the same normal stream, plus slow items making `--slow-share` (5%) of the items sent.
Normal items come from `--concurrency` client tasks, each posting batches of `--batch-size`
to /v1/rewards back to back (a closed loop). Every normal item is distinct (its own numbers
and prompt), so the result cache cannot inflate throughput. Slow items travel in requests of
their own, paced to the normal items sent: a batch waits for its slowest item, so slow items
inside the normal batches would measure the deadline rather than whether the service keeps
grading the rest. They are distinct too (the cache would hide them) unless `--repeat-slow`
sends each kind's same item again and again (tests that timeouts are remembered).

Normal items/s counts normal items graded (`ok`) per second of the phase; latency is a normal
item's request round trip. The slow kinds are a table (SLOW_KINDS) and the report says per
kind how many hit `timeout` and how long they took: a kind the graders learn to decide fast
shows it. Worker restarts per phase come from the service's /metrics. The machine's busy CPU per
phase gives each normal item's CPU (A) and each slow item's (B: what B used beyond its normal items),
and from them the most B/A can be while the load keeps the cores busy, however the service
schedules: a code item that spins costs at least its sandbox's start-up. RSS of the server process
and of its descendants (forkserver, grading workers, sandboxes) comes from /proc at start, after
the warm-up and at the end; forked workers share pages, so their sum overstates what they use
together. Client and service share this machine's cores: the load average before the run says
whether other work shared them too.

    .venv/bin/python bench/load.py [--seconds 20] [--concurrency 8] [--deadline 10] [--repeat-slow]
                                   [--slow-kinds geometric_sum,code_spin]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import statistics
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
from prometheus_client.parser import text_string_to_metric_families

sys.path.insert(0, str(Path(__file__).resolve().parent))
from code_problems import PROBLEMS
from math_items import make_items
from proc_tree import PAGE_KB, descendants, processes

from reward_api.config import Config
from reward_api.local import LocalServer
from sandbox.judge import StdioTest

STATUSES = ("ok", "timeout", "error", "invalid")
# Share of normal items per task. A code item costs a worker ~0.1 s (sandbox start, 5 tests), a math item ~1 ms.
NORMAL_MIX = {"math": 0.78, "sort": 0.2, "code": 0.02}
CODE_TESTS = 5  # tests per normal code item
MATH_POOL = 20_000  # math items generated at a time (make_items numbers its items, seeds vary the pools)
GRACE_S = 2.0  # after a phase, requests in flight get the item deadline plus this to finish

Item = dict[str, Any]


def _math_answer(answer: str, variant: int) -> str:
    return f"<think>Problem {variant}. Let me compute this carefully.</think>\nThe answer is $\\boxed{{{answer}}}$."


DET_ROWS = (
    "a & b & c & d & f & g",
    "h & j & k & l & m & n",
    "o & p & q & r & s & t",
    "u & v & w & y & z & a",
    "a^2 & b^2 & c^2 & d^2 & f^2 & g^2",
    "a^3 & b^3 & c^3 & d^3 & f^3 & g^3",
)


def _matrix_det(variant: int) -> str:
    rows = (f"a+{variant}" + DET_ROWS[0][1:], *DET_ROWS[1:])
    return "\\det\\begin{pmatrix} " + " \\\\ ".join(rows) + " \\end{pmatrix}"


def _code_spin(variant: int, deadline_s: float) -> Item:
    """A program that never ends: it holds its worker until the sandbox's limit, as long as the item deadline."""
    return _code_item(f"# attempt {variant}\nwhile True:\n    pass\n", variant, deadline_s)


def _code_item(code: str, variant: int, deadline_s: float) -> Item:
    reference = {
        "inputs": [f"{variant}\n"], "outputs": [str(variant)],
        "time_limit": deadline_s, "total_time_limit": deadline_s,
    }  # fmt: skip
    return {"task": "code", "completion": f"```python\n{code}```", "reference": reference}


# name -> item for a variant number (from 1; distinct variants are distinct items) and the item deadline.
# Probed one at a time on an idle service at d62b67a, deadline 10 s: every math kind answered `timeout` at
# 9.0 s (the worker's alarm), code_spin `ok` after 10.0 s. Since issue 8 the math kinds are decided in
# 0.02-0.3 s (modular identities, guards) and graded in the heavy lane; code_spin still burns its time
# limit in the sandbox, a core for 10 s each: the per-kind table shows both.
SLOW_KINDS: dict[str, Callable[[int, float], Item]] = {
    # A correct answer that needs expanding a degree-1000 polynomial (issue 8's first example).
    "geometric_sum": lambda v, _: {
        "task": "math",
        "completion": _math_answer(f"\\frac{{{v + 1}(x^{{1000}}-1)}}{{x-1}}", v),
        "reference": f"{v + 1}\\sum_{{k=0}}^{{999}} x^k",
    },
    # Ten thousand terms of up to 40,000 digits each (issue 8's second example).
    "self_power_sum": lambda v, _: {
        "task": "math",
        "completion": _math_answer(f"{v} + \\sum_{{k=1}}^{{10000}} k^{{k}}", v),
        "reference": "1",
    },
    # Expanding a symbolic 6x6 determinant (720 products of 6 symbols).
    "symbolic_det": lambda v, _: {"task": "math", "completion": _math_answer(_matrix_det(v), v), "reference": "0"},
    # An indefinite integral sympy searches long for (no numeric value to screen with).
    "indefinite_integral": lambda v, _: {
        "task": "math",
        "completion": _math_answer(f"\\int x^{{10}} e^{{x}} \\sin(x) \\cos({3 + v}x) \\, dx", v),
        "reference": "x",
    },
    "code_spin": lambda v, deadline_s: _code_spin(v, deadline_s),
    # Not slow: a right program that ends at once, sent like the slow kinds. What any code item costs at this rate
    # (a sandbox start), the floor under code_spin's B/A: code_spin's B/A over this one's is what spinning costs.
    "code_quick": lambda v, deadline_s: _code_item(f"# attempt {v}\nprint(input())\n", v, deadline_s),
}
DEFAULT_SLOW_KINDS = [kind for kind in SLOW_KINDS if kind != "code_quick"]


# ------------------------------------------------------------------------------ normal items


class NormalItems:
    """An endless stream of distinct normal items: math, sort and code in NORMAL_MIX shares."""

    def __init__(self, seed: int) -> None:
        self._rng = random.Random(seed)
        self._serial = 0
        self._math = self._math_items(seed)

    def batch(self, size: int) -> list[Item]:
        tasks = self._rng.choices(list(NORMAL_MIX), weights=list(NORMAL_MIX.values()), k=size)
        return [self._item(task) for task in tasks]

    def _item(self, task: str) -> Item:
        self._serial += 1
        if task == "math":
            completion, reference = next(self._math)
            # The prompt makes each item's cache key unique even when a math pool repeats an answer.
            prompt = f"Problem {self._serial}: solve it and put the final answer in \\boxed{{}}."
            return {"task": "math", "completion": completion, "reference": reference, "prompt": prompt}
        if task == "sort":
            return self._sort_item()
        return self._code_item()

    def _math_items(self, seed: int) -> Iterator[tuple[str, str]]:
        while True:
            yield from make_items(MATH_POOL, seed=seed, pathological_share=0)
            seed += 1

    def _sort_item(self) -> Item:
        numbers = [self._rng.randint(-1000, 1000) for _ in range(self._rng.randint(5, 40))]
        answer = sorted(numbers)
        if self._rng.random() < 0.5:  # half right, half a near miss
            i = self._rng.randrange(len(answer) - 1)
            answer[i], answer[i + 1] = answer[i + 1], answer[i]
        prompt = "Sort these numbers in ascending order: " + " ".join(map(str, numbers))
        completion = "<think>Compare neighbours and swap.</think> " + " ".join(map(str, answer))
        return {"task": "sort", "completion": completion, "reference": numbers, "prompt": prompt}

    def _code_item(self) -> Item:
        problem = self._rng.choice(PROBLEMS)
        suite = problem.suite(self._rng, CODE_TESTS)  # fresh generated tests: a distinct item
        if all(isinstance(test, StdioTest) for test in suite.tests):
            reference: Item = {"inputs": [t.input for t in suite.tests], "outputs": [t.output for t in suite.tests]}
        else:
            reference = {
                "inputs": [t.args for t in suite.tests], "outputs": [t.expected for t in suite.tests],
                "fn_name": problem.fn_name,
            }  # fmt: skip
        completion = f"<think>A direct solution.</think>\n```python\n{problem.code}```"
        return {"task": "code", "completion": completion, "reference": reference}


# ------------------------------------------------------------------------------ measurements


@dataclass
class SlowKindStats:
    sent: int = 0
    statuses: Counter[str] = field(default_factory=Counter)
    unanswered: int = 0  # failed, or still unanswered when the phase gave up waiting
    seconds: list[float] = field(default_factory=list)  # the service's details.seconds: time graded
    round_trip_s: list[float] = field(default_factory=list)  # sent to answered, queueing included


@dataclass
class Phase:
    name: str
    normal_sent: int = 0
    normal_unanswered: int = 0  # in requests still unanswered when the phase gave up waiting
    normal_statuses: Counter[str] = field(default_factory=Counter)
    normal_latency_s: list[float] = field(default_factory=list)  # per item: its request's round trip
    http_errors: Counter[str] = field(default_factory=Counter)
    slow: dict[str, SlowKindStats] = field(default_factory=dict)
    worker_restarts: Counter[str] = field(default_factory=Counter)  # by reason, from the service's /metrics
    elapsed_s: float = 0.0
    busy_core_s: float = 0.0  # CPU the whole machine used during the phase (client, service, sandboxes, others)

    @property
    def rate(self) -> float:
        return self.normal_statuses["ok"] / self.elapsed_s if self.elapsed_s else 0.0


def _record_failure(phase: Phase, response: httpx.Response | None, exc: Exception | None) -> None:
    phase.http_errors[f"HTTP {response.status_code}" if response is not None else type(exc).__name__] += 1


async def _post(client: httpx.AsyncClient, items: list[Item], phase: Phase) -> list[dict] | None:
    """The results of one request, or None (counted in `http_errors`) when the service answered no results.

    A refusal waits as long as its Retry-After says (at most 5 s; else 0.1 s) before returning:
    a shedding service must not be answered with a tight loop of retries.
    """
    try:
        response = await client.post("/v1/rewards", json={"items": items})
    except httpx.HTTPError as exc:
        _record_failure(phase, None, exc)
        await asyncio.sleep(0.1)
        return None
    if response.status_code != 200:
        _record_failure(phase, response, None)
        retry_after = response.headers.get("retry-after", "")
        await asyncio.sleep(min(float(retry_after), 5.0) if retry_after.isdigit() else 0.1)
        return None
    return response.json()["results"]


async def _normal_loop(client: httpx.AsyncClient, items: NormalItems, phase: Phase, size: int, stop: float) -> None:
    while time.perf_counter() < stop:
        batch = items.batch(size)
        phase.normal_sent += len(batch)
        started = time.perf_counter()
        try:
            results = await _post(client, batch, phase)
        except asyncio.CancelledError:
            phase.normal_unanswered += len(batch)
            raise
        if results is None:
            continue
        latency = time.perf_counter() - started
        phase.normal_statuses.update(r["status"] for r in results)
        phase.normal_latency_s.extend([latency] * len(results))


class SlowSender:
    """Keeps slow items at `share` of all items sent, round-robin over SLOW_KINDS, each in a request of its own.

    One item per request: a request answers when its last item is graded, and each slow item's
    outcome and wait should be its own.
    """

    def __init__(self, client: httpx.AsyncClient, phase: Phase, share: float, args: argparse.Namespace) -> None:
        self._client, self._phase, self._share = client, phase, share
        self._deadline_s, self._repeat = args.deadline, args.repeat_slow
        self._kinds: list[str] = args.slow_kinds
        self._sent = 0
        self.requests: set[asyncio.Task] = set()

    async def run(self, stop: float, tick_s: float = 0.05) -> None:
        self._phase.slow = {kind: SlowKindStats() for kind in self._kinds}
        while time.perf_counter() < stop:
            owed = int(self._phase.normal_sent * self._share / (1 - self._share)) - self._sent
            for _ in range(owed):
                task = asyncio.create_task(self._send(*self._next()))
                self.requests.add(task)
                task.add_done_callback(self.requests.discard)
            await asyncio.sleep(tick_s)

    def _next(self) -> tuple[SlowKindStats, Item]:
        kind = self._kinds[self._sent % len(self._kinds)]
        variant = 1 if self._repeat else 1 + self._sent // len(self._kinds)
        self._sent += 1
        stats = self._phase.slow[kind]
        stats.sent += 1
        return stats, SLOW_KINDS[kind](variant, self._deadline_s)

    async def _send(self, stats: SlowKindStats, item: Item) -> None:
        started = time.perf_counter()
        try:
            results = await _post(self._client, [item], self._phase)
        except asyncio.CancelledError:
            stats.unanswered += 1
            raise
        if results is None:
            stats.unanswered += 1
            return
        stats.statuses[results[0]["status"]] += 1
        stats.seconds.append(results[0]["details"].get("seconds", 0.0))
        stats.round_trip_s.append(time.perf_counter() - started)


async def run_phase(url: str, phase: Phase, items: NormalItems, args: argparse.Namespace, slow_share: float) -> None:
    """`args.seconds` of closed-loop normal load, with slow items when `slow_share` > 0.

    Requests in flight at the end get the item deadline plus a margin to finish: a service whose
    queue holds them longer would otherwise hold the benchmark. What is still unanswered then is
    counted and given up; the phase's clock stops when its last normal request ended or was given up.
    """
    # Separate clients: slow requests must not take the connections the normal loop waits for.
    limits = httpx.Limits(max_connections=None, max_keepalive_connections=64)
    async with (
        httpx.AsyncClient(base_url=url, timeout=None, limits=limits) as normal_client,
        httpx.AsyncClient(base_url=url, timeout=None, limits=limits) as slow_client,
    ):
        started, busy_before = time.perf_counter(), busy_core_seconds()
        stop = started + args.seconds
        give_up = stop + args.deadline + GRACE_S
        sender = SlowSender(slow_client, phase, slow_share, args)
        progress = asyncio.create_task(_progress(phase, started, sender))
        loops = {
            asyncio.create_task(_normal_loop(normal_client, items, phase, args.batch_size, stop))
            for _ in range(args.concurrency)
        }
        if slow_share > 0:
            await sender.run(stop)
        await _wait_or_cancel(loops, give_up)
        phase.elapsed_s = time.perf_counter() - started
        phase.busy_core_s = busy_core_seconds() - busy_before
        await _wait_or_cancel(set(sender.requests), give_up)
        progress.cancel()
        print(file=sys.stderr)


def busy_core_seconds() -> float:
    """CPU seconds this machine has been busy since boot, all cores (/proc/stat: all but idle and iowait)."""
    fields = [int(value) for value in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    return (sum(fields[:8]) - fields[3] - fields[4]) / os.sysconf("SC_CLK_TCK")


async def _wait_or_cancel(tasks: set[asyncio.Task], until: float) -> None:
    """Wait for `tasks` until the perf_counter time `until`, then cancel those still running."""
    if not tasks:
        return
    _, late = await asyncio.wait(tasks, timeout=max(0.0, until - time.perf_counter()))
    for task in late:
        task.cancel()
    await asyncio.gather(*late, return_exceptions=True)


async def _progress(phase: Phase, started: float, sender: SlowSender) -> None:
    while True:
        await asyncio.sleep(1.0)
        elapsed = time.perf_counter() - started
        answered = sum(s.statuses.total() for s in phase.slow.values())
        sent = sum(s.sent for s in phase.slow.values())
        print(
            f"\rphase {phase.name}: {elapsed:5.1f}s  normal graded {phase.normal_statuses['ok']:6d} "
            f"({phase.normal_statuses['ok'] / elapsed:7.1f}/s)  slow answered {answered}/{sent} "
            f"(requests in flight {len(sender.requests)})",
            end="", file=sys.stderr, flush=True,
        )  # fmt: skip


def worker_restarts(url: str) -> Counter[str]:
    """The service's `reward_worker_restarts_total` by reason: how often the pool killed or replaced a worker."""
    counts: Counter[str] = Counter()
    for family in text_string_to_metric_families(httpx.get(f"{url}/metrics", timeout=30).text):
        if family.name == "reward_worker_restarts":
            for sample in family.samples:
                if sample.name.endswith("_total"):
                    counts[sample.labels["reason"]] = int(sample.value)
    return counts


# ------------------------------------------------------------------------------ memory


@dataclass(frozen=True)
class Memory:
    server_mb: float
    children: int
    children_mb: float
    largest_child_mb: float

    def __str__(self) -> str:
        return (
            f"server {self.server_mb:6.0f} MB; descendants {self.children:2d} processes, "
            f"{self.children_mb:6.0f} MB in all, largest {self.largest_child_mb:5.0f} MB"
        )


def memory(server_pid: int) -> Memory:
    """RSS of the server and of every process below it."""
    table = processes()
    child_mb = [table[pid].rss_pages * PAGE_KB / 1024 for pid in descendants(table, [server_pid])]
    server_mb = table[server_pid].rss_pages * PAGE_KB / 1024 if server_pid in table else 0.0
    return Memory(server_mb, len(child_mb), sum(child_mb), max(child_mb, default=0.0))


# ------------------------------------------------------------------------------ report


def percentile(values: list[float], q: int) -> float:
    """The q-th percentile (NaN when there are no values)."""
    if len(values) < 2:
        return values[0] if values else float("nan")
    return statistics.quantiles(values, n=100, method="inclusive")[q - 1]


def report(phases: list[Phase], memory_at: dict[str, Memory], load_before: float) -> None:
    """The tables; the load average says whether other work shared the cores (the figures are then low)."""
    print(
        f"{'phase':5s} {'normal/s':>9s} {'p50 ms':>8s} {'p99 ms':>8s}  {'normal item statuses':45s} "
        f"{'http errors':12s} worker restarts"
    )
    for p in phases:
        statuses = " ".join(f"{s}={p.normal_statuses[s]}" for s in STATUSES) + f" unanswered={p.normal_unanswered}"
        errors = ", ".join(f"{k}: {v}" for k, v in p.http_errors.items()) or "none"
        restarts = ", ".join(f"{k}: {v}" for k, v in p.worker_restarts.items() if v) or "none"
        p50, p99 = percentile(p.normal_latency_s, 50) * 1e3, percentile(p.normal_latency_s, 99) * 1e3
        print(f"{p.name:5s} {p.rate:9.1f} {p50:8.0f} {p99:8.0f}  {statuses:45s} {errors:12s} {restarts}")
    for p in (p for p in phases if p.slow):
        print(f"slow items in phase {p.name}: graded = the service's details.seconds, answered = round trip")
        print(
            f"  {'kind':20s} {'sent':>5s} {'timeout':>8s} {'ok':>4s} {'error':>6s} {'unanswered':>10s} "
            f"{'graded p50 s':>12s} {'max':>6s} {'answered p50 s':>14s} {'max':>6s}"
        )
        for kind, s in p.slow.items():
            print(
                f"  {kind:20s} {s.sent:5d} {s.statuses['timeout']:8d} {s.statuses['ok']:4d} "
                f"{s.statuses['error'] + s.statuses['invalid']:6d} {s.unanswered:10d} "
                f"{percentile(s.seconds, 50):12.2f} {max(s.seconds, default=float('nan')):6.2f} "
                f"{percentile(s.round_trip_s, 50):14.2f} {max(s.round_trip_s, default=float('nan')):6.2f}"
            )
    for when, used in memory_at.items():
        print(f"memory {when:14s}: {used}")
    print(f"load average (1 min) before the load: {load_before:.1f} on {os.cpu_count()} cores (other work lowers all)")
    _print_cpu_bound(phases[0], phases[-1])
    a, b = phases[0].rate, phases[-1].rate
    print(f"normal items/s: A={a:.1f} B={b:.1f} ratio B/A={b / a if a else float('nan'):.2f}")


def _print_cpu_bound(a: Phase, b: Phase) -> None:
    """What the slow items cost in CPU, and what that allows B/A to be on a machine the load keeps busy.

    A normal item costs the machine's busy CPU in A over the items graded; a slow item whatever more B's
    busy CPU holds than its normal items at A's cost (its sandbox start-up and the CPU it got before
    yielding, or a math grader's work). If A kept the cores busy, B can grade at most
    c_normal / (c_normal + slow_per_normal * c_slow) of A's rate, however it schedules."""
    cores = os.cpu_count() or 1
    normal_a, normal_b = a.normal_statuses["ok"], b.normal_statuses["ok"]
    slow_sent = sum(s.sent for s in b.slow.values())
    print(
        f"machine CPU busy: A {a.busy_core_s / a.elapsed_s:.2f} cores, B {b.busy_core_s / b.elapsed_s:.2f} cores "
        f"of {cores}"
    )
    if not (normal_a and normal_b and slow_sent):
        return
    c_normal = a.busy_core_s / normal_a
    c_slow = max(0.0, b.busy_core_s - normal_b * c_normal) / slow_sent
    bound = c_normal / (c_normal + slow_sent / normal_b * c_slow)
    print(
        f"CPU per normal item (A) {c_normal * 1e3:.2f} ms, per slow item (B) {c_slow * 1e3:.1f} ms: "
        f"on a busy machine B/A can be at most {bound:.2f}"
    )


# ------------------------------------------------------------------------------ main


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=20.0, help="length of each phase")
    parser.add_argument("--concurrency", type=int, default=8, help="client tasks posting normal batches")
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--deadline", type=float, default=Config.item_deadline_s, help="the service's item deadline")
    parser.add_argument("--slow-share", type=float, default=0.05, help="share of slow items in phase B")
    parser.add_argument("--repeat-slow", action="store_true", help="each slow kind sends the same item every time")
    parser.add_argument(
        "--slow-kinds", type=lambda text: text.split(","), default=DEFAULT_SLOW_KINDS,
        help=f"comma-separated kinds to send in turn (default: {','.join(DEFAULT_SLOW_KINDS)}; also: code_quick)",
    )  # fmt: skip
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    if not 0 < args.slow_share < 1:
        parser.error(f"--slow-share must be between 0 and 1 (exclusive), got {args.slow_share}")
    if unknown := sorted(set(args.slow_kinds) - set(SLOW_KINDS)):
        parser.error(f"--slow-kinds: unknown {', '.join(unknown)}; known: {', '.join(SLOW_KINDS)}")
    return args


def main() -> None:
    args = parse_args()
    items = NormalItems(args.seed)
    print(
        f"{os.cpu_count()} cores, deadline {args.deadline:g}s, {args.seconds:g}s per phase, "
        f"{args.concurrency} x {args.batch_size}-item batches, slow share {args.slow_share:.0%}"
        f"{' (repeated)' if args.repeat_slow else ' (distinct)'}: {','.join(args.slow_kinds)}; normal mix {NORMAL_MIX}"
    )
    with LocalServer(REWARD_API_ITEM_DEADLINE_S=str(args.deadline)) as server:
        assert server.process is not None
        load_before = os.getloadavg()[0]
        memory_at = {"at start": memory(server.process.pid)}
        failures = asyncio.run(_warm_up(server.url, items))
        if failures:
            sys.exit(f"warm-up failed, the service answered {dict(failures)}; its log: {server.log_path}")
        memory_at["after warm-up"] = memory(server.process.pid)
        phases = [Phase("A"), Phase("B")]
        for phase, share in zip(phases, (0.0, args.slow_share), strict=True):
            restarts_before = worker_restarts(server.url)
            asyncio.run(run_phase(server.url, phase, items, args, share))
            phase.worker_restarts = worker_restarts(server.url) - restarts_before
        memory_at["at end"] = memory(server.process.pid)
    report(phases, memory_at, load_before)


async def _warm_up(url: str, items: NormalItems, batches: int = 4, size: int = 128) -> Counter[str]:
    """Lazy imports, first sandboxes and the graders' caches of recurring math answers, before the clock starts.

    Returns the failed requests by kind (none expected)."""
    phase = Phase("warm-up")
    async with httpx.AsyncClient(base_url=url, timeout=None) as client:
        await asyncio.gather(*(_post(client, items.batch(size), phase) for _ in range(batches)))
    return phase.http_errors


if __name__ == "__main__":
    main()
