"""Where our math grader deliberately disagrees with math-verify 0.9.0's own test tables.

Each entry names a case of math-verify's tests by its test function, gold and prediction
(and options, where the same pair runs with several), gives our score and why we differ.
`tests/test_math_verify_peer.py` fails when a case disagrees without an entry here, and
when an entry no longer matches a real disagreement.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Difference:
    test: str  # math-verify's test function
    gold: str
    pred: str
    ours: int  # our score; math-verify's table expects the other value
    reason: str
    options: tuple[tuple[str, Any], ...] = ()  # only the rows run with these options

    def covers(self, test: str, gold: str, pred: str, options: tuple[tuple[str, Any], ...]) -> bool:
        return (test, gold, pred) == (self.test, self.gold, self.pred) and set(self.options) <= set(options)


_DECIMAL_COMMA = (
    "a comma between digits is a list separator unless it groups thousands (1,000); reading it as a "
    "decimal comma would make a list of roots such as 1,5 equal 1.5"
)
_TWO_DIGITS = (
    "the test passes float_rounding=2, an option we do not have: a decimal stands for an exact value only "
    "when it states 6 significant digits, so 0.33 is not 1/3 and 2.6667 is not 8/3"
)

DIFFERENCES = [
    Difference("test_number_extraction", "1000.99", "1000,99", 0, _DECIMAL_COMMA),
    Difference("test_number_extraction", "1,22", "1.22", 0, _DECIMAL_COMMA),
    Difference("test_number_extraction", "2.74", "Soucis : 2,74 $ a..", 0, _DECIMAL_COMMA),
    Difference(
        "test_latex_notation",
        "$9$",
        "Answer \\( \n 9 \n \\)",
        1,
        "LaTeX lets \\( ... \\) span lines; math-verify's latex-only extraction refuses it, we read the 9",
    ),
    Difference(
        "test_complex_math_expressions",
        "$(\\begin{pmatrix}\\frac{1}{3}\\\\ \\frac{1}{5} \\end{pmatrix})$",
        "$\\begin{pmatrix}0.33\\\\0.2 \\end{pmatrix}$",
        0,
        _TWO_DIGITS,
    ),
    Difference("test_complex_math_expressions", "$(\\frac{3}{5},\\frac{8}{3}]$", "$(0.6,2.6667]$", 0, _TWO_DIGITS),
    Difference(
        "test_set_rel_assymetry",
        "$x \\in [-2,7]$",
        "$-2 \\\\le x \\\\le 7$",
        1,
        "-2 <= x <= 7 is the set [-2, 7]: we accept it whichever side writes the inequality "
        "(math-verify only with allow_set_relation_comp=True)",
        options=(("allow_set_relation_comp", False),),
    ),
    Difference(
        "test_string_extraction",
        "$1 - \\frac{1}{\\mathrm{e}}$",
        "$1 + \\frac{1}{\\mathrm{e}}$",
        0,
        "a false positive in math-verify: its unit stripping cuts `\\mathrm{e}}` off both sides, which then "
        "both read as 1; we keep e and 1 - 1/e != 1 + 1/e",
    ),
    Difference(
        "test_symbols",
        "$\text{13}$",  # not raw, as in math-verify's table: a tab, then `ext{13}`
        "$13$",
        1,
        "the gold is written in a Python literal that is not raw: `\\t` became a tab, leaving `ext{13}`; we "
        "repair escapes eaten that way, and `\\text{13}` is 13 (math-verify too says so for `\\text{13}` itself)",
    ),
]
