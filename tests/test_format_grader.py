"""The R1 format grader: strict, lenient and tag_count modes, with and without answer tags."""

from __future__ import annotations

import time

import pytest
from pydantic import ValidationError

from reward_api.graders.format import grade_format
from reward_api.profiles import FormatSettings

ANSWER_TAGS = {"answer_open": "<answer>", "answer_close": "</answer>"}

# (completion, expected value in strict mode, expected problems in strict mode)
STRICT = [
    ("<think>reasoning</think>answer", 1.0, []),
    ("  \n<think>\nreasoning\n</think>\n\nThe answer is 5.", 1.0, []),
    # The chat template opened <think> in the prompt.
    ("reasoning goes here\n</think>\nThe answer is 5.", 1.0, []),
    ("<think>reasoning</think>", 0.0, ["empty answer"]),
    ("<think>reasoning</think>  \n\t", 0.0, ["empty answer"]),
    ("<think>reasoning, never closed. The answer is 5.", 0.0, ["missing </think>"]),
    ("The answer is 5.", 0.0, ["missing </think>"]),
    ("", 0.0, ["missing </think>"]),
    ("<think>a</think><think>b</think>c", 0.0, ["2 </think> tags", "2 <think> tags"]),
    ("<think>a<think>b</think>c", 0.0, ["2 <think> tags"]),
    ("a</think>b</think>c", 0.0, ["2 </think> tags"]),
    ("Sure! <think>reasoning</think>answer", 0.0, ["text before <think>"]),
    ("</think>answer<think>", 0.0, ["</think> before <think>"]),
    ("Sure! <think>reasoning</think>", 0.0, ["text before <think>", "empty answer"]),
    ("<think></think>answer", 0.0, ["empty <think>"]),  # an empty thought earns no format reward
    ("<think> \n\t</think>answer", 0.0, ["empty <think>"]),
    ("</think>answer", 0.0, ["empty <think>"]),  # the template-opened block, empty
    ("<think></think>", 0.0, ["empty <think>", "empty answer"]),
]

# (completion, expected value in lenient mode, expected problems)
LENIENT = [
    ("<think>reasoning</think>answer", 1.0, []),
    ("Sure! <think>reasoning</think>answer", 1.0, []),
    ("reasoning</think>answer", 1.0, []),
    ("Sure! <think>reasoning</think>", 0.0, ["empty answer"]),
    ("</think>answer<think>", 0.0, ["</think> before <think>"]),
    ("<think>a</think>b<think>c</think>d", 0.0, ["2 </think> tags", "2 <think> tags"]),
    ("no tags at all", 0.0, ["missing </think>"]),
    ("Sure! <think>\n</think>answer", 0.0, ["empty <think>"]),
    ("<think>...</think>answer", 0.0, ["empty <think>"]),  # no letter or digit: a thought in form only
    ("<think>x=2</think>answer", 1.0, []),  # a thought, however short: length rewards weigh it
]

# (completion, mode, expected value, expected problems), all with <answer> tags required
WITH_ANSWER_TAGS = [
    ("<think>r</think><answer>5</answer>", "strict", 1.0, []),
    ("<think>\nr\n</think>\n<answer>\n5\n</answer>\n", "strict", 1.0, []),
    ("<think>r</think>The answer: <answer>5</answer>", "strict", 0.0, ["text outside <answer>...</answer>"]),
    ("<think>r</think>The answer: <answer>5</answer>", "lenient", 1.0, []),
    ("<think>r</think><answer>5</answer> done", "strict", 0.0, ["text outside <answer>...</answer>"]),
    ("<think>r</think><answer> \n</answer>", "strict", 0.0, ["empty <answer>"]),
    ("<think>r</think><answer> \n</answer>", "lenient", 0.0, ["empty <answer>"]),
    ("<think>r</think>5", "strict", 0.0, ["missing <answer>", "missing </answer>"]),
    ("<think>r</think><answer>5", "lenient", 0.0, ["missing </answer>"]),
    ("<think>r</think></answer>5<answer>", "lenient", 0.0, ["</answer> before <answer>"]),
    ("<think>r</think><answer>5</answer><answer>6</answer>", "lenient", 0.0, ["2 <answer> tags", "2 </answer> tags"]),
    # Answer tags quoted inside the thinking do not count against the answer.
    ("<think>use <answer>x</answer></think><answer>5</answer>", "strict", 1.0, []),
    ("<think>r</think>", "strict", 0.0, ["empty answer"]),
]

# (completion, answer tags configured, expected value)
TAG_COUNT = [
    ("<think>r</think>answer", False, 1.0),
    ("r</think>answer", False, 0.5),
    ("<think>r<think>answer", False, 0.0),
    ("<think>r</think><answer>5</answer>", True, 1.0),
    ("<think>r</think>5", True, 0.5),
    ("r</think><answer>5</answer>", True, 0.75),
    ("<think><think>r</think><answer>5</answer></answer>", True, 0.5),
    ("", True, 0.0),
    ("<think></think><answer></answer>", True, 0.0),  # every tag once, nothing in them: nothing earned
    ("<think> </think>answer", False, 0.0),
]


@pytest.mark.parametrize(("completion", "value", "problems"), STRICT)
def test_strict(completion: str, value: float, problems: list[str]) -> None:
    score = grade_format(completion, FormatSettings(mode="strict"))
    assert (score.value, score.details["problems"]) == (value, problems)


@pytest.mark.parametrize(("completion", "value", "problems"), LENIENT)
def test_lenient(completion: str, value: float, problems: list[str]) -> None:
    score = grade_format(completion, FormatSettings(mode="lenient"))
    assert (score.value, score.details["problems"]) == (value, problems)


@pytest.mark.parametrize(("completion", "mode", "value", "problems"), WITH_ANSWER_TAGS)
def test_answer_tags(completion: str, mode: str, value: float, problems: list[str]) -> None:
    score = grade_format(completion, FormatSettings(mode=mode, **ANSWER_TAGS))
    assert (score.value, score.details["problems"]) == (value, problems)


@pytest.mark.parametrize(("completion", "answer_tags", "value"), TAG_COUNT)
def test_tag_count(completion: str, answer_tags: bool, value: float) -> None:
    settings = FormatSettings(mode="tag_count", **(ANSWER_TAGS if answer_tags else {}))
    assert grade_format(completion, settings).value == value


def test_tag_count_details_name_the_counts() -> None:
    score = grade_format("<think><think>r</think>5", FormatSettings(mode="tag_count", **ANSWER_TAGS))
    assert score.details["tag_counts"] == {"<think>": 2, "</think>": 1, "<answer>": 0, "</answer>": 0}
    assert score.details["problems"] == ["2 <think> tags", "missing <answer>", "missing </answer>"]


@pytest.mark.parametrize(
    ("completion", "value", "problems"),
    [
        ("<reasoning>r</reasoning>answer", 1.0, []),
        ("<think>r</think>answer", 0.0, ["missing </reasoning>"]),
    ],
)
def test_custom_think_tags(completion: str, value: float, problems: list[str]) -> None:
    settings = FormatSettings(think_open="<reasoning>", think_close="</reasoning>")
    score = grade_format(completion, settings)
    assert (score.value, score.details["problems"]) == (value, problems)


@pytest.mark.parametrize("kwargs", [{"answer_open": "<answer>"}, {"answer_close": "</answer>"}, {"think_open": ""}])
def test_settings_reject_unpaired_or_empty_tags(kwargs: dict[str, str]) -> None:
    with pytest.raises(ValidationError):
        FormatSettings(**kwargs)


@pytest.mark.parametrize(
    "completion",
    [
        "<think>" + "a" * 2_000_000 + "</think>" + "b" * 1_000_000,
        "<" * 1_000_000 + "</think" * 200_000,
        "<think>" * 200_000 + "</think>" * 200_000 + "<answer>" * 100_000,
    ],
)
@pytest.mark.parametrize("mode", ["strict", "lenient", "tag_count"])
def test_megabyte_inputs_take_linear_time(completion: str, mode: str) -> None:
    settings = FormatSettings(mode=mode, **ANSWER_TAGS)
    start = time.perf_counter()
    grade_format(completion, settings)
    assert time.perf_counter() - start < 0.5
