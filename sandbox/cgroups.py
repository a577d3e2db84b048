"""A cgroup of its own for each sandbox run, on cgroup v1 or v2, in the subtree this process was given.

Where this process's cgroup is comes from the kernel: /proc/self/cgroup names it relative to each
hierarchy, and /proc/self/mountinfo says which part of that hierarchy is mounted where (inside a
container the mount's root is the container's own cgroup, not the host's root).

- v1 (hybrid hosts: `memory` and `pids` mounted as v1 hierarchies): a run gets a directory in each,
  under this process's own; memory + swap, pids; OOM kills from memory.oom_control. A writable `cpu`
  hierarchy gives runs a shared fresh and a shared idle group (sandbox/cpu_priority.py).
- v2 (unified: most hosts today): a run gets one directory with memory.max, memory.swap.max 0 and
  pids.max; OOM kills from memory.events, refused forks from pids.events; killed with cgroup.kill;
  with the `cpu` controller where it is available, a yielded run's cgroup goes `cpu.idle`.
  v2 allows controllers for children only in a cgroup with no processes of its own, so the first
  process to set up moves whatever is in its cgroup into a leaf (`SERVICE_LEAF`) and runs are made
  beside it. In the host's real root cgroup it makes a subtree of its own (`SUBTREE`) instead: the
  root is never filled with runs. Non-root users get such a subtree from systemd (`Delegate=yes`,
  a user's `user@UID.service`) or from a container with a private cgroup namespace.

A run's tests may each get a memory cgroup of their own inside the run's (`TestSlot`): `test-0`, `test-1`, ... one
per test running at once, so each test's memory is bounded by what it uses rather than by its address space (threads
and runtimes that reserve address space run as on a judge). The runner cannot open cgroup files (none is mounted in the
sandbox): the host opens each slot's cgroup.procs and the runner's test joins it by writing "0" there. The kernel
checks such a write with the credentials of whoever opened the file (Linux 5.16+), so the test needs no rights of its
own; its descriptor is closed before any of the test's code runs. On v2 the run's own processes (bubblewrap, the
runner) then live in a leaf `runner` beside the slots.

Runs are named `reward-sandbox-<creating pid>-<random>`: a run whose creator died (a grading worker
killed mid-run) is found by `sweep()`, its processes killed and its directories removed.
"""

from __future__ import annotations

import contextlib
import errno
import os
import signal
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from sandbox import cpu_priority

V1_CONTROLLERS = ("memory", "pids")
V2_CONTROLLERS = ("memory", "pids")
RUN_PREFIX = "reward-sandbox-"
SERVICE_LEAF = "reward-service"  # v2: where the service's own processes live (never matches RUN_PREFIX)
SUBTREE = "reward-sandbox"  # v2: made under the host's root cgroup, never filled directly
STALE_RUN_S = 600  # an empty run directory this old is removed even if its creator lives


class CgroupUnavailable(RuntimeError):
    """No writable cgroup for runs here; the message says why and what to do."""


@dataclass(frozen=True)
class Mount:
    """One cgroup filesystem in /proc/self/mountinfo."""

    root: str  # the part of the hierarchy mounted here ("/" unless a container sees its own only)
    point: Path
    version: int
    controllers: frozenset[str]  # v1: the hierarchy's controllers; v2: empty (read cgroup.controllers)


def parse_mountinfo(text: str) -> list[Mount]:
    """cgroup and cgroup2 mounts: `ID PARENT MAJ:MIN ROOT POINT OPTS [TAGS] - FSTYPE SOURCE SUPEROPTS`."""
    mounts = []
    for line in text.splitlines():
        before, _, after = line.partition(" - ")
        fields, tail = before.split(), after.split()
        if len(fields) < 5 or len(tail) < 3 or tail[0] not in ("cgroup", "cgroup2"):
            continue
        point = Path(fields[4].replace("\\040", " "))
        if tail[0] == "cgroup2":
            mounts.append(Mount(fields[3], point, 2, frozenset()))
        else:
            mounts.append(Mount(fields[3], point, 1, frozenset(tail[2].split(","))))
    return mounts


def parse_proc_cgroup(text: str) -> dict[str, str]:
    """This process's cgroup path per v1 controller, and under "" its v2 (unified) path."""
    paths = {}
    for line in text.splitlines():
        _, controllers, path = line.split(":", 2)
        for controller in controllers.split(",") if controllers else [""]:
            paths[controller] = path
    return paths


def directory_of(mount: Mount, path: str) -> Path | None:
    """Where `path` (relative to the hierarchy's root) is in this mount, or None when it lies outside it."""
    root = mount.root.rstrip("/") or ""
    if path != root and not path.startswith(root + "/"):
        return None
    return mount.point / path[len(root) :].lstrip("/")


@dataclass(frozen=True)
class Layout:
    """What the kernel says about this process's cgroups."""

    mounts: list[Mount]
    paths: dict[str, str]

    @classmethod
    def read(cls) -> Layout:
        return cls(parse_mountinfo(Path("/proc/self/mountinfo").read_text()),
                   parse_proc_cgroup(Path("/proc/self/cgroup").read_text()))  # fmt: skip

    def v1_directory(self, controller: str) -> Path | None:
        # The last mount on a point hides the earlier ones (a bind mount over a runtime's read-only cgroup mount).
        for mount in reversed(self.mounts):
            if mount.version == 1 and controller in mount.controllers and controller in self.paths:
                return directory_of(mount, self.paths[controller])
        return None

    def v2_directory(self) -> Path | None:
        for mount in reversed(self.mounts):
            if mount.version == 2 and "" in self.paths:
                return directory_of(mount, self.paths[""])
        return None


@dataclass(frozen=True)
class TestSlot:
    """A memory cgroup inside a run for one test at a time: joined through `procs`, its OOM kills in `events`."""

    procs: Path
    events: Path  # `oom_kill N` (v1 memory.oom_control, v2 memory.events)


class RunCgroup(Protocol):
    """The cgroup(s) of one run."""

    test_slots: list[TestSlot]

    def procs_files(self) -> list[str]: ...
    def tighten_memory(self, limit_bytes: int) -> None: ...
    def oom_kills(self) -> int: ...
    def fork_refusals(self) -> int: ...
    def peak_memory_bytes(self) -> int: ...
    def yield_cpu(self) -> None: ...
    def unyield_cpu(self) -> None: ...  # before a kill: an idle process may wait long for a CPU to exit
    def cpu_seconds(self) -> float: ...
    def processes(self) -> set[int]: ...  # every process of the run now
    def close(self) -> int: ...


class Cgroups(Protocol):
    """Where this process makes its runs' cgroups."""

    version: int

    def new_run(self, memory_bytes: int, pids: int, slots: int = 0, slot_bytes: int = 0) -> RunCgroup: ...
    def run_bases(self) -> list[Path]: ...  # where runs are made (v1: one directory per controller)
    def runs(self) -> list[Path]: ...
    def sweep(self) -> int: ...
    def describe(self) -> str: ...


def find_cgroups(layout: Layout | None = None) -> Cgroups:
    """The cgroups this process can give its runs: v1 where memory and pids are v1 hierarchies, else v2.

    Raises CgroupUnavailable saying why and what to do.
    """
    layout = layout or Layout.read()
    if host_version(layout) == 1:
        return V1Cgroups.of(layout)
    directory = layout.v2_directory()
    if directory is None:
        raise CgroupUnavailable(
            "no cgroup v2 mount holds this process's cgroup and cgroup v1 `memory` and `pids` are not both mounted: "
            "mount cgroup2 at /sys/fs/cgroup"
        )
    return V2Cgroups.of(directory)


def host_version(layout: Layout | None = None) -> int:
    """1 where memory and pids are v1 hierarchies (hybrid hosts), else 2; reads only, changes nothing."""
    layout = layout or Layout.read()
    return 1 if all(c in layout.paths for c in V1_CONTROLLERS) else 2


def _run_name() -> str:
    """A run's name says who made it: this process's pid and start time (_creator_alive)."""
    return f"{RUN_PREFIX}{os.getpid()}-{_start_time(os.getpid())}-{uuid.uuid4().hex[:12]}"


def _start_time(pid: int) -> str | None:
    """When process `pid` started (clock ticks since boot: /proc/PID/stat's 22nd field), None where there is none.
    With the pid it names that process alone, never a later one that was given the same pid."""
    try:
        return cpu_priority.stat_fields(Path(f"/proc/{pid}/stat"))[19]
    except (OSError, IndexError):
        return None


def _creator_alive(directory: Path) -> bool:
    """Whether the process that made this run directory still exists (in this PID namespace): the pid its name
    starts with, started when its name says (a name without a start time, an older service's: the pid alone)."""
    pid, *rest = directory.name.removeprefix(RUN_PREFIX).split("-")
    if not pid.isdigit():
        return True  # not one of ours by this scheme: left to the age rule
    started = _start_time(int(pid))
    return started is not None and (len(rest) < 2 or rest[0] == started)


def _is_stale(directory: Path) -> bool:
    """Its creator is gone, or it is old and empty (no process in it or its test slots). A run whose creator lives
    is never taken while a process is in it, however old: another service's notebook session on this host."""
    with contextlib.suppress(OSError):
        if not _creator_alive(directory):
            return True
        old = time.time() - directory.stat().st_mtime > STALE_RUN_S
        return old and not any(_pids_in(part) for part in _with_children(directory))
    return False


def _pids_in(directory: Path) -> set[int]:
    with contextlib.suppress(OSError):
        return {int(p) for p in (directory / "cgroup.procs").read_text().split()}
    return set()


def _destroy(directories: list[Path]) -> int:
    """Kill everything in these cgroups and remove them, in order (a cgroup's children before it); how many
    processes were there.

    cgroup.kill (v2, Linux 5.14+) kills every process at once, forks in progress included; whatever is
    left (v1 has no cgroup.kill) is sent SIGKILL until the cgroups are empty (5 s at most).
    """
    leftovers = set().union(*(_pids_in(d) for d in directories))
    for directory in directories:
        if leftovers and (directory / "cgroup.kill").exists():
            with contextlib.suppress(OSError):
                (directory / "cgroup.kill").write_text("1")
    deadline = time.monotonic() + 5
    while (pids := set().union(*(_pids_in(d) for d in directories))) and time.monotonic() < deadline:
        for pid in pids:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.005)
    for directory in directories:
        _remove(directory)
    return len(leftovers)


def _sweep(bases: list[Path]) -> int:
    """Destroy the runs under `bases` whose creator died (or that are empty and old); how many there were.
    A v1 run is one directory of the same name under each base."""
    names = {run.name for run in _runs(bases) if _is_stale(run)}
    for name in names:
        _destroy([directory for base in bases for directory in _with_children(base / name)])
    return len(names)


def _with_children(run: Path) -> list[Path]:
    """A run's cgroup after the ones inside it (its test slots; on v2 its runner's leaf)."""
    with contextlib.suppress(OSError):
        return [*(child for child in run.iterdir() if child.is_dir()), run]
    return [run]


def _runs(bases: list[Path]) -> list[Path]:
    return [run for base in bases for run in base.glob(f"{RUN_PREFIX}*")]


def _remove(directory: Path) -> None:
    for _ in range(200):  # rmdir fails with EBUSY until the last task is reaped
        try:
            directory.rmdir()
            return
        except FileNotFoundError:
            return
        except OSError:
            time.sleep(0.005)


def _read_key(path: Path, key: str) -> int:
    """`key N` from a flat-keyed cgroup file (memory.events, pids.events, memory.oom_control); 0 if absent."""
    with contextlib.suppress(FileNotFoundError):
        for line in path.read_text().splitlines():
            name, _, value = line.partition(" ")
            if name == key:
                return int(value)
    return 0


def _writable(directory: Path) -> bool:
    return directory.is_dir() and os.access(directory, os.W_OK)


# --- cgroup v1 -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class V1Cgroups:
    bases: dict[str, Path]
    cpu_groups: tuple[Path, Path] | None = None  # the shared fresh and idle cpu cgroups, where `cpu` is writable
    version: int = 1

    @classmethod
    def of(cls, layout: Layout) -> V1Cgroups:
        bases = {}
        for controller in V1_CONTROLLERS:
            base = layout.v1_directory(controller)
            if base is None or not _writable(base):
                raise CgroupUnavailable(
                    f"cgroup v1 controller `{controller}` is not writable here ({base or 'not mounted'}): run as root, "
                    "or give this user a cgroup of its own"
                )
            bases[controller] = base
        own_cpu = layout.v1_directory("cpu")
        return cls(bases, cpu_priority.v1_groups(own_cpu if own_cpu is not None and _writable(own_cpu) else None))

    def new_run(self, memory_bytes: int, pids: int, slots: int = 0, slot_bytes: int = 0) -> V1Run:
        return V1Run(self, memory_bytes, pids, slots, slot_bytes)

    def run_bases(self) -> list[Path]:
        return list(self.bases.values())

    def runs(self) -> list[Path]:
        return _runs(self.run_bases())

    def sweep(self) -> int:
        return _sweep(self.run_bases())

    def describe(self) -> str:
        return "cgroup v1 " + ", ".join(f"{c} under {p}" for c, p in self.bases.items())


class V1Run:
    """A memory + pids cgroup pair, removed (with anything left in it) on close; test slots in the memory one."""

    def __init__(self, cgroups: V1Cgroups, memory_bytes: int, pids: int, slots: int, slot_bytes: int) -> None:
        name = _run_name()
        self.cpu_groups = cgroups.cpu_groups
        self.dirs: dict[str, Path] = {}
        for controller, base in cgroups.bases.items():
            (base / name).mkdir()
            self.dirs[controller] = base / name
        _v1_set_memory(self.dirs["memory"], memory_bytes)
        (self.dirs["pids"] / "pids.max").write_text(str(pids))
        self.test_slots = []
        if slots:
            with contextlib.suppress(OSError):  # always hierarchical since Linux 5.11 (and the file refuses "0")
                (self.dirs["memory"] / "memory.use_hierarchy").write_text("1")
        for index in range(slots):
            slot = self.dirs["memory"] / f"test-{index}"
            slot.mkdir()
            _v1_set_memory(slot, slot_bytes)
            self.test_slots.append(TestSlot(slot / "cgroup.procs", slot / "memory.oom_control"))

    def tighten_memory(self, limit_bytes: int) -> None:
        """The kernel refuses (EBUSY) while usage is above the new limit and not yet reclaimed;
        give reclaim a moment, then fail the run rather than go on under the looser limit."""
        for attempt in range(20):
            try:
                _v1_set_memory(self.dirs["memory"], limit_bytes)
                return
            except OSError as exc:
                if exc.errno != errno.EBUSY or attempt == 19:
                    raise
                time.sleep(0.01)

    def procs_files(self) -> list[str]:
        fresh_cpu = [self.cpu_groups[0]] if self.cpu_groups is not None else []
        return [str(directory / "cgroup.procs") for directory in [*self.dirs.values(), *fresh_cpu]]

    def oom_kills(self) -> int:
        return _read_key(self.dirs["memory"] / "memory.oom_control", "oom_kill")

    def fork_refusals(self) -> int:
        return _read_key(self.dirs["pids"] / "pids.events", "max")

    def peak_memory_bytes(self) -> int:
        return int((self.dirs["memory"] / "memory.max_usage_in_bytes").read_text())

    def processes(self) -> set[int]:
        return _pids_in(self.dirs["pids"])  # it holds every process of the run (the memory one's tests are in slots)

    def yield_cpu(self) -> None:
        if self.cpu_groups is None:
            cpu_priority.make_idle(self.processes())
            return
        for _ in range(2):  # again for processes forked during the first pass
            cpu_priority.move_into(self.cpu_groups[1], self.processes())

    def unyield_cpu(self) -> None:
        pids = self.processes()
        if self.cpu_groups is not None:
            cpu_priority.move_into(self.cpu_groups[0], pids)
        cpu_priority.unmake_idle(pids)  # the runner's SCHED_IDLE tests too (runner.py)

    def cpu_seconds(self) -> float:
        return cpu_priority.cpu_seconds(self.processes())

    def close(self) -> int:
        """Kill whatever is left, remove the cgroups; returns how many processes had to be killed."""
        return _destroy([*(slot.procs.parent for slot in self.test_slots), *self.dirs.values()])


def _v1_set_memory(directory: Path, limit: int) -> None:
    current = int((directory / "memory.limit_in_bytes").read_text())
    # memsw (memory + swap) may never be below the memory limit: order the two writes.
    files = ["memory.limit_in_bytes", "memory.memsw.limit_in_bytes"]
    for name in files if limit < current else reversed(files):
        with contextlib.suppress(FileNotFoundError):  # no swap accounting: no swap to limit
            (directory / name).write_text(str(limit))


# --- cgroup v2 -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class V2Cgroups:
    base: Path  # runs are made here, beside SERVICE_LEAF
    version: int = 2

    @classmethod
    def of(cls, own: Path) -> V2Cgroups:
        """Set up (once per process tree) and return where runs go, starting from this process's cgroup."""
        if own.name == SERVICE_LEAF:  # this process or its parent set up already
            return cls(own.parent)
        if not (own / "cgroup.type").exists():  # only the host's real root cgroup lacks cgroup.type
            _enable(own)  # the root may hold processes and still give controllers to children
            base = own / SUBTREE
            _make(base)
            _enable(base, move_into=base / SERVICE_LEAF, movers={os.getpid()})
            return cls(base)
        _enable(own, move_into=own / SERVICE_LEAF, movers=None)
        return cls(own)

    def new_run(self, memory_bytes: int, pids: int, slots: int = 0, slot_bytes: int = 0) -> V2Run:
        return V2Run(self.base / _run_name(), memory_bytes, pids, slots, slot_bytes)

    def run_bases(self) -> list[Path]:
        return [self.base]

    def runs(self) -> list[Path]:
        return _runs(self.run_bases())

    def sweep(self) -> int:
        return _sweep(self.run_bases())

    def describe(self) -> str:
        return f"cgroup v2 under {self.base}"


def _make(directory: Path) -> None:
    try:
        directory.mkdir(exist_ok=True)
    except OSError as exc:
        raise CgroupUnavailable(f"cannot create the cgroup {directory}: {exc.strerror}; {_DELEGATE_HINT}") from None


_DELEGATE_HINT = (
    "run the service in a cgroup delegated to its user (systemd: `Delegate=yes` in its unit, or "
    "`systemd-run --user --scope -p Delegate=yes reward-api serve`; containers: a private cgroup namespace)"
)


def _enable(directory: Path, move_into: Path | None = None, movers: set[int] | None = None) -> None:
    """Enable memory and pids for the children of `directory`; first move `movers` (None: every process in
    it) into the leaf `move_into`, since v2 gives children controllers only from a cgroup with no processes."""
    available = set((directory / "cgroup.controllers").read_text().split()) if directory.exists() else set()
    missing = [c for c in V2_CONTROLLERS if c not in available]
    if missing:
        raise CgroupUnavailable(
            f"cgroup v2 controller(s) {', '.join(missing)} are not available in {directory} "
            f"(cgroup.controllers: {' '.join(sorted(available)) or 'none'}); {_DELEGATE_HINT}"
        )
    if not os.access(directory / "cgroup.subtree_control", os.W_OK):
        raise CgroupUnavailable(f"the cgroup {directory} is not writable by uid {os.geteuid()}; {_DELEGATE_HINT}")
    if move_into is not None:
        _make(move_into)
        _move_processes(directory, move_into, movers)
    try:
        (directory / "cgroup.subtree_control").write_text(" ".join(f"+{c}" for c in V2_CONTROLLERS))
    except OSError as exc:
        raise CgroupUnavailable(
            f"cannot enable {', '.join(V2_CONTROLLERS)} for the children of {directory}: {exc.strerror} "
            f"(processes still in it: {sorted(_pids_in(directory))[:5]}); {_DELEGATE_HINT}"
        ) from None
    if "cpu" in available:  # optional: CPU priority falls back to per-process scheduling (cpu_priority.py)
        with contextlib.suppress(OSError):
            (directory / "cgroup.subtree_control").write_text("+cpu")


def _move_processes(source: Path, leaf: Path, only: set[int] | None) -> None:
    """Move processes of `source` into `leaf`, again until none is left (a process may fork meanwhile)."""
    for _ in range(50):
        pids = _pids_in(source) if only is None else only & _pids_in(source)
        if not pids:
            return
        for pid in pids:
            try:
                (leaf / "cgroup.procs").write_text(str(pid))
            except ProcessLookupError:
                pass
            except OSError as exc:
                if exc.errno != errno.ESRCH:
                    raise CgroupUnavailable(
                        f"cannot move process {pid} from {source} into {leaf}: {exc.strerror}; {_DELEGATE_HINT}"
                    ) from None
        if only is not None:
            return


class V2Run:
    """One v2 cgroup with memory (tmpfs pages included, no swap) and pids bounds. With test slots, its processes live
    in leaves inside it (v2 gives children controllers only from a cgroup with no processes): `runner`, the slots."""

    def __init__(self, directory: Path, memory_bytes: int, pids: int, slots: int, slot_bytes: int) -> None:
        directory.mkdir()
        self.dir = directory
        _v2_set_memory(directory, memory_bytes)
        (directory / "pids.max").write_text(str(pids))
        with contextlib.suppress(FileNotFoundError):  # no cpu controller here
            (directory / "cpu.weight.nice").write_text(str(cpu_priority.FRESH_NICENESS))
        self.test_slots = []
        self.leaves = [directory]  # where its processes are
        if slots:
            (directory / "cgroup.subtree_control").write_text("+memory")
            self.leaves = [directory / "runner", *(directory / f"test-{index}" for index in range(slots))]
            for leaf in self.leaves:
                leaf.mkdir()
            for slot in self.leaves[1:]:
                _v2_set_memory(slot, slot_bytes)
                self.test_slots.append(TestSlot(slot / "cgroup.procs", slot / "memory.events"))

    def tighten_memory(self, limit_bytes: int) -> None:
        """v2 reclaims down to the new bound (or OOM-kills in the run) instead of refusing the write."""
        (self.dir / "memory.max").write_text(str(limit_bytes))

    def procs_files(self) -> list[str]:
        return [str(self.leaves[0] / "cgroup.procs")]

    def oom_kills(self) -> int:
        return _read_key(self.dir / "memory.events", "oom_kill")

    def fork_refusals(self) -> int:
        return _read_key(self.dir / "pids.events", "max")

    def peak_memory_bytes(self) -> int:
        with contextlib.suppress(FileNotFoundError):  # memory.peak: Linux 5.19+
            return int((self.dir / "memory.peak").read_text())
        return 0

    def yield_cpu(self) -> None:
        try:
            (self.dir / "cpu.idle").write_text("1")
        except FileNotFoundError:  # no cpu controller here
            cpu_priority.make_idle(self.processes())

    def unyield_cpu(self) -> None:
        try:
            (self.dir / "cpu.idle").write_text("0")
        except FileNotFoundError:  # no cpu controller here
            cpu_priority.unmake_idle(self.processes())

    def processes(self) -> set[int]:
        return set().union(*map(_pids_in, self.leaves))

    def cpu_seconds(self) -> float:
        return _read_key(self.dir / "cpu.stat", "usage_usec") / 1e6

    def close(self) -> int:
        return _destroy([*self.leaves, self.dir] if self.test_slots else [self.dir])


def _v2_set_memory(directory: Path, limit: int) -> None:
    (directory / "memory.max").write_text(str(limit))
    with contextlib.suppress(FileNotFoundError):  # no swap accounting: no swap to limit
        (directory / "memory.swap.max").write_text("0")
