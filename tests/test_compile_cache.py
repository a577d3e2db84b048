"""The compile cache (sandbox/compile_cache.py) with the real sandbox and compilers: identical programs compile once,
in one process and across threads at once; what is kept runs as the first compile's output did; compile errors are
kept, compiles cut off by a limit are not; keys change with the code, the limits and the toolchain on disk; the
directory is bounded and must be private; the sandbox service reports hits in its results and /metrics."""

from __future__ import annotations

import dataclasses
import os
import stat
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from reward_api.local import LocalServer
from sandbox.compile_cache import CompileCache
from sandbox.executor import Execution, Executor, Limits, _job
from sandbox.executor import TestInput as Input
from sandbox.languages import get_language
from sandbox.runner import pack_outputs
from tests.scrape import metric

LIMITS = Limits(time_s=2, compile_s=30)
SUM_C = '#include <stdio.h>\nint main(void){int a,b;scanf("%d %d",&a,&b);printf("%d\\n",a+b);return 0;}\n'
SUM_GO = 'package main\nimport "fmt"\nfunc main(){ var a, b int; fmt.Scan(&a, &b); fmt.Println(a + b) }\n'
SUM_JAVA = (
    "import java.util.*;\npublic class Sum { public static void main(String[] a) {\n"
    "  Scanner s = new Scanner(System.in); System.out.println(s.nextInt() + s.nextInt()); } }\n"
)
INPUTS = [Input("1 2\n"), Input("20 22\n")]
# g++ instantiating 2^40 templates: cut off by the compile's CPU limit (g++ exits 4, "internal compiler error")
TEMPLATE_BOMB = """
template <int N, unsigned M> struct X { enum : long { v = X<N - 1, M * 2>::v + X<N - 1, M * 2 + 1>::v }; };
template <unsigned M> struct X<0, M> { enum : long { v = M }; };
int main() { return X<40, 1>::v > 0; }
"""


@pytest.fixture
def cache(tmp_path: Path) -> CompileCache:
    return CompileCache(tmp_path / "compiled", 256 * 1024 * 1024)


@pytest.fixture
def executor(cache: CompileCache) -> Executor:
    return Executor(compile_cache=cache)


def outputs(execution: Execution) -> list[str]:
    return [test.stdout if test is not None else "not run" for test in execution.tests]


@pytest.mark.parametrize(("language", "code"), [("c", SUM_C), ("go", SUM_GO), ("java", SUM_JAVA)])
def test_an_identical_program_runs_the_kept_compile(executor: Executor, language: str, code: str) -> None:
    first = executor.run(language, code, INPUTS, LIMITS)
    second = executor.run(language, code, INPUTS, LIMITS)
    assert first.details["compile_cache"] == "miss" and second.details["compile_cache"] == "hit"
    assert outputs(first) == outputs(second) == ["3\n", "42\n"]
    assert second.compile is not None and second.compile.ok
    assert second.compile.cpu_s == first.compile.cpu_s  # the compile step reported is the one that ran


def test_a_changed_program_compiles_again(executor: Executor) -> None:
    executor.run("c", SUM_C, INPUTS, LIMITS)
    changed = executor.run("c", SUM_C.replace("a+b", "a*b"), INPUTS, LIMITS)
    assert changed.details["compile_cache"] == "miss"
    assert outputs(changed) == ["2\n", "440\n"]


def test_a_compile_error_is_kept_and_answered_without_a_sandbox(executor: Executor) -> None:
    broken = "int main(void) { return undeclared; }\n"
    first = executor.run("c", broken, INPUTS, LIMITS)
    started = time.perf_counter()
    second = executor.run("c", broken, INPUTS, LIMITS)
    assert time.perf_counter() - started < first.compile.wall_s  # no compiler, no sandbox
    assert second.details["compile_cache"] == "hit"
    assert second.compile is not None and second.compile.exit_code == first.compile.exit_code != 0
    assert "undeclared" in second.compile.stderr and second.compile.stderr == first.compile.stderr
    assert second.tests == [None, None]


def test_a_compile_cut_off_by_its_limit_is_not_kept(executor: Executor) -> None:
    limits = dataclasses.replace(LIMITS, compile_s=1)
    runs = [executor.run("cpp", TEMPLATE_BOMB, INPUTS, limits) for _ in range(2)]
    for run in runs:
        assert run.compile is not None and not run.compile.ok and run.compile.cpu_s >= 0.9
        assert run.details["compile_cache"] == "miss"


def test_identical_programs_at_once_compile_once(executor: Executor, cache: CompileCache) -> None:
    """The samples of one prompt in a batch: the first compiles, the others wait for it and run its output."""
    with ThreadPoolExecutor(4) as pool:
        runs = list(pool.map(lambda _: executor.run("go", SUM_GO, INPUTS, LIMITS), range(4)))
    assert sorted(run.details["compile_cache"] for run in runs) == ["hit", "hit", "hit", "miss"]
    assert all(outputs(run) == ["3\n", "42\n"] for run in runs)
    assert [path.suffix for path in cache.directory.iterdir()] == [".bin"]  # one entry, no lock left behind


def test_output_over_the_entry_bound_is_compiled_every_time(tmp_path: Path) -> None:
    small = CompileCache(tmp_path / "compiled", 1024 * 1024)  # entries up to 256 KB: a Go binary is ~2 MB
    executor = Executor(compile_cache=small)
    runs = [executor.run("go", SUM_GO, INPUTS, LIMITS) for _ in range(2)]
    assert [run.details["compile_cache"] for run in runs] == ["miss", "miss"]
    assert all(outputs(run) == ["3\n", "42\n"] for run in runs)
    assert not list(small.directory.iterdir())


def test_keys_follow_code_limits_and_toolchain(tmp_path: Path) -> None:
    c = get_language("c")
    compiler = tmp_path / "cc"
    compiler.write_text("#!/bin/sh\n")
    own = dataclasses.replace(c, compile=(str(compiler), *c.compile[1:]))

    def key(lang, code=SUM_C, limits=LIMITS) -> str:
        return CompileCache.key(lang, _job(lang, code, INPUTS, limits, 1, False), limits.disk_mb, limits.processes)

    base = key(own)
    assert key(own) == base
    assert key(own, SUM_C + "\n") != base
    assert key(own, limits=dataclasses.replace(LIMITS, compile_s=5)) != base
    assert key(own, limits=dataclasses.replace(LIMITS, disk_mb=8)) != base
    assert key(own, limits=dataclasses.replace(LIMITS, time_s=9)) == base  # the tests' limits: same compile
    assert key(get_language("cpp"), SUM_C) != key(c, SUM_C)
    compiler.write_text("#!/bin/sh\n# upgraded\n")
    assert key(own) != base


def test_least_recently_used_entries_go_past_the_bound(tmp_path: Path) -> None:
    cache = CompileCache(tmp_path / "compiled", 512 * 1024)
    executor = Executor(compile_cache=cache)
    programs = [SUM_C.replace("a+b", f"a+b+{n}") for n in range(40)]  # ~16 KB each: 32 fit
    executor.run("c", programs[0], INPUTS, LIMITS)
    for program in programs[1:]:
        assert executor.run("c", programs[0], INPUTS, LIMITS).details["compile_cache"] == "hit"  # kept in use
        executor.run("c", program, INPUTS, LIMITS)
    sizes = [path.stat().st_size for path in cache.directory.glob("*.bin")]
    assert sum(sizes) <= cache.max_bytes and len(sizes) < len(programs)
    assert executor.run("c", programs[0], INPUTS, LIMITS).details["compile_cache"] == "hit"
    assert executor.run("c", programs[1], INPUTS, LIMITS).details["compile_cache"] == "miss"


def test_a_damaged_entry_is_compiled_again(executor: Executor, cache: CompileCache) -> None:
    executor.run("c", SUM_C, INPUTS, LIMITS)
    (entry,) = cache.directory.glob("*.bin")
    entry.write_bytes(entry.read_bytes()[:100])
    again = executor.run("c", SUM_C, INPUTS, LIMITS)
    assert again.details["compile_cache"] == "miss" and outputs(again) == ["3\n", "42\n"]


def test_a_read_only_directory_costs_compiles_not_runs(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """A cache on a read-only mount: every program compiles and runs as without a cache, and the log says why once."""
    directory = tmp_path / "read-only"
    directory.mkdir(mode=0o700)
    subprocess.run(["mount", "-t", "tmpfs", "-o", "ro,mode=0700,size=1m", "tmpfs", str(directory)], check=True)
    try:
        executor = Executor(compile_cache=CompileCache(directory, 256 * 1024 * 1024))
        runs = [executor.run("c", SUM_C, INPUTS, LIMITS) for _ in range(2)]
    finally:
        subprocess.run(["umount", str(directory)], check=True)
    assert [outputs(run) for run in runs] == [["3\n", "42\n"]] * 2
    assert [run.details["compile_cache"] for run in runs] == ["miss", "miss"]
    assert caplog.text.count("cannot be written (Read-only file system)") == 1, caplog.text


def test_a_directory_others_can_write_is_refused(tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    with pytest.raises(ValueError, match="SANDBOX_COMPILE_CACHE_DIR"):
        CompileCache(shared, 1024 * 1024)
    foreign = tmp_path / "foreign"
    foreign.mkdir(mode=0o700)
    os.chown(foreign, 65534, 65534)  # nobody's
    with pytest.raises(ValueError, match="no one else can write"):
        CompileCache(foreign, 1024 * 1024)


@pytest.mark.parametrize(("setting", "expected"), [("0", None), ("-1", ValueError), ("lots", ValueError)])
def test_configuration(tmp_path: Path, setting: str, expected: type | None) -> None:
    environ = {"SANDBOX_COMPILE_CACHE_MB": setting, "SANDBOX_COMPILE_CACHE_DIR": str(tmp_path / "c")}
    if expected is None:
        assert CompileCache.from_env(environ) is None
    else:
        with pytest.raises(expected, match="SANDBOX_COMPILE_CACHE_MB"):
            CompileCache.from_env(environ)
    environ["SANDBOX_COMPILE_CACHE_MB"] = "64"
    configured = CompileCache.from_env(environ)
    assert configured is not None and configured.max_bytes == 64 * 1024 * 1024


def test_only_plain_readable_files_are_packed(tmp_path: Path) -> None:
    """What a hostile compile (Template Haskell, a build script) could leave beside the source is never kept."""
    (tmp_path / "main.c").write_text("source")
    (tmp_path / "main").write_bytes(b"\x7fELF")
    (tmp_path / "main").chmod(0o755)
    (tmp_path / "classes").mkdir()
    (tmp_path / "classes" / "A.class").write_bytes(b"\xca\xfe")
    assert pack_outputs(str(tmp_path), {"main.c"}, 1024) == {
        "main": [0o755, "f0VMRg=="],
        "classes/A.class": [0o644, "yv4="],
    }
    assert pack_outputs(str(tmp_path), {"main.c"}, 5) is None  # over the bound
    (tmp_path / "link").symlink_to("/etc/passwd")
    assert pack_outputs(str(tmp_path), {"main.c"}, 1024) is None
    (tmp_path / "link").unlink()
    os.mkfifo(tmp_path / "pipe")
    assert pack_outputs(str(tmp_path), {"main.c"}, 1024) is None
    (tmp_path / "pipe").unlink()
    (tmp_path / "main").chmod(0)
    if os.geteuid() != 0:  # root reads it anyway
        assert pack_outputs(str(tmp_path), {"main.c"}, 1024) is None
    assert stat.S_IMODE((tmp_path / "main").stat().st_mode) == 0


def test_the_service_reports_hits(tmp_path: Path) -> None:
    body = {
        "language": "c",
        "code": SUM_C,
        "suite": {"kind": "stdio", "tests": [{"input": "1 2\n", "output": "3"}]},
    }
    env = {"SANDBOX_WORKERS": "2", "SANDBOX_COMPILE_CACHE_DIR": str(tmp_path / "compiled")}
    with LocalServer.sandbox(tmp_path, **env) as server, server.client() as client:
        answers = [client.post("/v1/judge", json=body).json() for _ in range(3)]
        fusion = [
            client.post("/run_code", json={"code": SUM_C, "language": "c", "stdin": "2 2\n"}).json() for _ in "ab"
        ]
        counts = {
            result: metric(server, "sandbox_compile_cache_total", language="c", result=result)
            for result in ("hit", "miss")
        }
    assert [answer["compile_cache"] for answer in answers] == ["miss", "hit", "hit"]
    assert all(answer["tests"][0]["verdict"] == "accepted" for answer in answers)
    assert all(answer["status"] == "Success" and answer["run_result"]["stdout"] == "4\n" for answer in fusion)
    assert counts == {"hit": 3, "miss": 2}  # /run_code's limits are its own: a compile of its own


def test_the_service_without_a_cache(tmp_path: Path) -> None:
    body = {"language": "c", "code": SUM_C, "suite": {"kind": "stdio", "tests": [{"input": "1 2\n", "output": "3"}]}}
    with LocalServer.sandbox(tmp_path, SANDBOX_COMPILE_CACHE_MB="0") as server, server.client() as client:
        answers = [client.post("/v1/judge", json=body).json() for _ in range(2)]
    assert all("compile_cache" not in answer and answer["tests"][0]["verdict"] == "accepted" for answer in answers)
