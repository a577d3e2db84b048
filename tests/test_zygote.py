"""Runs forked from the warm zygote (sandbox/zygote.py, sandbox/zygote_server.py) keep what a `bwrap` per run
gives them: namespaces of their own (all but the user namespace, shared and without capabilities), no
capability and no way to gain one, fresh bounded tmpfs, no sight of the zygote or of other runs, the run's
cgroup and its tests' memory cgroups. A zygote that cannot set runs up here is not used: runs start with `bwrap`,
and the log says why. The hostile suites (tests/test_sandbox_hostile*.py) run through the zygote as well."""

from __future__ import annotations

import json
import logging
import os
import signal
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from sandbox import zygote
from sandbox.cpu_priority import descendants
from sandbox.executor import Execution, Executor, Limits
from sandbox.executor import TestInput as Input

LIMITS = Limits(time_s=2)
NAMESPACES = ("cgroup", "ipc", "mnt", "net", "pid", "user", "uts")
# What a run sees of itself, as JSON: its namespaces, capabilities, processes, mounts and cgroup.
INSPECT = (
    f"NAMESPACES = {NAMESPACES!r}\n"
    + """
import json, os, time
status = dict(line.split(":\\t", 1) for line in open("/proc/self/status").read().splitlines() if ":\\t" in line)
time.sleep(float(input() or 0))
print(json.dumps({
    "ns": {name: os.readlink(f"/proc/self/ns/{name}") for name in NAMESPACES},
    "caps": {key: status[key].strip() for key in ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb")},
    "no_new_privs": status["NoNewPrivs"].strip(),
    "uid": os.getuid(),
    "pids": sorted(int(name) for name in os.listdir("/proc") if name.isdigit()),
    "cgroup": open("/proc/self/cgroup").read().strip(),
    "left_over": sorted(os.listdir("/sandbox") + os.listdir("/tmp") + os.listdir("/dev/shm")),
    "hostname": os.uname().nodename,
}))
for path in ("/sandbox/mine", "/tmp/mine", "/dev/shm/mine"):
    open(path, "w").write("from an earlier run")
"""
)


@pytest.fixture(scope="module")
def executor() -> Executor:
    return Executor(parallel=1, compile_cache=None, zygote=True)


def inspect(executor: Executor, wait_s: float = 0.0) -> dict:
    execution = executor.run("python", INSPECT, [Input(f"{wait_s}\n")], LIMITS)
    result = execution.tests[0]
    assert result is not None and result.ok, (execution.sandbox_error, result)
    return json.loads(result.stdout)


def test_runs_are_forked_from_one_zygote(executor: Executor) -> None:
    first = executor.zygote.pid
    inspect(executor)
    inspect(executor)
    assert first is None or executor.zygote.pid == first  # started on the first run at the latest, then kept
    assert executor.zygote.pid is not None and executor.zygote.refused is None


def test_runs_at_once_have_namespaces_of_their_own_but_the_user_namespace(executor: Executor) -> None:
    with ThreadPoolExecutor(2) as pool:
        seen = list(pool.map(lambda _: inspect(executor, wait_s=0.3), range(2)))
    ours = {name: os.readlink(f"/proc/self/ns/{name}") for name in NAMESPACES}
    for name in NAMESPACES:
        if name == "user":
            assert seen[0]["ns"][name] == seen[1]["ns"][name] != ours[name]
        else:
            assert seen[0]["ns"][name] != seen[1]["ns"][name], name
            assert ours[name] not in (seen[0]["ns"][name], seen[1]["ns"][name]), name


def test_a_run_holds_no_capability_and_cannot_gain_one(executor: Executor) -> None:
    seen = inspect(executor)
    assert set(seen["caps"].values()) == {"0000000000000000"}, seen["caps"]
    assert seen["no_new_privs"] == "1"
    assert seen["uid"] == (65534 if os.geteuid() == 0 else os.geteuid())


def test_a_run_sees_only_its_own_processes_fresh_files_and_its_cgroup(executor: Executor) -> None:
    inspect(executor)  # leaves a file in each writable place
    seen = inspect(executor)
    assert seen["pids"][0] == 1 and len(seen["pids"]) <= 3  # the runner (PID 1), the test, maybe a reaped child
    assert seen["left_over"] == ["in", "src"]  # the runner's own: its program and the tests' inputs
    # Its cgroup namespace starts at the run's cgroup: no host path, only the run's own and its test slot's.
    assert {line.split(":", 2)[2] for line in seen["cgroup"].splitlines()} <= {"/", "/test-0", "/../test-0"}, seen
    assert seen["hostname"] == "sandbox"


def test_a_run_has_loopback_and_nothing_else(executor: Executor) -> None:
    program = (
        "import socket\n"
        "server = socket.create_server(('localhost', 0))\n"
        "client = socket.create_connection(server.getsockname())\n"
        "print(sorted(name for _, name in socket.if_nameindex()))\n"
    )
    execution = executor.run("python", program, [Input()], LIMITS)
    assert execution.tests[0] is not None and execution.tests[0].stdout.strip() == "['lo']"


def test_memory_bounds_hold_in_a_forked_run(executor: Executor) -> None:
    hog = "x = bytearray(400 * 1024 * 1024)\nprint('kept')\n"
    # CPU time to spare: the emulated cgroup-v2 guest once spent 2 s of CPU reaching 128 MB.
    execution = executor.run("python", hog, [Input()], Limits(time_s=10, memory_mb=128))
    result = execution.tests[0]
    assert result is not None and not result.ok and "over the memory limit" in result.stderr, result


def test_runs_find_the_standard_library_warm_and_random_seeded_afresh(executor: Executor) -> None:
    """The zygote imported runner.STDLIB_WARM_MODULES (`typing`, `random`, ...) once for all its runs; `random` is
    seeded again in each run and each test's process (the runner forks those without os.fork's handlers), so no two
    tests draw the same numbers, as no two new interpreters would."""
    program = "import sys\nprint('typing' in sys.modules)\nimport random\nprint(random.getrandbits(64))\n"
    runs = [executor.run("python", program, [Input("")] * 2, LIMITS).tests for _ in range(3)]
    outputs = [test.stdout.split() for tests in runs for test in tests if test is not None]
    assert [warm for warm, _ in outputs] == ["True"] * 6
    assert len({drawn for _, drawn in outputs}) == 6


def test_a_zygote_the_host_refuses_is_not_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """A run's mounts refused (a copy of the zygote's code whose mounting fails, as a host forbidding them would):
    that run and every later one start with `bwrap`, and the log says why, once."""
    refusing = tmp_path / "zygote_server.py"
    source = zygote.SERVER.read_text(encoding="utf-8")
    private_root = 'kernel.mount(None, "/", None, MS_REC | MS_PRIVATE)'
    assert private_root in source
    refusing.write_text(source.replace(private_root, private_root.replace('"/"', '"/nowhere"')))
    monkeypatch.setattr(zygote, "SERVER", refusing)
    executor = Executor(parallel=1, compile_cache=None, zygote=True)
    with caplog.at_level(logging.WARNING):
        runs: list[Execution] = [executor.run("python", "print(6 * 7)\n", [Input()], LIMITS) for _ in range(2)]
    assert [run.tests[0].stdout if run.tests[0] else None for run in runs] == ["42\n", "42\n"]
    assert executor.zygote.refused is not None and "mount /nowhere" in executor.zygote.refused
    refusals = [r for r in caplog.records if "cannot start runs here" in r.getMessage()]
    assert len(refusals) == 1 and "bwrap" in refusals[0].getMessage()


def test_the_zygote_outlives_the_thread_that_started_it() -> None:
    """A thread's exit is its children's parent death (PR_SET_PDEATHSIG): the zygote must not go with the first
    thread that ran a program, nor take other threads' runs with it."""
    executor = Executor(parallel=1, compile_cache=None, zygote=True)
    thread = threading.Thread(target=inspect, args=(executor,))
    thread.start()
    thread.join()
    started = executor.zygote.pid
    time.sleep(0.2)
    inspect(executor)
    assert started is not None and executor.zygote.pid == started


def test_a_zygote_killed_from_outside_is_reaped_and_leaves_nothing() -> None:
    """Its `bwrap` launcher killed: no zombie, no sandbox left behind, and the next run starts a new zygote."""
    executor = Executor(parallel=1, compile_cache=None, zygote=True)
    inspect(executor)
    launcher = executor.zygote.pid
    inside = descendants(launcher)
    assert launcher is not None and inside
    os.kill(launcher, signal.SIGKILL)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and any(Path(f"/proc/{pid}").exists() for pid in (launcher, *inside)):
        time.sleep(0.05)
    assert [pid for pid in (launcher, *inside) if Path(f"/proc/{pid}").exists()] == []  # a zombie keeps its /proc
    inspect(executor)
    assert executor.zygote.pid not in (None, launcher)


def test_the_zygote_ends_with_the_process_that_started_it() -> None:
    """No finalizer runs on os._exit: the zygote ends when its control socket closes, with nothing left behind."""
    script = (
        "import os\n"
        "from sandbox.executor import Executor, TestInput\n"
        "executor = Executor(parallel=1, compile_cache=None, zygote=True)\n"
        "assert executor.run('python', 'print(1)', [TestInput()]).tests[0].stdout == '1\\n'\n"
        "print(executor.zygote.pid, flush=True)\n"
        "os._exit(0)\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=True)
    zygote_pid = int(done.stdout)
    deadline = time.monotonic() + 10
    while Path(f"/proc/{zygote_pid}").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not Path(f"/proc/{zygote_pid}").exists()
