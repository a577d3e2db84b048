"""Turn other trainers' reward calls into native items.

A label selects the task: a JSON object (or a string holding one) such as
`{"task": "sort", "reference": [3, 1, 2]}` is used as the item's task and reference;
any other string is the reference answer of a `math` item.
"""

from __future__ import annotations

import contextlib
import json
from typing import Any

# End-of-sequence markers OpenRLHF leaves in `query` (decoded with special tokens).
_TRAILING_SPECIAL_TOKENS = ("<|im_end|>", "<|endoftext|>", "<|eot_id|>", "</s>", "<|end_of_text|>", "<eos>")


def item_from_label(completion: str, label: Any, prompt: str | None) -> dict[str, Any]:
    item: dict[str, Any] = {"task": "math", "completion": completion, "prompt": prompt}
    if isinstance(label, str) and label.lstrip().startswith("{"):
        # A string that merely starts with a brace (`{1, 2}`) stays a math answer.
        with contextlib.suppress(json.JSONDecodeError):
            label = json.loads(label)
    if isinstance(label, dict):
        item.update({k: v for k, v in label.items() if k != "completion"})
    else:
        item["reference"] = label
    return item


def response_from_query(query: str, prompt: str | None) -> str:
    """OpenRLHF sends prompt + response; grade only the response."""
    response = query
    if prompt:
        at = query.find(prompt)
        if at >= 0:
            response = query[at + len(prompt) :]
    return strip_trailing_special_tokens(response)


def strip_trailing_special_tokens(text: str) -> str:
    stripped = text.rstrip()
    changed = True
    while changed:
        changed = False
        for token in _TRAILING_SPECIAL_TOKENS:
            if stripped.endswith(token):
                stripped = stripped[: -len(token)].rstrip()
                changed = True
    return stripped


def openrlhf_items(queries: list[str], prompts: list[str], labels: list[Any]) -> list[dict[str, Any]]:
    """One item per query; prompts and labels may be shorter (OpenRLHF may send empty lists)."""
    items = []
    for i, query in enumerate(queries):
        prompt = prompts[i] if i < len(prompts) else None
        label = labels[i] if i < len(labels) else None
        items.append(item_from_label(response_from_query(query, prompt), label, prompt))
    return items
