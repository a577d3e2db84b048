"""The reference of a `code` item: its tests and limits, in the shapes RL code data ships.

    APPS / TACO    {"inputs": [...], "outputs": [...], "fn_name"?: str}, also as a JSON string
                   or wrapped as {"input_output": ...}: with fn_name, inputs[i] is the argument
                   list and outputs[i] the returned value; else stdin and stdout text
    CodeContests   {"tests": [{"input": ..., "output": ...}]}, or "stdin" / "stdout" keys; open-r1's
                   verifiable coding problems: "test_cases"; DeepCoder's rows: the list of tests alone
    LiveCodeBench  the same with "testtype": "stdin" | "functional" and "fn_name" or
                   "metadata": {"func_name": ...}; a functional input is newline-separated JSON
                   arguments and its output the JSON result
    HumanEval      {"test": "def check(candidate): ...", "entry_point": "f", "prompt"?: str}
    MBPP           {"test_list": ["assert ..."], "test_setup_code"?: str, "test_imports"?: [...]}
    MultiPL-E      {"language": "lua", "prompt": str, "tests": str}: the tests are code in that language,
                   run after the program; HumanEval-X and humanevalpack: {"language": "cpp", "test": str,
                   "prompt"?, "entry_point"?}; a test file's tests: {"language": "pytest" | "junit" |
                   "jest" | "go_test" | "gtest" | "d_ut" | ..., "test": str}. The program is the answer's
                   code, after the prompt when the code does not define the function itself, then the
                   tests; MultiPL-E's Go and D tests run as go_test and d_ut

Options on any of them: `language`, `time_limit` (CPU seconds per test), `memory_limit`
(MB), `total_time_limit` (seconds, the whole run), `float_tolerance`, `case_sensitive`,
`stop_on_first_failure`, `files` ({path: base64}, as SandboxFusion's: written before the program runs, relative
to its directory or absolute under /sandbox or /tmp). A malformed reference raises InvalidItem naming the field, e.g.
`reference.tests[3].input: ...`. Function-call and assert tests run Python only; program tests run
in the reference's language, whatever the answer's fence says.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from typing import Any

from reward_api.graders.base import InvalidItem
from reward_api.profiles import CodeSettings
from sandbox.executor import MAX_TEST_MEMORY_MB, Limits
from sandbox.files import from_base64, sandbox_path
from sandbox.judge import AssertTest, CallTest, Comparison, ProgramTest, StdioTest, TestSuite
from sandbox.languages import LanguageError, get_language

SHAPES = (
    "{'inputs', 'outputs'} (APPS/TACO), {'tests': [...]} (CodeContests/LiveCodeBench), "
    "{'test', 'entry_point'} (HumanEval), {'test_list'} (MBPP) or {'language', 'tests': str} (MultiPL-E)"
)
MAX_NUMBER = 1e9  # bound of numeric options: NaN, infinity and absurd sizes are mistakes
# Run before the solution of function-call tests: the imports LeetCode-style code takes for granted (`List[int]`).
CALL_PRELUDE = (
    "from typing import *\nfrom collections import *\n"
    "import bisect, collections, functools, heapq, itertools, math, re, string\n"
)


@dataclass(frozen=True)
class CodeReference:
    suite: TestSuite
    limits: Limits
    stop_on_first_failure: bool
    language: str | None = None  # the reference's own language, when it names one
    prompt: str | None = None  # HumanEval: the code a completion continues
    entry_point: str | None = None
    tests_in_reference: int = 0  # before the profile's max_tests cut

    def program(self, code: str) -> str:
        """The code to run: the prompt first when the code does not define the entry point itself
        (a completion of the body only), and the imports function-call solutions assume."""
        if self.suite.kind == "program":
            if self.prompt is None or _completes(code, self.prompt, self.entry_point):
                return code
            return self.prompt + code  # MultiPL-E's completion: the body, after the prompt's signature
        if self.prompt is not None and self.entry_point is not None and not _defines(code, self.entry_point):
            code = self.prompt.rstrip("\n") + "\n" + code
        return CALL_PRELUDE + code if self.suite.kind == "call" else code


def parse_reference(reference: object, settings: CodeSettings, max_run_s: float = math.inf) -> CodeReference:
    """Tests, limits and options of a code reference; `max_run_s` caps the whole run."""
    ref = _object(_tests_listed_bare(reference), "reference", f"an object with tests: {SHAPES}")
    if isinstance(reference, str) and "total_time_limit" in ref:
        raise InvalidItem(
            "reference.total_time_limit: set it on a reference object, not inside a JSON string "
            "(the service sets the item's deadline from it before decoding)"
        )
    source, where = ref, "reference"
    if "input_output" in ref:
        source, where = _object(ref["input_output"], "reference.input_output"), "reference.input_output"
    comparison = Comparison(
        float_tolerance=_number(ref, "float_tolerance", Comparison.float_tolerance, allow_zero=True),
        case_sensitive=_flag(ref, "case_sensitive", Comparison.case_sensitive),
    )
    language = _language(ref)
    suite, prompt, entry_point = _suite(source, ref, where, comparison, language)
    if suite.kind == "program":
        language = _program_language(language, where)
    elif suite.kind != "stdio" and language not in (None, "python"):
        raise InvalidItem(f"reference.language: {suite.kind} tests run Python only, got {language!r}")
    limits = Limits(
        time_s=_number(ref, "time_limit", settings.time_limit_s),
        memory_mb=_memory_mb(ref, settings),
        total_s=run_budget_s(ref, settings, max_run_s),
    )
    files = _files(ref.get("files", {}))
    return CodeReference(
        suite=TestSuite(suite.kind, suite.tests[: settings.max_tests], suite.fn_name, suite.comparison, files),
        limits=limits,
        stop_on_first_failure=_flag(
            ref, "stop_on_first_failure", settings.stop_on_first_failure or settings.all_or_nothing
        ),
        language=language,
        prompt=prompt,
        entry_point=entry_point,
        tests_in_reference=len(suite.tests),
    )


def is_code_reference(reference: object) -> bool:
    """Whether `reference` holds tests in a shape parse_reference reads: what makes an item of task `auto` a code
    item, whatever its data set is called."""
    try:
        parse_reference(reference, CodeSettings())
    except InvalidItem:
        return False
    return True


def run_budget_s(reference: object, settings: CodeSettings, max_s: float) -> float:
    """Seconds the whole run (compiling and every test) may take, at most `max_s`.

    Read from a reference object only: the engine sets the item's deadline from it before any
    JSON string is decoded.
    """
    options = reference if isinstance(reference, dict) else {}
    return min(_number(options, "total_time_limit", settings.total_time_limit_s), max_s)


def _suite(
    src: dict[str, Any], ref: dict[str, Any], where: str, comparison: Comparison, language: str | None
) -> tuple[TestSuite, str | None, str | None]:
    """The suite of whichever shape `src` has, with the HumanEval prompt and entry point."""
    if isinstance(src.get("tests"), str) and language is not None:  # MultiPL-E rows name their language
        return _program(src, "tests", where)
    if "test" in src and language not in (None, "python"):
        return _program(src, "test", where)
    if "test_list" in src:
        return TestSuite("assert", _mbpp_tests(src, where)), None, None
    if "test" in src or "entry_point" in src:
        return _humaneval(src, where)
    fn_name = _fn_name(src, ref, where)
    if (key := next((key for key in ("tests", "test_cases") if key in src), None)) is not None:
        kind, tests = _listed_tests(src[key], f"{where}.{key}", fn_name)
    elif "inputs" in src or "outputs" in src:
        kind, tests = _columns(src, where, fn_name)
    else:
        raise InvalidItem(f"{where}: expected tests in one of these shapes: {SHAPES}; got keys {sorted(src)[:10]}")
    if kind == "call" and fn_name is None:
        raise InvalidItem(f"{where}.fn_name: functional tests need the function's name (fn_name or metadata.func_name)")
    return TestSuite(kind, tests, fn_name if kind == "call" else None, comparison), None, None


def _columns(src: dict[str, Any], where: str, fn_name: str | None) -> tuple[str, tuple]:
    """APPS/TACO `input_output`: parallel lists of inputs and outputs."""
    inputs, outputs = _list(src.get("inputs"), f"{where}.inputs"), _list(src.get("outputs"), f"{where}.outputs")
    if len(inputs) != len(outputs):
        raise InvalidItem(f"{where}.outputs: {len(outputs)} outputs for {len(inputs)} inputs; expected one per input")
    if fn_name is not None:
        return "call", tuple(
            CallTest(_args(x, f"{where}.inputs[{i}]"), y) for i, (x, y) in enumerate(zip(inputs, outputs, strict=True))
        )
    return "stdio", tuple(
        StdioTest(_text(x, f"{where}.inputs[{i}]"), _text(y, f"{where}.outputs[{i}]"))
        for i, (x, y) in enumerate(zip(inputs, outputs, strict=True))
    )


def _listed_tests(value: object, where: str, fn_name: str | None) -> tuple[str, tuple]:
    """CodeContests / LiveCodeBench: a list of {input, output[, testtype]} objects."""
    tests, kinds = [], set()
    for i, test in enumerate(_list(value, where)):
        at = f"{where}[{i}]"
        if not isinstance(test, dict):
            raise InvalidItem(f"{at}: expected an object with input and output, got {_kind(test)}")
        testtype = test.get("testtype", "functional" if fn_name else "stdin")
        if testtype not in ("stdin", "functional"):
            raise InvalidItem(f"{at}.testtype: expected 'stdin' or 'functional', got {testtype!r}")
        given, expected = _field(test, ("input", "stdin"), at), _field(test, ("output", "stdout"), at)
        kinds.add(testtype)
        if testtype == "functional":
            tests.append(CallTest(_args(given, f"{at}.input"), _json_value(expected, f"{at}.output")))
        else:
            tests.append(StdioTest(_text(given, f"{at}.input"), _text(expected, f"{at}.output")))
    if len(kinds) > 1:
        raise InvalidItem(f"{where}: mixes stdin and functional tests; send them as separate items")
    return ("call" if kinds == {"functional"} else "stdio"), tuple(tests)


def _humaneval(src: dict[str, Any], where: str) -> tuple[TestSuite, str | None, str]:
    test = _python(src.get("test"), f"{where}.test", "the test code defining check(candidate)")
    entry_point = src.get("entry_point")
    if not isinstance(entry_point, str) or not entry_point.isidentifier():
        raise InvalidItem(f"{where}.entry_point: expected the name of the function to check, got {entry_point!r}")
    prompt = src.get("prompt") or None
    if prompt is not None:
        prompt = _python(prompt, f"{where}.prompt", "the Python code the completion continues")
    # The test runs apart from the program (sandbox/runner.py's Harness): the prompt's helpers it calls (HumanEval/32's
    # poly) are the reference's own, and only the entry point is the program's.
    candidate = f"{entry_point} = __judge__.solution({entry_point!r})\n"
    return (
        TestSuite("assert", (AssertTest(f"{prompt or ''}\n{candidate}{test}\n\ncheck({entry_point})\n"),)),
        prompt,
        entry_point,
    )


def _program(src: dict[str, Any], key: str, where: str) -> tuple[TestSuite, str | None, str | None]:
    """MultiPL-E, HumanEval-X or a test file: test code in the reference's language, run after the program."""
    tests, prompt, entry_point = src[key], src.get("prompt") or None, src.get("entry_point") or None
    for value, name in ((tests, key), (prompt, "prompt"), (entry_point, "entry_point")):
        if value is not None and not (isinstance(value, str) and value.strip()):
            raise InvalidItem(f"{where}.{name}: expected code (a non-empty string), got {_kind(value)}")
    return TestSuite("program", (ProgramTest(tests, prompt),)), prompt, entry_point


def _program_language(language: str | None, where: str) -> str:
    if language is None:
        raise InvalidItem(f"{where}.language: program tests are code in some language; name it (e.g. 'lua')")
    return get_language(language).tests_run_as or language


def _completes(code: str, prompt: str, entry_point: str | None) -> bool:
    """Whether `code` holds the function the prompt starts (the entry point's name, else the prompt's last line,
    its signature, spaces aside) rather than continuing the prompt."""
    if entry_point is not None:
        return re.search(rf"\b{re.escape(entry_point)}\b", code) is not None
    lines = [line for line in prompt.splitlines() if line.strip()]
    return bool(lines) and "".join(lines[-1].split()) in "".join(code.split())


def _mbpp_tests(src: dict[str, Any], where: str) -> tuple[AssertTest, ...]:
    imports = src.get("test_imports") or []
    if not isinstance(imports, list) or not all(isinstance(line, str) for line in imports):
        raise InvalidItem(f"{where}.test_imports: expected a list of import statements")
    setup = src.get("test_setup_code") or ""
    for code, name in (("\n".join(imports), "test_imports"), (setup, "test_setup_code")):
        if code.strip():
            _python(code, f"{where}.{name}", "Python run before each assert")
    head = "\n".join([*imports, setup])
    asserts = _list(src["test_list"], f"{where}.test_list")
    return tuple(
        AssertTest(f"{head}\n{_python(code, f'{where}.test_list[{i}]', 'an assert statement')}")
        for i, code in enumerate(asserts)
    )


def _fn_name(src: dict[str, Any], ref: dict[str, Any], where: str) -> str | None:
    """`fn_name` (APPS, TACO) or LiveCodeBench's `metadata.func_name` (metadata may be a JSON string)."""
    name = src.get("fn_name") or ref.get("fn_name")
    if name is None and ref.get("metadata"):
        name = _object(ref["metadata"], "reference.metadata").get("func_name")
    if name is not None and not (isinstance(name, str) and name.isidentifier()):
        raise InvalidItem(f"{where}.fn_name: expected a function or method name, got {name!r}")
    return name


def _language(ref: dict[str, Any]) -> str | None:
    value = ref.get("language")
    if value is None:
        return None
    if not isinstance(value, str):
        raise InvalidItem(f"reference.language: expected a language name, got {_kind(value)}")
    try:
        return get_language(value).name
    except LanguageError as exc:
        raise InvalidItem(f"reference.language: {exc}") from None


def _tests_listed_bare(reference: object) -> object:
    """A list of test objects (or a JSON string of one), as DeepCoder's lcbv5 and primeintellect rows store their
    tests, read as {"tests": [...]}; anything else as it is."""
    value = reference
    if isinstance(value, str) and value.lstrip().startswith("["):
        try:
            value = json.loads(value)
        except (ValueError, RecursionError):
            return reference  # _object names what is wrong with it
    is_test_list = isinstance(value, list) and value and all(isinstance(test, dict) for test in value)
    return {"tests": value} if is_test_list else reference


def _files(value: object) -> dict[str, bytes]:
    """The files the tests read ({path: base64}, as SandboxFusion's `files`), written before the program runs."""
    files = {}
    for path, content in _object(value, "reference.files", "an object of path -> base64 content").items():
        _utf8(path, f"reference.files.{path!r}")
        if not isinstance(content, str):
            raise InvalidItem(f"reference.files.{path}: expected base64 text, got {_kind(content)}")
        try:
            sandbox_path(path, isolated=True)
            files[path] = from_base64(content)
        except ValueError as exc:
            raise InvalidItem(f"reference.files.{path}: {exc}") from None
    return files


def _object(value: object, where: str, expected: str = "an object") -> dict[str, Any]:
    """An object, or a JSON string holding one (as APPS and TACO store `input_output`)."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except (ValueError, RecursionError) as exc:
            raise InvalidItem(f"{where}: expected {expected}, or a JSON string of one; not JSON ({exc})") from None
    if not isinstance(value, dict):
        raise InvalidItem(f"{where}: expected {expected}, got {_kind(value)}")
    return value


def _list(value: object, where: str) -> list[Any]:
    if not isinstance(value, list) or not value:
        raise InvalidItem(f"{where}: expected a non-empty list, got {_kind(value)}")
    return value


def _field(test: dict[str, Any], names: tuple[str, str], where: str) -> object:
    for name in names:
        if name in test:
            return test[name]
    raise InvalidItem(f"{where}.{names[0]}: missing (expected {names[0]!r} or {names[1]!r})")


def _text(value: object, where: str) -> str:
    """Stdin or expected stdout: a string, a list of lines, or a bare number."""
    if isinstance(value, str):
        return _utf8(value, where)
    if isinstance(value, list) and all(isinstance(line, str) for line in value):
        return _utf8("\n".join(value) + "\n", where)
    if isinstance(value, int | float) and not isinstance(value, bool):
        return str(value)
    raise InvalidItem(f"{where}: expected text (a string or a list of lines), got {_kind(value)}")


def _utf8(text: str, where: str) -> str:
    """`text`, which a run reads or writes as UTF-8: a lone surrogate (legal in JSON's escapes) is not text, so
    the item is invalid, naming the field, rather than a run that fails to start."""
    if not text.isascii():
        try:
            text.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise InvalidItem(
                f"{where}: holds {text[exc.start]!r}, a lone surrogate, which is not text; send valid UTF-8"
            ) from None
    return text


def _args(value: object, where: str) -> list[Any]:
    """Call arguments: a list, or newline-separated JSON values (LiveCodeBench)."""
    if isinstance(value, list):
        return value
    if isinstance(value, str):
        try:
            return [json.loads(line) for line in value.split("\n") if line.strip()]
        except (ValueError, RecursionError) as exc:
            raise InvalidItem(f"{where}: expected JSON arguments, one per line ({exc})") from None
    raise InvalidItem(f"{where}: expected the argument list, got {_kind(value)}")


def _json_value(value: object, where: str) -> Any:
    """An expected return value: a string is JSON text (LiveCodeBench), anything else is the value."""
    if not isinstance(value, str):
        return value
    try:
        return json.loads(value)
    except (ValueError, RecursionError) as exc:
        raise InvalidItem(f"{where}: expected the result as JSON text ({exc})") from None


def _python(value: object, where: str, what: str) -> str:
    """Python source from the reference, syntax-checked here so a broken test is not blamed on the answer."""
    if not isinstance(value, str) or not value.strip():
        raise InvalidItem(f"{where}: expected {what}, got {_kind(value)}")
    try:
        compile(value, where, "exec")
    except (SyntaxError, ValueError) as exc:
        raise InvalidItem(f"{where}: not valid Python ({type(exc).__name__}: {exc})") from None
    return value


def _number(options: dict[str, Any], key: str, default: float, allow_zero: bool = False) -> float:
    value = options.get(key)
    if value is None:
        return default
    number = isinstance(value, int | float) and not isinstance(value, bool)
    if not (number and (value >= 0 if allow_zero else value > 0) and value < MAX_NUMBER):
        sign = "non-negative" if allow_zero else "positive"
        raise InvalidItem(f"reference.{key}: expected a {sign} number below {MAX_NUMBER:g}, got {value!r}")
    return float(value)


def _memory_mb(ref: dict[str, Any], settings: CodeSettings) -> int:
    memory_mb = math.ceil(_number(ref, "memory_limit", settings.memory_limit_mb))
    if memory_mb > MAX_TEST_MEMORY_MB:
        field = "reference.memory_limit" if "memory_limit" in ref else "profile code.memory_limit_mb"
        raise InvalidItem(f"{field}: {memory_mb} MB a test is more than the {MAX_TEST_MEMORY_MB} MB the sandbox allows")
    return memory_mb


def _flag(options: dict[str, Any], key: str, default: bool) -> bool:
    value = options.get(key, default)
    if not isinstance(value, bool):
        raise InvalidItem(f"reference.{key}: expected true or false, got {value!r}")
    return value


def _defines(code: str, name: str) -> bool:
    """Whether the code defines `name` as a top-level function."""
    return re.search(rf"^(?:async[ \t]+)?def[ \t]+{re.escape(name)}[ \t]*\(", code, re.MULTILINE) is not None


def _kind(value: object) -> str:
    return "null" if value is None else type(value).__name__
