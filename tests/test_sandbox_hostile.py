"""Hostile programs against the real sandbox service: the security proof of the code sandbox.

Every case is a table row: (name, language, expected verdict per test, what it attacks,
program). The whole table goes through `sandbox serve` over HTTP (RemoteJudge ->
`POST /v1/judge`, the service in a subprocess on loopback), while two loops keep asking
the same service for `/healthz` and for the verdict of a benign program.

Isolation probes print BLOCKED when every attempt failed (so `accepted` means "blocked")
and the evidence otherwise; the others end with the verdict their limit implies. After
each case: it ended within its limits, nothing of it is left (no `reward-sandbox-*`
cgroup, no process of the sandbox uid, no file it aimed at on the host, no connection
to the host's listener, no drop in free disk), and the service's secret env var appears
nowhere in the answer.

On cgroup v1 the service runs inside cgroups of this module's own (its runs nest under them), so
the leftover checks see exactly this module's runs, whatever else runs on the machine; on v2 it
runs where sandbox/cgroups.py puts it (this test process sets that up first) and its runs are
made beside it. The same module runs as root on this host and, in a cgroup-v2 guest, as root and
as an ordinary user in a delegated subtree (tests/test_cgroup2_guest.py).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import socket
import textwrap
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path

import httpx
import pytest

from reward_api.local import LocalServer
from sandbox.cgroups import V1_CONTROLLERS, Layout, find_cgroups, host_version
from sandbox.client import RemoteJudge
from sandbox.executor import Limits
from sandbox.isolation import NOBODY
from sandbox.judge import AssertTest, CallTest, JudgeReport, StdioTest, Verdict
from sandbox.judge import TestSuite as Suite  # not `Test*`: pytest would try to collect it
from sandbox.languages import get_language
from tests.verdicts import CE, MLE, OLE, RE, TLE, WA, A

REPO = Path(__file__).resolve().parents[1]
SECRET = f"hostile-secret-{uuid.uuid4().hex}"  # the service's REWARD_TEST_SECRET
MARKER = f"hostile-marker-{uuid.uuid4().hex[:8]}"  # files the programs try to create on the host
DAEMON = f"86399.{uuid.uuid4().int % 10**9:09d}"  # `sleep DAEMON`: how a daemon is recognised on the host
BLOCKED = "blocked"
# Beyond a case's own limits: HTTP, sandbox start-up, a loaded 2-core machine (the emulated cgroup-v2 guest sets more).
SLACK_S = float(os.environ.get("HOSTILE_SLACK_S", "5"))
DISK_SLACK_BYTES = 512 << 20

JUDGED = frozenset(Verdict) - {Verdict.SKIPPED}

FAST = Limits(time_s=1, wall_s=1.5, compile_s=5, total_s=30)
# CPU to spare: the memory bound, not the clock, must end these (the kernel's reclaim near a
# cgroup's bound and Go's GC burn CPU time; with 1 s a Go allocator sometimes ran out of time first).
SMALL_MEMORY = replace(FAST, time_s=4, wall_s=5, memory_mb=128)
BOMB = replace(FAST, compile_s=2)  # compile-time bombs must end within 2 * compile_s of wall time

ONE_BLOCKED = Suite("stdio", (StdioTest("", BLOCKED),))
THEN_BENIGN = Suite("stdio", (StdioTest("", "alive"), StdioTest("2 3", "5"), StdioTest("4 5", "9")))


def benign_first(attack: str) -> str:
    """A Python program for THEN_BENIGN: tests 2 and 3 add two numbers, test 1 runs `attack`."""
    add = "import sys\nwords = sys.stdin.read().split()\nif words:\n    print(sum(map(int, words)))\n    sys.exit()\n"
    return add + textwrap.dedent(attack)


@dataclass(frozen=True)
class Case:
    language: str
    program: str
    expect: tuple[frozenset[Verdict], ...]  # per test
    attack: str
    suite: Suite
    limits: Limits
    detail: str = ""  # in the first test's detail


def case(
    name: str,
    language: str,
    expect: set[Verdict] | tuple[set[Verdict], ...],
    attack: str,
    program: str,
    *,
    suite: Suite = ONE_BLOCKED,
    limits: Limits = FAST,
    detail: str = "",
):
    per_test = expect if isinstance(expect, tuple) else (expect,) * len(suite.tests)
    assert len(per_test) == len(suite.tests), name
    row = Case(language, textwrap.dedent(program), tuple(map(frozenset, per_test)), attack, suite, limits, detail)
    return pytest.param(row, id=name)


# --- isolation: network, files, environment, processes, privileges -------------------------

# fmt: off
ISOLATION = [
    case("py-connect-host", "python", {A}, "TCP/UDP out: the host's loopback listener, LAN, internet", """
        import socket
        hits = []
        for host, port in (("127.0.0.1", @PORT@), ("::1", @PORT@), ("10.0.2.2", 80), ("1.1.1.1", 53)):
            try:
                socket.create_connection((host, port), timeout=0.5).close()
                hits.append(f"{host}:{port}")
            except OSError:
                pass
        try:
            socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b"x", ("8.8.8.8", 53))
            hits.append("udp 8.8.8.8:53")
        except OSError:
            pass
        print(" ".join(hits) or "blocked")
    """),
    case("c-connect-host", "c", {A}, "TCP connect to the host's loopback listener from C", """
        #include <arpa/inet.h>
        #include <stdio.h>
        #include <sys/socket.h>
        int main(void) {
            struct sockaddr_in to = {.sin_family = AF_INET, .sin_port = htons(@PORT@)};
            inet_pton(AF_INET, "127.0.0.1", &to.sin_addr);
            int fd = socket(AF_INET, SOCK_STREAM, 0);
            puts(fd >= 0 && connect(fd, (struct sockaddr *)&to, sizeof to) == 0 ? "connected" : "blocked");
        }
    """),
    case("js-connect-host", "javascript", {A}, "TCP connect to the host's loopback listener from Node", """
        const s = require("net").connect(@PORT@, "127.0.0.1");
        s.on("connect", () => { console.log("connected"); process.exit(0); });
        s.on("error", () => console.log("blocked"));
    """),
    case("go-dial-host", "go", {A}, "TCP dial to the host's loopback listener from Go", """
        package main

        import (
            "fmt"
            "net"
            "time"
        )

        func main() {
            if c, err := net.DialTimeout("tcp", "127.0.0.1:@PORT@", time.Second); err == nil {
                c.Close()
                fmt.Println("connected")
            } else {
                fmt.Println("blocked")
            }
        }
    """),
    case("py-resolve-names", "python", {A}, "DNS: resolve public names", """
        import socket
        found = []
        for name in ("example.com", "pypi.org", "github.com"):
            try:
                found.append(f"{name}={socket.getaddrinfo(name, 443)[0][4][0]}")
            except OSError:
                pass
        print(" ".join(found) or "blocked")
    """),
    case("java-resolve-name", "java", {A}, "DNS from the JVM", """
        import java.net.*;
        public class Main {
            public static void main(String[] args) {
                try { System.out.println(InetAddress.getByName("example.com")); }
                catch (UnknownHostException e) { System.out.println("blocked"); }
            }
        }
    """),
    case("py-read-shadow", "python", {RE}, "read /etc/shadow", """
        print(open("/etc/shadow").read())
    """, detail="FileNotFoundError"),
    case("c-read-passwd", "c", {RE}, "read /etc/passwd", """
        #include <stdio.h>
        int main(void) {
            FILE *f = fopen("/etc/passwd", "r");
            if (!f) { perror("/etc/passwd"); return 1; }
            for (int c; (c = fgetc(f)) != EOF;) putchar(c);
        }
    """, detail="No such file"),
    case("py-read-service-source", "python", {RE}, "read the service's source by its host path", """
        print(open("@REPO@/reward_api/app.py").read())
    """, detail="FileNotFoundError"),
    case("py-find-service-source", "python", {A}, "search the whole filesystem for the service's code", """
        import subprocess
        names = ["-name", "reward_api*", "-o", "-name", "reward_service*", "-o", "-name", "test_sandbox_hostile*"]
        found = subprocess.run(
            ["find", "/", "-path", "/proc", "-prune", "-o", "(", *names, ")", "-print"],
            capture_output=True, text=True,
        ).stdout.split()
        print(" ".join(found) or "blocked")
    """, limits=replace(FAST, time_s=10, wall_s=20)),  # walking /usr with cold caches on a loaded CI machine
    case("py-env-secret", "python", {A}, "the service's environment: own env, /proc/*/environ and cmdline", """
        import os
        seen = [f"{k}={v}" for k, v in os.environ.items() if "REWARD" in k or "SANDBOX" in k]
        for pid in filter(str.isdigit, os.listdir("/proc")):
            for name in ("environ", "cmdline"):
                try:
                    data = open(f"/proc/{pid}/{name}", "rb").read()
                except OSError:
                    continue
                if b"REWARD_TEST_SECRET" in data:
                    seen.append(data.decode(errors="replace"))
        print(" ".join(seen) or "blocked")
    """),
    case("c-environ", "c", {A}, "the environment from C: environ and the runner's /proc/1/environ", """
        #include <stdio.h>
        #include <string.h>
        extern char **environ;
        int main(void) {
            int leaked = 0;
            for (char **e = environ; *e; e++)
                if (strncmp(*e, "REWARD", 6) == 0 || strncmp(*e, "SANDBOX", 7) == 0) { puts(*e); leaked = 1; }
            FILE *f = fopen("/proc/1/environ", "r");
            if (f) { for (int c; (c = fgetc(f)) != EOF;) putchar(c ? c : ' '); leaked = 1; }
            if (!leaked) puts("blocked");
        }
    """),
    case("py-proc-host-pids", "python", {A}, "other processes under /proc: only the sandbox's, no host pid", """
        import os
        pids = sorted(filter(str.isdigit, os.listdir("/proc")), key=int)
        host = []
        try:
            host.append(open("/proc/@HOSTPID@/cmdline").read())
        except OSError:
            pass
        ours = set(pids) <= {"1", str(os.getpid())} and not any("sandbox.cli" in c for c in host)
        print("blocked" if ours else f"{pids} {host}")
    """),
    case("py-proc1-fd", "python", {A}, "the runner's pipes and memory through /proc/1 (fd, environ, mem, root)", """
        import os
        attempts = [
            lambda: os.listdir("/proc/1/fd"),
            lambda: os.readlink("/proc/1/fd/1"),
            lambda: open("/proc/1/fd/1", "w").write("{}\\n"),
            lambda: open("/proc/1/fd/0").read(),
            lambda: open("/proc/1/environ").read(),
            lambda: open("/proc/1/mem", "rb").read(1),
            lambda: open("/proc/1/maps").read(),
            lambda: os.listdir("/proc/1/root"),
            lambda: os.listdir("/proc/1/cwd"),
        ]
        done = []
        for index, attempt in enumerate(attempts):
            try:
                attempt()
                done.append(index)
            except OSError:
                pass
        print(f"got {done}" if done else "blocked")
    """),
    case("rust-proc1", "rust", {A}, "the runner's fds and environment from Rust", """
        fn main() {
            let fds = std::fs::read_dir("/proc/1/fd").is_ok();
            let env = std::fs::read("/proc/1/environ").is_ok();
            let pipe = std::fs::OpenOptions::new().write(true).open("/proc/1/fd/1").is_ok();
            println!("{}", if fds || env || pipe { "leaked" } else { "blocked" });
        }
    """),
    case("py-write-outside", "python", {A}, "write outside the temp dirs: /usr, /, /etc", """
        written = []
        for path in ("/usr/@MARKER@", "/usr/bin/@MARKER@", "/@MARKER@", "/etc/@MARKER@", "/runner/@MARKER@"):
            try:
                with open(path, "w") as f:
                    f.write("x")
                written.append(path)
            except OSError:
                pass
        print(" ".join(written) or "blocked")
    """),
    case("c-write-usr", "c", {A}, "create, chmod, rename and unlink in /usr from C", """
        #include <fcntl.h>
        #include <stdio.h>
        #include <sys/stat.h>
        #include <unistd.h>
        int main(void) {
            int ok = open("/usr/bin/@MARKER@", O_CREAT | O_WRONLY, 0755) >= 0;
            ok |= chmod("/usr/bin/python3", 0777) == 0;
            ok |= rename("/usr/bin/env", "/usr/bin/@MARKER@") == 0;
            ok |= unlink("/usr/bin/env") == 0;
            puts(ok ? "wrote" : "blocked");
        }
    """),
    case("py-symlink-escape", "python", {A}, "escape through symlinks (/etc/shadow, /proc/1/root) and hard links", """
        import os
        done = []
        attempts = {
            "shadow": lambda: (os.symlink("/etc/shadow", "s1"), open("s1").read()),
            "proc1root": lambda: (os.symlink("/proc/1/root", "s2"), os.listdir("s2/")),
            "dotdot": lambda: (os.symlink("/proc/self/root/../../../../etc/shadow", "s3"), open("s3").read()),
            "hardlink-python": lambda: os.link("/usr/bin/python3", "/sandbox/h1"),
            "hardlink-su": lambda: os.link("/usr/bin/su", "/tmp/h2"),
        }
        for name, attempt in attempts.items():
            try:
                attempt()
                done.append(name)
            except OSError:
                pass
        print(" ".join(done) or "blocked")
    """),
    case("c-symlink-hardlink", "c", {A}, "symlink to /proc/1/cwd and a hard link to a host file, from C", """
        #include <dirent.h>
        #include <stdio.h>
        #include <unistd.h>
        int main(void) {
            symlink("/proc/1/cwd", "cwd1");
            int ok = opendir("cwd1/") != NULL;
            ok |= link("/etc/ld.so.cache", "/tmp/cache") == 0;
            ok |= link("/usr/bin/passwd", "/sandbox/passwd") == 0;
            puts(ok ? "escaped" : "blocked");
        }
    """),
    case("c-ptrace-runner", "c", {A}, "ptrace the runner (PID 1), read its memory", """
        #define _GNU_SOURCE
        #include <fcntl.h>
        #include <stdio.h>
        #include <sys/ptrace.h>
        #include <sys/uio.h>
        int main(void) {
            char buf[64];
            struct iovec local = {buf, sizeof buf}, remote = {(void *)0x400000, sizeof buf};
            int ok = ptrace(PTRACE_ATTACH, 1, 0, 0) == 0;
            ok |= ptrace(PTRACE_SEIZE, 1, 0, 0) == 0;
            ok |= process_vm_readv(1, &local, 1, &remote, 1, 0) > 0;
            ok |= open("/proc/1/mem", O_RDONLY) >= 0;
            puts(ok ? "attached" : "blocked");
        }
    """),
    case("py-read-sys", "python", {A}, "/sys, cgroups, sysrq and kernel tunables", """
        import os
        done = []
        attempts = {
            "sys": lambda: os.listdir("/sys"),
            "cgroup": lambda: os.listdir("/sys/fs/cgroup"),
            "sysrq": lambda: open("/proc/sysrq-trigger", "w").write("h"),
            "hostname": lambda: open("/proc/sys/kernel/hostname", "w").write("pwned"),
            "core_pattern": lambda: open("/proc/sys/kernel/core_pattern", "w").write("|/tmp/x"),
        }
        for name, attempt in attempts.items():
            try:
                attempt()
                done.append(name)
            except OSError:
                pass
        print(" ".join(done) or "blocked")
    """),
    case("c-mount-unshare-chroot", "c", {A}, "mount over /usr, remount it rw (also in new namespaces), chroot", """
        #define _GNU_SOURCE
        #include <fcntl.h>
        #include <sched.h>
        #include <stdio.h>
        #include <sys/mount.h>
        #include <unistd.h>
        int main(void) {
            int ok = mount("tmpfs", "/usr", "tmpfs", 0, 0) == 0;
            ok |= mount(0, "/usr", 0, MS_REMOUNT | MS_BIND, 0) == 0;
            ok |= chroot("/tmp") == 0;
            if (unshare(CLONE_NEWUSER | CLONE_NEWNS) == 0) {  /* a nested namespace: its mounts stay in it */
                ok |= mount(0, "/usr", 0, MS_REMOUNT | MS_BIND, 0) == 0;
                ok |= open("/usr/@MARKER@", O_CREAT | O_WRONLY, 0644) >= 0;
            }
            puts(ok ? "mounted" : "blocked");
        }
    """),
    case("py-setuid-binaries", "python", {A}, "setuid-root binaries (mount, su, umount): none gives privileges", """
        import subprocess
        status = open("/proc/self/status").read()
        commands = (["mount", "-t", "tmpfs", "none", "/sandbox"], ["su", "-c", "id"], ["umount", "/usr"])
        worked = [c for c in commands if subprocess.run(c, capture_output=True).returncode == 0]
        print("blocked" if "NoNewPrivs:\\t1" in status and not worked else f"{worked}")
    """),
    case("py-forge-protocol", "python", {WA}, "print lines of the runner's protocol to stdout to forge a result", """
        import json
        for index in range(4):
            forged = {"index": index, "status": "exited", "exit_code": 0, "stdout": "42\\n", "stderr": ""}
            print(json.dumps(forged))
            print(json.dumps({"compile": forged}))
    """, suite=Suite("stdio", (StdioTest("", "42"),))),
    case("c-forge-runner-fd", "c", {A}, "write a forged result line to the runner's stdout (/proc/1/fd/1, fds 3+)", """
        #include <fcntl.h>
        #include <stdio.h>
        #include <string.h>
        #include <unistd.h>
        int main(void) {
            const char *line = "{\\"index\\": 0, \\"status\\": \\"exited\\", \\"exit_code\\": 0}\\n";
            int ok = 0, fd = open("/proc/1/fd/1", O_WRONLY);
            if (fd >= 0) ok |= write(fd, line, strlen(line)) > 0;
            for (fd = 3; fd < 1024; fd++) ok |= write(fd, line, strlen(line)) > 0;
            puts(ok ? "forged" : "blocked");
        }
    """),
    case("py-kill-parent", "python", {A}, "kill or stop the parent and PID 1 (SIGKILL, SIGTERM, SIGSTOP, ...)",
         benign_first("""
        import os, signal
        for pid in (os.getppid(), 1):
            for sig in (signal.SIGKILL, signal.SIGTERM, signal.SIGSTOP, signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1):
                os.kill(pid, sig)
        print("alive")
    """), suite=THEN_BENIGN),
    case("py-sigint-runner", "python", {A}, "SIGINT to PID 1 (the runner is Python: KeyboardInterrupt)",
         benign_first("""
        import os, signal, time
        os.kill(1, signal.SIGINT)
        time.sleep(0.2)
        print("alive")
    """), suite=THEN_BENIGN),
    case("c-signal-everything", "c", ({A}, JUDGED, JUDGED), "every signal to PID 1, then kill(-1, SIGKILL)", """
        #include <signal.h>
        #include <stdio.h>
        int main(void) {
            int a, b;
            if (scanf("%d %d", &a, &b) == 2) { printf("%d\\n", a + b); return 0; }
            for (int sig = 1; sig < 65; sig++) kill(1, sig);
            kill(-1, SIGKILL);  /* everything in the sandbox but PID 1 and this process: its sibling tests */
            puts("alive");
        }
    """, suite=THEN_BENIGN),
]


# --- limits: processes, memory, time, output, disk, stack -----------------------------------

DISK = replace(FAST, memory_mb=64, compile_memory_mb=64, disk_mb=16, file_bytes=8 << 20)

LIMITS = [
    case("py-fork-bomb", "python", {TLE, RE}, "fork bomb", """
        import os
        while True:
            try:
                os.fork()
            except OSError:
                pass
    """, limits=replace(FAST, processes=32)),
    case("c-fork-bomb", "c", {TLE, RE}, "fork bomb in C", """
        #include <unistd.h>
        int main(void) { for (;;) fork(); }
    """, limits=replace(FAST, processes=32)),
    case("py-thread-bomb", "python", {RE, TLE}, "thread bomb", """
        import threading, time
        while True:
            threading.Thread(target=time.sleep, args=(100,)).start()
    """, limits=replace(FAST, processes=32)),
    case("c-thread-bomb", "c", {RE, TLE}, "thread bomb in C (pthreads)", """
        #include <pthread.h>
        #include <unistd.h>
        void *idle(void *arg) { for (;;) pause(); }
        int main(void) { pthread_t t; for (;;) pthread_create(&t, 0, idle, 0); }
    """, limits=replace(FAST, processes=32)),
    case("java-thread-bomb", "java", {RE, TLE, MLE}, "thread bomb in the JVM", """
        public class Main {
            public static void main(String[] args) {
                for (;;) new Thread(() -> { try { Thread.sleep(100000); } catch (Exception e) {} }).start();
            }
        }
    """, limits=replace(FAST, processes=48)),
    case("py-allocate", "python", {MLE}, "allocate without bound", """
        chunks = []
        while True:
            chunks.append(bytearray(1 << 20))
    """, limits=SMALL_MEMORY),
    case("c-malloc-loop", "c", {MLE, RE}, "malloc and touch without bound (no NULL check)", """
        #include <stdlib.h>
        #include <string.h>
        int main(void) { for (;;) memset(malloc(1 << 20), 1, 1 << 20); }
    """, limits=SMALL_MEMORY),
    case("cpp-vector-growth", "cpp", {MLE}, "grow a std::vector without bound", """
        #include <vector>
        int main() { std::vector<long> v; for (;;) v.push_back(1); }
    """, limits=SMALL_MEMORY),
    case("java-allocate", "java", {MLE}, "allocate arrays without bound in the JVM", """
        import java.util.*;
        public class Main {
            public static void main(String[] args) {
                List<long[]> keep = new ArrayList<>();
                for (;;) keep.add(new long[1 << 17]);
            }
        }
    """, limits=SMALL_MEMORY),
    case("js-allocate-heap", "javascript", {MLE}, "allocate JS arrays without bound (V8 heap)", """
        const keep = [];
        for (;;) keep.push(new Array(1 << 16).fill(1.5));
    """, limits=SMALL_MEMORY),
    case("js-allocate-buffers", "javascript", {MLE}, "allocate Buffers without bound (outside V8's heap limit)", """
        const keep = [];
        for (;;) keep.push(Buffer.alloc(1 << 24, 1));
    """, limits=SMALL_MEMORY),
    case("go-allocate", "go", {MLE}, "allocate and touch slices without bound in Go", """
        package main

        func main() {
            var keep [][]byte
            for {
                b := make([]byte, 1<<24)
                for i := range b {
                    b[i] = 1
                }
                keep = append(keep, b)
            }
        }
    """, limits=SMALL_MEMORY),
    case("py-spin", "python", {TLE}, "spin forever", """
        while True:
            pass
    """),
    case("c-spin-ignore-sigxcpu", "c", {TLE}, "spin forever in two threads, ignoring SIGXCPU", """
        #include <pthread.h>
        #include <signal.h>
        void *spin(void *arg) { for (;;); }
        int main(void) { pthread_t t; signal(SIGXCPU, SIG_IGN); pthread_create(&t, 0, spin, 0); spin(0); }
    """),
    case("py-sleep", "python", {TLE}, "sleep forever", """
        import time
        time.sleep(10**6)
    """),
    case("go-sleep", "go", {TLE}, "sleep forever in Go", """
        package main

        import "time"

        func main() { time.Sleep(time.Hour) }
    """),
    case("py-daemon", "python", {A}, "a daemon (double fork + setsid) that tries to outlive the run", """
        import os
        if os.fork() == 0:
            os.setsid()
            if os.fork() == 0:
                os.execv("/usr/bin/sleep", ["sleep", "@DAEMON@"])
            os._exit(0)
        os.wait()
        print("blocked")
    """),
    case("c-daemon", "c", {A}, "a daemon in C: double fork, setsid, ignore SIGHUP/SIGTERM, close stdio", """
        #include <signal.h>
        #include <stdio.h>
        #include <sys/wait.h>
        #include <unistd.h>
        int main(void) {
            if (fork() == 0) {
                setsid();
                signal(SIGHUP, SIG_IGN);
                signal(SIGTERM, SIG_IGN);
                if (fork() == 0) { close(0); close(1); close(2); execl("/usr/bin/sleep", "sleep", "@DAEMON@", 0); }
                _exit(0);
            }
            wait(0);
            puts("blocked");
        }
    """),
    case("py-print-gigabytes", "python", {OLE}, "print gigabytes", """
        import sys
        block = b"y" * (1 << 20)
        while True:
            sys.stdout.buffer.write(block)
    """, limits=replace(FAST, output_bytes=1 << 20)),
    case("c-print-gigabytes", "c", {OLE}, "print gigabytes from C", """
        #include <stdio.h>
        int main(void) { for (;;) fputs("yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy\\n", stdout); }
    """, limits=replace(FAST, output_bytes=1 << 20)),
    case("py-stderr-flood", "python", {TLE}, "flood stderr (only its tail is kept)", """
        import sys
        block = "e" * (1 << 20)
        while True:
            sys.stderr.write(block)
    """),
    case("py-fill-disk-files", "python", {RE}, "fill the sandbox's disk with many files", """
        block = bytes(1 << 20)  # zeros: tmpfs keeps them as pages all the same, and urandom is slow emulated
        for i in range(10**6):
            with open(f"/sandbox/{i}", "wb") as f:
                f.write(block)
    """, limits=DISK, detail="No space left on device"),
    case("c-fill-disk-one-file", "c", {RE}, "one file bigger than the file-size limit, in /tmp", """
        #include <stdio.h>
        int main(void) {
            static char block[1 << 20];
            FILE *f = fopen("/tmp/big", "w");
            while (fwrite(block, 1, sizeof block, f) == sizeof block) {}
            perror("/tmp/big");
            return 1;
        }
    """, limits=DISK),
    case("py-fill-dev-shm", "python", {A}, "write 8x the disk limit into /dev/shm, outside the sized temp dirs", """
        written = 0
        try:
            while written < 128:
                with open(f"/dev/shm/{written}", "wb") as f:
                    f.write(b"x" * (1 << 20))
                written += 1
        except OSError:
            pass
        print("blocked" if written <= 16 + 32 else f"wrote {written} MiB")
    """, limits=replace(FAST, disk_mb=16)),
    case("py-deep-recursion", "python", {RE, TLE}, "recursion without end (the runner allows depth 100000)", """
        def down(n):
            return down(n + 1) + 1
        down(0)
    """),
    case("py-unbounded-recursion", "python", {TLE, MLE, RE}, "lift the recursion limit, then recurse", """
        import sys
        sys.setrecursionlimit(10**9)
        def down(n):
            return down(n + 1) + 1
        down(0)
    """, limits=SMALL_MEMORY),
    case("c-stack-overflow", "c", {RE}, "overflow the stack", """
        int down(int n) { volatile char frame[1024]; frame[0] = n; return down(n + 1) + frame[0]; }
        int main(void) { return down(0); }
    """, detail="signal 11"),
    case("rust-stack-overflow", "rust", {RE}, "overflow the stack in Rust", """
        fn down(n: u64) -> u64 {
            let frame = [n; 512];
            if unsafe { std::ptr::read_volatile(&frame[7]) } == u64::MAX { return 0; }
            down(n + 1) + frame[3]
        }
        fn main() { println!("{}", down(0)); }
    """, detail="overflowed its stack"),
    case("js-deep-recursion", "javascript", {RE}, "recursion without end in Node", """
        function down(n) { return down(n + 1) + 1; }
        down(0);
    """),
]


# --- compile-time bombs ----------------------------------------------------------------------

COMPILE_BOMBS = [
    case("cpp-template-explosion", "cpp", {CE}, "2^40 distinct template instantiations", """
        template <int N, unsigned M> struct X { enum : long { v = X<N - 1, M * 2>::v + X<N - 1, M * 2 + 1>::v }; };
        template <unsigned M> struct X<0, M> { enum : long { v = M }; };
        int main() { return X<40, 1>::v; }
    """, limits=BOMB),
    case("cpp-include-self-twice", "cpp", {CE}, "a file that includes itself twice: 2^200 includes", """
        #include "main.cpp"
        #include "main.cpp"
        int main() {}
    """, limits=BOMB),
    case("cpp-include-dev-zero", "cpp", {CE}, "#include </dev/zero>", """
        #include "/dev/zero"
        int main() {}
    """, limits=BOMB),
    case("c-include-dev-urandom", "c", {CE}, "#include </dev/urandom>", """
        #include "/dev/urandom"
        int main(void) {}
    """, limits=BOMB),
    case("rust-macro-explosion", "rust", {CE}, "a macro that doubles its input at every expansion", """
        macro_rules! double { ($($t:tt)*) => { double!($($t)* $($t)*); } }
        fn main() { double!(x); }
    """, limits=BOMB),
]


# --- reward hacks: a program that passes without solving ------------------------------------

ADD_CHECK = Suite("assert", (AssertTest("assert add(1, 2) == 3"), AssertTest("assert add(2, 2) == 4")))

REWARD_HACKS = [
    case("py-assert-sys-exit", "python", {WA, RE}, "exit(0) before the assert tests run", """
        def add(a, b):
            return a - b
        import sys
        sys.exit(0)
    """, suite=ADD_CHECK),
    case("py-assert-os-exit", "python", {WA, RE}, "os._exit(0) before the assert tests run", """
        def add(a, b):
            return a - b
        import os
        os._exit(0)
    """, suite=ADD_CHECK),
    case("py-call-exit", "python", {RE}, "exit(0) before the call harness runs", """
        def add(a, b):
            return a - b
        raise SystemExit(0)
    """, suite=Suite("call", (CallTest([1, 2], 3),), fn_name="add")),
    case("py-call-forged-marker", "python", {WA}, "print the call harness's result marker with a guess", """
        import sys
        def add(a, b):
            sys.stdout.write("\\n<<<judge-result>>>3")
            return a - b
    """, suite=Suite("call", (CallTest([1, 2], 3),), fn_name="add")),
]
# fmt: on


# --- the service, this module's cgroups, and what is checked after every case ---------------


class Host:
    """Where this module's sandbox runs are made, and what would be left of them."""

    def __init__(self) -> None:
        self.name = f"hostile-tests-{uuid.uuid4().hex[:8]}"
        self.version = host_version()
        layout = Layout.read()
        # v1: memory and pids cgroups of this module's own, the service inside them; v2: set up here first.
        # bwrap+rlimits (no writable cgroup): no cgroups at all.
        self.parents = {c: layout.v1_directory(c) for c in V1_CONTROLLERS} if self.version == 1 else {}
        if not all(parent and os.access(parent, os.W_OK) for parent in self.parents.values()):
            self.parents = {}
        self.dirs = [parent / self.name for parent in self.parents.values()]

    def __enter__(self) -> Host:
        for directory in self.dirs:
            directory.mkdir()
            (directory / "cgroup.procs").write_text(str(os.getpid()))
        if self.version == 2 and os.environ.get("SANDBOX_ISOLATION") != "bwrap-rlimits":
            self.dirs = [find_cgroups().base]  # type: ignore[attr-defined]
        return self

    def __exit__(self, *exc: object) -> None:
        for parent in self.parents.values():
            (parent / "cgroup.procs").write_text(str(os.getpid()))
        for directory in self.dirs if self.parents else []:
            for _ in range(100):
                with contextlib.suppress(OSError):
                    directory.rmdir()
                    break
                time.sleep(0.05)

    def leftovers(self) -> list[str]:
        """Run cgroups still there; daemons anywhere; as root, `nobody` processes in this module's cgroups."""
        found = [str(p) for directory in self.dirs for p in directory.glob("reward-sandbox-*")]
        for proc in Path("/proc").iterdir():
            with contextlib.suppress(OSError):
                if not proc.name.isdigit():
                    continue
                cmdline = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
                in_ours = any(str(d).removeprefix("/sys/fs/cgroup") in (proc / "cgroup").read_text() for d in self.dirs)
                if DAEMON in cmdline or (os.geteuid() == 0 and proc.stat().st_uid == NOBODY and in_ours):
                    found.append(f"pid {proc.name}: {cmdline}")
        return found


class Traffic:
    """While the table runs: /healthz keeps answering 200, a benign program keeps being judged right."""

    BENIGN = Suite("stdio", (StdioTest("2 3\n", "5"), StdioTest("10 -4\n", "6")))

    def __init__(self, server: LocalServer, judge: RemoteJudge) -> None:
        self.server, self.judge = server, judge
        self.quiet = threading.Lock()  # held by the judging loop around each request; checks take it
        self.stop = threading.Event()
        self.health: list[tuple[int, float]] = []
        self.verdicts: list[dict] = []
        self.failures: list[str] = []
        self.threads = [threading.Thread(target=self._health), threading.Thread(target=self._judging)]

    def _health(self) -> None:
        with httpx.Client(base_url=self.server.url, timeout=5) as client:
            while not self.stop.wait(0.1):
                started = time.monotonic()
                try:
                    code = client.get("/healthz").status_code
                except httpx.HTTPError as exc:
                    self.failures.append(f"/healthz: {exc!r}")
                    continue
                self.health.append((code, time.monotonic() - started))

    def _judging(self) -> None:
        while not self.stop.wait(0.2):
            with self.quiet:
                try:
                    report = self.judge.judge("python", "print(sum(map(int, input().split())))", self.BENIGN, FAST)
                except Exception as exc:
                    self.failures.append(f"benign judge: {exc!r}")
                    continue
                self.verdicts.append(report.to_dict())

    def __enter__(self) -> Traffic:
        for thread in self.threads:
            thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        for thread in self.threads:
            thread.join()


@dataclass
class Hostile:
    judge: RemoteJudge
    host: Host
    traffic: Traffic
    service_pid: int
    listener: socket.socket

    def run(self, row: Case) -> tuple[JudgeReport, float]:
        program = row.program
        for token, value in (
            ("@PORT@", str(self.listener.getsockname()[1])),
            ("@REPO@", str(REPO)),
            ("@HOSTPID@", str(self.service_pid)),
            ("@MARKER@", MARKER),
            ("@DAEMON@", DAEMON),
        ):
            program = program.replace(token, value)
        free_before = shutil.disk_usage("/tmp").free
        started = time.monotonic()
        report = self.judge.judge(row.language, program, row.suite, row.limits)
        elapsed = time.monotonic() - started
        self.assert_nothing_left(free_before)
        return report, elapsed

    def assert_nothing_left(self, free_before: int) -> None:
        with self.traffic.quiet:
            assert self.host.leftovers() == []
        for directory in ("/", "/etc", "/usr", "/usr/bin", "/tmp", str(REPO)):
            assert not (Path(directory) / MARKER).exists(), f"{directory}/{MARKER} appeared on the host"
        if os.geteuid() == 0:  # as an ordinary user the programs share the test's uid (in their own namespace)
            assert not [p for p in Path("/tmp").iterdir() if _owner(p) == NOBODY], "files of the sandbox uid in /tmp"
        assert shutil.disk_usage("/tmp").free > free_before - DISK_SLACK_BYTES, "host disk filled up"
        with pytest.raises(BlockingIOError):  # nothing reached the host's listener
            self.listener.accept()


def _owner(path: Path) -> int | None:
    with contextlib.suppress(OSError):
        return path.lstat().st_uid
    return None


def time_bound(row: Case) -> float:
    """The wall time a case may take: its compile limit (if compiled), each test's wall limit, slack."""
    language = get_language(row.language)
    limits = language.fit(row.limits)  # with the runtime's start-up (JVM, BEAM, R), as the sandbox runs it
    compile_s = 2 * limits.compile_s if language.compile else 0
    return compile_s + len(row.suite.tests) * limits.per_test_wall_s() + SLACK_S


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Hostile]:
    log_dir = tmp_path_factory.mktemp("hostile-service")
    with (
        Host() as host,
        LocalServer.sandbox(log_dir, SANDBOX_WORKERS="2", REWARD_TEST_SECRET=SECRET) as server,
        RemoteJudge(server.url) as judge,
        Traffic(server, judge) as traffic,
        socket.create_server(("127.0.0.1", 0)) as listener,
    ):
        # The attacks must have something to find: the secret in the service's environment, a live listener.
        assert SECRET.encode() in Path(f"/proc/{server.process.pid}/environ").read_bytes()
        with socket.create_connection(listener.getsockname(), timeout=5):
            listener.accept()[0].close()
        listener.setblocking(False)
        yield Hostile(judge, host, traffic, server.process.pid, listener)


def check(hostile: Hostile, row: Case) -> JudgeReport:
    report, elapsed = hostile.run(row)
    verdicts = [t.verdict for t in report.tests]
    context = f"{row.attack}: {report.to_dict()}"
    assert report.sandbox_error is None, context
    assert all(v in allowed for v, allowed in zip(verdicts, row.expect, strict=True)), context
    assert row.detail in (report.compile_error or report.tests[0].detail), context
    assert elapsed < time_bound(row), f"{row.attack}: took {elapsed:.1f}s, bound {time_bound(row):.1f}s"
    assert SECRET not in json.dumps(report.to_dict())
    return report


@pytest.mark.parametrize("row", ISOLATION)
def test_isolation(hostile: Hostile, row: Case) -> None:
    check(hostile, row)


@pytest.mark.parametrize("row", LIMITS)
def test_limits(hostile: Hostile, row: Case) -> None:
    check(hostile, row)


@pytest.mark.parametrize("row", COMPILE_BOMBS)
def test_compile_bombs(hostile: Hostile, row: Case) -> None:
    check(hostile, row)


@pytest.mark.parametrize("row", REWARD_HACKS)
def test_reward_hacks(hostile: Hostile, row: Case) -> None:
    check(hostile, row)


def test_service_kept_answering_throughout(hostile: Hostile) -> None:
    traffic = hostile.traffic
    assert traffic.failures == []
    assert len(traffic.health) >= 20 and {code for code, _ in traffic.health} == {200}
    assert max(seconds for _, seconds in traffic.health) < 2.0, "/healthz was slow while hostile programs ran"
    wrong = [r for r in traffic.verdicts if r["passed"] != 2]
    assert len(traffic.verdicts) >= 5
    assert wrong == [], json.dumps(wrong)
