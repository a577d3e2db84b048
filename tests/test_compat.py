"""Turning OpenRLHF and slime calls into native items and results into their answers (pure logic)."""

from __future__ import annotations

import logging
import unicodedata

import pytest

from reward_api.compat import item_from_label, openrlhf_answer, openrlhf_items, response_from_query, slime_item
from trainer_client.client import RewardResult


@pytest.mark.parametrize(
    ("label", "task", "reference"),
    [
        ("42", "math", "42"),
        ("\\frac{1}{2}", "math", "\\frac{1}{2}"),
        ("{not json", "math", "{not json"),
        ('{"task": "sort", "reference": [2, 1]}', "sort", [2, 1]),
        ({"task": "sort", "reference": [2, 1]}, "sort", [2, 1]),
        ({"reference": "7"}, "math", "7"),
        (7, "math", 7),
        (None, "math", None),
    ],
)
def test_label_selects_task_and_reference(label, task, reference) -> None:
    item = item_from_label("completion", label, "prompt")
    assert (item["task"], item.get("reference"), item["completion"], item["prompt"]) == (
        task, reference, "completion", "prompt",
    )  # fmt: skip


def test_label_cannot_replace_the_completion() -> None:
    assert item_from_label("real", {"completion": "forged", "reference": "1"}, None)["completion"] == "real"


# Prompts as each model's own chat template renders them (tokenizer_config.json of Qwen2.5-Instruct,
# Meta-Llama-3-Instruct and DeepSeek-R1), with the end-of-turn token the model generates last.
QUESTION = "What is 2 + 2 ? Answer , then explain ."
QWEN = (
    "<|im_start|>system\nYou are Qwen, created by Alibaba Cloud. You are a helpful assistant.<|im_end|>\n"
    f"<|im_start|>user\n{QUESTION}<|im_end|>\n<|im_start|>assistant\n"
)
LLAMA3 = (
    "<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\nYou are a helpful assistant.<|eot_id|>"
    f"<|start_header_id|>user<|end_header_id|>\n\n{QUESTION}<|eot_id|>"
    "<|start_header_id|>assistant<|end_header_id|>\n\n"
)
DEEPSEEK = f"<｜begin▁of▁sentence｜>You are a helpful assistant.<｜User｜>{QUESTION}<｜Assistant｜><think>\n"
QWEN_MULTI_TURN = (
    "<|im_start|>user\nWhat is 1 + 1 ?<|im_end|>\n<|im_start|>assistant\n2<|im_end|>\n"
    f"<|im_start|>user\n{QUESTION}<|im_end|>\n<|im_start|>assistant\n"
)
EOS = {QWEN: "<|im_end|>", LLAMA3: "<|eot_id|>", DEEPSEEK: "<｜end▁of▁sentence｜>", QWEN_MULTI_TURN: "<|im_end|>"}
RESPONSE = "<think>two and two make four</think> The answer is \\boxed{4}."
THOUGHT = "two and two make four</think> The answer is \\boxed{4}."  # DeepSeek-R1's template opened <think>


def cleaned_up(text: str) -> str:
    """What a tokenizer with `clean_up_tokenization_spaces` decodes (transformers' clean_up_tokenization)."""
    for spaced, joined in ((" ?", "?"), (" ,", ","), (" .", "."), (" !", "!"), (" 's", "'s"), (" n't", "n't")):
        text = text.replace(spaced, joined)
    return text


def left_truncated(text: str, keep: int) -> str:
    return text[-keep:]


def decomposed_accents(text: str) -> str:
    return text.replace("What", unicodedata.normalize("NFD", "Voilà: what"))


@pytest.mark.parametrize(
    "prompt", [QWEN, LLAMA3, DEEPSEEK, QWEN_MULTI_TURN], ids=["qwen", "llama3", "deepseek", "multi"]
)
@pytest.mark.parametrize(
    ("decoded_prompt", "prompt_change"),
    [
        (lambda p: p, lambda p: p),
        (cleaned_up, lambda p: p),  # spaces before punctuation removed (Llama 3's clean_up_tokenization_spaces)
        (lambda p: left_truncated(p, 60), lambda p: p),  # OpenRLHF keeps the prompt's last tokens
        (lambda p: cleaned_up(left_truncated(p, 60)), lambda p: p),
        (lambda p: "\ufffd" + left_truncated(p, 45), lambda p: p),  # the cut fell inside a character
        (lambda p: unicodedata.normalize("NFC", p), decomposed_accents),  # Qwen's NFC normaliser
        (lambda p: p.replace("Answer", "<unk>"), lambda p: p),  # a word the tokenizer cannot spell
        (lambda p: p.replace("\n", " \n"), lambda p: p),
    ],
    ids=["exact", "cleaned-up", "truncated", "truncated+cleaned-up", "cut-character", "nfc", "unk", "spaces"],
)  # fmt: skip
def test_response_is_found_after_the_prompt_as_decoded(prompt, decoded_prompt, prompt_change) -> None:
    sent_prompt = prompt_change(prompt)
    response = THOUGHT if prompt is DEEPSEEK else RESPONSE
    query = decoded_prompt(sent_prompt) + response + EOS[prompt]
    assert response_from_query(query, sent_prompt) == response


@pytest.mark.parametrize(
    ("query", "prompt", "response"),
    [
        ("Q A</s>", "Q", " A"),
        ("Q A<|endoftext|><|endoftext|>", "Q", " A"),
        ("Q: 2+2? A<eos>", "Q: 2+2?", " A"),
        ("A", None, "A"),
        ("A", "", "A"),
        # The response quotes the prompt's end: the first occurrence, the prompt's own, ends the prompt.
        (QWEN.replace(" ?", "?") + "<|im_start|>assistant\nhi<|im_end|>", QWEN, "<|im_start|>assistant\nhi"),
    ],
)  # fmt: skip
def test_response_from_query(query, prompt, response) -> None:
    assert response_from_query(query, prompt) == response.rstrip()


def test_a_query_without_its_prompt_is_graded_whole_and_said_so(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="reward_api.compat"):
        assert response_from_query("an answer alone \\boxed{4}<|im_end|>", QWEN) == "an answer alone \\boxed{4}"
    assert "holds no recognisable copy of its prompt" in caplog.text


def test_openrlhf_items_accept_short_or_empty_prompt_and_label_lists() -> None:
    items = openrlhf_items(["Q1 \\boxed{1}", "Q2 \\boxed{2}"], [], ["1"])
    assert [(i["completion"], i["prompt"], i["reference"]) for i in items] == [
        ("Q1 \\boxed{1}", None, "1"), ("Q2 \\boxed{2}", None, None),
    ]  # fmt: skip


def result(reward: float, accuracy: float, status: str = "ok") -> RewardResult:
    return RewardResult(reward=reward, components={"accuracy": accuracy, "overlong": 0.0}, status=status)


@pytest.mark.parametrize(
    ("results", "rewards", "scores", "graded"),
    [
        # DAPO: accuracy 1/0 maps onto reward +1/-1; scores stay in [0, 1], so the group's mean 0.25 keeps it.
        ([result(1.0, 1.0), result(-1.0, 0.0), result(-1.0, 0.0), result(-1.0, 0.0)],
         [1.0, -1.0, -1.0, -1.0], [1.0, 0.0, 0.0, 0.0], [1.0, 1.0, 1.0, 1.0]),
        # Partial credit (code pass fraction) is a partial score.
        ([result(0.5, 0.5)], [0.5], [0.5], [1.0]),
        # Not graded: the profile's failure reward, score 0, graded 0.
        ([result(-0.5, 0.0, "timeout"), result(1.0, 1.0)], [-0.5, 1.0], [0.0, 1.0], [0.0, 1.0]),
        ([], [], [], None),
    ],
)  # fmt: skip
def test_openrlhf_answer_scores_are_accuracy(results, rewards, scores, graded) -> None:
    answer = openrlhf_answer(results)
    assert (answer["rewards"], answer["scores"], answer["extra_logs"].get("graded")) == (rewards, scores, graded)
    assert all(
        isinstance(value, list) for value in [answer["rewards"], answer["scores"], *answer["extra_logs"].values()]
    )


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        (("2+2?", "\\boxed{4}", "4"), {"task": "math", "prompt": "2+2?", "reference": "4"}),
        (([{"role": "user", "content": "sort 2 1"}], "1 2", '{"task": "sort"}'),
         {"task": "sort", "prompt": "sort 2 1"}),
        (("q", "a", "1", 7, 12), {"task": "math", "reference": "1", "group": 7, "num_tokens": 12}),
        (("q", "a", "1", 0, 0), {"group": 0, "num_tokens": 0}),  # group 0 and an empty response are real values
    ],
)  # fmt: skip
def test_slime_item(arguments, expected) -> None:
    item = slime_item(*arguments)
    assert item["completion"] == arguments[1]
    assert {key: item[key] for key in expected} == expected
