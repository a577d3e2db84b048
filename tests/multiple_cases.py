"""MultiPL-E reference rows, one per language our sandbox runs, with a right and a wrong completion.

Where the shapes come from (nuprl/MultiPL-E on GitHub):

* ``prompt`` / ``tests``: the ``HumanEval_0_has_close_elements`` row of ``prompts/humaneval-<lang>-reworded.jsonl``
  (the rows the Hugging Face ``nuprl/MultiPL-E`` ``humaneval-<lang>`` configs ship), checked against
  ``dataset_builder/humaneval_to_<lang>.py`` (``translate_prompt``, ``test_suite_prefix_lines``,
  ``deep_equality``, ``test_suite_suffix_lines``; ``generic_translator.translate_tests`` joins the lines with
  ``"\\n"``). ``tests`` is copied verbatim. Two deliberate departures in ``prompt`` only:
  - some stored jsonl snapshots (cpp, go, java, js, php, pl, rb, rs, scala, sh, ts) carry a since-fixed bug
    where only the first docstring line gets the comment marker; here every docstring line carries it, as the
    translators' ``DOCSTRING_LINESTART_RE`` substitution intends (an uncommented prompt would not compile);
  - the stored elixir snapshot comes from a broken intermediate translator (``def has_close_elements(n, u, m,
    ...)``); the row here is what the fixed ``humaneval_to_elixir.py`` emits (``def candidate(...), do: ...``
    inside ``defmodule HumanEval`` and ``HumanEval.candidate(...)`` asserts).
* ``language``: the row's own ``language`` field. Go's is ``"go_test.go"`` (MultiPL-E writes the program to a
  ``*_test.go`` file and runs ``go test`` on it); every other one is the short name.
* ``right`` / ``wrong``: completions as a model would emit them, i.e. the text that continues ``prompt`` up to
  the stop token. Where ``tests`` opens by closing the function (cpp ``}``, cs/java/scala ``    }``, rs and sh
  ``}``), the completion leaves the closing brace to ``tests``; everywhere else the completion closes the
  function itself (``end``, ``}``, ``)``). ``wrong`` compiles/parses and returns a wrong answer.

The program MultiPL-E runs is ``prompt + completion + "\\n" + tests``; ``program()`` builds it.

``PASS_RULE`` is MultiPL-E's own verdict per language (``evaluation/src/eval_<lang>.py``, and the copies in
bigcode-evaluation-harness ``multiple_metrics/`` for eval_cs/eval_cpp/eval_javascript/eval_lua/eval_r/
eval_ruby/eval_rust/eval_ts, which the MultiPL-E snapshot here lacks). ``HARNESS_PACKAGES`` lists the Debian
(bookworm) packages the *tests* text needs beyond the language's toolchain.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class MultiplECase:
    language: str  # MultiPL-E's ``language`` field of the row
    name: str
    prompt: str
    tests: str
    right: str
    wrong: str

    def program(self, completion: str) -> str:
        return self.prompt + completion + "\n" + self.tests

    def row(self) -> dict:
        """The reference row as MultiPL-E ships it (the fields a reward item carries)."""
        return {"name": self.name, "language": self.language, "prompt": self.prompt, "tests": self.tests}


NAME = "HumanEval_0_has_close_elements"

# MultiPL-E's JavaScript and TypeScript rows share their tests (TypeScript's declares `require`) and answers.
_JS_TESTS = (
    "const assert = require('node:assert');\n"
    "\n"
    "\n"
    "function test() {\n"
    "  let candidate = has_close_elements;\n"
    "  assert.deepEqual(candidate([1.0, 2.0, 3.9, 4.0, 5.0, 2.2], 0.3),true);\n"
    "  assert.deepEqual(candidate([1.0, 2.0, 3.9, 4.0, 5.0, 2.2], 0.05),false);\n"
    "  assert.deepEqual(candidate([1.0, 2.0, 5.9, 4.0, 5.0], 0.95),true);\n"
    "  assert.deepEqual(candidate([1.0, 2.0, 5.9, 4.0, 5.0], 0.8),false);\n"
    "  assert.deepEqual(candidate([1.0, 2.0, 3.0, 4.0, 5.0, 2.0], 0.1),true);\n"
    "  assert.deepEqual(candidate([1.1, 2.2, 3.1, 4.1, 5.1], 1.0),true);\n"
    "  assert.deepEqual(candidate([1.1, 2.2, 3.1, 4.1, 5.1], 0.5),false);\n"
    "}\n"
    "\n"
    "test();"
)
_JS_RIGHT = (
    "  for (let i = 0; i < numbers.length; i++)\n"
    "    for (let j = i + 1; j < numbers.length; j++)\n"
    "      if (Math.abs(numbers[i] - numbers[j]) < threshold) return true;\n"
    "  return false;\n"
    "}"
)
_JS_WRONG = "  return false;\n}"


CASES: list[MultiplECase] = [
    MultiplECase(
        language="cpp",
        name=NAME,
        prompt=(
            "#include<assert.h>\n"
            "#include<bits/stdc++.h>\n"
            "// Check if in given vector of numbers, are any two numbers closer to each other than\n"
            "// given threshold.\n"
            "// >>> has_close_elements((std::vector<float>({(float)1.0f, (float)2.0f, (float)3.0f})), (0.5f))\n"
            "// (false)\n"
            "// >>> has_close_elements((std::vector<float>({(float)1.0f, (float)2.8f, (float)3.0f, (float)4.0f, "
            "(float)5.0f, (float)2.0f})), (0.3f))\n"
            "// (true)\n"
            "bool has_close_elements(std::vector<float> numbers, float threshold) {\n"
        ),
        tests=(
            "}\n"
            "int main() {\n"
            "    auto candidate = has_close_elements;\n"
            "    assert(candidate((std::vector<float>({(float)1.0f, (float)2.0f, (float)3.9f, (float)4.0f, "
            "(float)5.0f, (float)2.2f})), (0.3f)) == (true));\n"
            "    assert(candidate((std::vector<float>({(float)1.0f, (float)2.0f, (float)3.9f, (float)4.0f, "
            "(float)5.0f, (float)2.2f})), (0.05f)) == (false));\n"
            "    assert(candidate((std::vector<float>({(float)1.0f, (float)2.0f, (float)5.9f, (float)4.0f, "
            "(float)5.0f})), (0.95f)) == (true));\n"
            "    assert(candidate((std::vector<float>({(float)1.0f, (float)2.0f, (float)5.9f, (float)4.0f, "
            "(float)5.0f})), (0.8f)) == (false));\n"
            "    assert(candidate((std::vector<float>({(float)1.0f, (float)2.0f, (float)3.0f, (float)4.0f, "
            "(float)5.0f, (float)2.0f})), (0.1f)) == (true));\n"
            "    assert(candidate((std::vector<float>({(float)1.1f, (float)2.2f, (float)3.1f, (float)4.1f, "
            "(float)5.1f})), (1.0f)) == (true));\n"
            "    assert(candidate((std::vector<float>({(float)1.1f, (float)2.2f, (float)3.1f, (float)4.1f, "
            "(float)5.1f})), (0.5f)) == (false));\n"
            "}\n"
        ),
        right=(
            "    for (size_t i = 0; i < numbers.size(); i++)\n"
            "        for (size_t j = i + 1; j < numbers.size(); j++)\n"
            "            if (std::abs(numbers[i] - numbers[j]) < threshold) return true;\n"
            "    return false;"
        ),
        wrong="    return false;",
    ),
    MultiplECase(
        language="cs",
        name=NAME,
        prompt=(
            "using System;\n"
            "using System.Numerics;\n"
            "using System.Diagnostics;\n"
            "using System.Collections.Generic;\n"
            "using System.Linq;\n"
            "using System.Text;\n"
            "using System.Security.Cryptography;\n"
            "class Problem {\n"
            "    // Check if in given list of numbers, are any two numbers closer to each other than\n"
            "    // given threshold.\n"
            "    // >>> HasCloseElements((new List<float>(new float[]{(float)1.0f, (float)2.0f, (float)3.0f})), "
            "(0.5f))\n"
            "    // (false)\n"
            "    // >>> HasCloseElements((new List<float>(new float[]{(float)1.0f, (float)2.8f, (float)3.0f, "
            "(float)4.0f, (float)5.0f, (float)2.0f})), (0.3f))\n"
            "    // (true)\n"
            "    public static bool HasCloseElements(List<float> numbers, float threshold) {\n"
        ),
        tests=(
            "    }\n"
            "    public static void Main(string[] args) {\n"
            "    Debug.Assert(HasCloseElements((new List<float>(new float[]{(float)1.0f, (float)2.0f, (float)3.9f, "
            "(float)4.0f, (float)5.0f, (float)2.2f})), (0.3f)) == (true));\n"
            "    Debug.Assert(HasCloseElements((new List<float>(new float[]{(float)1.0f, (float)2.0f, (float)3.9f, "
            "(float)4.0f, (float)5.0f, (float)2.2f})), (0.05f)) == (false));\n"
            "    Debug.Assert(HasCloseElements((new List<float>(new float[]{(float)1.0f, (float)2.0f, (float)5.9f, "
            "(float)4.0f, (float)5.0f})), (0.95f)) == (true));\n"
            "    Debug.Assert(HasCloseElements((new List<float>(new float[]{(float)1.0f, (float)2.0f, (float)5.9f, "
            "(float)4.0f, (float)5.0f})), (0.8f)) == (false));\n"
            "    Debug.Assert(HasCloseElements((new List<float>(new float[]{(float)1.0f, (float)2.0f, (float)3.0f, "
            "(float)4.0f, (float)5.0f, (float)2.0f})), (0.1f)) == (true));\n"
            "    Debug.Assert(HasCloseElements((new List<float>(new float[]{(float)1.1f, (float)2.2f, (float)3.1f, "
            "(float)4.1f, (float)5.1f})), (1.0f)) == (true));\n"
            "    Debug.Assert(HasCloseElements((new List<float>(new float[]{(float)1.1f, (float)2.2f, (float)3.1f, "
            "(float)4.1f, (float)5.1f})), (0.5f)) == (false));\n"
            "    }\n"
            "\n"
            "}\n"
        ),
        right=(
            "        for (int i = 0; i < numbers.Count; i++)\n"
            "            for (int j = i + 1; j < numbers.Count; j++)\n"
            "                if (Math.Abs(numbers[i] - numbers[j]) < threshold) return true;\n"
            "        return false;"
        ),
        wrong="        return false;",
    ),
    MultiplECase(
        language="d",
        name=NAME,
        prompt=(
            "import std.math;\n"
            "/*\n"
            " Check if in given array of numbers, are any two numbers closer to each other than\n"
            "    given threshold.\n"
            "    >>> has_close_elements([1.0, 2.0, 3.0], 0.5)\n"
            "    false\n"
            "    >>> has_close_elements([1.0, 2.8, 3.0, 4.0, 5.0, 2.0], 0.3)\n"
            "    true\n"
            "    \n"
            "*/\n"
            "bool has_close_elements(float[] numbers, float threshold) \n"
        ),
        tests=(
            "unittest\n"
            "{\n"
            "    alias candidate = has_close_elements;\n"
            "\n"
            "    assert(candidate([1.0, 2.0, 3.9, 4.0, 5.0, 2.2], 0.3) == true);\n"
            "    assert(candidate([1.0, 2.0, 3.9, 4.0, 5.0, 2.2], 0.05) == false);\n"
            "    assert(candidate([1.0, 2.0, 5.9, 4.0, 5.0], 0.95) == true);\n"
            "    assert(candidate([1.0, 2.0, 5.9, 4.0, 5.0], 0.8) == false);\n"
            "    assert(candidate([1.0, 2.0, 3.0, 4.0, 5.0, 2.0], 0.1) == true);\n"
            "    assert(candidate([1.1, 2.2, 3.1, 4.1, 5.1], 1.0) == true);\n"
            "    assert(candidate([1.1, 2.2, 3.1, 4.1, 5.1], 0.5) == false);\n"
            "}\n"
            "void main(){}"
        ),
        right=(
            "{\n"
            "    foreach (i; 0 .. numbers.length)\n"
            "        foreach (j; i + 1 .. numbers.length)\n"
            "            if (abs(numbers[i] - numbers[j]) < threshold) return true;\n"
            "    return false;\n"
            "}"
        ),
        wrong="{\n    return false;\n}",
    ),
    MultiplECase(
        language="go_test.go",
        name=NAME,
        prompt=(
            "package has_close_elements_test\n"
            "\n"
            "import (\n"
            '    "testing"\n'
            '    "fmt"\n'
            ")\n"
            "\n"
            "// Check if in given list of numbers, are any two numbers closer to each other than\n"
            "// given threshold.\n"
            "// >>> has_close_elements([]float64{1.0, 2.0, 3.0}, 0.5)\n"
            "// false\n"
            "// >>> has_close_elements([]float64{1.0, 2.8, 3.0, 4.0, 5.0, 2.0}, 0.3)\n"
            "// true\n"
            "func has_close_elements(numbers []float64, threshold float64) bool {\n"
        ),
        tests=(
            "func TestHas_Close_Elements(t *testing.T) {\n"
            "  candidate := has_close_elements\n"
            "\ttype test struct {\n"
            "\t\tactual   interface{}\n"
            "\t\texpected interface{}\n"
            "\t}\n"
            "   tests := []test{\n"
            "     { actual: candidate([]float64{1.0, 2.0, 3.9, 4.0, 5.0, 2.2}, 0.3), expected: true },\n"
            "     { actual: candidate([]float64{1.0, 2.0, 3.9, 4.0, 5.0, 2.2}, 0.05), expected: false },\n"
            "     { actual: candidate([]float64{1.0, 2.0, 5.9, 4.0, 5.0}, 0.95), expected: true },\n"
            "     { actual: candidate([]float64{1.0, 2.0, 5.9, 4.0, 5.0}, 0.8), expected: false },\n"
            "     { actual: candidate([]float64{1.0, 2.0, 3.0, 4.0, 5.0, 2.0}, 0.1), expected: true },\n"
            "     { actual: candidate([]float64{1.1, 2.2, 3.1, 4.1, 5.1}, 1.0), expected: true },\n"
            "     { actual: candidate([]float64{1.1, 2.2, 3.1, 4.1, 5.1}, 0.5), expected: false },\n"
            "   }\n"
            "\n"
            "\tfor i, tc := range tests {\n"
            '\t\tt.Run(fmt.Sprintf("test num % d", i), func(t *testing.T) {\n'
            '\t\t\tif fmt.Sprintf("%v", tc.actual) != fmt.Sprintf("%v", tc.expected) {\n'
            "\t\t\t\tt.Errorf(\"expected '%s', got '%s'\", tc.expected, tc.actual)\n"
            "\t\t\t}\n"
            "\t\t})\n"
            "\t}\n"
            "}\n"
        ),
        # The prompt fixes the imports ("testing", "fmt"): a completion cannot import math.
        right=(
            "    for i := 0; i < len(numbers); i++ {\n"
            "        for j := i + 1; j < len(numbers); j++ {\n"
            "            d := numbers[i] - numbers[j]\n"
            "            if d < 0 {\n"
            "                d = -d\n"
            "            }\n"
            "            if d < threshold {\n"
            "                return true\n"
            "            }\n"
            "        }\n"
            "    }\n"
            "    return false\n"
            "}\n"
        ),
        wrong="    return false\n}\n",
    ),
    MultiplECase(
        language="java",
        name=NAME,
        prompt=(
            "import java.util.*;\n"
            "import java.lang.reflect.*;\n"
            "import org.javatuples.*;\n"
            "import java.security.*;\n"
            "import java.math.*;\n"
            "import java.io.*;\n"
            "import java.util.stream.*;\n"
            "class Problem {\n"
            "    // Check if in given array list of numbers, are any two numbers closer to each other than\n"
            "    // given threshold.\n"
            "    // >>> hasCloseElements((new ArrayList<Float>(Arrays.asList((float)1.0f, (float)2.0f, (float)3.0f))), "
            "(0.5f))\n"
            "    // (false)\n"
            "    // >>> hasCloseElements((new ArrayList<Float>(Arrays.asList((float)1.0f, (float)2.8f, (float)3.0f, "
            "(float)4.0f, (float)5.0f, (float)2.0f))), (0.3f))\n"
            "    // (true)\n"
            "    public static boolean hasCloseElements(ArrayList<Float> numbers, float threshold) {\n"
        ),
        tests=(
            "    }\n"
            "    public static void main(String[] args) {\n"
            "    assert(hasCloseElements((new ArrayList<Float>(Arrays.asList((float)1.0f, (float)2.0f, (float)3.9f, "
            "(float)4.0f, (float)5.0f, (float)2.2f))), (0.3f)) == (true));\n"
            "    assert(hasCloseElements((new ArrayList<Float>(Arrays.asList((float)1.0f, (float)2.0f, (float)3.9f, "
            "(float)4.0f, (float)5.0f, (float)2.2f))), (0.05f)) == (false));\n"
            "    assert(hasCloseElements((new ArrayList<Float>(Arrays.asList((float)1.0f, (float)2.0f, (float)5.9f, "
            "(float)4.0f, (float)5.0f))), (0.95f)) == (true));\n"
            "    assert(hasCloseElements((new ArrayList<Float>(Arrays.asList((float)1.0f, (float)2.0f, (float)5.9f, "
            "(float)4.0f, (float)5.0f))), (0.8f)) == (false));\n"
            "    assert(hasCloseElements((new ArrayList<Float>(Arrays.asList((float)1.0f, (float)2.0f, (float)3.0f, "
            "(float)4.0f, (float)5.0f, (float)2.0f))), (0.1f)) == (true));\n"
            "    assert(hasCloseElements((new ArrayList<Float>(Arrays.asList((float)1.1f, (float)2.2f, (float)3.1f, "
            "(float)4.1f, (float)5.1f))), (1.0f)) == (true));\n"
            "    assert(hasCloseElements((new ArrayList<Float>(Arrays.asList((float)1.1f, (float)2.2f, (float)3.1f, "
            "(float)4.1f, (float)5.1f))), (0.5f)) == (false));\n"
            "    }\n"
            "\n"
            "}\n"
        ),
        right=(
            "        for (int i = 0; i < numbers.size(); i++)\n"
            "            for (int j = i + 1; j < numbers.size(); j++)\n"
            "                if (Math.abs(numbers.get(i) - numbers.get(j)) < threshold) return true;\n"
            "        return false;"
        ),
        wrong="        return false;",
    ),
    MultiplECase(
        language="js",
        name=NAME,
        prompt=(
            "//Check if in given array of numbers, are any two numbers closer to each other than\n"
            "// given threshold.\n"
            "// >>> has_close_elements([1.0, 2.0, 3.0], 0.5)\n"
            "// false\n"
            "// >>> has_close_elements([1.0, 2.8, 3.0, 4.0, 5.0, 2.0], 0.3)\n"
            "// true\n"
            "function has_close_elements(numbers, threshold){\n"
        ),
        tests=_JS_TESTS,
        right=_JS_RIGHT,
        wrong=_JS_WRONG,
    ),
    MultiplECase(
        language="lua",
        name=NAME,
        prompt=(
            "--  Check if in given table of numbers, are any two numbers closer to each other than\n"
            "-- given threshold.\n"
            "-- >>> has_close_elements({1.0, 2.0, 3.0}, 0.5)\n"
            "-- false\n"
            "-- >>> has_close_elements({1.0, 2.8, 3.0, 4.0, 5.0, 2.0}, 0.3)\n"
            "-- true\n"
            "local function has_close_elements(numbers, threshold)\n"
        ),
        tests=(
            "lu = require('luaunit')\n"
            "\n"
            "function test_humaneval()\n"
            "local candidate = has_close_elements\n"
            "    lu.assertEquals(candidate({1.0, 2.0, 3.9, 4.0, 5.0, 2.2}, 0.3), true)\n"
            "    lu.assertEquals(candidate({1.0, 2.0, 3.9, 4.0, 5.0, 2.2}, 0.05), false)\n"
            "    lu.assertEquals(candidate({1.0, 2.0, 5.9, 4.0, 5.0}, 0.95), true)\n"
            "    lu.assertEquals(candidate({1.0, 2.0, 5.9, 4.0, 5.0}, 0.8), false)\n"
            "    lu.assertEquals(candidate({1.0, 2.0, 3.0, 4.0, 5.0, 2.0}, 0.1), true)\n"
            "    lu.assertEquals(candidate({1.1, 2.2, 3.1, 4.1, 5.1}, 1.0), true)\n"
            "    lu.assertEquals(candidate({1.1, 2.2, 3.1, 4.1, 5.1}, 0.5), false)\n"
            "end\n"
            "\n"
            "os.exit(lu.LuaUnit.run())"
        ),
        right=(
            "    for i = 1, #numbers do\n"
            "        for j = i + 1, #numbers do\n"
            "            if math.abs(numbers[i] - numbers[j]) < threshold then\n"
            "                return true\n"
            "            end\n"
            "        end\n"
            "    end\n"
            "    return false\n"
            "end"
        ),
        wrong="    return false\nend",
    ),
    MultiplECase(
        language="php",
        name=NAME,
        prompt=(
            "<?php\n"
            "// Check if in given array of numbers, are any two numbers closer to each other than\n"
            "// given threshold.\n"
            "// >>> has_close_elements(array(1.0, 2.0, 3.0), 0.5)\n"
            "// false\n"
            "// >>> has_close_elements(array(1.0, 2.8, 3.0, 4.0, 5.0, 2.0), 0.3)\n"
            "// true\n"
            "function has_close_elements($numbers, $threshold) {\n"
        ),
        tests=(
            "function candidate(...$args) {\n"
            "    return has_close_elements(...$args);\n"
            "}\n"
            "\n"
            "function test(): void {\n"
            "    if (candidate(array(1.0, 2.0, 3.9, 4.0, 5.0, 2.2), 0.3) !== true) "
            '{ throw new Exception("Test failed!"); }\n'
            "    if (candidate(array(1.0, 2.0, 3.9, 4.0, 5.0, 2.2), 0.05) !== false) "
            '{ throw new Exception("Test failed!"); }\n'
            "    if (candidate(array(1.0, 2.0, 5.9, 4.0, 5.0), 0.95) !== true) "
            '{ throw new Exception("Test failed!"); }\n'
            "    if (candidate(array(1.0, 2.0, 5.9, 4.0, 5.0), 0.8) !== false) "
            '{ throw new Exception("Test failed!"); }\n'
            "    if (candidate(array(1.0, 2.0, 3.0, 4.0, 5.0, 2.0), 0.1) !== true) "
            '{ throw new Exception("Test failed!"); }\n'
            "    if (candidate(array(1.1, 2.2, 3.1, 4.1, 5.1), 1.0) !== true) "
            '{ throw new Exception("Test failed!"); }\n'
            "    if (candidate(array(1.1, 2.2, 3.1, 4.1, 5.1), 0.5) !== false) "
            '{ throw new Exception("Test failed!"); }\n'
            "}\n"
            "\n"
            "test();"
        ),
        right=(
            "    $n = count($numbers);\n"
            "    for ($i = 0; $i < $n; $i++)\n"
            "        for ($j = $i + 1; $j < $n; $j++)\n"
            "            if (abs($numbers[$i] - $numbers[$j]) < $threshold) return true;\n"
            "    return false;\n"
            "}"
        ),
        wrong="    return false;\n}",
    ),
    MultiplECase(
        language="pl",
        name=NAME,
        prompt=(
            "# Check if in given array of numbers, are any two numbers closer to each other than\n"
            "# given threshold.\n"
            "# >>> has_close_elements([1.0, 2.0, 3.0], 0.5)\n"
            '# ""\n'
            "# >>> has_close_elements([1.0, 2.8, 3.0, 4.0, 5.0, 2.0], 0.3)\n"
            "# 1\n"
            "sub has_close_elements {\n"
            "    my($numbers, $threshold) = @_;\n"
        ),
        tests=(
            "use Test::Deep;\n"
            "\n"
            "\n"
            "sub testhumaneval {\n"
            "    my $candidate = \\&has_close_elements;\n"
            "        if(eq_deeply($candidate->([1.0, 2.0, 3.9, 4.0, 5.0, 2.2], 0.3),1)) {\n"
            '        print "ok!" }else{\n'
            "        exit 1;\n"
            "        }\n"
            '        if(eq_deeply($candidate->([1.0, 2.0, 3.9, 4.0, 5.0, 2.2], 0.05),"")) {\n'
            '        print "ok!" }else{\n'
            "        exit 1;\n"
            "        }\n"
            "        if(eq_deeply($candidate->([1.0, 2.0, 5.9, 4.0, 5.0], 0.95),1)) {\n"
            '        print "ok!" }else{\n'
            "        exit 1;\n"
            "        }\n"
            '        if(eq_deeply($candidate->([1.0, 2.0, 5.9, 4.0, 5.0], 0.8),"")) {\n'
            '        print "ok!" }else{\n'
            "        exit 1;\n"
            "        }\n"
            "        if(eq_deeply($candidate->([1.0, 2.0, 3.0, 4.0, 5.0, 2.0], 0.1),1)) {\n"
            '        print "ok!" }else{\n'
            "        exit 1;\n"
            "        }\n"
            "        if(eq_deeply($candidate->([1.1, 2.2, 3.1, 4.1, 5.1], 1.0),1)) {\n"
            '        print "ok!" }else{\n'
            "        exit 1;\n"
            "        }\n"
            '        if(eq_deeply($candidate->([1.1, 2.2, 3.1, 4.1, 5.1], 0.5),"")) {\n'
            '        print "ok!" }else{\n'
            "        exit 1;\n"
            "        }\n"
            "}\n"
            "\n"
            "testhumaneval();"
        ),
        # Python's True/False become 1 and "" here, and eq_deeply compares as strings: returning 0 for
        # false fails the "" cases.
        right=(
            "    for my $i (0 .. $#$numbers) {\n"
            "        for my $j ($i + 1 .. $#$numbers) {\n"
            "            return 1 if abs($numbers->[$i] - $numbers->[$j]) < $threshold;\n"
            "        }\n"
            "    }\n"
            '    return "";\n'
            "}"
        ),
        wrong='    return "";\n}',
    ),
    MultiplECase(
        language="py",
        name=NAME,
        prompt=(
            "from typing import List\n"
            "\n"
            "def has_close_elements(numbers: List[float], threshold: float) -> bool:\n"
            '    """ Check if in given list of numbers, are any two numbers closer to each other than\n'
            "    given threshold.\n"
            "    >>> has_close_elements([1.0, 2.0, 3.0], 0.5)\n"
            "    False\n"
            "    >>> has_close_elements([1.0, 2.8, 3.0, 4.0, 5.0, 2.0], 0.3)\n"
            "    True\n"
            '    """\n'
        ),
        tests=(
            "def check(candidate):\n"
            "    assert candidate([1.0, 2.0, 3.9, 4.0, 5.0, 2.2], 0.3) == True\n"
            "    assert candidate([1.0, 2.0, 3.9, 4.0, 5.0, 2.2], 0.05) == False\n"
            "    assert candidate([1.0, 2.0, 5.9, 4.0, 5.0], 0.95) == True\n"
            "    assert candidate([1.0, 2.0, 5.9, 4.0, 5.0], 0.8) == False\n"
            "    assert candidate([1.0, 2.0, 3.0, 4.0, 5.0, 2.0], 0.1) == True\n"
            "    assert candidate([1.1, 2.2, 3.1, 4.1, 5.1], 1.0) == True\n"
            "    assert candidate([1.1, 2.2, 3.1, 4.1, 5.1], 0.5) == False\n"
            "\n"
            "def test_check():\n"
            "    check(has_close_elements)\n"
            "\n"
            "test_check()\n"
        ),
        right=(
            "    for i in range(len(numbers)):\n"
            "        for j in range(i + 1, len(numbers)):\n"
            "            if abs(numbers[i] - numbers[j]) < threshold:\n"
            "                return True\n"
            "    return False"
        ),
        wrong="    return False",
    ),
    MultiplECase(
        language="r",
        name=NAME,
        prompt=(
            "# Check if in given list of numbers, are any two numbers closer to each other than\n"
            "# given threshold.\n"
            "# >>> has_close_elements(c(1.0, 2.0, 3.0), 0.5)\n"
            "# FALSE\n"
            "# >>> has_close_elements(c(1.0, 2.8, 3.0, 4.0, 5.0, 2.0), 0.3)\n"
            "# TRUE\n"
            "has_close_elements <- function(numbers, threshold) {"
        ),
        tests=(
            "test_humaneval <- function() {\n"
            "    candidate <- has_close_elements\n"
            "    stopifnot(isTRUE(all.equal(candidate(c(1.0, 2.0, 3.9, 4.0, 5.0, 2.2), 0.3), TRUE)))\n"
            "    stopifnot(isTRUE(all.equal(candidate(c(1.0, 2.0, 3.9, 4.0, 5.0, 2.2), 0.05), FALSE)))\n"
            "    stopifnot(isTRUE(all.equal(candidate(c(1.0, 2.0, 5.9, 4.0, 5.0), 0.95), TRUE)))\n"
            "    stopifnot(isTRUE(all.equal(candidate(c(1.0, 2.0, 5.9, 4.0, 5.0), 0.8), FALSE)))\n"
            "    stopifnot(isTRUE(all.equal(candidate(c(1.0, 2.0, 3.0, 4.0, 5.0, 2.0), 0.1), TRUE)))\n"
            "    stopifnot(isTRUE(all.equal(candidate(c(1.1, 2.2, 3.1, 4.1, 5.1), 1.0), TRUE)))\n"
            "    stopifnot(isTRUE(all.equal(candidate(c(1.1, 2.2, 3.1, 4.1, 5.1), 0.5), FALSE)))\n"
            "}\n"
            "test_humaneval()"
        ),
        # The R prompt ends at "{" with no newline: the completion starts the line.
        right=(
            "\n"
            "    for (i in seq_along(numbers)) {\n"
            "        for (j in seq_along(numbers)) {\n"
            "            if (i != j && abs(numbers[i] - numbers[j]) < threshold) return(TRUE)\n"
            "        }\n"
            "    }\n"
            "    FALSE\n"
            "}"
        ),
        wrong="\n    FALSE\n}",
    ),
    MultiplECase(
        language="rb",
        name=NAME,
        prompt=(
            "# Check if in given array of numbers, are any two numbers closer to each other than\n"
            "# given threshold.\n"
            "# >>> has_close_elements.call([1.0, 2.0, 3.0], 0.5)\n"
            "# false\n"
            "# >>> has_close_elements.call([1.0, 2.8, 3.0, 4.0, 5.0, 2.0], 0.3)\n"
            "# true\n"
            "def has_close_elements(numbers, threshold)\n"
        ),
        tests=(
            "require 'test/unit'\n"
            "class TestHumanEval < Test::Unit::TestCase\n"
            "  def test_has_close_elements\n"
            "    candidate = method(:has_close_elements)\n"
            "    assert_equal(true, candidate.call([1.0, 2.0, 3.9, 4.0, 5.0, 2.2], 0.3))\n"
            "    assert_equal(false, candidate.call([1.0, 2.0, 3.9, 4.0, 5.0, 2.2], 0.05))\n"
            "    assert_equal(true, candidate.call([1.0, 2.0, 5.9, 4.0, 5.0], 0.95))\n"
            "    assert_equal(false, candidate.call([1.0, 2.0, 5.9, 4.0, 5.0], 0.8))\n"
            "    assert_equal(true, candidate.call([1.0, 2.0, 3.0, 4.0, 5.0, 2.0], 0.1))\n"
            "    assert_equal(true, candidate.call([1.1, 2.2, 3.1, 4.1, 5.1], 1.0))\n"
            "    assert_equal(false, candidate.call([1.1, 2.2, 3.1, 4.1, 5.1], 0.5))\n"
            "  end\n"
            "end\n"
        ),
        right="  numbers.combination(2).any? { |a, b| (a - b).abs < threshold }\nend",
        wrong="  false\nend",
    ),
    MultiplECase(
        language="rkt",
        name=NAME,
        prompt=(
            "#lang racket\n"
            "\n"
            ";; Check if in given list of numbers, are any two numbers closer to each other than\n"
            ";; given threshold.\n"
            ";; >>> (has_close_elements (list 1.0 2.0 3.0) 0.5)\n"
            ";; #f\n"
            ";; >>> (has_close_elements (list 1.0 2.8 3.0 4.0 5.0 2.0) 0.3)\n"
            ";; #t\n"
            "(define (has_close_elements numbers threshold)\n"
        ),
        tests=(
            "(require rackunit)\n"
            "\n"
            "(define (test-humaneval) \n"
            "\n"
            "  (let (( candidate has_close_elements))\n"
            "    (check-within (candidate (list 1.0 2.0 3.9 4.0 5.0 2.2) 0.3) #t 0.001)\n"
            "    (check-within (candidate (list 1.0 2.0 3.9 4.0 5.0 2.2) 0.05) #f 0.001)\n"
            "    (check-within (candidate (list 1.0 2.0 5.9 4.0 5.0) 0.95) #t 0.001)\n"
            "    (check-within (candidate (list 1.0 2.0 5.9 4.0 5.0) 0.8) #f 0.001)\n"
            "    (check-within (candidate (list 1.0 2.0 3.0 4.0 5.0 2.0) 0.1) #t 0.001)\n"
            "    (check-within (candidate (list 1.1 2.2 3.1 4.1 5.1) 1.0) #t 0.001)\n"
            "    (check-within (candidate (list 1.1 2.2 3.1 4.1 5.1) 0.5) #f 0.001)\n"
            "))\n"
            "\n"
            "(test-humaneval)"
        ),
        right=(
            "  (for*/or ([i (in-range (length numbers))]\n"
            "            [j (in-range (add1 i) (length numbers))])\n"
            "    (< (abs (- (list-ref numbers i) (list-ref numbers j))) threshold)))"
        ),
        wrong="  #f)",
    ),
    MultiplECase(
        language="rs",
        name=NAME,
        prompt=(
            "/// Check if in given vector of numbers, are any two numbers closer to each other than\n"
            "/// given threshold.\n"
            "/// >>> has_close_elements(vec![1.0, 2.0, 3.0], 0.5)\n"
            "/// false\n"
            "/// >>> has_close_elements(vec![1.0, 2.8, 3.0, 4.0, 5.0, 2.0], 0.3)\n"
            "/// true\n"
            "fn has_close_elements(numbers: Vec<f64>, threshold: f64) -> bool {\n"
        ),
        tests=(
            "}\n"
            "\n"
            "fn main() {\n"
            "    let candidate = has_close_elements;\n"
            "    assert_eq!(candidate(vec![1.0, 2.0, 3.9, 4.0, 5.0, 2.2], 0.3), true);\n"
            "    assert_eq!(candidate(vec![1.0, 2.0, 3.9, 4.0, 5.0, 2.2], 0.05), false);\n"
            "    assert_eq!(candidate(vec![1.0, 2.0, 5.9, 4.0, 5.0], 0.95), true);\n"
            "    assert_eq!(candidate(vec![1.0, 2.0, 5.9, 4.0, 5.0], 0.8), false);\n"
            "    assert_eq!(candidate(vec![1.0, 2.0, 3.0, 4.0, 5.0, 2.0], 0.1), true);\n"
            "    assert_eq!(candidate(vec![1.1, 2.2, 3.1, 4.1, 5.1], 1.0), true);\n"
            "    assert_eq!(candidate(vec![1.1, 2.2, 3.1, 4.1, 5.1], 0.5), false);\n"
            "}\n"
        ),
        right=(
            "    for i in 0..numbers.len() {\n"
            "        for j in (i + 1)..numbers.len() {\n"
            "            if (numbers[i] - numbers[j]).abs() < threshold {\n"
            "                return true;\n"
            "            }\n"
            "        }\n"
            "    }\n"
            "    false"
        ),
        wrong="    let _ = (numbers, threshold);\n    false",
    ),
    MultiplECase(
        language="scala",
        name=NAME,
        prompt=(
            "import scala.math._\n"
            "import scala.collection.mutable._\n"
            "object Problem {\n"
            "    // Check if in given list of numbers, are any two numbers closer to each other than\n"
            "    // given threshold.\n"
            "    // >>> hasCloseElements((List[Float](1.0f.toFloat, 2.0f.toFloat, 3.0f.toFloat)), (0.5f))\n"
            "    // (false)\n"
            "    // >>> hasCloseElements((List[Float](1.0f.toFloat, 2.8f.toFloat, 3.0f.toFloat, 4.0f.toFloat, "
            "5.0f.toFloat, 2.0f.toFloat)), (0.3f))\n"
            "    // (true)\n"
            "    def hasCloseElements(numbers : List[Float], threshold : Float) : Boolean = {\n"
        ),
        tests=(
            "    }\n"
            "    def main(args: Array[String]) = {\n"
            "    assert(hasCloseElements((List[Float](1.0f.toFloat, 2.0f.toFloat, 3.9f.toFloat, 4.0f.toFloat, "
            "5.0f.toFloat, 2.2f.toFloat)), (0.3f)) == (true));\n"
            "    assert(hasCloseElements((List[Float](1.0f.toFloat, 2.0f.toFloat, 3.9f.toFloat, 4.0f.toFloat, "
            "5.0f.toFloat, 2.2f.toFloat)), (0.05f)) == (false));\n"
            "    assert(hasCloseElements((List[Float](1.0f.toFloat, 2.0f.toFloat, 5.9f.toFloat, 4.0f.toFloat, "
            "5.0f.toFloat)), (0.95f)) == (true));\n"
            "    assert(hasCloseElements((List[Float](1.0f.toFloat, 2.0f.toFloat, 5.9f.toFloat, 4.0f.toFloat, "
            "5.0f.toFloat)), (0.8f)) == (false));\n"
            "    assert(hasCloseElements((List[Float](1.0f.toFloat, 2.0f.toFloat, 3.0f.toFloat, 4.0f.toFloat, "
            "5.0f.toFloat, 2.0f.toFloat)), (0.1f)) == (true));\n"
            "    assert(hasCloseElements((List[Float](1.1f.toFloat, 2.2f.toFloat, 3.1f.toFloat, 4.1f.toFloat, "
            "5.1f.toFloat)), (1.0f)) == (true));\n"
            "    assert(hasCloseElements((List[Float](1.1f.toFloat, 2.2f.toFloat, 3.1f.toFloat, 4.1f.toFloat, "
            "5.1f.toFloat)), (0.5f)) == (false));\n"
            "    }\n"
            "\n"
            "}\n"
        ),
        right=(
            "        numbers.indices.exists(i => numbers.indices.exists(j =>\n"
            "            i != j && abs(numbers(i) - numbers(j)) < threshold))"
        ),
        wrong="        false",
    ),
    MultiplECase(
        language="sh",
        name=NAME,
        prompt=(
            "#!/bin/bash\n"
            "# Check if in given list of numbers, are any two numbers closer to each other than\n"
            "# given threshold.\n"
            '# >>> $(has_close_elements "1.0 2.0 3.0" "0.5")\n'
            '# "false"\n'
            '# >>> $(has_close_elements "1.0 2.8 3.0 4.0 5.0 2.0" "0.3")\n'
            '# "true"\n'
            "#\n"
            "# $1 is a space-separated list\n"
            "# $2 is a floating point\n"
            "has_close_elements() {\n"
        ),
        tests=(
            "}\n"
            "\n"
            "candidate() {\n"
            '    has_close_elements "$@"\n'
            "}\n"
            "\n"
            "set -e\n"
            "run_test() {\n"
            '    [[ $(candidate "1.0 2.0 3.9 4.0 5.0 2.2" "0.3") = "true" ]]\n'
            '    [[ $(candidate "1.0 2.0 3.9 4.0 5.0 2.2" "0.05") = "false" ]]\n'
            '    [[ $(candidate "1.0 2.0 5.9 4.0 5.0" "0.95") = "true" ]]\n'
            '    [[ $(candidate "1.0 2.0 5.9 4.0 5.0" "0.8") = "false" ]]\n'
            '    [[ $(candidate "1.0 2.0 3.0 4.0 5.0 2.0" "0.1") = "true" ]]\n'
            '    [[ $(candidate "1.1 2.2 3.1 4.1 5.1" "1.0") = "true" ]]\n'
            '    [[ $(candidate "1.1 2.2 3.1 4.1 5.1" "0.5") = "false" ]]\n'
            "}\n"
            "\n"
            "run_test"
        ),
        right=(
            '    echo "$1" | awk -v t="$2" \'{ r = "false"\n'
            "        for (i = 1; i <= NF; i++) for (j = i + 1; j <= NF; j++) {\n"
            '            d = $i - $j; if (d < 0) d = -d; if (d < t) r = "true" }\n'
            "        print r }'"
        ),
        wrong='    echo "false"',
    ),
    MultiplECase(
        language="ts",
        name=NAME,
        prompt=(
            "//Check if in given array of numbers, are any two numbers closer to each other than\n"
            "// given threshold.\n"
            "// >>> has_close_elements([1.0, 2.0, 3.0], 0.5)\n"
            "// false\n"
            "// >>> has_close_elements([1.0, 2.8, 3.0, 4.0, 5.0, 2.0], 0.3)\n"
            "// true\n"
            "function has_close_elements(numbers: number[], threshold: number): boolean {\n"
        ),
        tests="declare var require: any;\n" + _JS_TESTS,  # the JavaScript rows' tests, typed
        right=_JS_RIGHT,
        wrong=_JS_WRONG,
    ),
    MultiplECase(
        language="hs",
        name=NAME,
        prompt=(
            "-- | Check if in given list of numbers, are any two numbers closer to each other than\n"
            "-- | given threshold.\n"
            "-- | >>> hasCloseElements [1.0,2.0,3.0] 0.5\n"
            "-- | False\n"
            "-- | >>> hasCloseElements [1.0,2.8,3.0,4.0,5.0,2.0] 0.3\n"
            "-- | True\n"
            "hasCloseElements :: [Float] -> Float -> Bool\n"
            "hasCloseElements numbers threshold ="
        ),
        tests=(
            "\n"
            "main :: IO ()\n"
            "main = do\n"
            "  let candidate = hasCloseElements\n"
            '  if candidate [1.0,2.0,3.9,4.0,5.0,2.2] 0.3 == True then pure () else error "assertion failed"\n'
            '  if candidate [1.0,2.0,3.9,4.0,5.0,2.2] 0.05 == False then pure () else error "assertion failed"\n'
            '  if candidate [1.0,2.0,5.9,4.0,5.0] 0.95 == True then pure () else error "assertion failed"\n'
            '  if candidate [1.0,2.0,5.9,4.0,5.0] 0.8 == False then pure () else error "assertion failed"\n'
            '  if candidate [1.0,2.0,3.0,4.0,5.0,2.0] 0.1 == True then pure () else error "assertion failed"\n'
            '  if candidate [1.1,2.2,3.1,4.1,5.1] 1.0 == True then pure () else error "assertion failed"\n'
            '  if candidate [1.1,2.2,3.1,4.1,5.1] 0.5 == False then pure () else error "assertion failed"\n'
            "  pure ()"
        ),
        right=(
            " or [abs (x - y) < threshold | (i, x) <- zip [0 :: Int ..] numbers, (j, y) <- zip [0 ..] numbers, i < j]"
        ),
        wrong=" False",
    ),
    MultiplECase(
        language="ml",
        name=NAME,
        prompt=(
            "(**Check if in given list of numbers, are any two numbers closer to each other than\n"
            "given threshold.\n"
            ">>> has_close_elements [1.0; 2.0; 3.0] 0.5\n"
            "false\n"
            ">>> has_close_elements [1.0; 2.8; 3.0; 4.0; 5.0; 2.0] 0.3\n"
            "true\n"
            "*)\n"
            "let has_close_elements (numbers : float list) (threshold : float) : bool ="
        ),
        tests=(
            "\n"
            "let assertions =\n"
            " let candidate = has_close_elements in\n"
            "  (assert ((candidate [1.0; 2.0; 3.9; 4.0; 5.0; 2.2] 0.3) = true));\n"
            "  (assert ((candidate [1.0; 2.0; 3.9; 4.0; 5.0; 2.2] 0.05) = false));\n"
            "  (assert ((candidate [1.0; 2.0; 5.9; 4.0; 5.0] 0.95) = true));\n"
            "  (assert ((candidate [1.0; 2.0; 5.9; 4.0; 5.0] 0.8) = false));\n"
            "  (assert ((candidate [1.0; 2.0; 3.0; 4.0; 5.0; 2.0] 0.1) = true));\n"
            "  (assert ((candidate [1.1; 2.2; 3.1; 4.1; 5.1] 1.0) = true));\n"
            "  (assert ((candidate [1.1; 2.2; 3.1; 4.1; 5.1] 0.5) = false));\n"
            "  ()\n"
        ),
        right=(
            "\n"
            "  let rec check = function\n"
            "    | [] -> false\n"
            "    | x :: rest -> List.exists (fun y -> abs_float (x -. y) < threshold) rest || check rest\n"
            "  in\n"
            "  check numbers"
        ),
        wrong=" false",
    ),
    MultiplECase(
        language="elixir",
        name=NAME,
        prompt=(
            "# Check if in given list of numbers, are any two numbers closer to each other than\n"
            "# given threshold.\n"
            "# >>> HumanEval.has_close_elements([1.0, 2.0, 3.0], 0.5)\n"
            "# false\n"
            "# >>> HumanEval.has_close_elements([1.0, 2.8, 3.0, 4.0, 5.0, 2.0], 0.3)\n"
            "# true\n"
            "\n"
            "defmodule HumanEval do\n"
            "  def candidate(numbers, threshold), do: has_close_elements(numbers, threshold)\n"
            "  def has_close_elements(numbers, threshold) do\n"
            "    "
        ),
        tests=(
            "ExUnit.start()\n"
            "defmodule HumanEvalTest do\n"
            "  use ExUnit.Case, async: true\n"
            "  test 'has_close_elements' do\n"
            "    assert true == HumanEval.candidate([1.0, 2.0, 3.9, 4.0, 5.0, 2.2], 0.3)\n"
            "    assert false == HumanEval.candidate([1.0, 2.0, 3.9, 4.0, 5.0, 2.2], 0.05)\n"
            "    assert true == HumanEval.candidate([1.0, 2.0, 5.9, 4.0, 5.0], 0.95)\n"
            "    assert false == HumanEval.candidate([1.0, 2.0, 5.9, 4.0, 5.0], 0.8)\n"
            "    assert true == HumanEval.candidate([1.0, 2.0, 3.0, 4.0, 5.0, 2.0], 0.1)\n"
            "    assert true == HumanEval.candidate([1.1, 2.2, 3.1, 4.1, 5.1], 1.0)\n"
            "    assert false == HumanEval.candidate([1.1, 2.2, 3.1, 4.1, 5.1], 0.5)\n"
            "  end\n"
            "end\n"
        ),
        right=(
            "indexed = Enum.with_index(numbers)\n"
            "    Enum.any?(indexed, fn {x, i} ->\n"
            "      Enum.any?(indexed, fn {y, j} -> i != j and abs(x - y) < threshold end)\n"
            "    end)\n"
            "  end\n"
            "end"
        ),
        wrong="_ = {numbers, threshold}\n    false\n  end\nend",
    ),
    MultiplECase(
        language="clj",
        name=NAME,
        prompt=(
            "(defn has_close_elements\n"
            '  " Check if in given list of numbers, are any two numbers closer to each other than\n'
            "      given threshold.\n"
            "      >>> (has_close_elements [1.0 2.0 3.0] 0.5)\n"
            "      false\n"
            "      >>> (has_close_elements [1.0 2.8 3.0 4.0 5.0 2.0] 0.3)\n"
            "      true\n"
            '      "\n'
            "  [numbers threshold]\n"
            "  "
        ),
        tests=(
            "(require '[clojure.test :refer [deftest is run-test]])\n"
            "\n"
            "(def candidate has_close_elements)\n"
            "\n"
            "(deftest test-humaneval\n"
            "\n"
            "  (is (= (candidate [1.0 2.0 3.9 4.0 5.0 2.2] 0.3) true))\n"
            "  (is (= (candidate [1.0 2.0 3.9 4.0 5.0 2.2] 0.05) false))\n"
            "  (is (= (candidate [1.0 2.0 5.9 4.0 5.0] 0.95) true))\n"
            "  (is (= (candidate [1.0 2.0 5.9 4.0 5.0] 0.8) false))\n"
            "  (is (= (candidate [1.0 2.0 3.0 4.0 5.0 2.0] 0.1) true))\n"
            "  (is (= (candidate [1.1 2.2 3.1 4.1 5.1] 1.0) true))\n"
            "  (is (= (candidate [1.1 2.2 3.1 4.1 5.1] 0.5) false))\n"
            ")\n"
            "\n"
            "(run-test test-humaneval)"
        ),
        right=(
            "(boolean (some (fn [[x y]] (< (Math/abs (double (- x y))) threshold))\n"
            "                 (for [i (range (count numbers)) j (range (inc i) (count numbers))]\n"
            "                   [(nth numbers i) (nth numbers j)]))))"
        ),
        wrong="(and (some? numbers) (some? threshold) false))",
    ),
]


BY_LANGUAGE: dict[str, MultiplECase] = {case.language: case for case in CASES}


# Debian (bookworm) packages the ``tests`` text needs beyond the language's own toolchain package.
HARNESS_PACKAGES: dict[str, tuple[str, ...]] = {
    "cpp": (),  # <bits/stdc++.h> and <assert.h> come with g++ (libstdc++-dev)
    "cs": ("libmono-system-numerics4.0-cil",),  # -r:System.Numerics.dll; Debug.Assert is in mscorlib
    "d": (),  # unittest blocks are the language's; MultiPL-E's rdmd has no bookworm package (ldc2 stands in)
    "go_test.go": (),  # only the standard "testing" and "fmt" packages (no testify)
    "java": ("libjavatuples-java",),  # every prompt has `import org.javatuples.*;`: javac fails without the jar
    "js": (),  # node's built-in node:assert
    "lua": ("lua-unit",),  # require('luaunit'); the package installs it for lua 5.1-5.4
    "php": (),
    "pl": ("libtest-deep-perl",),  # use Test::Deep (eq_deeply)
    "py": (),
    "r": (),  # base stopifnot/all.equal
    "rb": (),  # test/unit: the test-unit gem bundled in libruby3.1 (ruby-test-unit is a newer copy, optional)
    "rkt": (),  # rackunit ships in Debian's full `racket` package
    "rs": (),
    "scala": (),
    "sh": (),  # the harness is plain bash; completions often use awk/bc/sed
    "ts": (),  # `declare var require: any` stands in for @types/node; node:assert is built in
    "hs": (),  # plain `main` with `error`: no test library, no imports
    "ml": (),  # plain `assert`
    "elixir": (),  # ExUnit ships with elixir
    "clj": (),  # clojure.test is in the clojure jar (run-test needs Clojure >= 1.11)
}


# MultiPL-E's verdict per language (evaluation/src/eval_<lang>.py); "OK" is a pass, anything else a fail.
PASS_RULE: dict[str, str] = {
    "cpp": "g++ <f>.cpp -o <f> -std=c++17; fail to compile = SyntaxError; run ./<f>: exit 0 = OK (assert aborts)",
    "cs": (
        "csc /d:DEBUG -r:System.Numerics.dll <f>.cs /out:<f>.exe (mcs takes the same flags); compile error = "
        "SyntaxError; run `mono <f>.exe` with env MONO_TRACE_LISTENER=Console.Error; the exit code is ignored "
        "(mono returns 0 after a failed Debug.Assert): fail iff stderr contains "
        "'System.Diagnostics.DefaultTraceListener.Fail' or 'Unhandled Exception'"
    ),
    "d": "rdmd -unittest -main <f>.d (15 s): exit 0 = OK; 'Error:' in stderr = SyntaxError; else Exception",
    "go_test.go": (
        "go test <f>_test.go (30 s): '[setup failed]' or '[build failed]' in stdout = SyntaxError; "
        "'FAIL' in stdout = Exception; otherwise OK (the exit code is not read)"
    ),
    "java": (
        "javac -encoding UTF8 -d <dir> <f>.java with CLASSPATH=javatuples-1.2.jar; compile error = SyntaxError; "
        "java -ea -cp <dir>:javatuples-1.2.jar Problem: exit 0 = OK (-ea is what turns the asserts on)"
    ),
    "js": "node <f>.js: exit 0 = OK",
    "lua": "lua <f>.lua: exit 0 = OK (os.exit(lu.LuaUnit.run()) exits with the failure count)",
    "php": "php <f>.php: 'PHP Parse error' in stdout = SyntaxError; exit != 0 = Exception; exit 0 = OK",
    "pl": "perl <f>.pl: exit != 0 = Exception; 'ERROR' in stdout or stderr = Exception; else OK",
    "py": "python3 <f>.py: exit 0 = OK; 'SyntaxError' in stderr = SyntaxError",
    "r": "Rscript <f>.r: exit 0 = OK",
    "rb": "ruby <f>.rb: exit 0 = OK (test/unit's autorun exits 1 on a failed assertion)",
    "rkt": (
        "racket <f>.rkt: OK iff exit 0 AND stderr empty (rackunit prints failures to stderr but exits 0); "
        "'read-syntax' in stderr = SyntaxError"
    ),
    "rs": "rustc <f>.rs -o <f> (15 s); compile error = SyntaxError; run ./<f>: exit 0 = OK (assert_eq! panics)",
    "scala": (
        "scalac -d <dir> <f>.scala (45 s); compile error = SyntaxError; scala -cp <dir> Problem: OK iff exit 0 AND "
        "stderr empty"
    ),
    "sh": (
        "bash <f>.sh: exit 0 = OK ('set -e' makes the first failing [[ ]] exit 1); "
        "'syntax error' in stderr = SyntaxError"
    ),
    "ts": (
        "tsc --target esnext <f>.ts (15 s; emits <f>.js beside it); tsc exit != 0 (type errors too) = SyntaxError; "
        "node <f>.js: exit 0 = OK"
    ),
    "hs": "runghc <f>.hs: exit 0 = OK (`error` exits 1; type errors also exit 1)",
    "ml": "ocaml <f>.ml: exit 0 = OK ('Assert_failure' in stderr = AssertionError, exit 2)",
    "elixir": "elixir <f>.exs (5 s): exit 0 = OK (ExUnit's at-exit run exits non-zero, 2 here, when a test fails)",
    "clj": (
        "clojure -M -Dclojure.main.report=stderr <f>.clj (official Clojure CLI): OK iff exit 0 AND stderr empty. "
        "Broken as written: a failing clojure.test `is` prints 'FAIL in ...' to stdout and still exits 0 with "
        "empty stderr, so a wrong completion passes; judge also on stdout ending "
        "'0 failures, 0 errors.' (Debian's /usr/bin/clojure has no -M: run "
        "`java -Dclojure.main.report=stderr -cp /usr/share/java/clojure-1.11.jar clojure.main <f>.clj`)"
    ),
}
