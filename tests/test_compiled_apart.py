"""C++, Rust, Java, C#, Scala, Go, D, OCaml and Haskell program suites run apart from the program, as two binaries,
JVMs or Mono processes (sandbox/languages/cpp_apart.py, rust_apart.py, java_apart.py, csharp_apart.py, scala_apart.py,
go_apart.py, d_apart.py, ocaml_apart.py, haskell_apart.py): which prompts are served, and the right answers the two
sides keep (values of every plain type, in-place changes, what a program throws or panics with), each beside wrong
answers that fail; HumanEval-X's rows, and equalities of the program's own.
tests/test_policy_hacks.py holds the wrong programs that would reach the tests."""

from __future__ import annotations

from types import ModuleType

import pytest

from reward_api.graders.code import grade_code
from reward_api.local import LocalServer
from reward_api.profiles import CodeSettings
from sandbox.executor import Limits
from sandbox.judge import LocalJudge, ProgramTest, Verdict
from sandbox.judge import TestSuite as Suite  # not `Test*`: pytest would try to collect it
from sandbox.languages import (
    csharp_apart,
    d_apart,
    go_apart,
    haskell_apart,
    java_apart,
    ocaml_apart,
    rust_apart,
    scala_apart,
)
from sandbox.languages.cpp_apart import Parameter, Signature, entry_signature
from tests.multiple_cases import CASES
from tests.test_policy_hacks import CPP_MARKER_EXIT, JAVA_MARKER_EXIT

LIMITS = Limits(time_s=10, wall_s=15, compile_s=60, total_s=120)

HUMANEVAL_X_PROMPT = (
    "/*\nCheck if in given vector of numbers, are any two numbers closer to each other than\ngiven threshold.\n*/\n"
    "#include<stdio.h>\n#include<vector>\n#include<math.h>\nusing namespace std;\n"
    "bool has_close_elements(vector<float> numbers, float threshold){\n"
)


def served(returns: str, name: str, *parameters: tuple[str, str]) -> Signature:
    return Signature(returns, name, tuple(Parameter(type_text, name) for type_text, name in parameters))


SIGNATURES = [  # (prompt, the signature served, or None: the tests run after the program)
    (
        "#include<bits/stdc++.h>\n// doc\nbool has_close_elements(std::vector<float> numbers, float threshold) {\n",
        served("bool", "has_close_elements", ("std::vector<float>", "numbers"), ("float", "threshold")),
    ),
    (HUMANEVAL_X_PROMPT, served("bool", "has_close_elements", ("vector<float>", "numbers"), ("float", "threshold"))),
    (
        "std::vector<std::tuple<long, long>> get_row(std::vector<std::vector<long>> lst, long x) {\n",
        served(
            "std::vector<std::tuple<long, long>>", "get_row", ("std::vector<std::vector<long>>", "lst"), ("long", "x")
        ),
    ),
    (
        "std::optional<std::string> longest(std::vector<std::string> strings) {\n",
        served("std::optional<std::string>", "longest", ("std::vector<std::string>", "strings")),
    ),
    (
        "std::map<std::string,long> histogram(std::string test) {\n",
        served("std::map<std::string,long>", "histogram", ("std::string", "test")),
    ),
    ("void sort_in_place(std::vector<long>& xs) {\n", served("void", "sort_in_place", ("std::vector<long>&", "xs"))),
    ("long total(const std::vector<long> &xs) {\n", served("long", "total", ("const std::vector<long> &", "xs"))),
    ("// returns {1, 2}; see f(x)\nstd::vector<long> f(long n) {\n", served("std::vector<long>", "f", ("long", "n"))),
    ("static inline long answer() {\n", served("long", "answer")),
    ("std::vector<std::any> filter_integers(std::vector<std::any> values) {\n", None),  # not plain data
    ("long first(long* xs) {\n", None),
    ("struct Point { long x; };\nlong norm(Point p) {\n", None),
    ("long with_default(long x = 1) {\n", None),
    ("#include <vector>\n// no function is left open\n", None),
    ("long done(long x) { return x; }\n", None),
]


@pytest.mark.parametrize(("prompt", "expected"), SIGNATURES)
def test_the_entry_point_served_is_the_prompts_open_function(prompt: str, expected: Signature | None) -> None:
    assert entry_signature(prompt) == expected


def test_only_non_const_references_are_copied_back() -> None:
    assert Parameter("std::vector<long>&", "xs").changed_in_place
    assert not Parameter("const std::vector<long>&", "xs").changed_in_place
    assert not Parameter("std::vector<long>", "xs").changed_in_place


RUST_SIGNATURES = [  # (prompt, (name, [(parameter, its type, the type the server decodes)], returns) or None)
    (
        "/// doc\nfn has_close_elements(numbers: Vec<f64>, threshold: f64) -> bool {\n",
        ("has_close_elements", [("numbers", "Vec<f64>", "Vec<f64>"), ("threshold", "f64", "f64")], "bool"),
    ),
    (
        "use std::collections::HashMap;\nfn histogram(test: &str) -> HashMap<String, isize> {\n",
        ("histogram", [("test", "&str", "String")], "HashMap<String, isize>"),
    ),
    (
        "fn get_row(lst: Vec<Vec<isize>>, x: isize) -> Vec<(isize, isize)> {\n",
        ("get_row", [("lst", "Vec<Vec<isize>>", "Vec<Vec<isize>>"), ("x", "isize", "isize")], "Vec<(isize, isize)>"),
    ),
    (
        "fn sort_in_place(mut xs: &mut Vec<i64>, also: &[i64]) {\n",
        ("sort_in_place", [("xs", "&mut Vec<i64>", "Vec<i64>"), ("also", "&[i64]", "Vec<i64>")], ""),
    ),
    (
        "fn longest(strings: Vec<String>) -> Option<String> {\n",
        ("longest", [("strings", "Vec<String>", "Vec<String>")], "Option<String>"),
    ),
    ("fn unit() -> () {\n", ("unit", [], "")),
    ("struct P { x: isize }\nfn norm(p: P) -> isize {\n", None),
    ("fn first<T: Clone>(xs: Vec<T>) -> T {\n", None),
    ("fn longest<'a>(a: &'a str, b: &'a str) -> &'a str {\n", None),
    ("fn sort_slice(xs: &mut [i64]) {\n", None),  # a slice cannot take the sorted Vec back
    ("fn done(x: isize) -> isize { x }\n", None),
]  # fmt: skip


@pytest.mark.parametrize(("prompt", "expected"), RUST_SIGNATURES)
def test_the_rust_entry_point_served_is_the_prompts_open_function(prompt: str, expected: tuple | None) -> None:
    found = rust_apart.entry_signature(prompt)
    if expected is None:
        assert found is None
        return
    assert found is not None
    assert (found.name, [(p.name, p.type, p.owned) for p in found.parameters], found.returns) == expected


JAVA_SIGNATURES = [  # (prompt, (class, static, returns, name, [(type, parameter)]) or None)
    (
        "import java.util.*;\nclass Problem {\n    // doc\n"
        "    public static boolean hasCloseElements(ArrayList<Float> numbers, float threshold) {\n",
        ("Problem", True, "boolean", "hasCloseElements", [("ArrayList<Float>", "numbers"), ("float", "threshold")]),
    ),
    (
        "class Solution {\n    /** doc */\n"
        "    public boolean hasCloseElements(List<Double> numbers, double threshold) {\n",
        ("Solution", False, "boolean", "hasCloseElements", [("List<Double>", "numbers"), ("double", "threshold")]),
    ),
    (
        "class Problem {\n    public static Pair<Long, Long> bounds(ArrayList<Long> xs, final long k) {\n",
        ("Problem", True, "Pair<Long, Long>", "bounds", [("ArrayList<Long>", "xs"), ("long", "k")]),
    ),
    (
        "class Problem {\n    public static HashMap<String,Long> histogram(String test) {\n",
        ("Problem", True, "HashMap<String,Long>", "histogram", [("String", "test")]),
    ),
    ("class Problem {\n    public static void reset() {\n", ("Problem", True, "void", "reset", [])),
    ("class Problem {\n    public static long[] sorted(long[] xs) {\n", None),  # arrays are not served
    ("class Problem {\n    public static <T> T first(ArrayList<T> xs) {\n", None),
    ("class Problem {\n    public static Object same(Object x) {\n", None),
    ("class Point {}\nclass Problem {\n    public static long norm(Point p) {\n", None),
    ("public static long orphan(long x) {\n", None),  # no class around it
]  # fmt: skip


CS_SIGNATURES = [  # (prompt, (class, static, returns, name, [(type, parameter)]) or None)
    (
        "using System.Collections.Generic;\nclass Problem {\n    // doc\n"
        "    public static bool HasCloseElements(List<float> numbers, float threshold) {\n",
        ("Problem", True, "bool", "HasCloseElements", [("List<float>", "numbers"), ("float", "threshold")]),
    ),
    (
        "class Problem {\n    public static Dictionary<string,long> Histogram(string test) {\n",
        ("Problem", True, "Dictionary<string,long>", "Histogram", [("string", "test")]),
    ),
    (
        "class Problem {\n    public static Tuple<Nullable<long>, long?> Bounds(List<long> lst) {\n",
        ("Problem", True, "Tuple<Nullable<long>, long?>", "Bounds", [("List<long>", "lst")]),
    ),
    (
        "class Solution {\n    internal long Add(long x,\n        long y) {\n",
        ("Solution", False, "long", "Add", [("long", "x"), ("long", "y")]),
    ),
    ("class Problem {\n    public static void Reset() {\n", ("Problem", True, "void", "Reset", [])),
    ("class Problem {\n    public static long[] Sorted(long[] xs) {\n", None),  # arrays are not served
    ("class Problem {\n    public static object Same(object x) {\n", None),
    ("class Problem {\n    public static void Bump(ref long x) {\n", None),
    ("class Problem {\n    public static long Sum(params long[] xs) {\n", None),
    ("class Point {}\nclass Problem {\n    public static long Norm(Point p) {\n", None),
    ("public static long Orphan(long x) {\n", None),  # no class around it
]  # fmt: skip


CLASS_SIGNATURES = [(java_apart, *row) for row in JAVA_SIGNATURES] + [(csharp_apart, *row) for row in CS_SIGNATURES]


@pytest.mark.parametrize(("language", "prompt", "expected"), CLASS_SIGNATURES)
def test_the_entry_point_served_is_the_prompts_open_method(language: ModuleType, prompt: str, expected: tuple) -> None:
    """Java's and C#'s (sandbox/languages/class_methods.py)."""
    found = language.entry_signature(prompt)
    described = found and (
        found.owner,
        found.static,
        found.returns,
        found.name,
        [(p.type, p.name) for p in found.parameters],
    )
    assert described == expected


SCALA_SIGNATURES = [  # (prompt, (object, returns, name, [(type, parameter)], the codec of the first type) or None)
    (
        "import scala.collection.mutable._\nobject Problem {\n    // doc\n"
        "    def hasCloseElements(numbers : List[Float], threshold : Float) : Boolean = {\n",
        ("Problem", "Boolean", "hasCloseElements", [("List[Float]", "numbers"), ("Float", "threshold")],
         "_root_.judge.Plain.boolean"),
    ),
    (
        "object Problem {\n    def bounds(lst : List[(Long, Long)]) : Tuple2[Option[Long], Either[String, Char]] = {\n",
        ("Problem", "Tuple2[Option[Long], Either[String, Char]]", "bounds", [("List[(Long, Long)]", "lst")],
         "_root_.judge.Plain.tuple2(_root_.judge.Plain.option(_root_.judge.Plain.long), "
         "_root_.judge.Plain.either(_root_.judge.Plain.string, _root_.judge.Plain.char))"),
    ),
    (
        "object Problem {\n    def histogram(test : String) : Map[String,Long] = {\n",
        ("Problem", "Map[String,Long]", "histogram", [("String", "test")],
         "_root_.judge.Plain.map(_root_.judge.Plain.string, _root_.judge.Plain.long, "
         "(pairs: _root_.scala.collection.Seq[(String, Long)]) => Map[String, Long](pairs: _*))"),
    ),
    ("object Problem {\n    def reset() : Unit = {\n", ("Problem", "Unit", "reset", [], "_root_.judge.Plain.unit")),
    ("object Problem {\n    def sorted(xs : Array[Long]) : Array[Long] = {\n", None),  # arrays are not served
    ("object Problem {\n    def first[T](xs : List[T]) : T = {\n", None),
    ("object Problem {\n    def same(x : Any) : Any = {\n", None),
    ("object Problem {\n    def apply(f : Long => Long) : Long = {\n", None),
    ("case class Point(x: Long)\nobject Problem {\n    def norm(p : Point) : Long = {\n", None),
    ("class Solution {\n    def norm(x : Long) : Long = {\n", None),  # a method of an instance
]  # fmt: skip


@pytest.mark.parametrize(("prompt", "expected"), SCALA_SIGNATURES)
def test_the_scala_entry_point_served_is_the_prompts_open_method(prompt: str, expected: tuple | None) -> None:
    found = scala_apart.entry_signature(prompt)
    described = found and (
        found.owner,
        found.returns,
        found.name,
        [(p.type, p.name) for p in found.parameters],
        scala_apart.codec(found.returns),
    )
    assert described == expected


GO_SIGNATURES = [  # (prompt, (name, [(parameter, type)], [result types]) or None)
    (
        'package p_test\n\nimport (\n    "testing"\n)\n\n// doc\n'
        "func has_close_elements(numbers []float64, threshold float64) bool {\n",
        ("has_close_elements", [("numbers", "[]float64"), ("threshold", "float64")], ["bool"]),
    ),
    (
        "package main\n\nfunc Bounds(a, b int, names map[string][]int64) (low, high [2]uint8) {\n",
        ("Bounds", [("a", "int"), ("b", "int"), ("names", "map[string][]int64")], ["[2]uint8", "[2]uint8"]),
    ),
    ("package main\n\nfunc Pair(x string) (int, rune) {\n", ("Pair", [("x", "string")], ["int", "rune"])),
    ("package main\n\nfunc Reset() {\n", ("Reset", [], [])),
    ("package main\n\nfunc Any(xs []interface{}) []interface{} {\n", None),  # interface values are not served
    ("package main\n\nfunc Sum(xs ...int) int {\n", None),
    ("package main\n\nfunc Deref(x *int) int {\n", None),
    ("package main\n\ntype P struct{ X int }\n\nfunc Norm(p P) int {\n", None),
    ("package main\n\nfunc Apply(f func(int) int) int {\n", None),
    ("func Orphan(x int) int {\n", None),  # no package clause: not a Go file to build
]


@pytest.mark.parametrize(("prompt", "expected"), GO_SIGNATURES)
def test_the_go_entry_point_served_is_the_prompts_open_function(prompt: str, expected: tuple | None) -> None:
    found = go_apart.entry_signature(prompt)
    assert (found and (found.name, list(found.parameters), list(found.results))) == expected


D_SIGNATURES = [  # (prompt, (returns, name, [(type, parameter)]) or None)
    (
        "import std.math;\n/*\n doc\n*/\nbool has_close_elements(float[] numbers, float threshold) \n",
        ("bool", "has_close_elements", [("float[]", "numbers"), ("float", "threshold")]),
    ),
    (
        "import std.typecons;\nTuple!(Nullable!(long), long[string]) bounds(const(char)[] text, long[][] rows) {\n",
        ("Tuple!(Nullable!(long), long[string])", "bounds", [("const(char)[]", "text"), ("long[][]", "rows")]),
    ),
    ("void reset() \n", ("void", "reset", [])),
    ("void bump(ref long x) \n", None),  # a reference is not plain data
    ("T first(T)(T[] xs) \n", None),
    ("class Point {}\nlong norm(Point p) \n", None),
    ("long deref(long* x) \n", None),
]  # fmt: skip


@pytest.mark.parametrize(("prompt", "expected"), D_SIGNATURES)
def test_the_d_entry_point_served_is_the_prompts_open_function(prompt: str, expected: tuple | None) -> None:
    found = d_apart.entry_signature(prompt)
    assert (found and (found.returns, found.name, list(found.parameters))) == expected


ML_SIGNATURES = [  # (prompt, (name, [(parameter, type)], returns, the codec of the result) or None)
    (
        "(** doc *)\nlet has_close_elements (numbers : float list) (threshold : float) : bool =",
        ("has_close_elements", [("numbers", "float list"), ("threshold", "float")], "bool", "judge_bool"),
    ),
    (
        "let rec pairs (xs : (int * string) list) : (int * string list) option array =",
        ("pairs", [("xs", "(int * string) list")], "(int * string list) option array",
         "(judge_array (judge_option (judge_tuple2 judge_int (judge_list judge_string))))"),
    ),
    ("let apply (f : int -> int) : int =", None),  # a function is not plain data
    ("let first (xs : 'a list) : 'a =", None),
    ("type point = { x : int }\nlet norm (p : point) : int =", None),
    ("let limit : int =", None),  # a value: nothing to call
]  # fmt: skip


HS_SIGNATURES = [  # (prompt, (name, [(parameter, type)], returns, the codec of the result) or None)
    (
        "-- | doc\nhasCloseElements :: [Float] -> Float -> Bool\nhasCloseElements numbers threshold =",
        ("hasCloseElements", [("numbers", "[Float]"), ("threshold", "Float")], "Bool", "judgeBool"),
    ),
    (
        "pairs :: [(Int, String)] -> Maybe (Integer, [Double], Char)\npairs xs =",
        ("pairs", [("xs", "[(Int, String)]")], "Maybe (Integer, [Double], Char)",
         "(judgeMaybe (judgeTuple3 judgeInteger (judgeList judgeDouble) judgeChar))"),
    ),
    ("f :: Int\n  -> (Bool, ())\nf x' =", ("f", [("x'", "Int")], "(Bool, ())", "(judgeTuple2 judgeBool judgeUnit)")),
    ("apply :: (Int -> Int) -> Int\napply f =", None),  # a function is not plain data
    ("first :: [a] -> a\nfirst xs =", None),
    ("largest :: Ord a => [a] -> a\nlargest xs =", None),
    ("data Point = Point Int\nnorm :: Point -> Int\nnorm p =", None),
    ("limit :: Int\nlimit =", None),  # a value: nothing to call
    ("count :: [Int] -> Int\ncount =", None),  # point-free: no parameter to send
]  # fmt: skip


# OCaml's and Haskell's open functions (apart.OpenFunction), each with the codec of its result.
OPEN_FUNCTIONS = [(ocaml_apart, *row) for row in ML_SIGNATURES] + [(haskell_apart, *row) for row in HS_SIGNATURES]


@pytest.mark.parametrize(("split", "prompt", "expected"), OPEN_FUNCTIONS)
def test_the_ocaml_and_haskell_entry_points_served_are_the_prompts_open_functions(
    split: ModuleType, prompt: str, expected: tuple | None
) -> None:
    found = split.entry_signature(prompt)
    described = found and (found.name, list(found.parameters), found.returns, split.codec(found.returns))
    assert described == expected


def test_every_case_kept_runs_apart() -> None:
    """The cases below are served: each runs as two processes, not appended."""
    assert all(csharp_apart.entry_signature(CS_HEAD + prompt) for prompt, *_ in CS_KEPT.values())
    assert all(scala_apart.entry_signature(SCALA_HEAD + prompt) for prompt, *_ in SCALA_KEPT.values())
    assert all(go_apart.entry_signature(GO_HEAD + prompt) for prompt, *_ in GO_KEPT.values())
    assert all(d_apart.entry_signature(D_HEAD + prompt) for prompt, *_ in D_KEPT.values())
    assert all(ocaml_apart.entry_signature(ML_HEAD + prompt) for prompt, *_ in ML_KEPT.values())
    assert all(haskell_apart.entry_signature(HS_HEAD + prompt) for prompt, *_ in HS_KEPT.values())


@pytest.fixture(scope="module")
def judge() -> LocalJudge:
    return LocalJudge()


HEADERS = ("algorithm", "assert.h", "map", "optional", "stdexcept", "string", "tuple", "vector")
HEAD = "".join(f"#include <{header}>\n" for header in HEADERS)
# (prompt, tests, right body, {what to replace in the body: by what, each a wrong answer}); each prompt's open
# function is served to its tests apart from the program.
KEPT = {
    "vectors of vectors and tuples": (
        "std::vector<std::tuple<long, long>> get_row(std::vector<std::vector<long>> lst, long x) {\n",
        "int main() {\n    auto candidate = get_row;\n"
        "    assert(candidate({{1, 2}, {3, 2}}, 2) == (std::vector<std::tuple<long, long>>({{0, 1}, {1, 1}})));\n"
        "    assert(candidate({}, 1).empty());\n}\n",
        "    std::vector<std::tuple<long, long>> found;\n"
        "    for (long i = 0; i < (long)lst.size(); i++)\n"
        "        for (long j = 0; j < (long)lst[i].size(); j++)\n"
        "            if (lst[i][j] == x) found.emplace_back(i, j);\n    return found;\n}\n",
        {"found.emplace_back(i, j)": "found.emplace_back(j, i)", "lst[i][j] == x": "lst[i][j] != x"},
    ),
    "strings, optionals and exact floats": (
        "std::optional<std::string> longest(std::vector<std::string> strings, double bias) {\n",
        "int main() {\n    assert(longest({}, 0.1) == std::nullopt);\n"
        '    assert(longest({"a", "bbb", "cc"}, 0.1) == std::optional<std::string>("bbb0.1"));\n'
        '    assert(*longest({std::string("x\\0y", 3)}, 0.25) == std::string("x\\0y0.25", 7));\n}\n',
        "    if (strings.empty()) return std::nullopt;\n    std::string best = strings[0];\n"
        "    for (const auto &s : strings) if (s.size() > best.size()) best = s;\n"
        "    std::string tail = std::to_string(bias);\n    tail.erase(tail.find_last_not_of('0') + 1);\n"
        "    return best + tail;\n}\n",
        {
            "return std::nullopt;": 'return "";',
            "s.size() > best.size()": "s.size() < best.size()",
            "(bias)": "(bias * 2)",
        },
    ),
    "maps, bools and chars": (
        "std::map<char, bool> seen(std::string text) {\n",
        "int main() {\n    auto got = seen(\"aab\");\n    assert(got.size() == 2 && got['a'] && !got['b']);\n}\n",
        "    std::map<char, bool> counts;\n    for (char c : text) counts[c] = counts.count(c) > 0;\n"
        "    return counts;\n}\n",
        {"counts.count(c) > 0": "true"},
    ),
    "a vector changed in place": (
        "void sort_in_place(std::vector<long>& xs, const std::vector<long>& also) {\n",
        "int main() {\n    std::vector<long> xs = {3, 1, 2}, kept = {9, 8};\n"
        "    sort_in_place(xs, kept);\n"
        "    assert(xs == (std::vector<long>{1, 2, 3}) && kept == (std::vector<long>{9, 8}));\n}\n",
        "    std::sort(xs.begin(), xs.end());\n}\n",
        {"std::sort(xs.begin(), xs.end());": "xs.push_back(0);"},
    ),
    "what the program throws": (
        "long checked(long x) {\n",
        "#include <string>\nint main() {\n    assert(checked(2) == 2);\n"
        "    try {\n        checked(-1);\n        assert(false);\n"
        "    } catch (const std::exception &e) {\n"
        '        assert(std::string(e.what()).find("negative") != std::string::npos);\n    }\n}\n',
        '    if (x < 0) throw std::invalid_argument("negative");\n    return x;\n}\n',
        {'throw std::invalid_argument("negative")': "return 0", '"negative"': '"other"'},
    ),
}  # fmt: skip


RUST_HEAD = "use std::collections::{BTreeSet, HashMap};\n"
RUST_KEPT = {
    "vectors of tuples": (
        "fn get_row(lst: Vec<Vec<isize>>, x: isize) -> Vec<(isize, isize)> {\n",
        "fn main() {\n    let candidate = get_row;\n"
        "    assert_eq!(candidate(vec![vec![1, 2], vec![3, 2]], 2), vec![(0, 1), (1, 1)]);\n"
        "    assert_eq!(candidate(vec![], 1), vec![]);\n}\n",
        "    let mut found = Vec::new();\n    for (i, row) in lst.iter().enumerate() {\n"
        "        for (j, &value) in row.iter().enumerate() {\n            if value == x {\n"
        "                found.push((i as isize, j as isize));\n            }\n        }\n    }\n    found\n}\n",
        {"found.push((i as isize, j as isize))": "found.push((j as isize, i as isize))", "value == x": "value != x"},
    ),
    "strings, options, chars and exact floats": (
        "fn longest(strings: &[String], bias: f32, mark: char) -> Option<String> {\n",
        "fn main() {\n    assert_eq!(longest(&[], 0.1, 'x'), None);\n"
        '    let words = vec![String::from("a"), String::from("bbb"), String::from("cé")];\n'
        '    assert_eq!(longest(&words, 0.1, \'é\'), Some(String::from("bbb0.1é")));\n}\n',
        "    let best = strings.iter().max_by_key(|s| s.chars().count())?;\n"
        '    Some(format!("{}{}{}", best, bias, mark))\n}\n',
        {"max_by_key": "min_by_key", "bias, mark": "bias * 2.0, mark", "?;": ".unwrap();"},
    ),
    "maps, sets and a str": (
        "fn histogram(text: &str) -> (HashMap<char, usize>, BTreeSet<char>) {\n",
        "fn main() {\n    let (counts, letters) = histogram(\"aab\");\n"
        "    assert_eq!(counts, HashMap::from([('a', 2), ('b', 1)]));\n"
        "    assert_eq!(letters.into_iter().collect::<String>(), \"ab\");\n}\n",
        "    let mut counts = HashMap::new();\n    for c in text.chars() {\n"
        "        *counts.entry(c).or_insert(0) += 1;\n    }\n    let letters = text.chars().collect();\n"
        "    (counts, letters)\n}\n",
        {"+= 1": "+= 2", "text.chars().collect()": "BTreeSet::new()"},
    ),
    "a vector changed in place": (
        "fn sort_in_place(xs: &mut Vec<i64>, also: &Vec<i64>) {\n",
        "fn main() {\n    let mut xs = vec![3, 1, 2];\n    let kept = vec![9, 8];\n"
        "    sort_in_place(&mut xs, &kept);\n    assert_eq!((xs, kept), (vec![1, 2, 3], vec![9, 8]));\n}\n",
        "    let _ = also;\n    xs.sort();\n}\n",
        {"xs.sort();": "xs.push(0);"},
    ),
    "what the program panics with": (
        "fn checked(x: i32) -> i32 {\n",
        "fn main() {\n    assert_eq!(checked(2), 2);\n"
        "    let message = std::panic::catch_unwind(|| checked(-1)).unwrap_err();\n"
        '    assert!(message.downcast_ref::<String>().unwrap().contains("negative"));\n}\n',
        '    if x < 0 {\n        panic!("negative: {}", x);\n    }\n    x\n}\n',
        {'panic!("negative: {}", x)': "return 0", '"negative: {}"': '"other: {}"'},
    ),
}  # fmt: skip
JAVA_HEAD = "import java.util.*;\nimport org.javatuples.*;\nclass Problem {\n"
JAVA_MAIN = "    public static void main(String[] args) {\n"
JAVA_KEPT = {
    "lists of pairs": (
        "    public static ArrayList<Pair<Long, Long>> getRow(ArrayList<ArrayList<Long>> lst, long x) {\n",
        f"{JAVA_MAIN}        ArrayList<ArrayList<Long>> rows = new ArrayList<>(Arrays.asList(\n"
        "            new ArrayList<Long>(Arrays.asList(1l, 2l)), new ArrayList<Long>(Arrays.asList(3l, 2l))));\n"
        "        ArrayList<Pair<Long, Long>> expected = new ArrayList<>();\n"
        "        expected.add(Pair.with(0l, 1l));\n        expected.add(Pair.with(1l, 1l));\n"
        "        assert(getRow(rows, 2l).equals(expected));\n"
        "        assert(getRow(new ArrayList<ArrayList<Long>>(), 1l).isEmpty());\n    }\n}\n",
        "        ArrayList<Pair<Long, Long>> found = new ArrayList<>();\n"
        "        for (int i = 0; i < lst.size(); i++)\n            for (int j = 0; j < lst.get(i).size(); j++)\n"
        "                if (lst.get(i).get(j) == x) found.add(Pair.with((long) i, (long) j));\n"
        "        return found;\n    }\n",
        {"Pair.with((long) i, (long) j)": "Pair.with((long) j, (long) i)", "== x": "!= x"},
    ),
    "strings, optionals and maps": (
        "    public static Optional<String> longest(ArrayList<String> strings, HashMap<String, Long> bonus) {\n",
        f"{JAVA_MAIN}        HashMap<String, Long> none = new HashMap<>();\n"
        "        assert(longest(new ArrayList<String>(), none).equals(Optional.empty()));\n"
        '        ArrayList<String> words = new ArrayList<>(Arrays.asList("a", "bbb", "cé"));\n'
        '        assert(longest(words, new HashMap<>(Map.of("a", 5l))).equals(Optional.of("a5")));\n    }\n}\n',
        "        String best = null;\n        long score = -1;\n        for (String s : strings) {\n"
        "            long mine = s.length() + bonus.getOrDefault(s, 0l);\n"
        "            if (mine > score) {\n                best = s;\n                score = mine;\n            }\n"
        "        }\n"
        "        return best == null ? Optional.empty() : Optional.of(best + bonus.getOrDefault(best, 0l));\n    }\n",
        {"mine > score": "mine < score", "Optional.empty()": 'Optional.of("")'},
    ),
    "a list changed in place, exact doubles": (
        "    public static void sortInPlace(ArrayList<Double> xs, ArrayList<Double> kept) {\n",
        f"{JAVA_MAIN}        ArrayList<Double> xs = new ArrayList<>(Arrays.asList(0.3, 0.1, 0.2));\n"
        "        ArrayList<Double> kept = new ArrayList<>(Arrays.asList(9.5));\n        sortInPlace(xs, kept);\n"
        "        assert xs.equals(Arrays.asList(0.1, 0.2, 0.3)) && kept.equals(Arrays.asList(9.5));\n    }\n}\n",
        "        Collections.sort(xs);\n    }\n",
        {"Collections.sort(xs);": "xs.add(0.0);"},
    ),
    "what the program throws": (
        "    public static long checked(long x) {\n",
        f"{JAVA_MAIN}        assert(checked(2l) == 2l);\n        try {{\n            checked(-1l);\n"
        "            assert false;\n        } catch (RuntimeException e) {\n"
        '            assert e.getMessage().contains("negative");\n        }\n    }\n}\n',
        '        if (x < 0) throw new IllegalArgumentException("negative");\n        return x;\n    }\n',
        {'throw new IllegalArgumentException("negative")': "return 0", '"negative"': '"other"'},
    ),
}  # fmt: skip
CS_HEAD = (
    "using System;\nusing System.Numerics;\nusing System.Diagnostics;\nusing System.Collections.Generic;\n"
    "using System.Linq;\nusing System.Text;\nusing System.Security.Cryptography;\nclass Problem {\n"
)
CS_MAIN = "    public static void Main(string[] args) {\n"
CS_KEPT = {
    "lists of tuples": (
        "    public static List<Tuple<long, long>> GetRow(List<List<long>> lst, long x) {\n",
        f"{CS_MAIN}        var rows = new List<List<long>>{{new List<long>{{1L, 2L}}, new List<long>{{3L, 2L}}}};\n"
        "        var got = GetRow(rows, 2L);\n"
        "        Debug.Assert(got.Count == 2 && got[0].Equals(Tuple.Create(0L, 1L)));\n"
        "        Debug.Assert(got[1].Equals(Tuple.Create(1L, 1L)));\n"
        "        Debug.Assert(GetRow(new List<List<long>>(), 1L).Count == 0);\n    }\n}\n",
        "        var found = new List<Tuple<long, long>>();\n"
        "        for (int i = 0; i < lst.Count; i++)\n            for (int j = 0; j < lst[i].Count; j++)\n"
        "                if (lst[i][j] == x) found.Add(Tuple.Create((long)i, (long)j));\n"
        "        return found;\n    }\n",
        {"Tuple.Create((long)i, (long)j)": "Tuple.Create((long)j, (long)i)", "== x": "!= x"},
    ),
    "strings, null and dictionaries": (
        "    public static string Longest(List<string> strings, Dictionary<string, long> bonus) {\n",
        f"{CS_MAIN}        Debug.Assert(Longest(new List<string>(), new Dictionary<string, long>()) == null);\n"
        '        var words = new List<string>{"a", "bbb", "cé"};\n'
        '        Debug.Assert(Longest(words, new Dictionary<string, long>{{"a", 5L}}) == "a5é");\n    }\n}\n',
        "        string best = null;\n        long score = -1;\n        foreach (var s in strings) {\n"
        "            long mine = s.Length + (bonus.ContainsKey(s) ? bonus[s] : 0L);\n"
        "            if (mine > score) { best = s; score = mine; }\n        }\n"
        '        return best == null ? null : best + (bonus.ContainsKey(best) ? bonus[best] : 0L) + "é";\n    }\n',
        {"mine > score": "mine < score", "best == null ? null": 'best == null ? ""', '"é"': '"e"'},
    ),
    "a nullable long from a set": (
        "    public static long? SmallestEven(HashSet<long> xs) {\n",
        f"{CS_MAIN}        Debug.Assert(SmallestEven(new HashSet<long>{{3L, 8L, 4L}}) == 4L);\n"
        "        Debug.Assert(SmallestEven(new HashSet<long>{1L}) == null);\n    }\n}\n",
        "        long? best = null;\n"
        "        foreach (var x in xs) if (x % 2 == 0 && (best == null || x < best)) best = x;\n"
        "        return best;\n    }\n",
        {"long? best = null;": "long? best = 0;", "x < best": "x > best"},
    ),
    "a list changed in place, exact doubles": (
        "    public static void SortInPlace(List<double> xs, List<double> kept) {\n",
        f"{CS_MAIN}        var xs = new List<double>{{0.3, 0.1, 0.2}};\n        var kept = new List<double>{{9.5}};\n"
        "        SortInPlace(xs, kept);\n"
        "        Debug.Assert(xs.SequenceEqual(new List<double>{0.1, 0.2, 0.3}) && kept.SequenceEqual(new[] {9.5}));\n"
        "    }\n}\n",
        "        xs.Sort();\n    }\n",
        {"xs.Sort();": "xs.Add(0.0);"},
    ),
    "a dictionary changed in place, chars": (
        "    public static void CountInto(Dictionary<char, long> counts, string text) {\n",
        f"{CS_MAIN}        var counts = new Dictionary<char, long>{{{{'z', 1L}}}};\n"
        '        CountInto(counts, "aéa");\n'
        "        Debug.Assert(counts.Count == 3 && counts['a'] == 2L && counts['é'] == 1L && counts['z'] == 1L);\n"
        "    }\n}\n",
        "        foreach (char c in text) counts[c] = counts.ContainsKey(c) ? counts[c] + 1 : 1;\n    }\n",
        {"counts[c] + 1": "counts[c] + 2", "foreach (char c in text)": "foreach (char c in text.ToUpper())"},
    ),
    "what the program throws": (
        "    public static long Checked(long x) {\n",
        f"{CS_MAIN}        Debug.Assert(Checked(2L) == 2L);\n        try {{\n            Checked(-1L);\n"
        "            Debug.Assert(false);\n        } catch (Exception e) {\n"
        '            Debug.Assert(e.Message.Contains("negative"));\n        }\n    }\n}\n',
        '        if (x < 0) throw new ArgumentException("negative");\n        return x;\n    }\n',
        {'throw new ArgumentException("negative")': "return 0", '"negative"': '"other"'},
    ),
}  # fmt: skip
SCALA_HEAD = "import scala.math._\nimport scala.collection.mutable._\nobject Problem {\n"
SCALA_MAIN = "    def main(args: Array[String]) = {\n"
SCALA_KEPT = {
    "lists of tuples": (
        "    def getRow(lst : List[List[Long]], x : Long) : List[Tuple2[Long, Long]] = {\n",
        f"{SCALA_MAIN}    assert(getRow(List(List(1l, 2l), List(3l, 2l)), 2l).equals(List((0l, 1l), (1l, 1l))));\n"
        "    assert(getRow(List[List[Long]](), 1l).isEmpty);\n    }\n}\n",
        "        for ((row, i) <- lst.zipWithIndex; (value, j) <- row.zipWithIndex; if value == x)\n"
        "            yield (i.toLong, j.toLong)\n    }\n",
        {"(i.toLong, j.toLong)": "(j.toLong, i.toLong)", "value == x": "value != x"},
    ),
    "options, strings and maps": (
        "    def longest(strings : List[String], bonus : Map[String,Long]) : Option[String] = {\n",
        f"{SCALA_MAIN}    assert(longest(List[String](), Map[String,Long]()).equals(None));\n"
        '    assert(longest(List("a", "bbb", "cé"), Map[String,Long]("a" -> 5l)).equals(Some("a5é")));\n    }\n}\n',
        "        if (strings.isEmpty) None\n"
        "        else { val best = strings.maxBy(s => s.length + bonus.getOrElse(s, 0l))\n"
        '            Some(best + bonus.getOrElse(best, 0l) + "é") }\n    }\n',
        {"maxBy": "minBy", "None\n": 'Some("")\n', '"é"': '"e"'},
    ),
    "a map changed in place, chars": (
        "    def countInto(counts : Map[Char,Long], text : String) : Unit = {\n",
        f"{SCALA_MAIN}    val counts = Map[Char,Long]('z' -> 1l)\n    countInto(counts, \"aéa\")\n"
        "    assert(counts.equals(Map[Char,Long]('a' -> 2l, 'é' -> 1l, 'z' -> 1l)));\n    }\n}\n",
        "        for (c <- text) counts(c) = counts.getOrElse(c, 0l) + 1\n    }\n",
        {"+ 1\n": "+ 2\n", "c <- text": "c <- text.toUpperCase"},
    ),
    "what the program throws, either and exact doubles": (
        "    def half(x : Long) : Either[String, Double] = {\n",
        f"{SCALA_MAIN}    assert(half(3l).equals(Right(1.5)));\n    assert(half(0l).equals(Left(\"zero\")));\n"
        "    try {\n        half(-1l)\n        assert(false)\n"
        '    } catch { case e: RuntimeException => assert(e.getMessage.contains("negative")) }\n    }\n}\n',
        '        if (x < 0) throw new IllegalArgumentException("negative")\n'
        '        if (x == 0) Left("zero") else Right(x / 2.0)\n    }\n',
        {'throw new IllegalArgumentException("negative")': "return Right(0.0)", "x / 2.0": "x / 2"},
    ),
}  # fmt: skip
GO_HEAD = 'package kept_test\n\nimport (\n\t"fmt"\n\t"reflect"\n\t"sort"\n\t"strings"\n\t"testing"\n)\n\n'
GO_KEPT = {
    "slices of arrays, nil kept": (
        "func get_row(lst [][]int, x int) [][2]int {\n",
        "func TestRow(t *testing.T) {\n"
        "\tif got := get_row([][]int{{1, 2}, {3, 2}}, 2); !reflect.DeepEqual(got, [][2]int{{0, 1}, {1, 1}}) {\n"
        '\t\tt.Fatal("rows", got)\n\t}\n'
        '\tif got := get_row([][]int{}, 1); got != nil {\n\t\tt.Fatal("not nil", got)\n\t}\n}\n',
        "\tvar found [][2]int\n\tfor i, row := range lst {\n\t\tfor j, value := range row {\n"
        "\t\t\tif value == x {\n\t\t\t\tfound = append(found, [2]int{i, j})\n\t\t\t}\n\t\t}\n\t}\n"
        "\treturn found\n}\n",
        {"[2]int{i, j}": "[2]int{j, i}", "var found [][2]int": "found := [][2]int{}"},
    ),
    "strings, several results, exact floats and big integers": (
        "func stats(words []string, bias float32, big uint64) (string, float32, int64) {\n",
        "func TestStats(t *testing.T) {\n"
        '\tlongest, scaled, half := stats([]string{"a", "bbb", "cé"}, 0.1, 18446744073709551614)\n'
        '\tif longest != "bbbé" || scaled != 0.1*2 || half != 9223372036854775807 {\n'
        '\t\tt.Fatal(longest, scaled, half)\n\t}\n}\n',
        '\tbest := ""\n\tfor _, word := range words {\n\t\tif len(word) > len(best) {\n\t\t\tbest = word\n\t\t}\n\t}\n'
        '\treturn best + "é", bias * 2, int64(big / 2)\n}\n',
        {"len(word) > len(best)": "len(word) < len(best)", "bias * 2": "bias * 3", "big / 2": "big / 3"},
    ),
    "a slice and a map changed in place": (
        "func sort_in_place(xs []int, counts map[string]int) {\n",
        "func TestSorted(t *testing.T) {\n\txs := []int{3, 1, 2}\n\tcounts := map[string]int{\"kept\": 1}\n"
        "\tsort_in_place(xs, counts)\n"
        '\tsorted := map[string]int{"kept": 1, "sorted": 1}\n'
        "\tif !reflect.DeepEqual(xs, []int{1, 2, 3}) || !reflect.DeepEqual(counts, sorted) {\n"
        '\t\tt.Fatal(xs, counts)\n\t}\n}\n',
        '\tsort.Ints(xs)\n\tcounts["sorted"]++\n}\n',
        {"sort.Ints(xs)": "_ = xs", 'counts["sorted"]++': 'counts["sorted"] += 2'},
    ),
    "what the program panics with": (
        "func checked(x int) int {\n",
        "func TestChecked(t *testing.T) {\n\tif checked(2) != 2 {\n\t\tt.Fatal(\"two\")\n\t}\n"
        "\tdefer func() {\n"
        '\t\tif thrown := recover(); thrown == nil || !strings.Contains(fmt.Sprint(thrown), "negative") {\n'
        '\t\t\tt.Fatal("no panic", thrown)\n\t\t}\n\t}()\n\tchecked(-1)\n}\n',
        '\tif x < 0 {\n\t\tpanic("negative")\n\t}\n\treturn x\n}\n',
        {'panic("negative")': "return 0", '"negative"': '"other"'},
    ),
}  # fmt: skip
D_HEAD = "import std.typecons;\nimport std.math;\n"
D_KEPT = {
    "arrays of tuples": (
        "Tuple!(long, long)[] get_row(long[][] lst, long x) \n",
        "unittest\n{\n    assert(get_row([[1L, 2L], [3L, 2L]], 2L) == [tuple(0L, 1L), tuple(1L, 1L)]);\n"
        "    assert(get_row([], 1L) == []);\n}\nvoid main(){}",
        "{\n    Tuple!(long, long)[] found;\n    foreach (i, row; lst)\n        foreach (j, value; row)\n"
        "            if (value == x) found ~= tuple(cast(long) i, cast(long) j);\n    return found;\n}\n",
        {"tuple(cast(long) i, cast(long) j)": "tuple(cast(long) j, cast(long) i)", "value == x": "value != x"},
    ),
    "strings, nullables and associative arrays": (
        "Nullable!(string) longest(string[] strings, long[string] bonus) \n",
        "unittest\n{\n    assert(longest([], null).isNull);\n"
        '    assert(longest(["a", "bbb", "cé"], ["a": 5L]).get == "a5é");\n}\nvoid main(){}',
        "{\n    import std.conv : to;\n    if (strings.length == 0) return Nullable!(string).init;\n"
        "    string best = strings[0];\n    foreach (s; strings)\n"
        "        if (s.length + bonus.get(s, 0) > best.length + bonus.get(best, 0)) best = s;\n"
        '    return nullable(best ~ to!string(bonus.get(best, 0)) ~ "é");\n}\n',
        {" > best.length": " < best.length", "Nullable!(string).init": 'nullable("")', '"é"': '"e"'},
    ),
    "an array and an associative array changed in place": (
        "void sort_in_place(long[] xs, long[string] counts) \n",
        'unittest\n{\n    auto xs = [3L, 1L, 2L];\n    auto counts = ["kept": 1L];\n    sort_in_place(xs, counts);\n'
        '    assert(xs == [1L, 2L, 3L] && counts == ["kept": 1L, "sorted": 1L]);\n}\nvoid main(){}',
        '{\n    import std.algorithm : sort;\n    xs.sort();\n    counts["sorted"] = 1;\n}\n',
        {"xs.sort();": "xs[0] = 0;", 'counts["sorted"] = 1;': 'counts["sorted"] = 2;'},
    ),
    "what the program throws": (
        "long checked(long x) \n",
        "unittest\n{\n    import std.algorithm : canFind;\n    import std.exception : collectExceptionMsg;\n"
        '    assert(checked(2L) == 2L);\n    assert(collectExceptionMsg(checked(-1L)).canFind("negative"));\n}\n'
        "void main(){}",
        '{\n    if (x < 0) throw new Exception("negative");\n    return x;\n}\n',
        {'throw new Exception("negative")': "return 0", '"negative"': '"other"'},
    ),
}  # fmt: skip
ML_HEAD = "(* MultiPL-E's OCaml prompts open with their docstring *)\n"
ML_KEPT = {
    "lists of options of tuples": (
        "let find_pairs (xs : int list) (target : int) : (int * int) option list =",
        "\nlet assertions =\n  (assert (find_pairs [1; 5; 2] 4 = [Some (1, 3); None; Some (2, 2)]));\n"
        "  (assert (find_pairs [] 1 = []));\n  ()\n",
        "\n  List.map (fun x -> if x < target then Some (x, target - x) else None) xs\n",
        {"x < target": "x > target", "Some (x, target - x)": "Some (target - x, x)"},
    ),
    "strings, chars, arrays and exact floats": (
        "let describe (words : string array) (mark : char) (scale : float) : string * float =",
        '\nlet assertions =\n  (assert (describe [|"a"; "bb"|] \'x\' 0.1 = ("a,bbxé", 0.2)));\n  ()\n',
        '\n  (String.concat "," (Array.to_list words) ^ String.make 1 mark ^ "é", scale *. 2.0)\n',
        {'"é"': '"e"', "scale *. 2.0": "scale *. 3.0", '","': '";"'},
    ),
    "what the program raises": (
        "let checked (x : int) : int =",
        "\nlet contains text part =\n  try ignore (Str.search_forward (Str.regexp_string part) text 0); true\n"
        "  with Not_found -> false\n"
        "let assertions =\n  (assert (checked 2 = 2));\n"
        '  (assert (try ignore (checked (-1)); false with Failure message -> contains message "negative"));\n  ()\n',
        '\n  if x < 0 then failwith "negative" else x\n',
        {'failwith "negative"': "0", '"negative"': '"other"'},
    ),
}  # fmt: skip
HS_HEAD = "-- | MultiPL-E's Haskell prompts open with their docstring\n"
HS_KEPT = {
    "lists of Maybe tuples": (
        "findPairs :: [Int] -> Int -> [Maybe (Int, Int)]\nfindPairs xs target =",
        "\nmain :: IO ()\nmain = do\n"
        '  if findPairs [1, 5, 2] 4 == [Just (1, 3), Nothing, Just (2, 2)] then pure () else error "wrong"\n'
        '  if findPairs [] 1 == [] then pure () else error "wrong"\n',
        " map (\\x -> if x < target then Just (x, target - x) else Nothing) xs\n",
        {"x < target": "x > target", "Just (x, target - x)": "Just (target - x, x)"},
    ),
    "strings, chars, big integers and exact doubles, after the prompt's imports": (
        "import Data.List (intercalate)\n\n"
        "describe :: [String] -> Char -> Double -> Integer -> (String, Double, Integer)\n"
        "describe items mark scale big =",
        "\nmain :: IO ()\nmain = do\n"
        '  if describe ["a", "bb"] \'x\' 0.1 (2 ^ 70) == ("a,bbxé", 0.2, 2 ^ 71 + 1) then pure () else error "wrong"\n',
        ' (intercalate "," items ++ [mark] ++ "é", scale * 2, big * 2 + 1)\n',
        {'"é"': '"e"', "scale * 2": "scale * 3", "big * 2 + 1": "big * 2", '","': '";"'},
    ),
    "what the program raises": (
        "import Control.Exception (ErrorCall (..), evaluate, try)\nimport Data.List (isInfixOf)\n\n"
        "checked :: Int -> Int\nchecked x =",
        "\nmain :: IO ()\nmain = do\n  if checked 2 == 2 then pure () else error \"wrong\"\n"
        "  raised <- try (evaluate (checked (-1)))\n  case raised of\n"
        '    Left (ErrorCall message) | "negative" `isInfixOf` message -> pure ()\n    _ -> error "wrong"\n',
        ' if x < 0 then error "negative" else x\n',
        {'error "negative"': "0", '"negative"': '"other"'},
    ),
    "a program with a main of its own": (
        "import Data.Char (toUpper)\n\nshout :: String -> String\nshout text =",
        '\nmain :: IO ()\nmain = do\n  if shout "héllo" == "HÉLLO!" then pure () else error "wrong"\n',
        ' map toUpper text ++ "!"\n\nmain :: IO ()\nmain = putStrLn (shout "hi")\n',
        {'"!"': '"?"', "map toUpper": "map id"},
    ),
}  # fmt: skip
# language -> (what every prompt starts with, {case: (prompt, tests, right body, {replaced: by, each a wrong answer})})
KEPT_BY_LANGUAGE = {
    "cpp": (HEAD, KEPT), "rust": (RUST_HEAD, RUST_KEPT), "java": (JAVA_HEAD, JAVA_KEPT), "csharp": (CS_HEAD, CS_KEPT),
    "scala": (SCALA_HEAD, SCALA_KEPT), "go_test": (GO_HEAD, GO_KEPT),
    "d_ut": (D_HEAD, D_KEPT), "ocaml": (ML_HEAD, ML_KEPT), "haskell": (HS_HEAD, HS_KEPT),
}  # fmt: skip


@pytest.mark.parametrize(
    ("language", "case"), [(lang, case) for lang, (_, cases) in KEPT_BY_LANGUAGE.items() for case in cases]
)
def test_right_answers_keep_their_values_apart(judge: LocalJudge, language: str, case: str) -> None:
    head, cases = KEPT_BY_LANGUAGE[language]
    prompt, tests, right, wrongs = cases[case]
    suite = Suite("program", (ProgramTest(tests, head + prompt),))
    report = judge.judge(language, head + prompt + right, suite, LIMITS)
    assert report.passed == 1, report.to_dict()
    for found, wrong in wrongs.items():
        assert found in right
        report = judge.judge(language, head + prompt + right.replace(found, wrong), suite, LIMITS)
        assert report.passed == 0, (found, wrong, report.to_dict())


# MultiPL-E's C++ rows that return a vector, compared with `==` in the tests: an `operator==` of the program's own
# for that vector, where the tests are appended, is the better match than std's template and holds for any answer.
SORT_PROMPT = "#include<assert.h>\n#include<bits/stdc++.h>\nstd::vector<long> sort_array(std::vector<long> array) {\n"
SORT_TESTS = (
    "}\nint main() {\n    auto candidate = sort_array;\n"
    "    assert(candidate((std::vector<long>({(long)2, (long)1}))) == (std::vector<long>({(long)1, (long)2})));\n"
    "    assert(candidate((std::vector<long>())) == (std::vector<long>()));\n}\n"
)
SORT_ANSWERS = {  # body: its accuracy
    "    std::sort(array.begin(), array.end());\n    return array;": 1.0,
    "    return array;": 0.0,
    "    return array;\n}\n"
    "bool operator==(const std::vector<long> &, const std::vector<long> &) { return true; }\nvoid unused() {": 0.0,
}


@pytest.mark.parametrize("body", list(SORT_ANSWERS))
def test_an_equality_of_the_programs_own_reaches_nothing(judge: LocalJudge, body: str) -> None:
    reference = {"language": "cpp", "prompt": SORT_PROMPT, "tests": SORT_TESTS}
    assert grade_code(f"```cpp\n{body}\n```", reference, CodeSettings(), judge).value == SORT_ANSWERS[body]


def test_tests_that_do_not_compile_are_no_verdict(judge: LocalJudge) -> None:
    """The reference's tests, not the program, failed: an error the trainer sees, never a wrong answer's 0."""
    suite = Suite("program", (ProgramTest("int main() { undeclared(); }\n", HEAD + "long f(long x) {\n"),))
    report = judge.judge("cpp", HEAD + "long f(long x) {\n    return x;\n}\n", suite, LIMITS)
    assert report.sandbox_error is not None and "did not compile apart" in report.sandbox_error, report.to_dict()
    assert [v.verdict for v in report.tests] == [Verdict.SKIPPED]


def test_a_prompt_it_cannot_serve_runs_the_tests_after_the_program(judge: LocalJudge) -> None:
    prompt = HEAD + "struct Point { long x; };\nlong norm(Point p) {\n"
    suite = Suite("program", (ProgramTest("int main() {\n    assert(norm(Point{3}) == 3);\n}\n", prompt),))
    assert judge.judge("cpp", prompt + "    return p.x;\n}\n", suite, LIMITS).passed == 1
    assert judge.judge("cpp", prompt + "    return 0;\n}\n", suite, LIMITS).passed == 0


def test_the_prompt_travels_to_a_sandbox_service(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Graded by the reward service on a sandbox service (RemoteJudge over /v1/judge): the tests still run apart, so a
    completion that redefines their check earns nothing there either."""
    case = next(case for case in CASES if case.language == "cpp")
    redefined = "    return false;\n}\n#undef assert\n#define assert(x) ((void)0)\nvoid unused() {"
    items = [
        {"task": "code", "completion": f"```cpp\n{body}\n```", "reference": case.row()}
        for body in (case.right, case.wrong, redefined)
    ]
    with LocalServer.sandbox(tmp_path_factory.mktemp("sandbox"), SANDBOX_WORKERS="1") as sandbox:
        remote = {"REWARD_API_SANDBOX_URLS": sandbox.url, "REWARD_API_WORKERS": "1"}
        with LocalServer(tmp_path_factory.mktemp("rewards"), **remote) as service, service.client() as rewards:
            results = rewards.post("/v1/rewards", json={"items": items}).json()["results"]
    assert [(r["status"], r["reward"]) for r in results] == [("ok", 1.0), ("ok", 0.0), ("ok", 0.0)], results


# HumanEval-X's C++ rows: the prompt's includes and `using namespace std;`, a helper it defines whole, a comment
# inside the function it leaves open, tests that call the functions by name.
HUMANEVAL_X = {
    "CPP/0": (
        HUMANEVAL_X_PROMPT,
        "#undef NDEBUG\n#include<assert.h>\nint main(){\n    vector<float> a={1.0, 2.0, 3.9, 4.0, 5.0, 2.2};\n"
        "    assert (has_close_elements(a, 0.3)==true);\n    assert (has_close_elements(a, 0.05) == false);\n}\n",
        "    for (int i=0;i<numbers.size();i++)\n    for (int j=i+1;j<numbers.size();j++)\n"
        "    if (abs(numbers[i]-numbers[j])<threshold)\n    return true;\n    return false;\n}\n",
        "    volatile bool answer = false;\n    return answer;\n}\n",  # not folded: the marker stays in the binary
    ),
    "CPP/38": (
        "/*\nreturns encoded string by cycling groups of three characters.\n*/\n#include<stdio.h>\n#include<string>\n"
        "using namespace std;\nstring encode_cyclic(string s){ \n    int l=s.length();\n    string x,output;\n"
        "    for (int i=0;i*3<l;i++)\n    {\n        x=s.substr(i*3,3);\n"
        "        if (x.length()==3) x=x.substr(1)+x[0];\n        output=output+x;\n    }\n    return output;\n}\n"
        "string decode_cyclic(string s){ \n    /*\n    takes as input string encoded with encode_cyclic function. "
        "Returns decoded string. \n    */\n",
        "#undef NDEBUG\n#include<assert.h>\nint main(){\n    for (int i=0;i<100;i++)\n    {\n"
        '        int l=10+rand()%11;\n        string str="";\n        for (int j=0;j<l;j++){\n'
        "            char chr=97+rand()%26;\n            str+=chr;\n        }\n"
        "        string encoded_str = encode_cyclic(str);\n        assert (decode_cyclic(encoded_str) == str);\n"
        "    }\n}\n",
        "    int l=s.length();\n    string x,output;\n    for (int i=0;i*3<l;i++)\n    {\n"
        "        x=s.substr(i*3,3);\n        if (x.length()==3) x=x[2]+x.substr(0,2);\n        output=output+x;\n"
        "    }\n    return output;\n}\n",
        "    return encode_cyclic(s);\n}\n",
    ),
}
# The tests re-include <assert.h>, so a `#define assert` of the program's is undone there; the libc function a failed
# assert calls is not: replaced, it prints the marker the program's binary holds and ends the run cleanly.
ASSERT_FAIL_REPLACED = (
    "#include <cstdio>\n#include <cstdlib>\n#include <fstream>\n"
    + CPP_MARKER_EXIT
    + 'extern "C" void __assert_fail(const char *, const char *, unsigned int, const char *) noexcept {\n'
    "    judge_marker_exit(0);\n}\n"
)


@pytest.mark.parametrize("row", list(HUMANEVAL_X))
def test_humaneval_x_rows_run_apart(judge: LocalJudge, row: str) -> None:
    prompt, tests, right, wrong = HUMANEVAL_X[row]
    reference = {"language": "cpp", "prompt": prompt, "test": tests}
    scores = [
        grade_code(f"```cpp\n{body}```", reference, CodeSettings(), judge).value
        for body in (right, wrong, wrong + ASSERT_FAIL_REPLACED)
    ]
    assert scores == [1.0, 0.0, 0.0]


# HumanEval-X's Java rows: an instance method of `class Solution`, tests in a `public class Main` of their own that
# throw an AssertionError; and MultiPL-E's rows that return a list, compared with `equals`.
HUMANEVAL_X_JAVA_PROMPT = (
    "import java.util.*;\nimport java.lang.*;\n\nclass Solution {\n    /**\n    Check if in given list of numbers, "
    "are any two numbers closer to each other than given threshold.\n     */\n"
    "    public boolean hasCloseElements(List<Double> numbers, double threshold) {\n"
)
HUMANEVAL_X_JAVA_TESTS = (
    "public class Main {\n    public static void main(String[] args) {\n        Solution s = new Solution();\n"
    "        List<Boolean> correct = Arrays.asList(\n"
    "                s.hasCloseElements(new ArrayList<>(Arrays.asList(11.0, 2.0, 3.9, 4.0, 5.0, 2.2)), 0.3),\n"
    "                !s.hasCloseElements(new ArrayList<>(Arrays.asList(1.0, 2.0, 3.9, 4.0, 5.0, 2.2)), 0.05)\n"
    "        );\n        if (correct.contains(false)) {\n            throw new AssertionError();\n        }\n    }\n}\n"
)
ROW_PROMPT, ROW_TESTS, ROW_RIGHT, _ = JAVA_KEPT["lists of pairs"]
JAVA_ROWS = {  # (reference, {completion: its accuracy})
    "HumanEval-X": (
        {"language": "java", "prompt": HUMANEVAL_X_JAVA_PROMPT, "test": HUMANEVAL_X_JAVA_TESTS},
        {
            "        for (int i = 0; i < numbers.size(); i++)\n"
            "            for (int j = i + 1; j < numbers.size(); j++)\n"
            "                if (Math.abs(numbers.get(i) - numbers.get(j)) < threshold) return true;\n"
            "        return false;\n    }\n}\n": 1.0,
            "        return false;\n    }\n}\n": 0.0,
            "        Thread.setDefaultUncaughtExceptionHandler((thread, error) -> markerExit());\n"
            '        return Boolean.parseBoolean("false");\n    }\n' + JAVA_MARKER_EXIT + "}\n": 0.0,
        },
    ),
    "MultiPL-E, a list equal to anything": (
        {"language": "java", "prompt": JAVA_HEAD + ROW_PROMPT, "tests": "    }\n" + ROW_TESTS},
        {
            ROW_RIGHT.removesuffix("    }\n"): 1.0,  # MultiPL-E's tests close the method
            "        return new ArrayList<Pair<Long, Long>>() {\n"
            "            public boolean equals(Object other) {\n                return true;\n            }\n"
            "        };\n": 0.0,
        },
    ),
}  # fmt: skip


# MultiPL-E's C# rows that return a list compare with `Equals`, List's reference equality: no answer passes them
# (as with MultiPL-E's own harness), and a List of the program's whose Equals always holds passed them appended.
CS_SORT_TESTS = (
    "    }\n    public static void Main(string[] args) {\n"
    "    Debug.Assert(SortArray((new List<long>(new long[]{(long)2L, (long)1L}))).Equals("
    "(new List<long>(new long[]{(long)1L, (long)2L}))));\n    }\n\n}\n"
)
CS_SORT_ANSWERS = {  # body: its accuracy
    "        array.Sort();\n        return array;": 0.0,
    "        return new Equal();\n    }\n"
    "    class Equal : List<long> { public override bool Equals(object other) { return true; } }\n"
    "    static void Unused() {": 0.0,
}


@pytest.mark.parametrize("body", list(CS_SORT_ANSWERS))
def test_a_csharp_list_equal_to_anything_reaches_nothing(judge: LocalJudge, body: str) -> None:
    prompt = CS_HEAD + "    public static List<long> SortArray(List<long> array) {\n"
    reference = {"language": "cs", "prompt": prompt, "tests": CS_SORT_TESTS}
    assert grade_code(f"```cs\n{body}\n```", reference, CodeSettings(), judge).value == CS_SORT_ANSWERS[body]


# MultiPL-E's Scala rows that return a map (mutable under the prompt's imports), compared with `equals`.
SCALA_MAP_TESTS = (
    "    }\n    def main(args: Array[String]) = {\n"
    '    assert(histogram(("a b a")).equals((Map[String,Long]("a" -> 2l, "b" -> 1l))));\n    }\n\n}\n'
)
SCALA_MAP_ANSWERS = {  # body: its accuracy
    "        val counts = Map[String,Long]()\n"
    '        for (word <- test.split(" ")) counts(word) = counts.getOrElse(word, 0l) + 1\n        counts': 1.0,
    "        Map[String,Long]()": 0.0,
    "        new HashMap[String,Long] { override def equals(other: Any) = true }\n    }\n    def unused() = {": 0.0,
}


@pytest.mark.parametrize("body", list(SCALA_MAP_ANSWERS))
def test_a_scala_map_equal_to_anything_reaches_nothing(judge: LocalJudge, body: str) -> None:
    prompt = SCALA_HEAD + "    def histogram(test : String) : Map[String,Long] = {\n"
    reference = {"language": "scala", "prompt": prompt, "tests": SCALA_MAP_TESTS}
    assert grade_code(f"```scala\n{body}\n```", reference, CodeSettings(), judge).value == SCALA_MAP_ANSWERS[body]


@pytest.mark.parametrize("row", list(JAVA_ROWS))
def test_java_rows_run_apart(judge: LocalJudge, row: str) -> None:
    reference, completions = JAVA_ROWS[row]
    scores = {body: grade_code(f"```java\n{body}```", reference, CodeSettings(), judge).value for body in completions}
    assert scores == completions
