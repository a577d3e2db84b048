"""Per-test results from what a test framework prints: pytest, go test, GoogleTest, JUnit 5 and Jest.

    parse("go_test", "--- PASS: TestAdd (0.00s)\\n--- FAIL: TestSub (0.00s)\\n")
    -> [TestOutcome("TestAdd", True), TestOutcome("TestSub", False)]

Each parser reads the framework's own plain-text report, as the language's run command asks for it
(sandbox/languages: pytest -rA, go's -test.v, gtest's default, JUnit's --details=tree, jest --verbose).
A test reported twice (gtest lists failures again at the end) counts once, with its first outcome.
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
    for status, test_id, why in _PYTEST.findall(text):
        yield TestOutcome(test_id.rpartition("::")[2], status in ("PASSED", "XFAIL"), why)


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
    """The tests `output` (stdout and stderr together) reports in framework `report`'s format, in order."""
    seen: dict[str, TestOutcome] = {}
    for outcome in PARSERS[report](output):
        seen.setdefault(outcome.name, outcome)
    return list(seen.values())
