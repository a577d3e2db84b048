"""Isolation levels where users run: the service as root or as an ordinary user, cgroup v1 or v2.

This module runs on this host (root, hybrid cgroup v1) in the suite, and, whole, inside a
cgroup-v2-only guest as root and as an ordinary user in a delegated subtree
(tests/test_cgroup2_guest.py), where EXPECT_ISOLATION names the level the guest must reach.

- The service grades math and code at the host's level, named in /readyz and in every code
  result's details.
- A grading worker SIGKILLed mid-run leaves no cgroup: the pool's replacement sweeps it; a run
  directory left by a dead process is removed, with its processes, when a service starts.
- As an ordinary user on a host without a writable cgroup (this one: the `as_nobody` tests, run
  here only), the service starts: math is graded, code is answered `error` with the reason, or
  graded at `bwrap+rlimits` when the operator chose it; and the hostile suite's Python programs
  stay contained at that level.
"""

from __future__ import annotations

import contextlib
import functools
import os
import signal
import subprocess
import threading
import time
from pathlib import Path

import httpx

from reward_api.local import LocalServer
from sandbox import cgroups
from sandbox.cgroups import RUN_PREFIX, find_cgroups, host_version
from tests.as_user import REPO, as_user_argv
from tests.test_service import grade

NOBODY = 65534
MATH = {"task": "math", "completion": "so \\boxed{\\frac{1}{2}}", "reference": "0.5"}
A_PLUS_B = {"inputs": ["1 2\n", "5 7\n"], "outputs": ["3", "12"]}
CODE = {"task": "code", "completion": "```python\nprint(sum(map(int, input().split())))\n```", "reference": A_PLUS_B}
SLEEPER = {
    "task": "code",
    "completion": "```python\nimport time\ntime.sleep(60)\n```",
    "reference": {"inputs": ["\n"], "outputs": [""], "time_limit": 30, "total_time_limit": 40},
}


# The guest without KVM is an emulator: its grading workers take minutes to import the graders.
READY_TIMEOUT_S = float(os.environ.get("SERVICE_READY_TIMEOUT_S", "120"))


def expected_level() -> str:
    """What this host gives the default isolation: the guest says; here, root on the host's cgroup version."""
    return os.environ.get("EXPECT_ISOLATION") or f"bwrap+cgroup{host_version()}"


def test_service_grades_math_and_code_at_the_hosts_level(tmp_path: Path) -> None:
    # One grading process for both: in the emulated guest each process's imports take a minute or more.
    settings = {"REWARD_API_WORKERS": "1", "REWARD_API_CODE_WORKERS": "0", "REWARD_API_HEAVY_WORKERS": "0"}
    with LocalServer(tmp_path, READY_TIMEOUT_S, **settings) as server:
        math, code = grade(server, [MATH, CODE])
        ready = httpx.get(f"{server.url}/readyz").json()
    assert math["status"] == "ok" and math["reward"] == 1.0, math
    assert code["status"] == "ok" and code["reward"] == 1.0, code
    assert code["details"]["accuracy"]["isolation"] == expected_level()
    assert ready["code"]["available"] is True and ready["code"]["isolation"] == expected_level()


def _runs_of(pid: int) -> list[Path]:
    return [run for run in find_cgroups().runs() if run.name.startswith(f"{RUN_PREFIX}{pid}-")]


def _creator(run: Path) -> int:
    return int(run.name.removeprefix(RUN_PREFIX).split("-")[0])


def test_a_worker_killed_mid_run_leaves_no_cgroup(tmp_path: Path) -> None:
    """The pool replaces a SIGKILLed grading worker (the call is retried on a fresh one) and sweeps the
    killed worker's run cgroups."""
    before = set(find_cgroups().runs())
    settings = {"REWARD_API_WORKERS": "1", "REWARD_API_CODE_WORKERS": "1", "REWARD_API_DRAIN_S": "1"}
    with LocalServer(tmp_path, **settings) as server:
        post = threading.Thread(target=lambda: _quietly(grade, server, [SLEEPER]), daemon=True)
        post.start()
        deadline = time.monotonic() + 60
        while not (new := set(find_cgroups().runs()) - before) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert new, "no sandbox run started within 60 s"
        worker = _creator(next(iter(new)))
        os.kill(worker, signal.SIGKILL)  # the grading worker, mid-run
        deadline = time.monotonic() + 15
        while _runs_of(worker) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert _runs_of(worker) == [], f"the killed worker's run cgroups {sorted(new)} are still there"


def _quietly(call, *args) -> None:
    with contextlib.suppress(Exception):
        call(*args)


def test_a_dead_processs_run_is_removed_when_a_service_starts(tmp_path: Path) -> None:
    """A run directory whose creator died, with a process still inside one of its test slots, is gone once a service
    has started (`sandbox serve` here: both services sweep in the same place, sandbox.isolation.prepare)."""
    dead = subprocess.Popen(["true"])
    dead.wait()
    stale = [base / f"{RUN_PREFIX}{dead.pid}-stale" for base in find_cgroups().run_bases()]
    slot = stale[0] / "test-0"  # v1: in the memory hierarchy (the first), as the runs' slots are
    for directory in [*stale, slot]:
        directory.mkdir()
    sleeper = subprocess.Popen(["sleep", "300"])
    for directory in [slot, *stale[1:]]:
        (directory / "cgroup.procs").write_text(str(sleeper.pid))
    with LocalServer.sandbox(tmp_path, READY_TIMEOUT_S, SANDBOX_WORKERS="1"):
        pass
    assert sleeper.wait(timeout=10) == -signal.SIGKILL
    assert not any(directory.exists() for directory in stale)


def _fake_run(name: str, process: subprocess.Popen | None, age_s: float) -> list[Path]:
    """A run directory of `name` under every base, holding `process` (if any), last changed `age_s` ago."""
    directories = [base / name for base in find_cgroups().run_bases()]
    for directory in directories:
        directory.mkdir()
        if process is not None:
            (directory / "cgroup.procs").write_text(str(process.pid))
        os.utime(directory, (time.time() - age_s, time.time() - age_s))
    return directories


def test_a_sweep_takes_only_runs_whose_creator_is_gone_or_that_are_old_and_empty() -> None:
    """Another service's long-lived run (a notebook session in use for hours) is kept; a run whose pid was reused
    by a later process (this one, with another start time) is not."""
    me, started = os.getpid(), cgroups._start_time(os.getpid())
    old_s = cgroups.STALE_RUN_S + 60
    sleepers = {row: subprocess.Popen(["sleep", "300"]) for row in ("live-and-old", "older-name", "reused-pid")}
    runs = {
        "live-and-old": _fake_run(f"{RUN_PREFIX}{me}-{started}-live", sleepers["live-and-old"], old_s),
        "older-name": _fake_run(f"{RUN_PREFIX}{me}-oldername", sleepers["older-name"], old_s),  # no start time
        "reused-pid": _fake_run(f"{RUN_PREFIX}{me}-1-reused", sleepers["reused-pid"], 0),
        "empty-and-old": _fake_run(f"{RUN_PREFIX}{me}-{started}-empty", None, old_s),
        "empty-and-new": _fake_run(f"{RUN_PREFIX}{me}-{started}-new", None, 0),
    }
    try:
        find_cgroups().sweep()
        left = {row for row, directories in runs.items() if all(d.exists() for d in directories)}
        assert left == {"live-and-old", "older-name", "empty-and-new"}
        assert sleepers["reused-pid"].wait(timeout=10) == -signal.SIGKILL
        assert sleepers["live-and-old"].poll() is None and sleepers["older-name"].poll() is None
    finally:
        for sleeper in sleepers.values():
            sleeper.kill()
            sleeper.wait()
        for directories in runs.values():
            for directory in directories:
                with contextlib.suppress(OSError):
                    directory.rmdir()


# --- an ordinary user ---------------------------------------------------------------------------


def served_as(uid: int, tmp_path: Path, **settings: str) -> LocalServer:
    """`reward-api serve` run by `uid` (tests/as_user.py), one worker of each kind."""
    launcher = functools.partial(as_user_argv, uid)
    return LocalServer(tmp_path, launcher=launcher, REWARD_API_WORKERS="1", REWARD_API_CODE_WORKERS="1", **settings)


def _service_uids(server: LocalServer) -> set[int]:
    """The uids of the service's process (the launcher execs into it through unshare, sh, setpriv, env)."""
    assert server.process is not None
    status = Path(f"/proc/{server.process.pid}/status").read_text().splitlines()
    return {int(uid) for line in status if line.startswith("Uid:") for uid in line.split()[1:]}


def test_as_nobody_without_a_cgroup_code_is_an_error_with_its_reason(tmp_path: Path) -> None:
    with served_as(NOBODY, tmp_path) as server:
        assert _service_uids(server) == {NOBODY}
        math, code = grade(server, [MATH, CODE])
        ready = httpx.get(f"{server.url}/readyz").json()
    assert math["status"] == "ok" and math["reward"] == 1.0, math
    assert code["status"] == "error" and "no writable cgroup" in code["details"]["reason"], code
    assert "bwrap-rlimits" in code["details"]["reason"]
    assert ready["code"]["available"] is False and ready["code"]["isolation"] == "unavailable"


def test_as_nobody_the_operator_may_choose_rlimits(tmp_path: Path) -> None:
    with served_as(NOBODY, tmp_path, REWARD_API_SANDBOX_ISOLATION="bwrap-rlimits") as server:
        [code] = grade(server, [CODE])
        ready = httpx.get(f"{server.url}/readyz").json()
    assert code["status"] == "ok" and code["reward"] == 1.0, code
    assert code["details"]["accuracy"]["isolation"] == "bwrap+rlimits"
    assert ready["code"]["isolation"] == "bwrap+rlimits" and "weaker" in ready["code"]["detail"]


def test_hostile_python_programs_are_contained_at_rlimits_as_nobody() -> None:
    """The hostile suite's Python rows, through `sandbox serve` run by `nobody` at bwrap+rlimits."""
    argv = ["python", "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/test_sandbox_hostile.py",
            "-k", "py- or kept_answering"]  # fmt: skip
    run = subprocess.run(
        as_user_argv(NOBODY, argv, {"SANDBOX_ISOLATION": "bwrap-rlimits"}),
        capture_output=True, text=True, timeout=600, cwd=REPO, check=False,
    )  # fmt: skip
    assert run.returncode == 0, run.stdout[-6000:] + run.stderr[-2000:]
    assert " passed" in run.stdout and " failed" not in run.stdout
