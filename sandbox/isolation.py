"""Kernel isolation for one sandbox run: bubblewrap namespaces, cgroup limits, an unprivileged uid.

Each run gets:
- fresh user, PID, network, IPC, UTS and mount namespaces (`bwrap --unshare-all`): no
  network at all, only its own processes in /proc, nothing of the host's filesystem but
  a read-only /usr, a few named /etc entries and the runner script; no nested user
  namespaces (`--disable-userns`), so no way to regain capabilities inside;
- a read-only root; the only writable places are private tmpfs mounts (/sandbox, /tmp,
  /dev/shm) of bounded size, gone with the run;
- a memory cgroup and a pids cgroup of its own (memory counts tmpfs pages too; pids
  counts threads), which also tell whether the kernel OOM-killed anything;
- the host uid `nobody`, so nothing in the sandbox holds root's rights even outside
  its namespaces.

When bubblewrap or writable cgroups are missing the sandbox refuses to start and says
what to install; `Isolation.NONE` runs without any of this and must be chosen explicitly.
"""

from __future__ import annotations

import contextlib
import enum
import errno
import os
import shutil
import signal
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

RUNNER = Path(__file__).with_name("runner.py")
SANDBOX_UID = 65534  # nobody
SANDBOX_GID = 65534
CGROUP_ROOT = Path("/sys/fs/cgroup")
CONTROLLERS = ("memory", "pids")
CGROUP_PREFIX = "reward-sandbox-"
STALE_CGROUP_S = 600
# /etc entries toolchains read; everything else of /etc (passwd, shadow, ...) stays out.
ETC_ENTRIES = ("/etc/alternatives", "/etc/java-17-openjdk", "/etc/ld.so.cache")
SANDBOX_PYTHON = "/usr/bin/python3"


class Isolation(enum.Enum):
    BWRAP = "bwrap"
    NONE = "none"  # insecure: for trusted code only, never chosen implicitly


class IsolationUnavailable(RuntimeError):
    """The host lacks what the chosen isolation needs; the message says what to install."""


@dataclass(frozen=True)
class SandboxSize:
    """Bounds of a whole run (all its tests together)."""

    memory_mb: int  # while tests run
    pids: int
    disk_mb: int
    tmp_mb: int = 32
    compile_memory_mb: int = 0  # while compiling (compilers need more than most tests)

    def memory_bytes(self, memory_mb: int) -> int:
        """The cgroup also holds the tmpfs pages: /sandbox, /tmp and /dev/shm."""
        return (memory_mb + self.disk_mb + 2 * self.tmp_mb) * 1024 * 1024


def check_host(isolation: Isolation) -> None:
    """Raise IsolationUnavailable unless this host can run `isolation` as promised."""
    if isolation is Isolation.NONE:
        return
    for tool, package in (("bwrap", "bubblewrap"), ("setpriv", "util-linux"), ("sh", "dash")):
        if shutil.which(tool) is None:
            raise IsolationUnavailable(f"`{tool}` not found: install it (apt-get install {package})")
    if not Path(SANDBOX_PYTHON).exists():
        raise IsolationUnavailable(f"{SANDBOX_PYTHON} not found: install it (apt-get install python3)")
    if os.geteuid() != 0:
        raise IsolationUnavailable("the sandbox must run as root to manage cgroups and drop to `nobody`")
    for controller in CONTROLLERS:
        base = _own_cgroup(controller)
        if base is None or not os.access(base, os.W_OK):
            raise IsolationUnavailable(
                f"cgroup v1 controller `{controller}` is not mounted writable under {CGROUP_ROOT}; "
                "mount it, or choose isolation 'none' for trusted code only"
            )


def _own_cgroup(controller: str) -> Path | None:
    """This process's cgroup directory for a v1 controller (runs nest under it)."""
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        _, controllers, path = line.split(":", 2)
        if controller in controllers.split(","):
            directory = CGROUP_ROOT / controller / path.lstrip("/")
            return directory if directory.is_dir() else None
    return None


def _sweep_stale(base: Path) -> None:
    """Remove run cgroups a killed process never closed. rmdir only succeeds on an empty
    cgroup, and the age check spares runs whose first process is still being started."""
    for directory in base.glob(f"{CGROUP_PREFIX}*"):
        with contextlib.suppress(OSError):
            if time.time() - directory.stat().st_mtime > STALE_CGROUP_S:
                directory.rmdir()


class RunCgroup:
    """A memory + pids cgroup pair for one run, removed (with anything left in it) on close."""

    def __init__(self, size: SandboxSize) -> None:
        name = f"{CGROUP_PREFIX}{uuid.uuid4().hex[:12]}"
        self.dirs: dict[str, Path] = {}
        for controller in CONTROLLERS:
            base = _own_cgroup(controller)
            if base is None:
                raise IsolationUnavailable(f"cgroup controller `{controller}` disappeared")
            _sweep_stale(base)
            directory = base / name
            directory.mkdir()
            self.dirs[controller] = directory
        self.size = size
        self._set_memory(size.memory_bytes(max(size.memory_mb, size.compile_memory_mb)))
        (self.dirs["pids"] / "pids.max").write_text(str(size.pids))

    def enter_test_phase(self) -> None:
        """Compiling is over: tighten memory to what the tests may use.

        The kernel refuses (EBUSY) while usage is above the new limit and not yet reclaimed;
        give reclaim a moment, then fail the run rather than test under the looser limit.
        """
        for attempt in range(20):
            try:
                self._set_memory(self.size.memory_bytes(self.size.memory_mb))
                return
            except OSError as exc:
                if exc.errno != errno.EBUSY or attempt == 19:
                    raise
                time.sleep(0.01)

    def _set_memory(self, limit: int) -> None:
        memory = self.dirs["memory"]
        current = int((memory / "memory.limit_in_bytes").read_text())
        # memsw (memory + swap) may never be below the memory limit: order the two writes.
        files = ["memory.limit_in_bytes", "memory.memsw.limit_in_bytes"]
        for name in files if limit < current else reversed(files):
            with contextlib.suppress(FileNotFoundError):  # no swap accounting: no swap to limit
                (memory / name).write_text(str(limit))

    def procs_files(self) -> list[str]:
        return [str(directory / "cgroup.procs") for directory in self.dirs.values()]

    def pids(self) -> set[int]:
        found: set[int] = set()
        for directory in self.dirs.values():
            with contextlib.suppress(FileNotFoundError):
                found |= {int(p) for p in (directory / "cgroup.procs").read_text().split()}
        return found

    def oom_kills(self) -> int:
        for line in (self.dirs["memory"] / "memory.oom_control").read_text().splitlines():
            if line.startswith("oom_kill "):
                return int(line.split()[1])
        return 0

    def peak_memory_bytes(self) -> int:
        return int((self.dirs["memory"] / "memory.max_usage_in_bytes").read_text())

    def close(self) -> int:
        """Kill whatever is left, remove the cgroups; returns how many processes had to be killed."""
        leftovers = self.pids()
        deadline = time.monotonic() + 5
        while (pids := self.pids()) and time.monotonic() < deadline:
            for pid in pids:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            time.sleep(0.005)
        for directory in self.dirs.values():
            for _ in range(200):  # rmdir fails with EBUSY until the last task is reaped
                try:
                    directory.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    time.sleep(0.005)
        return len(leftovers)


def bwrap_argv(size: SandboxSize, env: dict[str, str], extra_ro: Sequence[str] = ()) -> list[str]:
    """The bubblewrap command line that starts the runner inside fresh namespaces."""
    argv = [
        "bwrap", "--unshare-all", "--unshare-user", "--disable-userns",
        "--as-pid-1", "--die-with-parent", "--new-session", "--cap-drop", "ALL",
        "--hostname", "sandbox",
        "--ro-bind", "/usr", "/usr",
        "--symlink", "usr/bin", "/bin", "--symlink", "usr/lib", "/lib",
        "--symlink", "usr/lib64", "/lib64", "--symlink", "usr/sbin", "/sbin",
        "--proc", "/proc", "--dev", "/dev",
        "--size", str(size.disk_mb * 1024 * 1024), "--tmpfs", "/sandbox",
        "--size", str(size.tmp_mb * 1024 * 1024), "--tmpfs", "/tmp",
        "--size", str(size.tmp_mb * 1024 * 1024), "--tmpfs", "/dev/shm",
        "--ro-bind", str(RUNNER), "/runner/runner.py",
    ]  # fmt: skip
    for path in (*ETC_ENTRIES, *extra_ro):
        argv += ["--ro-bind-try", path, path]
    # Everything but the bounded tmpfs mounts read-only: writes elsewhere would bypass disk_mb.
    argv += ["--remount-ro", "/dev", "--remount-ro", "/", "--chdir", "/sandbox", "--clearenv"]
    for key, value in env.items():
        argv += ["--setenv", key, value]
    return [*argv, "--", SANDBOX_PYTHON, "-S", "-I", "/runner/runner.py", "/sandbox"]


def launch_argv(cgroup: RunCgroup, size: SandboxSize, env: dict[str, str]) -> list[str]:
    """Join the run's cgroups, drop to `nobody`, then exec bubblewrap.

    A shell joins the cgroups (writing its own pid) before anything forks, so every
    process of the run is counted; Python's preexec_fn would do the same but is unsafe
    in a threaded server.
    """
    # `ulimit -v unlimited`: as root the shell may lift an address-space limit inherited from
    # its caller (a grading worker's); the runner sets each test's own limits.
    join = (
        "ulimit -v unlimited 2>/dev/null; "
        'for f in "$@"; do case "$f" in --) shift; break;; esac; echo $$ > "$f"; shift; done; exec "$@"'
    )
    drop = ["setpriv", f"--reuid={SANDBOX_UID}", f"--regid={SANDBOX_GID}", "--clear-groups", "--"]
    return ["/bin/sh", "-c", join, "sh", *cgroup.procs_files(), "--", *drop, *bwrap_argv(size, env)]


def unisolated_argv(root: Path) -> list[str]:
    """Isolation.NONE: the runner on the host, in a temporary directory. Trusted code only."""
    return [SANDBOX_PYTHON, "-S", "-I", str(RUNNER), str(root)]
