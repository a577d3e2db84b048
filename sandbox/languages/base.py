"""What the sandbox needs to know about a language: its source file, compile and run commands, its toolchain."""

from __future__ import annotations

import dataclasses
import functools
import os
import re
import subprocess
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal, Protocol, TypeVar

from sandbox.languages import apart


class RunLimits(Protocol):
    """The fields of sandbox.executor.Limits a language adjusts (no import: the executor imports languages)."""

    time_s: float
    wall_s: float | None
    memory_mb: int
    compile_s: float
    compile_memory_mb: int
    open_files: int


L = TypeVar("L", bound=RunLimits)


def literal(text: str) -> str:
    """`text` as one argument of a command template, taken as it is (its braces are not template fields)."""
    return text.replace("{", "{{").replace("}", "}}")


@dataclass(frozen=True)
class Language:
    name: str
    source_file: str
    run: tuple[str, ...]
    compile: tuple[str, ...] | None = None
    # RLIMIT_AS works for runtimes that do not reserve huge virtual ranges up front; the
    # JVM, V8, Go and rustc do, so their memory is bounded by the run's cgroup (and flags).
    address_space_limit: bool = True
    compile_address_space_limit: bool = True
    # Tests' stack left to the address space bound: glibc gives every new thread a stack of RLIMIT_STACK, so at
    # the usual 256 MB a C or C++ program's fourth thread would not fit 1 GB; unbounded, threads get glibc's
    # default and the main thread recurses as deep as memory allows. (Runtimes that size their own threads, Rust's,
    # keep the bound: their overflow handler names the overflow.)
    unbounded_stack: bool = False
    python_zygote: bool = False  # run by forking the runner instead of exec'ing an interpreter
    env: dict[str, str] = field(default_factory=dict)
    aliases: tuple[str, ...] = ()
    # `{main}` in the templates: "main", or the name the first of these patterns to match finds in the code (its
    # group; "Main" if none), for JVM languages that name the file or the class to run after the program's own
    main_pattern: tuple[str, ...] = ()
    # Debian packages of the toolchain (`make languages`, python -m sandbox.languages); `package:program` where
    # machine images often ship the program outside dpkg (installed only when the program is missing)
    apt: tuple[str, ...] = ()
    # Debian packages of the runtime's full library set, beyond the default one in `apt` (Python: SandboxFusion's
    # runtime where Debian packages it): installed with `all` (`make languages`, `make test`), read-only to programs.
    full_runtime: tuple[str, ...] = ()
    version: tuple[str, ...] = ()  # prints the toolchain's version (GET /v1/languages)
    binds: tuple[str, ...] = ()  # host paths outside /usr the toolchain reads: bound read-only into the sandbox
    # What the toolchain needs whatever the request asks: a runtime's start-up (JVM, BEAM, R), added to each
    # test's CPU and wall time, and floors for a test's memory and open files and for compiling (scalac, ghc).
    start_s: float = 0.0
    memory_floor_mb: int = 0
    compile_memory_floor_mb: int = 0
    compile_floor_s: float = 0.0
    open_files_floor: int = 0
    # Files the toolchain needs besides its programs (a test framework's jar, library or module): checked like them.
    needs: tuple[str, ...] = ()
    # Shell commands (run from the repository's root) that install what apt does not, e.g. npm packages pinned in
    # sandbox/runtimes/: `make languages` runs them while a program or file of the toolchain is missing.
    setup: tuple[str, ...] = ()
    # How the test framework reports each test (sandbox/test_reports.py): per-test verdicts for program suites.
    report: str = ""
    # Its test libraries report a failure on stderr and still exit 0 (rackunit, clojure.test): MultiPL-E fails
    # any run of a test program that writes to stderr.
    stderr_fails: bool = False
    # What its test libraries print for a failed check when they exit 0 anyway (clojure.test, Mono's Debug.Assert):
    # a run of a test program whose output matches fails.
    failure_pattern: str = ""
    # The language id its test programs run as (MultiPL-E's Go tests are a _test.go file, its D tests unittest
    # blocks): program suites in this language run in that mode.
    tests_run_as: str = ""
    # Code that prints `{marker}` once a program suite's tests have all run, put after them (`tests_done_at` "end"),
    # last in the braced body of the last block whose head matches `tests_block` ("block": the C family's main, D's
    # unittest), last at the indentation the tests end with ("indented": Haskell's `main = do`), or just before the
    # last match of `tests_block` ("before": Fortran's `end program`, a Verilog testbench's `$finish`), or in place of
    # that match, whose first group, the call that runs the tests, it holds as `{run}` ("wrap": LuaUnit's
    # `os.exit(lu.LuaUnit.run())`, which ends the run with the tests' status). A run that does
    # not print it ended before its tests did (exit(0) in the program) and fails. Empty where nothing can be put
    # there: Ruby's and Lua's test libraries end the run themselves (their summary stands in: tests_summary); JUnit
    # and Jest order tests their own way (a passing run of theirs must report one of the reference's tests instead:
    # sandbox/judge.py's program_verdicts).
    tests_done: str = ""
    tests_done_at: Literal["end", "block", "indented", "before", "wrap"] = "end"
    tests_block: str = r"\b[Mm]ain\s*\("
    # Where the test library ends the run itself (tests_done empty): (what the tests' code calls it by, the summary
    # it prints once every test has run). A clean run of such tests without the summary ended before they did
    # (LuaUnit runs inside `os.exit(...)`, Ruby's test/unit at exit, which `exit!` skips).
    tests_summary: tuple[str, str] | None = None
    # Python run in a test's own process to run program suites of this framework apart from the program
    # (sandbox/runner.py run_apart; `{tests}` and `{marker}` are filled in with the reference's tests and the done
    # marker as Python literals): the program runs as Python in a process of its own, reached by its names.
    apart_harness: str = ""
    # How a program suite's tests run apart from the program, each in a process of its own (sandbox/runner.py
    # run_suite_apart): `apart_program` runs the program and answers the tests' requests on fds 3 and 4;
    # `apart_tests` runs the tests' code it reads on stdin, reaching the program by the names it uses, and says on
    # fd 5 that they all ran (templates as `run`'s). Its environment adds `apart_tests_env`.
    apart_program: tuple[str, ...] = ()
    apart_tests: tuple[str, ...] = ()
    apart_tests_env: dict[str, str] = field(default_factory=dict)
    # Where only some of the framework's tests can reach the program as plain data (Jest's: not its classes, objects
    # or callbacks, mocks or spies): whether these tests' code can run apart; the others run after the program.
    apart_when: Callable[[str], bool] | None = None
    # A compiled language's tests apart (C++, Rust, Java, C#, Scala, Go, D, OCaml, Haskell): `apart_split(prompt,
    # program, tests)` gives the program's source with a server of the prompt's entry point and the tests' source with
    # a stub of it (None: the prompt's signature cannot be served, and the tests run after the program); `apart_build`
    # compiles the tests' source (`tests` with the program's extension) to the binary `tests` in a sandbox of its
    # own, which the tests' process runs from memory (`apart_tests`: its argv) while `apart_program` runs the
    # program's.
    apart_split: Callable[[str, str, str], tuple[str, str] | None] | None = None
    apart_build: tuple[str, ...] = ()
    # The program's side of such a split where it compiles otherwise than `compile` (Go's: package main, of two files)
    apart_compile: tuple[str, ...] = ()
    # Its runtime starts processes of its own where a program suite's tests run (a shell's `$(...)`, R's start-up
    # script, the BEAM's helper): its tests may fork. Elsewhere a test is kept to one process (Limits.single_process).
    forks: bool = False
    # What a source file may not turn on (a regular expression), with why: options, preprocessors, plugins and
    # compile-time code of the toolchain's that would run a program of the source's choosing over the whole file, its
    # tests included (GHC's `OPTIONS_GHC -F -pgmF`, Template Haskell). A source that does is a compile error.
    refused_in_source: tuple[str, str] | None = None

    def __post_init__(self) -> None:
        """A language whose tests run apart needs what every tests' process does (sandbox/languages/apart.py): the
        preloaded library, gcc to build it at setup, and the tests' environment."""
        if not self.apart_tests:
            return
        for name, extra in (
            ("apt", ("gcc:/usr/bin/gcc",)),
            ("needs", (apart.NONDUMPABLE,)),
            ("setup", (apart.BUILD_NONDUMPABLE,)),
        ):
            object.__setattr__(self, name, tuple(dict.fromkeys((*getattr(self, name), *extra))))
        object.__setattr__(self, "apart_tests_env", apart.TESTS_ENV | self.apart_tests_env)

    def main_name(self, code: str) -> str:
        """The program's name, `{main}` in the templates (Java: the public class)."""
        if not self.main_pattern:
            return "main"
        found = next(filter(None, (re.search(pattern, code) for pattern in self.main_pattern)), None)
        return found.group(1) if found else "Main"

    def commands(self, code: str, memory_mb: int) -> tuple[str, list[str] | None, list[str]]:
        """Source file name, compile argv (None: interpreted) and run argv for this code."""
        fields = {"main": self.main_name(code), "memory_mb": memory_mb}
        source = self.source_file.format(**fields)
        fields["source"] = source
        compile_argv = [part.format(**fields) for part in self.compile] if self.compile else None
        return source, compile_argv, [part.format(**fields) for part in self.run]

    def apart_commands(self, code: str, memory_mb: int) -> dict[str, object]:
        """What runner.py's run_suite_apart starts: the program's argv, the tests' argv and their environment."""
        fields = {"main": self.main_name(code), "memory_mb": memory_mb}
        fields["source"] = self.source_file.format(**fields)
        return {
            "program": [part.format(**fields) for part in self.apart_program],
            "tests": [part.format(**fields) for part in self.apart_tests],
            "tests_env": self.apart_tests_env,
            "forks": self.forks,
            "report": bool(self.report),  # the tests report each test on fd 5 after "done" (run_suite_apart)
        }

    def tests_builder(self) -> Language:
        """The language that builds the tests' binary of a compiled language's tests apart (apart_build): its source
        `tests` with the program's extension, or named as the program's is where its name is the code's (Java's public
        class)."""
        suffix = os.path.splitext(self.source_file)[1]
        source = self.source_file if "{main}" in self.source_file else f"tests{suffix}"
        return dataclasses.replace(self, source_file=source, compile=self.apart_build)

    def program_builder(self) -> Language:
        """The language that compiles the program's side of a compiled language's tests apart (apart_compile)."""
        return dataclasses.replace(self, compile=self.apart_compile) if self.apart_compile else self

    def with_tests_done(self, tests: str, marker: str) -> str | None:
        """`tests` with the code that prints `marker` after them (tests_done); None where there is no place for it."""
        if not self.tests_done:
            return None
        done = self.tests_done.replace("{marker}", marker)
        if self.tests_done_at == "end":
            return f"{tests}\n{done}\n"
        if self.tests_done_at == "indented":
            indent = re.match(r"[ \t]*", tests.rstrip().rpartition("\n")[2]).group()
            return f"{tests.rstrip()}\n{indent}{done}\n" if indent else None
        if self.tests_done_at in ("before", "wrap"):
            last = next(reversed(list(re.finditer(self.tests_block, tests))), None)
            if last is None:
                return None
            if self.tests_done_at == "wrap":
                return f"{tests[: last.start()]}{done.replace('{run}', last.group(1))}{tests[last.end() :]}"
            return f"{tests[: last.start()]}{done}\n{tests[last.start() :]}"
        where = end_of_block(tests, self.tests_block)
        return None if where is None else f"{tests[:where]}\n{done}\n{tests[where:]}"

    def source_refusal(self, code: str) -> str | None:
        """Why `code` may not be compiled here (refused_in_source), or None."""
        if self.refused_in_source is None:
            return None
        pattern, why = self.refused_in_source
        found = re.search(pattern, code)
        return None if found is None else f"{found.group().strip()[:200]}: {why}"

    def fit(self, limits: L) -> L:
        """`limits` with this toolchain's start-up and floors added (what GET /v1/languages reports)."""
        floors = (self.memory_floor_mb, self.compile_memory_floor_mb, self.compile_floor_s, self.open_files_floor)
        if not (self.start_s or any(floors)):
            return limits
        return dataclasses.replace(
            limits,
            time_s=limits.time_s + self.start_s,
            wall_s=None if limits.wall_s is None else limits.wall_s + self.start_s,
            memory_mb=max(limits.memory_mb, self.memory_floor_mb),
            compile_s=max(limits.compile_s, self.compile_floor_s),
            compile_memory_mb=max(limits.compile_memory_mb, self.compile_memory_floor_mb),
            open_files=max(limits.open_files, self.open_files_floor),
        )

    def missing_tool(self) -> str | None:
        """The first program of the toolchain this host lacks (None: all there)."""
        for argv in (self.compile, self.run):
            if argv and argv[0].startswith("/") and not os.access(argv[0], os.X_OK):
                return argv[0]
        return next((path for path in self.needs if not os.path.exists(path)), None)

    @functools.cached_property
    def toolchain_version(self) -> str:
        """The first line the version command prints ('' when it has none or it fails)."""
        if not self.version or self.missing_tool():
            return ""
        try:
            done = subprocess.run(self.version, capture_output=True, text=True, timeout=30)
        except (OSError, subprocess.TimeoutExpired):
            return ""
        output = (done.stdout + "\n" + done.stderr).splitlines()
        lines = [line.strip() for line in output if line.strip() and "warning" not in line.lower()]  # JVM notices
        return lines[0] if lines else ""


_LAST_RETURN = re.compile(r"\breturn\b[^;{}]*;\s*$")


def end_of_block(code: str, head: str) -> int | None:
    """Where the last statement of the last braced block whose head matches `head` in C-family `code` ends (before
    its closing brace, or before a `return` that ends it); None when there is no such block."""
    heads = list(re.finditer(head, code))
    opening = code.find("{", heads[-1].end()) if heads else -1
    if opening < 0:
        return None
    depth = 0
    for token in apart.BRACE_TOKENS.finditer(code, opening):
        depth += {"{": 1, "}": -1}.get(token.group(), 0)
        if depth == 0:
            last_return = _LAST_RETURN.search(code, opening + 1, token.start())
            return token.start() if last_return is None else last_return.start()
    return None
