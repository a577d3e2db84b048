"""The cost of running a program suite's tests apart from the program, per language, against today's other path.

Each language whose program suites run apart (Language.apart_tests: the tests in a process of their own, the
program in another, plain data between them; sandbox/runner.py run_suite_apart) judges the same MultiPL-E suites
(tests/multiple_cases.py: HumanEval_0's prompt, its right and wrong completion, each made distinct by a comment so
no compile is shared; SQL and Jest, which MultiPL-E lacks, HumanEval_0's checks written for them below) two ways in
the same run: apart, and with the tests appended to the program in one process (the path of the languages that do
not yet run apart). Every verdict must be the same. Prints seconds per suite
(one sandbox run each, `--threads` at a time) for both and their ratio (the issue's bound: 2x outside Python).
C++, Rust, Java, C#, Scala, Go, D, OCaml and Haskell compile their tests apart into a binary (a jar, an assembly) of
their own (Language.apart_split): with the compile cache on, as the service runs, the samples of one prompt share it,
and each distinct program still compiles (`--no-cache`: every suite compiles its tests too, the cost where no two
samples share a prompt).

    .venv/bin/python bench/tests_apart.py [--suites 40] [--threads 2] [--languages javascript,ruby,...] [--no-cache]
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from sandbox.compile_cache import CompileCache
from sandbox.executor import Executor, Limits
from sandbox.judge import LocalJudge, ProgramTest, TestSuite
from sandbox.languages import Language, get_language
from tests.multiple_cases import CASES, MultiplECase

LIMITS = Limits(time_s=10, wall_s=20, total_s=120)
# MultiPL-E's language field for each of ours, and a comment there (`{}` its text)
ROWS = {
    "javascript": ("js", "// {}"), "typescript": ("ts", "// {}"), "ruby": ("rb", "# {}"), "php": ("php", "// {}"),
    "lua": ("lua", "-- {}"), "perl": ("pl", "# {}"), "bash": ("sh", "# {}"), "racket": ("rkt", "; {}"),
    "elixir": ("elixir", "# {}"), "clojure": ("clj", "; {}"), "r": ("r", "# {}"), "cpp": ("cpp", "// {}"),
    "rust": ("rs", "// {}"), "java": ("java", "// {}"), "csharp": ("cs", "// {}"), "scala": ("scala", "// {}"),
    "go_test": ("go_test.go", "// {}"), "d_ut": ("d", "// {}"), "ocaml": ("ml", "(* {} *)"),
    "haskell": ("hs", "-- {}"), "sql": ("sql", "-- {}"), "jest": ("jest", "// {}"),
}  # fmt: skip
# Jest has no MultiPL-E row: HumanEval_0's checks as a describe block of TypeScript tests.
JEST_CASE = MultiplECase(
    language="jest",
    name="has_close_elements",
    prompt="function has_close_elements(numbers: number[], threshold: number): boolean {\n",
    tests="describe('has_close_elements', () => {\n"
    + "".join(
        f"  test('case {i}', () => {{ expect(has_close_elements({numbers}, {threshold})).toBe({want}); }});\n"
        for i, (numbers, threshold, want) in enumerate((
            ([1.0, 2.0, 3.9, 4.0, 5.0, 2.2], 0.3, "true"), ([1.0, 2.0, 3.9, 4.0, 5.0, 2.2], 0.05, "false"),
            ([1.0, 2.0, 5.9, 4.0, 5.0], 0.95, "true"), ([1.0, 2.0, 5.9, 4.0, 5.0], 0.8, "false"),
            ([1.1, 2.2, 3.1, 4.1, 5.1], 1.0, "true"), ([1.1, 2.2, 3.1, 4.1, 5.1], 0.5, "false"),
        ))
    )
    + "});\n",
    right="  return numbers.some((x, i) => numbers.some((y, j) => i < j && Math.abs(x - y) < threshold));\n}\n",
    wrong="  return numbers.length > 0;\n}\n",
)  # fmt: skip
# SQL has no MultiPL-E row: a suite of the same size, HumanEval_0's checks of the program's table of pairs.
SQL_CASE = MultiplECase(
    language="sql",
    name="close_pairs",
    prompt="CREATE TABLE numbers(list INTEGER, x REAL);\n"
    "INSERT INTO numbers VALUES (1, 1.0), (1, 2.0), (1, 3.9), (1, 4.0), (1, 5.0), (1, 2.2), (2, 1.0), (2, 2.0),"
    " (2, 5.9), (2, 4.0), (2, 5.0);\n",
    tests="".join(
        f"SELECT CASE WHEN (SELECT close FROM answer WHERE list = {n} AND threshold = {t}) = {want} THEN 'ok' "
        "ELSE json('wrong') END;\n"
        for n, t, want in ((1, 0.3, 1), (1, 0.05, 0), (2, 0.95, 1), (2, 0.8, 0), (1, 1.0, 1), (1, 0.5, 1))
    ),
    right="CREATE TABLE answer AS SELECT list, threshold, EXISTS (SELECT 1 FROM numbers a JOIN numbers b"
    " ON a.list = b.list AND a.rowid < b.rowid AND abs(a.x - b.x) < threshold WHERE a.list = l.list) AS close\n"
    "FROM (SELECT DISTINCT list FROM numbers) l, (SELECT column1 AS threshold FROM (VALUES (0.3), (0.05), (0.95),"
    " (0.8), (1.0), (0.5)));\n",
    wrong="CREATE TABLE answer AS SELECT list, threshold, 1 AS close FROM (SELECT DISTINCT list FROM numbers),"
    " (SELECT column1 AS threshold FROM (VALUES (0.3), (0.05), (0.95), (0.8), (1.0), (0.5)));\n",
)


def suites(lang: Language, count: int) -> list[tuple[str, TestSuite, bool]]:
    """(program, suite, whether it is right), alternating right and wrong, each program distinct."""
    row, comment = ROWS[lang.name]
    case = next(case for case in (*CASES, JEST_CASE, SQL_CASE) if case.language == row)
    suite = TestSuite("program", (ProgramTest(case.tests, case.prompt),))
    return [  # the comment last: bash's completion leaves its function open, PHP's program opens with <?php
        (f"{case.prompt}{(case.wrong, case.right)[i % 2 == 0]}\n{comment.format(f'variant {i}')}", suite, i % 2 == 0)
        for i in range(count)
    ]


def judged(
    judge: LocalJudge, lang: Language, work: list[tuple[str, TestSuite, bool]], threads: int
) -> tuple[float, list[bool]]:
    """Seconds for the whole `work`, `threads` suites at a time, and whether each passed."""
    started = time.perf_counter()
    with ThreadPoolExecutor(threads) as pool:
        reports = list(pool.map(lambda item: judge.judge(lang, item[0], item[1], LIMITS), work))
    return time.perf_counter() - started, [report.pass_fraction == 1.0 for report in reports]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--suites", type=int, default=40)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--languages", default=",".join(ROWS))
    parser.add_argument("--no-cache", action="store_true", help="no compile cache: compiled tests built per suite")
    args = parser.parse_args()
    cache = None if args.no_cache else CompileCache(tempfile.mkdtemp(prefix="tests-apart-"), 256 * 1024 * 1024)
    judge = LocalJudge(Executor(compile_cache=cache))
    print(f"{'language':<12} {'apart s/suite':>14} {'appended s/suite':>17} {'apart / appended':>17}")
    for name in args.languages.split(","):
        lang = get_language(name)
        appended = dataclasses.replace(lang, apart_tests=(), apart_split=None)
        work = suites(lang, args.suites)
        judged(judge, lang, work[:2], args.threads)  # warm: the zygote, the page cache
        apart_s, apart_passed = judged(judge, lang, work, args.threads)
        appended_s, appended_passed = judged(judge, appended, work, args.threads)
        expected = [right for _, _, right in work]
        if apart_passed != expected or appended_passed != expected:
            sys.exit(f"{name}: verdicts differ from the expected (apart {apart_passed}, appended {appended_passed})")
        per_apart, per_appended = apart_s / len(work), appended_s / len(work)
        print(f"{name:<12} {per_apart:>14.3f} {per_appended:>17.3f} {per_apart / per_appended:>16.2f}x")


if __name__ == "__main__":
    main()
