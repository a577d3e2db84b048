"""Run semantics that decide verdicts, as a judge (and SandboxFusion) would give them, through the real sandbox.

Python programs that break what a runner would use to end or report a test (SandboxFusion's anti-hack prelude sets
`exit`, `os._exit` and `sys.exit` to None before every program; others rebind `print`, the builtins, `sys.stdout` or
`os.write` once they have answered) get their own verdict in every test mode, never a crash of our runner.

Runtime libraries: a Python program imports numpy and sortedcontainers (the default set), and pandas, scikit-learn,
matplotlib and scipy (the full set), which no program can change for the next; a JavaScript program requires lodash
and js-md5.

Memory: a test's memory is bounded by what it uses (a memory cgroup of its own, at every level with cgroups), not by
its address space: a program that reserves far more address space than it touches (2 GiB in a 256 MB bound: an
arena, a vector's reserve) runs as it would on a judge, and so do threads (glibc reserves a stack and a malloc arena
for each), 32 of them in 256 MB. The main thread recurses as deep as its memory allows; recursion without end is a
stack overflow, a runtime error; a memory hog is stopped, in threads too. Each right program has a wrong twin that
must fail.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from sandbox.executor import Limits
from sandbox.judge import AssertTest, CallTest, LocalJudge, StdioTest, Verdict
from sandbox.judge import TestSuite as Suite


@dataclass(frozen=True)
class Row:
    name: str
    language: str
    code: str
    expected: Verdict
    memory_mb: int = 1024


THREADS_CPP = r"""
#include <cstdio>
#include <thread>
#include <vector>
int main() {
    long long n; std::scanf("%lld", &n);
    std::vector<long long> part(THREADS, 0);
    std::vector<std::thread> workers;
    for (int t = 0; t < THREADS; t++)
        workers.emplace_back([&, t] { for (long long i = t; i <= n; i += THREADS) part[t] += i; });
    for (auto &w : workers) w.join();
    long long total = 0;
    for (long long p : part) total += p;
    std::printf("%lld\n", (total) OFFSET);
}
"""

THREADS_C = r"""
#include <pthread.h>
#include <stdio.h>
static long long n, part[THREADS];
static void *sum(void *arg) {
    long t = (long)arg;
    for (long long i = t; i <= n; i += THREADS) part[t] += i;
    return NULL;
}
int main(void) {
    pthread_t workers[THREADS];
    scanf("%lld", &n);
    for (long t = 0; t < THREADS; t++) pthread_create(&workers[t], NULL, sum, (void *)t);
    long long total = 0;
    for (long t = 0; t < THREADS; t++) { pthread_join(workers[t], NULL); total += part[t]; }
    printf("%lld\n", (total) OFFSET);
}
"""

# Python threads, all of them alive at once (the barrier).
THREADS_PY = """
import threading
n = int(input())
parts = [0] * THREADS
started = threading.Barrier(THREADS)
def work(t):
    started.wait()
    parts[t] = sum(range(t, n + 1, THREADS))
workers = [threading.Thread(target=work, args=(t,)) for t in range(THREADS)]
for worker in workers:
    worker.start()
for worker in workers:
    worker.join()
print((sum(parts)) OFFSET)
"""

# A depth-first walk 10^6 calls deep on the main thread (a path graph), as tree problems need.
DEEP_CPP = r"""
#include <cstdio>
long long depth(long long k) { volatile char frame[64]; frame[0] = 1; return k ? 1 + depth(k - 1) : frame[0] - 1; }
int main() {
    long long n; std::scanf("%lld", &n);
    std::printf("%lld\n", (n * (n + 1) / 2 + depth(1000000) - 1000000) OFFSET);
}
"""

# 2 GiB of address space reserved up front, one page of it used.
RESERVE_CPP = r"""
#include <cstdio>
#include <cstdlib>
int main() {
    long long n; std::scanf("%lld", &n);
    volatile char *arena = static_cast<char *>(std::malloc(2ull << 30));
    if (!arena) return 1;
    arena[0] = 1;
    std::printf("%lld\n", (n * (n + 1) / 2 * arena[0]) OFFSET);
}
"""

RESERVE_PY = """
import mmap
n = int(input())
arena = mmap.mmap(-1, 2 << 30)
arena[0] = 1
print((n * (n + 1) // 2 * arena[0]) OFFSET)
"""

ENDLESS_CPP = r"""
#include <cstdio>
long long down(long long k) { volatile char frame[256]; frame[0] = (char)k; return down(k + 1) + frame[0]; }
int main() { std::printf("%lld\n", down(0)); }
"""

HOG_CPP = r"""
#include <cstdio>
#include <cstring>
#include <vector>
int main() {
    std::vector<char *> blocks;
    for (;;) { char *b = new char[1 << 20]; std::memset(b, 1, 1 << 20); blocks.push_back(b); }
}
"""

# A hog in threads: each thread touches its share; together past the bound. The threads wait until all four have
# started, so the bound is met by an allocation (bad_alloc), not by the start of a thread.
THREAD_HOG_CPP = r"""
#include <atomic>
#include <cstring>
#include <thread>
#include <vector>
int main() {
    std::atomic<int> started{0};
    std::vector<std::thread> workers;
    for (int t = 0; t < 4; t++)
        workers.emplace_back([&] {
            started++;
            while (started < 4) std::this_thread::yield();
            for (;;) { char *b = new char[1 << 20]; std::memset(b, 1, 1 << 20); }
        });
    for (auto &w : workers) w.join();
}
"""


def _twin(code: str, threads: int, wrong: bool) -> str:
    """The program with `threads` threads; a wrong one doubles its answer (numbers match within a relative
    tolerance: one off would pass)."""
    return code.replace("THREADS", str(threads)).replace("OFFSET", "* 2" if wrong else "")


ROWS = [
    Row("cpp-8-threads", "cpp", _twin(THREADS_CPP, 8, wrong=False), Verdict.ACCEPTED),
    Row("cpp-8-threads-wrong", "cpp", _twin(THREADS_CPP, 8, wrong=True), Verdict.WRONG_ANSWER),
    Row("cpp-32-threads-256mb", "cpp", _twin(THREADS_CPP, 32, wrong=False), Verdict.ACCEPTED, memory_mb=256),
    Row("c-8-pthreads", "c", _twin(THREADS_C, 8, wrong=False), Verdict.ACCEPTED),
    Row("c-8-pthreads-wrong", "c", _twin(THREADS_C, 8, wrong=True), Verdict.WRONG_ANSWER),
    Row("python-16-threads", "python", _twin(THREADS_PY, 16, wrong=False), Verdict.ACCEPTED),
    Row("python-16-threads-wrong", "python", _twin(THREADS_PY, 16, wrong=True), Verdict.WRONG_ANSWER),
    Row("cpp-recursion-1e6-deep", "cpp", _twin(DEEP_CPP, 0, wrong=False), Verdict.ACCEPTED, memory_mb=512),
    Row("cpp-recursion-1e6-deep-wrong", "cpp", _twin(DEEP_CPP, 0, wrong=True), Verdict.WRONG_ANSWER, memory_mb=512),
    Row("cpp-reserve-2gb-in-256mb", "cpp", _twin(RESERVE_CPP, 0, wrong=False), Verdict.ACCEPTED, memory_mb=256),
    Row(
        "cpp-reserve-2gb-in-256mb-wrong", "cpp", _twin(RESERVE_CPP, 0, wrong=True), Verdict.WRONG_ANSWER, memory_mb=256
    ),
    Row("python-reserve-2gb-in-256mb", "python", _twin(RESERVE_PY, 0, wrong=False), Verdict.ACCEPTED, memory_mb=256),
    Row(
        "python-reserve-2gb-in-256mb-wrong",
        "python",
        _twin(RESERVE_PY, 0, wrong=True),
        Verdict.WRONG_ANSWER,
        memory_mb=256,
    ),
    Row("cpp-recursion-without-end", "cpp", ENDLESS_CPP, Verdict.RUNTIME_ERROR, memory_mb=256),
    Row("cpp-memory-hog", "cpp", HOG_CPP, Verdict.MEMORY_LIMIT, memory_mb=256),
    Row("cpp-memory-hog-in-threads", "cpp", THREAD_HOG_CPP, Verdict.MEMORY_LIMIT, memory_mb=256),
]
N = 1_000_000
SUITE = Suite("stdio", (StdioTest(f"{N}\n", str(N * (N + 1) // 2)),))


@pytest.fixture(scope="module")
def judge() -> LocalJudge:
    return LocalJudge()


@pytest.mark.parametrize("row", ROWS, ids=[row.name for row in ROWS])
def test_programs_with_threads_or_deep_stacks_get_a_judges_verdict(judge: LocalJudge, row: Row) -> None:
    limits = Limits(time_s=5, wall_s=10, memory_mb=row.memory_mb, compile_s=30)
    report = judge.judge(row.language, row.code, SUITE, limits)
    assert report.compile_error is None and report.sandbox_error is None, report.to_dict()
    [test] = report.tests
    assert test.verdict == row.expected, report.to_dict()


# SandboxFusion's prelude (sandbox/utils/antihack.py there), as it prepends it to every Python program.
ANTI_HACK = """
import os
import sys
exit = None
os._exit = None
sys.exit = None
"""
ADD, ADD_WRONG = "def add(a, b):\n    return a + b\n", "def add(a, b):\n    return a - b\n"
STDIO = Suite("stdio", (StdioTest("1 2\n", "3"), StdioTest("2 2\n", "4")))
CALL = Suite("call", (CallTest([1, 2], 3), CallTest([2, 2], 4)), fn_name="add")
ASSERTS = Suite("assert", (AssertTest("assert add(1, 2) == 3"), AssertTest("assert add(2, 2) == 4")))
READ_ADD = "a, b = map(int, input().split())\nprint(a + b)\n"
# What each program breaks after answering (stdio) or once defined (call and assert modes).
BREAKERS = {
    "anti-hack-prelude": "",
    "print-rebound": "import builtins\nbuiltins.print = None\n",
    "stdout-replaced": "import io, sys\nsys.stdout = io.StringIO()\nsys.stderr = None\n",
    "os-write-and-close-gone": "import os\nos.write = None\nos.close = None\n",
    "exit-functions-replaced": "import os, sys\nos._exit = lambda code: None\nsys.exit = print\n",
}
PYTHON_ROWS = [
    (f"{mode}-{breaker}{'-wrong' if wrong else ''}", code, suite, wrong)
    for breaker, broken in BREAKERS.items()
    for wrong in (False, True)
    for mode, code, suite in (
        ("stdio", ANTI_HACK + (READ_ADD.replace("a + b", "a * b") if wrong else READ_ADD) + broken, STDIO),
        ("call", ANTI_HACK + (ADD_WRONG if wrong else ADD) + broken, CALL),
        ("assert", ANTI_HACK + (ADD_WRONG if wrong else ADD) + broken, ASSERTS),
    )
]


@pytest.mark.parametrize(("code", "suite", "wrong"), [row[1:] for row in PYTHON_ROWS], ids=[r[0] for r in PYTHON_ROWS])
def test_python_programs_that_break_exits_and_output_get_their_own_verdicts(
    judge: LocalJudge, code: str, suite: Suite, wrong: bool
) -> None:
    report = judge.judge("python", code, suite, Limits(time_s=2))
    assert report.compile_error is None and report.sandbox_error is None, report.to_dict()
    verdicts = [test.verdict for test in report.tests]
    if wrong:  # 1 * 2 != 3 but 2 * 2 == 4; 1 - 2 != 3 and 2 - 2 != 4
        assert verdicts[0] is not Verdict.ACCEPTED, report.to_dict()
    else:
        assert verdicts == [Verdict.ACCEPTED] * len(suite.tests), report.to_dict()


# The default runtime libraries (sandbox/languages/python.py): what solutions import beyond the standard library.
NUMPY = "import numpy as np\nprint(int(np.array(list(map(int, input().split()))).sum()))\n"
SORTED = "from sortedcontainers import SortedList\nprint(SortedList(map(int, input().split()))[1])\n"
# The libraries are Debian's, read-only to programs: no run can change what the next one imports.
TAMPER = (
    "import errno, numpy\n"
    "try:\n    open(numpy.__file__, 'a').write('raise SystemExit')\nexcept OSError as exc:\n"
    "    print(exc.errno in (errno.EROFS, errno.EACCES))\n"
)
# The full set (`make languages`, `make test`): what BigCodeBench's problems import most.
PANDAS = """
import sys
import pandas as pd
frame = pd.DataFrame([line.split() for line in sys.stdin.read().splitlines()], columns=["key", "value"])
frame["value"] = frame["value"].astype(int)
print(frame.groupby("key")["value"].sum()["a"])
"""
SKLEARN = """
import numpy as np
from sklearn.linear_model import LinearRegression
xs = np.array(list(map(float, input().split()))).reshape(-1, 1)
model = LinearRegression().fit(xs, 2 * xs.ravel() + 1)
print(round(float(model.predict([[10.0]])[0])))
"""
MATPLOTLIB = """
import io
import matplotlib.pyplot as plt
figure, axes = plt.subplots()
axes.plot([1, 2, 3], [int(v) for v in input().split()])
image = io.BytesIO()
figure.savefig(image, format="png")
print(image.getvalue()[:4] == b"\\x89PNG", len(axes.lines))
"""
SCIPY = "from scipy.special import comb\nprint(comb(int(input()), 2, exact=True))\n"
LIBRARY_ROWS = [
    ("numpy", NUMPY, "3 1 2\n", "6", Verdict.ACCEPTED),
    ("numpy-wrong", NUMPY.replace(".sum()", ".max()"), "3 1 2\n", "6", Verdict.WRONG_ANSWER),
    ("sortedcontainers", SORTED, "3 1 2\n", "2", Verdict.ACCEPTED),
    ("sortedcontainers-wrong", SORTED.replace("[1]", "[0]"), "3 1 2\n", "2", Verdict.WRONG_ANSWER),
    ("libraries-read-only", TAMPER, "", "True", Verdict.ACCEPTED),
    ("pandas", PANDAS, "a 1\nb 2\na 3\n", "4", Verdict.ACCEPTED),
    ("pandas-wrong", PANDAS.replace(".sum()", ".max()"), "a 1\nb 2\na 3\n", "4", Verdict.WRONG_ANSWER),
    ("scikit-learn", SKLEARN, "1 2 3\n", "21", Verdict.ACCEPTED),
    ("scikit-learn-wrong", SKLEARN.replace("10.0", "11.0"), "1 2 3\n", "21", Verdict.WRONG_ANSWER),
    ("matplotlib", MATPLOTLIB, "3 1 2\n", "True 1", Verdict.ACCEPTED),
    ("scipy", SCIPY, "10\n", "45", Verdict.ACCEPTED),
    ("scipy-wrong", SCIPY.replace(", 2,", ", 3,"), "10\n", "45", Verdict.WRONG_ANSWER),
]


# JavaScript programs require SandboxFusion's Node libraries (sandbox/runtimes/node, installed by `make languages`).
LODASH = """
const _ = require('lodash');
const xs = require('fs').readFileSync(0, 'utf8').trim().split(/\\s+/).map(Number);
console.log(_.sum(_.uniq(xs)));
"""
MD5 = "const md5 = require('js-md5');\nconsole.log(md5(require('fs').readFileSync(0, 'utf8').trim()));\n"
LIBRARY_ROWS += [
    ("lodash", LODASH, "3 1 3 2\n", "6", Verdict.ACCEPTED, "javascript"),
    ("lodash-wrong", LODASH.replace("_.uniq(xs)", "xs"), "3 1 3 2\n", "6", Verdict.WRONG_ANSWER, "javascript"),
    ("js-md5", MD5, "abc\n", "900150983cd24fb0d6963f7d28e17f72", Verdict.ACCEPTED, "javascript"),
]


@pytest.mark.parametrize(
    ("code", "stdin", "output", "expected", "language"),
    [(*r[1:5], r[5] if len(r) > 5 else "python") for r in LIBRARY_ROWS],
    ids=[r[0] for r in LIBRARY_ROWS],
)
def test_programs_use_the_runtime_libraries(
    judge: LocalJudge, code: str, stdin: str, output: str, expected: Verdict, language: str
) -> None:
    suite = Suite("stdio", (StdioTest(stdin, output), StdioTest(stdin, output)))  # two tests: the warm import too
    report = judge.judge(language, code, suite, Limits(time_s=10, memory_mb=1024))
    assert report.compile_error is None and report.sandbox_error is None, report.to_dict()
    assert [test.verdict for test in report.tests] == [expected] * 2, report.to_dict()


# Competitive programmers' fast output: print into a buffer, written out by an exit handler, as at the interpreter's
# exit; the handler's own failure (an exit status of its choosing) is the run's.
AT_EXIT = (
    "import atexit, io, sys\nbuffer = io.StringIO()\nsys.stdout = buffer\n"
    "atexit.register(lambda: sys.__stdout__.write(buffer.getvalue()))\n"
)


@pytest.mark.parametrize(("code", "verdict"), [
    (AT_EXIT + READ_ADD, Verdict.ACCEPTED),
    (AT_EXIT + READ_ADD.replace("a + b", "a - b"), Verdict.WRONG_ANSWER),
    ("import atexit, os\natexit.register(lambda: os._exit(3))\n" + READ_ADD, Verdict.RUNTIME_ERROR),
], ids=["buffered", "buffered-wrong", "handler-exits-3"])  # fmt: skip
def test_output_written_at_exit_is_output(judge: LocalJudge, code: str, verdict: Verdict) -> None:
    report = judge.judge("python", code, STDIO, Limits(time_s=2))
    assert {test.verdict for test in report.tests} == {verdict}, report.to_dict()
