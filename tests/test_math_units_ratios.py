"""Units and ratios are part of the answer: never stripped into a wrong answer's acceptance (issue 35).

Tables of (answer, reference, expected), each right answer beside a wrong twin. A unit written in
the reference counts: another unit is right only when the value is converted (`0.5 m` for `50 cm`),
a unit of another quantity or currency never is. A bare reference is in the question's own unit, so
a unit in the answer alone, or a bare answer against a reference's unit, stays fine. A ratio of
three or more terms is an ordered tuple, equal up to a common positive factor, never a quotient.
"""

from __future__ import annotations

import pytest

from reward_api.graders.maths.verdict import grade_math
from reward_api.local import LocalServer
from reward_api.profiles import MathSettings
from tests.test_math_hard_forms import grade

LENGTH = [
    ("3 cm", r"3 \text{ cm}", 1),
    ("3 mm", r"3 \text{ cm}", 0),
    ("7 km", "7 km", 1),
    ("7 meters", "7 km", 0),
    ("7000 meters", "7 km", 1),
    (r"7000 \text{ mm}", "7 km", 0),
    ("0.5 m", "50 cm", 1),
    (r"0.5 \text{ mm}", r"50 \text{ cm}", 0),
    ("20 mm", "2 cm", 1),
    ("2 mm", "2 cm", 0),
    ("12 inches", "1 foot", 1),
    ("12 feet", "1 foot", 0),
    ("5cm", "5 cm", 1),
    ("5mm", "5 cm", 0),
    (r"\frac{1}{2} m", r"50 \text{ cm}", 1),
    (r"\frac{1}{2} m", r"\frac{1}{2} \text{ km}", 0),
    (r"500 \text{ mm}^2", r"5 \text{ cm}^2", 1),
    (r"50 \text{ mm}^2", r"5 \text{ cm}^2", 0),
    (r"5 \text{ cm}", r"5 \text{ cm}^2", 0),
    (r"2 \text{ square meters}", r"2 \text{ m}^2", 1),
    (r"2 \text{ square feet}", r"2 \text{ m}^2", 0),
    (r"1000 \text{ mL}", r"1 \text{ L}", 1),
    (r"1 \text{ mL}", r"1 \text{ L}", 0),
    (r"36 \text{ km/h}", r"10 \text{ m/s}", 1),
    (r"10 \text{ km/h}", r"10 \text{ m/s}", 0),
    # Letters that read as variables stay variables: `2 L` is twice L, `2nm` the product of n and m.
    ("2 L", "2L", 1),
    ("3 L", "2L", 0),
    ("2nm", "2mn", 1),
    ("2nm", "2m", 0),
    (r"\frac{1}{2} L", r"\frac{L}{2}", 1),
    # A bare reference is in the question's unit; a bare answer is too.
    ("5 cm", "5", 1),
    ("6 cm", "5", 0),
    ("5", r"5 \text{ cm}", 1),
    ("6", r"5 \text{ cm}", 0),
]

MASS = [
    ("2 kg", "2000 g", 1),
    ("2 g", "2 kg", 0),
    (r"250 \text{ mg}", "0.25 g", 1),
    (r"250 \text{ g}", "0.25 g", 0),
    (r"3 \text{ grams}", r"3 \text{ g}", 1),
    (r"3 \text{ kilograms}", r"3 \text{ g}", 0),
    ("5 kg", r"5 \text{ cm}", 0),  # another quantity
]

TIME = [
    ("90 minutes", "1.5 hours", 1),
    ("1.5 minutes", "1.5 hours", 0),
    ("2 h", r"120 \text{ min}", 1),
    (r"120 \text{ s}", r"120 \text{ min}", 0),
    ("3 days", "72 hours", 1),
    ("3 hours", "3 days", 0),
    ("2 years", "24 months", 1),
    ("2 months", "2 years", 0),
]

ANGLE = [
    ("45°", r"45^\circ", 1),
    ("45 radians", r"45^\circ", 0),
    (r"45 \text{ rad}", "45°", 0),
    (r"\frac{\pi}{4} \text{ rad}", r"45^\circ", 1),
    (r"\frac{\pi}{4} \text{ degrees}", r"45^\circ", 0),
    ("60°", r"\frac{\pi}{3} \text{ radians}", 1),
    ("60 radians", r"\frac{\pi}{3} \text{ radians}", 0),
    ("30 degrees", r"\frac{\pi}{6}", 1),  # a bare reference: radians, the question's unit
    ("30 radians", r"\frac{\pi}{6}", 0),
]

CURRENCY = [
    (r"\$5", "5 dollars", 1),
    ("5 euros", r"\$5", 0),
    ("€5", r"5 \text{ euros}", 1),
    (r"\$5", "€5", 0),
    (r"\$0.50", "50 cents", 1),
    (r"\$50", "50 cents", 0),
    (r"5 \text{ yuan}", "¥5", 1),
    (r"\$5", "¥5", 0),
    ("5", r"\$5", 1),
    (r"\$5", "5", 1),
    (r"\$6", "5", 0),
]

RATIOS = [
    # Two terms: a ratio is also its quotient, as before.
    ("3:2", "3:2", 1),
    ("2:3", "3:2", 0),
    ("6:4", "3:2", 1),
    ("1.5", "3:2", 1),
    ("4:6", "3:2", 0),
    # Three terms and more: ordered, up to a common positive factor.
    ("3:2:1", "3:2:1", 1),
    ("3:1:2", "3:2:1", 0),
    ("6:4:2", "3:2:1", 1),
    ("6:2:4", "3:2:1", 0),
    ("3:2:1", "6:4:2", 1),
    ("3:2:2", "6:4:2", 0),
    ("1.5:1:0.5", "3:2:1", 1),
    ("1.5:0.5:1", "3:2:1", 0),
    ("3/2/1", "3:2:1", 0),  # a quotient is no ratio of three terms
    ("1.5", "3:2:1", 0),
    ("3:2", "3:2:1", 0),
    ("-3:-2:-1", "3:2:1", 0),
    (r"3 : 2 : 1", "3:2:1", 1),
    ("x:y:z = 3:2:1", "3:2:1", 1),
    ("x:y:z = 3:1:2", "3:2:1", 0),
    ("2:4:6:8", "1:2:3:4", 1),
    ("1:2:4:3", "1:2:3:4", 0),
    ("1:2:3", "1:2:3:4", 0),
    ("10:20:30:40:50", "1:2:3:4:5", 1),
    ("1:2:3:5:4", "1:2:3:4:5", 0),
    (r"\sqrt{2}:2:\sqrt{2}", r"1:\sqrt{2}:1", 1),
    (r"2:\sqrt{2}:2", r"1:\sqrt{2}:1", 0),
]

FAMILIES = {"length": LENGTH, "mass": MASS, "time": TIME, "angle": ANGLE, "currency": CURRENCY, "ratio": RATIOS}
ROWS = [(family, *row) for family, rows in FAMILIES.items() for row in rows]


@pytest.mark.parametrize(
    ("family", "answer", "reference", "expected"), ROWS, ids=[f"{r[0]}-{r[1]}-{r[2]}" for r in ROWS]
)
def test_units_and_ratios(family: str, answer: str, reference: str, expected: int) -> None:
    assert grade(answer, reference) == expected, f"{family}: {answer!r} against {reference!r}"


@pytest.mark.parametrize(
    ("answer", "reference", "expected"),
    [(r"3 \text{ mm}", r"3 \text{ mm}", 1), (r"3 \text{ mm}", r"3 \text{ cm}", 0), (r"3 \text{ cm}", "3", 0)],
)
def test_kept_units_compare_as_written(answer: str, reference: str, expected: int) -> None:
    assert grade_math(f"\\boxed{{{answer}}}", reference, MathSettings(ignore_units=False)).value == expected


THROUGH_THE_SERVICE = [("0.5 m", "50 cm", 1), ("3 mm", "3 cm", 0), ("6:4:2", "3:2:1", 1), ("3:1:2", "3:2:1", 0)]


def test_units_and_ratios_through_the_service(server: LocalServer) -> None:
    items = [
        {"task": "math", "completion": f"So the answer is $\\boxed{{{answer}}}$.", "reference": reference}
        for answer, reference, _ in THROUGH_THE_SERVICE
    ]
    with server.client() as client:
        response = client.post("/v1/rewards", json={"items": items})
    assert response.status_code == 200, response.text
    results = response.json()["results"]
    assert [r["status"] for r in results] == ["ok"] * len(items)
    assert [r["components"]["accuracy"] for r in results] == [expected for *_, expected in THROUGH_THE_SERVICE]
