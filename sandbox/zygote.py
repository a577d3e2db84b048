"""Runs forked from a warm sandbox (sandbox/zygote_server.py): the host's side.

    zygote = Zygote(level, binds)             # started on the first run, again if it dies
    process = zygote.start_run(size, env, cgroup_procs_fds, slot_fds, stderr_fd)
    process.stdin, process.stdout, process.wait(), process.kill()   # as subprocess.Popen's

The zygote is one `bwrap` sandbox per Executor, holding the runner's code; each run is forked from it into
namespaces and tmpfs mounts of its own (zygote_server.py says what a run gets), about 3 ms where a fresh
`bwrap` and interpreter take 20. Used where the run has a cgroup (its bounds then hold whatever process
started it); the rlimits-only level keeps a `bwrap` per run (RLIMIT_NPROC counts per user namespace, which
runs forked from one zygote share). SANDBOX_ZYGOTE=0 turns it off.
"""

from __future__ import annotations

import contextlib
import logging
import marshal
import os
import select
import signal
import socket
import subprocess
import tempfile
import threading
import weakref
from collections.abc import Sequence
from pathlib import Path

from sandbox.isolation import Level, SandboxSize, preamble, runner_preamble, zygote_argv

SERVER = Path(__file__).with_name("zygote_server.py")
# A run's init answers within milliseconds; this long only on a machine stalled far past any run's budget.
START_TIMEOUT_S = 30.0
log = logging.getLogger(__name__)


class ZygoteUnavailable(RuntimeError):
    """A run could not be started from the zygote (the message says why); the caller starts it with `bwrap`."""


def enabled_by_env() -> bool:
    return os.environ.get("SANDBOX_ZYGOTE", "1") != "0"


class Zygote:
    """The warm sandbox of one Executor: started on the first run, started again when found dead."""

    def __init__(self, level: Level, binds: Sequence[str] = ()) -> None:
        self.level, self.binds = level, tuple(dict.fromkeys(binds))
        self.refused: str | None = None  # why a live zygote could not start a run: it will not, this host refuses
        self._lock = threading.Lock()
        self._process: subprocess.Popen | None = None
        self._control: socket.socket | None = None
        self._log = tempfile.TemporaryFile()  # noqa: SIM115 - the zygote's own stderr, for the reason it died
        weakref.finalize(self, _stop, self.__dict__)

    @property
    def pid(self) -> int | None:
        """The zygote's `bwrap` launcher, while it runs."""
        return self._process.pid if self._process is not None else None

    def start_run(
        self, size: SandboxSize, env: dict[str, str], cgroup_procs: Sequence[int], slots: Sequence[int], stderr: int
    ) -> ZygoteRun:
        """A run's sandbox, its runner reading stdin: the fds are the host's, sent to the zygote (and kept here)."""
        if self.refused is not None:
            raise ZygoteUnavailable(self.refused)
        in_r, in_w = os.pipe()
        out_r, out_w = os.pipe()
        status, their_status = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        spec = {"disk_bytes": size.disk_mb << 20, "tmp_bytes": size.tmp_mb << 20, "env": env}
        spec["cgroups"] = len(cgroup_procs)
        try:
            self._send(marshal.dumps(spec), [in_r, out_w, stderr, their_status.fileno(), *cgroup_procs, *slots])
        except BaseException:
            for fd in (in_w, out_r):
                os.close(fd)
            status.close()
            raise
        finally:
            os.close(in_r)
            os.close(out_w)
            their_status.close()
        run = ZygoteRun(in_w, out_r, status)
        try:
            run.await_start()
        except ZygoteUnavailable as exc:
            run.close()
            if str(exc).startswith("refused:"):  # namespaces, mounts or capabilities: this host will refuse again
                self.refused = f"the zygote cannot start runs here ({exc})"
                log.error("%s: every run starts with bwrap from now on", self.refused)
            raise
        return run

    def _send(self, spec: bytes, fds: list[int]) -> None:
        with self._lock:
            for attempt in (1, 2):
                if self._process is None or self._process.poll() is not None:
                    self._start()
                try:
                    socket.send_fds(self._control, [spec], fds)
                    return
                except OSError as exc:
                    self._log.seek(0)
                    said = self._log.read()[-1000:].decode(errors="replace").strip()
                    _stop(self.__dict__)
                    if attempt == 2:
                        raise ZygoteUnavailable(f"the zygote ended ({exc}): {said}") from None
                    log.warning("the sandbox zygote ended, starting it again: %s", said)

    def _start(self) -> None:
        _stop(self.__dict__)
        control, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            self._process = subprocess.Popen(
                zygote_argv(self.level, theirs.fileno(), self.binds),
                stdin=subprocess.PIPE,
                stdout=self._log,
                stderr=self._log,
                start_new_session=True,
                pass_fds=[theirs.fileno()],
            )
        finally:
            theirs.close()
        self._control = control
        reaper = threading.Thread(target=_reap, args=(self._process, self.__dict__, self._lock), daemon=True)
        reaper.start()
        with contextlib.suppress(BrokenPipeError):  # it died at once: the send that follows says so
            self._process.stdin.write(preamble(SERVER.read_text(encoding="utf-8")) + runner_preamble())
            self._process.stdin.close()


def _stop(state: dict) -> None:
    """Closing the control socket ends the zygote, and its runs in flight with it (each init's parent-death signal);
    its `bwrap` launcher is killed and reaped."""
    if state.get("_control") is not None:
        state["_control"].close()
        state["_control"] = None
    process: subprocess.Popen | None = state.get("_process")
    if process is not None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()
        state["_process"] = None


def _reap(process: subprocess.Popen, state: dict, lock: threading.Lock) -> None:
    """Waits for the zygote's `bwrap` launcher to end: one killed from outside is reaped at once (no zombie) and
    the zygote it leaves behind is ended with it (_stop), not kept until the next run or the Executor's end.
    (The state, not the Zygote: a thread holding the Zygote would keep its finalizer from ever running.)"""
    process.wait()
    with lock:
        if state.get("_process") is process:
            _stop(state)


class ZygoteRun:
    """One run forked by the zygote, used as its subprocess.Popen would be: `stdin`, `stdout`, `poll()`, `wait()`,
    `returncode`; `kill()` kills its init, which ends its whole PID namespace."""

    def __init__(self, stdin: int, stdout: int, status: socket.socket) -> None:
        self.stdin = open(stdin, "wb")  # noqa: SIM115 - closed by its owner (executor._Sandbox)
        self.stdout = open(stdout, "rb")  # noqa: SIM115
        self.returncode: int | None = None
        self._status = status  # the init's "started" with its pidfd, then the zygote's "exit N" once it reaped it
        self._init_pidfd: int | None = None

    def await_start(self) -> None:
        self._status.settimeout(START_TIMEOUT_S)
        try:
            message, fds, _, _ = socket.recv_fds(self._status, 4096, 1)
        except TimeoutError:
            raise ZygoteUnavailable(f"the zygote did not start the run within {START_TIMEOUT_S:g}s") from None
        self._status.settimeout(None)
        if message != b"started" or not fds:
            for fd in fds:
                os.close(fd)
            raise ZygoteUnavailable(message.decode(errors="replace") or "the zygote ended before starting the run")
        self._init_pidfd = fds[0]

    def poll(self) -> int | None:
        return self.wait(0) if self.returncode is None and self._exited(0) else self.returncode

    def wait(self, timeout: float | None = None) -> int:
        if self.returncode is None:
            if not self._exited(timeout):
                raise subprocess.TimeoutExpired("sandbox run", timeout or 0)
            message = self._status.recv(64)
            # No "exit N": the zygote died (which SIGKILLs the init), or failed the run.
            self.returncode = int(message.split()[1]) if message.startswith(b"exit ") else -signal.SIGKILL
            self.close()
        return self.returncode

    def _exited(self, timeout: float | None) -> bool:
        return bool(select.select([self._status], [], [], timeout)[0])

    def kill(self) -> None:
        if self._init_pidfd is not None and self.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                signal.pidfd_send_signal(self._init_pidfd, signal.SIGKILL)

    def close(self) -> None:
        """The run's status socket and the init's pidfd (stdin and stdout are their owner's to close)."""
        self._status.close()
        if self._init_pidfd is not None:
            os.close(self._init_pidfd)
            self._init_pidfd = None
