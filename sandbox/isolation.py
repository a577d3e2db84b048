"""Kernel isolation for one sandbox run: bubblewrap namespaces, then cgroup or rlimit bounds.

Each run gets (started by a `bwrap` of its own, or forked from the zygote's, which sets up the same for it:
sandbox/zygote_server.py, where runs share the zygote's user namespace):
- fresh user, PID, network, IPC, UTS and mount namespaces (`bwrap --unshare-all`): no
  network at all, only its own processes in /proc, nothing of the host's filesystem but
  a read-only /usr and a few named /etc entries (the runner comes compiled on stdin); no nested user
  namespaces (`--disable-userns`) and no capabilities, so no way to regain any inside;
- a read-only root; the only writable places are private tmpfs mounts (/sandbox, /tmp,
  /dev/shm) of bounded size, gone with the run;
- bounds on memory and processes for the whole run: a cgroup of its own (sandbox/cgroups.py,
  v1 or v2: memory counts tmpfs pages too, pids counts threads, and the kernel says when it
  OOM-killed), with a memory cgroup inside it for each test running at once where the language's
  memory is bounded per test (the runner moves each test into a free one), or, at the weaker
  level the operator must choose (`bwrap-rlimits`) where no cgroup is writable, per-process
  rlimits only (see `Level`);
- a host uid without rights: `nobody` when the service runs as root; as an ordinary user, that
  user's uid inside a user namespace of its own with no capabilities (bubblewrap unprivileged).

The level a sandbox really runs at is named in the logs, /readyz and every result's details;
it is never lower than configured: when the host cannot provide it the sandbox refuses to start
and says what to do. `Isolation.NONE` runs without any of this and must be chosen explicitly.
"""

from __future__ import annotations

import enum
import functools
import os
import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from sandbox import runner
from sandbox.cgroups import Cgroups, CgroupUnavailable, RunCgroup, find_cgroups

RUNNER = Path(__file__).with_name("runner.py")
# What the sandbox's interpreter starts with: the runner's code object from stdin, sent compiled (a script given
# by path is compiled from source at every start: 2 ms of each run's CPU), after a 10-digit length; the job follows.
RUNNER_BOOTSTRAP = """import marshal, os
def read(size):
    data = b""
    while len(data) < size:
        chunk = os.read(0, size - len(data))
        if not chunk:
            raise SystemExit("runner: stdin closed before the runner's code arrived")
        data += chunk
    return data
exec(marshal.loads(read(int(read(10)))), {"__name__": "__main__"})
"""
_COMPILE_RUNNER = (
    "import marshal, sys; sys.stdout.buffer.write(marshal.dumps(compile(sys.stdin.read(), 'runner.py', 'exec')))"
)
NOBODY = 65534  # what programs run as when the service is root
# /etc entries toolchains read; everything else of /etc (passwd, shadow, ...) stays out.
ETC_ENTRIES = ("/etc/alternatives", "/etc/java-17-openjdk", "/etc/ld.so.cache")
# The sandbox's /etc/hosts: `localhost` resolves (a program serving and calling itself on it), nothing else does.
HOSTS = Path(__file__).with_name("hosts")
SANDBOX_PYTHON = "/usr/bin/python3"


class Isolation(enum.Enum):
    BWRAP = "bwrap"  # namespaces + cgroup bounds; refuses to start without a writable cgroup
    BWRAP_RLIMITS = "bwrap-rlimits"  # namespaces + cgroups where writable, else per-process rlimits (weaker)
    NONE = "none"  # insecure: for trusted code only, never chosen implicitly


class IsolationUnavailable(RuntimeError):
    """The host lacks what the chosen isolation needs; the message says what to do."""


@dataclass(frozen=True)
class Level:
    """The isolation a sandbox really runs with on this host."""

    isolation: Isolation
    cgroups: Cgroups | None  # None: rlimits only (or no isolation)
    uid: int  # the host uid programs run as

    @property
    def name(self) -> str:
        """bwrap+cgroup2, bwrap+cgroup1, bwrap+rlimits or none: the level of the README's table."""
        if self.isolation is Isolation.NONE:
            return "none"
        return f"bwrap+cgroup{self.cgroups.version}" if self.cgroups else "bwrap+rlimits"

    def describe(self) -> str:
        if self.isolation is Isolation.NONE:
            return "none: programs run unsandboxed on this host (trusted code only)"
        bounds = self.cgroups.describe() if self.cgroups else "per-process rlimits only, no cgroup (weaker)"
        who = f"uid {self.uid}" + (" (nobody)" if self.uid == NOBODY else "")
        if self.uid == os.geteuid():
            who += " in a user namespace of its own, no capabilities"
        return f"{self.name}: namespaces, {bounds}, a system-call filter, programs as {who}"

    def new_run_cgroup(self, size: SandboxSize) -> RunCgroup | None:
        if self.cgroups is None:
            return None
        memory_bytes = size.memory_bytes(max(size.memory_mb, size.compile_memory_mb))
        return self.cgroups.new_run(memory_bytes, size.pids, size.test_slots, size.test_memory_mb * 1024 * 1024)


@dataclass(frozen=True)
class SandboxSize:
    """Bounds of a whole run (all its tests together)."""

    memory_mb: int  # while tests run
    pids: int
    disk_mb: int
    tmp_mb: int = 32
    compile_memory_mb: int = 0  # while compiling (compilers need more than most tests)
    test_slots: int = 0  # tests with a memory cgroup of their own (sandbox/cgroups.py TestSlot), one per test at once
    test_memory_mb: int = 0  # each slot's bound: what a test uses, files it writes to the tmpfs mounts included

    def memory_bytes(self, memory_mb: int) -> int:
        """The cgroup also holds the tmpfs pages: /sandbox, /tmp and /dev/shm."""
        return (memory_mb + self.disk_mb + 2 * self.tmp_mb) * 1024 * 1024


def prepare(isolation: Isolation) -> Level:
    """The level this host gives `isolation`; IsolationUnavailable (saying what to do) when below it.

    On cgroup v2 the first call in a process tree moves it into a leaf cgroup (sandbox/cgroups.py).
    """
    if isolation is Isolation.NONE:
        return Level(isolation, None, os.geteuid())
    tools = [("bwrap", "bubblewrap"), ("sh", "dash")] + ([("setpriv", "util-linux")] if os.geteuid() == 0 else [])
    for tool, package in tools:
        if shutil.which(tool) is None:
            raise IsolationUnavailable(f"`{tool}` not found: install it (apt-get install {package})")
    if not Path(SANDBOX_PYTHON).exists():
        raise IsolationUnavailable(f"{SANDBOX_PYTHON} not found: install it (apt-get install python3)")
    _check_syscall_filter()
    try:
        cgroups: Cgroups | None = find_cgroups()
    except CgroupUnavailable as exc:
        if isolation is not Isolation.BWRAP_RLIMITS:
            raise IsolationUnavailable(
                f"no writable cgroup for sandbox runs: {exc}. Or choose isolation 'bwrap-rlimits' (namespaces and "
                'per-process limits only, weaker: README "Isolation levels")'
            ) from None
        cgroups = None
    level = Level(isolation, cgroups, NOBODY if os.geteuid() == 0 else os.geteuid())
    _check_namespaces(level)
    if cgroups is not None:
        cgroups.sweep()  # runs a killed process left behind
    return level


def _check_syscall_filter() -> None:
    """Every test runs under runner.py's seccomp filter (confine), whose system call numbers it knows for x86_64 and
    aarch64 only; a kernel without seccomp filters would fail every test."""
    if runner.seccomp_program() is None:
        raise IsolationUnavailable(
            f"programs run under a seccomp filter for {' or '.join(runner.SECCOMP_MACHINES)}, and this machine is "
            f"{os.uname().machine}: run the sandbox on one of those"
        )
    if "Seccomp_filters:" not in Path("/proc/self/status").read_text():
        raise IsolationUnavailable("this kernel has no seccomp filters (CONFIG_SECCOMP_FILTER): programs need them")


def _check_namespaces(level: Level) -> None:
    """bubblewrap must be able to make its namespaces as the uid programs run as (user namespaces enabled,
    no seccomp or AppArmor profile forbidding them)."""
    argv = [*_drop_privileges(level), "bwrap", "--unshare-all", "--unshare-user", "--disable-userns",
            "--die-with-parent", "--cap-drop", "ALL", "--ro-bind", "/usr", "/usr", "--symlink", "usr/lib", "/lib",
            "--symlink", "usr/lib64", "/lib64", "--proc", "/proc", "--", "/usr/bin/true"]  # fmt: skip
    probe = subprocess.run(argv, capture_output=True, text=True, timeout=30, check=False)
    if probe.returncode != 0:
        raise IsolationUnavailable(
            f"bubblewrap cannot create its namespaces here ({probe.stderr.strip()[-300:]}): enable unprivileged user "
            "namespaces (sysctl user.max_user_namespaces > 0; Ubuntu 24.04+: an AppArmor profile allowing bwrap "
            "userns), and in a container use services/sandbox/seccomp.json and an unmasked /proc"
        )


def _drop_privileges(level: Level) -> list[str]:
    """As root, programs run as `nobody`; an ordinary user's programs keep its uid (in a user namespace)."""
    if os.geteuid() != 0:
        return []
    return ["setpriv", f"--reuid={level.uid}", f"--regid={level.uid}", "--clear-groups", "--"]


def bwrap_argv(
    size: SandboxSize, env: dict[str, str], extra_ro: Sequence[str] = (), command: Sequence[str] | None = None
) -> list[str]:
    """The bubblewrap command line that starts the runner inside fresh namespaces; `command` (the zygote's, which
    keeps its capabilities in its user namespace to make each run's namespaces) in place of the runner. The zygote
    lives as long as its control socket, not as the thread that started it (--die-with-parent's parent)."""
    argv = [
        "bwrap", "--unshare-all", "--unshare-user", "--disable-userns", "--new-session",
        *(["--as-pid-1", "--die-with-parent", "--cap-drop", "ALL"] if command is None else ["--cap-add", "ALL"]),
        "--hostname", "sandbox",
        "--ro-bind", "/usr", "/usr",
        "--symlink", "usr/bin", "/bin", "--symlink", "usr/lib", "/lib",
        "--symlink", "usr/lib64", "/lib64", "--symlink", "usr/sbin", "/sbin",
        "--proc", "/proc", "--dev", "/dev",
        "--size", str(size.disk_mb * 1024 * 1024), "--tmpfs", "/sandbox",
        "--size", str(size.tmp_mb * 1024 * 1024), "--tmpfs", "/tmp",
        "--size", str(size.tmp_mb * 1024 * 1024), "--tmpfs", "/dev/shm",
    ]  # fmt: skip
    argv += ["--ro-bind", str(HOSTS), "/etc/hosts"]
    for path in (*ETC_ENTRIES, *extra_ro):
        argv += ["--ro-bind-try", path, path]
    # Everything but the bounded tmpfs mounts read-only: writes elsewhere would bypass disk_mb.
    argv += ["--remount-ro", "/dev", "--remount-ro", "/", "--chdir", "/sandbox", "--clearenv"]
    for key, value in env.items():
        argv += ["--setenv", key, value]
    return [*argv, "--", *(command or (SANDBOX_PYTHON, "-S", "-I", "-c", RUNNER_BOOTSTRAP, "/sandbox"))]


def launch_argv(
    level: Level,
    cgroup: RunCgroup | None,
    size: SandboxSize,
    env: dict[str, str],
    binds: Sequence[str] = (),
    command: Sequence[str] | None = None,
) -> list[str]:
    """Join the run's cgroups, drop to the programs' uid, then exec bubblewrap.

    A shell joins the cgroups (writing its own pid) before anything forks, so every
    process of the run is counted; Python's preexec_fn would do the same but is unsafe
    in a threaded server. The runner lowers its own priority (the job's `niceness`) before any test
    starts: one exec of `nice` fewer in every run's start.
    """
    # `ulimit -v unlimited`: as root the shell may lift an address-space limit inherited from
    # its caller (a grading worker's); the runner sets each test's own limits.
    join = (
        "ulimit -v unlimited 2>/dev/null; "
        'for f in "$@"; do case "$f" in --) shift; break;; esac; echo $$ > "$f"; shift; done; exec "$@"'
    )
    procs = cgroup.procs_files() if cgroup is not None else []
    bwrap = bwrap_argv(size, env, binds, command)
    return ["/bin/sh", "-c", join, "sh", *procs, "--", *_drop_privileges(level), *bwrap]


def zygote_argv(level: Level, control_fd: int, binds: Sequence[str]) -> list[str]:
    """The zygote's sandbox (sandbox/zygote_server.py): its runs mount their own tmpfs over these small ones, and
    set their own environment; it reads its code, then the runner's, from stdin and its runs on `control_fd`."""
    size = SandboxSize(memory_mb=0, pids=0, disk_mb=1, tmp_mb=1)
    command = (SANDBOX_PYTHON, "-S", "-I", "-c", RUNNER_BOOTSTRAP, str(control_fd))
    return launch_argv(level, None, size, {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"}, binds, command)


def unisolated_argv(root: Path) -> list[str]:
    """Isolation.NONE: the runner on the host, in a temporary directory. Trusted code only."""
    return [SANDBOX_PYTHON, "-S", "-I", "-c", RUNNER_BOOTSTRAP, str(root)]


@functools.cache
def runner_preamble() -> bytes:
    """What a run's stdin starts with (RUNNER_BOOTSTRAP): runner.py compiled by the sandbox's own interpreter."""
    return preamble(RUNNER.read_text(encoding="utf-8"))


@functools.cache
def preamble(source: str) -> bytes:
    """`source` as RUNNER_BOOTSTRAP reads it from stdin: compiled by the sandbox's own interpreter, since marshal's
    format is that version's, whatever Python the service runs on (the runner; a session's kernel)."""
    compiled = subprocess.run(
        [SANDBOX_PYTHON, "-S", "-I", "-c", _COMPILE_RUNNER], input=source.encode(), capture_output=True, check=True
    ).stdout
    return b"%010d" % len(compiled) + compiled
