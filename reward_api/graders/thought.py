"""Where a completion's chain of thought is: after the first `<think>` up to the next `</think>` (to the end when a
truncated completion never closes it); before `</think>` when the chat template opened the block in the prompt;
the whole completion when it has neither tag."""

from __future__ import annotations

THINK_OPEN, THINK_CLOSE = "<think>", "</think>"


def chain_of_thought(completion: str) -> str:
    open_at, close_at = completion.find(THINK_OPEN), completion.find(THINK_CLOSE)
    if open_at == -1 and close_at == -1:
        return completion
    if open_at == -1 or -1 < close_at < open_at:
        return completion[:close_at]
    begin = open_at + len(THINK_OPEN)
    end = completion.find(THINK_CLOSE, begin)
    return completion[begin:] if end == -1 else completion[begin:end]


def is_blank(thought: str) -> bool:
    """No letter or digit in it (whitespace, "...", "."): a thought in form only, which earns no bonus."""
    return not any(character.isalnum() for character in thought)


def thought_is_empty(completion: str) -> bool:
    """The completion's chain of thought is blank (an empty completion's too)."""
    return is_blank(chain_of_thought(completion))
