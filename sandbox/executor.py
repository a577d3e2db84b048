"""Run one program against many inputs in one isolated sandbox.

    executor = Executor()                      # refuses to start if isolation is missing
    run = executor.run("python", code, [TestInput(stdin="1 2\\n")], Limits(time_s=1))
    run.tests[0].status, run.tests[0].stdout

The runner inside the sandbox compiles once and runs the tests (up to `parallel` at a
time); results stream back as each test ends, so a caller can stop at the first failure.
Compiling (Python's byte-compiling too) has limits of its own (compile_s,
compile_memory_mb), looser than the tests'; a program over MAX_SOURCE_MB never starts a
sandbox: it is a failed compile that names the limit.
Outputs are judged by the caller (sandbox/judge.py), outside the sandbox.
"""

from __future__ import annotations

import contextlib
import json
import logging
import marshal
import os
import select
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from sandbox import cpu_priority
from sandbox.cgroups import RunCgroup
from sandbox.compile_cache import Claim, CompileCache, Compiled, unpacked
from sandbox.files import FETCH_BYTES, fetch_paths, fetched_by_name, placed_files
from sandbox.isolation import (
    Isolation,
    Level,
    SandboxSize,
    launch_argv,
    prepare,
    runner_preamble,
    unisolated_argv,
)
from sandbox.languages import Language, LanguageUnavailable, enabled_languages, get_language, why_unavailable
from sandbox.zygote import Zygote, ZygoteRun, ZygoteUnavailable, enabled_by_env

_BASE_ENV = {
    "PATH": "/usr/bin:/bin",
    "HOME": "/sandbox",
    "LANG": "C.UTF-8",
    "TMPDIR": "/tmp",
    "PYTHONDONTWRITEBYTECODE": "1",
    "PYTHONHASHSEED": "0",
    # Numerical libraries start one thread per core by default: one, within the run's process bound.
    "OPENBLAS_NUM_THREADS": "1",
    "OMP_NUM_THREADS": "1",
    # glibc gives each new thread its own malloc arena and reserves 64 MB of address space for it: under an
    # address-space bound (bwrap-rlimits, compile steps) a program with 32 threads in 256 MB failed to start its
    # threads. One arena keeps the address space near what the program uses.
    "MALLOC_ARENA_MAX": "1",
}
log = logging.getLogger(__name__)
_RUNNER_OVERHEAD_MB = 128
# Credits (one byte a test) granted ahead of results where nothing can stop a run early: far below a pipe's
# 64 KiB, so the write never blocks while the runner waits to write a result.
_CREDITS_AHEAD = 4096
# The largest program, in MB of UTF-8 source: far above any real solution (kilobytes), 4x the 2 MB programs with
# tables that must pass, 1/8 of the default disk_mb. A larger one is a compile error naming this limit (the
# services answer 413). Within it compiling is bounded by compile_s and compile_memory_mb: dense Python takes
# ~200 bytes of memory per byte of source to compile (2 MB: 0.45 GB, 6 MB: 1.2 GB), so past ~6 MB of it the
# verdict may be a compile memory limit; tables and strings take far less.
MAX_SOURCE_MB = 8
# The most memory one test may ask for (Limits.memory_mb): twice the largest limit of the contest sets (1 GB), and
# still a fraction of a host that runs a test per core. Every door checks it: a reference, /v1/judge's limits,
# /run_code's memory_limit_MB.
MAX_TEST_MEMORY_MB = 2048


@dataclass(frozen=True)
class Limits:
    """Per-test limits, plus bounds on compiling and on the whole run."""

    time_s: float = 2.0  # CPU seconds per test
    wall_s: float | None = None  # wall seconds per test; default 2 * time_s + 1
    memory_mb: int = 512  # per test: its memory cgroup's (rlimits only: address space), else JVM/V8/Go flags
    output_bytes: int = 16 * 1024 * 1024  # stdout per test; more is an output-limit verdict
    file_bytes: int = 16 * 1024 * 1024  # largest file a test may write
    open_files: int = 64
    processes: int = 64  # processes + threads in the whole sandbox at once
    disk_mb: int = 64  # the sandbox's writable space
    compile_s: float = 30.0  # CPU seconds for compiling (Python: byte-compiling the source)
    compile_memory_mb: int = 1536  # compiling's bound, apart from the tests' (a big program may need far more)
    total_s: float = 120.0  # the whole run; past it everything is killed
    single_process: bool = False  # each test may start threads but no other process (runner.py confine)

    def per_test_wall_s(self) -> float:
        return self.wall_s if self.wall_s is not None else 2 * self.time_s + 1

    def runner_limits(self, data_limit: bool = False) -> dict[str, Any]:
        return {
            "data_limit": data_limit,
            "cpu_s": self.time_s,
            "wall_s": self.per_test_wall_s(),
            "memory_mb": self.memory_mb,
            "output_bytes": self.output_bytes,
            "file_bytes": self.file_bytes,
            "open_files": self.open_files,
            "single_process": self.single_process,
        }

    def compile_limits(self, data_limit: bool = False) -> dict[str, Any]:
        return self.runner_limits(data_limit) | {
            "single_process": False,  # compilers start their passes as processes of their own
            "cpu_s": self.compile_s,
            "wall_s": self.compile_s * 2,
            "memory_mb": max(self.compile_memory_mb, self.memory_mb),  # compiling may use what a test may
            "output_bytes": 1024 * 1024,
            "file_bytes": max(self.file_bytes, 256 * 1024 * 1024),
            "open_files": 256,
            "unlimited_stack": True,
        }


@dataclass(frozen=True)
class TestInput:
    stdin: str = ""
    python_code: str | None = None  # Python only: a test's code, run apart from the solution (runner.py run_apart)
    # Python only: (function name, arguments, marker): the solution's function (or Solution().method) called in its
    # own process, the marker and its result as JSON written after its output (runner.py run_call)
    python_call: tuple[str, list[Any], str] | None = None
    # A program suite's (tests' code, marker), in a language whose tests run in a process of their own
    # (Language.apart_tests): the program in another, reached as plain data (runner.py run_suite_apart)
    tests_apart: tuple[str, str] | None = None


@dataclass
class ProcessResult:
    status: str  # exited | signaled | timeout | output_limit
    exit_code: int | None = None
    signal: int | None = None
    stdout: str = ""
    stderr: str = ""
    wall_s: float = 0.0
    cpu_s: float = 0.0
    max_rss_kb: int = 0
    oom_killed: bool = False  # the run's cgroup OOM-killed a process while this one ran
    # Killed by its own memory cgroup, or aborted with its peak memory at its address-space bound (sandbox/runner.py).
    memory_exhausted: bool = False

    @classmethod
    def from_runner(cls, message: dict[str, Any]) -> ProcessResult:
        return cls(
            status=message["status"],
            exit_code=message.get("exit_code"),
            signal=message.get("signal"),
            stdout=message.get("stdout", ""),
            stderr=message.get("stderr", ""),
            wall_s=message.get("wall_s", 0.0),
            cpu_s=message.get("cpu_s", 0.0),
            max_rss_kb=message.get("max_rss_kb", 0),
            memory_exhausted=message.get("memory_exhausted", False),
        )

    @property
    def ok(self) -> bool:
        return self.status == "exited" and self.exit_code == 0


@dataclass
class Execution:
    compile: ProcessResult | None
    tests: list[ProcessResult | None]  # None: not run (stopped early, compile failed, run cut off)
    sandbox_error: str | None = None
    leftover_processes: int = 0  # killed at the end: a daemon that tried to outlive the run
    peak_memory_bytes: int = 0
    timed_out: bool = False  # the whole run passed total_s
    # It ended without a result for every test, not by its own limits or its caller's stop: its sandbox was killed
    # from outside (an OOM killer, an operator) or its runner failed. sandbox_error says how; never a verdict.
    lost: bool = False
    details: dict[str, Any] = field(default_factory=dict)
    # (step, time.monotonic()) as each step of the run ended, for bench/sandbox_phases.py: the host's steps, the
    # runner's own start ("runner", its clock: the same monotonic clock), and each result as it arrived.
    phases: list[tuple[str, float]] = field(default_factory=list)
    fetched: dict[str, str] = field(default_factory=dict)  # a path asked for (`fetch`) -> its content after, base64


def source_size_error(code: str) -> str | None:
    """Why `code` is too large to run (naming the limit), or None when it is within MAX_SOURCE_MB."""
    limit = MAX_SOURCE_MB * 1024 * 1024
    if len(code) * 4 <= limit:  # at most 4 bytes a character: no need to encode
        return None
    size = len(code.encode("utf-8", "surrogatepass"))
    if size <= limit:
        return None
    return (
        f"the program is {size / 1024 / 1024:.1f} MB of source; the limit is {MAX_SOURCE_MB} MB: "
        "compute large tables at run time instead of writing them out"
    )


class Cancel:
    """A run seen from another thread: `cancel()` kills its sandbox at once (the caller went away or
    gave up on it), `cpu_seconds()` says how much CPU its programs have had so far."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._sandbox: _Sandbox | None = None
        self.cancelled = False

    def cancel(self) -> None:
        with self._lock:
            self.cancelled = True
            if self._sandbox is not None:
                self._sandbox.kill()

    def cpu_seconds(self) -> float:
        sandbox = self._sandbox
        return sandbox.cpu_seconds() if sandbox is not None else 0.0

    def cpu_wait_seconds(self) -> float:
        """How long its programs have waited for a CPU that other work held (a sleeping program waits for none)."""
        sandbox = self._sandbox
        return sandbox.cpu_wait_seconds() if sandbox is not None else 0.0

    def held_back(self) -> bool:
        """Its programs want a CPU now and other work holds it (cpu_priority.held_back)."""
        sandbox = self._sandbox
        return sandbox is not None and sandbox.held_back()

    @property
    def yielded(self) -> bool:
        """Its programs have used enough CPU to take only spare CPU now (sandbox/cpu_priority.py)."""
        sandbox = self._sandbox
        return sandbox is not None and sandbox.yielded

    def attach(self, sandbox: _Sandbox | None) -> None:
        """The sandbox running now (None: no longer); a run cancelled before it started is killed on attaching."""
        with self._lock:
            self._sandbox = sandbox
            if sandbox is not None and self.cancelled:
                sandbox.kill()


class Executor:
    def __init__(
        self,
        isolation: Isolation = Isolation.BWRAP,
        parallel: int | None = None,
        languages: Sequence[Language] = (),
        compile_cache: CompileCache | Literal["env"] | None = "env",
        zygote: bool | None = None,
    ) -> None:
        """`languages`: those this sandbox serves; none given: SANDBOX_LANGUAGES's (sandbox/languages).
        `compile_cache`: "env": SANDBOX_COMPILE_CACHE_MB's and _DIR's (sandbox/compile_cache.py); None: none.
        `zygote`: fork runs from a warm sandbox where they have a cgroup (sandbox/zygote.py); None: SANDBOX_ZYGOTE's."""
        self.level: Level = prepare(isolation)
        self.parallel = parallel or os.cpu_count() or 1
        self.languages = {lang.name: lang for lang in (languages or enabled_languages())}
        self.compile_cache = CompileCache.from_env() if compile_cache == "env" else compile_cache
        wanted = enabled_by_env() if zygote is None else zygote
        binds = [path for lang in self.languages.values() for path in lang.binds]
        self.zygote = Zygote(self.level, binds) if wanted and self.level.cgroups is not None else None

    def language(self, name: str | Language) -> Language:
        """The language `name` runs in; LanguageUnavailable (saying what to do) when this sandbox cannot run it."""
        lang = get_language(name) if isinstance(name, str) else name
        if (reason := why_unavailable(lang, self.languages)) is not None:
            raise LanguageUnavailable(reason)
        return lang

    def run(
        self,
        language: str | Language,
        code: str,
        tests: Sequence[TestInput],
        limits: Limits = Limits(),
        on_result: Callable[[int, ProcessResult], bool] | None = None,
        cancel: Cancel | None = None,
        files: Mapping[str, bytes] | None = None,
        fetch: Sequence[str] = (),
        tests_binary: bytes | None = None,
    ) -> Execution:
        """Compile once and run every test; `on_result` returning False stops the run early. Without one, tests
        start as the runner can take them, never waiting on this process's reading of results. `files` (path ->
        content) are written before compiling, and the files at `fetch` are given back after the run
        (Execution.fetched); sandbox/files.py says which paths may be used (FilePathError). `tests_binary`: what the
        tests' process of tests run apart runs (Executor.build's of Language.apart_build), from memory."""
        lang = self.language(language)
        limits = lang.fit(limits)
        if (refused := source_size_error(code) or lang.source_refusal(code)) is not None:  # a failed compile
            return Execution(compile=ProcessResult("exited", exit_code=1, stderr=refused), tests=[None] * len(tests))
        isolated = self.isolated
        # No cgroup bounds an isolated run: the runner bounds processes and memory with rlimits.
        rlimits_only = isolated and self.level.cgroups is None
        job = _job(lang, code, tests, limits, max(1, min(self.parallel, len(tests) or 1)), rlimits_only)
        job["data_files"] = placed_files(files or {}, isolated, list(job["files"]))
        if tests_binary is not None:
            job["apart"]["tests_binary"] = tests_binary
        wanted = fetch_paths(fetch, isolated)
        job["fetch"], job["fetch_bytes"] = sorted(set(wanted.values())), FETCH_BYTES
        # The runner's own and its tests' (sandbox/cpu_priority.py); unsandboxed runs keep this process's.
        job["niceness"] = cpu_priority.FRESH_NICENESS if isolated else 0
        run = _Run(lang, job, len(tests), limits, on_result, cancel or Cancel())
        if self.compile_cache is None or not job["compile"] or job["data_files"]:  # files may change what compiles
            execution = self._execute(run)
        else:
            execution = self._run_with_cache(self.compile_cache, run)
        execution.fetched = fetched_by_name(wanted, execution.fetched)
        return execution

    def build(self, language: str | Language, code: str, limits: Limits = Limits()) -> Compiled:
        """`code` compiled alone in a sandbox of its own, and the files the compile wrote (a compiled program
        suite's tests' binary: compiled where no program runs, then run from memory beside the program's). Kept in the
        compile cache where there is one: the samples of one prompt share their tests."""
        lang = self.language(language)
        limits = lang.fit(limits)
        if (refused := source_size_error(code) or lang.source_refusal(code)) is not None:
            return Compiled({"status": "exited", "exit_code": 1, "stderr": refused}, None)
        job = _job(lang, code, [], limits, 1, self.isolated and self.level.cgroups is None)
        job["pack_bytes"] = self.compile_cache.max_entry_bytes if self.compile_cache else _BUILD_BYTES
        job["niceness"] = cpu_priority.FRESH_NICENESS if self.isolated else 0
        run = _Run(lang, job, 0, limits, None, Cancel())
        cache = self.compile_cache
        key = cache.key(lang, job, limits.disk_mb, limits.processes) if cache else ""
        with cache.claim(key, limits.compile_s) if cache else contextlib.nullcontext() as claim:
            if claim is not None and claim.found is not None:
                return claim.found
            kept = _Kept(claim)
            execution = self._execute(run, kept)  # type: ignore[arg-type] # a Claim's store() is all it calls
        if kept.result is None:  # the sandbox failed before the compile ended
            why = execution.sandbox_error or "the sandbox ended before the compile did"
            return Compiled({"status": "exited", "exit_code": 1, "stderr": why}, None)
        return kept.compiled

    @property
    def isolated(self) -> bool:
        return self.level.isolation is not Isolation.NONE

    def sandbox(self, size: SandboxSize, language: str = "python") -> _Sandbox:
        """A sandbox of this executor's isolation for a process of one's own (sandbox/sessions.py): spawn() it,
        hand it its code, and leave the context to tear it down."""
        lang = self.language(language)
        return _Sandbox(self.level, size, _BASE_ENV | lang.env, lang.binds)

    def _run_with_cache(self, cache: CompileCache, run: _Run) -> Execution:
        """A compiled language's run: compiled here and kept, or with the kept compile's files (or error)."""
        job, limits = run.job, run.limits
        with cache.claim(cache.key(run.lang, job, limits.disk_mb, limits.processes), limits.compile_s) as claim:
            if claim.found is None:
                job["pack_bytes"] = cache.max_entry_bytes
                execution = self._execute(run, claim)
                execution.details["compile_cache"] = "miss"
                return execution
        if claim.found.ok:
            job["compile"] = None
            job["files"] |= claim.found.artifacts
            execution = self._execute(run)
        else:
            execution = Execution(compile=None, tests=[None] * run.count)
        if execution.compile is None:  # else the runner's own (the files did not fit the disk)
            execution.compile = ProcessResult.from_runner(claim.found.result)
        execution.details["compile_cache"] = "hit"
        return execution

    def _execute(self, run: _Run, claim: Claim | None = None) -> Execution:
        job, limits, cancel = run.job, run.limits, run.cancel
        size = SandboxSize(
            memory_mb=limits.memory_mb * job["parallel"] + _RUNNER_OVERHEAD_MB,
            compile_memory_mb=limits.compile_memory_mb + _RUNNER_OVERHEAD_MB if _compiles(job) else 0,
            pids=limits.processes,
            disk_mb=limits.disk_mb,
            # A language bounded by address space gets a memory cgroup per test instead where there are cgroups.
            test_slots=job["parallel"] if run.lang.address_space_limit else 0,
            test_memory_mb=limits.memory_mb,
        )
        for attempt in (1, 2):
            with _Sandbox(self.level, size, _BASE_ENV | run.lang.env, run.lang.binds, self.zygote) as sandbox:
                cancel.attach(sandbox)
                try:
                    execution = sandbox.run(job, run.count, limits.total_s, run.on_result, claim)
                finally:
                    cancel.attach(None)
            execution.leftover_processes = sandbox.leftovers
            # A sandbox lost to something outside the run is run again, once: a fresh sandbox does not depend on
            # the first (tests that did run are run again too); one lost to its own memory bound would be again.
            if not execution.lost or execution.details.get("oom_kills") or cancel.cancelled or attempt == 2:
                break
            log.warning("sandbox run lost, running it again: %s", execution.sandbox_error)
            first_loss = execution.sandbox_error
        if attempt == 2:
            execution.details["retried_after"] = first_loss
        return execution


_BUILD_BYTES = 16 * 1024 * 1024  # what a build (Executor.build) may give back without a compile cache


class _Kept:
    """Where a build's compile message goes (Executor.build): kept, and passed on to the compile cache's claim."""

    def __init__(self, claim: Claim | None) -> None:
        self.claim, self.result = claim, None

    def store(self, result: dict[str, Any]) -> None:
        self.result = result
        if self.claim is not None:
            self.claim.store(result)

    @property
    def compiled(self) -> Compiled:
        assert self.result is not None
        return unpacked(self.result)


@dataclass(frozen=True)
class _Run:
    """One call of Executor.run, as its steps pass it on."""

    lang: Language
    job: dict[str, Any]  # what the runner gets (_job); a cached compile changes its files and compile step
    count: int  # tests
    limits: Limits
    on_result: Callable[[int, ProcessResult], bool] | None
    cancel: Cancel


def _job(
    lang: Language, code: str, tests: Sequence[TestInput], limits: Limits, parallel: int, rlimits_only: bool
) -> dict[str, Any]:
    source, compile_argv, run_argv = lang.commands(code, limits.memory_mb)
    if not lang.python_zygote and any(t.python_code or t.python_call for t in tests):
        raise ValueError(f"tests with python_code or python_call need language python, not {lang.name}")
    apart = any(t.tests_apart for t in tests)
    if apart and not lang.apart_tests:
        raise ValueError(f"{lang.name} has no tests' process of its own (Language.apart_tests): no tests_apart")
    return {
        "files": {source: code},  # name -> text, or (mode, bytes) for a cached compile's output
        "python_main": source if lang.python_zygote else None,
        "compile": compile_argv,
        "compile_address_space": lang.compile_address_space_limit,
        "compile_limits": limits.compile_limits(rlimits_only),
        "run": run_argv,
        "address_space": lang.address_space_limit,
        "limits": limits.runner_limits(rlimits_only) | {"unlimited_stack": lang.unbounded_stack},
        "parallel": parallel,
        "processes": limits.processes if rlimits_only else 0,
        "tests": [
            {"stdin": t.stdin, "python_code": t.python_code, "python_call": t.python_call, "tests_apart": t.tests_apart}
            for t in tests
        ],
        "apart": lang.apart_commands(code, limits.memory_mb) if apart else None,
        "pack_bytes": 0,  # > 0: after compiling, send back what the compile wrote, up to this size (compile cache)
        "niceness": 0,  # the runner's own and its tests' (Executor.run)
        "data_files": {},  # absolute sandbox path -> bytes, written before compiling (sandbox/files.py)
        "fetch": [],  # absolute sandbox paths given back after the run, together at most fetch_bytes
        "fetch_bytes": 0,
        "memory_slots": [],  # [cgroup.procs fd, OOM events fd] of each test slot (_Sandbox.run; runner.py)
    }


def _compiles(job: dict[str, Any]) -> bool:
    """Whether the runner compiles first (Python too: byte-compiling, in a child under the compile limits)."""
    return bool(job["compile"] or job["python_main"])


class _BudgetWatchdog:
    """Kills a run at its total time budget, not counting time it was starved: a run that has yielded
    (cpu_priority.py), got less than STARVED_SHARE of a core and spent most of the rest waiting for a CPU or waits
    for one now (not sleeping or waiting of its own accord: a program that sleeps is not starved) goes on, up to
    STARVED_CAP budgets, since its programs may not have run at all. One still starved then is killed without a
    verdict (`starved`): a busy machine must not read as programs too slow."""

    STARVED_CAP = 4
    LOOK_S = 1.0

    def __init__(self, sandbox: _Sandbox, total_s: float) -> None:
        self.sandbox, self.total_s = sandbox, total_s
        self.started = time.monotonic()
        self.fired = threading.Event()
        self.starved = False
        self._ended = False
        self._timer = threading.Timer(total_s, self._check)
        self._timer.start()

    def _check(self) -> None:
        if self._ended:
            return
        elapsed = time.monotonic() - self.started
        cpu, cpu_wait = self.sandbox.cpu_seconds(), self.sandbox.cpu_wait_seconds()
        starved = self.sandbox.yielded and cpu_priority.starving(cpu, cpu_wait, elapsed, self.sandbox.held_back)
        if starved and elapsed < self.STARVED_CAP * self.total_s and not self.sandbox.stopped:
            self._timer = threading.Timer(self.LOOK_S, self._check)
            self._timer.start()
            return
        self.starved = starved
        self.fired.set()
        self.sandbox.kill()

    def cancel(self) -> None:
        self._ended = True
        self._timer.cancel()


def _open(path: Path, flags: int) -> int:
    """A cgroup file for the runner: opened here, with the host's credentials, which the kernel checks on a write."""
    return os.open(path, flags | os.O_CLOEXEC)


class _Sandbox:
    """One runner process in its isolation, with everything cleaned up on exit."""

    def __init__(
        self,
        level: Level,
        size: SandboxSize,
        env: dict[str, str],
        binds: Sequence[str] = (),
        zygote: Zygote | None = None,
    ) -> None:
        """`zygote`: start the runner forked from it (sandbox/zygote.py) where the run has a cgroup, else in a
        `bwrap` of its own."""
        self.phases = [("start", time.monotonic())]  # Execution.phases
        self.cgroup: RunCgroup | None = None
        self.root: Path | None = None
        self.size, self.env = size, env
        self.slot_fds: list[list[int]] = []  # the host's, for the tests' memory cgroups (runner.py MemorySlot)
        self.runner_slot_fds: list[list[int]] = []  # the same as the runner has them (spawn)
        if level.isolation is not Isolation.NONE:
            self.cgroup = level.new_run_cgroup(size)
            if self.cgroup is not None:
                self.slot_fds = [[_open(slot.procs, os.O_WRONLY), _open(slot.events, os.O_RDONLY)]
                                 for slot in self.cgroup.test_slots]  # fmt: skip
            self.phases.append(("cgroup", time.monotonic()))
            self.argv = launch_argv(level, self.cgroup, size, env, binds)
        else:
            self.root = Path(tempfile.mkdtemp(prefix="sandbox-"))
            self.argv = unisolated_argv(self.root)
        self.zygote = zygote if self.cgroup is not None and zygote is not None and zygote.refused is None else None
        self.stderr = tempfile.TemporaryFile()  # noqa: SIM115 - closed in __exit__
        self.process: subprocess.Popen | ZygoteRun | None = None
        self.leftovers = 0
        self.stopped = False  # kill() was called: a process started after it is killed at once
        self.killed = False  # kill() found the runner running and killed it (not something outside the run)
        self.ended_by_itself = False  # the runner exited on its own (not stopped early or cut off)
        self.yielded = False  # its programs run long and take only spare CPU now
        self.granted = 0  # tests the runner has been allowed to start (_grant_credit)
        self.ended_cpu_wait_s = 0.0  # CPU wait of its ended tests and compile step, as the runner reported them
        self.pidfd: int | None = None  # the launcher's, readable once it has exited

    def __enter__(self) -> _Sandbox:
        return self

    def run(
        self,
        job: dict[str, Any],
        count: int,
        total_s: float,
        on_result: Callable[[int, ProcessResult], bool] | None,
        claim: Claim | None = None,
    ) -> Execution:
        """`claim`: the compile cache's, which keeps the compile step's result and files."""
        execution = Execution(compile=None, tests=[None] * count, phases=self.phases)
        self.spawn()
        job["memory_slots"] = self.runner_slot_fds
        watchdog = _BudgetWatchdog(self, total_s)
        try:
            payload = marshal.dumps(job)  # the runner imports no json to read it (runner.py)
            with contextlib.suppress(BrokenPipeError):
                code = b"" if isinstance(self.process, ZygoteRun) else runner_preamble()  # a zygote's run has it
                self.process.stdin.write(code + b"%d\n" % len(payload) + payload)
                self.process.stdin.flush()
            # Tests the runner may start before the next result: `parallel` for a caller that may stop the run,
            # else as many as the pipe takes without blocking; one more for each result after that.
            ahead = min(count, job["parallel"] if on_result is not None else _CREDITS_AHEAD)
            if not _compiles(job):
                self._grant_credit(ahead)
            oom_seen, stopped = 0, False
            for line in self.process.stdout:
                message = json.loads(line)
                if "yield" in message:
                    self.yield_cpu()
                    continue
                if "fetched" in message:
                    execution.fetched = message["fetched"]
                    continue
                # With test slots the runner tells each test's own (a v2 run's count holds its neighbours' too).
                oom_now = self.cgroup.oom_kills() if self.cgroup and not self.slot_fds else 0
                self.ended_cpu_wait_s += message.get("compile", message).get("cpu_wait_s", 0.0)
                if "compile" in message:
                    self.phases += [("runner", message.get("started", 0.0)), ("compiled", time.monotonic())]
                    if claim is not None:
                        claim.store(message["compile"])
                    execution.compile = ProcessResult.from_runner(message["compile"])
                    if execution.compile.ok:
                        if self.cgroup is not None:
                            # Compiling is over: tighten memory to what the tests may use, before any starts.
                            self.cgroup.tighten_memory(self.size.memory_bytes(self.size.memory_mb))
                        self._grant_credit(ahead)
                    continue
                self.phases.append(("test", time.monotonic()))
                result = ProcessResult.from_runner(message)
                result.oom_killed, oom_seen = oom_now > oom_seen, oom_now
                execution.tests[message["index"]] = result
                if on_result is not None and on_result(message["index"], result) is False:
                    stopped = True
                    break
                if self.granted < count:
                    self._grant_credit()
            execution.timed_out = watchdog.fired.is_set()
            if watchdog.starved:
                execution.sandbox_error = (
                    f"the run got too little CPU to finish within its {total_s:g}s budget (the machine is busy "
                    "with other work): no verdict"
                )
            if not (stopped or execution.timed_out):
                self.ended_by_itself = self._exited_within(5.0)
        finally:
            watchdog.cancel()
            self.kill()
        self._finish(execution, count, _compiles(job))
        self.phases.append(("exited", time.monotonic()))
        return execution

    def _exited_within(self, timeout_s: float) -> bool:
        """Whether the runner's launcher exits within `timeout_s` (reaped then), told by its pidfd as it exits:
        Popen.wait(timeout) polls in sleeps of up to 50 ms."""
        if self.pidfd is not None:
            select.select([self.pidfd], [], [], timeout_s)
        try:
            self.process.wait(timeout=0 if self.pidfd is not None else timeout_s)
        except subprocess.TimeoutExpired:
            return False
        return True

    def _finish(self, execution: Execution, count: int, compiles: bool) -> None:
        returncode = self.process.wait()
        if self.cgroup is not None:
            execution.peak_memory_bytes = self.cgroup.peak_memory_bytes()
            if refused := self.cgroup.fork_refusals():
                execution.details["process_limit_hits"] = refused
            if oom_kills := self.cgroup.oom_kills():
                execution.details["oom_kills"] = oom_kills
        ran = sum(r is not None for r in execution.tests)
        compile_failed = execution.compile is not None and not execution.compile.ok
        unfinished = ran < count or (compiles and execution.compile is None)
        if not unfinished or compile_failed or execution.timed_out or self.killed or execution.sandbox_error:
            return
        self.stderr.seek(0)
        tail = self.stderr.read()[-2000:].decode(errors="replace").strip()
        how = f"was killed by signal {-returncode}" if returncode < 0 else f"exited with code {returncode}"
        cause = " (its memory bound's OOM killer)" if execution.details.get("oom_kills") else ""
        execution.lost = True
        execution.sandbox_error = (
            f"the sandbox {how}{cause} before {count - ran} of its {count} tests ran: no verdict for them"
            + (f": {tail}" if tail else "")
        )

    def _grant_credit(self, count: int = 1) -> None:
        """`count` more tests may start: the runner waits for these (see run_children)."""
        self.granted += count
        with contextlib.suppress(BrokenPipeError, ValueError):
            self.process.stdin.write(b"+" * count)
            self.process.stdin.flush()

    def yield_cpu(self) -> None:
        """The runner says its programs run long: from now on they take only spare CPU (cpu_priority.py)."""
        self.yielded = True
        if self.cgroup is not None:
            self.cgroup.yield_cpu()
        else:
            cpu_priority.make_idle(self._processes())

    def _unyield_cpu(self) -> None:
        if self.cgroup is not None:
            self.cgroup.unyield_cpu()
        else:
            cpu_priority.unmake_idle(self._processes())

    def cpu_seconds(self) -> float:
        if self.cgroup is not None:
            return self.cgroup.cpu_seconds()
        return cpu_priority.cpu_seconds(self._processes())

    def cpu_wait_seconds(self) -> float:
        """How long its programs waited for a CPU that other work held: ended tests' as the runner reported them,
        and the processes running now."""
        return self.ended_cpu_wait_s + cpu_priority.cpu_wait_seconds(self._running())

    def held_back(self) -> bool:
        """Its programs want a CPU now and other work holds it (cpu_priority.held_back)."""
        return cpu_priority.held_back(self._running())

    def _running(self) -> Iterable[int]:
        """The run's processes now: its cgroup's, else the launcher's tree."""
        return self.cgroup.processes() if self.cgroup is not None else self._processes()

    def _processes(self) -> list[int]:
        """The run's processes where no cgroup holds them: the runner's launcher and everything below it."""
        if self.process is None:
            return []
        return [self.process.pid, *cpu_priority.descendants(self.process.pid)]

    def spawn(self) -> subprocess.Popen | ZygoteRun:
        """Start the sandbox's process: the runner forked by the zygote, or RUNNER_BOOTSTRAP in a `bwrap` of its own,
        which runs the code its stdin starts with (the runner's, or a session's kernel: isolation.preamble)."""
        if self.zygote is not None:
            try:
                self.process = self._start_in_zygote(self.zygote)
            except ZygoteUnavailable as exc:
                if self.zygote.refused is None:  # else said once, when it was refused
                    log.warning("starting this sandbox run with bwrap instead: %s", exc)
        if self.process is None:
            self.process = subprocess.Popen(
                self.argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=self.stderr,
                start_new_session=True,
                pass_fds=[fd for pair in self.slot_fds for fd in pair],
            )
            self.runner_slot_fds = self.slot_fds
            with contextlib.suppress(ProcessLookupError):  # reaped already: a cancel killed it at once
                self.pidfd = os.pidfd_open(self.process.pid)
        self.phases.append(("spawned", time.monotonic()))
        if self.stopped:  # cancelled while it was starting
            self.kill()
        return self.process

    def _start_in_zygote(self, zygote: Zygote) -> ZygoteRun:
        """The run's cgroups are joined by its init through descriptors opened here (the kernel checks the opener's
        rights); its tests' memory cgroups' descriptors are 3, 4, ... in the runner."""
        procs = [_open(Path(path), os.O_WRONLY) for path in self.cgroup.procs_files()]
        try:
            slots = [fd for pair in self.slot_fds for fd in pair]
            run = zygote.start_run(self.size, self.env, procs, slots, self.stderr.fileno())
        finally:
            for fd in procs:
                os.close(fd)
        self.runner_slot_fds = [[3 + 2 * i, 4 + 2 * i] for i in range(len(self.slot_fds))]
        return run

    def kill(self) -> None:
        self.stopped = True
        if self.process is not None and self.process.poll() is None:
            self.killed = True
            if self.yielded:  # an idle process must first get a CPU to exit: not behind grading work
                self._unyield_cpu()
            if isinstance(self.process, ZygoteRun):
                self.process.kill()
                return
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGKILL)

    def __exit__(self, *exc: object) -> None:
        self.kill()
        if self.process is not None:
            self.process.wait()
            for stream in (self.process.stdin, self.process.stdout):
                with contextlib.suppress(OSError):
                    stream.close()
        self.stderr.close()
        if self.pidfd is not None:
            os.close(self.pidfd)
        for fd in (fd for pair in self.slot_fds for fd in pair):
            os.close(fd)
        if self.cgroup is not None:
            killed = self.cgroup.close()
            self.leftovers = killed if self.ended_by_itself else 0
        if self.root is not None:
            shutil.rmtree(self.root, ignore_errors=True)
        self.phases.append(("closed", time.monotonic()))
