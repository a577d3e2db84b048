"""CPU priority of sandboxed programs: fresh runs yield to grading work, runs that go on take only spare CPU.

A run starts fresh, at FRESH_NICENESS: a normal program's whole run (interpreter start-up, compiling, a few
tests) takes a few hundredths of a CPU second, and its item's batch waits for it. Once one of its tests
has used 20 ms of CPU (runner.py YIELD_CPU_NS) it probably runs long: the runner makes that test
SCHED_IDLE and tells the host, which moves the whole run to the idle class: it gets a CPU only when nothing
else wants one. The runner counts a test's wall limit without the time it waited for a CPU, so a starved
program is never a wrong time-limit verdict.

How depends on what this process may write (sandbox/cgroups.py says which applies):
- cgroup v1 with a writable `cpu` hierarchy: every run starts in one shared group (`FRESH_GROUP`, under this
  process's own cpu cgroup), so fresh runs together weigh as one session however many there are, and a
  yielded run's processes move into another (`IDLE_GROUP`, `cpu.idle` 1): one idle entity for all of them.
- cgroup v2 with the `cpu` controller: the run's own cgroup starts at `cpu.weight.nice` FRESH_NICENESS and
  gets `cpu.idle` 1 when it yields.
- otherwise: the runner lowers itself to nice FRESH_NICENESS first thing (its tests inherit it; bwrap's and
  the interpreter's few milliseconds of start-up run at the service's own), and on yielding goes SCHED_IDLE with its
  session's autogroup at nice 19. Every run is a session of its own (bubblewrap --new-session), and
  autogroup kernels share the CPU per session whatever the nice values, so there each run still weighs
  one low-priority session.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable, Iterable
from pathlib import Path

FRESH_NICENESS = 15  # sandboxed programs, from their start: grading work comes first
IDLE_NICENESS = 19  # autogroups of yielded runs, where no cgroup can make them idle
FRESH_GROUP = "reward-fresh-runs"  # v1: the cpu cgroup every run starts in
IDLE_GROUP = "reward-idle-runs"  # v1: the cpu cgroup every yielded run moves into
STARVED_SHARE = 0.5  # under this share of a core, and waiting for one most of the rest: starved (starving)
HELD_BACK_LOOK_S = 0.2  # how long held_back watches a run's threads
_CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def threads_of(pid: int) -> list[int]:
    """The thread ids of process `pid` (none once it is gone): scheduling settings are per thread."""
    with contextlib.suppress(OSError):
        return [int(task.name) for task in Path(f"/proc/{pid}/task").iterdir()]
    return []


def descendants(pid: int) -> list[int]:
    """Every process below `pid`, from /proc/PID/task/TID/children."""
    found, frontier = [], [pid]
    while frontier:
        parent = frontier.pop()
        for thread in threads_of(parent):
            with contextlib.suppress(OSError):
                frontier.extend(
                    int(child) for child in Path(f"/proc/{parent}/task/{thread}/children").read_text().split()
                )
        if parent != pid:
            found.append(parent)
    return found


def make_idle(pids: Iterable[int]) -> None:
    """SCHED_IDLE for every thread of `pids`, and their sessions' autogroups at IDLE_NICENESS. Processes they
    start later inherit the policy."""
    for pid in pids:
        with contextlib.suppress(OSError):  # gone, or no autogroup in this kernel
            Path(f"/proc/{pid}/autogroup").write_text(str(IDLE_NICENESS))
        for thread in threads_of(pid):
            with contextlib.suppress(OSError):
                os.sched_setscheduler(thread, os.SCHED_IDLE, os.sched_param(0))


def unmake_idle(pids: Iterable[int]) -> None:
    """Back to normal scheduling before a kill: a killed process must run to exit, and an idle one may wait
    long for a CPU on a busy machine (holding its run's teardown). Best effort: lowering niceness or leaving
    SCHED_IDLE may need privileges."""
    for pid in pids:
        with contextlib.suppress(OSError):
            Path(f"/proc/{pid}/autogroup").write_text(str(FRESH_NICENESS))
        for thread in threads_of(pid):
            with contextlib.suppress(OSError):
                os.sched_setscheduler(thread, os.SCHED_OTHER, os.sched_param(0))


def stat_fields(stat: Path) -> list[str]:
    """The fields of a process's or thread's `stat` file after its name (field 3, the state, first): the name, in
    parentheses, may itself hold spaces and parentheses. OSError where the process is gone."""
    return stat.read_text().rsplit(")", 1)[1].split()


def cpu_seconds(pids: Iterable[int]) -> float:
    """CPU the processes `pids` used, their reaped children included (a finished test counts in its parent)."""
    ticks = 0
    for pid in pids:
        with contextlib.suppress(OSError, IndexError, ValueError):
            fields = stat_fields(Path(f"/proc/{pid}/stat"))
            ticks += sum(int(value) for value in fields[11:15])  # utime, stime, cutime, cstime
    return ticks / _CLOCK_TICKS


def cpu_wait_seconds(pids: Iterable[int]) -> float:
    """Time every thread of the processes `pids` has spent runnable but waiting for a CPU that others held (the second
    field of schedstat): what tells a starved program from one that sleeps or waits of its own accord."""
    waited_ns = 0
    for pid in pids:
        for thread in threads_of(pid):
            with contextlib.suppress(OSError, IndexError, ValueError):
                waited_ns += int(Path(f"/proc/{pid}/task/{thread}/schedstat").read_text().split()[1])
    return waited_ns / 1e9


def _runnable_threads_and_cpu_ns(pids: Iterable[int]) -> tuple[set[int], int]:
    """The threads of `pids` that are runnable now (state R: on a CPU or waiting for one), and the CPU time all
    their threads have had (nanoseconds, the first field of schedstat)."""
    runnable, cpu_ns = set(), 0
    for pid in pids:
        for thread in threads_of(pid):
            with contextlib.suppress(OSError, IndexError, ValueError):
                task = Path(f"/proc/{pid}/task/{thread}")
                cpu_ns += int((task / "schedstat").read_text().split()[0])
                if stat_fields(task / "stat")[0] == "R":
                    runnable.add(thread)
    return runnable, cpu_ns


def held_back(pids: Iterable[int], look_s: float = HELD_BACK_LOOK_S) -> bool:
    """Whether the processes `pids` want a CPU now and are not getting one: some thread runnable at the start
    and the end of a look of `look_s` seconds, while all of them ran less than STARVED_SHARE of it.
    cpu_wait_seconds cannot tell: schedstat counts a wait only once it ends, so a program held back all along
    shows none."""
    pids = list(pids)
    runnable_before, cpu_before = _runnable_threads_and_cpu_ns(pids)
    if not runnable_before:
        return False
    time.sleep(look_s)
    runnable_after, cpu_after = _runnable_threads_and_cpu_ns(pids)
    return bool(runnable_before & runnable_after) and cpu_after - cpu_before < STARVED_SHARE * look_s * 1e9


def starving(
    cpu_s: float, cpu_wait_s: float, elapsed_s: float, held_back_now: Callable[[], bool] | None = None
) -> bool:
    """Whether programs that had `cpu_s` of CPU and waited `cpu_wait_s` for one in `elapsed_s` were held back by other
    work: less than STARVED_SHARE of a core, and most of the time they did not run spent waiting for a CPU, or (asked
    only then) `held_back_now()`: a wait still going on is not in `cpu_wait_s` (held_back). A program that sleeps, or
    waits on a pipe or a lock of its own, waits for no CPU: what it causes is its own time limit."""
    if cpu_s >= STARVED_SHARE * elapsed_s:
        return False
    return cpu_wait_s >= STARVED_SHARE * (elapsed_s - cpu_s) or (held_back_now is not None and held_back_now())


def v1_groups(own_cpu_cgroup: Path | None) -> tuple[Path, Path] | None:
    """v1: the shared fresh and idle cpu cgroups under this process's own, made once; None where they
    cannot be (no writable `cpu` hierarchy, or a kernel before 5.15 without cpu.idle)."""
    if own_cpu_cgroup is None or not (own_cpu_cgroup / "cpu.idle").exists():
        return None
    fresh, idle = own_cpu_cgroup / FRESH_GROUP, own_cpu_cgroup / IDLE_GROUP
    try:
        fresh.mkdir(exist_ok=True)
        idle.mkdir(exist_ok=True)
        (idle / "cpu.idle").write_text("1")
    except OSError:
        return None
    return fresh, idle


def move_into(group: Path, pids: Iterable[int]) -> None:
    """Move processes into the cpu cgroup `group` (v1: independent of their memory and pids cgroups)."""
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, FileNotFoundError):
            (group / "cgroup.procs").write_text(str(pid))
