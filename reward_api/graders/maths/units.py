"""Units written after an answer's value: what quantity they measure and how large they are.

A unit written in the reference is part of the answer (`3 cm` is not `3 mm`): an answer in another
unit of the same quantity is right only when its value converts (`0.5 m` for `50 cm`), one in a
unit of another quantity or another currency never is. A side without a unit is in the question's
own unit. Unknown words (`12 apples`) are no unit: they are ignored, as before.

Sizes are exact (sympy Rationals, pi for degrees) in the quantity's base unit; `power` is that of a
length (`cm^2` is 2, a litre is a cubic decimetre). Currencies never convert into each other, nor do
the bases numerals are written in (`1010_2` is not `1010_3`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import sympy
from sympy import Rational


@dataclass(frozen=True)
class Unit:
    name: str
    quantities: frozenset[str]  # what it measures; several for an ambiguous sign (¥: yen or yuan)
    size: sympy.Expr  # in the quantity's base unit
    power: int = 1

    def raised(self, power: int) -> Unit:
        return Unit(f"{self.name}^{power}", self.quantities, self.size, self.power * power)


def _unit(name: str, quantity: str, size: sympy.Expr | int, power: int = 1) -> Unit:
    return Unit(name, frozenset(quantity.split("|")), sympy.sympify(size), power)


_LENGTHS = {
    "nm": ("nanometer", Rational(1, 10**9)),
    "mm": ("millimeter", Rational(1, 1000)),
    "cm": ("centimeter", Rational(1, 100)),
    "dm": ("decimeter", Rational(1, 10)),
    "m": ("meter", 1),
    "km": ("kilometer", 1000),
    "in": ("inch", Rational(254, 10000)),
    "ft": ("foot", Rational(3048, 10000)),
    "yd": ("yard", Rational(9144, 10000)),
    "mi": ("mile", Rational(1609344, 1000)),
}
_MASSES = {
    "mg": ("milligram", Rational(1, 1000)),
    "g": ("gram", 1),
    "kg": ("kilogram", 1000),
    "t": ("tonne", 10**6),
    "oz": ("ounce", Rational(28349523125, 10**9)),
    "lb": ("lb", Rational(45359237, 10**5)),  # "pound" is also a currency: only the symbol is read
}
_TIMES = {
    "ms": ("millisecond", Rational(1, 1000)),
    "s": ("second", 1),
    "min": ("minute", 60),
    "h": ("hour", 3600),
    "day": ("day", 86400),
    "week": ("week", 7 * 86400),
}


def _table() -> dict[str, Unit]:
    """Symbols (case-sensitive) and lower-case names; plurals are read by `read_unit`."""
    table: dict[str, Unit] = {}
    for quantity, units in (("length", _LENGTHS), ("mass", _MASSES), ("time", _TIMES)):
        for symbol, (name, size) in units.items():
            table[symbol] = table[name] = _unit(symbol, quantity, size)
    for name, symbol in (("metre", "m"), ("kilometre", "km"), ("centimetre", "cm"), ("millimetre", "mm")):
        table[name] = table[symbol]
    table |= {"feet": table["ft"], "sec": table["s"], "hr": table["h"]}
    table |= {"month": _unit("month", "calendar", 1), "year": _unit("year", "calendar", 12)}
    table["yr"] = table["year"]
    table |= {"L": _unit("L", "length", Rational(1, 10), 3), "mL": _unit("mL", "length", Rational(1, 100), 3)}
    table |= {"liter": table["L"], "litre": table["L"], "ml": table["mL"], "milliliter": table["mL"]}
    table |= {"rad": _unit("rad", "angle", 1), "radian": _unit("rad", "angle", 1)}
    table |= {"deg": DEGREE, "degree": DEGREE}
    return table | {word: currency for words, currency in _CURRENCY_WORDS for word in words}


DEGREE = _unit("deg", "angle", sympy.pi / 180)
_USD = _unit("USD", "USD", 1)
_CURRENCY_WORDS = [
    (("$", "\\$", "dollar", "usd", "us dollar"), _USD),
    (("€", "\\euro", "euro", "eur"), _unit("EUR", "EUR", 1)),
    (("£", "\\pounds", "gbp"), _unit("GBP", "GBP", 1)),
    (("¥",), _unit("¥", "JPY|CNY", 1)),
    (("yuan", "rmb", "cny"), _unit("CNY", "CNY", 1)),
    (("yen", "jpy"), _unit("JPY", "JPY", 1)),
    (("₹", "rupee", "inr"), _unit("INR", "INR", 1)),
    (("cent",), _unit("cent", "USD", Rational(1, 100))),
]
# Symbols read without `\\text{}`: one letter only after a space, and only those the parser strips as a unit anyway
# (`2 L` may be twice a length L); written on to a number (`5cm`) only these, not what reads as a product (`2nm`).
_SPACED_LETTERS = frozenset("mgsh")
_ATTACHED_SYMBOLS = frozenset(
    {"mm", "cm", "dm", "km", "mg", "kg", "ml", "mL", "min", "hr", "hrs", "sec", "ft", "lb", "lbs"}
)
_POWER_WORDS = {"square": 2, "sq": 2, "cubic": 3, "cu": 3}
_POWER = re.compile(r"\^\s*\{?\s*([23])\s*\}?$")
UNITS = _table()


def read_unit(text: str) -> Unit | None:
    """The unit `text` names (`cm`, `\\text{ cm}^2` inside, `square meters`, `km/h`), or None when unknown."""
    text = " ".join(text.replace("\\ ", " ").split()).rstrip(".")
    power = _POWER.search(text)
    if power:
        base = text[: power.start()]
        unit = None if "/" in base else read_unit(base)  # `m/s^2` is no square of a rate
        return unit.raised(int(power.group(1))) if unit and unit.power == 1 else None
    words = text.split(" ", 1)
    if len(words) == 2 and words[0].lower() in _POWER_WORDS:
        unit = _named(words[1])
        return unit.raised(_POWER_WORDS[words[0].lower()]) if unit and unit.power == 1 else None
    per = re.split(r"\s*/\s*| per ", text)
    if len(per) == 2:
        return _per(_named(per[0]), _named(per[1]))
    return _named(text) or (_named(words[0]) if len(words) == 2 else None)  # `7 meters long`


def bare_symbol(written: str) -> bool:
    """May `written`, what follows a number without `\\text{}` (` m`, `cm^2`, `km/h`), be read as a unit?"""
    spaced = written[:1].isspace()
    symbol = written.split("/")[0].split("^")[0].strip()
    if len(symbol) == 1:
        return spaced and symbol in _SPACED_LETTERS
    return spaced or symbol in _ATTACHED_SYMBOLS


def _named(word: str) -> Unit | None:
    """A symbol as written (`mm`, `L`: `M` is no `m`), else a longer name in any case, singular or plural
    (`Meters`, `inches`, `kgs`)."""
    word = word.strip()
    if word in UNITS or len(word) < 3:
        return UNITS.get(word)
    lower = word.lower()
    for singular in (lower, lower.removesuffix("s"), lower.removesuffix("es")):
        if singular in UNITS:
            return UNITS[singular]
    return None


def _per(numerator: Unit | None, denominator: Unit | None) -> Unit | None:
    """`km/h`: a rate of two plain units (no currency of two countries, no areas), in base units."""
    if numerator is None or denominator is None:
        return None
    plain = (unit.power == 1 and len(unit.quantities) == 1 for unit in (numerator, denominator))
    if not all(plain):
        return None
    (top,), (bottom,) = numerator.quantities, denominator.quantities
    return _unit(f"{numerator.name}/{denominator.name}", f"{top}/{bottom}", numerator.size / denominator.size)


def numeral_base(base: int) -> Unit:
    """The base a numeral is written in (`1010_2`): like a unit, another base is another answer, none is any."""
    return _unit(f"base {base}", f"base {base}", 1)


def conversion(reference: Unit | None, answer: Unit | None) -> sympy.Expr | None:
    """What multiplies the answer's value into the reference's unit; None when the units measure different
    things. A side without a unit is in the question's unit: nothing to convert."""
    if reference is None or answer is None:
        return sympy.Integer(1)
    if reference.power != answer.power or not reference.quantities & answer.quantities:
        return None
    return answer.size**answer.power / reference.size**reference.power
