"""The math grader: extraction from R1-style completions and answer equivalence.

Tables of (completion or answer, reference, expected score), grouped by category, in
the style of math-verify's own tests. A bare answer is graded as the whole completion.
"""

from __future__ import annotations

import json
import logging
import re
import signal
import time
from concurrent.futures import ThreadPoolExecutor

import pytest
from math_verify import parse, verify

from reward_api.graders.base import InvalidItem
from reward_api.graders.maths.equivalence import NotComputed
from reward_api.graders.maths.extract import extract_answer
from reward_api.graders.maths.verdict import MAX_ALTERNATIVES, grade_math
from reward_api.profiles import MathSettings

DEFAULT = MathSettings()


def grade(completion: str, reference: str | int | float | list, **settings: object) -> float:
    return grade_math(completion, reference, MathSettings(**settings) if settings else DEFAULT).value


def math_verify_says(gold: str, pred: str) -> int:
    """math-verify's verdict as documented usage runs it (both sides parsed from text)."""
    logging.getLogger("math_verify").setLevel(logging.ERROR)
    return int(verify(parse(gold, parsing_timeout=None), parse(pred, parsing_timeout=None), timeout_seconds=None))


@pytest.mark.parametrize(
    "answer, reference, expected",
    [
        ("42", "42", 1),
        ("$42$", "42", 1),
        ("-7", "-7", 1),
        ("- 7", "-7", 1),
        ("+7", "7", 1),
        ("7", "-7", 0),
        ("1,000", "1000", 1),
        ("1{,}000", "1000", 1),
        ("1\\,000", "1000", 1),
        ("1 000 000", "1000000", 1),
        ("11,\\!111,\\!111,\\!100", "11111111100", 1),
        ("1,000.5", "1000.5", 1),
        ("1000.0", "1000", 1),
        ("5.", "5", 1),
        (".5", "0.5", 1),
        ("0.50", "0.5", 1),
        ("007", "7", 1),
        ("2.5", "2.05", 0),
        ("100000000000000000000", "100000000000000000001", 0),
        ("123456789", 123456789, 1),
        ("0.1", 0.1, 1),
        ("3", 3.0, 1),
        ("0.3", 0.1 + 0.2, 1),
        ("0.333333", 1 / 3, 1),
        ("1.5 \\times 10^{-7}", 1.5e-7, 1),
        ("10^{20}", 1e20, 1),
    ],
)
def test_numbers(answer: str, reference: str | int | float, expected: int) -> None:
    assert grade(answer, reference) == expected


@pytest.mark.parametrize(
    "answer, reference, expected",
    [
        ("\\frac{1}{2}", "1/2", 1),
        ("\\dfrac{1}{2}", "\\frac{1}{2}", 1),
        ("\\tfrac12", "\\frac{1}{2}", 1),
        ("\\frac{2}{4}", "\\frac{1}{2}", 1),
        ("-\\frac{3}{4}", "\\frac{-3}{4}", 1),
        ("0.5", "\\frac{1}{2}", 1),
        ("\\frac{10}{9}", "10/9", 1),
        ("\\frac{1}{3}", "\\frac{1}{4}", 0),
        ("\\frac{4}{3}", "\\frac{3}{4}", 0),
        ("2\\frac{1}{2}", "\\frac{5}{2}", 1),
        # A decimal stands for an exact value only to the precision it states (6+ digits).
        ("0.333333", "\\frac{1}{3}", 1),
        ("0.3333333333", "\\frac{1}{3}", 1),
        ("0.666667", "\\frac{2}{3}", 1),
        ("0.142857", "\\frac{1}{7}", 1),
        ("0.3333", "\\frac{1}{3}", 0),
        ("0.33", "\\frac{1}{3}", 0),
        ("0.666666", "\\frac{2}{3}", 0),
        ("0.3333334", "\\frac{1}{3}", 0),
        ("0.0833333333333333", "\\frac{1}{12}", 1),
        ("\\frac{1}{3}", "0.333333", 1),
    ],
)
def test_fractions(answer: str, reference: str, expected: int) -> None:
    assert grade(answer, reference) == expected


@pytest.mark.parametrize(
    "answer, reference, expected",
    [
        ("\\sqrt{12}", "2\\sqrt{3}", 1),
        ("\\sqrt{8}", "2\\sqrt{2}", 1),
        ("\\sqrt3", "\\sqrt{3}", 1),
        ("3^{1/2}", "\\sqrt{3}", 1),
        ("a^{1/2}", "\\sqrt{a}", 1),
        ("\\frac{\\sqrt{2}}{2}", "\\frac{1}{\\sqrt{2}}", 1),
        ("\\sqrt{5+2\\sqrt{6}}", "\\sqrt{2}+\\sqrt{3}", 1),
        ("\\sqrt[3]{8}", "2", 1),
        ("3\\sqrt{2}", "2\\sqrt{3}", 0),
        ("1.41421356", "\\sqrt{2}", 1),
        ("1.414", "\\sqrt{2}", 0),
        ("4\\sqrt{2}", "4", 0),
    ],
)
def test_radicals(answer: str, reference: str, expected: int) -> None:
    assert grade(answer, reference) == expected


@pytest.mark.parametrize(
    "answer, reference, expected",
    [
        ("\\pi", "\\pi", 1),
        ("\\frac{1}{4}\\pi", "\\frac{\\pi}{4}", 1),
        ("2.5\\pi", "\\frac{5\\pi}{2}", 1),
        ("3.14159", "\\pi", 1),
        ("3.1415926536", "\\pi", 1),
        ("3.1415926535", "\\pi", 0),  # a truncation, not pi rounded
        ("3.14", "\\pi", 0),
        ("\\frac{\\pi}{3}", "\\frac{\\pi}{4}", 0),
        ("\\pi + 10^{-20}", "\\pi", 0),
        ("2\\pi r", "2 r \\pi", 1),
    ],
)
def test_pi(answer: str, reference: str, expected: int) -> None:
    assert grade(answer, reference) == expected


@pytest.mark.parametrize(
    "answer, reference, expected, percent_equals_fraction",
    [
        ("50\\%", "50\\%", 1, True),
        ("50%", "50\\%", 1, True),
        ("50 percent", "50\\%", 1, True),
        ("\\boxed{28 pct}", "28\\%", 1, True),
        ("50", "50\\%", 1, True),
        ("50\\%", "0.5", 1, True),
        ("50\\%", "\\frac{1}{2}", 1, True),
        ("0.5", "50\\%", 1, True),
        ("0.5", "50\\%", 0, False),
        ("50\\%", "0.5", 0, False),
        ("50", "50\\%", 1, False),
        ("5\\%", "50\\%", 0, True),
        ("28", "0.28", 0, True),
        ("33.3333\\%", "\\frac{1}{3}", 1, True),
    ],
)
def test_percent(answer: str, reference: str, expected: int, percent_equals_fraction: bool) -> None:
    assert grade(answer, reference, percent_equals_fraction=percent_equals_fraction) == expected


@pytest.mark.parametrize(
    "answer, reference, expected",
    [
        ("30^\\circ", "30^\\circ", 1),
        ("30", "30^\\circ", 1),
        ("30^{\\circ}", "30", 1),
        ("30°", "30", 1),
        ("30 degrees", "30", 1),
        ("\\frac{\\pi}{6}", "30^\\circ", 1),
        ("30^\\circ", "\\frac{\\pi}{6}", 1),
        ("\\frac{\\pi}{6}", "30", 0),
        ("60^\\circ", "30^\\circ", 0),
        ("\\frac{\\pi}{3}", "30^\\circ", 0),
    ],
)
def test_degrees(answer: str, reference: str, expected: int) -> None:
    assert grade(answer, reference) == expected


@pytest.mark.parametrize(
    "answer, reference, expected",
    [
        ("1.5e3", "1500", 1),
        ("1.5E3", "1500", 1),
        ("1.5 \\times 10^{3}", "1500", 1),
        ("3.2 \\times 10^{5}", "320000", 1),
        ("1.5\\cdot10^{-7}", "1.5e-7", 1),
        ("10^{-12}", "2\\cdot10^{-12}", 0),
        ("1e-10", "0", 0),
        ("10^{-7}", "0", 0),
        ("0.0000001", "0.0000002", 0),
        ("10^{20}", "10^{20}+1", 0),
        ("2^{100}+1", "2^{100}", 0),
        ("\\frac{1}{2^{98}}", "\\frac{1}{2^{99}}", 0),
        ("\\frac{1}{2^{99}}", "2^{-99}", 1),
    ],
)
def test_scientific_notation_and_tiny_or_huge_values(answer: str, reference: str, expected: int) -> None:
    assert grade(answer, reference) == expected


@pytest.mark.parametrize(
    "answer, reference, expected",
    [
        ("[0, 1)", "[0,1)", 1),
        ("[0, 1]", "[0,1)", 0),
        ("(0, 1)", "[0,1)", 0),
        ("\\left( 1, 2 \\right)", "(1,2)", 1),
        ("(-\\infty, 2)", "(-\\infty, 2)", 1),
        ("(1, +\\infty)", "(1,\\infty)", 1),
        ("x \\in [1,2]", "[1,2]", 1),
        ("[1,2]", "x \\in [1,2]", 1),
        ("1 \\le x \\le 2", "[1,2]", 1),
        ("x < 2", "(-\\infty, 2)", 1),
        ("(-\\infty, 2)", "x < 2", 1),
        ("(2,12) \\cup (12,102)", "(2, 12) \\cup (12, 102)", 1),
        ("(0.6, 2.666667]", "(\\frac{3}{5}, \\frac{8}{3}]", 1),
    ],
)
def test_intervals(answer: str, reference: str, expected: int) -> None:
    assert grade(answer, reference) == expected


@pytest.mark.parametrize(
    "answer, reference, expected",
    [
        # Sets ignore order ...
        ("\\{2, 1\\}", "\\{1, 2\\}", 1),
        ("\\{3, 1, 2\\}", "\\{1, 2, 3\\}", 1),
        ("3, 2, 1", "1, 2, 3", 1),
        ("\\{1, 2\\}", "\\{1, 2, 3\\}", 0),
        ("\\{1, 1, 2\\}", "\\{1, 2\\}", 1),
        ("-2, 1", "1, -2", 1),
        ("1 \\pm \\sqrt{2}", "\\{1+\\sqrt{2}, 1-\\sqrt{2}\\}", 1),
        ("2021", "\\pm 2021", 0),
        ("\\{\\frac{1}{3}, 2\\}", "\\{2, 0.333333\\}", 1),
        ("1 and 2 and 3", "\\{1, 2, 3\\}", 1),
        # ... tuples keep it.
        ("(1, 2)", "(1,2)", 1),
        ("(2, 1)", "(1, 2)", 0),
        ("(1, 2, 3)", "(1, 2, 3)", 1),
        ("(1, 3, 2)", "(1, 2, 3)", 0),
        ("(1, \\frac{9}{2})", "(1, 4.5)", 1),
        ("(3, 2), (1, 1)", "(1, 1), (3, 2)", 1),
        ("(3, 2), (1, 1)", "(1, 1), (2, 3)", 0),
        # A thousands separator is not a list separator, but "32, 349" with a space is a list.
        ("32,349", "32349", 1),
        ("32, 349", "32349", 0),
        ("(1,000)", "(1, 0)", 1),
    ],
)
def test_sets_and_tuples(answer: str, reference: str, expected: int) -> None:
    assert grade(answer, reference) == expected


@pytest.mark.parametrize(
    "answer, reference, expected",
    [
        ("\\begin{pmatrix} 1 & 2 \\\\ 3 & 4 \\end{pmatrix}", "\\begin{pmatrix}1&2\\\\3&4\\end{pmatrix}", 1),
        ("\\begin{bmatrix} 1 & 2 \\\\ 3 & 4 \\end{bmatrix}", "\\begin{pmatrix}1&2\\\\3&4\\end{pmatrix}", 1),
        ("\\begin{pmatrix} 1 & 3 \\\\ 2 & 4 \\end{pmatrix}", "\\begin{pmatrix}1&2\\\\3&4\\end{pmatrix}", 0),
        ("\\begin{pmatrix} \\frac{1}{2} \\\\ 0.25 \\end{pmatrix}", "\\begin{pmatrix}0.5\\\\\\frac14\\end{pmatrix}", 1),
        ("\\begin{pmatrix} 1 \\\\ 2 \\end{pmatrix}", "(1, 2)", 1),
        ("(1, 2, 3)", "\\begin{pmatrix} 1 \\\\ 2 \\\\ 3 \\end{pmatrix}", 1),
        ("\\begin{pmatrix} 2 \\\\ 1 \\end{pmatrix}", "(1, 2)", 0),
        (
            "\\begin{pmatrix}1 & 2 \\\\ 3 & 4\\end{pmatrix} + \\begin{pmatrix}5 & 6 \\\\ 7 & 8\\end{pmatrix}",
            "\\begin{pmatrix}6 & 8 \\\\ 10 & 12\\end{pmatrix}",
            1,
        ),
    ],
)
def test_matrices(answer: str, reference: str, expected: int) -> None:
    assert grade(answer, reference) == expected


@pytest.mark.parametrize(
    "answer, reference, expected",
    [
        ("x = 3", "3", 1),
        ("3", "x = 3", 1),
        ("x=3", "x = 3", 1),
        ("y = 3", "x = 3", 0),
        ("x = 4", "3", 0),
        ("x = 5+5+1 = 11", "x = 11", 1),
        ("k = \\frac{1}{3}", "\\frac{1}{3}", 1),
        ("x \\approx 11", "11", 1),
        ("y = 1 + 2x", "y = 2x + 1", 1),
        ("2x + 4y - 3 = 0", "y = -\\frac{1}{2}x + \\frac{3}{4}", 1),
        ("\\frac{x^2}{16} + \\frac{y^2}{12} = \\frac{1}{4}", "\\frac{x^2}{4} + \\frac{y^2}{3} = 1", 1),
        ("2x + 4y = 4", "x + 2y = 1", 0),
        ("11a + c", "7 = 11a + c", 0),
        ("1", "2x + z = 1", 0),
        ("x \\geq 5", "x \\ge 5", 1),
        ("5 \\leq x", "x \\geq 5", 1),
        ("-x > -1", "x < 1", 1),
        ("x > -1", "x < 1", 0),
        ("x \\le 5", "x \\ge 5", 0),
        ("x \\neq 3", "x != 3", 1),
        ("(x+1)^2", "x^2 + 2x + 1", 1),
        ("(x-1)^2", "x^2 + 2x + 1", 0),
        ("\\frac{1}{x-1}", "\\frac{x+1}{x^2-1}", 1),
        ("\\sec^2 y", "\\tan^2 y + 1", 1),
        ("x + 1", "x + 2n + 1", 0),
        ("f(y)", "f(x)", 0),
        ("(p, q) = (3, 2)", "(3, 2)", 1),
        ("a_{37} = 19, a_3 = 2", "a_3 = 2, a_{37} = 19", 1),
    ],
)
def test_equations_and_assignments(answer: str, reference: str, expected: int) -> None:
    assert grade(answer, reference) == expected


@pytest.mark.parametrize(
    "answer, reference, expected, ignore_units",
    [
        ("3 \\text{ cm}", "3", 1, True),
        ("3 cm", "3", 1, True),
        ("15\\mbox{ cm}^2", "15", 1, True),
        ("12 apples", "12", 1, True),
        ("\\$5", "5", 1, True),
        ("5 dollars", "5", 1, True),
        ("\\$1,000.99", "1000.99", 1, True),
        ("1,000.99€", "1000.99", 1, True),
        ("0.06 \\text{ yuan}", "0.06", 1, True),
        ("13 \\text{ cm}", "12", 0, True),
        ("3 \\text{ cm}", "3", 0, False),
        ("3 \\text{ cm}", "3 \\text{ cm}", 1, False),
        ("\\text{Evelyn}", "\\text{Evelyn}", 1, True),
        ("Evelyn", "\\text{Evelyn}", 1, True),
        ("\\textbf{odd}", "\\text{odd}", 1, True),
        ("C", "\\text{(C)}", 1, True),
        ("\\text{(C)}", "C", 1, True),
        ("D", "\\text{(C)}", 0, True),
        ("E", "\\text{E}", 1, True),
        ("\\text{E}", "d", 0, True),
    ],
)
def test_units_and_text_wrappers(answer: str, reference: str, expected: int, ignore_units: bool) -> None:
    assert grade(answer, reference, ignore_units=ignore_units) == expected


@pytest.mark.parametrize(
    "completion, extracted",
    [
        # After </think> only.
        ("<think>maybe \\boxed{3}</think> So \\boxed{4}.", "4"),
        ("<think>it is \\boxed{3}</think> I could not decide.", None),
        ("<think>unfinished \\boxed{3}", "3"),
        # The last box, with nested and escaped braces.
        ("First \\boxed{1}, then after checking \\boxed{2} is final.", "2"),
        ("\\boxed{\\frac{1}{\\sqrt{2}}}", "\\frac{1}{\\sqrt{2}}"),
        ("\\boxed{\\{1, 2\\}}", "\\{1, 2\\}"),
        ("\\fbox{7}", "7"),
        ("\\boxed 7", "7"),
        ("\\boxed{}", None),
        ("unterminated \\boxed{x + 1", "x + 1"),
        # Boxes listed together are one answer; a corrected box is not.
        ("\\boxed{1} and \\boxed{2}", "1, 2"),
        ("\\boxed{1},\\boxed{2},\\boxed{3}", "1, 2, 3"),
        ("\\boxed{5} is wrong, the correct answer is \\boxed{6}", "6"),
        ("\\boxed{1} no no no no no \\boxed{2}", "2"),
        # A final answer stated after the last box wins over boxed intermediate results.
        ("So \\boxed{200} and \\boxed{255}, adding up. The final answer is $10,455$. I hope it is correct.", "10,455"),
        ("\\boxed{5}. This is the final answer.", "5"),
        # Answer phrases.
        ("Thus the answer is 189.", "189"),
        ("The final answer is $28 \\%$. I hope it is correct.", "28 \\%"),
        ("Final Answer: The largest $n$ is 34.", "34"),
        ("The answer is: 12, which is the smallest value.", "12"),
        ("**Final Answer**\n\nThe answer is $\\frac{1}{2}$", "\\frac{1}{2}"),
        ("The answer is Evelyn.", "Evelyn"),
        ("Answer: $1$ and $2$", "1, 2"),
        ("Answer \\[ \n 9 \n \\]", "9"),
        ("<answer>42</answer>", "42"),
        # GSM8K's marker (commas removed) and phrases of other languages, cut where CJK prose resumes.
        ("6*7 = 42\n#### 1,234", "1234"),
        ("#### \\$1,234.50.", "1234.50"),
        ("####\nno number", None),
        ("答案：12 个苹果", "12"),
        ("따라서 답은 42입니다.", "42"),
        ("Ответ: $x = 2$", "x = 2"),
        # A plain final expression.
        ("We get\n$$x = \\frac{3}{4}$$", "x = \\frac{3}{4}"),
        ("\\[\n\\frac{\\sqrt{3}}{2}\n\\]", "\\frac{\\sqrt{3}}{2}"),
        ("So P(A) = 2/3 Therefore, the probability", "2/3"),
        ("the number is not 10 which is 1,000.99€", "1,000.99"),
        ("x = 3", "x = 3"),
        ("The total is $5 and the tax is $7.", "7"),
        # No answer.
        ("", None),
        ("I do not know.", None),
        ("AZYUK", "AZYUK"),
    ],
)
def test_extraction(completion: str, extracted: str | None) -> None:
    found = extract_answer(completion)
    assert (found.text if found else None) == extracted


@pytest.mark.parametrize(
    "completion, reference, expected",
    [
        ("<think>\\boxed{3}</think>\nThe answer is \\boxed{4}.", "4", 1),
        ("<think>\\boxed{4}</think>\nThe answer is \\boxed{3}.", "4", 0),
        ("Let me compute 2+2 = 4.\n\n**Final Answer**\n\\[\\boxed{4}\\]", "4", 1),
        ("The answer is \\boxed{\\frac{\\pi}{4}}.", "\\frac{\\pi}{4}", 1),
        ("Thus, the answer is $x \\in \\boxed{(2,12) \\cup (12,102)}$", "(2, 12) \\cup (12, 102)", 1),
        ("AZYUK2A", "2", 0),
        ("I give up.", "2", 0),
    ],
)
def test_extraction_then_grading(completion: str, reference: str, expected: int) -> None:
    assert grade(completion, reference) == expected


# GSM8K's final line and "the answer is" in the languages the language grader detects:
# (completion, reference, expected, source); each right answer has a wrong twin.
FINAL_ANSWER_MARKERS = [
    ("6*7 = 42\n#### 42", "42", 1, "gsm8k"),
    ("6*7 = 42\n#### 41", "42", 0, "gsm8k"),
    ("So she has 1,234 apples.\n#### 1,234", "1234", 1, "gsm8k"),
    ("#### 1,243", "1234", 0, "gsm8k"),
    ("#### $12.50", "12.5", 1, "gsm8k"),
    ("#### -3", "-3", 1, "gsm8k"),
    ("#### 3", "-3", 0, "gsm8k"),
    ("#### 41\nOn second thought:\n#### 42", "42", 1, "gsm8k"),  # the last marker
    ("The answer is 41.\n#### 42", "42", 1, "gsm8k"),  # the marker outranks phrases
    ("\\boxed{41}\n#### 42", "42", 1, "gsm8k"),  # a later final answer wins over a box ...
    ("#### 41\nSo \\boxed{42}", "42", 1, "boxed"),  # ... an earlier one does not
    # Only the answer part counts: a marker in the chain of thought is a draft.
    ("<think>6*7 = 42\n#### 41</think> The answer is 42.", "42", 1, "phrase"),
    ("<think>6*7 = 42\n#### 42</think> The answer is 41.", "42", 0, "phrase"),
    ("<think>#### 41</think>\n#### 42", "42", 1, "gsm8k"),
    ("<think>#### 42</think>\n#### 41", "42", 0, "gsm8k"),
    # Chinese
    ("所以答案是42。", "42", 1, "phrase"),
    ("所以答案是24。", "42", 0, "phrase"),
    ("答案为 $\\frac{1}{2}$。", "0.5", 1, "phrase"),
    ("答案为 $\\frac{1}{3}$。", "0.5", 0, "phrase"),
    ("检查完毕，最终答案是 7。", "7", 1, "phrase"),
    ("检查完毕，最终答案是 8。", "7", 0, "phrase"),
    ("\\boxed{5}，但最终答案是 6。", "6", 1, "phrase"),  # a final answer after the box wins
    ("答案：12 个苹果", "12", 1, "phrase"),
    ("答案：13 个苹果", "12", 0, "phrase"),
    # Japanese, Korean
    ("よって答えは 42 です。", "42", 1, "phrase"),
    ("よって答えは 24 です。", "42", 0, "phrase"),
    ("따라서 답은 42입니다.", "42", 1, "phrase"),
    ("따라서 답은 24입니다.", "42", 0, "phrase"),
    ("정답은 $x = 3$입니다.", "3", 1, "phrase"),
    ("정답은 $x = 4$입니다.", "3", 0, "phrase"),
    # French, German, Spanish, Portuguese, Russian
    ("Donc la réponse est 12, car 3 fois 4 font 12.", "12", 1, "phrase"),
    ("Donc la réponse est 13, car 3 fois 4 font 12.", "12", 0, "phrase"),
    ("Also ist die Antwort ist $\\frac{3}{4}$.", "0.75", 1, "phrase"),
    ("Die Antwort lautet $\\frac{2}{3}$.", "0.75", 0, "phrase"),
    ("Por lo tanto, la respuesta es 42.", "42", 1, "phrase"),
    ("Por lo tanto, la respuesta es 24.", "42", 0, "phrase"),
    ("Portanto, a resposta é 42.", "42", 1, "phrase"),
    ("Portanto, a resposta é 24.", "42", 0, "phrase"),
    ("Ответ: 42.", "42", 1, "phrase"),
    ("Ответ: 24.", "42", 0, "phrase"),
    ("Итак, ответ равен $2\\sqrt{3}$.", "\\sqrt{12}", 1, "phrase"),
    ("Итак, ответ равен $3\\sqrt{2}$.", "\\sqrt{12}", 0, "phrase"),
]


@pytest.mark.parametrize("completion, reference, expected, source", FINAL_ANSWER_MARKERS)
def test_gsm8k_marker_and_answer_phrases_in_other_languages(
    completion: str, reference: str, expected: int, source: str
) -> None:
    score = grade_math(completion, reference, DEFAULT)
    assert (score.value, score.details["source"]) == (expected, source), score.details


# GSM8K's raw `answer` column as the reference: a worked solution ending in `#### N`.
NATALIA = (
    "Natalia sold 48/2 = <<48/2=24>>24 clips in May.\n"
    "Natalia sold 48+24 = <<48+24=72>>72 clips altogether in April and May.\n#### 72"
)


@pytest.mark.parametrize(("completion", "expected"), [("48 + 24 = 72\n#### 72", 1), ("#### 71", 0), ("\\boxed{72}", 1)])
def test_a_gsm8k_solution_as_reference_is_reduced_to_its_final_number(completion: str, expected: int) -> None:
    assert grade_math(completion, NATALIA, DEFAULT).value == expected


# Where math-verify is wrong or weak: (answer, reference, ours, math-verify's verdict, why).
IMPROVEMENTS = [
    ("\\frac{1}{2^{98}}", "\\frac{1}{2^{99}}", 0, 1, "float rounding of tiny values: a false positive"),
    ("0.0000002", "0.0000001", 0, 1, "rounds both to 6 decimal places: a false positive"),
    ("\\pi + 10^{-20}", "\\pi", 0, 1, "chops tiny differences to 0: a false positive"),
    ("0.3333334", "\\frac{1}{3}", 0, 1, "0.3333334 is not 1/3 rounded: a false positive"),
    ("\\frac{1}{2006!}", "\\frac{1}{2004!}", 0, 1, "float rounding of tiny values: a false positive"),
    ("1 + \\frac{1}{\\mathrm{e}}", "1 - \\frac{1}{\\mathrm{e}}", 0, 1, "its unit stripping cuts \\mathrm{e}}"),
    ("3.14159", "\\pi", 1, 0, "6 significant digits of pi; it wants 6 decimal places"),
    ("16386.164", "16386.16", 1, 0, "the reference states cents; it wants 6 decimal places"),
    ("1.5e3", "1500", 1, 0, "reads 1.5e3 as 1.5 * e * 3"),
    ("1.5e-7", "1.5\\times10^{-7}", 1, 0, "reads 1.5e-7 as 1.5e - 7"),
    ("1\\,000", "1000", 1, 0, "a thin space as thousands separator"),
    ("\\frac{\\pi}{6}", "30^\\circ", 1, 0, "an angle in radians against one in degrees"),
    ("1 < x < 2", "x \\in (1,2)", 1, 0, "an inequality against the same interval"),
    ("x < 2", "(-\\infty, 2)", 1, 0, "an inequality against the same interval"),
    ("\\begin{pmatrix} 1 \\\\ 2 \\end{pmatrix}", "(1, 2)", 1, 0, "a column vector against a tuple"),
]


@pytest.mark.parametrize("answer, reference, ours, theirs, why", IMPROVEMENTS)
def test_improvements_over_math_verify(answer: str, reference: str, ours: int, theirs: int, why: str) -> None:
    assert grade(answer, reference) == ours, why
    assert math_verify_says(f"${reference}$", f"${answer}$") == theirs, "math-verify changed: " + why


@pytest.mark.parametrize(
    "completion, reference",
    [
        ("\\boxed{10^{10^{10^{10}}}}", "1"),
        ("\\boxed{9^{9^{9^9}}}", "5"),
        ("\\boxed{10^{10^{7}}}", "1"),
        ("\\boxed{\\frac{1}{2^{10^{7}}}}", "0"),
        ("\\boxed{99999999999^{99999999999}}", "1"),
        ("\\boxed{100000!}", "1"),
        ("\\boxed{\\binom{10^{9}}{5 \\cdot 10^{8}}}", "1"),
        ("\\boxed{(x+1)^{100000} - (x+1)^{99999}}", "4"),
        ("\\boxed{\\sum_{n=1}^{10^{100}} n^{n^n}}", "4"),
        ("\\boxed{\\int_0^{\\infty} e^{-x^{1000}} \\sin(x^{x^x}) dx}", "4"),
        ("\\boxed{" + "(" * 10_000 + "1" + ")" * 10_000 + "}", "1"),
        ("$" + "(" * 100 + "1" + ")" * 100 + "$", "1"),
        ("\\boxed{" * 100_000, "5"),
        ("$" * 100_000, "5"),
        ("\\boxed{1}, " * 50_000, "5"),
        ("the answer is " + "$a$ is = " * 2_000, "5"),
        ("\\[" * 100_000, "5"),
        ("x" * 1_000_000, "5"),
        ("the answer is 5 " + "and so on " * 100_000, "4"),
        ("#### " * 200_000, "5"),
        ("####" + " " * 7_990 + "x", "5"),
        ("#### " + "9," * 3_000 + "9", "5"),
        ("答案是" * 300_000, "5"),
        ("ответ: " * 100_000, "5"),
        ("\\boxed{\ud800}", "5"),
        ("\\boxed{1/0}", "1"),
        ("\\boxed{12:00}", "1:00"),
        ("\\boxed{" + "7" * 20_000 + "}", "7" * 19_999 + "8"),
    ],
)
def test_pathological_inputs_score_zero_quickly(completion: str, reference: str) -> None:
    started = time.perf_counter()
    score = grade_math(completion, reference, DEFAULT)
    assert time.perf_counter() - started < 5
    assert score.value == 0
    json.dumps(score.details)


@pytest.mark.parametrize(
    "completion, reference",
    [
        ("\\boxed{2^{100000}}", "2^{100000}"),
        ("\ud800 \\boxed{5} \udfff", "5"),
        ("x" * 1_000_000 + " \\boxed{5}", "5"),
        ("\\boxed{12:00}", "12:00"),
        ("\\boxed{\\sum_{k=1}^{10} k}", "55"),
        ("\\boxed{" + "7" * 20_000 + "}", "7" * 20_000),  # longer than a box that never closes may be
        ("\\boxed{" + "7" * 16_000 + "}.", "+" + "7" * 16_000),
    ],
)
def test_large_but_fine_inputs_still_grade(completion: str, reference: str) -> None:
    started = time.perf_counter()
    assert grade(completion, reference) == 1
    assert time.perf_counter() - started < 5


def test_details_name_what_was_compared() -> None:
    right = grade_math("<think>...</think> So \\boxed{\\frac{1}{2}}.", "0.5", DEFAULT)
    assert right.value == 1
    assert right.details == {"extracted": "\\frac{1}{2}", "reference": "0.5", "source": "boxed", "method": "exact"}
    wrong = grade_math("The answer is \\{1, 3\\}", "\\{1, 2\\}", DEFAULT)
    assert (wrong.value, wrong.details["method"], wrong.details["reason"]) == (0, "set", "not equivalent")
    assert grade_math("no idea", "3", DEFAULT).details == {
        "extracted": None,
        "reference": "3",
        "method": "extract",
        "reason": "no answer found",
    }
    unparseable = grade_math("\\boxed{\\frac{}{}}", "3", DEFAULT).details
    assert unparseable["reason"] == "unparseable answer"
    long_answer = grade_math("\\boxed{" + "1+" * 1500 + "1}", "3001", DEFAULT).details
    assert len(long_answer["extracted"]) <= 200 and json.dumps(long_answer)


@pytest.mark.parametrize(
    "reference, fragment",
    [
        ("", "non-empty"),
        ("   ", "non-empty"),
        (None, "got NoneType"),
        (True, "got bool"),
        (float("nan"), "finite"),
        (float("inf"), "finite"),
        ("No answer is given for this one: $$ $$", "no final answer"),
        ([], "a list of 0 answers"),
        (["1"] * (MAX_ALTERNATIVES + 1), f"a list of {MAX_ALTERNATIVES + 1} answers"),
        (["1", ["2"]], "reference[1]: expected a math answer as a string or number, got list"),
        (["1", ""], "reference[1]: expected a non-empty"),
        ({"answer": "3"}, "got dict"),
    ],
)
def test_unusable_reference_is_invalid(reference: object, fragment: str) -> None:
    with pytest.raises(InvalidItem, match=r"^reference") as error:
        grade_math("\\boxed{3}", reference, DEFAULT)  # type: ignore[arg-type]
    assert fragment in str(error.value)


@pytest.mark.parametrize(
    "reference, normalised",
    [
        (7, "7"),
        (2.5, "2.5"),
        (3.0, "3"),
        (0.1 + 0.2, "0.3"),
        (1e20, "1e+20"),
        ("  \\frac{1}{2} ", "\\frac{1}{2}"),
        ("$\\frac{1}{2}$", "\\frac{1}{2}"),
        ("We find $x = 2$, so the answer is $\\boxed{4}$.", "4"),
        ("\\boxed{1}\\boxed{2}", "1, 2"),
        ("\\begin{pmatrix}\n1 \\\\\n2\n\\end{pmatrix}", "\\begin{pmatrix}\n1 \\\\\n2\n\\end{pmatrix}"),
    ],
)
def test_reference_is_normalised(reference: str | int | float, normalised: str) -> None:
    assert grade_math("\\boxed{0}", reference, DEFAULT).details["reference"] == normalised


@pytest.mark.parametrize(
    "completion, reference, expected",
    [
        ("\\boxed{3}", ["3"], 1),
        ("\\boxed{3}", [3], 1),
        ("\\boxed{3}", [3.0], 1),
        ("\\boxed{-2}", ["2", "-2"], 1),
        ("\\boxed{\\frac{1}{2}}", ["0.5", "50\\%"], 1),
        ("\\boxed{1}", ["2", "-2"], 0),
        ("\\boxed{2, -2}", ["2", "-2"], 0),  # each item is an acceptable answer, not a part of one
        ("\\boxed{4}", ["We get $\\boxed{4}$.", "\\x08oxed{4}"], 1),
    ],
)
def test_a_list_reference_holds_acceptable_answers(completion: str, reference: list, expected: int) -> None:
    assert grade(completion, reference) == expected


def test_details_echo_a_list_reference() -> None:
    assert grade_math("\\boxed{3}", ["3"], DEFAULT).details["reference"] == "3"
    assert grade_math("\\boxed{3}", ["4", "3"], DEFAULT).details == {
        "extracted": "3",
        "reference": ["4", "3"],
        "source": "boxed",
        "method": "exact",
    }


BIG = "".join(str(k * k % 9 + 1) for k in range(3000))
GRID = (
    "\\begin{bmatrix}"
    + " \\\\ ".join(" & ".join(str(i * j % 89) for j in range(30)) for i in range(30))
    + "\\end{bmatrix}"
)
POWERS = [f"x^{{{k}}}" for k in range(400)]
LONG_SUM = "+".join(POWERS)  # 3,089 characters: past what the symbolic path reads


# (answer, reference, expected score, reason): sizes are judged against the reference.
@pytest.mark.parametrize(
    "answer, reference, expected, reason",
    [
        (BIG, BIG, 1, None),
        ("00" + BIG, BIG, 1, None),
        ("+" + BIG, BIG, 1, None),
        (BIG[:-1] + "0", BIG, 0, "not equivalent"),
        ("5", BIG, 0, "not equivalent"),
        (BIG, "5", 0, "not equivalent"),
        (GRID, GRID.replace("bmatrix", "pmatrix"), 1, None),
        (GRID.replace("& 0 \\\\", "& 0.0 \\\\"), GRID, 1, None),
        (GRID.replace(" & 1 &", " & 2 &", 1), GRID, 0, "entry ("),
        ("\\begin{pmatrix}1 & 2\\end{pmatrix}", GRID, 0, "not equivalent (1x2, the reference 30x30)"),
        ("1+" * 1500 + "1", "3001", 0, "answer too long (3,001 characters, the reference 4)"),
        (LONG_SUM, "x", 0, "answer too long"),
    ],
)
def test_answers_past_the_symbolic_bound_are_compared_exactly(
    answer: str, reference: str, expected: int, reason: str | None
) -> None:
    started = time.perf_counter()
    score = grade_math(f"\\boxed{{{answer}}}", reference, DEFAULT)
    assert time.perf_counter() - started < 2
    assert score.value == expected
    assert reason is None or reason in score.details["reason"]


# (answer, reference, why the rules decline): never a 0 that looks like a wrong answer.
@pytest.mark.parametrize(
    "answer, reference, why",
    [
        ("+".join(reversed(POWERS)), LONG_SUM, "the answer is 3,089 characters"),  # the reference's own size
        ("\\frac{1}{2}", BIG, "the reference is 3,000 characters"),
        ("3", "\\sum_{k=1}^{10000} k^{k}", "the reference is too large to evaluate"),
        ("1", "(" * 70 + "1" + ")" * 70, "the reference is too deeply nested"),
    ],
)
def test_a_comparison_the_rules_decline_is_not_computed(answer: str, reference: str, why: str) -> None:
    with pytest.raises(NotComputed, match=re.escape(why)):
        grade_math(f"\\boxed{{{answer}}}", reference, DEFAULT)


def test_rel_tol_applies_to_decimals_inside_expressions() -> None:
    assert grade("1.4142135\\sqrt{2}", "2", rel_tol=1e-6) == 1
    assert grade("1.4142135\\sqrt{2}", "2") == 0


def test_grades_off_the_main_thread_without_signals() -> None:
    """math-verify's SIGALRM timers fail off the main thread; the grader uses no signals at all."""
    handler = signal.getsignal(signal.SIGALRM)
    with ThreadPoolExecutor(2) as pool:
        scores = list(pool.map(lambda c: grade(c, "\\frac{1}{2}"), ["\\boxed{0.5}", "\\boxed{\\{1, 2\\}}"] * 4))
    assert scores == [1, 0] * 4
    assert signal.getsignal(signal.SIGALRM) is handler
