"""The CS336 sort task: the model must output the prompt's numbers in ascending order.

Responses of the wrong length: the response is read up to n = len(prompt) numbers.
Missing numbers earn nothing; extra numbers are ignored, so emitting more numbers can
never raise the reward (the seed's ordering term would otherwise grow with every extra
non-decreasing number). With equal lengths both rewards are exactly the seed's.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from itertools import pairwise
from typing import Any

from reward_api.graders.base import InvalidItem, Score

METRICS = ("inclusion_ordering", "distance")
# A run of integers separated only by whitespace, commas, semicolons or brackets. Digits
# and separators are disjoint classes, so matching never backtracks.
_RUN = re.compile(r"-?\d+(?:[\s,;\[\](){}]+-?\d+)*")
_INT = re.compile(r"-?\d+")
_INT64 = 2**63 - 1


def sort_distance_reward(prompt: Sequence[int], response: Sequence[int]) -> int:
    """Positions where the response equals sorted(prompt); max n."""
    ground_truth = sorted(prompt)
    return sum(1 for x, y in zip(response[: len(prompt)], ground_truth, strict=False) if x == y)


def sort_inclusion_ordering_reward(prompt: Sequence[int], response: Sequence[int]) -> int:
    """Prompt numbers present in the response plus adjacent response pairs in order; max 2n - 1."""
    inclusion, ordering = _inclusion_and_ordering(prompt, response)
    return inclusion + ordering


def _inclusion_and_ordering(prompt: Sequence[int], response: Sequence[int]) -> tuple[int, int]:
    kept = response[: len(prompt)]
    present = set(kept)
    inclusion = sum(1 for x in prompt if x in present)
    ordering = sum(1 for x, y in pairwise(kept) if x <= y)
    return inclusion, ordering


def grade_sort(completion: str, reference: object, prompt: str | None) -> Score:
    """Value = the chosen metric normalised to [0, 1]: distance / n, inclusion_ordering / (2n - 1).

    `reference` is the list of numbers to sort, a string holding them, or
    {"numbers": [...], "metric": "inclusion_ordering" | "distance"}; when it is None or
    empty the numbers are parsed from the prompt. The response is `parse_numbers` of the
    text after the last `</think>` (all of it when there is none). n == 1 needs no special
    case: 2n - 1 = 1 and the single number's inclusion is the whole score.
    """
    numbers, metric = _parse_reference(reference)
    if not numbers:
        numbers = parse_numbers(prompt or "")
    if not numbers:
        raise InvalidItem("reference: no numbers to sort; give a list of ints or a prompt that lists them")
    n = len(numbers)
    response = parse_numbers(_answer_part(completion))
    inclusion, ordering = _inclusion_and_ordering(numbers, response)
    distance = sort_distance_reward(numbers, response)
    value = distance / n if metric == "distance" else (inclusion + ordering) / (2 * n - 1)
    details = {
        "metric": metric,
        "distance": distance,
        "inclusion_ordering": inclusion + ordering,
        "inclusion": inclusion,
        "ordering": ordering,
        "n": n,
        "response": response[:n],
        "missing_numbers": max(0, n - len(response)),
        "extra_numbers": max(0, len(response) - n),
    }
    return Score(value, details)


def parse_numbers(text: str) -> list[int]:
    """The longest run of integers (the last one on ties) separated by spaces, commas or brackets.

    Taking one run skips stray numbers in the surrounding words ("Sort these 4 numbers: 3 1 0 2").
    """
    best: list[str] = []
    for run in _RUN.finditer(text):
        tokens = _INT.findall(run.group())
        if len(tokens) >= len(best):
            best = tokens
    return [_to_int(token) for token in best]


def _to_int(token: str) -> int:
    # Numbers beyond int64 clamp to its bounds: they keep their order, never reach int()'s
    # 4300-digit limit, and stay serialisable by JSON encoders limited to 64 bits.
    digits = token.removeprefix("-")
    value = _INT64 if len(digits) > 19 else min(int(digits), _INT64)
    return -value if token.startswith("-") else value


def _answer_part(completion: str) -> str:
    """What follows the last </think>; the whole completion when there is none."""
    return completion.rpartition("</think>")[2]


def _parse_reference(reference: object) -> tuple[list[int], str]:
    metric = "inclusion_ordering"
    numbers: Any = reference
    if isinstance(reference, dict):
        numbers = reference.get("numbers")
        metric = reference.get("metric") or metric
        if metric not in METRICS:
            raise InvalidItem(f"reference.metric: unknown metric {metric!r}; expected one of {list(METRICS)}")
    if numbers is None:
        return [], metric
    if isinstance(numbers, str):
        return parse_numbers(numbers), metric
    if not isinstance(numbers, list) or not all(type(x) is int for x in numbers):
        raise InvalidItem(
            f'reference: expected a list of ints or {{"numbers": [ints], "metric": ...}}, got {str(reference)[:100]}'
        )
    return numbers, metric
