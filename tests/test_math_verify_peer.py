"""Peer suite: math-verify's own test tables, graded by our math grader.

math-verify's sdist on PyPI ships its `tests/`; we download it once into the git-ignored
`.cache/` (pip, the same Python), read the `pytest.mark.parametrize` tables with `ast`
(no import, no eval: f-strings calling `math.*` are the only non-literals and are
computed by `_value`), and grade each (gold, pred) pair with `grade_math(pred, gold)`.
Every table of 0.9.0 parses both sides from text (`compare_strings` or
`verify(parse(gold), parse(pred))`), so `grade_math`, extraction included, is the right
entry for all of them. Cases must agree with math-verify's expected value except those
in `tests/math_verify_differences.py`; cases with options we do not have are left out
and counted (at most 10).
"""

from __future__ import annotations

import ast
import math
import shutil
import subprocess
import sys
import tarfile
import tempfile
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from reward_api.graders.base import InvalidItem
from reward_api.graders.maths.verdict import grade_math
from reward_api.profiles import MathSettings
from tests.math_verify_differences import DIFFERENCES, Difference

VERSION = "0.9.0"
CACHE = Path(__file__).resolve().parents[1] / ".cache" / f"math-verify-{VERSION}"
# Options of math-verify's tables that our grader does not have: (option, value) -> why.
UNSUPPORTED = {("strict", False): "strict=False matches variables by position (f(x) = f(y))"}
# Tables without gold/pred: parse() with StringExtractionConfig (multiple-choice letters in prose).
STRING_TABLES = "StringExtractionConfig: letter extraction from prose is not a math-grader option"


@dataclass(frozen=True)
class PeerCase:
    test: str  # math-verify's test function
    index: int  # row in its table
    gold: str
    pred: str
    expected: int
    options: tuple[tuple[str, Any], ...]

    def skip_reason(self) -> str | None:
        return next((why for option, why in UNSUPPORTED.items() if option in self.options), None)


@pytest.fixture(scope="module")
def tests_dir() -> Path:
    """math-verify's tests/, from its sdist on PyPI, cached under .cache/."""
    target = CACHE / "tests"
    if target.is_dir():
        return target
    CACHE.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=CACHE) as tmp:
        command = [sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:"]
        done = subprocess.run(
            [*command, f"math-verify=={VERSION}", "-d", tmp], capture_output=True, text=True, timeout=600
        )
        if done.returncode != 0:
            pytest.fail(f"cannot download math-verify {VERSION}'s sdist from PyPI: {done.stderr[-300:]}")
        (sdist,) = Path(tmp).glob("math_verify-*.tar.gz")
        with tarfile.open(sdist) as tar:
            members = [m for m in tar.getmembers() if m.name.startswith(f"math_verify-{VERSION}/tests/")]
            tar.extractall(tmp, members=members, filter="data")
        if not target.exists():  # another session may have unpacked it meanwhile
            shutil.move(Path(tmp) / f"math_verify-{VERSION}" / "tests", target)
    return target


@pytest.fixture(scope="module")
def tables(tests_dir: Path) -> tuple[list[PeerCase], Counter[str]]:
    """Every (gold, pred, expected) row, and the rows of tables that are not about gold/pred."""
    cases: list[PeerCase] = []
    other_tables: Counter[str] = Counter()
    for path in sorted(tests_dir.glob("test_*.py")):
        for function in ast.parse(path.read_text()).body:
            if not isinstance(function, ast.FunctionDef):
                continue
            for decorator in function.decorator_list:
                if _is_parametrize(decorator):
                    rows = _table_cases(function, decorator)
                    if rows is None:
                        other_tables[f"{path.name}::{function.name}"] += len(decorator.args[1].elts)
                    else:
                        cases.extend(rows)
    return cases, other_tables


@pytest.fixture(scope="module")
def outcomes(tables: tuple[list[PeerCase], Counter[str]]) -> list[tuple[PeerCase, int | str]]:
    """Our score for each supported case ("invalid" when the gold is unusable as a reference)."""
    settings = MathSettings()
    results: list[tuple[PeerCase, int | str]] = []
    for case in tables[0]:
        if case.skip_reason():
            continue
        try:
            results.append((case, int(grade_math(case.pred, case.gold, settings).value)))
        except InvalidItem:
            results.append((case, "invalid"))
    return results


def test_cases_agree_with_math_verify_except_listed_differences(outcomes) -> None:
    unexpected = [
        f"{case.test}[{case.index}] expected {case.expected}, ours {ours}: "
        f"gold={case.gold[:80]!r} pred={case.pred[-80:]!r}"
        for case, ours in outcomes
        if ours != case.expected and _difference(case) is None
    ]
    assert not unexpected, "disagreements with math-verify not in math_verify_differences.py:\n" + "\n".join(unexpected)


def test_differences_list_has_no_stale_entries(outcomes) -> None:
    for difference in DIFFERENCES:
        found = [(case, ours) for case, ours in outcomes if _difference(case) is difference]
        assert found, f"listed case not in math-verify's tables: {difference.test} {difference.gold!r}"
        for case, ours in found:
            assert ours == difference.ours, f"{case.test}[{case.index}]: ours is now {ours}, listed {difference.ours}"
            assert ours != case.expected, f"{case.test}[{case.index}] agrees with math-verify now: drop it"
        assert difference.reason


def test_summary(tables, outcomes, capsys: pytest.CaptureFixture[str]) -> None:
    cases, other_tables = tables
    skipped = Counter(case.skip_reason() for case in cases if case.skip_reason())
    skipped.update({f"{STRING_TABLES} ({table})": rows for table, rows in other_tables.items()})
    differ = sum(ours != case.expected for case, ours in outcomes)
    total = len(cases) + sum(other_tables.values())
    with capsys.disabled():
        print(
            f"\nmath-verify {VERSION} peer suite: {total} cases, {len(outcomes) - differ} agree, "
            f"{differ} differ deliberately, {sum(skipped.values())} skipped because option unsupported"
            + "".join(f"\n  skipped {n}: {why}" for why, n in skipped.items())
        )
    assert len(cases) > 250, "math-verify's tables were not read"
    assert sum(skipped.values()) <= 10


def _difference(case: PeerCase) -> Difference | None:
    return next((d for d in DIFFERENCES if d.covers(case.test, case.gold, case.pred, case.options)), None)


def _is_parametrize(decorator: ast.expr) -> bool:
    return isinstance(decorator, ast.Call) and getattr(decorator.func, "attr", None) == "parametrize"


def _table_cases(function: ast.FunctionDef, decorator: ast.Call) -> list[PeerCase] | None:
    names = [name.strip() for name in _value(decorator.args[0]).split(",")]
    if "gold" not in names or "pred" not in names:
        return None
    keywords = _call_keywords(function)
    cases = []
    for index, row in enumerate(decorator.args[1].elts):
        values = dict(zip(names, _value(row), strict=True))
        options = {
            key: values[node.id] if isinstance(node, ast.Name) and node.id in values else _value(node)
            for key, node in keywords.items()
        }
        options |= {key: values[key] for key in ("strict", "allow_set_relation_comp", "precision") if key in values}
        expected = values.get("expected", values.get("result"))
        cases.append(
            PeerCase(
                function.name, index, values["gold"], values["pred"], int(expected), tuple(sorted(options.items()))
            )
        )
    return cases


def _call_keywords(function: ast.FunctionDef) -> dict[str, ast.expr]:
    """Keyword arguments of the table's `compare_strings(...)` or `verify(...)` call."""
    for node in ast.walk(function):
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) in ("compare_strings", "verify"):
            return {kw.arg: kw.value for kw in node.keywords if kw.arg}
    return {}


def _value(node: ast.expr) -> Any:
    """A literal of the test source; f-strings may call `math.*` (`f"{math.sqrt(17):.15f}"`)."""
    if isinstance(node, ast.Tuple | ast.List):
        return tuple(_value(element) for element in node.elts)
    if isinstance(node, ast.JoinedStr):
        return "".join(_value(part) for part in node.values)
    if isinstance(node, ast.FormattedValue):
        return format(_value(node.value), _value(node.format_spec) if node.format_spec else "")
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and getattr(node.func.value, "id", "") == "math"
    ):
        return getattr(math, node.func.attr)(*(_value(arg) for arg in node.args))
    return ast.literal_eval(node)
