"""The CS336 sort task: the seed rewards, responses of the wrong length, parsing, normalisation."""

from __future__ import annotations

import time

import pytest

from reward_api.graders.base import InvalidItem
from reward_api.graders.sort import (
    grade_sort,
    parse_numbers,
    sort_distance_reward,
    sort_inclusion_ordering_reward,
)

SEED_PROMPT = [3, 1, 0, 2]

# (prompt, response, distance, inclusion_ordering)
REWARDS = [
    # The seed examples, as the seed's code computes them: [7, 2, 2, 5] has its 2 in place
    # (distance 1), and [0, 3, 1, 2] earns 4 (inclusion) + 2 (0<=3, 1<=2) = 6, as the CS336
    # lecture notes it.
    (SEED_PROMPT, [0, 1, 2, 3], 4, 7),
    (SEED_PROMPT, [7, 2, 2, 5], 1, 3),
    (SEED_PROMPT, [0, 3, 1, 2], 1, 6),
    # Duplicates: every prompt token is checked for presence.
    ([2, 2, 1], [1, 2, 2], 3, 5),
    ([2, 2, 1], [2, 1, 1], 0, 4),
    # Too few numbers: missing positions and pairs earn nothing.
    (SEED_PROMPT, [0, 1], 2, 3),
    (SEED_PROMPT, [], 0, 0),
    # Too many: only the first n count, so padding cannot raise the reward.
    (SEED_PROMPT, [0, 1, 2, 3, 4, 5, 6], 4, 7),
    (SEED_PROMPT, [0] * 10, 1, 4),
    (SEED_PROMPT, [9, 0, 1, 2, 3], 0, 5),
    ([5], [5], 1, 1),
    ([5], [4, 5], 0, 0),
]

# (completion, reference, prompt, expected value, expected parsed response)
GRADES = [
    ("<think>let me sort</think>[0, 1, 2, 3]", SEED_PROMPT, None, 1.0, [0, 1, 2, 3]),
    ("0 1 2 3", {"numbers": SEED_PROMPT, "metric": "distance"}, None, 1.0, [0, 1, 2, 3]),
    ("7 2 2 5", SEED_PROMPT, None, 3 / 7, [7, 2, 2, 5]),
    ("7 2 2 5", {"numbers": SEED_PROMPT, "metric": "distance"}, None, 1 / 4, [7, 2, 2, 5]),
    ("5 7 3 2", {"numbers": SEED_PROMPT, "metric": "distance"}, None, 0.0, [5, 7, 3, 2]),
    ("0, 3, 1, 2", {"numbers": SEED_PROMPT}, None, 6 / 7, [0, 3, 1, 2]),
    ("0, 3, 1, 2", {"numbers": SEED_PROMPT, "metric": "distance"}, None, 1 / 4, [0, 3, 1, 2]),
    # Numbers in the thinking are ignored: only what follows the last </think> counts.
    ("<think>3 1 0 2 becomes 9 9 9 9 9</think>The answer is 0 1 2 3.", SEED_PROMPT, None, 1.0, [0, 1, 2, 3]),
    # The longest run wins over stray numbers in the words around it.
    ("Here are the 4 numbers sorted: (0; 1; 2; 3)", SEED_PROMPT, None, 1.0, [0, 1, 2, 3]),
    ("<answer>0 1 2 3</answer>", SEED_PROMPT, None, 1.0, [0, 1, 2, 3]),
    ("-5 -1 3", [-1, 3, -5], None, 1.0, [-5, -1, 3]),
    ("I cannot sort these.", SEED_PROMPT, None, 0.0, []),
    ("0 1", SEED_PROMPT, None, 3 / 7, [0, 1]),
    ("0 1 2 3 4 5 6 7", SEED_PROMPT, None, 1.0, [0, 1, 2, 3]),
    # n == 1: 2n - 1 = 1, the single number's inclusion is the score.
    ("5", [5], None, 1.0, [5]),
    ("4", [5], None, 0.0, [4]),
    # No reference: the numbers come from the prompt.
    ("0 1 2 3", None, "Sort these 4 numbers in ascending order: 3 1 0 2", 1.0, [0, 1, 2, 3]),
    ("0 1 2 3", [], "Sort: [3, 1, 0, 2]", 1.0, [0, 1, 2, 3]),
    ("0 1 2 3", "", "3, 1, 0, 2", 1.0, [0, 1, 2, 3]),
    ("0 1 2 3", {"numbers": [], "metric": "distance"}, "3 1 0 2", 1.0, [0, 1, 2, 3]),
    ("1 0 2 3", {"metric": "distance"}, "3 1 0 2", 0.5, [1, 0, 2, 3]),
    # A string reference is parsed like a prompt.
    ("0 1 2 3", "[3, 1, 0, 2]", None, 1.0, [0, 1, 2, 3]),
]

# (reference, prompt, message start)
INVALID = [
    (None, None, "reference: no numbers"),
    (None, "Sort the numbers, please.", "reference: no numbers"),
    ([], "", "reference: no numbers"),
    ([1, "a"], None, "reference: expected a list of ints"),
    ([True, False], None, "reference: expected a list of ints"),
    ([1.5, 2], None, "reference: expected a list of ints"),
    ({"numbers": "x"}, None, "reference: no numbers"),
    ({"numbers": 3}, None, "reference: expected a list of ints"),
    ({"numbers": [1, 2], "metric": "kendall"}, None, "reference.metric: unknown metric 'kendall'"),
    (42, None, "reference: expected a list of ints"),
]

# (text, expected numbers)
PARSE = [
    ("Sort these 4 numbers: 3 1 0 2", [3, 1, 0, 2]),
    ("[1,2] and [3, 4, 5]", [3, 4, 5]),
    ("1 2 then 3 4", [3, 4]),  # ties: the last run
    ("{1}, (2), [3]", [1, 2, 3]),
    ("a1b", [1]),
    ("1-2", [-2]),
    ("", []),
    ("no numbers here", []),
    ("9" * 5000, [2**63 - 1]),
    ("-" + "9" * 30 + " 0", [-(2**63 - 1), 0]),
]


@pytest.mark.parametrize(("prompt", "response", "distance", "inclusion_ordering"), REWARDS)
def test_seed_rewards(prompt: list[int], response: list[int], distance: int, inclusion_ordering: int) -> None:
    assert sort_distance_reward(prompt, response) == distance
    assert sort_inclusion_ordering_reward(prompt, response) == inclusion_ordering


@pytest.mark.parametrize(("completion", "reference", "prompt", "value", "response"), GRADES)
def test_grade_sort(completion: str, reference: object, prompt: str | None, value: float, response: list[int]) -> None:
    score = grade_sort(completion, reference, prompt)
    assert score.value == pytest.approx(value)
    assert score.details["response"] == response


def test_details_carry_both_raw_values() -> None:
    details = grade_sort("0, 3, 1, 2, 8", SEED_PROMPT, None).details
    assert details == {
        "metric": "inclusion_ordering",
        "distance": 1,
        "inclusion_ordering": 6,
        "inclusion": 4,
        "ordering": 2,
        "n": 4,
        "response": [0, 3, 1, 2],
        "missing_numbers": 0,
        "extra_numbers": 1,
    }


@pytest.mark.parametrize(("reference", "prompt", "message"), INVALID)
def test_invalid_references(reference: object, prompt: str | None, message: str) -> None:
    with pytest.raises(InvalidItem, match=f"^{message}"):
        grade_sort("0 1 2 3", reference, prompt)


@pytest.mark.parametrize(("text", "numbers"), PARSE)
def test_parse_numbers(text: str, numbers: list[int]) -> None:
    assert parse_numbers(text) == numbers


@pytest.mark.parametrize("answer", ["1, " * 300_000, "1 x " * 300_000, "[" * 1_000_000, "9" * 1_000_000])
def test_megabyte_answers_take_linear_time(answer: str) -> None:
    start = time.perf_counter()
    grade_sort(answer, SEED_PROMPT, None)
    assert time.perf_counter() - start < 2.0
