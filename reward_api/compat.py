"""Other trainers' reward calls as native items, and results as their answers.

The service's `/get_reward` and `/slime` endpoints and the OpenRLHF and slime adapters
(`trainer_client.adapters`) all build items here, so a sample grades the same on either path.

A label selects the task: a JSON object (or a string holding one) such as
`{"task": "sort", "reference": [3, 1, 2]}` is used as the item's task and reference;
any other string is the reference answer of a `math` item.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import unicodedata
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

log = logging.getLogger("reward_api.compat")

# End-of-sequence markers OpenRLHF leaves in `query` (decoded with special tokens): ChatML (Qwen),
# Llama 3, DeepSeek, Gemma, Phi-3, and plain end-of-text tokens.
_TRAILING_SPECIAL_TOKENS = (
    "<|im_end|>", "<|endoftext|>", "<|eot_id|>", "<|eom_id|>", "<|end_of_text|>", "</s>", "<eos>",
    "<｜end▁of▁sentence｜>", "<end_of_turn>", "<|end|>",
)  # fmt: skip
# How many visible characters of the prompt's end must match before the response may start there,
# and the longest end searched for when only part of the prompt decoded as sent.
_MIN_PROMPT_TAIL = 16
_MAX_PROMPT_TAIL = 256
# What a tokenizer leaves where a left truncation cut a multi-byte character in two.
_REPLACEMENT_CHARACTER = "\ufffd"


class Graded(Protocol):
    """A graded item on either side of the wire: the service's result or the client's."""

    @property
    def reward(self) -> float: ...
    @property
    def components(self) -> Mapping[str, float]: ...
    @property
    def status(self) -> str: ...
    @property
    def details(self) -> Mapping[str, Any]: ...


def not_computed(results: Sequence[Graded]) -> str | None:
    """ "2 of 64 rewards not computed (invalid: 1, timeout: 1); first reason: ...", or None when all were graded.

    Said wherever a protocol answers a plain number that cannot carry the status (the service's
    OpenRLHF and slime endpoints, the trainer adapters), so a failure never passes for a wrong answer.
    """
    failed = [r for r in results if r.status != "ok"]
    if not failed:
        return None
    by_status = Counter(r.status for r in failed)
    summary = ", ".join(f"{status}: {count}" for status, count in sorted(by_status.items()))
    reason = failed[0].details.get("reason", "no reason given")
    return f"{len(failed)} of {len(results)} rewards not computed ({summary}); first reason: {reason}"


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


# --- OpenRLHF -------------------------------------------------------------------------------


def openrlhf_items(
    queries: list[str], prompts: list[str], labels: list[Any], group_size: int | None = None
) -> list[dict[str, Any]]:
    """One item per query; prompts and labels are empty (OpenRLHF may omit them) or one per query
    (the request schema refuses other lengths). A prompt's samples are its group (`group_size` of them)."""
    items = []
    for i, query in enumerate(queries):
        prompt = prompts[i] if i < len(prompts) else None
        label = labels[i] if i < len(labels) else None
        items.append(grouped(item_from_label(response_from_query(query, prompt), label, prompt), prompt, group_size))
    return items


def grouped(item: dict[str, Any], prompt: str | None, group_size: int | None) -> dict[str, Any]:
    """`item` in its prompt's group, where the protocol names no group (OpenRLHF's queries, slime's --rm-url):
    the samples of one prompt, `group_size` of them in all when given (reward_api/groups.py completes the group
    across requests). A label's own `group_size` wins over the URL's: one URL serves training and evaluation,
    and an eval set whose labels say `"group_size": 4` (OpenRLHF's `--eval.n_samples_per_prompt`) is answered
    when its 4 samples are in, not after the wait for 8."""
    if prompt and prompt.strip() and "group" not in item:
        item["group"] = "prompt:" + hashlib.sha256(prompt.encode("utf-8", "surrogatepass")).hexdigest()[:24]
    if group_size is not None and "group" in item:
        item.setdefault("group_size", group_size)
    return item


def openrlhf_answer(results: Sequence[Graded]) -> dict[str, Any]:
    """`{"rewards", "scores", "extra_logs"}` as plain lists, which every OpenRLHF version reads.

    `scores` drive OpenRLHF's dynamic filtering (a prompt's group is kept when
    0 < mean score < 1), so they are the accuracy in [0, 1], never the reward: DAPO's
    [1, -1, -1, -1] scores [1, 0, 0, 0] and its group is kept. OpenRLHF takes no None
    (a null score falls back to the reward; a null reward fails its tensor), so a sample
    the service could not grade gets the profile's failure reward and score 0, and
    `extra_logs["graded"]` (1.0 graded, 0.0 not) shows it in OpenRLHF's metrics.
    """
    names = list(results[0].components) if results else []  # one profile: the same components on every result
    extra_logs = {name: [r.components.get(name, 0.0) for r in results] for name in names}
    if results:
        extra_logs["graded"] = [float(r.status == "ok") for r in results]
    return {
        "rewards": [r.reward for r in results],
        "scores": [r.components.get("accuracy", 0.0) if r.status == "ok" else 0.0 for r in results],
        "extra_logs": extra_logs,
    }


def response_from_query(query: str, prompt: str | None) -> str:
    """OpenRLHF sends prompt + response decoded with special tokens; grade only the response."""
    start = _response_start(query, prompt) if prompt and prompt.strip() else 0
    return strip_trailing_special_tokens(query[start:])


def _response_start(query: str, prompt: str) -> int:
    """Where the response begins: after the prompt as sent, else after the prompt as the tokenizer
    decoded it (normalised Unicode, cleaned-up spaces, cut on the left to fit the context)."""
    at = query.find(prompt)
    if at >= 0:
        return at + len(prompt)
    query_keys, prompt_keys = _visible(query), _visible(prompt)
    end = _end_of_prompt_prefix(query_keys, prompt_keys)
    if end is None:
        end = _end_of_prompt_tail(query_keys, prompt_keys)
    if end is None:
        log.warning(
            "OpenRLHF query holds no recognisable copy of its prompt (ends %r): grading the whole query",
            prompt[-40:],
        )
        return 0
    return _after_prompt_whitespace(query, end)


def _visible(text: str) -> list[tuple[str, int]]:
    """(character, index in text) for what survives any tokenizer's decoding: no whitespace, compatibility
    forms and accents folded (NFKC/NFC normalisers), no replacement characters."""
    keys = []
    for index, char in enumerate(text):
        for part in unicodedata.normalize("NFKD", char):
            if not part.isspace() and not unicodedata.combining(part) and part != _REPLACEMENT_CHARACTER:
                keys.append((part, index))
    return keys


def _end_of_prompt_prefix(query_keys: list[tuple[str, int]], prompt_keys: list[tuple[str, int]]) -> int | None:
    """The query starts with the end of the prompt (all of it, or what left truncation kept): the longest
    suffix of the prompt that is a prefix of the query, found with Knuth-Morris-Pratt."""
    pattern = [char for char, _ in query_keys[: len(prompt_keys)]]
    if not pattern:
        return None
    fallback = _prefix_function(pattern)
    matched = 0
    for char, _ in prompt_keys:
        while matched and (matched == len(pattern) or pattern[matched] != char):
            matched = fallback[matched - 1]
        if pattern[matched] == char:
            matched += 1
    if matched < min(_MIN_PROMPT_TAIL, len(prompt_keys)):
        return None
    return query_keys[matched - 1][1] + 1


def _prefix_function(pattern: Sequence[str]) -> list[int]:
    """fallback[i]: length of the longest proper prefix of pattern[: i + 1] that is also its suffix."""
    fallback = [0] * len(pattern)
    length = 0
    for i in range(1, len(pattern)):
        while length and pattern[i] != pattern[length]:
            length = fallback[length - 1]
        if pattern[i] == pattern[length]:
            length += 1
        fallback[i] = length
    return fallback


def _end_of_prompt_tail(query_keys: list[tuple[str, int]], prompt_keys: list[tuple[str, int]]) -> int | None:
    """Something before the end of the prompt decoded differently: the shortest end of the prompt that occurs
    once in it (the chat template's assistant marker, with enough of the question to be unique), first seen
    in the query."""
    prompt_chars = "".join(char for char, _ in prompt_keys)
    query_chars = "".join(char for char, _ in query_keys)
    for size in range(min(_MIN_PROMPT_TAIL, len(prompt_chars)), min(_MAX_PROMPT_TAIL, len(prompt_chars)) + 1):
        tail = prompt_chars[-size:]
        if prompt_chars.find(tail) == len(prompt_chars) - size:  # only at the end: unambiguous
            at = query_chars.find(tail)
            return None if at < 0 else query_keys[at + size - 1][1] + 1
    return None


def _after_prompt_whitespace(query: str, end: int) -> int:
    """Past the accents of the last matched character and the whitespace at the seam, which alignment does
    not place (the prompt's `\n` after an assistant header, or the response's own: graders ignore it)."""
    while end < len(query) and (unicodedata.combining(query[end]) or query[end].isspace()):
        end += 1
    return end


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


# --- slime ----------------------------------------------------------------------------------


def slime_item(
    prompt: Any, response: str, label: Any, group: int | str | None = None, num_tokens: int | None = None
) -> dict[str, Any]:
    """A slime sample: `response` is the response alone; the group and token count come with
    `--custom-rm-path` (Sample.group_index, Sample.response_length), not over `--rm-url`."""
    item = item_from_label(response, label, text_of(prompt))
    if group is not None:
        item["group"] = group
    if num_tokens is not None:
        item["num_tokens"] = num_tokens
    return item


def text_of(message_or_text: Any) -> str | None:
    """Prompts and completions come as text or chat messages (a list, or one dict); graders want text."""
    if message_or_text is None or isinstance(message_or_text, str):
        return message_or_text
    if isinstance(message_or_text, list):
        return "\n".join(str(m.get("content", "")) if isinstance(m, dict) else str(m) for m in message_or_text)
    if isinstance(message_or_text, dict):
        return str(message_or_text.get("content", ""))
    return str(message_or_text)
