"""Boot a cgroup-v2-only Linux guest under QEMU (virtme-ng) and run a bash script in it as root.

Why: this machine and CI have hybrid cgroups (memory and pids on v1), while most users' hosts are cgroup v2
only and many run the service as a non-root user in a delegated subtree. Tests that prove the sandbox there
boot one guest (`cgroup_no_v1=all`) and run several checks in it: a boot costs 20-60 s without KVM.

What the guest sees: the host's root filesystem over 9p, read-only, with the host's file modes (uid 1000 can
read /work/main but not /root, so not the venv's pyenv interpreter: use /usr/bin/python3 with PYTHONPATH).
/etc, /home, /lib, /opt, /srv, /tmp, /usr and /var are overlays on the host's directories: files the host
wrote before the boot are visible, the guest's writes there vanish at exit. Only the loopback interface.
The guest runs as root in the root cgroup; /sys/fs/cgroup is cgroup2 with cpuset cpu io memory hugetlb pids.
"""

from __future__ import annotations

import functools
import glob
import os
import shlex
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
READY = "__cgroup2_guest_ready__"
KVM_PROBE_TIMEOUT_S = 30.0


class GuestUnavailable(RuntimeError):
    """virtme-ng, QEMU, busybox or a kernel image is missing on this machine."""


@dataclass(frozen=True)
class GuestResult:
    returncode: int
    output: str  # the script's stdout and stderr, interleaved
    boot_s: float  # from starting vng to the script starting in the guest


def _vng() -> str:
    """The vng command: $VNG, the one `make test` installs beside the venv, else PATH's."""
    for candidate in (os.environ.get("VNG"), str(REPO / ".venv" / "vng" / "bin" / "vng"), shutil.which("vng")):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    raise GuestUnavailable("virtme-ng (vng) is not installed: run `make test`, which installs it")


def _kernel() -> str:
    missing = [tool for tool in ("qemu-system-x86_64", "busybox") if shutil.which(tool) is None]
    if missing:
        raise GuestUnavailable(f"{' and '.join(missing)} not installed: run `make test`, which installs them")
    kernels = sorted(k for k in glob.glob("/boot/vmlinuz-*") if os.access(k, os.R_OK))
    if not kernels:
        raise GuestUnavailable("no readable /boot/vmlinuz-*: run `make test` (as root), which installs one")
    return kernels[-1]


def _vng_argv(command: str, *, kvm: bool, memory: str = "4G", cpus: int = 2) -> list[str]:
    # --force-9p: virtio-fs needs the Rust virtiofsd; trying Debian's QEMU one first wastes 3 s.
    argv = [_vng(), "--run", _kernel(), "--force-9p", "--memory", memory, "--cpus", str(cpus)]
    argv += ["--append", "cgroup_no_v1=all", "--exec", command]
    # Forcing KVM keeps QEMU from falling back to TCG silently when KVM was asked for.
    return [*argv, "--qemu-opts=-machine accel=kvm"] if kvm else [*argv, "--disable-kvm"]


def _run(argv: list[str], timeout_s: float) -> tuple[int | None, str, float | None]:
    """Runs vng in its own session; (exit status or None past the timeout, output, seconds to READY)."""
    start = time.monotonic()
    # vng runs virtme-run and friends from PATH: its venv's bin/ goes first.
    env = os.environ | {"PATH": f"{Path(argv[0]).parent}:{os.environ.get('PATH', '')}"}
    proc = subprocess.Popen(
        argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True,
        env=env,
    )  # fmt: skip
    lines: list[str] = []
    ready: list[float] = []

    def read() -> None:
        assert proc.stdout is not None
        for raw in proc.stdout:
            line = raw.decode("utf-8", "replace")
            if line.strip() == READY and not ready:
                ready.append(time.monotonic() - start)
            else:
                lines.append(line)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        returncode: int | None = proc.wait(timeout_s)
    except subprocess.TimeoutExpired:
        returncode = None
    finally:
        if proc.poll() is None:  # past the timeout, or interrupted: never leave a guest running
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    reader.join(5)
    return returncode, "".join(lines), ready[0] if ready else None


@functools.cache
def kvm_usable() -> bool:
    """Whether a guest boots under KVM here: /dev/kvm may open and still fail (seen: QEMU aborts setting
    MSR 0x10a with `-cpu host`, or the guest hangs at boot), so this boots one tiny guest to find out."""
    if not os.access("/dev/kvm", os.R_OK | os.W_OK):
        return False
    returncode, _, _ = _run(_vng_argv("true", kvm=True, memory="512M", cpus=1), KVM_PROBE_TIMEOUT_S)
    return returncode == 0


def run_in_guest(script: str, timeout_s: float) -> GuestResult:
    """Boots a cgroup-v2-only guest (KVM if usable, else TCG), runs `script` with bash as root in the caller's
    working directory, and returns its exit status and output. Raises TimeoutError past `timeout_s` (boot
    included), GuestUnavailable when the tools are missing."""
    kvm = kvm_usable()
    with tempfile.TemporaryDirectory(prefix="cgroup2-guest-") as folder:
        # The kernel command line carries --exec and is short (2 KiB): the script goes in a file the guest
        # reads from the host's /tmp, which it sees as it was at boot.
        path = Path(folder) / "script.sh"
        path.write_text(script)
        path.chmod(0o644)
        Path(folder).chmod(0o755)
        argv = _vng_argv(f"echo {READY}; exec bash {shlex.quote(str(path))}", kvm=kvm)
        returncode, output, boot_s = _run(argv, timeout_s)
    if returncode is None:
        raise TimeoutError(f"the cgroup v2 guest ran past {timeout_s} s (kvm={kvm}); its output:\n{output}")
    if boot_s is None:
        raise RuntimeError(f"the cgroup v2 guest did not boot (vng exited {returncode}):\n{output}")
    return GuestResult(returncode, output, boot_s)
