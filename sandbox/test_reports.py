"""Per-test results from what a test framework prints: pytest, go test, GoogleTest, JUnit 5 and Jest.

    parse("go_test", "--- PASS: TestAdd (0.00s)\\n--- FAIL: TestSub (0.00s)\\n")
    -> [TestOutcome("TestAdd", True), TestOutcome("TestSub", False)]

Each parser reads the framework's own plain-text report, as the language's run command asks for it
(sandbox/languages: pytest -rA, go's -test.v, gtest's default, JUnit's --details=tree, jest --verbose).
Every report is kept, in order: a test reported twice passes only when every report of it says so (gtest lists
failures again at the end; a program may print a forged pass before the framework's real failure).

`declared` reads the names of the tests a reference's test code declares, as its framework reports them, so
tests are identified by the reference, not by words in whatever names a run prints.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass


@dataclass(frozen=True)
class TestOutcome:
    name: str
    passed: bool
    detail: str = ""


_PYTEST = re.compile(r"^(PASSED|FAILED|ERROR|XPASS|XFAIL) (\S+?)(?: - (.*))?$", re.M)
_GO = re.compile(r"^--- (PASS|FAIL): (\S+)", re.M)  # top level only: subtests are indented
_GTEST = re.compile(r"^\[ +(OK|FAILED) +\] ([\w/]+\.[\w/]+)", re.M)
_JUNIT = re.compile(r"[├└]─ (.+\)) ([✔✘])(?: (.*))?$", re.M)  # test methods end in `)`: containers do not
_JEST = re.compile(r"^ +([✓✕]) (.+?)(?: \(\d+ ms\))?$", re.M)


def _pytest(text: str) -> Iterable[TestOutcome]:
    # XFAIL is a failure that was expected: not a pass (a program that marks every test xfail passes none)
    for status, test_id, why in _PYTEST.findall(text):
        yield TestOutcome(test_id.rpartition("::")[2], status in ("PASSED", "XPASS"), why)


def _go(text: str) -> Iterable[TestOutcome]:
    return (TestOutcome(name, status == "PASS") for status, name in _GO.findall(text))


def _gtest(text: str) -> Iterable[TestOutcome]:
    return (TestOutcome(name, status == "OK") for status, name in _GTEST.findall(text))


def _junit(text: str) -> Iterable[TestOutcome]:
    return (TestOutcome(name, mark == "✔", why) for name, mark, why in _JUNIT.findall(text))


def _jest(text: str) -> Iterable[TestOutcome]:
    return (TestOutcome(name, mark == "✓") for mark, name in _JEST.findall(text))


PARSERS: dict[str, Callable[[str], Iterable[TestOutcome]]] = {
    "pytest": _pytest, "go_test": _go, "gtest": _gtest, "junit": _junit, "jest": _jest,
}  # fmt: skip


def parse(report: str, output: str) -> list[TestOutcome]:
    """Every test report `output` (stdout and stderr together) holds in framework `report`'s format, in order."""
    return list(PARSERS[report](output))


# The tests a test file declares, per framework, as its report names them: pytest's test functions and methods
# (a parametrized one reports `name[params]`), go's TestX(t *testing.T), gtest's TEST and TEST_F (Suite.Name),
# JUnit's @Test methods (`name()`), Jest's test and it titles. A skipped or disabled declaration (xit, test.skip,
# DISABLED_) is not declared to run.
_DECLARATIONS: dict[str, tuple[re.Pattern[str], Callable[[re.Match[str]], str]]] = {
    "pytest": (re.compile(r"^[ \t]*(?:async[ \t]+)?def[ \t]+(test\w*)[ \t]*\(", re.M), lambda m: m.group(1)),
    "go_test": (
        re.compile(r"^func[ \t]+(Test\w*)[ \t]*\([ \t]*\w+[ \t]+\*testing\.T[ \t]*\)", re.M),
        lambda m: m.group(1),
    ),
    "gtest": (
        re.compile(r"\bTEST(?:_F)?[ \t]*\([ \t]*(\w+)[ \t]*,[ \t]*(\w+)[ \t]*\)"),
        lambda m: f"{m.group(1)}.{m.group(2)}",
    ),
    "junit": (
        re.compile(
            r"@Test\b(?:\s*@\w+(?:\([^)]*\))?)*\s*(?:(?:public|protected|private|static|final)\s+)*void\s+(\w+)\s*\("
        ),
        lambda m: f"{m.group(1)}()",
    ),
    "jest": (
        re.compile(r"(?<![\w.])(?:test|it)[ \t]*\([ \t]*(['\"])((?:\\.|(?!\1).)*)\1"),
        lambda m: re.sub(r"\\(.)", r"\1", m.group(2)),
    ),
}  # fmt: skip
# Shapes whose reported names the declarations above cannot foresee (parametrized JUnit and Jest tests, gtest's
# value- and type-parametrized suites, a JUnit @DisplayName, Jest titles with format specifiers, Jest's `.each`).
_UNFORESEEN = {
    "junit": re.compile(r"@(?:ParameterizedTest|RepeatedTest|TestFactory|TestTemplate|DisplayName|Nested)\b"),
    "gtest": re.compile(r"\b(?:TEST_P|TYPED_TEST|TYPED_TEST_P)\b"),
    "jest": re.compile(r"\b(?:test|it)\.each\b|\b(?:test|it)[ \t]*\([ \t]*`|%[sdifjopO#]"),
}


def declared(report: str, tests_code: str) -> list[str] | None:
    """The names of the tests `tests_code` declares, as framework `report` reports them (a name twice where it is
    declared twice), in order; None where its shape does not say the names a run reports (see _UNFORESEEN)."""
    unforeseen = _UNFORESEEN.get(report)
    if report not in _DECLARATIONS or (unforeseen is not None and unforeseen.search(tests_code)):
        return None
    pattern, name = _DECLARATIONS[report]
    names = [name(match) for match in pattern.finditer(tests_code)]
    if report == "gtest":
        names = [n for n in names if "DISABLED_" not in n]
    return names or None


def reported_name(report: str, name: str) -> str:
    """The declared test a reported name belongs to (pytest's `test_x[1-2]` is one case of test_x)."""
    return name.partition("[")[0] if report == "pytest" else name
