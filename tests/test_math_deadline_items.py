"""Math items that used to take the whole deadline are decided, right, well within it (issue 8, item 4).

Each row is graded by the real service (the session `server`: 2 workers, 3 s deadline), so a
case that still needs its deadline shows up as status `timeout`, not as a slow pass. Correct
answers that need expanding (a degree-1000 geometric sum, binomial expansions, telescoping
products, symbolic determinants) must score 1; answers that differ in one coefficient or one
term must score 0; huge constants (10,000 terms k^k, k!, nested sums) must score 0 without
being added up. Before the fix the first two rows scored 0 after 4 s and several others timed
out (figures in the fix's notes).

Sizes are judged against the reference (issue 19): a 3,000-digit integer and a 30x30 matrix
identical to their references earn 1 (they scored 0, "answer too long"); a comparison the rules
decline is `error` with its reason, never a cached 0.
"""

from __future__ import annotations

from math import comb

import pytest

from reward_api.local import LocalServer


def expansion(n: int, changed_power: int | None = None) -> str:
    """(x+1)^n written out, highest power first; `changed_power`'s coefficient is one too large."""
    terms = []
    for power in range(n, -1, -1):
        coefficient = comb(n, power) + (power == changed_power)
        variable = "" if power == 0 else "x" if power == 1 else f"x^{{{power}}}"
        terms.append(("" if coefficient == 1 and variable else str(coefficient)) + variable)
    return " + ".join(terms)


ROWS_6X6 = [
    "a & b & c & g & f & h", "j & k & l & m & n & o", "p & q & r & s & t & u", "v & w & y & z & a & b",
    "a^2 & b^2 & c^2 & g^2 & f^2 & h^2", "a^3 & b^3 & c^3 & g^3 & f^3 & h^3",
]  # fmt: skip
DETERMINANT_6X6 = "\\det\\begin{pmatrix} " + " \\\\ ".join(ROWS_6X6) + " \\end{pmatrix}"

# (answer, reference, expected accuracy)
CORRECT_NEEDING_EXPANSION = [
    ("\\frac{x^{1000}-1}{x-1}", "\\sum_{k=0}^{999} x^k", 1),
    ("\\sum_{k=0}^{999} x^k", "\\frac{x^{1000}-1}{x-1}", 1),
    ("(x+1)^{20}", expansion(20), 1),
    (expansion(20), "(x+1)^{20}", 1),
    ("\\sum_{k=0}^{20} \\binom{20}{k} x^k", "(1+x)^{20}", 1),
    ("(x-1)\\sum_{k=0}^{99} x^k", "x^{100}-1", 1),
    ("(a-b)(a+b)(a^2+b^2)(a^4+b^4)(a^8+b^8)", "a^{16}-b^{16}", 1),
    ("(x+y)^{30}(x-y)^{30}", "(x^2-y^2)^{30}", 1),
    ("\\prod_{k=1}^{50} \\frac{x+k+1}{x+k}", "\\frac{x+51}{x+1}", 1),
    ("\\prod_{k=1}^{99} \\frac{k+1}{k}", "100", 1),
    ("\\sum_{k=1}^{1000} \\frac{1}{k(k+1)}", "\\frac{1000}{1001}", 1),
    ("(\\sin x + 1)^{12}", "\\sum_{k=0}^{12} \\binom{12}{k} \\sin^k x", 1),
    ("\\det\\begin{pmatrix} w & y \\\\ z & x \\end{pmatrix}", "wx - yz", 1),
    ("y = \\frac{x^{500}-1}{x-1}", "y = \\sum_{k=0}^{499} x^k", 1),
    ("\\det\\begin{pmatrix} 1 & a & a^2 \\\\ 1 & b & b^2 \\\\ 1 & c & c^2 \\end{pmatrix}", "(b-a)(c-a)(c-b)", 1),
]
WRONG_BY_ONE_COEFFICIENT_OR_TERM = [
    ("(x+1)^{20}", expansion(20, changed_power=10), 0),
    (expansion(20, changed_power=3), "(x+1)^{20}", 0),
    ("\\sum_{k=0}^{20} \\binom{20}{k} x^k", "(1+x)^{21}", 0),
    ("\\frac{x^{1000}-1}{x-1}", "\\sum_{k=0}^{998} x^k", 0),
    ("\\frac{x^{1000}+1}{x-1}", "\\sum_{k=0}^{999} x^k", 0),
    ("(a-b)(a+b)(a^2+b^2)(a^4+b^4)(a^8+b^8)", "a^{16}+b^{16}", 0),
    ("\\prod_{k=1}^{50} \\frac{x+k+1}{x+k}", "\\frac{x+50}{x+1}", 0),
    ("(x+1)^{1000} - (x-1)^{1000}", "0", 0),
    ("\\det\\begin{pmatrix} w & y \\\\ z & x \\end{pmatrix}", "wx + yz", 0),
    (DETERMINANT_6X6, "0", 0),
    ("\\int x^{10} e^{x} \\sin(x) \\cos(3x) \\, dx", "x", 0),
]
HUGE_CONSTANTS = [
    ("\\sum_{k=1}^{10000} k^{k}", "1", 0),
    ("7 + \\sum_{k=1}^{10000} k^{k}", "1", 0),
    ("\\prod_{k=1}^{10000} k^{k}", "1", 0),
    ("\\sum_{k=1}^{10000} k!", "1", 0),
    ("\\sum_{k=1}^{10000} \\sum_{j=1}^{10000} j^{k}", "1", 0),
    ("\\prod_{k=1}^{10000} (x+k)", "1", 0),
    ("\\sum_{k=1}^{10000} (x+k)^{1000}", "1", 0),
    ("(x^{1000}+1)^{1000}", "1", 0),
    ("2^{2^{17}}", "1", 0),
]
# Identities outside what evaluation at points decides: still graded as before, by sympy.
NOT_DECIDED_BY_POINTS = [
    ("\\sin^2 x + \\cos^2 x", "1", 1),
    ("\\sum_{k=1}^{n} k", "\\frac{n(n+1)}{2}", 1),
    ("\\sqrt{x^2}", "x", 0),
    ("|x|", "x", 0),
]
CASES = CORRECT_NEEDING_EXPANSION + WRONG_BY_ONE_COEFFICIENT_OR_TERM + HUGE_CONSTANTS + NOT_DECIDED_BY_POINTS


def grade(server: LocalServer, answer: str, reference: str | list[str]) -> dict:
    """One item a request: time in the queue counts against the deadline, so items are not batched."""
    item = {"task": "math", "completion": f"The answer is $\\boxed{{{answer}}}$.", "reference": reference}
    with server.client() as client:
        response = client.post("/v1/rewards", json={"items": [item]})
    assert response.status_code == 200, response.text
    return response.json()["results"][0]


@pytest.mark.parametrize(("answer", "reference", "expected"), CASES, ids=[case[0][:40] for case in CASES])
def test_decided_within_the_deadline(server: LocalServer, answer: str, reference: str, expected: int) -> None:
    result = grade(server, answer, reference)
    assert result["status"] == "ok", result
    assert result["components"]["accuracy"] == expected, result["details"]


@pytest.mark.parametrize(("answer", "reference", "expected"), CORRECT_NEEDING_EXPANSION[:4])
def test_expansions_are_proved_by_evaluation_at_points(
    server: LocalServer, answer: str, reference: str, expected: int
) -> None:
    """Method `identity`: evaluation modulo primes decided, not sympy's simplify (which took 4 s and failed)."""
    assert grade(server, answer, reference)["details"]["accuracy"]["method"] == "identity"


BIG_INTEGER = "".join(str(k * k % 9 + 1) for k in range(3000))
GRID = (
    "\\begin{pmatrix}"
    + " \\\\ ".join(" & ".join(str(i * j % 89) for j in range(30)) for i in range(30))
    + "\\end{pmatrix}"
)
SIZED = [
    (BIG_INTEGER, BIG_INTEGER, 1),
    (BIG_INTEGER[:-1] + "0", BIG_INTEGER, 0),
    (GRID, GRID, 1),
    (GRID.replace(" & 1 &", " & 2 &", 1), GRID, 0),
    (BIG_INTEGER, "5", 0),
    ("5", [BIG_INTEGER, "5"], 1),
]


@pytest.mark.parametrize(("answer", "reference", "expected"), SIZED, ids=[f"{a[:20]}-{e}" for a, _, e in SIZED])
def test_sizes_are_judged_against_the_reference(
    server: LocalServer, answer: str, reference: str, expected: int
) -> None:
    result = grade(server, answer, reference)
    assert result["status"] == "ok", result
    assert result["components"]["accuracy"] == expected, result["details"]


def test_a_comparison_the_rules_decline_is_an_error_and_never_cached(server: LocalServer) -> None:
    """The reference cannot be evaluated: masked by the trainer as `error`, and asked again each time."""
    for _ in range(2):
        result = grade(server, "3", "\\sum_{k=1}^{10000} k^{k}")
        assert (result["status"], result["reward"]) == ("error", 0.0), result
        assert "NotComputed: the reference is too large to evaluate" in result["details"]["reason"]
        assert "cached" not in result["details"]
