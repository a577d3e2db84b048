"""The system-call filter every test and compile step runs under (sandbox/runner.py confine), through the real sandbox.

A program in each language that can make a raw system call tries the calls the filter refuses (issue 38): io_uring
(the kernel's most exploited interface: ENOSYS, as on a kernel without it, so runtimes fall back), keyrings (a store
that outlives a run: one submission could leave a key for another), userfaultfd, perf events, bpf, a new user
namespace (unshare, or clone with CLONE_NEWUSER), setns and ptrace, and prints each call's errno. Without the filter
this host answers most of them otherwise (a key is added, io_uring and ptrace work, unshare says ENOSPC under
bubblewrap's --disable-userns), so each line proves the filter, not the host's defaults.

What the filter must not break: threads, subprocesses (posix_spawn tries clone3 first: ENOSYS, and glibc falls back
on clone) and every language's own suite (tests/test_sandbox_languages.py and the rest run under it too).
The filter's numbers are checked against the kernel's own headers for both machines it knows.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from sandbox import runner
from sandbox.executor import Limits
from sandbox.judge import LocalJudge, StdioTest, Verdict
from sandbox.judge import TestSuite as Suite

EPERM, ENOSYS = 1, 38
CLONE_NEWUSER, SIGCHLD = 0x10000000, 17
BUF = object()  # a zeroed 256-byte buffer
# name -> its arguments: each made so that the host without the filter would answer otherwise than EPERM.
CALLS: dict[str, tuple] = {
    "io_uring_setup": (1, BUF),
    "keyctl": (1, 0),  # KEYCTL_JOIN_SESSION_KEYRING: a fresh keyring
    "add_key": ("user", "k", "v", 1, -3),  # into the session keyring
    "request_key": ("user", "k", 0, 0),
    "userfaultfd": (1,),  # UFFD_USER_MODE_ONLY: open to unprivileged users since Linux 5.11
    "perf_event_open": (BUF, 0, -1, -1, 0),
    "bpf": (0, BUF, 64),
    "unshare": (CLONE_NEWUSER,),
    "setns": (0, 0),
    "ptrace": (0, 0, 0, 0),  # PTRACE_TRACEME
}
# A clone that would make a user namespace: only where a child could end at once (a raw clone forks the runtime).
CLONE = ("clone", (CLONE_NEWUSER | SIGCHLD, 0, 0, 0, 0))
MACHINE = os.uname().machine


def number(name: str) -> int:
    return (runner.DENIED_CALLS[MACHINE] | runner.SECCOMP_MACHINES[MACHINE])[name]


def expected_lines(with_clone: bool) -> str:
    names = [*CALLS, *(["clone"] if with_clone else [])]
    return "\n".join(f"{name} {ENOSYS if name in runner.ABSENT_CALLS else EPERM}" for name in names)


def calls(with_clone: bool) -> list[tuple[str, int, tuple]]:
    rows = [(name, number(name), args) for name, args in CALLS.items()]
    return rows + ([(CLONE[0], number("clone"), CLONE[1])] if with_clone else [])


def python(with_clone: bool) -> str:
    def arg(value: object) -> str:
        return "buf" if value is BUF else repr(value.encode()) if isinstance(value, str) else f"c_long({value})"

    lines = [f"probe({name!r}, {nr}, {', '.join(map(arg, args))})" for name, nr, args in calls(with_clone)]
    return (
        "import ctypes, os\nfrom ctypes import c_long\nlibc = ctypes.CDLL(None, use_errno=True)\n"
        "libc.syscall.restype = c_long\nbuf = ctypes.create_string_buffer(256)\n"
        "def probe(name, nr, *args):\n    ctypes.set_errno(0)\n    result = libc.syscall(c_long(nr), *args)\n"
        "    if result == 0 and name == 'clone':\n        os._exit(0)  # the child, had the clone worked\n"
        "    print(name, ctypes.get_errno() if result == -1 else 0, flush=True)\n" + "\n".join(lines) + "\n"
    )


def c_like(with_clone: bool, header: str) -> str:
    def arg(value: object) -> str:
        return "buf" if value is BUF else f'"{value}"' if isinstance(value, str) else f"{value}L"

    lines = [
        f'    probe("{name}", syscall({nr}L, {", ".join(map(arg, args))}));' for name, nr, args in calls(with_clone)
    ]
    return (
        f"{header}\n#include <errno.h>\n#include <unistd.h>\n#include <sys/syscall.h>\nstatic char buf[256];\n"
        "static void probe(const char *name, long result) {\n    if (result == 0 && name[0] == 'c') _exit(0);\n"
        '    printf("%s %d\\n", name, result == -1 ? errno : 0);\n    fflush(stdout);\n}\n'
        "int main(void) {\n" + "\n".join(lines) + "\n    return 0;\n}\n"
    )


def go(_: bool) -> str:
    def arg(value: object) -> str:
        if value is BUF:
            return "uintptr(unsafe.Pointer(&buf[0]))"
        if isinstance(value, str):
            return f'uintptr(unsafe.Pointer(&[]byte("{value}\\x00")[0]))'
        return f"uintptr({value})" if value >= 0 else f"^uintptr({-value - 1})"

    def line(name: str, nr: int, args: tuple) -> str:
        padded = [*map(arg, args), *["0"] * (6 - len(args))]
        return f'\tprobe("{name}", {nr}, {", ".join(padded)})'

    return (
        'package main\n\nimport (\n\t"fmt"\n\t"syscall"\n\t"unsafe"\n)\n\nvar buf [256]byte\n\n'
        "func probe(name string, nr, a, b, c, d, e, f uintptr) {\n"
        "\t_, _, errno := syscall.Syscall6(nr, a, b, c, d, e, f)\n\tfmt.Println(name, int(errno))\n}\n\n"
        "func main() {\n" + "\n".join(line(*call) for call in calls(False)) + "\n}\n"
    )


def rust(_: bool) -> str:
    def arg(value: object) -> str:
        if value is BUF:
            return "buf.as_mut_ptr()"
        return f'"{value}\\0".as_ptr()' if isinstance(value, str) else f"{value}i64"

    lines = [f'        probe("{name}", syscall({nr}, {", ".join(map(arg, args))}));' for name, nr, args in calls(False)]
    return (
        'extern "C" {\n    fn syscall(number: i64, ...) -> i64;\n}\n\n'
        "fn probe(name: &str, result: i64) {\n"
        "    let errno = if result == -1 { std::io::Error::last_os_error().raw_os_error().unwrap_or(0) } else { 0 };\n"
        '    println!("{} {}", name, errno);\n}\n\n'
        "fn main() {\n    let mut buf = [0u8; 256];\n    unsafe {\n" + "\n".join(lines) + "\n    }\n}\n"
    )


def perl(_: bool) -> str:
    def arg(value: object) -> str:  # syscall writes through a string: each is a variable, never a literal
        return "$buf" if value is BUF else f"$string_{value}" if isinstance(value, str) else str(value)

    strings = sorted({value for _, _, args in calls(False) for value in args if isinstance(value, str)})
    lines = [f'probe("{name}", syscall({nr}, {", ".join(map(arg, args))}));' for name, nr, args in calls(False)]
    return (
        'my $buf = "\\0" x 256;\n$| = 1;\n'
        + "".join(f'my $string_{value} = "{value}";\n' for value in strings)
        + 'sub probe { my ($name, $result) = @_; print "$name ", ($result == -1 ? $! + 0 : 0), "\\n"; }\n'
        + "\n".join(lines)
        + "\n"
    )


# language -> (its probe program, whether it tries the clone too)
PROBES: dict[str, tuple[Callable[[bool], str], bool]] = {
    "python": (python, True),
    "c": (lambda clone: c_like(clone, "#include <stdio.h>"), True),
    "cpp": (lambda clone: c_like(clone, "#include <cstdio>"), True),
    "go": (go, False),
    "rust": (rust, False),
    "perl": (perl, False),
}
LIMITS = Limits(time_s=5, wall_s=10, compile_s=60)


@pytest.fixture(scope="module")
def judge() -> LocalJudge:
    return LocalJudge()


@pytest.mark.parametrize("language", list(PROBES))
def test_the_calls_the_filter_refuses_fail_in_every_language_that_can_make_them(
    judge: LocalJudge, language: str
) -> None:
    program, with_clone = PROBES[language]
    suite = Suite("stdio", (StdioTest("", expected_lines(with_clone)),))
    report = judge.judge(language, program(with_clone), suite, LIMITS)
    assert report.compile_error is None and report.sandbox_error is None, report.to_dict()
    assert [test.verdict for test in report.tests] == [Verdict.ACCEPTED], report.to_dict()


SPAWNS = """
import subprocess, threading
answers = []
thread = threading.Thread(target=lambda: answers.append(subprocess.run(["/bin/echo", "spawned"],
                          capture_output=True, text=True).stdout.strip()))
thread.start()
thread.join()
print(answers[0], subprocess.run("echo forked | tr a-z A-Z", shell=True, capture_output=True, text=True).stdout)
"""


def test_threads_and_subprocesses_still_run_under_the_filter(judge: LocalJudge) -> None:
    report = judge.judge("python", SPAWNS, Suite("stdio", (StdioTest("", "spawned FORKED"),)), LIMITS)
    assert [test.verdict for test in report.tests] == [Verdict.ACCEPTED], report.to_dict()


HEADERS = {
    "x86_64": Path("/usr/include/x86_64-linux-gnu/asm/unistd_64.h"),
    "aarch64": Path("/usr/include/asm-generic/unistd.h"),  # arm64's numbers are the generic table's
}


@pytest.mark.parametrize("machine", list(HEADERS))
def test_the_filters_numbers_are_the_kernels(machine: str) -> None:
    defined = {
        name: int(nr) for name, nr in re.findall(r"#define __NR3?2?6?4?_(\w+)\s+(\d+)", HEADERS[machine].read_text())
    }
    known = runner.DENIED_CALLS[machine] | {
        name: nr for name, nr in runner.SECCOMP_MACHINES[machine].items() if name != "arch" and nr >= 0
    }
    assert {name: defined.get(name) for name in known} == known
    assert set(runner.ABSENT_CALLS) <= set(runner.DENIED_CALLS[machine])
