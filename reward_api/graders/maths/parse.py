"""Parsing an answer's LaTeX into sympy: latex2sympy, and the forms it cannot read alone.

`parse_latex` is latex2sympy with math-verify's normalisation (and a faster ANTLR mode).
`parse_answer` adds what latex2sympy reads wrongly or not at all:
- conditions joined by words: `4 < m \\leq 8 \\text{ or } 10 \\leq m < 12`, `a \\le -2` or
  `a = 1`, `x > 1 \\land x < 3` are the sets of values that satisfy them (latex2sympy reads
  "or" and "and" both as a comma);
- set-builder notation `\\{x \\mid -1 < x < 1\\}` is that set, also inside a larger set
  expression (`\\{x \\mid x < 3/2\\} - \\{-6\\}`, a set difference written with a minus).
"""

from __future__ import annotations

import re
from dataclasses import replace
from functools import lru_cache

import sympy
from antlr4.atn.PredictionMode import PredictionMode
from latex2sympy2_extended import NormalizationConfig
from latex2sympy2_extended.antlr_parser import PSParser
from latex2sympy2_extended.latex2sympy2 import _Latex2Sympy
from latex2sympy2_extended.math_normalization import normalize_latex
from math_verify.grader import should_treat_as_complex
from math_verify.parser import get_last_eq
from sympy import Basic, Eq, MatrixBase, Set, Symbol
from sympy.core.relational import Relational
from sympy.logic.boolalg import And, Not  # latex2sympy's And (a chain a < x < b) subclasses this

from reward_api.graders.maths.forms import split_top_level
from reward_api.graders.maths.sets import solution_set

_NORMALIZE = NormalizationConfig(
    basic_latex=True, units=True, malformed_operators=True, nits=True, boxed="none", equations=False
)
_NORMALIZE_KEEP_UNITS = replace(_NORMALIZE, units=False)


@lru_cache(maxsize=4096)
def parse_latex(text: str, ignore_units: bool = True) -> Basic | MatrixBase | None:
    """latex2sympy with math-verify's normalisation; None when it cannot be parsed."""
    normalized = normalize_latex(text, _NORMALIZE if ignore_units else _NORMALIZE_KEEP_UNITS)
    for candidate in dict.fromkeys((normalized, get_last_eq(normalized))):
        for converter in (_FastLatex2Sympy, _Latex2SympyLazyDet):
            try:
                expr = converter(is_real=not should_treat_as_complex(candidate)).parse(candidate)
            except Exception:  # the ANTLR parser raises bare Exceptions; deep input raises RecursionError
                continue
            # Results are cached and shared: a mutable matrix must not be.
            return sympy.ImmutableMatrix(expr) if isinstance(expr, MatrixBase) else expr
    return None


class _LazyDeterminantMatrix(sympy.MutableDenseMatrix):
    """A parsed matrix whose determinant, when it has symbols, stays `Determinant(M)`.

    latex2sympy computes `\\det` while parsing; a 6x6 matrix of symbols expands for
    minutes there, before any guard runs. Unevaluated, the comparison decides it by
    evaluation at random points (`_identity`).
    """

    def det(self, method: str = "bareiss", iszerofunc=None) -> sympy.Expr:
        if self.free_symbols:
            return sympy.Determinant(sympy.ImmutableMatrix(self))
        return super().det(method=method, iszerofunc=iszerofunc)


class _Latex2SympyLazyDet(_Latex2Sympy):
    """latex2sympy's converter, with determinants of symbolic matrices left unevaluated."""

    def convert_matrix(self, matrix) -> MatrixBase:
        return _LazyDeterminantMatrix(super().convert_matrix(matrix))


class _FastLatex2Sympy(_Latex2SympyLazyDet):
    """latex2sympy's converter with ANTLR's SLL prediction, ANTLR's recommended first stage.

    Full LL prediction costs 5-25 ms on a set or an interval, SLL about 1 ms. SLL either
    yields LL's tree or a syntax error, on which `parse_latex` retries with full LL (checked
    to give identical trees on every string of math-verify's tests and ours).
    """

    def create_parser(self, latex_str: str) -> PSParser:
        parser = super().create_parser(latex_str)
        parser._interp.predictionMode = PredictionMode.SLL
        return parser


# ---------------------------------------------------------------- conditions and set-builder notation

_OR, _AND = "\x00", "\x01"  # connectives, once found, become these separators
_CONNECTIVE = re.compile(
    r"\\text\{\s*(?P<text>or|and)\s*\}|\\(?P<command>lor|vee|land|wedge)(?![A-Za-z])|\b(?P<word>or|and)\b"
)
_INEQUALITY = re.compile(r"(?<!\\)[<>]|\\(?:[lg]eq?(?:slant)?|[lg]t|neq?|in|notin)(?![A-Za-z])")
_SET_BUILDER = re.compile(
    r"(?:\\left)?\\\{\s*(?P<var>[A-Za-z])\s*(?:\\in\s*(?:\\mathbb\s*\{?\s*R\s*\}?|\\R)\s*)?"
    r"(?:\\middle\s*\||\\mid(?![A-Za-z])|\\vert(?![A-Za-z])|\||:)\s*(?P<condition>[^{}]*?(?:\{[^{}]*\}[^{}]*?)*)\s*(?:\\right)?\\\}"
)
_SET_MINUS = re.compile(r"(?<=[)\]}])\s*-\s*(?=(?:\\left)?\\\{)")
MAX_CONDITIONS = 20


@lru_cache(maxsize=4096)
def parse_answer(text: str, ignore_units: bool = True) -> Basic | MatrixBase | None:
    """`parse_latex`, with set-builder notation and conditions joined by words read as sets."""
    if "\\{" in text and _SET_BUILDER.search(text):
        return _parse_set_builders(text, ignore_units)
    if _INEQUALITY.search(text) and (_CONNECTIVE.search(text) or "," in text):
        conditions = condition_set(text, ignore_units, comma=_OR)
        if conditions is not None:
            return conditions
    return parse_latex(text, ignore_units)


def condition_set(text: str, ignore_units: bool, comma: str) -> Set | None:
    """The values of one variable that satisfy a condition, or None when it is not one.

    `or` (and `comma`, when it is _OR) joins alternatives, `and` binds tighter; each atom is
    a relation in the variable (`-1 < x \\le 2`, `x \\ne 1`, `x = 3`, `x \\in [0, 1)`).
    At least one atom must be an inequality: `x = 1, x = 2` stays a list of values. Commas
    between overlapping regions are ambiguous ("and" or "or"?) and give None.
    """
    marked = _CONNECTIVE.sub(
        lambda m: _OR if (m["text"] or m["command"] or m["word"]) in ("or", "lor", "vee") else _AND, text
    )
    alternatives = split_top_level(marked, _OR + ("," if comma == _OR else ""))
    groups = [split_top_level(part, _AND + ("," if comma == _AND else "")) for part in alternatives]
    atoms = [atom.strip() for group in groups for atom in group]
    if len(atoms) > MAX_CONDITIONS or not all(atoms) or not any(_INEQUALITY.search(atom) for atom in atoms):
        return None
    variables: set[Symbol] = set()
    alternatives_sets = []
    for group in groups:
        sets = []
        for atom in group:
            values = _atom_set(atom.strip(), ignore_units, variables)
            if values is None:
                return None
            sets.append(values)
        alternatives_sets.append(sympy.Intersection(*sets))
    if len(variables) != 1:
        return None
    if comma == _OR and "," in marked and not _disjoint(alternatives_sets):
        return None  # `x > 1, x < 3` may mean "and": a list of regions is read as "or" only when they are apart
    return sympy.Union(*alternatives_sets)


def _disjoint(sets: list[Set]) -> bool:
    return all(sympy.Intersection(a, b).is_empty for i, a in enumerate(sets) for b in sets[i + 1 :])


def _atom_set(atom: str, ignore_units: bool, variables: set[Symbol]) -> Set | None:
    relation = parse_latex(atom, ignore_units)
    if isinstance(relation, Eq) and isinstance(relation.rhs, Set) and isinstance(relation.lhs, Symbol):
        variables.add(relation.lhs)  # x \in S
        return relation.rhs
    if isinstance(relation, Not) and isinstance(relation.args[0], Eq) and isinstance(relation.args[0].rhs, Set):
        variables.add(relation.args[0].lhs)  # x \notin S
        return sympy.Complement(sympy.S.Reals, relation.args[0].rhs)
    if not isinstance(relation, Relational | And) or len(relation.free_symbols) != 1:
        return None
    variables |= relation.free_symbols
    try:
        return solution_set(relation)
    except Exception:  # not solvable for its variable as sympy sees it
        return None


def _parse_set_builders(text: str, ignore_units: bool) -> Basic | MatrixBase | None:
    """Each `\\{x \\mid ...\\}` as the LaTeX of its set, then the whole parsed; a minus before a set is `\\setminus`."""
    pieces, position = [], 0
    for match in _SET_BUILDER.finditer(text):
        values = condition_set(match["condition"], ignore_units, comma=_AND)
        if values is None:
            return parse_latex(text, ignore_units)
        if match.span() == (0, len(text)):
            return values
        pieces += [text[position : match.start()], sympy.latex(values)]
        position = match.end()
    rewritten = "".join(pieces) + text[position:]
    return parse_latex(_SET_MINUS.sub(r" \\setminus ", rewritten), ignore_units)
