"""Turning OpenRLHF and slime calls into native items (pure logic, no server)."""

from __future__ import annotations

import pytest

from reward_api.compat import item_from_label, openrlhf_items, response_from_query


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


@pytest.mark.parametrize(
    ("query", "prompt", "response"),
    [
        (
            "<|im_start|>user\nQ<|im_end|>\n<|im_start|>assistant\nA<|im_end|>",
            "<|im_start|>user\nQ<|im_end|>\n<|im_start|>assistant\n",
            "A",
        ),
        ("Q A</s>", "Q", " A"),
        ("Q A<|endoftext|><|endoftext|>", "Q", " A"),
        ("A without its prompt", "missing prompt", "A without its prompt"),
        ("A", None, "A"),
    ],
)  # fmt: skip
def test_response_from_query(query, prompt, response) -> None:
    assert response_from_query(query, prompt) == response.rstrip()


def test_openrlhf_items_accept_short_or_empty_prompt_and_label_lists() -> None:
    items = openrlhf_items(["Q1 \\boxed{1}", "Q2 \\boxed{2}"], [], ["1"])
    assert [(i["completion"], i["prompt"], i["reference"]) for i in items] == [
        ("Q1 \\boxed{1}", None, "1"), ("Q2 \\boxed{2}", None, None),
    ]  # fmt: skip
