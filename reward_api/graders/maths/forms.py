"""Answer forms that rules can decide, rewritten as text before LaTeX parsing.

Each rewrite turns a form that latex2sympy cannot read, or reads wrongly, into the plain
LaTeX of the same answer; none of them accepts anything by itself. The families:

- Unicode and HTML math: `∞ ∪ ≤ ＞ π √2 ±`, full-width digits, `3<sup>x</sup>`, `&le;`.
- Escapes eaten on the way: `\\frac` read by JSON as a form feed and `rac`, and the like.
- Notation slips: unbraced arguments read as TeX reads them (`\\frac{1+a}c`, `\\sqrt\\pi`), a
  degree sign lost or written `^\\textcirc`, degrees inside `\\cos 30^\\circ`, `r \\operatorname{cis}
  \\theta`, `\\varnothing`, `\\colon` and `\\langle 1, 5 \\rangle`, `\\zeta(4)`, a base in words (`110_{\\text{two}}`),
  ordinals (`12^{\\mathrm{th}}`), `m_{\\max}`, stray punctuation before a closing bracket (`(1, \\sqrt{2}.]`).
- Repeating decimals: `0.1\\overline{6}` and `0.1666\\ldots` are the fraction 1/6.
- Geometric series written out: `1 + \\frac{1}{2} + \\frac{1}{4} + \\cdots` is the 2 it converges to.
- Labels: `\\text{Minimum: } 1, \\text{Maximum: } 3` is the list `1, 3` in that order;
  `(f(n), g(n)) = (n, 1)` is `f(n)=n, g(n)=1`.
- Integer parameters declared in words (`k \\in \\mathbb{Z}`, "where n is an integer"):
  the declaration is taken off and its names kept, so a solution family may rename them.
- Ratios of three terms or more: `3:2:1` is its terms in order, not the quotient (3/2)/1.
- Multiple choice: `\\textbf{(B)}\\ 7` is the letter B and the value 7.
- `\\pm` inside a tuple: `(\\pm\\sqrt2, 0)` is the list of tuples with each sign; inside a group
  (`\\frac{3 \\pm \\sqrt{7}}{2}`), the list of both values.
- Word answers: `\\text{Odd}`, `odd.` and `the ellipse` compare as normalised words; numbers in
  words (`two thirds`, `twenty-one`) are those numbers.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass
from fractions import Fraction
from itertools import pairwise, product

# ---------------------------------------------------------------- Unicode and HTML

_SYMBOLS = {
    "∞": r"\infty ",
    "∪": r"\cup ",
    "∩": r"\cap ",
    "≤": r"\le ",
    "⩽": r"\le ",
    "≦": r"\le ",
    "≥": r"\ge ",
    "⩾": r"\ge ",
    "≧": r"\ge ",
    "≠": r"\ne ",
    "π": r"\pi ",
    "±": r"\pm ",
    "∓": r"\mp ",
    "×": r"\times ",
    "÷": r"\div ",
    "·": r"\cdot ",
    "⋅": r"\cdot ",
    "−": "-",
    "–": "-",
    "∈": r"\in ",
    "∉": r"\notin ",
    "∅": r"\emptyset ",
    "ℝ": r"\mathbb{R}",
    "ℤ": r"\mathbb{Z}",
    "ℕ": r"\mathbb{N}",
    "ℚ": r"\mathbb{Q}",
    "½": r"\frac{1}{2}",
    "⅓": r"\frac{1}{3}",
    "⅔": r"\frac{2}{3}",
    "¼": r"\frac{1}{4}",
    "¾": r"\frac{3}{4}",
    "\u3000": " ",
}
_SUPERSCRIPTS = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹⁻⁺", "0123456789-+")
_SUPERSCRIPT_RUN = re.compile(r"[⁰¹²³⁴⁵⁶⁷⁸⁹⁻⁺]+")
_FULL_WIDTH = {code: code - 0xFEE0 for code in range(0xFF01, 0xFF5F)}  # ！..～ -> !..~
_ROOT = re.compile(r"([√∛∜]|根号)\s*")
_ROOT_INDEX = {"√": "", "∛": "[3]", "∜": "[4]", "根号": ""}
_ROOT_ARGUMENT = re.compile(r"\d+(?:\.\d+)?|\\[A-Za-z]+|[A-Za-z]")
_HTML_SCRIPT = re.compile(r"<(sup|sub)>(.*?)</\1>", re.IGNORECASE | re.DOTALL)
_HTML_TAG = re.compile(r"</?(?:b|i|em|strong|span|p|br|math|mi|mn|mo)\b[^<>]*>", re.IGNORECASE)


def plain_latex(text: str) -> str:
    """Unicode math symbols, full-width characters and HTML markup as the LaTeX they stand for."""
    if text.isascii() and "<" not in text and "&" not in text:
        return text
    if "&" in text:
        text = html.unescape(text)
    text = _HTML_SCRIPT.sub(lambda m: ("^" if m.group(1).lower() == "sup" else "_") + "{" + m.group(2) + "}", text)
    text = _HTML_TAG.sub("", text)
    if text.isascii():
        return text
    text = text.translate(_FULL_WIDTH)
    text = _SUPERSCRIPT_RUN.sub(lambda m: "^{" + m.group().translate(_SUPERSCRIPTS) + "}", text)
    text = "".join(_SYMBOLS.get(char, char) for char in text)
    return _roots(text)


def _roots(text: str) -> str:
    """`√2`, `√x`, `√(x+1)`, `∛{8}` -> `\\sqrt{...}`; the radicand is the next number, letter or group."""
    out, position = [], 0
    for match in _ROOT.finditer(text):
        if match.start() < position:
            continue
        out.append(text[position : match.start()])
        start = match.end()
        group = _group_end(text, start)
        if group is not None:
            inner, position = text[start + 1 : group - 1], group
        else:
            argument = _ROOT_ARGUMENT.match(text, start)
            if argument is None:
                out.append(match.group())
                position = start
                continue
            inner, position = argument.group(), argument.end()
        out.append(r"\sqrt" + _ROOT_INDEX[match.group(1)] + "{" + inner + "}")
    out.append(text[position:])
    return "".join(out)


def _group_end(text: str, start: int) -> int | None:
    """The index after the bracket that closes the `(` or `{` at `start`, or None."""
    if start >= len(text) or text[start] not in "({":
        return None
    opener = text[start]
    closer = ")" if opener == "(" else "}"
    depth = 0
    for index in range(start, len(text)):
        if text[index] == opener:
            depth += 1
        elif text[index] == closer:
            depth -= 1
            if depth == 0:
                return index + 1
    return None


# ---------------------------------------------------------------- escapes eaten on the way

# JSON and Python literals read a backslash and one of these letters as a control character: `"\\frac"`
# arrives as a form feed and `rac`.
_ESCAPE_LETTER = {"\a": "a", "\b": "b", "\f": "f", "\n": "n", "\r": "r", "\t": "t", "\v": "v"}
# Commands a control character and the letters after it are taken for. Tabs and newlines can be real,
# so only commands whose remaining letters are no word or name: not `\\nu`, `\\ne`, `\\ni` or `\\to`
# (a new line may start with the variable u or the constant e).
_EATEN_COMMANDS = frozenset({
    "alpha", "aleph", "angle", "approx", "arccos", "arcsin", "arctan", "ast",
    "backslash", "bar", "begin", "beta", "binom", "bmod", "bot", "boxed", "bullet",
    "big", "bigcap", "bigcup", "bigg", "biggl", "biggr", "bigl", "bigr",
    "forall", "frac",
    "nabla", "neg", "neq", "ngeq", "nleq", "nmid", "not", "notin",
    "rangle", "rbrace", "rceil", "rfloor", "rho", "right", "rightarrow", "rvert",
    "tan", "tanh", "tau", "tbinom", "tfrac", "theta", "tilde", "times", "top", "triangle",
    "text", "textbf", "textit", "textrm",
    "varepsilon", "varnothing", "varphi", "vartheta", "vdots", "vec", "vee", "vert",
})  # fmt: skip
_EATEN = re.compile(r"([\a\b\f\n\r\t\v])([A-Za-z]+)")


def repair_escapes(text: str) -> str:
    """`\\x0crac{1}{2}` -> `\\frac{1}{2}`, a tab and `ext{cm}` -> `\\text{cm}`: where the command is unambiguous."""
    return _EATEN.sub(_repaired, text)


def _repaired(eaten: re.Match[str]) -> str:
    command = _ESCAPE_LETTER[eaten.group(1)] + eaten.group(2)
    return "\\" + command if command in _EATEN_COMMANDS else eaten.group()


# ---------------------------------------------------------------- notation slips

# Commands whose arguments TeX reads unbraced too: two for fractions and binomials, one for a root.
_TAKES_ARGUMENTS = re.compile(r"\\(?:(?P<two>[dtc]?frac|[dt]?binom)|sqrt)(?![A-Za-z])\s*")
_COMMAND = re.compile(r"\\[A-Za-z]+")
_DEGREE_WORDS = re.compile(r"\\text(?:circ|degree)\b|\\(?:text|mathrm)\{\s*\\?circ\s*\}")
_LOST_DEGREE = re.compile(r"(?<=\d)\s*\^\s*(?:\{\s*\})?\s*$")
# A trigonometric function of an angle in degrees: `\\cos 30^\\circ`, `\\sin(45°)`.
_DEGREE_ARGUMENT = re.compile(
    r"\\(?P<function>sin|cos|tan|cot|sec|csc)\s*(?P<open>\(|\{)?\s*(?P<angle>\d+(?:\.\d+)?)\s*"
    r"(?:\^\s*\{?\s*\\circ\s*\}?|°)\s*(?(open)[)}])"
)
# Synonyms the parser does not know: the empty set, a ratio's colon, a vector's angle brackets.
_SYNONYMS = (("\\varnothing", "\\emptyset"), ("\\colon", ":"), ("\\langle", "("), ("\\rangle", ")"))
# `r \\operatorname{cis} \\theta`: r(cos theta + i sin theta), the argument a group or the rest of the answer.
_CIS = re.compile(r"\\(?:operatorname|text|mathrm)\s*\{\s*cis\s*\}\s*|\\cis(?![A-Za-z])\s*")
# Riemann's zeta at an integer from 2, which the parser does not know: the series that defines it.
_ZETA = re.compile(r"\\zeta\s*(?:\(\s*(?P<paren>[2-9]|\d{2,3})\s*\)|\\left\(\s*(?P<sized>[2-9]|\d{2,3})\s*\\right\))")
# A base written as a word or in brackets: `110_{\\text{two}}`, `110_{(2)}` -> `110_{2}`.
_BASE = re.compile(r"(?<=[0-9A-F])_\s*\{\s*(?:\\text\s*\{\s*(?P<word>[a-z]+)\s*\}|\(\s*(?P<digits>\d{1,2})\s*\))\s*\}")
_ORDINAL = re.compile(
    r"^\s*(\d+)\s*(?:\^\s*)?\{?\s*(?:\\(?:mathrm|text|textrm|rm)\s*\{?\s*)?(?:st|nd|rd|th)\s*\}?\s*\}?\s*$"
)
_SPACED_DECIMAL = re.compile(r"^([+-]?\d+)\.\s+(\d+)$")  # `0. 98`
_BOX = re.compile(r"^\\(?:boxed|fbox)\s*(?=\{)")
_OPERATOR_SUBSCRIPT = re.compile(r"_\s*(\{\s*)?\\(max|min|text\{\s*(?:max|min)\s*\})(\s*\})?")
# A period, comma or semicolon alone before a closing bracket (`(1, \\sqrt{2}.]`); `{,}` and `...` are not alone.
_STRAY_PUNCTUATION = re.compile(r"(?<=[^\s.,;{\\])\s*[.,;]\s*(?=(?:\\right\s*)?(?:[)\]]|\\\}))")


def fix_slips(text: str) -> str:
    """A box inside the box, unbraced arguments, lost or odd degree signs, degrees as a trigonometric function's
    argument, `cis`, synonyms (`\\varnothing`, `\\colon`, `\\langle`), `\\zeta(n)`, a base in words, ordinals,
    `_{\\max}`, stray punctuation."""
    text = _unbox(text)
    text = _SPACED_DECIMAL.sub(r"\1.\2", text)
    text = _brace_arguments(_STRAY_PUNCTUATION.sub("", text))
    text = _DEGREE_WORDS.sub(r"\\circ", text)
    text = _LOST_DEGREE.sub(r"^\\circ", text)
    if "\\" in text:
        text = _DEGREE_ARGUMENT.sub(r"\\\g<function>(\\frac{\g<angle>\\pi}{180})", _cis(text))
        for synonym, known in _SYNONYMS:
            text = text.replace(synonym, known)
        text = _ZETA.sub(lambda m: "\\sum_{k=1}^{\\infty}\\frac{1}{k^{" + (m["paren"] or m["sized"]) + "}}", text)
    if "_" in text:
        text = _BASE.sub(_base_digits, text)
    text = _ORDINAL.sub(r"\1", text)
    return _OPERATOR_SUBSCRIPT.sub(lambda m: "_{" + m.group(2).removeprefix("text{").strip(" }") + "}", text)


def _cis(text: str) -> str:
    """`2 \\operatorname{cis} 60^\\circ` -> `2(\\cos(60^\\circ) + i\\sin(60^\\circ))`; the degrees are read after."""
    cis = _CIS.search(text)
    if cis is None:
        return text
    end = _group_end(text, cis.end()) or len(text)
    angle = text[cis.end() : end].strip()
    if angle[:1] in "({" and angle[-1:] in ")}":
        angle = angle[1:-1]
    return f"{text[: cis.start()]}(\\cos({angle}) + i\\sin({angle})){text[end:]}"


def _base_digits(base: re.Match[str]) -> str:
    """A base's subscript as digits; a word that names no base (`_{\\text{max}}`) is left as written."""
    if base["digits"]:
        return "_{" + base["digits"] + "}"
    return "_{" + str(_ONES.index(base["word"])) + "}" if base["word"] in _ONES[2:17] else base.group()


def _unbox(text: str) -> str:
    """`\\boxed{\\boxed{3n}}` is `3n`: a box around the whole answer says nothing."""
    while (box := _BOX.match(text)) and _group_end(text, box.end()) == len(text):
        text = text[box.end() + 1 : -1].strip()
    return text


def _brace_arguments(text: str) -> str:
    """Arguments as TeX reads them, braced: `\\frac{1+a}c` -> `\\frac{1+a}{c}`, `2\\sqrt\\pi` -> `2\\sqrt{\\pi}`.

    An argument is a braced group (read again inside: `\\frac{\\sqrt\\pi}{2}`), a command or one
    character, so `\\frac12` is 1/2 and `\\sqrt12` is 2; a root keeps its index (`\\sqrt[3]\\pi`).
    """
    out, position = [], 0
    for match in _TAKES_ARGUMENTS.finditer(text):
        if match.start() < position:
            continue
        start = match.end()
        if not match["two"] and text.startswith("[", start):  # a root's index: `\\sqrt[3]`
            start = max(start, text.find("]", start) + 1)
        out.append(text[position:start])
        position = start
        for _ in range(2 if match["two"] else 1):
            while position < len(text) and text[position] == " ":
                position += 1
            if position >= len(text):
                break
            group = _group_end(text, position) if text[position] == "{" else None
            if group:
                argument, position = _brace_arguments(text[position + 1 : group - 1]), group
            else:
                command = _COMMAND.match(text, position)
                end = command.end() if command else position + 1
                argument, position = text[position:end], end
            out.append("{" + argument + "}")
    out.append(text[position:])
    return "".join(out)


# ---------------------------------------------------------------- repeating decimals

_OVERLINED = re.compile(
    r"(?P<sign>-?)(?P<whole>\d*)\.(?P<fixed>\d*)\\(?:overline|bar|dot)\s*(?:\{(?P<period>\d{1,12})\}|(?P<digit>\d))"
)
_DOTTED = re.compile(r"(?P<sign>-?)(?P<whole>\d*)\.(?P<digits>\d{3,40})\s*(?:\\[lc]?dots|\.\.\.|…)")
# A tail read as repeating: one digit three times (`0.1666...`), two or three digits twice (`0.2727...`).
_REPEATS = ((1, 3), (2, 2), (3, 2))


def exact_repeating(text: str) -> str:
    """`0.1\\overline{6}`, `0.1666\\ldots`, `1.999...` -> `\\frac{1}{6}`, `\\frac{2}{1}`: a repeating decimal is
    the fraction it equals. A tail that does not repeat (`1.41421356\\ldots`) is a truncation, left as it is."""
    if "." not in text:
        return text
    overlined = _OVERLINED.fullmatch(text)
    if overlined:
        period = overlined["period"] or overlined["digit"]
        return _fraction(overlined["sign"], overlined["whole"], overlined["fixed"], period)
    dotted = _DOTTED.fullmatch(text)
    if dotted:
        digits = dotted["digits"]
        for length, times in _REPEATS:
            period = digits[-length:]
            if digits.endswith(period * times):
                fixed = digits.rstrip(period) if length == 1 else _before_repeats(digits, period)
                return _fraction(dotted["sign"], dotted["whole"], fixed, period)
    return text


def _before_repeats(digits: str, period: str) -> str:
    while digits.endswith(period):
        digits = digits[: -len(period)]
    return digits


def _fraction(sign: str, whole: str, fixed: str, period: str) -> str:
    """whole.fixed(period) repeating as `\\frac{p}{q}`: (whole fixed period - whole fixed) / (10^k (10^n - 1))."""
    head = int((whole or "0") + fixed)
    numerator = int((whole or "0") + fixed + period) - head
    denominator = (10 ** len(period) - 1) * 10 ** len(fixed)
    return f"{sign}\\frac{{{numerator}}}{{{denominator}}}"


# ---------------------------------------------------------------- series written out

# A term: an integer, a decimal, a fraction `\frac{p}{q}` (or `\dfrac`, `\tfrac`, `\frac12`) or `p/q`.
_TERM = r"\d+(?:\.\d+)?(?:\s*/\s*\d+)?|\\[dt]?frac\s*(?:\{\s*\d+\s*\}\s*\{\s*\d+\s*\}|\d\d)"
_DOTS = r"(?:\\[lc]?dots|\.\.\.|…)"
_SERIES = re.compile(rf"\s*(?P<terms>[+-]?\s*(?:{_TERM})(?:\s*[+-]\s*(?:{_TERM})){{2,11}})\s*[+-]\s*{_DOTS}\s*")
_SIGNED_TERM = re.compile(rf"(?P<sign>[+-]?)\s*(?P<term>{_TERM})")


def geometric_series(text: str) -> str:
    """`1 + \\frac{1}{2} + \\frac{1}{4} + \\cdots` -> `\\frac{2}{1}`, `1 - \\frac13 + \\frac19 - \\cdots` ->
    `\\frac{3}{4}`: three or more rational terms with one ratio r, |r| < 1, then dots, are the sum a / (1 - r).
    Anything else (other terms, no common ratio, a series that diverges) is left as it is."""
    series = _SERIES.fullmatch(text)
    if series is None:
        return text
    terms = [_term_value(found) for found in _SIGNED_TERM.finditer(series["terms"])]
    if any(term is None or term == 0 for term in terms):
        return text
    ratio = terms[1] / terms[0]
    if any(later != earlier * ratio for earlier, later in pairwise(terms)) or abs(ratio) >= 1:
        return text
    total = terms[0] / (1 - ratio)
    return f"\\frac{{{total.numerator}}}{{{total.denominator}}}"


def _term_value(found: re.Match[str]) -> Fraction | None:
    term = found["term"]
    numbers = re.findall(r"\d+(?:\.\d+)?", term)
    if term.startswith("\\") and len(numbers) == 1:  # `\frac12`: two digits, one each
        numbers = list(numbers[0])
    try:
        value = Fraction(numbers[0]) / Fraction(numbers[1]) if len(numbers) == 2 else Fraction(numbers[0])
    except ZeroDivisionError:
        return None
    return -value if found["sign"] == "-" else value


# ---------------------------------------------------------------- labels

_CJK = r"\u3000-\u303f\u3400-\u9fff\uff01-\uff0f\uff1a-\uff20"
_MATH_SPAN = re.compile(r"\$\$?(.+?)\$\$?|\\\((.+?)\\\)", re.DOTALL)
_PROSE_ONLY = re.compile(rf"[{_CJK}\s，。：；、]*")
_PROSE_LABEL = re.compile(rf"^[{_CJK}]+(?:为|是|：|:|=)\s*(?=[^{_CJK}\s])")
_PROSE_UNIT = re.compile(rf"(?<=[^{_CJK}\s])\s*[{_CJK}]+[。．.]?$")


def strip_prose(text: str) -> str:
    """`切线方程为 $y=2x-2$` -> `y=2x-2`; `平均值为 0.98` -> `0.98`; `$A$ 城市` -> `A`.

    Words in CJK scripts around one math span, or before a value after 为/是/：, are a label
    or a unit: the math is the answer. An answer with two spans, or CJK between values
    (`1和3`), is left alone.
    """
    spans = _MATH_SPAN.findall(text)
    if len(spans) == 1 and _PROSE_ONLY.fullmatch(_MATH_SPAN.sub("", text)):
        return (spans[0][0] or spans[0][1]).strip()
    if spans:
        return text
    stripped = _PROSE_UNIT.sub("", _PROSE_LABEL.sub("", text.strip()))
    return stripped if stripped and not re.search(f"[{_CJK}]", stripped) else text


_LABEL = re.compile(
    r"^\s*(?:\\text(?:bf|rm)?\{\s*(?P<boxed>[A-Za-z][A-Za-z .'-]*?)\s*(?::\s*\}|\}\s*:)"
    r"|(?P<plain>[A-Za-z][A-Za-z .'-]*?[A-Za-z])\s*:(?!=))\s*"
)
_TUPLE_ASSIGNMENT = re.compile(r"^\s*\((?P<names>.+)\)\s*=\s*\((?P<values>.+)\)\s*$")
_NAME = re.compile(r"\s*[A-Za-z](?:_\{?\w+\}?)?(?:'*)?(?:\(\s*[A-Za-z0-9, ]*\))?\s*")


@dataclass(frozen=True)
class Labelled:
    text: str
    ordered: bool  # the answer named its items: compare them in the order written


def drop_labels(text: str) -> Labelled:
    """`\\text{Min: } 1, \\text{Max: } 3` -> `1, 3` (ordered); `(x, y) = (1, 2)` -> `x=1, y=2`."""
    match = _TUPLE_ASSIGNMENT.match(text)
    if match:
        names, values = split_top_level(match.group("names")), split_top_level(match.group("values"))
        if 1 < len(names) == len(values) and all(_NAME.fullmatch(name) for name in names):
            return Labelled(", ".join(f"{n.strip()}={v.strip()}" for n, v in zip(names, values, strict=True)), False)
    if ":" not in text:
        return Labelled(text, False)
    items = split_top_level(text)
    stripped = [_LABEL.sub("", item, count=1) for item in items]
    labelled = sum(a != b for a, b in zip(items, stripped, strict=True))
    if labelled == 0 or any(not item.strip() for item in stripped):
        return Labelled(text, False)
    return Labelled(", ".join(item.strip() for item in stripped), labelled > 1)


def split_top_level(text: str, separators: str = ",") -> list[str]:
    """Split at separators outside brackets and braces."""
    items, depth, start = [], 0, 0
    for index, char in enumerate(text):
        if char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
        elif char in separators and depth == 0 and text[index - 1 : index] != "\\":
            items.append(text[start:index])
            start = index + 1
    items.append(text[start:])
    return items


# ---------------------------------------------------------------- ratios


def ratio_terms(text: str) -> tuple[str, ...] | None:
    """`3:2:1` and `x:y:z = 3:2:1` -> ("3", "2", "1"); None for anything but a ratio of three terms or more.

    The parser reads `a:b:c` as the quotient (a/b)/c, so `3:1:2` would equal `3:2:1`; a ratio of two
    terms is left to it (`3:2` is 3/2), a longer one is compared term by term.
    """
    ratio = text.rpartition("=")[2]  # after the names: `S_1:S_2 = 7:32`
    if ratio.count(":") < 2:
        return None
    terms = [term.strip() for term in split_top_level(ratio, ":")]
    return tuple(terms) if len(terms) > 2 and all(terms) else None


# ---------------------------------------------------------------- multiple choice

# `\\textbf{(B)}\\ 7`, `(B) 7`, `\\text{(A)}`: a letter in brackets, then the choice's value unless an
# operator follows (`(A) \\cup (B)` is sets).
_CHOICE = re.compile(
    r"(?:\\(?:text(?:bf|rm|it)?|math(?:rm|bf))\s*\{\s*\(\s*(?P<wrapped>[A-E])\s*\)\s*\}|\(\s*(?P<plain>[A-E])\s*\))"
    r"(?!\s*(?:[-+*/=^_,|&:]|\\(?:cup|cap|cdot|times|setminus)(?![A-Za-z])))\s*(?P<content>.*)",
    re.DOTALL,
)
_BARE_LETTER = re.compile(r"(?:\\text(?:bf|rm)?\s*\{\s*)?(?P<letter>[A-E])(?:\s*\})?")


@dataclass(frozen=True)
class Choice:
    letter: str
    content: str  # the choice's value written after its letter, or ""


def multiple_choice(text: str) -> Choice | None:
    """`\\textbf{(B)}\\ 7` -> the letter B and the value 7; `(A)` -> A alone; None for anything else."""
    match = _CHOICE.fullmatch(text)
    return Choice(match["wrapped"] or match["plain"], match["content"].strip()) if match else None


def bare_letter(text: str) -> str | None:
    """`B` or `\\text{B}`: what may be a choice's letter, when the other side is a choice."""
    match = _BARE_LETTER.fullmatch(text)
    return match["letter"] if match else None


# ---------------------------------------------------------------- integer parameters

_INTEGERS = r"(?:\\math(?:bb|bf)\s*\{?\s*Z\s*\}?|\\Z\b)"
_NAMES = r"(?P<names>(?<![A-Za-z\\])[a-zA-Z](?:\s*,\s*[a-zA-Z])*)"
_INTRO = r"(?:\\text\{[^{}]*\}|\\(?:quad|qquad)|where|for|with|all|any|every|some|and|[,;(\s])*"
_DECLARATION = re.compile(
    rf"{_INTRO}{_NAMES}\s*(?:\\in\s*{_INTEGERS}|\\text\{{\s*(?:is|are)\s+(?:an?\s+)?integers?\s*\.?\s*\}}"
    rf"|(?:is|are)\s+(?:an?\s+)?integers?)[\s).]*$"
)
_DECLARATION_AFTER = re.compile(
    rf"(?:[,;(\s]|\\text\{{\s*(?:,\s*)?(?:where|for)\s+(?:all|any|every|some)?\s*integers?\s*\}}|"
    rf"(?:where|for)\s+(?:all|any|every|some)?\s*integers?)+\s*{_NAMES}[\s).]*$"
)


@dataclass(frozen=True)
class Declared:
    text: str
    parameters: frozenset[str]


def take_declarations(text: str) -> Declared:
    """`\\frac{\\pi}{6}+k\\pi, k \\in \\mathbb{Z}` -> the family, with `k` declared an integer."""
    if "Z" not in text and "integer" not in text:
        return Declared(text, frozenset())
    for pattern in (_DECLARATION, _DECLARATION_AFTER):
        match = pattern.search(text)
        if match and match.start() > 0 and ("integer" in match.group() or "Z" in match.group()):
            names = frozenset(name.strip() for name in match.group("names").split(","))
            return Declared(text[: match.start()].strip().rstrip(",;"), names)
    return Declared(text, frozenset())


# ---------------------------------------------------------------- signs

_SIGN = re.compile(r"\\(pm|mp)(?![A-Za-z])")
MAX_SIGNS = 4  # 2^4 tuples at most


def expand_signs(text: str) -> str:
    """`(\\pm\\sqrt2, 0, \\pm\\sqrt2)` -> the four tuples, each sign chosen independently;
    `\\frac{3 \\pm \\sqrt{7}}{2}` -> its two values."""
    if "\\pm" not in text and "\\mp" not in text:
        return text
    items = split_top_level(text)
    expanded = [_expand_nested(_expand_tuple(item.strip())) for item in items]
    return ", ".join(expanded) if expanded != [item.strip() for item in items] else text


def _expand_nested(item: str) -> str:
    """One sign inside a group (`\\frac{3 \\pm \\sqrt{7}}{2}`), which the parser cannot read: both values.
    A sign at the top level (`2 \\pm \\sqrt{3}`) the parser reads as the set of both itself."""
    signs = list(_SIGN.finditer(item))
    if len(signs) != 1 or _depth(item, signs[0].start()) == 0:
        return item
    sign = signs[0]
    values = [item[: sign.start()] + chosen + item[sign.end() :] for chosen in ("+", "-")]
    return ", ".join(values)


def _depth(text: str, position: int) -> int:
    """How many brackets and braces are open at `position`."""
    return sum(1 if char in "([{" else -1 if char in ")]}" else 0 for char in text[:position])


def _expand_tuple(item: str) -> str:
    if not (item.startswith("(") and _group_end(item, 0) == len(item)):
        return item
    inner = item[1:-1]
    if len(split_top_level(inner)) < 2:
        return item
    signs = list(_SIGN.finditer(inner))
    if not signs or len(signs) > MAX_SIGNS:
        return item
    variants = []
    for choice in product((1, -1), repeat=len(signs)):
        out, position = [], 0
        for sign, chosen in zip(signs, choice, strict=True):
            before = inner[: sign.start()].rstrip()
            unary = not before or before[-1] in "(,[{"
            positive = chosen == (1 if sign.group(1) == "pm" else -1)
            out.append(inner[position : sign.start()] + ("" if positive and unary else "+" if positive else "-"))
            position = sign.end()
        out.append(inner[position:])
        variants.append("(" + "".join(out) + ")")
    return ", ".join(dict.fromkeys(variants))


# ---------------------------------------------------------------- word answers

_TEXT_WRAPPER = re.compile(r"\\(?:text(?:bf|it|rm|sf|tt)?|mathrm|mathbf|mathit|mbox|operatorname)\s*\{([^{}]*)\}")
_WORD_TEXT = re.compile(r"[a-z][a-z' -]*[a-z]|[a-z]")
_LONG_WORD = re.compile(r"[a-z]{3,}")
_ARTICLE = re.compile(r"^(?:the|an?)\s+")


_CANONICAL = (
    (re.compile(r"\\[dtc]frac(?![A-Za-z])"), r"\\frac"),
    (re.compile(r"\\(ge|le|ne)q(?![A-Za-z])"), r"\\\1"),
    (re.compile(r"\\(?:left|right)(?![A-Za-z])"), ""),
    (re.compile(r"\s+"), " "),
    (re.compile(r" (?=[^A-Za-z0-9])|(?<=[^A-Za-z0-9]) "), ""),
)


def canonical_text(text: str) -> str:
    """The answer as a string with text wrappers, `\\left`/`\\right` and spacing taken off and synonyms unified.

    Equal canonical strings are the same answer, whatever they mean: this decides answers in
    words and symbols (`\\text{All composite integers } s \\geq 4`) that no parser reads.
    """
    text = _unwrap_text(text)
    for pattern, replacement in _CANONICAL:
        text = pattern.sub(replacement, text)
    return text.strip().rstrip(".。")


def _unwrap_text(text: str) -> str:
    while True:
        unwrapped = _TEXT_WRAPPER.sub(r"\1", text)
        if unwrapped == text:
            return text
        text = unwrapped


_ONES = (
    "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
    "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen",
)  # fmt: skip
_TENS = ("twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety")
_ORDINALS = ("third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth", "eleventh", "twelfth")
_CARDINALS = {word: value for value, word in enumerate(_ONES)} | {word: 10 * v for v, word in enumerate(_TENS, 2)}
_SCALES = {"hundred": 100, "thousand": 1000, "million": 10**6}
# Denominators in words, singular (`halves` loses its s too); `second` is no fraction in an answer.
_DENOMINATORS = {"half": 2, "halve": 2, "quarter": 4} | {word: value for value, word in enumerate(_ORDINALS, 3)}
_NEGATIVE = ("minus ", "negative ")


def number_in_words(words: str) -> str | None:
    """`seven`, `twenty-one`, `one hundred and five`, `two thirds`, `three-quarters`, `one and a half` (as
    `word_answer` gives them) -> `7`, `21`, `105`, `\\frac{2}{3}`...; None for other words."""
    sign = ""
    for negative in _NEGATIVE:
        if words.startswith(negative):
            sign, words = "-", words.removeprefix(negative)
    tokens = words.replace("-", " ").split()
    whole, mixed, fraction = " ".join(tokens).rpartition(" and a ")
    if mixed:
        parts = (_cardinal(whole.split()), _spelled_fraction(fraction.split()))
        value = parts[0] + parts[1] if parts[0] is not None and parts[1] is not None else None
    else:
        value = _spelled(tokens)
    if value is None:
        return None
    if value.denominator == 1:
        return f"{sign}{value.numerator}"
    return f"{sign}\\frac{{{value.numerator}}}{{{value.denominator}}}"


def _spelled(tokens: list[str]) -> Fraction | None:
    """A cardinal (`one hundred and five`) or a fraction (`two thirds`, `half`)."""
    fraction = _spelled_fraction(tokens)
    return fraction if fraction is not None else _cardinal([t for t in tokens if t != "and"])


def _spelled_fraction(tokens: list[str]) -> Fraction | None:
    if not tokens:
        return None
    denominator = _DENOMINATORS.get(tokens[-1].removesuffix("s"))
    if denominator is None:
        return None
    numerator = _cardinal(tokens[:-1]) if len(tokens) > 1 else Fraction(1)
    return None if numerator is None else numerator / denominator


def _cardinal(tokens: list[str]) -> Fraction | None:
    """`one hundred five` -> 105; None unless every token is a number word."""
    total = current = 0
    for token in tokens:
        if token in _CARDINALS:
            current += _CARDINALS[token]
        elif token == "hundred" and current:
            current *= 100
        elif token in _SCALES and current:
            total, current = total + current * _SCALES[token], 0
        else:
            return None
    return Fraction(total + current) if tokens else None


def word_answer(text: str) -> str | None:
    """A short answer in words (`\\text{Odd}`, `ellipse.`), lower-cased and trimmed; None for math.

    Only answers that are words: at least one of three letters or more, or wrapped in
    `\\text{}`. `xy` stays math (a product), as do answers with digits or commands.
    """
    unwrapped = _unwrap_text(text)
    wrapped = unwrapped != text
    words = " ".join(unwrapped.lower().replace("\\ ", " ").split()).strip(" .!")
    words = _ARTICLE.sub("", words)
    if not _WORD_TEXT.fullmatch(words) or len(words) > 60:
        return None
    return words if wrapped or _LONG_WORD.search(words) else None
