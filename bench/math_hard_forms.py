"""Correct answers in hard-to-verify forms: how many our grader and math-verify accept, per family.

Two tables of cases with a close wrong twin each: real model answers (tests/math_collected_cases.py),
then one row per form the rules read (tests/test_math_hard_forms.py: issue 10's families, and issue
19's stored references, sized delimiters, stray punctuation, unbraced arguments and answers of the
reference's own size), and issue 35's families (tests/test_math_units_ratios.py, whose rows are mostly
wrong twins, and tests/test_math_forms_round3.py). For each family it prints the cases, how many our
grader and math-verify accept, and how many wrong twins each rejects; then the totals, one line for
the regression guards (real answers in forms both graders already accepted), and each correct answer
ours rejects or wrong twin it accepts.

Ours grades the answer as a completion that boxes it (`\\boxed{answer}`, the case's answer being
what a model put in the box) with `grade_math(..., MathSettings())`; math-verify parses both sides
as LaTeX in `$...$` and runs `verify(gold, answer)`, a list reference's items all parsed into `gold`
(math-verify accepts a match with any of them). Only `grade_math` and `MathSettings` are used, so
the same file runs in a worktree of an older commit for a before/after comparison.

    .venv/bin/python bench/math_hard_forms.py [--json PATH]
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from reward_api.graders.maths.verdict import grade_math
from reward_api.profiles import MathSettings
from tests.math_collected_cases import ACCEPTED_TODAY, CASES, FAMILIES, Case
from tests.test_math_forms_round3 import FAMILIES as ROUND3_FORMS
from tests.test_math_hard_forms import FAMILIES as FORMS
from tests.test_math_units_ratios import FAMILIES as UNITS_RATIOS

Reference = str | list[str] | tuple[str, ...]

# math-verify takes whole seconds; generous, as these items are short.
MATH_VERIFY_TIMEOUT_S = 5


@dataclass
class Tally:
    cases: int = 0
    ours: int = 0  # correct answers our grader accepts
    math_verify: int = 0  # correct answers math-verify accepts
    twins_ours: int = 0  # wrong twins our grader rejects
    twins_math_verify: int = 0  # wrong twins math-verify rejects
    missed_by_ours: list[str] = field(default_factory=list)
    twins_accepted_by_ours: list[str] = field(default_factory=list)


def ours_accepts(answer: str, reference: Reference, settings: MathSettings) -> bool:
    return grade_math(f"\\boxed{{{answer}}}", reference, settings).value == 1.0


def math_verify_accepts(answer: str, reference: Reference) -> bool:
    from math_verify import parse, verify

    references = [reference] if isinstance(reference, str) else reference
    gold = [found for item in references for found in parse(f"${item}$", parsing_timeout=MATH_VERIFY_TIMEOUT_S)]
    pred = parse(f"${answer}$", parsing_timeout=MATH_VERIFY_TIMEOUT_S)
    return bool(verify(gold, pred, timeout_seconds=MATH_VERIFY_TIMEOUT_S))


def tally(cases: list[Case], names: tuple[str, ...] = FAMILIES) -> dict[str, Tally]:
    settings = MathSettings()
    families = {name: Tally() for name in names}
    for case in cases:
        row = families[case.family]
        row.cases += 1
        if ours_accepts(case.answer, case.reference, settings):
            row.ours += 1
        else:
            row.missed_by_ours.append(f"{_shown(case.answer)} vs {_shown(case.reference)}")
        row.math_verify += math_verify_accepts(case.answer, case.reference)
        if ours_accepts(case.wrong, case.reference, settings):
            row.twins_accepted_by_ours.append(f"{_shown(case.wrong)} vs {_shown(case.reference)}")
        else:
            row.twins_ours += 1
        row.twins_math_verify += not math_verify_accepts(case.wrong, case.reference)
    return families


def twinned(family: str, rows: list[tuple[str, Reference, int]], source: str) -> list[Case]:
    """Cases from a table of (answer, reference, expected): each wrong row with the right answer to its reference."""
    right: dict[str, str] = {}
    cases = []
    for answer, reference, expected in rows:
        if expected:
            right[str(reference)] = answer
        elif str(reference) in right:
            cases.append(Case(family, right[str(reference)], reference, answer, source))
    return cases


def _shown(value: Reference) -> str:
    text = repr(value)
    return text if len(text) <= 100 else f"{text[:97]}..."


def total(families: dict[str, Tally]) -> Tally:
    out = Tally()
    for row in families.values():
        out.cases += row.cases
        out.ours += row.ours
        out.math_verify += row.math_verify
        out.twins_ours += row.twins_ours
        out.twins_math_verify += row.twins_math_verify
    return out


def print_table(title: str, families: dict[str, Tally]) -> None:
    head = f"{'family':24s} {'cases':>5s} {'ours':>5s} {'m-v':>5s}   {'twins rejected: ours':>20s} {'m-v':>5s}"
    print(f"\n{title}")
    print(head)
    print("-" * len(head))
    for name, row in [*families.items(), ("total", total(families))]:
        print(
            f"{name:24s} {row.cases:5d} {row.ours:5d} {row.math_verify:5d}   "
            f"{row.twins_ours:20d} {row.twins_math_verify:5d}"
        )
    for name, row in families.items():
        for line in row.missed_by_ours:
            print(f"ours rejects  [{name}] {line}")
        for line in row.twins_accepted_by_ours:
            print(f"ours ACCEPTS wrong twin [{name}] {line}")


def print_guards(guards: Tally) -> None:
    print(
        f"regression guards (forms both accepted before issue 10): {guards.cases} cases, ours accepts {guards.ours}, "
        f"math-verify {guards.math_verify}; twins rejected: ours {guards.twins_ours}, math-verify "
        f"{guards.twins_math_verify}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--json", type=Path, help="also write the per-family numbers here")
    args = parser.parse_args()

    families = tally(CASES)
    guards = total(tally(ACCEPTED_TODAY))
    form_cases = [Case(name, *row, "tests/test_math_hard_forms.py") for name, rows in FORMS.items() for row in rows]
    forms = tally(form_cases, tuple(FORMS))
    print_table("real model answers (tests/math_collected_cases.py)", families)
    print_guards(guards)
    print_table("one row per form with its twin (tests/test_math_hard_forms.py)", forms)
    round3_tables = {**UNITS_RATIOS, **ROUND3_FORMS}
    round3_cases = [
        case
        for name, rows in round3_tables.items()
        for case in twinned(name, rows, "tests/test_math_units_ratios.py, tests/test_math_forms_round3.py")
    ]
    round3 = tally(round3_cases, tuple(round3_tables))
    print_table("issue 35: units, ratios and forms, with their twins", round3)
    if args.json:
        rows = [*families.items(), ("total", total(families)), ("regression_guards", guards)]
        rows += [(f"form:{name}", row) for name, row in forms.items()] + [("form:total", total(forms))]
        rows += [(f"round3:{name}", row) for name, row in round3.items()] + [("round3:total", total(round3))]
        numbers = {name: {k: v for k, v in vars(row).items() if isinstance(v, int)} for name, row in rows}
        args.json.write_text(json.dumps(numbers, indent=2) + "\n")


if __name__ == "__main__":
    main()
