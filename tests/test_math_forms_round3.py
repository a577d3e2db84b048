"""Right answers in forms the grader rejected before issue 35, each beside a wrong twin that stays rejected.

Tables of (answer, reference, expected), in the style of math-verify's tests: the right answer's row
(1) comes first, its twin (0), a close edit that makes it wrong, right after.
"""

from __future__ import annotations

import pytest

from reward_api.graders.maths.verdict import grade_math
from tests.test_math_hard_forms import DEFAULT, grade

REPEATING_DECIMALS = [
    (r"0.\overline{7}", r"\frac{7}{9}", 1),
    (r"0.\overline{07}", r"\frac{7}{9}", 0),
    (r"0.\overline{27}", r"\frac{3}{11}", 1),
    (r"0.\overline{72}", r"\frac{3}{11}", 0),
    (r"0.1\overline{6}", r"\frac{1}{6}", 1),
    (r"0.\overline{16}", r"\frac{1}{6}", 0),
    (r"0.1666\ldots", r"\frac{1}{6}", 1),
    ("0.1666", r"\frac{1}{6}", 0),  # a truncation, not the exact value
    ("1.999...", "2", 1),
    ("1.99", "2", 0),
    ("0.272727…", r"\frac{3}{11}", 1),
    ("0.272727…", r"\frac{27}{100}", 0),
    (r"\frac{7}{9}", r"0.\overline{7}", 1),  # the repeating decimal as the reference
    (r"\frac{7}{10}", r"0.\overline{7}", 0),
    (r"-0.\overline{3}", r"-\frac{1}{3}", 1),
    (r"-0.\overline{3}", r"\frac{1}{3}", 0),
    (r"2.\overline{142857}", r"\frac{15}{7}", 1),
    (r"2.\overline{142856}", r"\frac{15}{7}", 0),
    (r"1.41421356\ldots", r"\sqrt{2}", 1),  # no repeating tail: a truncation, as before
    (r"1.41421357\ldots", r"\sqrt{2}", 0),
]

REVERSED_CHAINS = [
    ("5 > y > 2", "2 < y < 5", 1),
    ("5 > y > 3", "2 < y < 5", 0),
    (r"5 \geq y > 2", r"2 < y \leq 5", 1),
    (r"5 > y \geq 2", r"2 < y \leq 5", 0),
    (r"2 < x \le 7", r"7 \ge x > 2", 1),
    (r"2 \le x \le 7", r"7 \ge x > 2", 0),
]

NOTATION = [
    (r"\varnothing", r"\emptyset", 1),
    (r"\{0\}", r"\emptyset", 0),
    (r"\emptyset", r"\varnothing", 1),
    (r"\{\varnothing\}", r"\varnothing", 0),
    (r"5 \colon 8", "5:8", 1),
    (r"8 \colon 5", "5:8", 0),
    (r"5 \colon 8", r"\frac{5}{8}", 1),
    (r"3 \colon 2 \colon 1", "6:4:2", 1),
    (r"3 \colon 1 \colon 2", "6:4:2", 0),
    (r"\langle 1, 5 \rangle", r"\begin{pmatrix} 1 \\ 5 \end{pmatrix}", 1),
    (r"\langle 5, 1 \rangle", r"\begin{pmatrix} 1 \\ 5 \end{pmatrix}", 0),
    (r"110_{\text{two}}", "110_2", 1),
    (r"111_{\text{two}}", "110_2", 0),
    ("1010_{(2)}", "1010_2", 1),
    ("1010_{(3)}", "1010_2", 0),
    ("1010", "1010_2", 1),  # a bare numeral is in the question's base
    ("1011", "1010_2", 0),
    ("1010_3", "1010_2", 0),  # the parser drops a subscript: any base used to match
]

DEGREE_ARGUMENTS = [
    (r"\cos 30^\circ", r"\frac{\sqrt{3}}{2}", 1),
    (r"\cos 60^\circ", r"\frac{\sqrt{3}}{2}", 0),
    (r"\tan 15^\circ", r"2-\sqrt{3}", 1),
    (r"\tan 15", r"2-\sqrt{3}", 0),  # 15 radians
    (r"\sin(45°)", r"\frac{\sqrt{2}}{2}", 1),
    (r"\sin(45°)", r"\frac{1}{2}", 0),
    (r"2\sin 30^{\circ} + \cos 0^\circ", "2", 1),
    (r"2\sin 30^{\circ} + \cos 90^\circ", "2", 0),
    (r"\frac{\sqrt{3}}{2}", r"\sin 60^\circ", 1),
    (r"\frac{1}{2}", r"\sin 60^\circ", 0),
]

EXPONENTIAL_FORM = [
    (r"2e^{i\pi/3}", r"1+\sqrt{3}i", 1),
    (r"2e^{i\pi/6}", r"1+\sqrt{3}i", 0),
    (r"e^{i\pi}", "-1", 1),
    (r"e^{i\pi/2}", "-1", 0),
    (r"\sqrt{2}e^{i\frac{\pi}{4}}", "1+i", 1),
    (r"\sqrt{2}e^{-i\frac{\pi}{4}}", "1+i", 0),
    (r"1+\sqrt{3}i", r"2e^{\frac{\pi}{3}i}", 1),
    (r"1-\sqrt{3}i", r"2e^{\frac{\pi}{3}i}", 0),
    (r"2 \operatorname{cis} 60^\circ", r"1+\sqrt{3}i", 1),
    (r"2 \operatorname{cis} 30^\circ", r"1+\sqrt{3}i", 0),
    (r"\sqrt{2}\,\text{cis}\left(\frac{\pi}{4}\right)", "1+i", 1),
    (r"\sqrt{2}\,\text{cis}\left(\frac{3\pi}{4}\right)", "1+i", 0),
]

PLUS_MINUS_INSIDE = [
    (r"\frac{3 \pm \sqrt{7}}{2}", r"\frac{3+\sqrt{7}}{2}, \frac{3-\sqrt{7}}{2}", 1),
    (r"\frac{3 \pm \sqrt{5}}{2}", r"\frac{3+\sqrt{7}}{2}, \frac{3-\sqrt{7}}{2}", 0),
    (r"\frac{3+\sqrt{7}}{2}", r"\frac{3+\sqrt{7}}{2}, \frac{3-\sqrt{7}}{2}", 0),  # one root of two
    (r"x = \frac{-1 \pm \sqrt{5}}{2}", r"\frac{-1-\sqrt{5}}{2}, \frac{-1+\sqrt{5}}{2}", 1),
    (r"x = \frac{1 \pm \sqrt{5}}{2}", r"\frac{-1-\sqrt{5}}{2}, \frac{-1+\sqrt{5}}{2}", 0),
    (r"\frac{-1-\sqrt{5}}{2}, \frac{-1+\sqrt{5}}{2}", r"\frac{-1 \pm \sqrt{5}}{2}", 1),
    (r"\frac{-1-\sqrt{5}}{2}", r"\frac{-1 \pm \sqrt{5}}{2}", 0),
]

MULTIPLE_CHOICE = [
    ("B", r"\textbf{(B)}\ 7", 1),
    ("C", r"\textbf{(B)}\ 7", 0),
    ("(B)", r"\textbf{(B)}\ 7", 1),
    ("(D)", r"\textbf{(B)}\ 7", 0),
    ("7", r"\textbf{(B)}\ 7", 1),
    ("8", r"\textbf{(B)}\ 7", 0),
    (r"\textbf{(B)}\ 7", r"\textbf{(B)}\ 7", 1),
    (r"\textbf{(C)}\ 7", r"\textbf{(B)}\ 7", 0),  # the letter is the choice
    (r"(B)\ 8", r"\textbf{(B)}\ 7", 0),  # a right letter with another choice's value
    (r"\text{(A)}\ 3", r"\text{(A)}", 1),
    (r"\text{(B)}\ 3", r"\text{(A)}", 0),
    (r"(E) \frac{1}{2}", r"\mathrm{(E)}\ \frac{1}{2}", 1),
    (r"\frac{1}{2}", r"\mathrm{(E)}\ \frac{1}{2}", 1),
    (r"\frac{1}{3}", r"\mathrm{(E)}\ \frac{1}{2}", 0),
]

NUMBER_WORDS = [
    ("seven", "7", 1),
    ("six", "7", 0),
    (r"\text{one third}", r"\frac{1}{3}", 1),
    (r"\text{one fourth}", r"\frac{1}{3}", 0),
    ("three-quarters", r"\frac{3}{4}", 1),
    ("three-fifths", r"\frac{3}{4}", 0),
    ("two thirds", r"\frac{2}{3}", 1),
    ("two ninths", r"\frac{2}{3}", 0),
    ("twenty-one", "21", 1),
    ("twenty-two", "21", 0),
    ("one hundred and five", "105", 1),
    ("one hundred fifty", "105", 0),
    ("a half", "0.5", 1),
    ("one and a half", "1.5", 1),
    ("one and a quarter", "1.5", 0),
    ("7", r"\text{seven}", 1),
    ("17", r"\text{seven}", 0),
    ("negative three", "-3", 1),
    ("three", "-3", 0),
]

NAMED_CONSTANTS = [
    (r"\zeta(4)", r"\frac{\pi^4}{90}", 1),
    (r"\zeta(6)", r"\frac{\pi^4}{90}", 0),
    (r"\frac{\pi^2}{6}", r"\zeta(2)", 1),
    (r"\frac{\pi^2}{8}", r"\zeta(2)", 0),
    (r"\zeta(3)", "1.2020569", 1),
    (r"\zeta(5)", "1.2020569", 0),
]

# A geometric series written out with dots is the sum it converges to; one without a common ratio, or diverging, is not.
SERIES_WRITTEN_OUT = [
    (r"1 + \frac{1}{2} + \frac{1}{4} + \cdots", "2", 1),
    (r"1 + \frac{1}{2} + \frac{1}{4}", "2", 0),  # the dots are the answer: three terms are 7/4
    (r"1 - \frac13 + \frac19 - \cdots", r"\frac{3}{4}", 1),
    (r"1 + \frac13 + \frac19 + \cdots", r"\frac{3}{4}", 0),
    ("3 + 1 + 1/3 + ...", r"\frac{9}{2}", 1),
    ("3 + 1 + 1/2 + ...", r"\frac{9}{2}", 0),  # no common ratio
    (r"0.5 + 0.25 + 0.125 + \ldots", "1", 1),
    (r"-1 - 2 - 4 - \cdots", "1", 0),  # diverges: not the -1/(1-2) a formula would give
    (r"2 + \frac{2}{3} + \frac{2}{9} + \cdots", "3", 1),
    (r"2 + \frac{2}{3} + \frac{4}{9} + \cdots", "3", 0),
]

FAMILIES = {
    "repeating_decimals": REPEATING_DECIMALS,
    "reversed_chains": REVERSED_CHAINS,
    "notation": NOTATION,
    "degree_arguments": DEGREE_ARGUMENTS,
    "exponential_form": EXPONENTIAL_FORM,
    "plus_minus_inside": PLUS_MINUS_INSIDE,
    "multiple_choice": MULTIPLE_CHOICE,
    "series_written_out": SERIES_WRITTEN_OUT,
    "number_words": NUMBER_WORDS,
    "named_constants": NAMED_CONSTANTS,
}
ROWS = [(family, *row) for family, rows in FAMILIES.items() for row in rows]


@pytest.mark.parametrize(
    ("family", "answer", "reference", "expected"), ROWS, ids=[f"{r[0]}-{r[1]}-{r[2]}" for r in ROWS]
)
def test_forms(family: str, answer: str, reference: str | list[str], expected: int) -> None:
    assert grade(answer, reference) == expected, f"{family}: {answer!r} against {reference!r}"


# Whole completions: a last sentence in CJK prose with no answer phrase, its answer the last math in it.
CJK_PROSE_FINALS = [
    ("因此，$y$ 的范围是 $[1, 3)$。", "[1, 3)", 1),
    ("因此，$y$ 的范围是 $[1, 3]$。", "[1, 3)", 0),
    ("所以 $x$ 的取值范围是 $(-1, 2]$.", r"-1 < x \le 2", 1),
    ("所以 $x$ 的取值范围是 $(-1, 2)$.", r"-1 < x \le 2", 0),
    ("切线方程为 $y=2x-2$", "y=2x-2", 1),  # one span: the prose around it is a label, as before
    ("切线方程为 $y=2x+2$", "y=2x-2", 0),
]


@pytest.mark.parametrize(("completion", "reference", "expected"), CJK_PROSE_FINALS)
def test_cjk_prose_final_sentence(completion: str, reference: str, expected: int) -> None:
    assert grade_math(completion, reference, DEFAULT).value == expected
