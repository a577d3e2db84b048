"""Code grading throughput: our sandboxed judge vs a plain unsandboxed subprocess per test.

The same suites (bench/code_problems.py: 26 small Python problems, stdin/stdout and
function-call, 10 generated tests each) are graded
  (a) by our judge: LocalJudge in this process, each submission compiled once and its
      tests forked inside one bubblewrap + cgroup sandbox; and, with --http, through
      `sandbox serve` on loopback with RemoteJudge;
  (b) by the baseline: one plain unsandboxed `subprocess.run([sys.executable, "-c", ...])`
      per test, the way open-r1 judges locally, no isolation at all; and a stricter one
      with `-S` (no site import: the cheapest interpreter start there is).
Both run `--threads` at a time (default: one per core) and decide pass/fail with the same
comparison (sandbox/judge.py's stdio_match and call_match); their verdicts must agree.
Prints tests/s for each and the ratio ours / baseline.

    .venv/bin/python bench/code_throughput.py [--rounds 3] [--http]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from code_problems import make_suites

from reward_api.local import LocalServer
from sandbox.client import RemoteJudge
from sandbox.executor import Executor, Limits
from sandbox.judge import (
    CallTest,
    JudgeBackend,
    LocalJudge,
    StdioTest,
    Verdict,
    call_harness,
    call_match,
    stdio_match,
)
from sandbox.judge import TestSuite as Suite

LIMITS = Limits(time_s=2)
RESULT_MARKER = "\n<<<baseline-result>>>"
BASELINE = "baseline (plain subprocess)"
Work = list[tuple[str, Suite]]  # (code, suite) per submission


def ours(backend: JudgeBackend, work: Work, threads: int) -> list[bool]:
    """One judge call per submission, `threads` submissions at a time."""

    def grade(item: tuple[str, Suite]) -> list[bool]:
        report = backend.judge("python", item[0], item[1], LIMITS)
        return [t.verdict is Verdict.ACCEPTED for t in report.tests]

    with ThreadPoolExecutor(threads) as pool:
        return [ok for oks in pool.map(grade, work) for ok in oks]


def baseline(work: Work, threads: int, flags: tuple[str, ...] = ()) -> list[bool]:
    """One unsandboxed interpreter per test, `threads` tests at a time."""
    tests = [(code, suite, test) for code, suite in work for test in suite.tests]
    with ThreadPoolExecutor(threads) as pool:
        return list(pool.map(lambda t: _run_plain(*t, flags), tests))


def _run_plain(code: str, suite: Suite, test: StdioTest | CallTest, flags: tuple[str, ...]) -> bool:
    program = (
        code
        if isinstance(test, StdioTest)
        else code + "\n" + call_harness(suite.fn_name or "", test.args, RESULT_MARKER)
    )
    stdin = test.input if isinstance(test, StdioTest) else ""
    try:
        done = subprocess.run(
            [sys.executable, *flags, "-c", program],
            input=stdin,
            capture_output=True,
            text=True,
            timeout=2 * LIMITS.time_s + 1,
        )
    except subprocess.TimeoutExpired:
        return False
    if done.returncode != 0:
        return False
    if isinstance(test, StdioTest):
        return stdio_match(done.stdout, test.output, suite.comparison)
    _, marker, payload = done.stdout.rpartition(RESULT_MARKER)
    try:
        return bool(marker) and call_match(json.loads(payload), test.expected, suite.comparison)
    except ValueError:  # not JSON: a runtime error for the judge too
        return False


def timed(run: Callable[[], list[bool]]) -> tuple[float, list[bool]]:
    started = time.perf_counter()
    verdicts = run()
    return time.perf_counter() - started, verdicts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=3, help="alternating timed rounds of each grader")
    parser.add_argument("--tests", type=int, default=10, help="tests per problem")
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--http", action="store_true", help="also grade through `sandbox serve` on loopback")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    work = [(problem.code, suite) for problem, suite in make_suites(args.tests, args.seed)]
    count = sum(len(suite.tests) for _, suite in work)
    print(
        f"{len(work)} submissions, {count} tests, {args.threads} threads, {args.rounds} rounds, python {sys.executable}"
    )

    # Tests of one submission run one at a time in its sandbox: at most `threads` programs run at once, as in (b).
    graders: dict[str, Callable[[], list[bool]]] = {
        "ours (sandboxed, in-process)": lambda: ours(LocalJudge(Executor(parallel=1)), work, args.threads),
        BASELINE: lambda: baseline(work, args.threads),
        "baseline, no site (-S)": lambda: baseline(work, args.threads, ("-S",)),
    }
    with contextlib.ExitStack() as stack:
        if args.http:
            env = {"SANDBOX_WORKERS": str(args.threads), "SANDBOX_PARALLEL": "1", "SANDBOX_LOG_LEVEL": "warning"}
            server = stack.enter_context(LocalServer.sandbox(**env))
            remote = stack.enter_context(RemoteJudge(server.url))
            graders["ours (sandboxed, over HTTP)"] = lambda: ours(remote, work, args.threads)
        seconds, verdicts = _measure(graders, args.rounds)
    _report(seconds, verdicts, count * args.rounds)


def _measure(graders: dict[str, Callable[[], list[bool]]], rounds: int) -> tuple[dict, dict]:
    for run in graders.values():  # warm-up: page cache, imports, connections
        run()
    seconds = dict.fromkeys(graders, 0.0)
    verdicts: dict[str, list[bool]] = {}
    for _ in range(rounds):
        for name, run in graders.items():
            elapsed, verdicts[name] = timed(run)
            seconds[name] += elapsed
    return seconds, verdicts


def _report(seconds: dict[str, float], verdicts: dict[str, list[bool]], tests: int) -> None:
    reference = verdicts[BASELINE]
    for name, elapsed in seconds.items():
        agree = "same verdicts as baseline" if verdicts[name] == reference else "VERDICTS DIFFER FROM BASELINE"
        print(f"{name:32s} {tests / elapsed:8.1f} tests/s   {sum(verdicts[name])}/{len(reference)} passed, {agree}")
    for ours_name in (name for name in seconds if name.startswith("ours")):
        for base_name in (name for name in seconds if name.startswith("baseline")):
            print(f"ratio {ours_name} / {base_name}: {seconds[base_name] / seconds[ours_name]:.2f}x")
    if any(v != reference for v in verdicts.values()):
        sys.exit(1)


if __name__ == "__main__":
    main()
