"""The math grader: is the final answer of a completion equivalent to the reference?

Extraction lives in `extract` (after `</think>`, last `\\boxed{}`, "the answer
is", a plain final expression), equivalence in `equivalence` (fast exact paths, then
latex2sympy and structural comparison). A completion without a usable answer scores 0
with a reason; only an unusable reference makes the item invalid.

A reference is an answer as datasets store it: a string or number, or a list of acceptable
answers (a parquet row's one-element array arrives as a list of one), any of which may match.
LaTeX whose backslash escapes JSON or a Python literal ate (`\\frac` as a form feed and `rac`)
is repaired in the reference and the completion alike (`forms.repair_escapes`).
"""

from __future__ import annotations

import math

from reward_api.graders.base import InvalidItem, Score
from reward_api.graders.maths.equivalence import NotComputed, Verdict, equivalent
from reward_api.graders.maths.extract import extract_answer
from reward_api.graders.maths.forms import repair_escapes
from reward_api.graders.maths.verifier import verify
from reward_api.profiles import MathSettings

# Strings echoed in `details` are cut to this length: details travel back to the trainer.
DETAIL_CHARS = 200
# A reference holding one of these is a worked solution (or a delimited answer) to extract from.
_SOLUTION_MARKERS = ("\\boxed", "\\fbox", "$", "\\(", "\\[", "</think>", "####")
MAX_ALTERNATIVES = 32  # acceptable answers in one reference list

Answer = str | int | float


def grade_math(
    completion: str, reference: Answer | list[Answer], settings: MathSettings, question: str | None = None
) -> Score:
    refs = normalise_references(reference)
    # Escapes eaten on the way are repaired on both sides, so that damage they share still compares.
    extracted = extract_answer(repair_escapes(completion)) if isinstance(completion, str) else None
    echoed = [_echo(ref) for ref in refs]
    details: dict[str, object] = {"extracted": None, "reference": echoed[0] if len(refs) == 1 else echoed}
    if extracted is None:
        return Score(0.0, details | {"method": "extract", "reason": "no answer found"})
    details |= {"extracted": _echo(extracted.text), "source": extracted.source}
    verdict = _any_equivalent(extracted.text, refs, settings)
    details["method"] = verdict.method
    if verdict.equal:
        return Score(1.0, details)
    details["reason"] = verdict.reason or "not equivalent"
    if settings.verifier is not None:  # rules first: only what they reject goes to the verifier model
        checked = verify(extracted.text, refs[0], settings.verifier, question)
        details |= checked.details()
        if checked.equal:  # why the rules rejected it stays, as `rules`
            details |= {"method": "verifier", "rules": details.pop("reason")}
            return Score(1.0, details)
    return Score(0.0, details)


def _any_equivalent(answer: str, refs: list[str], settings: MathSettings) -> Verdict:
    """The verdict of the first acceptable answer that matches, else the first one's; a comparison the rules
    declined for one of them stands only when none matches."""
    verdicts: list[Verdict] = []
    declined: NotComputed | None = None
    for ref in refs:
        try:
            verdict = equivalent(answer, ref, settings)
        except NotComputed as exc:
            declined = declined or exc
            continue
        if verdict.equal:
            return verdict
        verdicts.append(verdict)
    if declined is not None:
        raise declined
    return verdicts[0]


def normalise_references(reference: object) -> list[str]:
    """The acceptable answers, as strings: one for an answer, each of a list's items for a list."""
    if not isinstance(reference, list | tuple):
        return [normalise_reference(reference)]
    if not 0 < len(reference) <= MAX_ALTERNATIVES:
        raise InvalidItem(
            f"reference: a list of {len(reference)} answers; expected 1 to {MAX_ALTERNATIVES} acceptable answers"
        )
    return [normalise_reference(item, f"reference[{i}]") for i, item in enumerate(reference)]


def normalise_reference(reference: object, field: str = "reference") -> str:
    """The reference answer as a string, its eaten escapes repaired; a worked solution gives its final answer."""
    if isinstance(reference, bool) or not isinstance(reference, str | int | float):
        raise InvalidItem(f"{field}: expected a math answer as a string or number, got {type(reference).__name__}")
    if isinstance(reference, float):
        if not math.isfinite(reference):
            raise InvalidItem(f"{field}: expected a finite number, got {reference!r}")
        # 15 significant digits, what a double holds: drops binary noise such as 0.1 + 0.2 = 0.30000000000000004.
        return format(reference, ".15g")
    if isinstance(reference, int):
        try:
            return str(reference)
        except ValueError:  # beyond Python's int-to-str digit limit
            raise InvalidItem(f"{field}: integer too large; expected at most 4300 digits") from None
    text = repair_escapes(reference).strip()  # before strip(), which takes a form feed for a space
    if not text:
        raise InvalidItem(f"{field}: expected a non-empty math answer such as '3/4' or '\\frac{{3}}{{4}}'")
    if any(marker in text for marker in _SOLUTION_MARKERS):
        extracted = extract_answer(text)
        if extracted is None:
            raise InvalidItem(
                f"{field}: no final answer found in it; expected an answer such as '3/4' or '\\boxed{{3/4}}'"
            )
        text = extracted.text
    return text


def _echo(text: str) -> str:
    """Short and always encodable: lone surrogates from a broken decode must not break JSON encoders."""
    text = text if len(text) <= DETAIL_CHARS else text[: DETAIL_CHARS - 3] + "..."
    return text.encode("utf-8", "replace").decode("utf-8")
