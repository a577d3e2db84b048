"""Where a sandbox run's time goes, phase by phase: the per-test overhead of the sandbox, as a table.

One small Python stdin/stdout program is run --runs times through the Executor (one test at a time, as
bench/code_throughput.py's runs), each run with --tests tests, forked from the warm zygote (sandbox/zygote.py)
and then with a `bwrap` and interpreter of its own. Every run records when each of its steps ended
(Execution.phases: the executor's own marks, and the runner's start on the same monotonic clock), so the
table splits each run into:

    cgroup             making the run's cgroup
    launch             the zygote: sending the run and its init's answer, once the init has joined
                       its cgroups, mounted and dropped its capabilities (the runner may start before the
                       answer: start-up is then 0); a bwrap per run: starting the launcher (Popen)
    start-up           from there to the runner's main(). A bwrap per run: the shell joining the cgroups,
                       setpriv, bubblewrap making the namespaces and mounts, the interpreter starting, the
                       runner's code loading; split below by timing the same command line apart, ending in
                       `true` (namespaces) and in `python3 -S -I -c pass` (the interpreter)
    compile            reading the job, writing the files, byte-compiling (in the runner; past 8 KiB, in a child)
    first test         its fork, run and result (after the modules the program names are imported)
    each further test  the same, for each test after the first (the per-test cost of a warm runner)
    exit               the last result to the runner, bubblewrap and the launcher reaped
    cleanup            removing the cgroup (and killing anything left in it)

Medians in ms, per run and per test, with the CPU a run takes (this process and its children), and a
plain interpreter per test (this Python with site, and the sandbox's `python3 -S`) for scale.

    .venv/bin/python bench/sandbox_phases.py [--runs 40] [--tests 10]
"""

from __future__ import annotations

import argparse
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from proc_tree import CLOCK_TICKS, descendants, processes

from sandbox.executor import _BASE_ENV, Execution, Executor, Limits, TestInput
from sandbox.isolation import SANDBOX_PYTHON, Isolation, SandboxSize, launch_argv

CODE = "a, b = map(int, input().split())\nprint(a + b)\n"
STDIN = "1 2\n"
LIMITS = Limits(time_s=2)
Row = tuple[str, list[float | None]]  # phase; ms per run and per test of each launch


def phase_times(execution: Execution, started: float, tests: int) -> dict[str, float]:
    """Each phase's seconds in one run, from its marks (Execution.phases)."""
    marks: dict[str, list[float]] = {}
    for name, when in execution.phases:
        marks.setdefault(name, []).append(when)
    results = marks["test"]
    first = marks["compiled"][0]
    return {
        "cgroup": marks["cgroup"][0] - started,
        # Forked from the zygote, the runner may start before the host reads its init's answer.
        "launch": min(marks["spawned"][0], marks["runner"][0]) - marks["cgroup"][0],
        "start-up": max(marks["runner"][0] - marks["spawned"][0], 0.0),
        "compile": first - marks["runner"][0],
        "first test": results[0] - first,
        "each further test": (results[-1] - results[0]) / (tests - 1) if tests > 1 else 0.0,
        "exit": marks["exited"][0] - results[-1],
        "cleanup": marks["closed"][0] - marks["exited"][0],
    }


def cpu_seconds() -> float:
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def measure_runs(executor: Executor, runs: int, tests: int) -> tuple[dict[str, float], float, float]:
    """Median seconds of each phase, median wall seconds of a run, mean CPU seconds of a run."""
    inputs = [TestInput(STDIN)] * tests
    executor.run("python", CODE, inputs, LIMITS)  # warm-up: page cache, the runner's compiled code
    samples: dict[str, list[float]] = {}
    walls = []
    cpu_before = cpu_seconds()
    for _ in range(runs):
        started = time.monotonic()
        execution = executor.run("python", CODE, inputs, LIMITS)
        walls.append(time.monotonic() - started)
        if any(result is None or result.stdout.strip() != "3" for result in execution.tests):
            raise SystemExit(f"a run went wrong: {execution}")
        for name, seconds in phase_times(execution, started, tests).items():
            samples.setdefault(name, []).append(seconds)
    cpu = (cpu_seconds() - cpu_before) / runs
    return {name: statistics.median(values) for name, values in samples.items()}, statistics.median(walls), cpu


def median_seconds(command: Callable[[], object], times: int) -> float:
    walls = []
    for _ in range(times):
        started = time.monotonic()
        command()
        walls.append(time.monotonic() - started)
    return statistics.median(walls)


def start_up_parts(executor: Executor, times: int) -> tuple[float, float]:
    """The run's own command line (cgroups joined, uid dropped, bubblewrap), ending in `true` and in the sandbox's
    interpreter doing nothing: seconds of each, median."""
    size = SandboxSize(memory_mb=LIMITS.memory_mb + 128, pids=LIMITS.processes, disk_mb=LIMITS.disk_mb)
    cgroup = executor.level.new_run_cgroup(size)
    try:
        argv = launch_argv(executor.level, cgroup, size, _BASE_ENV)
        bwrap = len(argv) - argv[::-1].index("--")  # after bubblewrap's own `--`: what it starts

        def run(tail: list[str]) -> Callable[[], object]:
            return lambda: subprocess.run([*argv[:bwrap], *tail], stdin=subprocess.DEVNULL, check=True)

        namespaces = median_seconds(run(["/usr/bin/true"]), times)
        interpreter = median_seconds(run([SANDBOX_PYTHON, "-S", "-I", "-c", "pass"]), times)
    finally:
        if cgroup is not None:
            cgroup.close()
    return namespaces, interpreter


def plain_seconds(flags: tuple[str, ...], times: int) -> float:
    """One unsandboxed interpreter running the program on its input (bench/code_throughput.py's baseline)."""
    command = [sys.executable, *flags, "-c", CODE]
    return median_seconds(lambda: subprocess.run(command, input=STDIN, capture_output=True, text=True), times)


def zygote_cpu_seconds(executor: Executor) -> float:
    """CPU of the zygote's processes and of every run it forked and reaped (not this process's children's times
    until the zygote itself is reaped): utime, stime and the children's of each process in its tree."""
    if executor.zygote is None or executor.zygote.pid is None:
        return 0.0
    table = processes()
    tree = [executor.zygote.pid, *descendants(table, [executor.zygote.pid])]
    return sum(table[pid].ticks for pid in tree if pid in table) / CLOCK_TICKS


def table(launches: dict[str, dict[str, float]], namespaces: float, interpreter: float, tests: int) -> list[Row]:
    """One row per phase: ms per run (and per test) in each way of launching a run."""
    per_test = {"first test", "each further test"}
    rows: list[Row] = []
    for name in launches["bwrap per run"]:
        cells = []
        for phases in launches.values():
            seconds = phases[name]
            per_run = seconds * (tests - 1) if name == "each further test" else seconds
            cells += [per_run * 1000, seconds * 1000 if name in per_test else None]
        rows.append((name, cells))
        if name == "start-up":
            bwrap_start = launches["bwrap per run"][name]
            rows += [
                ("  sh, setpriv, bwrap: `true` (apart)", [None, None, namespaces * 1000, None]),
                ("  interpreter: python3 -S (apart)", [None, None, (interpreter - namespaces) * 1000, None]),
                ("  the rest: runner's code and job", [None, None, (bwrap_start - interpreter) * 1000, None]),
            ]
    return rows


def print_table(
    rows: list[Row], runs: dict[str, tuple[float, float]], tests: int, plain: float, plain_s: float
) -> None:
    def cell(value: float | None) -> str:
        return "" if value is None else f"{value:.2f}"

    print(f"{'':36s} {'forked from the zygote':>18s} {'a bwrap per run':>18s}")
    print(f"{'phase':36s} {'ms/run':>9s}{'ms/test':>9s} {'ms/run':>9s}{'ms/test':>9s}")
    for name, cells in rows:
        pairs = zip(cells[::2], cells[1::2], strict=True)
        print(f"{name:36s} " + " ".join(f"{cell(a):>9s}{cell(b):>9s}" for a, b in pairs))
    walls = [wall for wall, _ in runs.values()]
    cpus = [cpu for _, cpu in runs.values()]
    print(f"{'run (median wall)':36s} " + " ".join(f"{w * 1000:9.2f}{w * 1000 / tests:9.2f}" for w in walls))
    print(f"{'run (mean CPU, all processes)':36s} " + " ".join(f"{c * 1000:9.2f}{c * 1000 / tests:9.2f}" for c in cpus))
    print(f"{'plain interpreter per test':36s} {'':9s}{plain * 1000:9.2f}")
    print(f"{'plain interpreter -S per test':36s} {'':9s}{plain_s * 1000:9.2f}")
    for launch, (wall, _) in runs.items():
        per_test_s = wall / tests
        print(f"per test, {launch}: {plain / per_test_s:.2f}x a plain interpreter, {plain_s / per_test_s:.2f}x -S")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=40)
    parser.add_argument("--tests", type=int, default=10, help="tests per run (at least 2)")
    args = parser.parse_args()
    if args.tests < 2:
        parser.error("--tests must be at least 2: the per-test cost is the time between results")
    executors = {
        "zygote": Executor(Isolation.BWRAP, parallel=1, compile_cache=None, zygote=True),
        "bwrap per run": Executor(Isolation.BWRAP, parallel=1, compile_cache=None, zygote=False),
    }
    print(f"{args.runs} runs of {args.tests} tests, one at a time, sandbox {executors['zygote'].level.name}")
    phases, runs = {}, {}
    for launch, executor in executors.items():
        zygote_cpu = zygote_cpu_seconds(executor)
        phases[launch], wall, cpu = measure_runs(executor, args.runs, args.tests)
        runs[launch] = wall, cpu + (zygote_cpu_seconds(executor) - zygote_cpu) / args.runs
    namespaces, interpreter = start_up_parts(executors["bwrap per run"], args.runs)
    plain, plain_s = plain_seconds((), args.runs), plain_seconds(("-S",), args.runs)
    print_table(table(phases, namespaces, interpreter, args.tests), runs, args.tests, plain, plain_s)


if __name__ == "__main__":
    main()
