"""Empty and degenerate completions earn nothing, under every preset and every component alone, through the real
service: no component pays for an empty completion or an empty chain of thought (a policy finds those first)."""

from __future__ import annotations

import pytest

from reward_api.local import LocalServer
from reward_api.profiles import COMPONENTS, PRESETS
from tests.test_service import grade

# (completion, why it is degenerate); the reference is "4"
DEGENERATE = [
    ("", "empty"),
    ("   \n\t ", "whitespace only"),
    ("<think></think>", "an empty think block, no answer"),
    ("<think>\n \n</think>\n", "a blank think block, no answer"),
    ("<think></think>\\boxed{}", "an empty think block and an empty box"),
    ("<think> </think><answer></answer>", "empty think and answer tags"),
    ("</think>", "the template-opened block, empty"),
    ("<think>.</think>\\boxed{5}", "a thought of punctuation, a wrong answer"),
]
# Right answers with an empty thought: accuracy pays, nothing else does (no format, language or shortness bonus).
EMPTY_THOUGHT_RIGHT = ["<think></think>\\boxed{4}", "<think>  </think>The answer is \\boxed{4}."]


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_degenerate_completions_earn_nothing(server: LocalServer, preset: str) -> None:
    items = [{"id": why, "task": "math", "completion": text, "reference": "4"} for text, why in DEGENERATE]
    for result in grade(server, items, preset):
        assert result["status"] == "ok", result
        assert result["reward"] <= 0.0, (preset, result["id"], result["components"])
        assert all(value <= 0.0 for value in result["components"].values()), (preset, result["id"], result)


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_a_right_answer_with_an_empty_thought_earns_only_its_accuracy(server: LocalServer, preset: str) -> None:
    items = [{"task": "math", "completion": text, "reference": "4"} for text in EMPTY_THOUGHT_RIGHT]
    for result in grade(server, items, preset):
        assert result["status"] == "ok", result
        others = {name: value for name, value in result["components"].items() if name != "accuracy"}
        assert all(value <= 0.0 for value in others.values()), (preset, result["components"])
        assert result["components"]["accuracy"] > 0.0 and set(result["components"]) <= set(COMPONENTS)
