"""Each language through the real sandbox (LocalJudge): accepted, wrong answer, runtime and compile errors, time limit.

One program per language reads `a b` and prints a + b, except that it fails on purpose
for some inputs: a == 0 raises "boom" (a runtime error: the tail of its stderr must be
the verdict's detail) and a < 0 spins forever. One run per language covers the four run
verdicts, so each toolchain compiles once.
"""

from __future__ import annotations

import pytest

from sandbox.executor import Limits
from sandbox.judge import LocalJudge, StdioTest, Verdict
from sandbox.judge import TestSuite as Suite  # not `Test*`: pytest would try to collect it
from sandbox.languages import LANGUAGES

# Languages whose programs are test files (tests/test_program_suites.py) or SQL (no stdin): not stdio programs.
NOT_STDIO = {"pytest", "go_test", "junit", "gtest", "jest", "react", "sql"}

LIMITS = Limits(time_s=1, wall_s=1.5, compile_s=10)
SUITE = Suite(
    "stdio",
    (
        StdioTest("1 2\n", "3"),  # accepted
        StdioTest("2 2\n", "5"),  # wrong answer: the program prints 4
        StdioTest("0 1\n", "1"),  # runtime error: it raises "boom"
        StdioTest("-1 1\n", "0"),  # time limit: it spins
    ),
)
EXPECTED = [Verdict.ACCEPTED, Verdict.WRONG_ANSWER, Verdict.RUNTIME_ERROR, Verdict.TIME_LIMIT]

# What the end of each runtime's stderr shows for the crash: the detail must hold it.
CRASH_TAILS = {
    "python": "ValueError: boom",
    "c": "signal 6: boom",
    "cpp": "what():  boom",
    "java": "IllegalStateException: boom",
    "javascript": "Node.js v",  # Node prints the message first, then ten frames: the tail is frames only
    "typescript": "Node.js v",
    "d_ut": "_d_run_main",
    "go": "panic: boom",
    "rust": "panicked at 'boom'",
    "bash": "exit code 3: boom",
    "php": "RuntimeException: boom",
    "perl": "exit code 255: boom",
    "ruby": "boom (RuntimeError)",
    "lua": "boom\nstack traceback",
    "r": "Error: boom",
    "csharp": "InvalidOperationException: boom",
    "d": "_d_run_main",
    "scala": "IllegalStateException: boom",
    "kotlin_script": "IllegalStateException: boom",
    "racket": "boom\n  context",
    "verilog": "exit code 1",
    "haskell": "main: boom",
    "ocaml": 'Failure("boom")',
    "elixir": "(RuntimeError) boom",
    "clojure": "boom",
    "fortran": "ERROR STOP boom",
}

PROGRAMS = {
    "python": """
a, b = map(int, input().split())
if a == 0:
    raise ValueError("boom")
while a < 0:
    pass
print(a + b)
""",
    "c": r"""
#include <stdio.h>
#include <stdlib.h>
int main(void) {
    volatile long a, b;
    if (scanf("%ld %ld", &a, &b) != 2) return 2;
    if (a == 0) { fprintf(stderr, "boom\n"); abort(); }
    while (a < 0) {}
    printf("%ld\n", a + b);
}
""",
    "cpp": r"""
#include <iostream>
#include <stdexcept>
int main() {
    volatile long a, b;
    long x, y;
    std::cin >> x >> y;
    a = x; b = y;
    if (a == 0) throw std::runtime_error("boom");
    while (a < 0) {}
    std::cout << a + b << std::endl;
}
""",
    "java": """
import java.util.Scanner;
public class Solution {
    public static void main(String[] args) {
        Scanner in = new Scanner(System.in);
        long a = in.nextLong(), b = in.nextLong();
        if (a == 0) throw new IllegalStateException("boom");
        while (a < 0) { a = a | a; }
        System.out.println(a + b);
    }
}
""",
    "javascript": """
const [a, b] = require("fs").readFileSync(0, "utf8").trim().split(/\\s+/).map(Number);
if (a === 0) throw new Error("boom");
while (a < 0) {}
console.log(a + b);
""",
    "go": """
package main

import "fmt"

func main() {
	var a, b int
	fmt.Scan(&a, &b)
	if a == 0 {
		panic("boom")
	}
	for a < 0 {
	}
	fmt.Println(a + b)
}
""",
    "rust": """
use std::io::Read;
fn main() {
    let mut input = String::new();
    std::io::stdin().read_to_string(&mut input).unwrap();
    let v: Vec<i64> = input.split_whitespace().map(|t| t.parse().unwrap()).collect();
    if v[0] == 0 { panic!("boom"); }
    while unsafe { std::ptr::read_volatile(&v[0]) } < 0 {}
    println!("{}", v[0] + v[1]);
}
""",
    "bash": """
read a b
if [ "$a" -eq 0 ]; then echo "boom" >&2; exit 3; fi
while [ "$a" -lt 0 ]; do :; done
echo $((a + b))
""",
    "php": r"""<?php
[$a, $b] = array_map('intval', preg_split('/\s+/', trim(fgets(STDIN))));
if ($a == 0) { throw new RuntimeException("boom"); }
while ($a < 0) {}
echo $a + $b, "\n";
""",
    "perl": r"""
my ($a, $b) = split ' ', <STDIN>;
die "boom\n" if $a == 0;
while ($a < 0) {}
print $a + $b, "\n";
""",
    "ruby": """
a, b = gets.split.map(&:to_i)
raise "boom" if a == 0
while a < 0; end
puts a + b
""",
    "lua": """
local a, b = io.read("n", "n")
if a == 0 then error("boom") end
while a < 0 do end
print(math.tointeger(a + b))
""",
    "r": r"""
v <- scan(file("stdin"), what = integer(), quiet = TRUE)
if (v[1] == 0) stop("boom")
while (v[1] < 0) {}
cat(v[1] + v[2], "\n")
""",
    "csharp": """
using System;
class Program {
    static void Main() {
        var v = Array.ConvertAll(Console.ReadLine().Split(' ', StringSplitOptions.RemoveEmptyEntries), long.Parse);
        if (v[0] == 0) throw new InvalidOperationException("boom");
        while (v[0] < 0) { v[0] |= v[0]; }
        Console.WriteLine(v[0] + v[1]);
    }
}
""",
    "d": """
import std.stdio, std.conv, std.string, std.array, std.algorithm;
void main() {
    auto v = readln().split().map!(to!long).array;
    if (v[0] == 0) throw new Exception("boom");
    while (v[0] < 0) { v[0] |= v[0]; }
    writeln(v[0] + v[1]);
}
""",
    "scala": r"""
object Main {
  def main(args: Array[String]): Unit = {
    val v = scala.io.StdIn.readLine().trim.split("\\s+").map(_.toLong)
    if (v(0) == 0) throw new IllegalStateException("boom")
    var a = v(0)
    while (a < 0) { a = a | a }
    println(a + v(1))
  }
}
""",
    "kotlin_script": r"""
val v = readLine()!!.trim().split(Regex("\\s+")).map { it.toLong() }
if (v[0] == 0L) throw IllegalStateException("boom")
var a = v[0]
while (a < 0) { a = a or a }
println(a + v[1])
""",
    "racket": """
#lang racket/base
(define a (read))
(define b (read))
(when (= a 0) (error "boom"))
(let loop () (when (< a 0) (loop)))
(displayln (+ a b))
""",
    "verilog": """
module main;
  integer a, b, n;
  initial begin
    n = $fscanf(32'h8000_0000, "%d %d", a, b);
    if (a == 0) begin $display("boom"); $fatal(1, "boom"); end
    while (a < 0) a = a;
    $display("%0d", a + b);
    $finish;
  end
endmodule
""",
    "haskell": """
main :: IO ()
main = do
  [a, b] <- map read . words <$> getLine :: IO [Integer]
  if a == 0 then error "boom" else return ()
  let spin x = if x < 0 then spin x else x
  print (spin a + b)
""",
    "ocaml": r"""
let () =
  Scanf.scanf " %d %d" (fun a b ->
    if a = 0 then failwith "boom";
    let rec spin x = if x < 0 then spin x else x in
    Printf.printf "%d\n" (spin a + b))
""",
    "elixir": """
[a, b] = IO.read(:stdio, :eof) |> String.split() |> Enum.map(&String.to_integer/1)
if a == 0, do: raise "boom"
spin = fn f, x -> if x < 0, do: f.(f, x), else: x end
IO.puts(spin.(spin, a) + b)
""",
    "clojure": r"""
(let [[a b] (map #(Long/parseLong %) (clojure.string/split (clojure.string/trim (read-line)) #"\s+"))]
  (when (zero? a) (throw (IllegalStateException. "boom")))
  (loop [] (when (neg? a) (recur)))
  (println (+ a b)))
""",
    "fortran": """
program main
  implicit none
  integer(8) :: a, b
  read(*, *) a, b
  if (a == 0) error stop "boom"
  do while (a < 0)
  end do
  print '(I0)', a + b
end program main
""",
}

# (language, a program that does not compile, what the compile error names)
COMPILE_ERRORS = [
    ("python", "def main(:\n    pass\n", "SyntaxError"),
    ("c", "int main(void) { return undefined_name; }\n", "undefined_name"),
    ("cpp", "#include <vector>\nint main() { std::vector<int> v = 3; }\n", "main.cpp"),
    ("java", 'public class Main { public static void main(String[] a) { int x = "s"; } }\n', "incompatible types"),
    ("go", 'package main\n\nimport "fmt"\n\nfunc main() {}\n', "imported and not used"),
    ("rust", 'fn main() { let x: i32 = "s"; }\n', "E0308"),  # mismatched types
    ("csharp", 'class P { static void Main() { int x = "s"; } }\n', "CS0029"),
    ("d", 'void main() { int x = "s"; }\n', "cannot implicitly convert"),
    ("scala", 'object Main { def main(a: Array[String]): Unit = { val x: Int = "s" } }\n', "type mismatch"),
    ("haskell", 'main :: IO ()\nmain = putStrLn (1 + "s")\n', "No instance"),
    ("ocaml", 'let () = print_int "s"\n', "This expression has type string"),
    ("fortran", "program main\n  integer :: x\n  x = 'text'\nend program main\n", "Error"),
    ("verilog", "module main; initial begin $display(; end endmodule\n", "syntax error"),
]


@pytest.fixture(scope="module")
def judge() -> LocalJudge:
    return LocalJudge()


PROGRAMS["typescript"] = PROGRAMS["javascript"].replace("const [a, b] =", "const [a, b]: number[] =")
PROGRAMS["d_ut"] = PROGRAMS["d"]  # with its unittest blocks compiled in (there are none): the same program


def test_every_language_has_a_program() -> None:
    assert set(PROGRAMS) == set(CRASH_TAILS) == set(LANGUAGES) - NOT_STDIO


@pytest.mark.parametrize("language", sorted(PROGRAMS))
def test_run_verdicts(judge: LocalJudge, language: str) -> None:
    report = judge.judge(language, PROGRAMS[language], SUITE, LIMITS)
    assert report.compile_error is None and report.sandbox_error is None, report.to_dict()
    assert [t.verdict for t in report.tests] == EXPECTED, report.to_dict()
    wrong, crashed = report.tests[1], report.tests[2]
    assert wrong.detail.startswith("expected '5', got '4"), wrong.detail
    assert CRASH_TAILS[language] in crashed.detail, crashed.detail


@pytest.mark.parametrize(("language", "code", "names"), COMPILE_ERRORS)
def test_compile_error(judge: LocalJudge, language: str, code: str, names: str) -> None:
    report = judge.judge(language, code, SUITE, LIMITS)
    assert [t.verdict for t in report.tests] == [Verdict.COMPILE_ERROR] * len(SUITE.tests)
    assert names in (report.compile_error or ""), report.compile_error


def test_javascript_syntax_error_is_a_runtime_error(judge: LocalJudge) -> None:
    """Node has no separate compile step: a syntax error fails each run."""
    report = judge.judge("javascript", "console.log(;\n", Suite("stdio", (StdioTest("", ""),)), LIMITS)
    [test] = report.tests
    assert test.verdict is Verdict.RUNTIME_ERROR and test.detail.startswith("exit code 1: "), test.detail
