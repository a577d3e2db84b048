"""`solution_set` is sympy's `as_set`: the same set, or the same refusal, for every condition."""

from __future__ import annotations

import pytest
import sympy
from sympy import Abs, And, Eq, Ne, Or, Rational, sin, srepr

from reward_api.graders.maths.sets import solution_set

x = sympy.Symbol("x", real=True)
y = sympy.Symbol("y", real=True)

CONDITIONS = [
    x > Rational(-1, 4),
    x**2 < 4,
    x**2 <= 4,
    x**2 - 2 >= 0,  # surds
    (x - 1) ** 2 <= 0,  # a double root
    x**2 + 1 > 0,  # the whole line
    x**2 + 1 < 0,
    Ne(3 * x - Rational(1, 2), x**2),
    Ne(x, 1),
    Eq(x, 3),
    1 / x > 2,
    (x + 1) / (x - 1) >= 0,
    x > sympy.pi,
    And(x > 1, x < 3),
    Or(x < -1, x >= 3),
    And(Or(x < 0, x > 2), Ne(x, 5)),
    Abs(x) < 2,  # not rational in x: sympy's own path
    sympy.sqrt(x) > 1,
]
REFUSED = [sin(x) > 0, And(x > 0, sin(x) < 0), x + y > 1]


@pytest.mark.parametrize("condition", CONDITIONS, ids=str)
def test_solution_set_is_sympys_set(condition: sympy.Basic) -> None:
    assert srepr(solution_set(condition)) == srepr(condition.as_set())


@pytest.mark.parametrize("condition", REFUSED, ids=str)
def test_solution_set_refuses_what_sympy_refuses(condition: sympy.Basic) -> None:
    with pytest.raises(NotImplementedError):
        condition.as_set()
    with pytest.raises(NotImplementedError):
        solution_set(condition)
