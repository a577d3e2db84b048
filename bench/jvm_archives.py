"""JVM tools with and without their class-data archives (sandbox/languages/java.py `archived`).

For each archived tool (javac and scalac compiling a small program, clojure and the Kotlin script runner running
one), its Language's own argv runs --rounds times as is and --rounds times with the archive's flags taken out,
alternating, in a scratch directory on this host (no sandbox: the archive's effect alone). Prints the median wall
time of each and the ratio archived / plain (below 1: the archive saves that share of the start).

    .venv/bin/python bench/jvm_archives.py [--rounds 5]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from sandbox.languages import LANGUAGES

# language -> (the argv timed: compile or run, its source file's name, a program)
TOOLS = {
    "java": ("compile", "Main.java", "import java.util.*;\npublic class Main { public static void main(String[] a) "
             "{ System.out.println(new ArrayList<>(List.of(1, 2))); } }\n"),
    "scala": ("compile", "main.scala", "object Main { def main(a: Array[String]): Unit = println(List(1, 2).sum) }\n"),
    "clojure": ("run", "main.clj", "(println (reduce + [1 2]))\n"),
    "kotlin_script": ("run", "main.kts", "println(listOf(1, 2).sum())\n"),
}  # fmt: skip
ARCHIVE_FLAGS = ("SharedArchiveFile", "-Xlog:cds")


def timed(argv: list[str], folder: Path) -> float:
    started = time.perf_counter()
    subprocess.run(argv, cwd=folder, capture_output=True, check=True)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=5)
    rounds = parser.parse_args().rounds
    print(f"{'tool':<14} {'plain s':>8} {'archived s':>10} {'ratio':>6}")
    for language, (which, file_name, program) in TOOLS.items():
        lang = LANGUAGES[language]
        if (missing := lang.missing_tool()) is not None:
            print(f"{language:<14} skipped: {missing} is missing (make languages)", file=sys.stderr)
            continue
        argv = [arg.replace("{memory_mb}", "512").replace("{source}", file_name) for arg in getattr(lang, which)]
        plain = [arg for arg in argv if not any(flag in arg for flag in ARCHIVE_FLAGS)]
        with tempfile.TemporaryDirectory() as folder:
            (Path(folder) / file_name).write_text(program)
            times: dict[str, list[float]] = {"plain": [], "archived": []}
            for round_ in range(rounds):
                print(f"{language}: round {round_ + 1}/{rounds}", file=sys.stderr)
                times["plain"].append(timed(plain, Path(folder)))
                times["archived"].append(timed(argv, Path(folder)))
        plain_s, archived_s = (statistics.median(times[kind]) for kind in ("plain", "archived"))
        print(f"{language:<14} {plain_s:>8.2f} {archived_s:>10.2f} {archived_s / plain_s:>6.2f}")


if __name__ == "__main__":
    main()
