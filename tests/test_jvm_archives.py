"""JVM tools start from their class-data archives (sandbox/languages/java.py `archived`), in the real sandbox.

Each archived tool (javac, scalac, clojure, the Kotlin script runner) runs there with its Language's own argv plus
`-Xshare:on`, which makes the JVM fail where the archive cannot be mapped (missing, stale, unreadable as the
sandbox's user, outside its mounts) instead of quietly starting without it. And the JVM's notes about an archive
it cannot use stay off the program's output: a stale archive must not turn a right answer wrong.
"""

from __future__ import annotations

import shlex
import subprocess
from pathlib import Path

import pytest

from sandbox.executor import Limits
from sandbox.judge import LocalJudge, StdioTest, Verdict
from sandbox.judge import TestSuite as Suite
from sandbox.languages import LANGUAGES
from sandbox.languages.java import archived

# language -> (the argv to check: compile or run, its source file's name, a program, what running it prints)
TOOLS = {
    "java": (
        "compile",
        "Main.java",
        "public class Main { public static void main(String[] a) { System.out.println(3); } }",
    ),
    "scala": ("compile", "main.scala", "object Main { def main(a: Array[String]): Unit = println(3) }"),
    "clojure": ("run", "main.clj", "(println (+ 1 2))"),
    "kotlin_script": ("run", "main.kts", "println(1 + 2)"),
}
CLOJURE_JAR = "/usr/share/java/clojure-1.11.jar"
LIMITS = Limits(time_s=30, wall_s=60, memory_mb=1536)


@pytest.fixture(scope="module")
def judge() -> LocalJudge:
    return LocalJudge()


def strictly(argv: tuple[str, ...]) -> list[str]:
    """`argv` failing where its archive cannot be mapped: -Xshare:on beside its SharedArchiveFile flag."""
    at = next(i for i, arg in enumerate(argv) if "SharedArchiveFile" in arg)
    prefix = "-J" if argv[at].startswith("-J") else ""
    return [*argv[:at], f"{prefix}-Xshare:on", *argv[at:]]


@pytest.mark.parametrize("language", list(TOOLS))
def test_a_jvm_tool_maps_its_class_data_archive_in_the_sandbox(judge: LocalJudge, language: str) -> None:
    which, file_name, program = TOOLS[language]
    lang = LANGUAGES[language]
    argv = [arg.replace("{memory_mb}", "512").replace("{source}", file_name) for arg in getattr(lang, which)]
    script = f"printf '%s\\n' {shlex.quote(program)} > {file_name}\nexec {shlex.join(strictly(tuple(argv)))}\n"
    expected = "" if which == "compile" else "3"
    report = judge.judge("bash", script, Suite("stdio", (StdioTest("", expected),)), LIMITS)
    assert [test.verdict for test in report.tests] == [Verdict.ACCEPTED], report.to_dict()


def test_a_stale_archive_leaves_the_programs_output_alone(tmp_path: Path) -> None:
    """An archive made for other jars (here: one made for another class path) is skipped without a word on stdout;
    without the flags that keep the JVM's notes off, the note would be part of the answer."""
    archive = tmp_path / "other.jsa"
    dump = ["/usr/bin/java", f"-XX:ArchiveClassesAtExit={archive}", "-cp", CLOJURE_JAR, "clojure.main", "-e", "1"]
    subprocess.run(dump, capture_output=True, check=True)
    plain = ("/usr/bin/java", "-Xmx256m", "clojure.main", "-e", "(println 3)")
    other_class_path = ["-cp", f"{tmp_path}:{CLOJURE_JAR}"]  # not the archive's: a directory before its jar
    quiet = [*archived(plain[:2], str(archive)), *other_class_path, *plain[2:]]
    noted = [plain[0], f"-XX:SharedArchiveFile={archive}", *other_class_path, *plain[1:]]
    assert subprocess.run(quiet, capture_output=True, text=True, check=True).stdout == "3\n"
    assert subprocess.run(noted, capture_output=True, text=True, check=True).stdout != "3\n"  # the control
