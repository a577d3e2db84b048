"""Length shaping and repetition: DAPO soft overlong, open-r1 cosine, Kimi k1.5, n-gram repetition.

Pure functions; lengths are in tokens (see `estimate_num_tokens` when an item gives none).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

from reward_api.graders.base import Score
from reward_api.profiles import LengthSettings

# Han, Kana and Hangul: scripts written without spaces between words (Hangul has them,
# but tokenizers split it finely), so each character is its own piece.
_CJK = "\u1100-\u11ff\u3040-\u30ff\u3130-\u318f\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7a3\uf900-\ufaff"
_TOKEN_PIECE = re.compile(rf"[{_CJK}]|[^\W\d_{_CJK}]+|\d{{1,3}}|[^\w\s]")
_REPETITION_WORD = re.compile(rf"[{_CJK}]|[^\s{_CJK}]+")
# Letters per token for alphabetic words: BPE vocabularies keep short words whole and
# split long ones; 6 gives 1.24 per word on this project's English docs (the usual figure is ~1.3).
_LETTERS_PER_TOKEN = 6


def soft_overlong_punishment(length: int, max_length: int, cache_length: int) -> float:
    """DAPO: 0 up to max_length - cache_length, then linear down to -1 at max_length, -1 beyond.

    cache_length == 0 is a hard cut: 0 up to max_length, -1 beyond.
    """
    if not 0 <= cache_length <= max_length:
        raise ValueError(f"need 0 <= cache_length <= max_length, got {cache_length} and {max_length}")
    soft_start = max_length - cache_length
    if length <= soft_start:
        return 0.0
    if length <= max_length:
        return (soft_start - length) / cache_length
    return -1.0


def cosine_scaled_reward(correct: bool, length: int, settings: LengthSettings) -> float:
    """open-r1's cosine schedule over [0, cosine_max_length].

    Correct answers go from max_value_correct (length 0) down to min_value_correct; for
    wrong answers min and max are swapped, so they go from min_value_wrong up to
    max_value_wrong: longer wrong answers are penalised less. Unlike open-r1, lengths past
    cosine_max_length keep the end value instead of climbing back along the cosine.
    """
    if length < 0:
        raise ValueError(f"length must be >= 0, got {length}")
    if correct:
        low, high = settings.cosine_min_value_correct, settings.cosine_max_value_correct
    else:
        low, high = settings.cosine_max_value_wrong, settings.cosine_min_value_wrong
    progress = min(length / settings.cosine_max_length, 1.0)
    return low + 0.5 * (high - low) * (1.0 + math.cos(progress * math.pi))


def kimi_length_rewards(lengths: Sequence[int], correct: Sequence[bool]) -> list[float]:
    """Kimi k1.5 over the k samples of one prompt: shorter than the group's midpoint earns
    up to +0.5 when correct; wrong answers only ever lose (min(0, lambda))."""
    if len(lengths) != len(correct):
        raise ValueError(f"{len(lengths)} lengths but {len(correct)} correctness flags")
    if not lengths:
        return []
    low, high = min(lengths), max(lengths)
    if low == high:
        return [0.0] * len(lengths)
    rewards = []
    for length, ok in zip(lengths, correct, strict=True):
        lam = 0.5 - (length - low) / (high - low)
        rewards.append(lam if ok else min(0.0, lam))
    return rewards


def grade_repetition(completion: str, settings: LengthSettings) -> Score:
    """open-r1's n-gram repetition penalty: (1 - unique/total n-grams) * max_penalty.

    Words are lower-cased whitespace-separated pieces, as in open-r1, except that each
    Han/Kana/Hangul character is a word of its own (Chinese has no spaces to split on).
    0 when there are fewer words than the n-gram size.
    """
    words = _REPETITION_WORD.findall(completion.lower())
    size = settings.repetition_ngram_size
    if len(words) < size:
        return Score(0.0, {"ngram_size": size, "ngrams": 0, "unique_ngrams": 0})
    ngrams = list(zip(*(words[i:] for i in range(size)), strict=False))
    unique = len(set(ngrams))
    # + 0.0 turns the -0.0 of a repetition-free text into 0.0.
    value = (1 - unique / len(ngrams)) * settings.repetition_max_penalty + 0.0
    return Score(value, {"ngram_size": size, "ngrams": len(ngrams), "unique_ngrams": unique})


def estimate_num_tokens(text: str) -> int:
    """A tokenizer-free token count, for items that do not send `num_tokens`.

    Each Han/Kana/Hangul character counts 1, each run of other letters ceil(len / 6),
    each group of up to 3 digits 1 (as Llama 3 / Qwen / GPT-4 tokenizers split numbers),
    each punctuation or symbol character 1; whitespace is free. That follows the usual
    rules of thumb for BPE vocabularies (about 1.3 tokens per English word, about one per
    CJK character) but is not checked against a real tokenizer: trainers know the exact
    count and should send num_tokens.
    """
    total = 0
    for piece in _TOKEN_PIECE.findall(text):
        total += -(-len(piece) // _LETTERS_PER_TOKEN) if piece[0].isalpha() else 1
    return total
