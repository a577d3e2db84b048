"""The runner: runs INSIDE the sandbox, as the sandbox's only trusted process.

It reads one job (JSON) from stdin, compiles once if the language needs it, then runs
each test in a child process with its own limits, up to `parallel` at a time, and
streams one JSON line per test back on stdout. Outputs are compared on the host, so
expected outputs never enter the sandbox; an assert test's code (which holds its expected values) runs in a process
of its own, which the program's never reaches.

Python solutions skip interpreter start-up: the runner forks per test and the child execs the solution's code object
(the "zygote" mode). A test's own code (assert and function-call tests) runs in that child, and the solution in a
child of it, on plain data (run_apart). The source is byte-compiled once beforehand. Past INLINE_COMPILE_BYTES that
is in a child of its own, under the compile limits (compiling takes ~200 bytes of memory per byte of dense source,
and time quadratic in some shapes), which hands the runner the marshalled code: the runner never holds a big syntax
tree, and a program too big or too slow to compile gets a compile verdict instead of killing it. Smaller sources
compile in the runner.

The untrusted children share the runner's uid, so the runner makes itself
non-dumpable: its /proc entries (fds, memory) become unreachable to them, and they
never inherit its stdin/stdout. Standard library only (it runs on /usr/bin/python3 -S).

Every run starts one, so its start-up is kept short (about 8 ms of CPU, 1 ms beyond the
interpreter's own): the host sends this module already compiled (isolation.py), the job comes
marshalled (the host's own data), results go out as JSON written here, and only C modules are
imported (json, selectors, signal and ctypes would each import enum, collections or more:
6 ms together). Of the modules solutions and tests commonly import, those their code names are
imported once before the tests fork (WARM_MODULES), not in every test; a zygote imports the standard library's
among them once for all its runs (warm_for_runs).
"""

import _ctypes
import _signal as signal
import atexit
import builtins
import gc
import io
import marshal
import os
import resource
import select
import sys
import time
from _json import encode_basestring_ascii
from _struct import pack
from binascii import b2a_base64

# The builtins as the runner's own globals, and the few os functions a test's process ends with: the runner's code
# that runs there after the program's (run_python, Harness) must not find names the program has rebound.
globals().update((name, value) for name, value in vars(builtins).items() if not name.startswith("__"))
_exit, getpid, read, write = os._exit, os.getpid, os.read, os.write
run_exit_handlers = atexit._run_exitfuncs
flush_text = io.TextIOWrapper.flush
dumps, loads = marshal.dumps, marshal.loads
ModuleType = type(os)

PR_SET_DUMPABLE = 4
# Python sources (the solution and its tests' code) up to this size compile in the runner: a few MB and at most
# ~0.1 s (nested lambdas, the slowest shape), where a child of their own costs ~3 ms of CPU a run.
INLINE_COMPILE_BYTES = 8 * 1024
STDERR_TAIL = 4096
# How often a running test's CPU use and waits are looked at (seconds); sooner when a test may reach YIELD_CPU_NS.
WAIT_LOOK_S = 0.02
YIELD_LOOK_MIN_S = 0.002
# A test (or compile step) that has used this much CPU (ns) probably runs long: it goes SCHED_IDLE, behind
# other runs' start-ups and short tests, and the runner tells the host, which gives the whole run only spare
# CPU from then on (sandbox/cpu_priority.py).
YIELD_CPU_NS = 20_000_000
yield_announced = False
# bwrap+rlimits: a runtime's writable memory beyond its heap flag (JVM metaspace, code cache, thread stacks).
DATA_FACTOR = 2
# An unbounded stack in a memory cgroup: this share of the test's memory (the rest for its heap and the kernel's).
STACK_SHARE = 0.9
# A test that aborts with its peak resident memory at this share of its bound ran out of memory.
MEMORY_EXHAUSTED_SHARE = 0.9
# Imported before the tests fork, when the solution or a test's code names them, so each test does not import
# them again (json: function-call tests' harness, sandbox/judge.py; pandas and scipy, from the full runtime set,
# take a third of a second each).
STDLIB_WARM_MODULES = (
    "math", "collections", "itertools", "functools", "heapq", "bisect", "re", "string", "typing", "random", "json",
)  # fmt: skip
WARM_MODULES = (*STDLIB_WARM_MODULES, "numpy", "sortedcontainers", "pandas", "scipy")
# A Python test's sys.stdout and sys.stderr (output_streams): made once in the runner, not in every test's process.
test_output_streams = None
# Python's runtime libraries (sandbox/languages/python.py's packages), after the standard library: read-only under /usr.
RUNTIME_PATHS = ("/usr/lib/python3/dist-packages",)


class CInt(_ctypes._SimpleCData):  # ctypes.c_int, from ctypes' C core
    _type_ = "i"


class CFunction(_ctypes.CFuncPtr):  # ctypes.CFUNCTYPE(c_int, use_errno=True)
    _flags_ = _ctypes.FUNCFLAG_CDECL | _ctypes.FUNCFLAG_USE_ERRNO
    _restype_ = CInt


libc = _ctypes.dlopen(None, 0)
prctl = CFunction(_ctypes.dlsym(libc, "prctl"))  # looked up once: every test calls it twice
# fork(2) as C calls it, without os.fork's interpreter bookkeeping and at-fork handlers: those reinitialise locks and
# threads a single-threaded runner does not have, and reseed `random` (run_python does that when it is loaded).
# Only here: the runner has one thread, so no lock is held at the fork; the tests' own forks go through os.fork.
# With prefer_for_oom_kill's os calls and output_streams, a Python test's process takes ~250 page faults, not ~290.
libc_fork = CFunction(_ctypes.dlsym(libc, "fork"))


def set_dumpable(dumpable):
    if prctl(PR_SET_DUMPABLE, int(dumpable), 0, 0, 0) != 0:
        raise OSError(_ctypes.get_errno(), f"prctl(PR_SET_DUMPABLE, {int(dumpable)}) failed")


def prefer_for_oom_kill():
    """Make this child the OOM killer's first choice over the runner: a test that fills the run's memory is
    killed (a memory verdict), not the runner that would report it. Raising one's own score needs no privilege,
    but a non-dumpable process's /proc files belong to root: dumpable for the write only, before any test code.
    (os calls, not open(): a text file's objects are page faults in every test's process.)"""
    set_dumpable(True)
    try:
        fd = os.open("/proc/self/oom_score_adj", os.O_WRONLY)
        try:
            os.write(fd, b"1000")
        finally:
            os.close(fd)
    except OSError:
        pass  # no /proc: the verdict then falls back on the run's OOM count
    finally:
        set_dumpable(False)


class CChar(_ctypes._SimpleCData):  # ctypes.c_char
    _type_ = "c"


class CULong(_ctypes._SimpleCData):  # ctypes.c_ulong (prctl's variadic arguments are unsigned longs)
    _type_ = "L"


# Every test and compile step runs under a seccomp filter (confine): per machine, the architecture the filter sees
# and its system call numbers. fork and vfork are -1 where the machine has none.
SECCOMP_MACHINES = {
    "x86_64": {
        "arch": 0xC000003E, "fork": 57, "vfork": 58, "clone": 56, "clone3": 435, "kill": 62, "tkill": 200,
        "tgkill": 234, "rt_sigqueueinfo": 129, "rt_tgsigqueueinfo": 297, "pidfd_send_signal": 424,
    },
    "aarch64": {
        "arch": 0xC00000B7, "fork": -1, "vfork": -1, "clone": 220, "clone3": 435, "kill": 129, "tkill": 130,
        "tgkill": 131, "rt_sigqueueinfo": 138, "rt_tgsigqueueinfo": 240, "pidfd_send_signal": 424,
    },
}  # fmt: skip
# Refused to every program, as Docker's default profile refuses them and more: what reaches past the run (ptrace,
# process_vm_*, kcmp, pidfd_getfd), keyrings (a kernel store that outlives a run: a channel between submissions),
# new namespaces and mounts, the kernel's most attacked interfaces (io_uring, bpf, perf events, userfaultfd), and
# the host's clock, modules, swap, quotas and reboot. A call the machine lacks is not listed.
# (tests/test_syscall_filter.py checks the numbers against the kernel's headers.)
DENIED_CALLS = {
    "x86_64": {
        "acct": 163, "add_key": 248, "bpf": 321, "chroot": 161, "clock_adjtime": 305, "clock_settime": 227,
        "create_module": 174, "delete_module": 176, "finit_module": 313, "fsconfig": 431, "fsmount": 432,
        "fsopen": 430, "fspick": 433, "get_kernel_syms": 177, "get_mempolicy": 239, "init_module": 175,
        "io_uring_enter": 426, "io_uring_register": 427, "io_uring_setup": 425, "ioperm": 173, "iopl": 172,
        "kcmp": 312, "kexec_file_load": 320, "kexec_load": 246, "keyctl": 250, "lookup_dcookie": 212, "mbind": 237,
        "migrate_pages": 256, "mount": 165, "mount_setattr": 442, "move_mount": 429, "move_pages": 279,
        "name_to_handle_at": 303, "nfsservctl": 180, "open_by_handle_at": 304, "open_tree": 428,
        "perf_event_open": 298, "pidfd_getfd": 438, "pivot_root": 155, "process_madvise": 440,
        "process_vm_readv": 310, "process_vm_writev": 311, "ptrace": 101, "query_module": 178, "quotactl": 179,
        "quotactl_fd": 443, "reboot": 169, "request_key": 249, "set_mempolicy": 238, "setns": 308,
        "settimeofday": 164, "swapoff": 168, "swapon": 167, "syslog": 103, "sysfs": 139, "_sysctl": 156,
        "umount2": 166, "unshare": 272, "uselib": 134, "userfaultfd": 323, "ustat": 136, "vhangup": 153,
    },
    "aarch64": {
        "acct": 89, "add_key": 217, "bpf": 280, "chroot": 51, "clock_adjtime": 266, "clock_settime": 112,
        "delete_module": 106, "finit_module": 273, "fsconfig": 431, "fsmount": 432, "fsopen": 430, "fspick": 433,
        "get_mempolicy": 236, "init_module": 105, "io_uring_enter": 426, "io_uring_register": 427,
        "io_uring_setup": 425, "kcmp": 272, "kexec_file_load": 294, "kexec_load": 104, "keyctl": 219,
        "lookup_dcookie": 18, "mbind": 235, "migrate_pages": 238, "mount": 40, "mount_setattr": 442,
        "move_mount": 429, "move_pages": 239, "name_to_handle_at": 264, "nfsservctl": 42, "open_by_handle_at": 265,
        "open_tree": 428, "perf_event_open": 241, "pidfd_getfd": 438, "pivot_root": 41, "process_madvise": 440,
        "process_vm_readv": 270, "process_vm_writev": 271, "ptrace": 117, "quotactl": 60, "quotactl_fd": 443,
        "reboot": 142, "request_key": 218, "set_mempolicy": 237, "setns": 268, "settimeofday": 170,
        "swapoff": 225, "swapon": 224, "syslog": 116, "umount2": 39, "unshare": 97, "userfaultfd": 282,
        "vhangup": 58,
    },
}  # fmt: skip
# Refused as a kernel without them refuses them (ENOSYS), so that runtimes that try them first (libuv's io_uring)
# go on without them.
ABSENT_CALLS = ("io_uring_setup", "io_uring_enter", "io_uring_register")
PR_SET_NO_NEW_PRIVS, PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 38, 22, 2
SECCOMP_ALLOW, SECCOMP_ERRNO, EPERM, ENOSYS = 0x7FFF0000, 0x00050000, 1, 38
CLONE_THREAD, X32_SYSCALL_BIT = 0x00010000, 0x40000000
# clone's flags that make a namespace: CLONE_NEWNS, NEWCGROUP, NEWUTS, NEWIPC, NEWUSER, NEWPID, NEWNET (a time
# namespace only unshare or clone3 make).
CLONE_NAMESPACES = 0x00020000 | 0x02000000 | 0x04000000 | 0x08000000 | 0x10000000 | 0x20000000 | 0x40000000
BPF_LOAD, BPF_JEQ, BPF_JSET, BPF_RET = 0x20, 0x15, 0x45, 0x06  # classic BPF: load a word, jumps, return
SECCOMP_NR, SECCOMP_ARCH, SECCOMP_ARG0 = 0, 4, 16  # struct seccomp_data: the low word of args[0] (little-endian)


def assemble(lines):
    """Classic BPF from `lines`: (code, k) or (code, k, label if true, label if false), and label names (str)
    standing for the next instruction; a jump names its targets, which must come after it."""
    labels, at = {}, 0
    for line in lines:
        if isinstance(line, str):
            labels[line] = at
        else:
            at += 1
    program, at = [], 0
    for line in lines:
        if isinstance(line, str):
            continue
        code, k, *targets = line
        true, false = (labels[target] - at - 1 if target else 0 for target in (targets or (None, None)))
        program.append(pack("<HBBI", code, true, false, k & 0xFFFFFFFF))
        at += 1
    return b"".join(program)


def program_filter(machine, one_process=False, signals_only_to=None):
    """The seccomp filter confine installs: see there."""
    numbers = SECCOMP_MACHINES[machine]
    denied = [
        (BPF_JEQ, number, "no_such_call" if name in ABSENT_CALLS else "deny", None)
        for name, number in DENIED_CALLS[machine].items()
    ]
    processes = []
    if one_process:
        processes = [(BPF_JEQ, numbers[name], "deny", None) for name in ("fork", "vfork") if numbers[name] >= 0]
    signals = []
    if signals_only_to is not None:
        to_self = ("kill", "tgkill", "rt_sigqueueinfo", "rt_tgsigqueueinfo")  # the pid is their first argument
        signals = [(BPF_JEQ, numbers[name], "to_self", None) for name in to_self]
        signals += [(BPF_JEQ, numbers[name], "deny", None) for name in ("tkill", "pidfd_send_signal")]
    clone = [(BPF_LOAD, SECCOMP_ARG0), (BPF_JSET, CLONE_NAMESPACES, "deny", None)]
    clone += [(BPF_JSET, CLONE_THREAD, "allow", "deny")] if one_process else [(BPF_RET, SECCOMP_ALLOW)]
    return assemble([
        (BPF_LOAD, SECCOMP_ARCH), (BPF_JEQ, numbers["arch"], None, "deny"),
        (BPF_LOAD, SECCOMP_NR), (BPF_JSET, X32_SYSCALL_BIT, "deny", None),
        *denied, (BPF_JEQ, numbers["clone3"], "no_such_call", None), (BPF_JEQ, numbers["clone"], "clone", None),
        *processes, *signals, (BPF_RET, SECCOMP_ALLOW),
        "clone", *clone,
        "to_self", (BPF_LOAD, SECCOMP_ARG0), (BPF_JEQ, signals_only_to or 0, "allow", "deny"),
        "allow", (BPF_RET, SECCOMP_ALLOW),
        "deny", (BPF_RET, SECCOMP_ERRNO | EPERM),
        "no_such_call", (BPF_RET, SECCOMP_ERRNO | ENOSYS),
    ])  # fmt: skip


def confine(one_process=False, signals_only_to=None):
    """A seccomp filter: from now on this process, and what it execs and starts, may not do what a test must not.
    Always: DENIED_CALLS fail with EPERM (ABSENT_CALLS with ENOSYS), as do a clone that makes a namespace and system
    calls of another ABI (i386's, x32's); clone3, whose flags a filter cannot read, fails with ENOSYS (glibc's
    pthread_create and posix_spawn then fall back on clone). `one_process`: start threads but no other process. A
    program suite's tests share the program's process, and one that forks could try answers in copies of itself
    and keep the one whose copy passed the rest (issue 33's third cause): fork, vfork and a clone without
    CLONE_THREAD fail with EPERM. `signals_only_to` (this process's pid): signal only itself, as a program beside its
    tests' process must (it must not stop them, or wake their debugger: node's SIGUSR1). Filters stack: a stricter
    one installed later adds to the first. OSError where it cannot be installed: the test fails saying so, never
    runs without it (sandbox/isolation.py refuses to start on such a host)."""
    program = seccomp_program(one_process, signals_only_to)
    if program is None:
        machine = os.uname().machine
        raise OSError(f"programs run under a seccomp filter for x86_64 or aarch64, and this machine is {machine}")
    install_filter(program)


built_filters = {}  # (one_process, signals_only_to) -> confine's filter


def seccomp_program(one_process=False, signals_only_to=None):
    """confine's filter (None on a machine it does not know), built once in the runner: spawn asks before it forks,
    since a build is ~0.2 ms of Python, too much for every test's process to repeat."""
    key = (one_process, signals_only_to)
    if key not in built_filters:
        machine = os.uname().machine
        known = machine in SECCOMP_MACHINES
        built_filters[key] = program_filter(machine, one_process, signals_only_to) if known else None
    return built_filters[key]


def install_filter(program):
    """Seccomp filter `program` (classic BPF) on this process and what it starts, for good (a notebook session's
    kernel too: sandbox/jupyter.py)."""
    instructions = (CChar * len(program)).from_buffer_copy(program)
    header = pack("<H6xQ", len(program) // 8, _ctypes.addressof(instructions))  # struct sock_fprog
    fprog = (CChar * len(header)).from_buffer_copy(header)
    zero = CULong(0)
    if prctl(PR_SET_NO_NEW_PRIVS, CULong(1), zero, zero, zero) != 0:
        raise OSError(_ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS) failed")
    if prctl(PR_SET_SECCOMP, CULong(SECCOMP_MODE_FILTER), CULong(_ctypes.addressof(fprog)), zero, zero) != 0:
        raise OSError(_ctypes.get_errno(), "prctl(PR_SET_SECCOMP) failed: this kernel has no seccomp filters")


def fork():
    """A test's process (libc_fork): the child's pid in the runner, 0 in the child."""
    pid = libc_fork()
    if pid < 0:
        raise OSError(_ctypes.get_errno(), "fork failed")
    return pid


def set_limits(limits, address_space, slotted=False):
    """Limits of one child: applied after fork, before exec (inherited by its own children). `address_space`: bound
    its memory by address space; `slotted`: a memory cgroup of its own bounds it instead (MemorySlot)."""
    cpu = max(1, int(limits["cpu_s"] + 0.999))
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
    size = limits["memory_mb"] * 1024 * 1024
    if address_space and not slotted:
        resource.setrlimit(resource.RLIMIT_AS, (size, size))
    elif limits.get("data_limit"):
        # No cgroup bounds the run (bwrap+rlimits): runtimes that reserve address space up front (JVM, V8,
        # Go) are bounded by what they write to: private writable memory, which reservations are not.
        resource.setrlimit(resource.RLIMIT_DATA, (size * DATA_FACTOR, size * DATA_FACTOR))
    resource.setrlimit(resource.RLIMIT_FSIZE, (limits["file_bytes"], limits["file_bytes"]))
    resource.setrlimit(resource.RLIMIT_NOFILE, (limits["open_files"], limits["open_files"]))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    stack = 256 * 1024 * 1024
    if limits.get("unlimited_stack"):
        # The main thread may recurse as deep as the test's memory allows. Bounded by address space, the stack meets
        # that bound; in a memory cgroup, a stack limit just under it overflows first: a recursion without end is a
        # stack overflow (a runtime error) at every level, not the cgroup's kill.
        stack = int(size * STACK_SHARE) if slotted else resource.RLIM_INFINITY
    resource.setrlimit(resource.RLIMIT_STACK, (stack, stack))


class Child:
    """One running test (or the compile step): its pid, pipes and what it has said."""

    def __init__(self, index, pid, out_fd, err_fd, started):
        self.index = index
        self.pid = pid
        self.slot = None  # its MemorySlot
        self.fds = {out_fd: "stdout", err_fd: "stderr"}
        self.chunks = {"stdout": [], "stderr": []}
        self.sizes = {"stdout": 0, "stderr": 0}
        self.started = started
        self.output_exceeded = False
        self.timed_out = False
        self.pidfd = -1
        self.waited_seen = 0  # the CPU wait (ns) it had at the last look
        self.idle = False  # moved to SCHED_IDLE (count_waits)
        self.waited_for_others = 0.0  # not counted against its wall time (count_waits)
        self.apart = False  # its program runs in a child of its own (run_apart, run_suite_apart)


def spawn(spec, limits, slot=None):
    """Fork one child for `spec` ({index, argv, stdin_path, address_space, python_codes}, and optionally
    python_compile: the compile step's arguments, or error: why this test cannot run), in `slot` if given: a
    memory cgroup of its own (MemorySlot), which then bounds its memory instead of its address space."""
    # One process: an exec'd program kept to one (Limits.single_process); tests apart confine their own.
    execs = spec["python_codes"] is None and spec.get("tests_apart") is None
    one_process = bool(execs and limits.get("single_process"))
    seccomp_program(one_process)  # built here, once, for the child's confine
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    pid = fork()
    if pid == 0:  # the child: never returns
        try:
            if slot is not None:
                slot.join()
            os.setpgid(0, 0)
            stdin_fd = os.open(spec["stdin_path"] or os.devnull, os.O_RDONLY)
            os.dup2(stdin_fd, 0)
            os.dup2(out_w, 1)
            os.dup2(err_w, 2)
            os.closerange(3, 65536)
            prefer_for_oom_kill()
            set_limits(limits, spec["address_space"], slotted=slot is not None)
            confine(one_process)
            if spec.get("python_compile"):
                compile_in_child(*spec["python_compile"], limits)
            if spec.get("error"):
                os.write(2, spec["error"].encode(errors="replace") + b"\n")
                os._exit(1)
            if spec.get("tests_apart") is not None:
                run_suite_apart(spec["apart"], *spec["tests_apart"])
            if spec["python_codes"] is None:
                # Python ignores these; an exec'd program expects the defaults (die on EPIPE, on file size).
                signal.signal(signal.SIGPIPE, signal.SIG_DFL)
                signal.signal(signal.SIGXFSZ, signal.SIG_DFL)
                os.execv(spec["argv"][0], spec["argv"])
            run_python(spec["python_codes"], spec.get("python_call"))
        except BaseException as exc:
            write(2, f"runner: {type(exc).__name__}: {exc}\n".encode(errors="replace"))
        _exit(127)
    os.close(out_w)
    os.close(err_w)
    child = Child(spec["index"], pid, out_r, err_r, time.monotonic())
    child.pidfd = os.pidfd_open(pid)
    child.slot = slot
    child.apart = spec.get("tests_apart") is not None or (
        spec["python_codes"] is not None and len(spec["python_codes"]) > 1
    )
    return child


class MemorySlot:
    """A test's memory cgroup (sandbox/cgroups.py TestSlot), through descriptors the host opened: one test at a time.

    A test that cannot join its slot must not run at all, nor read as the program's failure: it says so on `failures`
    (a pipe of the runner's, closed before the program's code runs: no program can write there) and the run ends."""

    def __init__(self, procs_fd, events_fd, failures):
        self.procs_fd, self.events_fd = procs_fd, events_fd
        self.failures = failures  # (read end, write end)
        self.oom_kills_seen = 0  # a slot is new with its run

    def join(self):
        """In the test's process, first thing after fork: "0" moves the writer. Then no descriptor of a slot is
        left to the test's code (spawn closes every inherited one)."""
        try:
            os.write(self.procs_fd, b"0")
        except OSError as exc:
            write(self.failures[1], f"a test could not join its memory cgroup: {exc}".encode())
            _exit(1)

    def check_joined(self):
        """After a test in this slot ended: SystemExit (the run is lost, with the reason) if it could not join."""
        try:
            failure = os.read(self.failures[0], 4096)
        except BlockingIOError:
            return
        raise SystemExit(f"runner: {failure.decode(errors='replace')}")

    def oom_killed(self):
        """Whether the kernel OOM-killed in this slot since the last look (the test that just ended)."""
        for line in os.pread(self.events_fd, 4096, 0).split(b"\n"):
            if line.startswith(b"oom_kill "):
                count = int(line.split()[1])
                killed, self.oom_kills_seen = count > self.oom_kills_seen, count
                return killed
        return False


def compile_python(source_path, test_sources):
    """The solution and each test's own code (assert and call tests: some hold megabytes of data) byte-compiled:
    (solution, [per test]). A test whose code does not compile has its error (a string) instead: that test's
    failure, not the solution's. Raises COMPILE_FAILURES when the solution does not compile."""
    with open(source_path, encoding="utf-8") as handle:
        code = compile(handle.read(), "main.py", "exec")
    return code, [compile_test(source) for source in test_sources]


COMPILE_FAILURES = (SyntaxError, ValueError, RecursionError, MemoryError)


def compile_failure(exc, limits):
    """What `python main.py` prints first when its source does not compile."""
    if isinstance(exc, MemoryError):
        return f"MemoryError: compiling the program needs more than its memory limit ({limits['memory_mb']} MB)"
    return f"{type(exc).__name__}: {exc}"


def compile_in_child(source_path, code_path, test_sources, limits):
    """In a forked child, under the compile limits: compile_python's result marshalled into `code_path`, exit 0;
    else exit 1 with the error on stderr."""
    try:
        compiled = compile_python(source_path, test_sources)
        with open(code_path, "wb") as handle:
            marshal.dump(compiled, handle)
    except COMPILE_FAILURES as exc:
        message = compile_failure(exc, limits)
    except OSError as exc:
        message = f"the compiled program does not fit the sandbox's disk (limits.disk_mb): {exc.strerror}"
    else:
        os._exit(0)
    os.write(2, message.encode(errors="replace") + b"\n")
    os._exit(1)


def compile_in_runner(source_path, test_sources, limits):
    """compile_python in the runner itself, for sources under INLINE_COMPILE_BYTES: the compile step's result as a
    child's would read, and the code (None when it does not compile)."""
    started, cpu_before = time.monotonic(), time.process_time()
    try:
        python, exit_code, stderr = compile_python(source_path, test_sources), 0, ""
    except COMPILE_FAILURES as exc:
        python, exit_code, stderr = None, 1, compile_failure(exc, limits) + "\n"
    result = {
        "index": -1,
        "wall_s": round(time.monotonic() - started, 4),
        "cpu_s": round(time.process_time() - cpu_before, 4),
        "max_rss_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
        "stdout": "",
        "stderr": stderr,
        "status": "exited",
        "exit_code": exit_code,
        "memory_exhausted": False,
    }
    return result, python


def compile_test(source):
    """A test's own code compiled; None when it has none, the error when it does not compile."""
    if not source:
        return None
    try:
        return compile(source, "test.py", "exec")
    except (SyntaxError, ValueError, RecursionError) as exc:
        return f"the test's code does not compile: {type(exc).__name__}: {exc}"


def load_python(code_path):
    """What the compile child wrote (the runner's own output: trusted), removed from disk."""
    with open(code_path, "rb") as handle:
        code = marshal.load(handle)
    os.remove(code_path)
    return code


def run_python(codes, call=None):
    """In a forked child: exec the solution as __main__. With a test's own code (assert tests), that code runs in this
    process and the solution in a child of it (run_apart): this process's exit status and the marker it writes last
    on stdout say whether the test passed. With a `call` (function-call tests), the solution's function is called
    here (run_call)."""
    sys.stdin = io.TextIOWrapper(io.FileIO(0, "r", closefd=False))  # a file here, a pipe in the runner: made here
    sys.stdout, sys.stderr = sys.__stdout__, sys.__stderr__ = test_output_streams
    sys.argv = ["main.py"]
    sys.setrecursionlimit(100_000)
    if "random" in sys.modules:  # what os.fork's handler does: each test draws its own numbers, as a new process
        sys.modules["random"].seed()
    if len(codes) > 1:
        run_apart(codes[0], codes[1])
    if call is not None:
        run_call(codes[0], *call)
    stdout = sys.stdout
    _exit(end_program(exec_program(codes[0])[1], stdout))


def exec_program(code):
    """Exec the program's code as __main__: its namespace, and what it raised (None: it ran to its end)."""
    namespace = {"__name__": "__main__", "__builtins__": builtins}
    try:
        exec(code, namespace)
    except BaseException as exc:
        return namespace, exc
    return namespace, None


def run_call(code, name, args, marker):
    """A function-call test, in the program's own process: its result goes to the host as JSON, where the expected
    one is and where it is compared; whatever the program prints or rebinds here is only ever its answer."""
    stdout = sys.stdout
    namespace, error = exec_program(code)
    answer = None
    if error is None:
        try:
            answer = __import__("json").dumps(json_ready(called(namespace, name, args)), default=list)
        except BaseException as exc:
            error = exc
    status = end_program(error, stdout)
    if status == 0:
        write(1, (marker + answer).encode(errors="surrogatepass"))
    _exit(status)


def called(namespace, name, args):
    """The program's function `name` called (or the method of a new `Solution`, LeetCode's shape)."""
    function = namespace.get(name)
    if function is None and "Solution" in namespace:
        function = getattr(namespace["Solution"](), name)
    if function is None:
        raise NameError(f"function {name!r} is not defined")
    return function(*args)


def end_program(error, stdout):
    """The exit status of a program that ended with `error` (None: it ran to its end), with its output flushed: its
    exit handlers run first, as at an interpreter's exit (a solution that writes its buffered output from one)."""
    status = exit_status(error)
    try:  # noqa: SIM105 - contextlib costs start-up time (see the module's docstring)
        run_exit_handlers()
    except BaseException:  # each handler's own failure is said on stderr; one that cannot even be said is not
        pass
    try:
        sys.stdout.flush()
    except BaseException:
        status = status or 1
    # Rebound: what it printed before is output too, flushed as Python flushes a stream it drops (the runner holds
    # this one: it is never dropped).
    if getattr(sys, "stdout", None) is not stdout and not stdout.closed:
        try:  # noqa: SIM105 - contextlib costs start-up time (see the module's docstring)
            flush_text(stdout)
        except BaseException:
            pass
    return status


def output_streams():
    """A Python test's sys.stdout and sys.stderr, on descriptors 1 and 2, made in the runner before the tests fork: a
    test's process gets them as they are here, unused (its 1 and 2 are pipes, as the runner's are), for ~20 page
    faults fewer than making them there."""
    stdout = io.TextIOWrapper(io.FileIO(1, "w", closefd=False), write_through=False)
    return stdout, io.TextIOWrapper(io.FileIO(2, "w", closefd=False), write_through=True)


def exit_status(error):
    """The exit status of a Python program that ended with `error` (None: it ran to its end), said on stderr."""
    if error is None:
        return 0
    if isinstance(error, SystemExit):
        return error.code if isinstance(error.code, int) else (0 if error.code is None else 1)
    if isinstance(error, MemoryError):  # no traceback: importing traceback may need memory there is none of
        sys.stderr.write("MemoryError\n")
        return 1  # as `python main.py` exits (SandboxFusion's return_code); the judge reads the line above
    try:
        import traceback  # only for a failing test: it costs start-up time

        # The program's traceback, as `python main.py` prints it: without the runner's frame that exec'd it.
        frame = error.__traceback__
        if frame is not None and frame.tb_frame.f_code in EXECUTING_CODES:
            error.__traceback__ = frame.tb_next
        traceback.print_exception(error)
    except BaseException:  # no memory left to import it with (a thread bomb's stacks), or builtins it uses rebound
        write(2, f"{type(error).__name__}: {error}\n".encode(errors="replace"))
    return 1


# --- Tests apart from the program -------------------------------------------------------------------------------
#
# An assert or function-call test's process (the runner's child, forked before any program code runs) forks the
# program's process and runs the test's code itself, on plain data only: it asks the program's process for the
# names the test uses and calls its functions over a pair of pipes, with arguments and results marshalled as
# builtin data. Nothing the program does reaches the test's interpreter (its builtins, modules, frames, tracer or
# `False`), the test's code and expected values never enter the program's process, and the verdict is the test
# process's own exit status: a program can only answer, never judge.


class NotPlainData(BaseException):
    """A value the program gave a test that is not plain data. Not an Exception: a test's own `except Exception`
    must not take it for an error the program was asked to raise."""


class ProgramEnded(BaseException):
    """The program's process ended while the test still needed it (an exit in the program, or it was killed)."""


# Subclasses of builtin types, read as their base's value through the base's own methods (never the subclass's).
PLAIN_READERS = (
    (int, lambda value, depth: int.__int__(value)),
    (float, lambda value, depth: float.__float__(value)),
    (complex, lambda value, depth: complex.__complex__(value)),
    (str, lambda value, depth: str.__str__(value)),
    (bytes, lambda value, depth: bytes.__bytes__(value)),
    (tuple, lambda value, depth: tuple([plain_copy(item, depth) for item in tuple.__iter__(value)])),
    (list, lambda value, depth: [plain_copy(item, depth) for item in list.__iter__(value)]),
    (dict, lambda value, depth: {plain_copy(k, depth): plain_copy(v, depth) for k, v in dict.items(value)}),
    (frozenset, lambda value, depth: frozenset([plain_copy(item, depth) for item in frozenset.__iter__(value)])),
    (set, lambda value, depth: {plain_copy(item, depth) for item in set.__iter__(value)}),
)
PLAIN_DEPTH = 1000
PLAIN_TYPES = (type(None), bool, int, float, complex, str, bytes, tuple, list, dict, set, frozenset)
type_name = type.__dict__["__name__"].__get__  # a class's own name, whatever its metaclass answers


def plain_copy(value, depth=0):
    """In the program's process: `value` copied as builtin data (None, bool, numbers, str, bytes, and tuples, lists,
    dicts and sets of them); NotPlainData when it holds anything else."""
    try:
        return loads(dumps(value))  # C speed; marshal takes exact builtin types only
    except ValueError:
        pass
    if depth < PLAIN_DEPTH:
        for base, read in PLAIN_READERS:
            if issubclass(type(value), base):
                return read(value, depth + 1)
    raise NotPlainData(f"a value of type {type_name(type(value))}: not plain data (tests compare builtin values only)")


def checked_plain(value, depth=0):
    """In the test's process: `value` as the program's process sent it, taken only if it is builtin data (marshal
    also carries code objects and the like)."""
    kind = type(value)
    if kind not in PLAIN_TYPES or depth > PLAIN_DEPTH:
        raise NotPlainData(f"the program's process sent a {type_name(kind)}: not plain data")
    if kind is dict:
        for key, item in value.items():
            checked_plain(key, depth + 1)
            checked_plain(item, depth + 1)
    elif kind in (tuple, list, set, frozenset):
        for item in value:
            checked_plain(item, depth + 1)
    return value


MESSAGE_HEADER = 8


def send(fd, value):
    """One message on a pipe: its length, then `value` marshalled."""
    data = dumps(value)
    write_all(fd, len(data).to_bytes(MESSAGE_HEADER, "little") + data)


def receive(fd):
    """The next message on a pipe, unmarshalled; None when the other side closed it (or sent something cut)."""
    header = read_exactly(fd, MESSAGE_HEADER)
    if header is None:
        return None
    data = read_exactly(fd, int.from_bytes(header, "little"))
    try:
        return None if data is None else loads(data)
    except (ValueError, EOFError, TypeError):
        return None


def read_exactly(fd, size):
    chunks = []
    while size:
        chunk = read(fd, min(size, 1 << 20))
        if not chunk:
            return None
        chunks.append(chunk)
        size -= len(chunk)
    return b"".join(chunks)


def run_apart(program_code, test_code):
    """The test's process: fork the program's process, run the test's code against it, and end with the verdict
    as the exit status (0: every check passed and the program ended well), the marker written last."""
    requests, replies = os.pipe(), os.pipe()
    handle_tag = os.urandom(16)  # marks the program's own objects the test hands back (ProgramObject)
    pid = fork()
    if pid == 0:  # the program's process: never returns
        os.close(requests[1])
        os.close(replies[0])
        forget_tests()
        serve_tests(program_code, requests[0], replies[1], handle_tag)
    os.close(requests[0])
    os.close(replies[1])
    # Imports in the test's code come from the interpreter's own directories, never from one the program can write
    # (its source's directory is the working directory: a `random.py` written there would run here).
    sys.path[:] = [path for path in sys.path if path and not writable_by_programs(path)]
    sys.path_importer_cache.clear()
    program = ProgramProcess(pid, requests[1], replies[0], handle_tag)
    harness = Harness(program)
    error = None
    try:
        exec(test_code, harness.namespace(test_code))
    except BaseException as exc:
        error = exc
    for stream in test_output_streams:  # what the test's code printed (a framework's report) before anything else
        try:  # noqa: SIM105 - contextlib costs start-up time (see the module's docstring)
            flush_text(stream)
        except BaseException:
            pass
    status = program.end()
    if os.WIFSIGNALED(status):  # the program was killed (its CPU limit, its memory): so is its test
        end_by_signal(os.WTERMSIG(status))
    if os.WEXITSTATUS(status) != 0:  # it failed: a runtime error of its own, said on stderr
        _exit(os.WEXITSTATUS(status))
    if isinstance(error, ProgramEnded):
        write(2, b"the program ended before its tests did\n")
        _exit(1)
    if exit_status(error) == 0 and harness.finished():
        write(1, harness.marker.encode())
        _exit(0)
    _exit(1)


def run_suite_apart(apart, tests_code, marker):
    """A program suite's test in a language run apart (Language.apart_tests), in the test's process (the runner's
    fork: non-dumpable, so no program reaches its /proc files). The tests' process starts first: it reads its code
    from stdin (never on disk), and makes itself non-dumpable before anything else
    (sandbox/runtimes/apart/nondumpable.c; its memory holds the expected values), which it says on fd 5. Only then
    does the program's process start, kept to one process (unless its runtime forks) that signals only itself,
    answering the tests' requests (fd 3) with its replies (fd 4) as plain data. The tests say they all ran on fd 5
    too. Ends as run_apart does: exit status 0 and the marker written last when every check passed and the program
    ended well (never returns). Where the tests' framework reports each test (Language.report: Jest's), the tests
    write that report on fd 5 after "done", and it follows the marker, where the program, which cannot print the
    marker, cannot have written it (a failed run's too: its exit status says it failed, the report which tests)."""
    requests, replies, said, code = os.pipe(), os.pipe(), os.pipe(), os.pipe()
    tests = fork()
    if tests == 0:
        env = dict(os.environ) | apart["tests_env"] | {"JUDGE_READY_FD": "5", "JUDGE_READY_PID": str(getpid())}
        fds = {0: code[0], 3: replies[0], 4: requests[1], 5: said[1]}
        if apart.get("tests_binary") is not None:  # compiled apart (C++, Rust, Java): in memory, never on the disk
            fds[TESTS_BINARY_FD] = in_memory(apart["tests_binary"])
        exec_with_fds(fds, apart["tests"], env)
    os.close(said[1])
    if read(said[0], 1) != b"r":  # it could not make itself unreachable, or did not start: the test fails
        write(2, b"runner: the tests' process did not start\n")
        os.kill(tests, signal.SIGKILL)
        _exit(1)
    program = fork()
    if program == 0:
        exec_with_fds({3: requests[0], 4: replies[1]}, apart["program"], None, program_forks=apart["forks"])
    for fd in (requests[0], requests[1], replies[0], replies[1], code[0]):
        os.close(fd)
    try:  # noqa: SIM105 - contextlib costs start-up time (see the module's docstring)
        write_all(code[1], tests_code.encode(errors="surrogatepass"))
    except OSError:  # the tests' process is gone: its status says why
        pass
    os.close(code[1])
    finished = read_exactly(said[0], 4) == b"done"
    report = read_at_most(said[0], TESTS_REPORT_BYTES) if finished and apart.get("report") else b""
    tests_status = os.waitpid(tests, 0)[1]
    program_status = os.waitpid(program, 0)[1]
    # The program was killed (its CPU limit, its memory): so is its test; else a kill of the tests' process (a reply
    # too big for its memory).
    for status in (program_status, tests_status):
        if os.WIFSIGNALED(status):
            end_by_signal(os.WTERMSIG(status))
    if os.WEXITSTATUS(program_status) != 0:  # it failed: a runtime error of its own, said on stderr
        _exit(os.WEXITSTATUS(program_status))
    if finished and (tests_status == 0 or report):
        # after a line end: a quote the program printed last does not quote it
        write_all(1, b"\n" + marker.encode() + report)
    _exit(0 if tests_status == 0 and finished else 1)


TESTS_REPORT_BYTES = 1 << 20  # what a tests' process may report of its tests (run_suite_apart)


def read_at_most(fd, limit):
    """What a pipe holds until the other side closes it, at most `limit` bytes (the rest left unread)."""
    chunks, size = [], 0
    while size < limit:
        chunk = read(fd, min(limit - size, 1 << 16))
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks)


def write_all(fd, data):
    """All of `data` on `fd` (a pipe takes what fits at a time)."""
    while data:
        data = data[write(fd, data) :]


TESTS_BINARY_FD = 6  # where compiled tests are put (run_suite_apart): their process runs /dev/fd/6 or reads it


def in_memory(data):
    """A descriptor of a file in memory holding `data` (closed on exec, unless placed where a process runs it)."""
    fd = os.memfd_create("tests", os.MFD_CLOEXEC)
    write_all(fd, data)
    return fd


def exec_with_fds(fds, argv, env, program_forks=None):
    """In a forked child: exec `argv` with `fds` (target -> the descriptor to put there) and 0-2 open, nothing else.
    With `program_forks` (not None) it is a program's process: it signals only itself, and unless its runtime forks
    (Language.forks) it is kept to one process (confine). Never returns."""
    try:
        top = max(fds)
        staged = {}
        for target, fd in fds.items():  # above every target first: no dup2 overwrites a descriptor still to place
            while fd <= top:
                fd = os.dup(fd)
            staged[target] = fd
        for target, fd in staged.items():
            os.dup2(fd, target)
        os.closerange(top + 1, 65536)
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)
        signal.signal(signal.SIGXFSZ, signal.SIG_DFL)
        if program_forks is not None:
            confine(one_process=not program_forks, signals_only_to=getpid())
        if env is None:
            os.execv(argv[0], argv)
        os.execve(argv[0], argv, env)
    except BaseException as exc:
        write(2, f"runner: {type(exc).__name__}: {exc}\n".encode(errors="replace"))
    _exit(127)


def end_by_signal(sig):
    """End this process by `sig`, as the process it ran apart was (the runner reads a test's verdict from that)."""
    try:  # noqa: SIM105 - contextlib costs start-up time (see the module's docstring)
        signal.signal(sig, signal.SIG_DFL)
    except (OSError, ValueError):  # SIGKILL and SIGSTOP keep theirs
        pass
    os.kill(getpid(), sig)
    _exit(128 + sig)


def writable_by_programs(path):
    """Whether programs may write under `path`: the sandbox's own directory (theirs, the working directory) or /tmp."""
    path = os.path.realpath(path)
    return any(path == top or path.startswith(top + "/") for top in (sandbox_root, "/tmp"))


sandbox_root = "/sandbox"  # the run's directory: its programs' sources, inputs and files (main)


def forget_tests():
    """In the program's process, before its code runs: drop what it inherited of the tests (every test's code, held by
    the runner's frames), so it finds none of them in its own memory."""
    for spec in running_specs:
        spec.clear()
    running_specs.clear()
    gc.collect()


running_specs = []  # the runner's test specs (main), emptied in every program's process


def serve_tests(code, requests, replies, handle_tag):
    """The program's process: run the program as __main__, then answer the test's process until it is done; exit
    as the program ends (never returns)."""
    stdout = sys.stdout
    namespace, error = exec_program(code)
    server = ProgramServer(namespace, handle_tag)
    me = getpid()
    while error is None:
        request = receive(requests)
        if request is None:  # the test is done
            break
        try:
            reply = server.answer(request)
        except SystemExit as exc:
            error = exc
            break
        if getpid() != me:  # a copy the program forked returned into the harness: it tells the test nothing
            _exit(1)  # (whether its answer passed would let the program try answers until one does)
        try:
            send(replies, reply)
        except OSError:  # the test's process is gone (killed): nothing more is asked
            break
    _exit(end_program(error, stdout))


class ProgramServer:
    """The program's side: its names, the objects it made (handles: the test may only hand them back), its answers as
    plain data."""

    def __init__(self, namespace, handle_tag):
        self.namespace, self.handle_tag, self.objects = namespace, handle_tag, []

    def answer(self, request):
        kind = request[0]
        try:
            if kind == "names":  # None: every public name (`from solution import *`)
                names = request[1] if request[1] is not None else [n for n in self.namespace if n[:1] != "_"]
                return ("names", {name: self.describe(name) for name in names if name in self.namespace})
            if kind == "call":
                _, target, args, kwargs = request
                function = self.objects[target] if type(target) is int else self.namespace[target]
                args, kwargs = self.resolved(args), self.resolved(kwargs)
                result = function(*args, **kwargs)
                return ("value", *self.described(result), self.changed(args))
        except SystemExit:
            raise
        except NotPlainData as exc:
            return ("raised", ("NotPlainData",), str(exc), "")
        except BaseException as exc:  # the program's function raised: the test may expect it
            return ("raised", self.exception_names(exc), self.text(exc), self.traceback_of(exc))
        return ("raised", ("RuntimeError",), f"unknown request {kind!r}", "")

    def describe(self, name):
        value = self.namespace[name]
        if type(value) is ModuleType:
            return ("module", value.__name__ if type(value.__name__) is str else "")
        if callable(value):
            return ("callable", name)
        return self.described(value)

    def described(self, value):
        """("plain", the value) or ("object", its handle number, its type's name)."""
        try:
            return ("plain", plain_copy(value))
        except NotPlainData:
            self.objects.append(value)
            return ("object", len(self.objects) - 1, type_name(type(value)))

    def resolved(self, value):
        """Arguments from the test, with the handles of the program's objects replaced by the objects."""
        kind = type(value)
        if kind is tuple and len(value) == 2 and value[0] == self.handle_tag:
            return self.objects[value[1]]
        if kind in (list, tuple):
            return kind(self.resolved(item) for item in value)
        if kind is dict:
            return {key: self.resolved(item) for key, item in value.items()}
        return value

    @staticmethod
    def changed(args):
        """The lists, dicts and sets the test passed, as the call left them (those of plain data): the test's copies
        are brought up to date (a function that sorts a list in place)."""
        changed = []
        for index, arg in enumerate(args):
            if type(arg) in (list, dict, set):
                try:  # noqa: SIM105 - contextlib costs start-up time (see the module's docstring)
                    changed.append((index, plain_copy(arg)))
                except NotPlainData:
                    pass
        return changed

    @staticmethod
    def exception_names(exc):
        return tuple(type_name(cls) for cls in type(exc).__mro__)

    @staticmethod
    def text(exc):
        try:
            return str(exc)[:2000]
        except BaseException:
            return ""

    @staticmethod
    def traceback_of(exc):
        try:
            import traceback  # only for a call that raised: it costs start-up time

            return "".join(traceback.format_exception(exc))[-STDERR_TAIL:]
        except BaseException:
            return ""


def json_ready(value, depth=0):
    """A function-call result as JSON would take it with `default=list` (sets, tuples, generators as lists), and
    numpy's values as Python's (`tolist`)."""
    try:
        return plain_copy(value)
    except NotPlainData:
        pass
    if depth < PLAIN_DEPTH:
        if hasattr(type(value), "tolist"):
            return json_ready(value.tolist(), depth + 1)
        if hasattr(type(value), "__iter__"):
            return [json_ready(item, depth + 1) for item in value]
    raise NotPlainData(f"the function returned a value of type {type_name(type(value))}: not JSON data")


class ProgramProcess:
    """The test's side of the program's process."""

    def __init__(self, pid, requests, replies, handle_tag):
        self.pid, self.requests, self.replies, self.handle_tag = pid, requests, replies, handle_tag
        self.status = None

    def ask(self, request):
        try:
            send(self.requests, request)
        except (BrokenPipeError, ValueError) as exc:
            if isinstance(exc, ValueError):  # marshal: the test passes something that is not data
                raise NotPlainData(f"the test passes the program a value that is not plain data: {exc}") from None
            raise ProgramEnded() from None
        reply = receive(self.replies)
        if type(reply) is not tuple or not reply:
            raise ProgramEnded()
        return reply

    def end(self):
        """Close the test's side and wait for the program to end: its wait status."""
        if self.status is None:
            os.close(self.requests)
            os.close(self.replies)
            self.status = os.waitpid(self.pid, 0)[1]
        return self.status


class ProgramObject:
    """An object the program made that is not plain data (an instance of its own class, a generator): the test may
    hand it back to the program (MBPP builds the program's `Pair`s for it), but any comparison, truth test or
    reading of it fails the test, so no class of the program's can answer a check."""

    __slots__ = ("harness", "number", "origin")

    def __init__(self, number, harness, origin):
        self.number, self.harness, self.origin = number, harness, origin

    def refuse(self, *args):
        self.harness.failure = f"{self.origin}: not plain data (tests compare builtin values only)"
        raise NotPlainData(self.harness.failure)

    __bool__ = __eq__ = __ne__ = __lt__ = __le__ = __gt__ = __ge__ = __hash__ = refuse
    __len__ = __iter__ = __contains__ = __int__ = __float__ = __index__ = __str__ = __format__ = refuse

    def __call__(self, *args, **kwargs):
        return self.harness.call(self.number, self.origin, args, kwargs)


class Harness:
    """What a test's own code reaches as `__judge__` (sandbox/judge.py's assert and function-call tests), in the
    test's process: the program's names it uses, its functions as calls into the program's process."""

    def __init__(self, program):
        self.program = program
        self.marker = None
        self.failure = None

    def namespace(self, code):
        """The namespace a test's `code` runs in: the program's names it uses (not the builtins' names), exposed."""
        namespace = {"__name__": "__main__", "__builtins__": builtins, "__judge__": self}
        wanted = sorted(name for name in imported_names(code) if name not in vars(builtins) and name[:2] != "__")
        if wanted:
            _, found = self.reply(self.program.ask(("names", wanted)), "names")
            for name, description in checked_plain(found).items():
                namespace[name] = self.exposed(name, description)
        return namespace

    def module(self, name):
        """The program as module `name` in this process (`from solution import f`, `import solution`): each name
        asked of the program's process as the test uses it, exposed."""
        module = ModuleType(name)
        harness = self

        def __getattr__(attribute):
            if attribute[:2] == "__" and attribute != "__all__":
                raise AttributeError(attribute)
            wanted = None if attribute == "__all__" else [attribute]
            _, found = harness.reply(harness.program.ask(("names", wanted)), "names")
            found = {key: harness.exposed(key, item) for key, item in checked_plain(found).items()}
            vars(module).update(found)
            if attribute == "__all__":
                return list(found)
            if attribute not in found:
                raise AttributeError(f"module {name!r} has no attribute {attribute!r}")
            return found[attribute]

        module.__getattr__ = __getattr__
        sys.modules[name] = module
        return module

    def test_module(self, name, path, source):
        """A test file's code (`source`, shown as `path` in tracebacks) run as module `name`, the program's names it
        uses exposed as in an assert test's namespace (pytest collects it: sandbox/judge.py pytest_apart)."""
        code = compile(source, path, "exec")
        module = ModuleType(name)
        vars(module).update(self.namespace(code), __name__=name, __file__=path)
        exec(code, vars(module))
        return module

    def solution(self, name):
        """The program's `name`, exposed (HumanEval's candidate, bound after the prompt's own definitions)."""
        _, found = self.reply(self.program.ask(("names", [name])), "names")
        if name not in checked_plain(found):
            raise NameError(f"name {name!r} is not defined")
        return self.exposed(name, found[name])

    def exposed(self, name, description):
        """A module as this process has it; a function (or class) whose results are plain data, or ProgramObjects;
        data as it is, or a ProgramObject."""
        kind = description[0]
        if kind == "module":  # only what this process has or the standard library: never a module the program wrote
            module = description[1]
            if module in sys.modules or module.partition(".")[0] in sys.stdlib_module_names:
                return __import__(module, fromlist=["_"] if "." in module else ())
            return ProgramObject(-1, self, f"{name} is a module of the program's own, {module!r}")
        if kind == "callable":
            return lambda *args, **kwargs: self.call(name, name, args, kwargs)
        return self.value(description, f"{name} is")

    def call(self, target, origin, args, kwargs):
        request = ("call", target, self.handles(list(args)), self.handles(kwargs))
        reply = self.reply(self.program.ask(request), "value")
        for index, changed in checked_plain(reply[-1]):  # arguments the function changed in place (a list it sorted)
            argument = args[index]
            if type(argument) is list:
                argument[:] = changed
            elif type(argument) in (dict, set):
                argument.clear()
                argument.update(changed)
        return self.value(reply[1:-1], f"{origin} returned")

    def value(self, description, origin):
        if description[0] == "plain":
            return checked_plain(description[1])
        return ProgramObject(description[1], self, f"{origin} a value of type {description[2]}")

    def handles(self, value, depth=0):
        """Arguments for the program's process: the program's objects by their handles."""
        kind = type(value)
        if kind is ProgramObject:
            return (self.program.handle_tag, value.number)
        if depth < PLAIN_DEPTH and kind in (list, tuple):
            return kind(self.handles(item, depth + 1) for item in value)
        if depth < PLAIN_DEPTH and kind is dict:
            return {key: self.handles(item, depth + 1) for key, item in value.items()}
        return value

    @staticmethod
    def reply(reply, expected):
        """The reply's fields; what the program's function raised, raised here as the builtin exception it is."""
        if reply[0] == "raised":
            _, names, text, traceback_text = reply
            if "NotPlainData" in names:
                raise NotPlainData(text)
            kind = next((vars(builtins)[n] for n in names if isinstance(vars(builtins).get(n), type)), Exception)
            error = kind(text) if issubclass(kind, BaseException) else Exception(text)
            if traceback_text:
                error.add_note(f"raised in the program:\n{traceback_text}")
            raise error
        if reply[0] != expected:
            raise ProgramEnded()
        return reply

    def done(self, marker):
        """Called by the test's code after its last check (an assert test's marker, a function-call test's marker and
        result): written last on stdout, once the program has ended well."""
        self.marker = marker

    def finished(self):
        return self.marker is not None and self.failure is None


EXECUTING_CODES = (exec_program.__code__, run_call.__code__, run_apart.__code__)  # the frames that exec code


def warm_for_runs():
    """In a zygote, once: the standard library's warm modules imported for every run it forks (a run whose code names
    `collections` or `re` spent ~10 ms on them). A few MB, shared by the runs."""
    for name in STDLIB_WARM_MODULES:
        __import__(name)


def kill_group(pid):
    for target in (-pid, pid):
        try:  # noqa: SIM105 - contextlib costs start-up time (see the module's docstring)
            os.kill(target, signal.SIGKILL)
        except ProcessLookupError:
            pass


class Watch:
    """The fds the runner waits on (select.poll), each with what it belongs to."""

    def __init__(self):
        self.poll = select.poll()
        self.owners = {}

    def add(self, fd, owner):
        self.poll.register(fd, select.POLLIN)
        self.owners[fd] = owner

    def remove(self, fd):
        self.poll.unregister(fd)
        del self.owners[fd]

    def ready(self, timeout_s):
        """(fd, owner) of each fd readable, closed or failed within `timeout_s` (None: no timeout)."""
        events = self.poll.poll(None if timeout_s is None else timeout_s * 1000)
        return [(fd, self.owners[fd]) for fd, _ in events if fd in self.owners]


def run_children(specs, parallel, limits, emit, credits_fd=None, slots=()):
    """Run every spec, at most `parallel` at once, each in a free memory slot if `slots` are given (as many as
    `parallel`); `emit` each result as its child ends.

    With `credits_fd`, a test starts only on credit, one byte from the host each, granted once the
    host is ready (after tightening limits that compiling needed looser), then one more for each
    result. A host that may stop the run grants `parallel` ahead, so at most `parallel - 1` tests
    run past the first failure it sees; one that may not grants thousands ahead, so no test waits
    for the host to read the results before it.
    """
    pending = list(reversed(specs))
    free_slots = list(slots)
    running = {}
    watch = Watch()
    credits = 0 if credits_fd is not None else len(specs)
    if credits_fd is not None:
        watch.add(credits_fd, None)
    next_look = 0.0  # when count_waits looks at the running tests again: not at every event of a short test
    while pending or running:
        while pending and len(running) < parallel and credits > 0:
            credits -= 1
            child = spawn(pending.pop(), limits, free_slots.pop() if free_slots else None)
            running[child.pid] = child
            for fd in child.fds:
                watch.add(fd, child)
            # Readable when the child exits: reaping waits for no timer.
            watch.add(child.pidfd, child)
        if not running:
            wait = None  # only the host's credits can let a test start
        else:
            now = time.monotonic()
            if now >= next_look:
                next_look = now + max(YIELD_LOOK_MIN_S, min(WAIT_LOOK_S, count_waits(running)))
            until_deadline = min(wall_deadline(child, limits) for child in running.values()) - now
            wait = max(YIELD_LOOK_MIN_S, min(next_look - now, until_deadline))
        for fd, child in watch.ready(wait):
            if child is None:  # the host's credits
                granted = os.read(credits_fd, 4096)
                credits += len(granted)
                if not granted:  # the host stopped the run
                    watch.remove(credits_fd)
                    pending.clear()
            elif fd != child.pidfd and fd in child.fds:
                read_some(child, fd, watch, limits)
        for child, status, usage, elapsed in reap(running, limits):
            drain(child, watch, limits)  # what it wrote before exiting is still in the pipes
            watch.remove(child.pidfd)
            os.close(child.pidfd)
            del running[child.pid]
            if child.slot is not None:
                child.slot.check_joined()
                free_slots.append(child.slot)
            emit(result_of(child, status, usage, elapsed, limits))


def read_some(child, fd, watch, limits):
    data = os.read(fd, 65536)
    if not data:
        watch.remove(fd)
        os.close(fd)
        del child.fds[fd]
        return
    stream = child.fds[fd]
    child.sizes[stream] += len(data)
    if stream == "stderr":
        child.chunks["stderr"] = [b"".join(child.chunks["stderr"] + [data])[-STDERR_TAIL:]]
    elif child.sizes["stdout"] > limits["output_bytes"]:
        child.output_exceeded = True
        kill_group(child.pid)
    else:
        child.chunks["stdout"].append(data)


def drain(child, watch, limits):
    """After exit: read what is left in the pipes (bounded), then close them."""
    for fd in list(child.fds):
        watch.remove(fd)
        os.set_blocking(fd, False)
        try:
            while child.sizes["stdout"] <= limits["output_bytes"]:
                data = os.read(fd, 65536)
                if not data:
                    break
                child.sizes[child.fds[fd]] += len(data)
                child.chunks[child.fds[fd]].append(data)
        except BlockingIOError:
            pass  # a grandchild still holds the pipe: what it writes later is not this test's
        os.close(fd)
    child.fds.clear()
    child.output_exceeded = child.output_exceeded or child.sizes["stdout"] > limits["output_bytes"]


def wall_deadline(child, limits):
    """When a test has used up its wall time, not counting time it waited for a CPU that others held
    (sandboxed programs run at low priority, behind grading work: a starved program is not too slow)."""
    return child.started + limits["wall_s"] + child.waited_for_others


def count_waits(running):
    """Add to each test the time it waited for a CPU since the last look (schedstat's second field, in ns),
    unless the sandbox holds more processes than tests: then its own processes held the CPU (a fork bomb).
    A test past YIELD_CPU_NS of CPU (the first field) goes SCHED_IDLE, and the host hears of it once.

    Returns the soonest a test still at normal priority can reach YIELD_CPU_NS (seconds): a program that spins
    is demoted then, not up to a whole WAIT_LOOK_S later."""
    tests = [(child, test_pids(child)) for child in running.values()]
    crowded = sum(name.isdigit() for name in os.listdir("/proc")) > sum(len(pids) for _, pids in tests) + 1  # runner
    until_yield = WAIT_LOOK_S
    for child, pids in tests:
        ran = waited = 0
        for pid in pids:
            try:
                with open(f"/proc/{pid}/schedstat", "rb") as handle:
                    ran_here, waited_here = (int(field) for field in handle.read().split()[:2])
            except (OSError, ValueError):
                continue
            ran, waited = ran + ran_here, waited + waited_here
        if not crowded:
            child.waited_for_others += max(0, waited - child.waited_seen) / 1e9
        child.waited_seen = max(waited, child.waited_seen)
        if ran > YIELD_CPU_NS and not child.idle:
            child.idle = True
            for pid in pids:
                try:  # noqa: SIM105 - contextlib costs start-up time (see the module's docstring)
                    os.sched_setscheduler(pid, os.SCHED_IDLE, os.sched_param(0))
                except OSError:  # it has just ended
                    pass
            announce_yield()
        elif not child.idle:
            until_yield = min(until_yield, (YIELD_CPU_NS - ran) / 1e9)
    return until_yield


def test_pids(child):
    """The processes a test is: its own, and for a test run apart its children's too (its program's, its tests')."""
    if not child.apart:
        return (child.pid,)
    try:
        with open(f"/proc/{child.pid}/task/{child.pid}/children", "rb") as handle:
            return (child.pid, *map(int, handle.read().split()))
    except (OSError, ValueError):
        return (child.pid,)


def announce_yield():
    """Tell the host, once per run, that its programs run long (a line of its own on stdout)."""
    global yield_announced
    if not yield_announced:
        yield_announced = True
        sys.stdout.write('{"yield": true}\n')
        sys.stdout.flush()


def reap(running, limits):
    """Collect ended children, killing those past their wall time.

    The runner is PID 1 of the sandbox, so orphans of every test end up as its children
    too: reap them all (waitpid -1), keeping the statuses of the tests it tracks.
    """
    now = time.monotonic()
    for child in running.values():
        if now > wall_deadline(child, limits) and not child.timed_out:
            child.timed_out = True
            kill_group(child.pid)
    ended = []
    while True:
        try:
            pid, status, usage = os.wait4(-1, os.WNOHANG)
        except ChildProcessError:
            break
        if pid == 0:
            break
        child = running.get(pid)
        if child is not None:
            kill_group(pid)  # anything it left behind in its group
            ended.append((child, status, usage, time.monotonic() - child.started))
    return ended


def cpu_exhausted(sig, cpu, limits, slot_killed):
    """Whether signal `sig` ended a process for its CPU limit: SIGXCPU at the soft limit, or SIGKILL at the hard one
    (a program that ignores SIGXCPU: Go's runtime does) with that CPU spent, unless its slot's OOM kill sent it."""
    return sig == signal.SIGXCPU or (sig == signal.SIGKILL and cpu >= limits["cpu_s"] and not slot_killed)


def result_of(child, status, usage, elapsed, limits):
    cpu = usage.ru_utime + usage.ru_stime
    # Its memory cgroup's OOM kill: what a shell would print as "Killed", said with the reason.
    slot_killed = child.slot is not None and child.slot.oom_killed()
    if slot_killed:
        child.chunks["stderr"].append(f"Killed: over the memory limit ({limits['memory_mb']} MB)\n".encode())
    result = {
        "index": child.index,
        "wall_s": round(elapsed, 4),
        "cpu_s": round(cpu, 4),
        "max_rss_kb": usage.ru_maxrss,
        "cpu_wait_s": round(child.waited_seen / 1e9, 4),  # runnable, waiting for a CPU: what a starved run does
        "stdout": b"".join(child.chunks["stdout"])[: limits["output_bytes"]].decode("utf-8", "replace"),
        "stderr": b"".join(child.chunks["stderr"])[-STDERR_TAIL:].decode("utf-8", "replace"),
    }
    # A shell (`sh -c "./main.test && ..."`) reports a child's death by signal N as its own exit 128+N.
    shell_signal = os.WEXITSTATUS(status) - 128 if os.WIFEXITED(status) else 0
    if child.output_exceeded:
        result["status"] = "output_limit"
    elif child.timed_out or (shell_signal > 0 and cpu_exhausted(shell_signal, cpu, limits, slot_killed)):
        result["status"] = "timeout"
    elif os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        result["status"] = "timeout" if cpu_exhausted(sig, cpu, limits, slot_killed) else "signaled"
        result["signal"] = sig
        # An abort at the address-space bound is a failed allocation: several threads failing at once can abort
        # before any prints what failed ("terminate called recursively"), so the peak says it. (A stack overflow at
        # the bound is SIGSEGV: a runtime error.)
        bound_kb = limits["memory_mb"] * 1024
        at_bound = usage.ru_maxrss >= MEMORY_EXHAUSTED_SHARE * bound_kb
        result["memory_exhausted"] = slot_killed or (sig == signal.SIGABRT and at_bound)
    else:
        result["status"] = "exited"
        result["exit_code"] = os.WEXITSTATUS(status)
        result["memory_exhausted"] = slot_killed  # one of its processes was: a program that still ended well passes
    return result


def compile_once(job, root):
    """The compile step, in a child under the compile limits (small Python sources: in the runner, compiles_inline):
    its result, and Python's code objects."""
    code_path = os.path.join(root, "main.code")
    test_sources = [test.pop("python_code", None) for test in job["tests"]]  # not kept in the runner either
    if job["python_main"] and not job["compile"] and compiles_inline(job["python_main"], test_sources):
        return compile_in_runner(job["python_main"], test_sources, job["compile_limits"])
    spec = {
        "index": -1,
        "argv": job["compile"],
        "stdin_path": None,
        "address_space": job["compile_address_space"],
        "python_codes": None,
        "python_compile": (job["python_main"], code_path, test_sources) if job["python_main"] else None,
    }
    compiled = []
    run_children([spec], 1, job["compile_limits"], compiled.append)
    ok = compiled[0]["status"] == "exited" and compiled[0]["exit_code"] == 0
    return compiled[0], load_python(code_path) if ok and job["python_main"] else None


def compiles_inline(source_path, test_sources):
    """Whether Python sources are small enough to compile in the runner, without a child of their own."""
    size = os.stat(source_path).st_size + sum(len(source) for source in test_sources if source)
    return size <= INLINE_COMPILE_BYTES


def write_inputs(root, tests):
    """Each test's stdin as a file (popped from the job, as the program is); their paths."""
    paths = []
    for index, test in enumerate(tests):
        paths.append(os.path.join(root, "in", str(index)))
        with open(paths[-1], "w", encoding="utf-8") as handle:
            handle.write(test.pop("stdin", ""))
    return paths


def write_files(root, files):
    """The program's files: text, or (mode, bytes) for what a cached compile wrote (sandbox/compile_cache.py)."""
    for name, content in files.items():
        path = os.path.join(root, "src", name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        if isinstance(content, str):
            with open(path, "w", encoding="utf-8") as handle:
                handle.write(content)
        else:
            with open(path, "wb") as handle:
                handle.write(content[1])
            os.chmod(path, content[0])


def local_path(root, path):
    """An absolute sandbox path (sandbox/files.py checked it) where this runner sees it: the same in the sandbox;
    under the run's temporary directory without isolation."""
    return path if root == "/sandbox" else os.path.join(root, os.path.relpath(path, "/sandbox"))


def write_data(root, files):
    """The files the run was given (SandboxFusion's `files`), by absolute sandbox path."""
    for path, content in files.items():
        path = local_path(root, path)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as handle:
            handle.write(content)


def fetch_files(root, paths, limit):
    """The plain files at `paths` after the run, base64, together at most `limit` bytes (a file past that is left
    out, as one missing is). Opened without blocking: a leftover process may have put a FIFO there."""
    fetched, total = {}, 0
    for path in paths:
        try:
            fd = os.open(local_path(root, path), os.O_RDONLY | os.O_NONBLOCK)
        except OSError:
            continue
        try:
            if (os.fstat(fd).st_mode & 0o170000) != 0o100000:  # S_IFREG
                continue
            budget, chunks, size = limit - total, [], 0
            while size <= budget and (chunk := os.read(fd, budget + 1 - size)):
                chunks.append(chunk)
                size += len(chunk)
            if size <= budget:
                total += size
                fetched[path] = b2a_base64(b"".join(chunks), newline=False).decode("ascii")
        except OSError:
            continue
        finally:
            os.close(fd)
    return fetched


def emit_fetched(job, root, emit):
    if job["fetch"]:
        emit({"fetched": fetch_files(root, job["fetch"], job["fetch_bytes"])})


def pack_outputs(src, sources, limit):
    """What compiling wrote beside the sources (a binary, class files), for the host's compile cache: relative
    path -> [mode, base64]. None when it holds more than `limit` bytes, anything but plain files, or a file the
    runner cannot read (the compile is then simply not kept)."""
    try:
        return pack_files(src, sources, limit)
    except OSError:
        return None


def pack_files(src, sources, limit):
    packed, total = {}, 0
    for directory, _, names in os.walk(src):
        for name in names:
            path = os.path.join(directory, name)
            relative = os.path.relpath(path, src)
            if relative in sources:
                continue
            info = os.lstat(path)
            total += info.st_size
            if (info.st_mode & 0o170000) != 0o100000 or total > limit:  # S_IFREG
                return None
            with open(path, "rb") as handle:
                packed[relative] = [info.st_mode & 0o777, b2a_base64(handle.read(), newline=False).decode("ascii")]
    return packed


def read_job(fd):
    """A length line, then the marshalled job. Unbuffered: the credits that follow on the same
    pipe must stay in it for run_children."""
    header = b""
    while not header.endswith(b"\n"):
        byte = os.read(fd, 1)
        if not byte:
            raise EOFError("the host closed the pipe before sending a job")
        header += byte
    job = read_exactly(fd, int(header))
    if job is None:
        raise EOFError("the host closed the pipe in the middle of the job")
    return marshal.loads(job)


def to_json(value):
    """JSON for what the runner sends: dicts, lists, strings, numbers, booleans and None."""
    if isinstance(value, str):
        return encode_basestring_ascii(value)
    if isinstance(value, dict):
        return "{" + ",".join(f"{encode_basestring_ascii(k)}:{to_json(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ",".join(map(to_json, value)) + "]"
    if value is None or isinstance(value, bool):
        return {None: "null", True: "true", False: "false"}[value]
    return repr(value)  # int, or a finite float (times)


def imported_names(code):
    """The names a code object and the functions and classes in it use: module names of imports among them."""
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, type(code)):
            names |= imported_names(const)
    return names


def warm_modules(python, calls):
    """Import the modules the solution and the tests' code name (WARM_MODULES) once, before the tests fork; json for
    function-call tests (`calls`: run_call writes their results with it)."""
    codes = [code for code in (python[0], *python[1]) if isinstance(code, type(python[0]))]
    named = set().union(*map(imported_names, codes)) | ({"json"} if calls else set())
    sys.path.extend(path for path in RUNTIME_PATHS if os.path.isdir(path))
    for name in WARM_MODULES:
        if name in named:
            try:  # noqa: SIM105 (contextlib would be one more import in every run's start)
                __import__(name)
            except ImportError:  # a library this host lacks: the program's own import says so
                pass


def test_specs(job, stdin_paths, python):
    """What run_children runs for each test: its input, and for Python the solution's code and the test's own."""
    specs = []
    for index, stdin_path in enumerate(stdin_paths):
        spec = {"index": index, "argv": job["run"], "stdin_path": stdin_path, "address_space": job["address_space"]}
        spec["python_codes"] = None
        spec["tests_apart"] = job["tests"][index]["tests_apart"]
        spec["apart"] = job["apart"]
        if python is not None:
            solution, test_code = python[0], python[1][index]
            if isinstance(test_code, str):  # its code does not compile: the test fails saying so
                spec["error"] = test_code
            else:
                spec["python_codes"] = [solution, *([test_code] if test_code is not None else [])]
                spec["python_call"] = job["tests"][index]["python_call"]
        specs.append(spec)
    return specs


def memory_slots(fds):
    """The tests' memory cgroups the host opened (sandbox/executor.py): (cgroup.procs, OOM events) descriptor pairs."""
    if not fds:
        return []
    failures = os.pipe()
    os.set_blocking(failures[0], False)
    return [MemorySlot(procs_fd, events_fd, failures) for procs_fd, events_fd in fds]


def lower_session_priority():
    """bubblewrap gives the run a session of its own, and with autogroup scheduling (most desktop and
    many server kernels) each session shares out the CPU as one group, whatever its processes' nice
    values: give the group the niceness the run was started with, so runs yield to grading work."""
    try:
        with open("/proc/self/autogroup", "w") as handle:
            handle.write(str(os.nice(0)))
    except OSError:  # no autogroup in this kernel
        pass


def main():
    started = time.monotonic()  # the host's clock too (one CLOCK_MONOTONIC): its phase table (Execution.phases)
    set_dumpable(False)
    job = read_job(0)
    os.nice(job["niceness"])  # before any test starts (sandbox/cpu_priority.py); children inherit it
    lower_session_priority()
    if job["processes"]:
        # bwrap+rlimits (no pids cgroup): the kernel counts RLIMIT_NPROC per user namespace, and this one
        # holds only the run, so this bounds the run's processes and threads together.
        resource.setrlimit(resource.RLIMIT_NPROC, (job["processes"], job["processes"]))
    # As PID 1 the runner gets no signal it has no handler for; Python's SIGINT handler
    # would let a test abort the whole run with KeyboardInterrupt.
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    out = sys.stdout

    def emit(message):
        out.write(to_json(message) + "\n")
        out.flush()

    global sandbox_root
    # /sandbox inside bubblewrap; a temporary directory without isolation
    root = sandbox_root = os.path.realpath(sys.argv[1])
    os.makedirs(os.path.join(root, "src"), exist_ok=True)
    os.makedirs(os.path.join(root, "in"), exist_ok=True)
    sources = set(job["files"])
    try:
        # Popped: what the runner holds, every test inherits (and RLIMIT_AS counts).
        write_files(root, job.pop("files"))
    except OSError as exc:
        stderr = f"the program does not fit the sandbox's disk (limits.disk_mb): {exc.strerror}"
        emit({"compile": {"status": "exited", "exit_code": 1, "stderr": stderr}})
        return
    try:
        write_data(root, job.pop("data_files"))
    except OSError as exc:  # the request's files, not the program: a sandbox error, said in one line
        sys.stderr.write(f"the run's files do not fit the sandbox's disk (limits.disk_mb): {exc.strerror}\n")
        sys.exit(1)
    os.chdir(os.path.join(root, "src"))
    python = None  # (the solution's code, each test's code or error) for Python
    if job["python_main"] or job["compile"]:
        compiled, python = compile_once(job, root)
        succeeded = compiled["status"] == "exited" and compiled["exit_code"] == 0
        if succeeded and job["pack_bytes"]:
            compiled["artifacts"] = pack_outputs(os.path.join(root, "src"), sources, job["pack_bytes"])
        emit({"compile": compiled, "started": started})
        if not succeeded:
            emit_fetched(job, root, emit)
            return
    if python is not None:
        warm_modules(python, any(test["python_call"] for test in job["tests"]))
        global test_output_streams
        test_output_streams = output_streams()
    try:
        stdin_paths = write_inputs(root, job["tests"])
    except OSError as exc:  # the tests' data, not the program: a sandbox error, said in one line
        sys.stderr.write(f"the tests' inputs do not fit the sandbox's disk (limits.disk_mb): {exc.strerror}\n")
        sys.exit(1)
    specs = test_specs(job, stdin_paths, python)
    python = None  # the tests' code is in the specs alone, which a program's process empties (forget_tests)
    running_specs[:] = specs
    # What the runner holds now is what every test inherits: kept out of the collector, so a test's collections
    # neither walk nor copy (copy-on-write) the runner's objects.
    gc.freeze()
    run_children(specs, job["parallel"], job["limits"], emit, credits_fd=0, slots=memory_slots(job["memory_slots"]))
    emit_fetched(job, root, emit)


if __name__ == "__main__":
    main()
    sys.stdout.flush()
    os._exit(0)  # the run is over: no interpreter teardown (its PID namespace goes with it)
