"""The sandbox and the service on a cgroup-v2-only kernel, as root and as an ordinary user.

One guest boots (tests/cgroup2_guest.py: QEMU, `cgroup_no_v1=all`) and runs, twice, the checks
that matter on users' hosts: tests/test_isolation_levels.py (the service grades math and code
at `bwrap+cgroup2`; a killed worker's and a dead process's run cgroups are removed) and the
hostile suite's Python rows named in HOSTILE_ROWS (tests/test_sandbox_hostile.py through `sandbox serve`).
- as root in the guest's root cgroup: the service makes its own subtree (`reward-sandbox`);
- as uid 1000 in a subtree delegated to it as systemd's `Delegate=yes` does (the directory and its
  cgroup.procs, cgroup.subtree_control and cgroup.threads owned by the user): bubblewrap in an
  unprivileged user namespace, cgroup limits in that subtree.
Python programs only: without KVM the guest is an emulator, and compilers would not fit CI's time.
"""

from __future__ import annotations

import re
import shlex

import pytest

from tests.as_user import REPO, as_user_argv
from tests.cgroup2_guest import run_in_guest

USER = 1000
# The hostile suite's Python rows that attack what the cgroup level bounds and what the user namespace hides.
HOSTILE_ROWS = [
    "py-connect-host", "py-read-shadow", "py-env-secret", "py-kill-parent", "py-fork-bomb", "py-thread-bomb",
    "py-allocate", "py-fill-disk-files", "py-daemon", "py-spin",
]  # fmt: skip
CHECKS = [
    "-m", "pytest", "-q", "-p", "no:cacheprovider", "-x",
    "tests/test_isolation_levels.py", "tests/test_sandbox_hostile.py",
    "-k", "not as_nobody and (test_isolation_levels or kept_answering or " + " or ".join(HOSTILE_ROWS) + ")",
]  # fmt: skip
ENV = {"EXPECT_ISOLATION": "bwrap+cgroup2"}
DELEGATED = "/sys/fs/cgroup/delegated-to-user"


def guest_script() -> str:
    user_argv = as_user_argv(USER, ["python", *CHECKS, "--basetemp", "/tmp/guest-user-tests"], ENV)
    return f"""
cd {shlex.quote(str(REPO))}
echo "== as root"
EXPECT_ISOLATION=bwrap+cgroup2 {shlex.quote(str(REPO / ".venv" / "bin" / "python"))} {shlex.join(CHECKS)} \\
    --basetemp /tmp/guest-root-tests
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
    for part in (root_part, user_part):
        passed = re.search(r"(\d+) passed", part)
        assert passed and int(passed.group(1)) >= len(HOSTILE_ROWS) + 3, part[-4000:]
        assert " failed" not in part and " error" not in part, part[-4000:]
