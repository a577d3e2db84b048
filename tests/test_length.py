"""Length shaping and repetition against values computed by hand."""

from __future__ import annotations

import math

import pytest

from reward_api.graders.length import (
    cosine_scaled_reward,
    estimate_num_tokens,
    grade_repetition,
    kimi_length_rewards,
    soft_overlong_punishment,
)
from reward_api.profiles import LengthSettings

# (length, max_length, cache_length, expected): soft window (80, 100]
DAPO = [
    (0, 100, 20, 0.0),
    (80, 100, 20, 0.0),
    (81, 100, 20, -0.05),
    (85, 100, 20, -0.25),
    (90, 100, 20, -0.5),
    (100, 100, 20, -1.0),
    (101, 100, 20, -1.0),
    (10_000, 100, 20, -1.0),
    # No cache window: a hard cut at max_length.
    (100, 100, 0, 0.0),
    (101, 100, 0, -1.0),
    # The whole range is the window.
    (50, 100, 100, -0.5),
    # The paper's setting: L_max 20480, L_cache 4096.
    (16384, 20480, 4096, 0.0),
    (18432, 20480, 4096, -0.5),
]

# (correct, length, expected) with open-r1's defaults: correct 1.0 -> 0.5, wrong -1.0 -> -0.5 over 1000
COSINE = [
    (True, 0, 1.0),
    (True, 500, 0.75),
    (True, 1000, 0.5),
    (True, 250, 0.5 + 0.25 * (1 + math.cos(math.pi / 4))),
    (True, 5000, 0.5),  # clamped at the end value
    (False, 0, -1.0),
    (False, 500, -0.75),
    (False, 1000, -0.5),
    (False, 750, -0.5 - 0.25 * (1 + math.cos(3 * math.pi / 4))),
    (False, 5000, -0.5),
]

# (lengths, correct, expected); lambda = 0.5 - (len - min) / (max - min)
KIMI = [
    ([10, 20, 30], [True, True, True], [0.5, 0.0, -0.5]),
    ([10, 20, 30], [False, False, False], [0.0, 0.0, -0.5]),
    ([10, 20, 30], [True, False, True], [0.5, 0.0, -0.5]),
    ([30, 10, 15], [True, False, True], [-0.5, 0.0, 0.25]),
    ([7, 7, 7], [True, False, True], [0.0, 0.0, 0.0]),
    ([42], [True], [0.0]),
    ([], [], []),
]

# (completion, ngram size, max penalty, expected value, expected (ngrams, unique))
REPETITION = [
    ("a b c a b c", 3, -1.0, -0.25, (4, 3)),  # (a b c) (b c a) (c a b) (a b c)
    ("A B C a b c", 3, -1.0, -0.25, (4, 3)),  # lower-cased, as in open-r1
    ("a b c a b c", 3, -0.5, -0.125, (4, 3)),
    ("a a a a a", 2, -1.0, -0.75, (4, 1)),
    ("one two three four five", 3, -1.0, 0.0, (3, 3)),
    ("the cat", 3, -1.0, 0.0, (0, 0)),
    ("", 3, -1.0, 0.0, (0, 0)),
    ("好好好好", 3, -1.0, -0.5, (2, 1)),  # each Han character is a word
    ("我们计算我们计算", 2, -1.0, -3 / 7, (7, 4)),
]

# (text, expected estimate)
TOKENS = [
    ("", 0),
    ("   \n\t", 0),
    ("hello world", 2),
    ("internationalization", 4),  # 20 letters: ceil(20 / 6)
    ("12345", 2),  # 123 | 45
    ("你好世界", 4),
    ("Hello, world!", 4),
    ("x^2 + 1 = 5", 7),
    ("答案是 42。", 5),
    ("<think>", 3),
]


@pytest.mark.parametrize(("length", "max_length", "cache_length", "expected"), DAPO)
def test_soft_overlong_punishment(length: int, max_length: int, cache_length: int, expected: float) -> None:
    assert soft_overlong_punishment(length, max_length, cache_length) == pytest.approx(expected)


@pytest.mark.parametrize(("max_length", "cache_length"), [(100, 101), (100, -1)])
def test_soft_overlong_rejects_a_cache_outside_the_range(max_length: int, cache_length: int) -> None:
    with pytest.raises(ValueError, match="cache_length"):
        soft_overlong_punishment(50, max_length, cache_length)


@pytest.mark.parametrize(("correct", "length", "expected"), COSINE)
def test_cosine_scaled_reward(correct: bool, length: int, expected: float) -> None:
    assert cosine_scaled_reward(correct, length, LengthSettings()) == pytest.approx(expected)


def test_cosine_uses_the_settings() -> None:
    settings = LengthSettings(
        cosine_max_length=100,
        cosine_min_value_correct=0.0,
        cosine_max_value_correct=2.0,
        cosine_min_value_wrong=-4.0,
        cosine_max_value_wrong=0.0,
    )
    assert cosine_scaled_reward(True, 50, settings) == pytest.approx(1.0)
    assert cosine_scaled_reward(False, 0, settings) == pytest.approx(-4.0)
    assert cosine_scaled_reward(False, 100, settings) == pytest.approx(0.0)


def test_cosine_rejects_negative_lengths() -> None:
    with pytest.raises(ValueError, match="length"):
        cosine_scaled_reward(True, -1, LengthSettings())


@pytest.mark.parametrize(("lengths", "correct", "expected"), KIMI)
def test_kimi_length_rewards(lengths: list[int], correct: list[bool], expected: list[float]) -> None:
    assert kimi_length_rewards(lengths, correct) == pytest.approx(expected)


def test_kimi_rejects_mismatched_groups() -> None:
    with pytest.raises(ValueError, match="2 lengths but 1"):
        kimi_length_rewards([1, 2], [True])


@pytest.mark.parametrize(("completion", "size", "penalty", "expected", "counts"), REPETITION)
def test_grade_repetition(completion: str, size: int, penalty: float, expected: float, counts: tuple[int, int]) -> None:
    settings = LengthSettings(repetition_ngram_size=size, repetition_max_penalty=penalty)
    score = grade_repetition(completion, settings)
    assert score.value == pytest.approx(expected)
    assert (score.details["ngrams"], score.details["unique_ngrams"]) == counts


def test_repetition_free_text_is_positive_zero() -> None:
    value = grade_repetition("one two three four", LengthSettings()).value
    assert math.copysign(1.0, value) == 1.0


def test_degenerate_megabyte_loop_is_penalised_near_max() -> None:
    score = grade_repetition("so the answer is " * 250_000, LengthSettings())
    assert score.value == pytest.approx(-1.0, abs=1e-4)


@pytest.mark.parametrize(("text", "expected"), TOKENS)
def test_estimate_num_tokens(text: str, expected: int) -> None:
    assert estimate_num_tokens(text) == expected
