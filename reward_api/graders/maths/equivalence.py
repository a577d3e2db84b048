"""Equivalence of an extracted answer and a reference answer.

Both sides are cleaned as text first (delimiters, `\\left`/`\\right`, thousands
separators, currency, units, percent and degree signs, scientific notation). A unit the
reference names counts (`units`): the answer's value is converted into it, and a unit
of another quantity or currency is wrong. A multiple-choice reference matches its letter or
its value; a ratio of three terms or more compares term by term, up to a positive factor.
Plain numbers then compare with `fractions.Fraction` before any LaTeX parsing; everything
else is parsed with latex2sympy (math-verify's normalisation and parser) and compared
structurally here: sets order-insensitively, tuples in order, intervals with their
ends, matrices entry by entry, equations and inequalities up to a constant factor,
`x = ...` answers by their right-hand side, and values exactly.

Numbers, the rule (math-verify instead rounds both sides to 6 decimal places, which
makes `1/2^{99}` equal `1/2^{98}` and `0.0000001` equal `0.0000002`):
- exact values (integers, fractions, radicals, pi, ...) compare exactly: Fractions,
  or sympy with a high-precision check that must be confirmed by simplification;
- a decimal literal stands for the values that round to it: `d` with its last digit
  at 10^q matches `v` when |v - d| <= 10^q / 2 and `d` states at least MIN_DIGITS
  significant digits (1/3 = 0.333333 but not 0.3333, as in math-verify; pi = 3.14159,
  which math-verify rejects; 2/3 != 0.666666, a truncation). Between two decimals the
  more precise one plays the exact value;
- a decimal inside a larger expression (`2.5\\pi`) states no precision for the whole
  value: the two sides must agree within `settings.rel_tol`, relatively.

Identities that need expanding or adding up (`(x^{1000}-1)/(x-1)` against
`\\sum_{k=0}^{999} x^k`, `(x+1)^{20}` against its expansion, a symbolic determinant) are
decided by exact evaluation modulo two 61-bit primes at random points (`_identity`),
in milliseconds, before sympy expands anything: disagreement proves "not equal",
agreement at every point proves the identity with error probability below 2^-80.

Nothing here evaluates model text: it only reaches latex2sympy's parser, and
`parse_expr` is never called. Guards refuse exponent towers, huge powers and
factorials, sums and products too long to add up (10,000 terms k^k) and deep nesting
before sympy evaluates anything.

Sizes are judged against the reference. A side longer than the symbolic path reads
(MAX_ANSWER_CHARS) is compared only by exact means: its text, integers digit by digit,
matrices entry by entry. An answer far longer than its reference is wrong; where the
bounds decline otherwise (a reference too long, too deep or too costly to evaluate, an
answer of the reference's size that no exact comparison decides), `NotComputed` is raised:
the item reports `error` with the reason, a status the trainer masks, never a 0.
"""

from __future__ import annotations

import math
import random
import re
from collections import Counter
from dataclasses import dataclass, field
from fractions import Fraction
from functools import lru_cache
from itertools import product

import sympy
from latex2sympy2_extended.logic import And
from math_verify.grader import (
    is_assignment_relation,
    is_equation,
    is_relation,
    sympy_compare_symbols,
    take_first_relation,
    take_last_relation,
    unwrap_fcs,
)
from sympy import Basic, Eq, Float, Interval, MatrixBase, Rational, Set, Symbol, Tuple, Union
from sympy import FiniteSet as SympyFiniteSet
from sympy.core.function import AppliedUndef
from sympy.core.relational import Relational
from sympy.matrices.expressions import MatrixExpr

from reward_api.graders.maths.forms import (
    Choice,
    bare_letter,
    canonical_text,
    drop_labels,
    exact_repeating,
    expand_signs,
    fix_slips,
    geometric_series,
    multiple_choice,
    number_in_words,
    plain_latex,
    ratio_terms,
    strip_prose,
    take_declarations,
    word_answer,
)
from reward_api.graders.maths.parse import parse_answer
from reward_api.graders.maths.sets import solution_set
from reward_api.graders.maths.units import DEGREE, Unit, bare_symbol, conversion, numeral_base, read_unit
from reward_api.profiles import MathSettings

MIN_DIGITS = 6  # significant digits a decimal needs before it may stand for an exact value
REFERENCE_MIN_DIGITS = 3  # ... when the reference is that decimal: it states the precision asked for
MAX_ANSWER_CHARS = 2000  # the symbolic path (parsing, sympy) reads sides up to this long
FAR_BEYOND = 4  # a longer answer that is more than this many times its reference's length cannot equal it
MAX_NESTING = 60  # bracket depth; the LaTeX parser recurses per level
MAX_NODES = 4000  # sympy tree size we are willing to compare
MAX_BITS = 200_000  # largest number (in bits) we let sympy compute, about 60,000 digits
MAX_SYMBOLIC_POWER = 1000  # (x+1)^n with a larger n is not expanded
MAX_SUMMED_TERMS = 10_000  # sums and products with numeric bounds
MAX_SERIES_BITS = 10_000_000  # terms x bits of the largest term: about 1 s of sympy adding them up
MAX_INTEGRATED_POWER = 100
MAX_MATCHED_ELEMENTS = 40  # sets up to this size are matched element by element
_SCREEN_POINTS = 3  # random points that must agree before we try to prove an identity


class NotComputed(RuntimeError):
    """The rules declined to compare (a side beyond the symbolic path's bounds that no exact comparison
    decides): raised out of the grader, so the item reports `error` with this reason and is not cached."""


@dataclass(frozen=True)
class Verdict:
    equal: bool
    method: str
    reason: str | None = None


@dataclass(frozen=True)
class Num:
    """A plain number: `exponent` is None when exact, else the decimal literal's last place (10^exponent)."""

    value: Fraction
    exponent: int | None = None
    digits: int = 0

    def scaled(self, factor: Fraction, shift: int) -> Num:
        exponent = None if self.exponent is None else self.exponent + shift
        return Num(self.value * factor, exponent, self.digits)


@dataclass(frozen=True)
class Prepared:
    """One side after text cleaning: the text to parse and what the cleaning took off."""

    text: str
    percent: bool = False
    degrees: bool = False
    number: Num | None = None
    decimals: dict[float, Num] = field(default_factory=dict, compare=False, hash=False)
    refused: str | None = None
    ordered: bool = False  # labelled items (`Min: 1, Max: 3`) compare in the order written
    parameters: frozenset[str] = frozenset()  # names declared integers (`k \\in \\mathbb{Z}`)
    words: str | None = None  # a short answer in words, normalised (`forms.word_answer`)
    canonical: str = ""  # the whole answer, units and all, as `forms.canonical_text`
    oversized: bool = False  # longer than MAX_ANSWER_CHARS: cleaned, never parsed
    unit: Unit | None = None  # the known unit written after the value, or a numeral's base (`units`)
    ratio: tuple[str, ...] | None = None  # the terms of a ratio of three or more (`forms.ratio_terms`)
    choice: Choice | None = None  # a multiple choice's letter and value (`forms.multiple_choice`)


# ---------------------------------------------------------------- text cleaning

_DELIMITERS = re.compile(r"\\\[|\\\]|\\\(|\\\)|(?<!\\)\$")
# Spacing, and sized delimiters (`\\Big\\{`, `\\bigl(`): how it looks, not what it says.
_SPACING = re.compile(r"(?<!\\)\\[,;:> ]|\\q?quad\b|~|\\displaystyle|\\limits|\\[bB]igg?[lrm]?(?![A-Za-z])")
_NEGATIVE_SPACE = re.compile(r"\\!\s*")  # `11,\! 111` is one number
_THOUSANDS_BRACE = re.compile(r"(?<=\d)\{,\}(?=\d{3})")
_THOUSANDS = re.compile(r"^[+-]?[1-9]\d{0,2}(?:(?:,\d{3})+|(?: \d{3})+)(?:\.\d+)?$")
_CURRENCY = re.compile(r"\\\$|[€£¥₹]|\\(?:euro|pounds)\b|\b(?:US)?dollars?\b|\bUSD\b|\beuros?\b|\byuan\b")
_PERCENT = re.compile(r"\s*(?:\\%|%|\\text\{\s*(?:percent|percentage|pct)\s*\}|\b(?:percent|percentage|pct)\b)\s*$")
_DEGREES = re.compile(
    r"\s*(?:\^\s*\{?\s*\\circ\s*\}?|\\circ|°|\\degree|\^\s*\{\s*\\text\{\s*o\s*\}\s*\}"
    r"|\\text\{\s*degrees?\s*\}|\bdegrees?\b)\s*$"
)
_TEXT_UNIT = re.compile(
    r"(?<=[\d}])\s*\\(?:text|mbox|mathrm)\{\s*(?P<unit>[A-Za-z][A-Za-z ./]*)\}(?P<power>\^\{?\d\}?)?\s*$"
)
_WORD_UNIT = re.compile(r"(?<=\d)\s+(?P<unit>[A-Za-z]{2,}\.?(?:\s+[A-Za-z]{2,}\.?){0,2})\s*$")
# Stripped only when a known unit `units.bare_symbol` reads: one letter after a space (`0.5 m`), a symbol written
# on (`5cm`), a power, a rate; after a number or a group (`\\frac{1}{2} m`).
_SYMBOL_UNIT = re.compile(
    r"(?<=[\d}])(?P<unit>\s*(?:(?<=\s)[A-Za-z]|[A-Za-z]{2,}(?:\s*/\s*[A-Za-z]+)?))(?P<power>\s*\^\s*\{?\s*[23]\s*\}?)?\s*$"
)
_BASE_NUMERAL = re.compile(r"(?P<digits>[0-9A-Z]*\d[0-9A-Z]*)\s*_\s*\{?\s*(?P<base>\d{1,2})\s*\}?")
_SCIENTIFIC = re.compile(r"(?<![\w\\.])(\d+(?:\.\d+)?)[eE]([+-]?\d{1,4})(?![\w.])")
_LETTER_TEXT = re.compile(r"\\math(?:rm|it)\{\s*~?\s*([A-Za-z])\s*\}")  # \mathrm{e}, \mathrm{~N}
_DECIMAL = re.compile(r"(?<![\d.])\d*\.\d+")
_TRAILING = " \t\r\n.,;:"


def prepare(text: str, settings: MathSettings) -> Prepared:
    """Clean one side; cached because a group's samples share a reference and often an answer."""
    return _prepare(text, settings.ignore_units)


@lru_cache(maxsize=8192)
def _prepare(text: str, ignore_units: bool) -> Prepared:
    if _nesting(text) > MAX_NESTING:
        return Prepared(text[:100], refused="too deeply nested")
    text = _DELIMITERS.sub(" ", strip_prose(plain_latex(text)))
    text = _SPACING.sub(" ", _NEGATIVE_SPACE.sub("", text))
    text = _LETTER_TEXT.sub(r"\1", text)
    # Before trailing dots go: `1.999...` is 2, and so is `1 + \frac{1}{2} + \frac{1}{4} + \cdots`.
    text = geometric_series(exact_repeating(" ".join(text.split()).strip()))
    text = text.rstrip(_TRAILING).removeprefix("**").removesuffix("**")
    if len(text) > MAX_ANSWER_CHARS:
        return Prepared(_without_thousands(text), canonical=canonical_text(text), oversized=True)
    declared = take_declarations(fix_slips(text))
    labelled = drop_labels(declared.text)
    text = expand_signs(labelled.text)
    canonical = canonical_text(text)
    unit = None
    if ignore_units:
        unit, text = _take_currency(text)
    percent, text = _strip(_PERCENT, text)
    degrees, text = _strip(_DEGREES, text)
    if ignore_units:
        named, text = _strip_units(text)
        unit = unit or named or (DEGREE if degrees else None)
    if unit is None:
        unit, text = _take_base(text)
    text = _without_thousands(text)
    text = _SCIENTIFIC.sub(r"\1\\times10^{\2}", text)
    words = word_answer(text)
    spelled = number_in_words(words) if words else None
    if spelled:
        text, words = spelled, None
    return Prepared(
        text,
        percent,
        degrees,
        plain_number(text),
        _decimal_literals(text),
        ordered=labelled.ordered,
        parameters=declared.parameters,
        words=words,
        canonical=canonical,
        unit=unit,
        ratio=ratio_terms(text),
        choice=multiple_choice(text),
    )


def _without_thousands(text: str) -> str:
    """`1{,}000` and `1,000,000` (or `1 000 000`) as plain digits."""
    text = _THOUSANDS_BRACE.sub("", text)
    return text.replace(",", "").replace(" ", "") if _THOUSANDS.match(text) else text


def _nesting(text: str) -> int:
    depth = deepest = 0
    for char in text:
        if char in "({[":
            depth += 1
            deepest = max(deepest, depth)
        elif char in ")}]":
            depth -= 1
    return deepest


def _strip(pattern: re.Pattern[str], text: str) -> tuple[bool, str]:
    stripped = pattern.sub("", text).strip().rstrip(_TRAILING)
    return (True, stripped) if stripped and stripped != text else (False, text)


def _take_currency(text: str) -> tuple[Unit | None, str]:
    """`\\$5`, `5 euros`: the currency, when one is named (two different ones name none), and the text without."""
    named = {read_unit(match.group()) for match in _CURRENCY.finditer(text)}
    if not named:
        return None, text
    return (named.pop() if len(named) == 1 else None), _CURRENCY.sub("", text).strip().rstrip(_TRAILING)


def _strip_units(text: str) -> tuple[Unit | None, str]:
    """`3 \\text{ cm}^2`, `12 apples`, `0.5 m`: a number followed by a unit or words loses them; the unit is
    kept when it is a known one. One letter or a symbol written on is stripped only as a known unit."""
    unit = None
    for pattern in (_TEXT_UNIT, _WORD_UNIT, _SYMBOL_UNIT):
        match = pattern.search(text)
        if match is None:
            continue
        written = match["unit"] + (match.groupdict().get("power") or "")
        if pattern is _SYMBOL_UNIT and not bare_symbol(written):
            continue
        named = read_unit(written)
        stripped = text[: match.start()].strip().rstrip(_TRAILING)
        if stripped and (named or pattern is not _SYMBOL_UNIT):
            unit, text = unit or named, stripped
    return unit, text


def _take_base(text: str) -> tuple[Unit | None, str]:
    """`1010_2`, `1A_{16}`: the base, and the digits; the parser would drop the subscript, so any base matched."""
    numeral = _BASE_NUMERAL.fullmatch(text)
    if numeral is None or not 2 <= int(numeral["base"]) <= 36:
        return None, text
    try:
        int(numeral["digits"], int(numeral["base"]))
    except ValueError:  # `A_2` is a name, not a numeral
        return None, text
    return numeral_base(int(numeral["base"])), numeral["digits"]


def _decimal_literals(text: str) -> dict[float, Num]:
    """The decimal literals of a side, keyed by the float latex2sympy turns them into."""
    literals = {}
    for match in _DECIMAL.finditer(text):
        number = _decimal(match.group())
        if number is not None:
            literals[float(number.value)] = number
    return literals


# ---------------------------------------------------------------- plain numbers

_SIGN = r"(?P<sign>[+-]?)\s*"
_DEC = r"(?P<dec>\d+(?:\.\d*)?|\.\d+)"
_POWER_OF_TEN = r"10\s*\^\s*(?P<exp>[+-]?\d{1,4}|\{\s*[+-]?\d{1,4}\s*\})"
_PLAIN_PATTERNS = (
    re.compile(_SIGN + _DEC),
    re.compile(_SIGN + _DEC + r"\s*(?:\\times|\\cdot|\*|×)\s*" + _POWER_OF_TEN),
    re.compile(_SIGN + _POWER_OF_TEN),
    re.compile(_SIGN + r"(?P<num>\d+)\s*/\s*(?P<den>\d+)"),
    re.compile(
        _SIGN + r"\\frac\s*(?:\{\s*(?P<num>[+-]?\d+)\s*\}|(?P<num1>\d))\s*(?:\{\s*(?P<den>[+-]?\d+)\s*\}|(?P<den1>\d))"
    ),
)
_MAX_DIGITS = 1000


def plain_number(text: str) -> Num | None:
    """The value of a plain integer, decimal, fraction or power of ten, without parsing LaTeX."""
    if len(text) > _MAX_DIGITS:
        return None
    for pattern in _PLAIN_PATTERNS:
        match = pattern.fullmatch(text)
        if match:
            number = _plain_value(match.groupdict())
            if number is not None and match.group("sign") == "-":
                number = number.scaled(Fraction(-1), 0)
            return number
    return None


def _plain_value(groups: dict[str, str | None]) -> Num | None:
    exp = int(groups["exp"].strip("{} ")) if groups.get("exp") else 0
    if groups.get("dec") is not None:
        number = _decimal(groups["dec"])
        return number.scaled(Fraction(10) ** exp, exp) if number else None
    if groups.get("exp") is not None:
        return Num(Fraction(10) ** exp)
    numerator = int(groups.get("num") or groups["num1"])
    denominator = int(groups.get("den") or groups["den1"])
    return Num(Fraction(numerator, denominator)) if denominator else None


def _decimal(literal: str) -> Num | None:
    """`16386.16` -> value 1638616/100 stated to 10^-2 with 7 significant digits; integers are exact."""
    whole, _, fraction = literal.partition(".")
    if not fraction.strip("0"):
        return Num(Fraction(int(whole or "0")))
    digits = len((whole + fraction).lstrip("0"))
    return Num(Fraction(int(whole + fraction), 10 ** len(fraction)), -len(fraction), digits)


def rounds_to(value: Fraction, approx: Num, min_digits: int = MIN_DIGITS) -> bool:
    """Is `value` the decimal `approx` itself, or does it round to it at its last stated digit?"""
    if value == approx.value or approx.exponent is None:
        return value == approx.value
    return approx.digits >= min_digits and abs(value - approx.value) * 2 <= Fraction(10) ** approx.exponent


def compare_numbers(ref: Num, ans: Num) -> str | None:
    """Exact equality, or the less precise decimal is the other value rounded.

    A reference decimal states the precision the problem asked for: an exact answer that
    rounds to it matches from REFERENCE_MIN_DIGITS significant digits on (30.52 = 1587/52).
    """
    if ref.value == ans.value:
        return "exact"
    precise = ans.exponent is None or (
        ans.digits >= MIN_DIGITS and ref.exponent is not None and ans.exponent < ref.exponent
    )
    if ref.exponent is not None and precise and rounds_to(ans.value, ref, REFERENCE_MIN_DIGITS):
        return "numeric"
    for approx, other in ((ans, ref), (ref, ans)):
        if approx.exponent is None:
            continue
        if (other.exponent is None or other.exponent < approx.exponent) and rounds_to(other.value, approx):
            return "numeric"
    return None


# ---------------------------------------------------------------- entry point


def equivalent(answer: str, reference: str, settings: MathSettings) -> Verdict:
    """Is the extracted `answer` equivalent to the (normalised) `reference`?

    Cached: a group's samples share the reference and often the answer, and the verdict is
    a pure function of the two strings and the settings.
    """
    return _equivalent(answer, reference, settings.rel_tol, settings.percent_equals_fraction, settings.ignore_units)


@lru_cache(maxsize=16384)
def _equivalent(
    answer: str, reference: str, rel_tol: float, percent_equals_fraction: bool, ignore_units: bool
) -> Verdict:
    settings = MathSettings(rel_tol=rel_tol, percent_equals_fraction=percent_equals_fraction, ignore_units=ignore_units)
    if answer == reference:
        return Verdict(True, "exact")
    ref, ans = prepare(reference, settings), prepare(answer, settings)
    if ref.refused:
        raise NotComputed(f"the reference is {ref.refused} to compare")
    if ans.refused:
        return Verdict(False, "guard", "answer " + ans.refused)
    if not ans.text:
        return Verdict(False, "parse", "unparseable answer")
    factor = conversion(ref.unit, ans.unit)
    if factor is None:
        assert ref.unit is not None and ans.unit is not None  # only two known units can disagree
        return Verdict(False, "unit", f"not equivalent (in {ans.unit.name}, the reference in {ref.unit.name})")
    if ref.choice is not None or ans.choice is not None:
        return _same_choice(ref, ans, settings)
    if ref.ratio is not None or ans.ratio is not None:
        return _same_ratio(ref, ans, settings)
    if factor == 1 and ans.text == ref.text and (ans.percent, ans.degrees) == (ref.percent, ref.degrees):
        return Verdict(True, "exact")
    if ans.canonical == ref.canonical:  # units and all: `5 \\text{cm}` is not `5 \\text{m}` here
        return Verdict(True, "text")
    if ref.oversized or ans.oversized:
        return _beyond_symbolic(ref, ans, settings)
    if ref.words and ans.words:  # never parsed: `odd` would be the product o*d*d, equal to `dod`
        return Verdict(True, "text") if ref.words == ans.words else Verdict(False, "text", "not equivalent")
    if ref.number is not None and ans.number is not None and factor.is_Rational:
        answers = [_converted(number, factor) for number in _num_variants(ans, ref, settings)]
        method = _first(compare_numbers(r, a) for r, a in product(_num_variants(ref, ans, settings), answers))
        return Verdict(True, method) if method else Verdict(False, "numeric", "not equivalent")
    return _equivalent_parsed(ref, ans, settings, factor)


def _converted(number: Num, factor: sympy.Rational) -> Num:
    """`number` in the reference's unit; its stated precision scales with it, rounded to the safe side (finer)."""
    if factor == 1:
        return number
    fraction = Fraction(int(factor.p), int(factor.q))
    return number.scaled(fraction, math.floor(math.log10(fraction)))


def _first(methods) -> str | None:
    return next((m for m in methods if m), None)


def _num_variants(side: Prepared, other: Prepared, settings: MathSettings) -> list[Num]:
    """A percent is its number, or that number / 100 when fractions may stand for percents."""
    assert side.number is not None
    variants = [side.number]
    if side.percent and not other.percent and settings.percent_equals_fraction:
        variants.append(side.number.scaled(Fraction(1, 100), -2))
    return variants


def _equivalent_parsed(ref: Prepared, ans: Prepared, settings: MathSettings, factor: sympy.Expr) -> Verdict:
    ref_expr = parse_answer(ref.text, settings.ignore_units)
    ans_expr = parse_answer(ans.text, settings.ignore_units)
    if ans_expr is None:
        return Verdict(False, "parse", "unparseable answer")
    if ref_expr is None:
        return Verdict(False, "string", "not equivalent")
    if factor != 1:
        if not isinstance(ans_expr, sympy.Expr):
            return Verdict(False, "unit", "not equivalent (another unit, and no value to convert)")
        ans_expr = ans_expr * factor
    # Both sides state their units: values compare in the reference's, a degree sign makes no other variant.
    in_units = ref.unit is not None and ans.unit is not None
    try:
        if problem := too_costly(ref_expr):
            raise NotComputed(f"the reference is {problem}")
        if problem := too_costly(ans_expr):
            return Verdict(False, "guard", f"answer {problem}")
        comparer = _Comparer(settings, ref, ans)
        ref_variants = _variants(ref, ref_expr, ans_expr, settings, in_units)
        ans_variants = _variants(ans, ans_expr, ref_expr, settings, in_units)
        method = _first(comparer.same(r, a) for r, a in product(ref_variants, ans_variants))
    except NotComputed:
        raise
    except Exception as error:  # sympy raises all kinds of errors on odd input
        return Verdict(False, "error", f"not equivalent (comparison failed: {type(error).__name__})")
    return Verdict(True, method) if method else Verdict(False, _describe(ref_expr), "not equivalent")


def _variants(side: Prepared, expr: Basic, other: Basic, settings: MathSettings, in_units: bool) -> list[Basic]:
    variants = [expr]
    if side.percent and settings.percent_equals_fraction and isinstance(expr, sympy.Expr):
        variants.append(expr / 100)
    if (
        side.degrees
        and not in_units
        and isinstance(expr, sympy.Expr)
        and isinstance(other, Basic)
        and other.has(sympy.pi)
    ):
        variants.append(expr * sympy.pi / 180)
    return variants


def _evaluated(expr: Basic | MatrixBase) -> Basic | MatrixBase:
    """latex2sympy keeps `2^{99}` and sums of matrices unevaluated; callers ran `too_costly` first."""
    try:
        return expr.as_explicit() if isinstance(expr, MatrixExpr) else expr.doit()
    except Exception:
        return expr


# ---------------------------------------------------------------- multiple choice


def _same_choice(ref: Prepared, ans: Prepared, settings: MathSettings) -> Verdict:
    """A choice's letter matches its letter, its value the value, both both: `B`, `7` and `(B) 7` for `(B) 7`."""
    ref_letter = ref.choice.letter if ref.choice else bare_letter(ref.text)
    ans_letter = ans.choice.letter if ans.choice else bare_letter(ans.text)
    if ref_letter and ans_letter and ref_letter != ans_letter:
        return Verdict(False, "choice", "not equivalent (another choice)")
    ref_value = ref.choice.content if ref.choice else None if ref_letter else ref.text
    ans_value = ans.choice.content if ans.choice else None if ans_letter else ans.text
    if ref_value and ans_value:
        return equivalent(ans_value, ref_value, settings)
    if ref_letter and ans_letter:
        return Verdict(True, "choice")
    return Verdict(False, "choice", "not equivalent (a choice's letter against a value)")


# ---------------------------------------------------------------- ratios


def _same_ratio(ref: Prepared, ans: Prepared, settings: MathSettings) -> Verdict:
    """Ratios of three terms or more: the same number of terms, in order, up to a common positive factor."""
    if ref.ratio is None or ans.ratio is None or len(ref.ratio) != len(ans.ratio):
        return Verdict(False, "ratio", "not equivalent (a ratio of other terms)")
    numbers = [plain_number(term) for term in ref.ratio + ans.ratio]
    if None not in numbers:
        values = [number.value for number in numbers if number is not None]
        same = _proportional(values[: len(ref.ratio)], values[len(ref.ratio) :])
        return Verdict(True, "ratio") if same else Verdict(False, "ratio", "not equivalent")
    ref_terms = [parse_answer(term, settings.ignore_units) for term in ref.ratio]
    ans_terms = [parse_answer(term, settings.ignore_units) for term in ans.ratio]
    if not all(isinstance(term, sympy.Expr) for term in ref_terms + ans_terms):
        return Verdict(False, "ratio", "not equivalent (a term that is no value)")
    if any(too_costly(term) for term in ref_terms + ans_terms):
        raise NotComputed("a ratio's terms are too large to compare")
    comparer = _Comparer(settings, ref, ans)
    pivot = next((i for i, term in enumerate(ref_terms) if term != 0), 0)
    scale = ref_terms[pivot] / ans_terms[pivot] if ans_terms[pivot] != 0 else sympy.nan
    if scale.is_positive is not True:
        return Verdict(False, "ratio", "not equivalent")
    same = all(comparer.same(r, scale * a) for r, a in zip(ref_terms, ans_terms, strict=True))
    return Verdict(True, "ratio") if same else Verdict(False, "ratio", "not equivalent")


def _proportional(ref: list[Fraction], ans: list[Fraction]) -> bool:
    """Is `ans` a positive multiple of `ref`, term by term?"""
    pivot = next((i for i, term in enumerate(ref) if term), 0)
    if not ans[pivot] or ref[pivot] / ans[pivot] < 0:
        return False
    scale = ref[pivot] / ans[pivot]
    return all(r == scale * a for r, a in zip(ref, ans, strict=True))


# ---------------------------------------------------------------- beyond the symbolic path

_INTEGER = re.compile(r"[+-]?\d+")
_MATRIX = re.compile(
    r"(?:\\left\s*[(\[]\s*)?\\begin\{(?P<env>[pbB]?matrix|array)\}(?:\{[^{}]*\})?(?P<body>.*)"
    r"\\end\{(?P=env)\}(?:\s*\\right\s*[)\]])?",
    re.DOTALL,
)
_ROW_END = re.compile(r"\\\\(?:\[[^\]]*\])?|\\hline")


def _beyond_symbolic(ref: Prepared, ans: Prepared, settings: MathSettings) -> Verdict:
    """A side longer than the symbolic path reads: integers of any length and matrices entry by entry decide;
    else an answer far longer than its reference is wrong, and anything else is not computed."""
    ref_integer, ans_integer = _integer_digits(ref.text), _integer_digits(ans.text)
    if ref_integer is not None and ans_integer is not None:
        return Verdict(True, "exact") if ref_integer == ans_integer else Verdict(False, "numeric", "not equivalent")
    ref_rows, ans_rows = _matrix_rows(ref.text), _matrix_rows(ans.text)
    if ref_rows is not None and ans_rows is not None:
        return _same_entries(ref_rows, ans_rows, settings)
    if ans.oversized and len(ans.text) > FAR_BEYOND * len(ref.text):
        return Verdict(
            False, "guard", f"answer too long ({len(ans.text):,} characters, the reference {len(ref.text):,})"
        )
    name, side = ("answer", ans) if ans.oversized else ("reference", ref)
    raise NotComputed(
        f"the {name} is {len(side.text):,} characters, more than the {MAX_ANSWER_CHARS:,} the symbolic "
        "comparison reads, and no exact comparison decides it"
    )


def _integer_digits(text: str) -> str | None:
    """The digits of an integer of any length, sign first and without leading zeros; None for anything else."""
    if not _INTEGER.fullmatch(text):
        return None
    digits = text.lstrip("+-").lstrip("0") or "0"
    return "-" + digits if text.startswith("-") and digits != "0" else digits


def _matrix_rows(text: str) -> list[list[str]] | None:
    """The entries of a matrix written out (`\\begin{pmatrix} 1 & 2 \\\\ 3 & 4 \\end{pmatrix}`), row by row."""
    matrix = _MATRIX.fullmatch(text)
    if matrix is None or "\\begin" in matrix["body"]:
        return None
    rows = [row.split("&") for row in _ROW_END.split(matrix["body"]) if row.strip()]
    return rows if rows and all(len(row) == len(rows[0]) for row in rows) else None


def _same_entries(ref: list[list[str]], ans: list[list[str]], settings: MathSettings) -> Verdict:
    if (len(ref), len(ref[0])) != (len(ans), len(ans[0])):
        return Verdict(
            False, "matrix", f"not equivalent ({len(ans)}x{len(ans[0])}, the reference {len(ref)}x{len(ref[0])})"
        )
    for i, (ref_row, ans_row) in enumerate(zip(ref, ans, strict=True)):
        for j, (ref_entry, ans_entry) in enumerate(zip(ref_row, ans_row, strict=True)):
            verdict = equivalent(ans_entry.strip(), ref_entry.strip(), settings)
            if not verdict.equal:
                return Verdict(False, "matrix", f"entry ({i + 1}, {j + 1}): {verdict.reason}")
    return Verdict(True, "matrix")


# ---------------------------------------------------------------- guards


def too_costly(expr: Basic | MatrixBase) -> str | None:
    """Why evaluating `expr` could take forever (exponent towers, huge powers), or None."""
    if not isinstance(expr, Basic):
        expr = sympy.ImmutableMatrix(expr) if isinstance(expr, MatrixBase) else expr
    for count, node in enumerate(sympy.preorder_traversal(expr)):
        if count > MAX_NODES:
            return "too large to compare"
        if isinstance(node, sympy.Pow | sympy.factorial | sympy.binomial | sympy.gamma) and _bits(node) > MAX_BITS:
            return "too large to evaluate"
        # (x+1)^{10^6} would expand forever
        symbolic_power = isinstance(node, sympy.Pow) and not node.base.is_number and node.exp.is_number
        if symbolic_power and _magnitude(node.exp) > MAX_SYMBOLIC_POWER:
            return "too large to evaluate"
        if isinstance(node, sympy.Sum | sympy.Product) and _many_terms(node):
            return "too large to evaluate"
        if isinstance(node, sympy.Integral) and _hard_integrand(node):
            return "too hard to integrate"
    return None


def _many_terms(node: sympy.Sum | sympy.Product) -> bool:
    """A sum up to 10^100, or of 10,000 terms k^k, would be added up term by term for minutes.

    Bounds and terms are estimated, never evaluated: the work is the number of terms times
    the bits of the largest one (`_series_size`).
    """
    bounds = (bound for _, lo, hi in node.limits if lo.is_number and hi.is_number for bound in (lo, hi))
    if any(_magnitude(bound) > MAX_SUMMED_TERMS for bound in bounds):
        return True
    terms, term_bits = _series_size(node)
    return terms * term_bits > MAX_SERIES_BITS


def _hard_integrand(node: sympy.Integral) -> bool:
    """x^x, x^{x^x} or x^{1000} under an integral send sympy's integrator into a long search."""
    variables = node.variables
    for power in node.function.atoms(sympy.Pow):
        if power.exp.is_number:
            if _magnitude(power.exp) > MAX_INTEGRATED_POWER:
                return True
        elif power.base.has(*variables) and power.exp.has(*variables):
            return True
    return False


def _series_size(node: sympy.Sum | sympy.Product) -> tuple[float, float]:
    """(number of terms, bits of the largest term) of a sum or product with numeric bounds, else (1, 0).

    The largest term is taken at the bound of larger magnitude (k^k, k!, 2^{-k} grow with |k|);
    a symbol counts one bit, so x^{999} counts as a 999-bit term.
    """
    terms: float = 1.0
    extremes: dict[Basic, Basic] = {}
    for var, *limits in reversed(node.limits):  # outermost first: an inner bound may use an outer index
        bounds = [bound.xreplace(extremes) for bound in limits]
        if len(bounds) != 2 or not all(bound.is_number for bound in bounds):
            return 1.0, 0.0
        lo, hi = (_magnitude(bound) for bound in bounds)
        terms *= lo + hi + 1  # an upper estimate of |hi - lo| + 1
        extremes[var] = max(bounds, key=_magnitude)
    with sympy.evaluate(False):  # k^k at k = 10^4 stays a Pow: _bits estimates it, never computes it
        largest = node.function.xreplace(extremes)
    return terms, _bits(largest)


def _bits(expr: Basic) -> float:
    """An upper estimate of log2|expr| for a numeric expression, computed without evaluating it."""
    if isinstance(expr, sympy.Integer):
        return float(int(expr).bit_length())
    if isinstance(expr, sympy.Rational):
        return float(max(int(expr.p).bit_length(), int(expr.q).bit_length()))
    if isinstance(expr, Float):
        return float(max(abs(expr._mpf_[2]) + expr._mpf_[3], 1)) if expr._mpf_[1] else 0.0
    if isinstance(expr, sympy.Pow):
        return _magnitude(expr.exp) * max(_bits(expr.base), 1.0)
    if isinstance(expr, sympy.factorial | sympy.gamma):
        size = _magnitude(expr.args[0])
        return size * math.log2(size) if size > 1 else 1.0
    if isinstance(expr, sympy.binomial):
        return _magnitude(expr.args[0])
    if isinstance(expr, sympy.Sum | sympy.Product):
        terms, term_bits = _series_size(expr)
        return terms * term_bits if isinstance(expr, sympy.Product) else term_bits + math.log2(terms)
    if not expr.args:
        return 1.0
    return sum(_bits(arg) for arg in expr.args) + 1.0


def _magnitude(expr: Basic) -> float:
    """An upper estimate of |expr|, infinite when it would not fit a float."""
    if isinstance(expr, sympy.Rational) and _bits(expr) < 1000:
        return float(abs(expr))
    bits = _bits(expr)
    return math.inf if bits > 1000 else 2.0**bits


# ---------------------------------------------------------------- identities modulo two primes

# Evaluating modulo P*Q is evaluating modulo both primes at once. A nonzero rational function
# vanishes there only if P*Q divides every coefficient of its numerator, or the point is one of
# its at most `degree` roots modulo P (Schwartz-Zippel: probability <= degree / 2^61 a point).
_PRIMES = (2**61 - 1, 2**62 - 57)
_MODULUS = _PRIMES[0] * _PRIMES[1]
_IDENTITY_POINTS = 3  # random points that must agree
_MAX_POLES = 3  # points dropped because a denominator vanished there, before giving up
_MAX_DEGREE = 2**32  # past this a point's false agreement is no longer negligible (2^-29)
_MAX_STEPS = 400_000  # nodes evaluated in all (about 1 s): 3 points of a sum of 10,000 terms of 13 nodes
_MAX_EXPONENT_BITS = 4096
_FACTORIALS = [1]  # n! modulo _MODULUS, extended on demand up to MAX_SUMMED_TERMS

# A value modulo _MODULUS with degree bounds of its numerator and denominator in the unknowns.
Residue = tuple[int, int, int]


class _Outside(Exception):
    """Not a rational function with exact coefficients (floats, k/2 as an exponent, ...): undecided."""


class _Pole(Exception):
    """A denominator vanished at this point modulo a prime: another point is needed."""


def _identity(ref: sympy.Expr, ans: sympy.Expr) -> bool | None:
    """Are `ref` and `ans` the same rational function? Decided by evaluation at random points.

    Both sides are evaluated exactly modulo two 61-bit primes, symbols at random residues, sums
    and products term by term, determinants by elimination: (x^{1000}-1)/(x-1) against
    sum_{k=0}^{999} x^k takes milliseconds where expanding takes sympy minutes. A subterm that
    is not rational in the symbols (sin x, pi, sqrt 2, floor x) is an unknown with a random
    value of its own: agreement then still proves the identity (it holds whatever the unknowns
    are), while disagreement proves nothing (sin^2 x + cos^2 x = 1), so that gives None, as does
    anything outside the fragment. Points are fixed: a grade must not change between runs.
    """
    rng = random.Random(_MODULUS)
    agreed = poles = 0
    steps = _MAX_STEPS
    while agreed < _IDENTITY_POINTS:
        point = _PointEvaluator(rng, steps)
        try:
            ref_value, ref_num, ref_den = point.evaluate(ref)
            ans_value, ans_num, ans_den = point.evaluate(ans)
        except _Pole:
            poles += 1
            if poles > _MAX_POLES:
                return None
            continue
        except _Outside:
            return None
        steps = point.steps
        if ref_value != ans_value:
            return None if point.unknowns else False
        if max(ref_num + ans_den, ans_num + ref_den) > _MAX_DEGREE:
            return None  # the numerator of ref - ans may have too many roots to trust a point
        if not point.randomised:
            return True  # constants: every point gives the same values
        agreed += 1
    return True


class _PointEvaluator:
    """Exact values modulo _MODULUS at one random point; each symbol and unknown gets a random residue."""

    def __init__(self, rng: random.Random, steps: int) -> None:
        self._rng = rng
        self._values: dict[Basic | str, int] = {}
        self.steps = steps  # nodes this point may still evaluate
        self.unknowns = False  # whether a subterm that is not rational in the symbols was taken as unknown

    @property
    def randomised(self) -> bool:
        return bool(self._values)

    def evaluate(self, expr: Basic) -> Residue:
        return self._value(expr, {})

    def _value(self, expr: Basic, bound: dict[Basic, int]) -> Residue:
        """`bound` holds the indices of the sums and products around `expr`."""
        self.steps -= 1
        if self.steps < 0:
            raise _Outside
        # sympy's is_Add-style flags: class attributes, much faster than isinstance in this hot loop
        if expr.is_Rational:
            return _fraction(int(expr.p), int(expr.q)), 0, 0
        if expr.is_Symbol:
            index = bound.get(expr)
            # By name: a matrix's entries may carry other assumptions than the same letters elsewhere.
            return (index % _MODULUS, 0, 0) if index is not None else (self._random(expr.name), 1, 0)
        if expr.is_Add or expr.is_Mul:
            combine = _add if expr.is_Add else _mul
            args = iter(expr.args)
            result = self._value(next(args), bound)
            for arg in args:
                result = combine(result, self._value(arg, bound))
            return result
        if expr.is_Pow:
            exponent = _integer(expr.exp, bound)
            if exponent is not None:
                return _power(self._value(expr.base, bound), exponent)
        elif isinstance(expr, sympy.Sum | sympy.Product):
            limits = list(expr.limits)
            outer = limits[-1][1:]
            if all(len(limit) == 3 for limit in limits) and None not in (_integer(b, bound) for b in outer):
                return self._series(expr, limits, bound)
        elif isinstance(expr, sympy.Determinant) and isinstance(expr.arg, MatrixBase):
            return self._determinant(expr.arg, bound)
        elif isinstance(expr, sympy.factorial | sympy.binomial):
            args = [_integer(arg, bound) for arg in expr.args]
            if None not in args:
                return _combinatorial(args), 0, 0
        return self._unknown(expr, bound)

    def _unknown(self, expr: Basic, bound: dict[Basic, int]) -> Residue:
        """A subterm taken as an unknown of its own (the same subterm, the same value)."""
        if not isinstance(expr, sympy.Expr) or isinstance(expr, Float) or expr.has(*_NOT_FINITE):
            raise _Outside
        if bound and expr.free_symbols & bound.keys():
            raise _Outside  # sin(k x) inside a sum over k: one unknown per k would be needed
        self.unknowns = True
        return self._random(expr), 1, 0

    def _random(self, unknown: Basic | str) -> int:
        value = self._values.get(unknown)
        if value is None:
            value = self._values[unknown] = self._rng.randrange(_MODULUS)
        return value

    def _series(self, expr: sympy.Sum | sympy.Product, limits: list[tuple], bound: dict[Basic, int]) -> Residue:
        """A sum or product term by term; the last limit is the outermost (sympy's order)."""
        *inner, (index, lo, hi) = limits
        start, stop = _integer(lo, bound), _integer(hi, bound)
        if start is None or stop is None or stop < start - 1:
            raise _Outside  # symbolic inner bounds; reversed bounds follow Karr's convention
        sum_ = isinstance(expr, sympy.Sum)
        result: Residue = (0, 0, 0) if sum_ else (1, 0, 0)
        for k in range(start, stop + 1):
            inside = {**bound, index: k}
            term = self._series(expr, inner, inside) if inner else self._value(expr.function, inside)
            result = _add(result, term) if sum_ else _mul(result, term)
        return result

    def _determinant(self, matrix: MatrixBase, bound: dict[Basic, int]) -> Residue:
        rows, cols = matrix.shape
        if rows != cols:
            raise _Outside
        entries = [[self._value(matrix[i, j], bound) for j in range(cols)] for i in range(rows)]
        # Leibniz: each product takes one entry a row, over all denominators.
        den = sum(d for row in entries for _, _, d in row)
        num = sum(max(n for _, n, _ in row) for row in entries) + den
        return _checked((_det([[value for value, _, _ in row] for row in entries]), num, den))


_NOT_FINITE = (sympy.oo, -sympy.oo, sympy.zoo, sympy.nan)
# What sympy would expand or add up to compare exactly: with these, `_identity` has the last word.
_EXPANDED = (sympy.Sum, sympy.Product, sympy.Determinant)


def _fraction(numerator: int, denominator: int) -> int:
    try:
        return numerator * pow(denominator, -1, _MODULUS) % _MODULUS
    except ValueError:  # a denominator divisible by one of the primes: no residue represents it
        raise _Outside from None


def _add(a: Residue, b: Residue) -> Residue:
    return _checked(((a[0] + b[0]) % _MODULUS, max(a[1] + b[2], b[1] + a[2]), a[2] + b[2]))


def _mul(a: Residue, b: Residue) -> Residue:
    return _checked((a[0] * b[0] % _MODULUS, a[1] + b[1], a[2] + b[2]))


def _power(base: Residue, exponent: int) -> Residue:
    value, num, den = base
    if exponent < 0:
        num, den = den, num
    try:
        return _checked((pow(value, exponent, _MODULUS), num * abs(exponent), den * abs(exponent)))
    except ValueError:  # 1/0 modulo a prime
        raise _Pole from None


def _checked(residue: Residue) -> Residue:
    if residue[1] > _MAX_DEGREE or residue[2] > _MAX_DEGREE:
        raise _Outside
    return residue


def _integer(expr: Basic, bound: dict[Basic, int]) -> int | None:
    """The exact integer value of an exponent or bound built from integers and indices, else None."""
    if isinstance(expr, sympy.Integer):
        return int(expr)
    if isinstance(expr, Symbol):
        return bound.get(expr)
    if isinstance(expr, sympy.Add | sympy.Mul | sympy.Pow):
        args = [_integer(arg, bound) for arg in expr.args]
        if None in args:
            return None
        if isinstance(expr, sympy.Pow):
            base, exponent = args
            if exponent < 0 or exponent * max(base.bit_length(), 1) > _MAX_EXPONENT_BITS:
                return None
            return base**exponent
        result = sum(args) if isinstance(expr, sympy.Add) else math.prod(args)
        return result if result.bit_length() <= _MAX_EXPONENT_BITS else None
    return None


def _combinatorial(args: list[int]) -> int:
    """n! or binomial(n, k) modulo _MODULUS for integers up to MAX_SUMMED_TERMS (both primes exceed n)."""
    n = args[0]
    if not 0 <= n <= MAX_SUMMED_TERMS:
        raise _Outside
    while len(_FACTORIALS) <= n:
        _FACTORIALS.append(_FACTORIALS[-1] * len(_FACTORIALS) % _MODULUS)
    if len(args) == 1:
        return _FACTORIALS[n]
    k = args[1]
    if not 0 <= k <= n:
        return 0
    return _FACTORIALS[n] * pow(_FACTORIALS[k] * _FACTORIALS[n - k], -1, _MODULUS) % _MODULUS


def _det(rows: list[list[int]]) -> int:
    """Determinant modulo _MODULUS by Gaussian elimination."""
    rows = [list(row) for row in rows]
    det = 1
    for col in range(len(rows)):
        pivot = next((r for r in range(col, len(rows)) if rows[r][col]), None)
        if pivot is None:
            return 0
        if pivot != col:
            rows[col], rows[pivot] = rows[pivot], rows[col]
            det = -det
        try:
            inverse = pow(rows[col][col], -1, _MODULUS)
        except ValueError:  # zero modulo one prime only
            raise _Pole from None
        det = det * rows[col][col] % _MODULUS
        for r in range(col + 1, len(rows)):
            factor = rows[r][col] * inverse % _MODULUS
            if factor:
                rows[r] = [(a - factor * b) % _MODULUS for a, b in zip(rows[r], rows[col], strict=True)]
    return det % _MODULUS


# ---------------------------------------------------------------- structural comparison


class _Comparer:
    """Compares parsed reference and answer; `same` returns the deciding method or None."""

    def __init__(self, settings: MathSettings, ref: Prepared, ans: Prepared):
        self.rel_tol = settings.rel_tol
        self.decimals = {**ref.decimals, **ans.decimals}
        self.ordered = ans.ordered
        self.parameters = ref.parameters | ans.parameters

    def same(self, ref: Basic | MatrixBase, ans: Basic | MatrixBase) -> str | None:
        if _undefined(ref) or _undefined(ans):
            return None  # 12:00 parses as 12/0; only an identical string may match it
        ref, ans = _unwrap_assignments(ref, ans)
        ref, ans = _explicit(ref), _explicit(ans)
        if isinstance(ref, MatrixBase) or isinstance(ans, MatrixBase):
            return self._same_matrix(ref, ans)
        if is_relation(ref) or is_relation(ans):
            return self._same_relation(ref, ans)
        if isinstance(ref, Set | Tuple) or isinstance(ans, Set | Tuple):
            return self._same_collection(ref, ans)
        if (_is_text(ref) or _is_text(ans)) and (ref == ans or sympy_compare_symbols(ref, ans)):
            return "text"
        if isinstance(ref, sympy.Expr) and isinstance(ans, sympy.Expr):
            return self._same_value(ref, ans)
        return "exact" if ref == ans else None

    # -- matrices

    def _same_matrix(self, ref: Basic | MatrixBase, ans: Basic | MatrixBase) -> str | None:
        ref_items, ans_items = _entries(ref), _entries(ans)
        if ref_items is None or ans_items is None or ref_items[0] != ans_items[0]:
            return None
        pairs = zip(ref_items[1], ans_items[1], strict=True)
        return "matrix" if all(self.same(r, a) for r, a in pairs) else None

    # -- relations

    def _same_relation(self, ref: Basic, ans: Basic) -> str | None:
        if isinstance(ref, And) and isinstance(ans, And):
            ref_args, ans_args = ref._unsorted_args, ans._unsorted_args
            # `5 > y > 2` is `2 < y < 5` read from the other end
            for ordered in (ans_args, ans_args[::-1]):
                if len(ref_args) == len(ordered) and all(
                    self._same_relation(r, a) for r, a in zip(ref_args, ordered, strict=True)
                ):
                    return "relation"
        if isinstance(ref, Set) or isinstance(ans, Set):
            return self._relation_as_set(ref, ans)
        if not (isinstance(ref, Relational) and isinstance(ans, Relational)):
            return None
        if ref == ans:
            return "exact"
        if isinstance(ref, Eq) and isinstance(ans, Eq):
            return self._same_equation(ref, ans)
        return "relation" if _same_inequality(ref, ans) else None

    def _relation_as_set(self, ref: Basic, ans: Basic) -> str | None:
        """`-2 <= x <= 7` is the interval [-2, 7], whichever side writes which."""
        try:
            ref = solution_set(unwrap_fcs(ref)) if is_relation(ref) else ref
            ans = solution_set(unwrap_fcs(ans)) if is_relation(ans) else ans
        except Exception:
            return None
        return self._same_collection(ref, ans)

    def _same_equation(self, ref: Eq, ans: Eq) -> str | None:
        ans = _renamed_arguments(ref.lhs, ans)
        if (ref.lhs == ans.lhs and self.same(ref.rhs, ans.rhs)) or (ref.lhs == ans.rhs and self.same(ref.rhs, ans.lhs)):
            return "relation"
        if all(isinstance(side, sympy.Expr) for side in (*ref.args, *ans.args)):
            return "relation" if _constant_ratio(ref.lhs - ref.rhs, ans.lhs - ans.rhs) is not None else None
        return None

    # -- sets, tuples, intervals

    def _same_collection(self, ref: Basic, ans: Basic) -> str | None:
        ref, ans = _as_collection(ref, ans), _as_collection(ans, ref)
        if self.ordered and isinstance(ref, SympyFiniteSet) and isinstance(ans, SympyFiniteSet):
            # `Min: 1, Max: 3` names which is which
            return "tuple" if self._in_order(_written(ref), _written(ans)) else None
        if ref == ans:
            return _kind(ref)
        if isinstance(ref, Interval) and isinstance(ans, Interval):
            same_ends = self.same(ref.start, ans.start) and self.same(ref.end, ans.end)
            return (
                "interval"
                if same_ends and ref.left_open == ans.left_open and ref.right_open == ans.right_open
                else None
            )
        if isinstance(ref, Union) and isinstance(ans, Union):
            return "set" if self._matched(list(ref.args), list(ans.args)) else None
        if isinstance(ref, SympyFiniteSet) and isinstance(ans, SympyFiniteSet):
            return "set" if self._matched(_written(ref), _written(ans)) else None
        if isinstance(ref, Tuple | SympyFiniteSet) and isinstance(ans, Tuple | SympyFiniteSet):
            # A tuple keeps its order; against a set, the order the set was written in.
            if isinstance(ref, SympyFiniteSet):
                return "set" if self._matched(list(ref.args), list(ans.args)) else None
            return "tuple" if self._in_order(list(ref.args), _written(ans)) else None
        return _same_set(ref, ans)

    def _in_order(self, ref: list[Basic], ans: list[Basic]) -> bool:
        return len(ref) == len(ans) and all(self.same(r, a) for r, a in zip(ref, ans, strict=True))

    def _matched(self, ref: list[Basic], ans: list[Basic]) -> bool:
        """A perfect matching between the elements (order-insensitive), by Kuhn's augmenting paths."""
        if len(ref) != len(ans):
            return False
        if Counter(ref) == Counter(ans):
            return True
        if len(ref) > MAX_MATCHED_ELEMENTS:
            return self._in_order(sorted(ref, key=sympy.default_sort_key), sorted(ans, key=sympy.default_sort_key))
        equal = [[bool(self.same(r, a)) for a in ans] for r in ref]
        owner: dict[int, int] = {}

        def augment(i: int, seen: set[int]) -> bool:
            for j, ok in enumerate(equal[i]):
                if ok and j not in seen:
                    seen.add(j)
                    if j not in owner or augment(owner[j], seen):
                        owner[j] = i
                        return True
            return False

        return all(augment(i, set()) for i in range(len(ref)))

    # -- values

    def _same_value(self, ref: sympy.Expr, ans: sympy.Expr) -> str | None:
        if ref == ans:
            return "exact"
        if _euler_form(ref) or _euler_form(ans):  # `2e^{i\\pi/3}`: i is the imaginary unit on both sides
            ref, ans = _imaginary_unit(ref), _imaginary_unit(ans)
        parameters = self._family_parameters(ref, ans)
        if parameters is not None:
            return self._same_family(ref, ans, *parameters)
        if not (ref.has(Float) or ans.has(Float)):  # decimals have rules of their own, below
            identity = _identity(ref, ans)
            if identity is False:
                return None
            # Plain constants are compared exactly below; what needs expanding or adding up is decided here.
            if identity and any(side.free_symbols or side.has(*_EXPANDED) for side in (ref, ans)):
                return "identity"
        if _antiderivative_differs(ref, ans) or _antiderivative_differs(ans, ref):
            return None
        ref, ans = _evaluated(ref), _evaluated(ans)
        ref_decimal, ans_decimal = self._decimal(ref), self._decimal(ans)
        if ref_decimal is not None and ans_decimal is not None:
            return compare_numbers(ref_decimal, ans_decimal)
        for approx, other in ((ans_decimal, ref), (ref_decimal, ans)):
            if approx is not None and other.is_number and not other.has(Float):
                if approx.exponent is None:  # `1000.0` is exactly 1000
                    return _same_constant(_rational(approx.value), other)
                digits = REFERENCE_MIN_DIGITS if approx is ref_decimal else MIN_DIGITS
                return "numeric" if _rounds_to(other, approx, digits) else None
        if ref.has(Float) or ans.has(Float):
            return "numeric" if self._close(ref, ans) else None
        if ref.is_number and ans.is_number:
            return _same_constant(ref, ans)
        return _same_function(ref, ans)

    # -- solution families

    def _family_parameters(self, ref: sympy.Expr, ans: sympy.Expr) -> tuple[Symbol, Symbol] | None:
        """The integer parameters of two solution families written with different names, or None.

        Both names must be parameters: declared integers (`k \\in \\mathbb{Z}`) on either side, or
        customary ones (k, n, m, ...) that step a value by a multiple of pi (`\\frac{\\pi}{6}+k\\pi`);
        `2\\pi r` is a length, not the family `2\\pi k`.
        """
        only_ref, only_ans = ref.free_symbols - ans.free_symbols, ans.free_symbols - ref.free_symbols
        if len(only_ref) != 1 or len(only_ans) != 1:
            return None
        (p,), (q,) = only_ref, only_ans
        if all(s.name in self.parameters or _steps_by_pi(side, s) for s, side in ((p, ref), (q, ans))):
            return p, q
        return None

    def _same_family(self, ref: sympy.Expr, ans: sympy.Expr, p: Symbol, q: Symbol) -> str | None:
        """{a + pT} and {b + qT'}, p and q over the integers, are one set when T' = ±T and (a - b)/T is an integer."""
        ref_step, ans_step = _step(ref, p), _step(ans, q)
        if ref_step is None or ans_step is None:
            return "family" if self.same(ref, ans.xreplace({q: p})) else None
        if sympy.simplify(ref_step / ans_step) not in (1, -1):
            return None
        shift = sympy.nsimplify(sympy.simplify((ref.xreplace({p: 0}) - ans.xreplace({q: 0})) / ref_step))
        return "family" if shift.is_Integer else None

    def _decimal(self, expr: sympy.Expr) -> Num | None:
        """The decimal literal a Float leaf was written as, on either side."""
        if not isinstance(expr, Float):
            return None
        number = self.decimals.get(abs(float(expr)))
        if number is None:
            return None
        return number if expr >= 0 else number.scaled(Fraction(-1), 0)

    def _close(self, ref: sympy.Expr, ans: sympy.Expr) -> bool:
        diff = ref - ans
        if not diff.is_number:
            return _same_function(ref, ans) is not None
        scale = max(abs(sympy.N(ref, 30)), abs(sympy.N(ans, 30)))
        error = abs(sympy.N(diff, 30))
        return bool(error <= self.rel_tol * scale) if error.is_real and scale.is_real else False


def _euler_form(expr: sympy.Expr) -> bool:
    """Is there an exponential with i in its exponent (`r e^{i\\theta}`)?"""
    return any(symbol.name == "i" for power in expr.atoms(sympy.exp) for symbol in power.args[0].free_symbols)


def _imaginary_unit(expr: sympy.Expr) -> sympy.Expr:
    return expr.xreplace({symbol: sympy.I for symbol in expr.free_symbols if symbol.name == "i"})


def _rational(value: Fraction) -> Rational:
    return Rational(value.numerator, value.denominator)


def _rounds_to(value: sympy.Expr, approx: Num, min_digits: int) -> bool:
    """`rounds_to` for an exact sympy constant, irrational ones evaluated to 30 digits."""
    if isinstance(value, Rational):
        return rounds_to(Fraction(int(value.p), int(value.q)), approx, min_digits)
    assert approx.exponent is not None  # exact decimals are compared as Rationals
    error = abs(sympy.N(value - _rational(approx.value), 30))
    return bool(error.is_finite) and approx.digits >= min_digits and bool(error * 2 <= Rational(10) ** approx.exponent)


def _explicit(expr: Basic | MatrixBase) -> Basic | MatrixBase:
    return _evaluated(expr) if isinstance(expr, MatrixExpr) else expr


def _undefined(expr: Basic | MatrixBase) -> bool:
    return expr in (sympy.nan, sympy.zoo) if isinstance(expr, Basic) else False


def _is_text(expr: Basic | MatrixBase) -> bool:
    """`\\text{Evelyn}` parses to a Symbol; `Evelyn` to a product of letters."""
    return isinstance(expr, Symbol) or (
        isinstance(expr, sympy.Mul) and all(isinstance(a, Symbol) or a == sympy.E for a in expr.args)
    )


def _unwrap_assignments(ref: Basic, ans: Basic) -> tuple[Basic, Basic]:
    """math-verify's rules: `x = 1` against `1` compares 1 with 1; a chain `x = a = b` keeps `x = b`."""
    ref_assign, ans_assign = is_assignment_relation(ref), is_assignment_relation(ans)
    if ref_assign:
        ref = Eq(take_first_relation(ref).lhs, take_last_relation(ref).rhs, evaluate=False)
    if ans_assign:
        ans = Eq(take_first_relation(ans).lhs, take_last_relation(ans).rhs, evaluate=False)
    if is_equation(ans) and not is_equation(ref):
        ans = take_last_relation(ans).rhs
    elif ref_assign and not is_equation(ans):
        ref = ref.rhs
    return ref, ans


def _entries(expr: Basic | MatrixBase) -> tuple[tuple[int, ...], list[Basic]] | None:
    """(shape, entries) with vectors flattened, so a column, a row and a tuple `(1, 2)` compare alike."""
    if isinstance(expr, Tuple):
        return (len(expr),), list(expr.args)
    if isinstance(expr, Interval) and expr.left_open and expr.right_open:
        return (2,), [expr.start, expr.end]
    if not isinstance(expr, MatrixBase):
        return None
    rows, cols = expr.shape
    if 1 in (rows, cols):
        return (rows * cols,), list(expr)
    return (rows, cols), list(expr)


def _as_collection(expr: Basic, other: Basic) -> Basic:
    """An open interval (a, b) may be the pair (a, b); a lone value is a one-element set."""
    if isinstance(expr, Interval) and expr.left_open and expr.right_open and isinstance(other, Tuple | SympyFiniteSet):
        return Tuple(expr.start, expr.end) if len(other.args) == 2 else expr
    if not isinstance(expr, Set | Tuple):
        return SympyFiniteSet(expr) if isinstance(other, SympyFiniteSet) else Tuple(expr)
    return expr


def _describe(expr: Basic | MatrixBase) -> str:
    """The comparison a reference calls for, named in the details of a failed grade."""
    if isinstance(expr, MatrixBase):
        return "matrix"
    if is_relation(expr):
        return "relation"
    return _kind(expr) if isinstance(expr, Set | Tuple) else "symbolic"


def _kind(collection: Basic) -> str:
    return "interval" if isinstance(collection, Interval) else "tuple" if isinstance(collection, Tuple) else "set"


def _written(collection: Basic) -> list[Basic]:
    return list(getattr(collection, "_unsorted_args", collection.args))


def _same_set(ref: Basic, ans: Basic) -> str | None:
    if isinstance(ref, Set) and isinstance(ans, Set):
        try:
            if ref.symmetric_difference(ans).is_empty:
                return "set"
        except Exception:
            return None
    return None


def _same_inequality(ref: Relational, ans: Relational) -> bool:
    """a < b, b > a and -a > -b are one inequality; compare `lhs - rhs` of the `<` forms up to a factor."""
    ref_form, ans_form = _less_form(ref), _less_form(ans)
    if ref_form is None or ans_form is None or ref_form[1] != ans_form[1]:
        return False
    ratio = _constant_ratio(ref_form[0], ans_form[0])
    return ratio is not None and (ref_form[1] == "!=" or bool(ratio > 0))


def _less_form(rel: Relational) -> tuple[sympy.Expr, str] | None:
    kinds = {"<": ("<", 1), "<=": ("<=", 1), ">": ("<", -1), ">=": ("<=", -1), "!=": ("!=", 1)}
    if rel.rel_op not in kinds or not isinstance(rel.lhs, sympy.Expr) or not isinstance(rel.rhs, sympy.Expr):
        return None
    kind, sign = kinds[rel.rel_op]
    return sign * (rel.lhs - rel.rhs), kind


def _constant_ratio(a: sympy.Expr, b: sympy.Expr) -> sympy.Expr | None:
    """The nonzero constant c with a = c * b, or None."""
    if a == 0 or b == 0:
        return None
    ratio = sympy.cancel(sympy.together(a / b))
    if ratio.free_symbols or not ratio.is_number or ratio == 0 or _undefined(ratio):
        return None
    return ratio


def _same_constant(ref: sympy.Expr, ans: sympy.Expr) -> str | None:
    """Exact equality of two constant expressions: a precise numeric screen, then a proof."""
    diff = ref - ans
    if diff == 0:
        return "exact"
    if isinstance(diff, Rational):
        return None
    scale = max(abs(sympy.N(ref, 30)), abs(sympy.N(ans, 30)), sympy.Float(1e-300))
    error = abs(sympy.N(diff, 30))
    if not error.is_finite or error > scale * sympy.Float("1e-20"):
        return None
    simplified = sympy.simplify(diff)
    if simplified == 0:
        return "symbolic"
    if simplified.is_number and simplified.is_zero is False:
        return None
    # Not provable by simplify: accept only agreement to 100 significant digits.
    return "numeric" if abs(sympy.N(diff, 110)) <= scale * sympy.Float("1e-100") else None


def _same_function(ref: sympy.Expr, ans: sympy.Expr) -> str | None:
    """Identity of expressions in variables: random points decide quickly, simplify proves the rest."""
    diff = ref - ans
    if diff == 0:
        return "exact"
    if _differs_at_points(ref, ans):
        return None
    if _agrees_at_points(ref, ans):
        return "numeric identity"
    return "symbolic" if sympy.simplify(diff) == 0 else None


# Each symbol's sign at each point: every sign meets every other, so |x| = x or max(x, 0) = x fail somewhere.
_SIGN_PATTERNS = ((1, 1, 1), (-1, -1, -1), (1, -1, 1), (-1, 1, -1), (1, 1, -1))
_AGREEMENT_DIGITS = 50


def _agrees_at_points(ref: sympy.Expr, ans: sympy.Expr) -> bool:
    """Do the two agree to 35 significant digits at five points of every sign pattern, evaluated to 50?

    Exact identities of the fragment `_identity` covers are proven there; this decides the rest
    (radicals, trigonometry) in milliseconds where `simplify` may take seconds. Any point where
    either side is undefined or not a finite number leaves it undecided (False): simplify decides.
    """
    symbols = sorted((ref - ans).free_symbols, key=str)
    rng = random.Random(7 * len(symbols) + 1)  # fixed points: a grade must not change between runs
    for signs in _SIGN_PATTERNS:
        point = {
            s: signs[i % len(signs)] * Rational(rng.randint(1, 97), rng.randint(2, 13)) for i, s in enumerate(symbols)
        }
        try:
            ref_value = sympy.N(ref.xreplace(point), _AGREEMENT_DIGITS)
            ans_value = sympy.N(ans.xreplace(point), _AGREEMENT_DIGITS)
        except Exception:
            return False
        if not (ref_value.is_number and ans_value.is_number and ref_value.is_finite and ans_value.is_finite):
            return False
        scale = max(abs(ref_value), abs(ans_value), sympy.Float(1))
        if not abs(ref_value - ans_value) <= scale * sympy.Float("1e-35"):
            return False
    return True


_PARAMETER_NAMES = frozenset("knmjlt")


def _steps_by_pi(expr: sympy.Expr, parameter: Symbol) -> bool:
    """Is `expr` a + parameter * T with T a nonzero multiple of pi, and the name a customary integer one?"""
    step = _step(expr, parameter) if parameter.name in _PARAMETER_NAMES else None
    return step is not None and step.has(sympy.pi)


def _step(expr: sympy.Expr, parameter: Symbol) -> sympy.Expr | None:
    """T when `expr` is a + parameter * T with a and T constants, else None."""
    step = sympy.diff(expr, parameter)
    if step == 0 or not step.is_number or sympy.expand(expr - parameter * step).has(parameter):
        return None
    return step


def _renamed_arguments(ref_lhs: Basic, ans: Eq) -> Eq:
    """`f(z) = z` defines the function `f(x) = x` does: the answer's argument names become the reference's."""
    lhs = ans.lhs
    if not (isinstance(ref_lhs, AppliedUndef) and isinstance(lhs, AppliedUndef) and ref_lhs.func == lhs.func):
        return ans
    names, targets = lhs.args, ref_lhs.args
    distinct = len(set(names)) == len(names) == len(targets) == len(set(targets))
    if not distinct or not all(isinstance(arg, Symbol) for arg in (*names, *targets)):
        return ans
    if (ans.rhs.free_symbols - set(names)) & set(targets):
        return ans  # a reference argument name already means something else in the answer
    return ans.xreplace(dict(zip(names, targets, strict=True)))


def _differs_at_points(ref: sympy.Expr, ans: sympy.Expr) -> bool:
    """Do the two clearly differ at one of a few random points (20 digits, relative 1e-12)?"""
    diff = ref - ans
    symbols = sorted(diff.free_symbols, key=str)
    rng = random.Random(len(symbols))  # fixed points: a grade must not change between runs
    for _ in range(_SCREEN_POINTS):
        point = {s: Rational(rng.randint(-97, 97) or 1, rng.randint(1, 13)) for s in symbols}
        try:
            value = sympy.N(diff.xreplace(point), 20)
            scale = max(abs(sympy.N(ref.xreplace(point), 20)), sympy.Float(1))
        except Exception:
            return False
        if value.is_real and scale.is_real and abs(value) > scale * sympy.Float("1e-12"):
            return True
    return False


def _antiderivative_differs(integral: sympy.Expr, other: sympy.Expr) -> bool:
    """An indefinite integral of f is not `other` when other' differs from f at random points.

    sympy's integrator can search for minutes (x^{10} e^x sin x cos 3x); differentiating the
    other side takes milliseconds. Agreement proves nothing here (the constant, and sympy's
    choice of it), so it only ever rules an answer out; the integral is evaluated otherwise.
    """
    if not isinstance(integral, sympy.Integral) or other.has(sympy.Integral):
        return False
    if len(integral.limits) != 1 or len(integral.limits[0]) != 1:
        return False  # definite, or several variables
    variable = integral.limits[0][0]
    return _differs_at_points(integral.function, sympy.diff(other, variable))
