"""The zygote: runs INSIDE a long-lived bubblewrap sandbox and forks each run's sandbox from itself.

A fresh `bwrap` and interpreter per run cost about 20 ms before the first test (sandbox/isolation.py); forked
from this warm process, a run starts in about 3 ms. The zygote holds what bubblewrap would give each run and
no more: a user namespace of its own with capabilities in it (`--cap-add ALL`), in which it cannot create
further user namespaces (`--disable-userns`); a read-only root with /usr and a few /etc entries; the runner's
code, loaded once. It goes on as PID 1 of a PID namespace of its own (enter_own_pid_namespace). For each run the
host (sandbox/zygote.py) sends one message on the control socket (argv[1]) with the run's descriptors, and the
zygote forks the run's init, PID 1 of a fresh PID namespace (as `bwrap --as-pid-1`), which makes fresh mount,
network, IPC and UTS namespaces, joins the run's cgroups, makes a cgroup namespace there, mounts private bounded
tmpfs on /sandbox, /tmp and /dev/shm, a devpts of its own and a /proc of its PID namespace, brings up loopback,
drops every capability (bounding set too) and sets no_new_privs, sends its pidfd on the run's status socket, then
becomes the runner (sandbox/runner.py `main`) on the run's stdin, stdout and stderr. The zygote reaps it and
sends its exit status on the same socket.

So every run still has namespaces of its own, except the user namespace, which it shares with other runs and the
zygote but holds no capability in; other runs' processes and the zygote are outside its PID namespace, so it can
neither see nor signal them. Standard library only, as the runner: it runs on /usr/bin/python3 -S.
"""

import _ctypes
import _socket
import fcntl
import marshal
import os
import sys

CLONE_NEWNS, CLONE_NEWCGROUP, CLONE_NEWUTS = 0x00020000, 0x02000000, 0x04000000
CLONE_NEWIPC, CLONE_NEWPID, CLONE_NEWNET = 0x08000000, 0x20000000, 0x40000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 1, 2, 4, 8
MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 32, 4096, 16384, 1 << 18
PR_SET_PDEATHSIG, PR_CAPBSET_DROP, PR_SET_NO_NEW_PRIVS, PR_CAP_AMBIENT = 1, 24, 38, 47
PR_CAP_AMBIENT_CLEAR_ALL = 4
SIGKILL, SIGCHLD = 9, 17
SIOCSIFFLAGS, IFF_UP, IFF_RUNNING = 0x8914, 0x1, 0x40
CAPABILITY_VERSION_3 = 0x20080522
MAX_FDS = 64  # a run's descriptors: stdio, status, its cgroups' and its tests' memory cgroups'
# /proc entries bubblewrap covers read-only where they are writable (sysrq-trigger shuts a machine down).
COVERED_PROC = ("sys", "sysrq-trigger", "irq", "bus")


class CULong(_ctypes._SimpleCData):
    _type_ = "L"


def libc_function(name, cfunction):
    return cfunction(_ctypes.dlsym(_ctypes.dlopen(None, 0), name))


def check(result, what):
    if result != 0:
        errno = _ctypes.get_errno()
        raise OSError(errno, f"{what}: {os.strerror(errno)}")


def read_exactly(fd, size):
    data = b""
    while len(data) < size:
        chunk = os.read(fd, size - len(data))
        if not chunk:
            raise SystemExit("zygote: stdin closed before the runner's code arrived")
        data += chunk
    return data


class Kernel:
    """The system calls the run's set-up needs that `os` lacks (Python 3.11: no os.unshare)."""

    def __init__(self, cfunction):
        self.unshare = libc_function("unshare", cfunction)
        self.mount_ = libc_function("mount", cfunction)
        self.prctl = libc_function("prctl", cfunction)
        self.capset_ = libc_function("capset", cfunction)
        self.setns = libc_function("setns", cfunction)

    def mount(self, source, target, fstype, flags, data=None):
        encoded = [None if value is None else value.encode() for value in (source, target, fstype, data)]
        check(self.mount_(encoded[0], encoded[1], encoded[2], CULong(flags), encoded[3]), f"mount {target}")

    def drop_capabilities(self):
        """Every capability, the bounding and ambient sets too, and no way back through exec (no_new_privs)."""
        with open("/proc/sys/kernel/cap_last_cap") as handle:
            last_cap = int(handle.read())
        for cap in range(last_cap + 1):
            check(self.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0), f"dropping capability {cap} from the bounding set")
        check(self.prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0), "clearing the ambient capabilities")
        header = CAPABILITY_VERSION_3.to_bytes(4, sys.byteorder) + bytes(4)
        check(self.capset_(header, bytes(24)), "capset")
        check(self.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "no_new_privs")


def received_fds(ancillary):
    fds = []
    for level, kind, data in ancillary:
        if level == _socket.SOL_SOCKET and kind == _socket.SCM_RIGHTS:
            usable = len(data) - len(data) % 4
            fds += [int.from_bytes(data[i : i + 4], sys.byteorder) for i in range(0, usable, 4)]
    return fds


def serve(runner):
    """Fork a run for each message on the control socket; exit when the host closes it."""
    kernel = Kernel(runner["CFunction"])
    signals = runner["signal"]
    control = _socket.socket(_socket.AF_UNIX, _socket.SOCK_SEQPACKET, 0, int(sys.argv[1]))
    own_pid_namespace = enter_own_pid_namespace(kernel)
    runs = {}  # each running init's pid: its run's status socket, for its "exit N"
    # Inits are reaped as they end (which adds their CPU, their runs', to this process's children's times).
    signals.signal(SIGCHLD, lambda *_: report_exits(runs))
    runner["warm_for_runs"]()
    runner["gc"].freeze()  # what every run inherits stays out of the collector (no copy-on-write by its walks)
    while True:
        data, ancillary, _, _ = control.recvmsg(1 << 16, _socket.CMSG_SPACE(4 * MAX_FDS))
        fds = received_fds(ancillary)
        if not data:
            os._exit(0)
        # Until the init is in `runs`, its end waits to be reported: an init reaped before would never be.
        signals.pthread_sigmask(signals.SIG_BLOCK, {SIGCHLD})
        try:
            check(kernel.unshare(CLONE_NEWPID), "unshare(CLONE_NEWPID)")  # the next child: PID 1 of a new namespace
            pid = os.fork()
        except OSError as exc:
            report(fds, f"error: the zygote could not fork the run: {exc}")
            pid = -1
        if pid == 0:
            control.close()
            signals.signal(SIGCHLD, signals.SIG_DFL)  # the runner reaps its own children
            signals.pthread_sigmask(signals.SIG_SETMASK, set())
            enter_run(kernel, runner, marshal.loads(data), fds)
        check(kernel.setns(own_pid_namespace, CLONE_NEWPID), "setns back to the zygote's PID namespace")
        if pid > 0:
            runs[pid] = _socket.socket(_socket.AF_UNIX, _socket.SOCK_SEQPACKET, 0, os.dup(fds[3]))
        signals.pthread_sigmask(signals.SIG_SETMASK, set())
        for fd in fds:
            os.close(fd)


def enter_own_pid_namespace(kernel):
    """Go on as PID 1 of a PID namespace this user namespace owns (bubblewrap's is owned by the one outside it), in
    which the zygote may return after making each run's; this process waits for that one, and ends as it ends.
    Returns the namespace's descriptor."""
    check(kernel.unshare(CLONE_NEWPID), "unshare(CLONE_NEWPID)")
    zygote = os.fork()
    if zygote == 0:
        check(kernel.prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0), "PR_SET_PDEATHSIG")
        return os.open("/proc/self/ns/pid", os.O_RDONLY)
    _, wait_status = os.waitpid(zygote, 0)
    os._exit(max(0, os.waitstatus_to_exitcode(wait_status)))


def report_exits(runs):
    """Each init that ended, reaped: "exit N" on its run's status socket (after its "started" or "refused")."""
    while True:
        try:
            pid, wait_status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        status = runs.pop(pid, None)
        if status is not None:
            tell(status, b"exit %d" % os.waitstatus_to_exitcode(wait_status))


def report(fds, message):
    """An error for the host, on the run's status socket (the 4th descriptor), before anything of the run started."""
    if len(fds) >= 4:
        status = _socket.socket(_socket.AF_UNIX, _socket.SOCK_SEQPACKET, 0, os.dup(fds[3]))
        tell(status, message.encode(errors="replace"))


def tell(status, message):
    """`message` on a run's status socket, which is then closed; a host that went away hears nothing."""
    try:  # noqa: SIM105 (contextlib: one more import in the zygote)
        status.send(message)
    except OSError:
        pass
    status.close()


def enter_run(kernel, runner, spec, fds):
    """The run's init, PID 1 of its namespace: its isolation set up and "started" sent with its pidfd on the run's
    status socket ("refused: why" if it cannot be set up), then the runner. Never returns."""
    status = _socket.socket(_socket.AF_UNIX, _socket.SOCK_SEQPACKET, 0, fds[3])
    try:
        check(kernel.prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0), "PR_SET_PDEATHSIG")  # the zygote's end is the run's
        os.setsid()
        check(kernel.unshare(CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS), "unshare")
        stdio, cgroup_procs, slots = fds[:3], fds[4 : 4 + spec["cgroups"]], fds[4 + spec["cgroups"] :]
        for fd in cgroup_procs:  # the kernel checks this write with the host's credentials (it opened the file)
            os.write(fd, b"0")
        check(kernel.unshare(CLONE_NEWCGROUP), "unshare(CLONE_NEWCGROUP)")
        mount_run_filesystems(kernel, spec)
        bring_up_loopback()
        os.chdir("/sandbox")
        os.environ.clear()
        os.environ.update(spec["env"])
        kernel.drop_capabilities()
        pidfd = os.pidfd_open(os.getpid())
    except BaseException as exc:  # the host hears why, and starts runs with bwrap instead
        tell(status, f"refused: the run's sandbox could not be set up: {type(exc).__name__}: {exc}".encode())
        os._exit(127)
    try:
        status.sendmsg([b"started"], [(_socket.SOL_SOCKET, _socket.SCM_RIGHTS, pidfd.to_bytes(4, sys.byteorder))])
    except OSError:  # the host went away: this fork of the zygote must not return into its loop
        os._exit(1)
    place_descriptors(stdio, slots)  # the status socket and the pidfd are closed with the zygote's own
    sys.argv = ["runner", "/sandbox"]
    os._exit(run_runner(runner["main"]))


def run_runner(main):
    """The runner's exit status, as the interpreter gives a script's: SystemExit's code (a message goes to
    stderr), 1 with the traceback for any other exception. The zygote's own handlers never see it."""
    try:
        main()
        status = 0
    except SystemExit as exc:
        status = exc.code if isinstance(exc.code, int) else 0 if exc.code is None else 1
        if not isinstance(exc.code, (int, type(None))):
            sys.stderr.write(f"{exc.code}\n")
    except BaseException:
        sys.excepthook(*sys.exc_info())
        status = 1
    sys.stdout.flush()
    sys.stderr.flush()
    return status


def mount_run_filesystems(kernel, spec):
    """What bubblewrap mounts for each run: bounded private tmpfs, its own devpts and /proc."""
    kernel.mount(None, "/", None, MS_REC | MS_PRIVATE)
    private = MS_NOSUID | MS_NODEV
    kernel.mount("tmpfs", "/sandbox", "tmpfs", private, f"size={spec['disk_bytes']},mode=0755")
    kernel.mount("tmpfs", "/tmp", "tmpfs", private, f"size={spec['tmp_bytes']},mode=0755")
    kernel.mount("tmpfs", "/dev/shm", "tmpfs", private, f"size={spec['tmp_bytes']},mode=0755")
    kernel.mount("devpts", "/dev/pts", "devpts", MS_NOSUID | MS_NOEXEC, "newinstance,ptmxmode=0666,mode=620")
    kernel.mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
    for name in COVERED_PROC:
        path = "/proc/" + name
        if os.access(path, os.W_OK):
            kernel.mount(path, path, None, MS_BIND | MS_REC)
            kernel.mount(path, path, None, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC)


def bring_up_loopback():
    """`localhost` works in the run (the kernel gives an up loopback its addresses); nothing else is there."""
    sock = _socket.socket(_socket.AF_INET, _socket.SOCK_DGRAM)
    try:
        request = b"lo".ljust(16, b"\0") + (IFF_UP | IFF_RUNNING).to_bytes(2, sys.byteorder) + bytes(22)
        fcntl.ioctl(sock.fileno(), SIOCSIFFLAGS, request)
    finally:
        sock.close()


def place_descriptors(stdio, slots):
    """stdin, stdout and stderr as 0-2, the tests' memory cgroup descriptors from 3 on (the job names them so),
    nothing else: the zygote's own are closed."""
    high = [fcntl.fcntl(fd, fcntl.F_DUPFD, MAX_FDS + 3) for fd in (*stdio, *slots)]  # above every target
    for target, fd in enumerate(high):
        os.dup2(fd, target)
    os.closerange(len(high), 1 << 16)


def main():
    runner = {"__name__": "runner"}
    exec(marshal.loads(read_exactly(0, int(read_exactly(0, 10)))), runner)
    null = os.open("/dev/null", os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    serve(runner)


if __name__ == "__main__":
    main()
