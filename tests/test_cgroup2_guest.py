"""The sandbox and the service on a cgroup-v2-only kernel, as root and as an ordinary user.

One guest boots (tests/cgroup2_guest.py: QEMU, `cgroup_no_v1=all`) and runs the checks that matter
on users' hosts, from tests/test_isolation_levels.py and the hostile suite's Python rows
(tests/test_sandbox_hostile.py through `sandbox serve`):
- as uid 1000 in a subtree delegated to it as systemd's `Delegate=yes` does (the directory and its
  cgroup.procs, cgroup.subtree_control and cgroup.threads owned by the user): the rows that the
  cgroup bounds (CGROUP_ROWS), each test's own memory cgroup (SLOT_CHECKS), a dead process's run
  removed when a service starts, a program that runs long moved to idle CPU, runs forked from the
  zygote (tests/test_zygote.py), the rows that the user namespace hides from (NAMESPACE_ROWS), and
  the reward service grading math and code at `bwrap+cgroup2` (bubblewrap in an unprivileged user
  namespace, cgroup limits in that subtree);
- as root in the guest's root cgroup (the service makes its own subtree, `reward-sandbox`, with the
  cpu controller: `cpu.idle` on a run's cgroup): what differs there (ROOT_CHECKS).
Python programs only, and one reward-service start: KVM does not run here (QEMU stops at boot), so
the guest is an emulator, in which importing the service alone takes a minute; compilers would not
fit CI's time.
"""

from __future__ import annotations

import re
import shlex

import pytest

from tests.as_user import REPO, as_user_argv
from tests.cgroup2_guest import run_in_guest

USER = 1000
# The hostile suite's Python rows that attack what the cgroup level bounds, run as root and as the user.
CGROUP_ROWS = ["py-fork-bomb", "py-thread-bomb", "py-allocate", "py-fill-disk-files", "py-daemon", "py-spin"]
# Rows that attack what the namespaces hide: as the user only (as root, bwrap's namespaces are the same ones
# the host's own hostile suite proves).
NAMESPACE_ROWS = ["py-connect-host", "py-read-shadow", "py-env-secret", "py-kill-parent"]
SANDBOX_CHECKS = "kept_answering or test_a_dead_processs_run or moves_to_idle_cpu"
SANDBOX_TESTS = 4  # ...the last for a stdin/stdout test and an assert test (its program a process of its own)
# Each test's memory cgroup (tests/test_memory_slots.py), and a 2 GiB reservation in 256 MB with its wrong twin
# (py-allocate, above, is a hog its slot stops: an OOM kill read from the slot's memory.events).
SLOT_CHECKS = ["test_tests_run_at_once", "python-reserve-2gb-in-256mb"]
# Runs forked from the zygote (tests/test_zygote.py, all of it): their namespaces, capabilities, mounts and cgroups.
ZYGOTE_CHECKS, ZYGOTE_TESTS = "test_zygote", 11
# As root, only what differs from the user's run: the service's own subtree in the root cgroup, with the cpu
# controller (the delegated subtree has memory and pids only). Each check costs seconds in the emulator.
ROOT_ROWS = ["py-fork-bomb", "py-allocate"]
ROOT_ZYGOTE_CHECKS = ["test_a_run_sees_only_its_own_processes", "test_memory_bounds_hold_in_a_forked_run"]
ROOT_CHECKS = " or ".join([SANDBOX_CHECKS, *SLOT_CHECKS, *ROOT_ROWS, *ROOT_ZYGOTE_CHECKS])
USER_CHECKS = " or ".join(
    ["test_service_grades_math_and_code", SANDBOX_CHECKS, *SLOT_CHECKS, *CGROUP_ROWS, *NAMESPACE_ROWS, ZYGOTE_CHECKS]
)


def checks(selection: str) -> list[str]:
    # Only the plugin these tests use: importing every installed one (hypothesis, schemathesis, hydra...) took
    # a minute of each emulated pytest start.
    # A test's timeout as long as a service's start may take there (ENV): a loaded host slows the emulator.
    return ["-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "pytest_timeout", "-o", "timeout=900", "-x",
            "--durations=12", "tests/test_isolation_levels.py", "tests/test_sandbox_hostile.py",
            "tests/test_code_lane.py", "tests/test_memory_slots.py", "tests/test_run_semantics.py",
            "tests/test_zygote.py",
            "-k", selection]  # fmt: skip


# The emulator runs everything some ten times slower: a hostile row's wall-time bound gets that much more slack.
ENV = {
    "EXPECT_ISOLATION": "bwrap+cgroup2",
    "SERVICE_READY_TIMEOUT_S": "900",
    "HOSTILE_SLACK_S": "30",
    "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
}
DELEGATED = "/sys/fs/cgroup/delegated-to-user"


def guest_script() -> str:
    user_checks = checks(USER_CHECKS)
    user_argv = as_user_argv(USER, ["python", *user_checks], ENV)
    root_argv = [str(REPO / ".venv" / "bin" / "python"), *checks(ROOT_CHECKS)]
    return f"""
cd {shlex.quote(str(REPO))}
echo "== as root"
{" ".join(f"{name}={value}" for name, value in ENV.items())} {shlex.join(root_argv)}
echo "ROOT_RC=$?"
echo "== as uid {USER} in a delegated subtree"
echo "+memory +pids" > /sys/fs/cgroup/cgroup.subtree_control
mkdir {DELEGATED}
chown {USER}:{USER} {DELEGATED} {DELEGATED}/cgroup.procs {DELEGATED}/cgroup.subtree_control {DELEGATED}/cgroup.threads
sh -c 'echo $$ > {DELEGATED}/cgroup.procs && exec "$@"' sh {shlex.join(user_argv)}
echo "USER_RC=$?"
"""


@pytest.mark.timeout(1800)
def test_sandbox_and_service_on_cgroup_v2_as_root_and_as_a_user() -> None:
    result = run_in_guest(guest_script(), timeout_s=1500)
    output = result.output
    assert "ROOT_RC=0" in output and "USER_RC=0" in output, output[-8000:]
    root_part, user_part = output.split("== as uid", 1)
    slot_checks = len(SLOT_CHECKS) + 1  # the reservation's row and its twin
    root_expected = len(ROOT_ROWS) + slot_checks + len(ROOT_ZYGOTE_CHECKS) + SANDBOX_TESTS
    user_expected = len(CGROUP_ROWS) + len(NAMESPACE_ROWS) + slot_checks + ZYGOTE_TESTS + SANDBOX_TESTS + 1  # service
    for part, expected in ((root_part, root_expected), (user_part, user_expected)):
        passed = re.search(r"(\d+) passed", part)
        assert passed and int(passed.group(1)) == expected, part[-4000:]
        assert " failed" not in part and " error" not in part, part[-4000:]
