"""A reproducible set of realistic math items: R1-style completions, mixed easy and hard.

Each item is (completion, reference). The mix, by share of items:
- easy: integers, decimals, simple fractions, in \\boxed{} after a chain of thought;
- medium: radicals, pi, percent, degrees, scientific notation, sets, tuples, intervals,
  matrices, `x = ...`, text-wrapped answers, "the answer is" phrasing;
- hard: answers that need symbolic simplification to compare;
- pathological: inputs that make a symbolic grader hang until its deadline.
Half the answers are right, half wrong (a near miss of the reference).
"""

from __future__ import annotations

import random

COT = (
    "Let me work through this carefully. First I restate the problem and identify the "
    "quantities involved. Then I set up the equations, simplify step by step, and check "
    "the result against the constraints. "
)

# (reference, right answer as written by a model, wrong answer)
MEDIUM = [
    ("2\\sqrt{3}", "\\sqrt{12}", "3\\sqrt{2}"),
    ("\\frac{\\pi}{4}", "\\frac{1}{4}\\pi", "\\frac{\\pi}{3}"),
    ("25\\%", "25\\%", "0.3"),
    ("30^\\circ", "30^\\circ", "60^\\circ"),
    ("3.2 \\times 10^{5}", "320000", "3.2 \\times 10^{4}"),
    ("\\{1, 2, 3\\}", "\\{3, 1, 2\\}", "\\{1, 2\\}"),
    ("(1, 2)", "(1, 2)", "(2, 1)"),
    ("[0, 1)", "[0, 1)", "[0, 1]"),
    ("\\begin{pmatrix} 1 & 2 \\\\ 3 & 4 \\end{pmatrix}", "\\begin{pmatrix} 1 & 2 \\\\ 3 & 4 \\end{pmatrix}",
     "\\begin{pmatrix} 1 & 3 \\\\ 2 & 4 \\end{pmatrix}"),
    ("5", "x = 5", "x = 6"),
    ("12", "12 \\text{ cm}", "13 \\text{ cm}"),
    ("\\frac{3}{2}", "1.5", "1.25"),
    ("-\\frac{1}{2}", "-0.5", "0.5"),
    ("\\sqrt{2}/2", "\\frac{\\sqrt{2}}{2}", "\\frac{\\sqrt{3}}{2}"),
]  # fmt: skip

HARD = [
    ("\\frac{1}{2}", "\\frac{\\sin^2(x) + \\cos^2(x)}{2}", "\\frac{\\sin(x) + \\cos(x)}{2}"),
    ("x^2 + 2x + 1", "(x+1)^2", "(x-1)^2"),
    ("\\frac{x+1}{x^2-1}", "\\frac{1}{x-1}", "\\frac{1}{x+1}"),
    ("\\log_2 8", "3", "4"),
    ("e^{i\\pi}", "-1", "1"),
    ("\\binom{10}{3}", "120", "720"),
    ("\\sum_{k=1}^{10} k", "55", "45"),
    ("\\frac{\\sqrt{6}+\\sqrt{2}}{4}", "\\cos(15^\\circ)", "\\sin(15^\\circ)"),
]

PATHOLOGICAL = [
    "(x+1)^{100000} - (x+1)^{99999}",
    "\\sum_{n=1}^{10^{100}} n^{n^n}",
    "\\int_0^{\\infty} e^{-x^{1000}} \\sin(x^{x^x}) dx",
]


def _completion(answer: str, rng: random.Random, case: int) -> str:
    # The case number up front keeps every item distinct, so no cache can answer a repeat.
    thinking = f"Problem {case}. " + COT * rng.randint(1, 6)
    style = rng.random()
    if style < 0.7:
        return f"<think>{thinking}</think>\nSo the final answer is $\\boxed{{{answer}}}$."
    if style < 0.9:
        return f"<think>{thinking}</think>\nThe answer is ${answer}$."
    return f"{thinking}\nTherefore, the answer is \\boxed{{{answer}}}."


def _easy(rng: random.Random) -> tuple[str, str, str]:
    kind = rng.random()
    if kind < 0.5:
        n = rng.randint(-1000, 100_000)
        return str(n), str(n), str(n + rng.choice([-1, 1, 10]))
    if kind < 0.75:
        p, q = rng.randint(1, 97), rng.randint(2, 99)
        return f"\\frac{{{p}}}{{{q}}}", f"\\frac{{{p}}}{{{q}}}", f"\\frac{{{p + 1}}}{{{q}}}"
    value = round(rng.uniform(-100, 100), rng.randint(1, 3))
    return str(value), str(value), str(round(value + 0.1, 3))


def make_items(count: int, seed: int = 0, pathological_share: float = 0.003) -> list[tuple[str, str]]:
    """`count` unique (completion, reference) pairs in a fixed, shuffled order."""
    rng = random.Random(seed)
    items: list[tuple[str, str]] = []
    n_pathological = max(1, round(count * pathological_share)) if pathological_share > 0 else 0
    for i in range(n_pathological):
        answer = PATHOLOGICAL[i % len(PATHOLOGICAL)]
        items.append((_completion(answer, rng, len(items)), "4"))
    while len(items) < count:
        kind = rng.random()
        if kind < 0.6:
            reference, right, wrong = _easy(rng)
        elif kind < 0.9:
            reference, right, wrong = rng.choice(MEDIUM)
        else:
            reference, right, wrong = rng.choice(HARD)
        answer = right if rng.random() < 0.5 else wrong
        items.append((_completion(answer, rng, len(items)), reference))
    rng.shuffle(items)
    return items
