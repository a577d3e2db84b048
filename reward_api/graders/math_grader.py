"""The math grader: is the final answer of a completion equivalent to the reference?

Extraction lives in `math_extract` (after `</think>`, last `\\boxed{}`, "the answer
is", a plain final expression), equivalence in `math_equiv` (fast exact paths, then
latex2sympy and structural comparison). A completion without a usable answer scores 0
with a reason; only an unusable reference makes the item invalid.
"""

from __future__ import annotations

import math

from reward_api.graders.base import InvalidItem, Score
from reward_api.graders.math_equiv import equivalent
from reward_api.graders.math_extract import extract_answer
from reward_api.graders.math_verifier import verify
from reward_api.profiles import MathSettings

# Strings echoed in `details` are cut to this length: details travel back to the trainer.
DETAIL_CHARS = 200
# A reference holding one of these is a worked solution (or a delimited answer) to extract from.
_SOLUTION_MARKERS = ("\\boxed", "\\fbox", "$", "\\(", "\\[", "</think>", "####")


def grade_math(completion: str, reference: str | int | float, settings: MathSettings) -> Score:
    ref = normalise_reference(reference)
    extracted = extract_answer(completion) if isinstance(completion, str) else None
    details: dict[str, object] = {"extracted": None, "reference": _echo(ref)}
    if extracted is None:
        return Score(0.0, details | {"method": "extract", "reason": "no answer found"})
    details |= {"extracted": _echo(extracted.text), "source": extracted.source}
    verdict = equivalent(extracted.text, ref, settings)
    details["method"] = verdict.method
    if verdict.equal:
        return Score(1.0, details)
    details["reason"] = verdict.reason or "not equivalent"
    if settings.verifier is not None:  # rules first: only what they reject goes to the verifier model
        checked = verify(extracted.text, ref, settings.verifier)
        details |= checked.details()
        if checked.equal:  # why the rules rejected it stays, as `rules`
            details |= {"method": "verifier", "rules": details.pop("reason")}
            return Score(1.0, details)
    return Score(0.0, details)


def normalise_reference(reference: object) -> str:
    """The reference answer as a string; a worked solution gives its final answer."""
    if isinstance(reference, bool) or not isinstance(reference, str | int | float):
        raise InvalidItem(f"reference: expected a math answer as a string or number, got {type(reference).__name__}")
    if isinstance(reference, float):
        if not math.isfinite(reference):
            raise InvalidItem("reference: expected a finite number, got " + repr(reference))
        # 15 significant digits, what a double holds: drops binary noise such as 0.1 + 0.2 = 0.30000000000000004.
        return format(reference, ".15g")
    if isinstance(reference, int):
        try:
            return str(reference)
        except ValueError:  # beyond Python's int-to-str digit limit
            raise InvalidItem("reference: integer too large; expected at most 4300 digits") from None
    text = reference.strip()
    if not text:
        raise InvalidItem("reference: expected a non-empty math answer such as '3/4' or '\\frac{3}{4}'")
    if any(marker in text for marker in _SOLUTION_MARKERS):
        extracted = extract_answer(text)
        if extracted is None:
            raise InvalidItem(
                "reference: no final answer found in it; expected an answer such as '3/4' or '\\boxed{3/4}'"
            )
        text = extracted.text
    return text


def _echo(text: str) -> str:
    """Short and always encodable: lone surrogates from a broken decode must not break JSON encoders."""
    text = text if len(text) <= DETAIL_CHARS else text[: DETAIL_CHARS - 3] + "..."
    return text.encode("utf-8", "replace").decode("utf-8")
