"""DeepSeek-R1 language consistency: the share of the chain of thought's words in one language.

Chain of thought: as reward_api/graders/thought.py finds it (the `<think>` block, or all of a
completion without one).

Target language, in this order (details `target_source`):
- "item": the item's `target_language`; "profile": the profile's `language.target_language`.
  An unknown code there makes the item invalid, naming the field: it is an input error.
- "prompt": the prompt's language, only when the detection is confident (details
  `prompt_language` shows the guess, its words and margin either way). The language must
  hold a majority of the prompt's words and be implied by its script (Han, Kana, Hangul,
  Greek, ...; also a shared script of which lingua's configured languages leave only one,
  such as Cyrillic -> ru by default), or, for a shared script (Latin), come from at least
  _PROMPT_MIN_WORDS words and be at least _PROMPT_MIN_MARGIN times as likely as the
  runner-up: short prompts are ambiguous ("Compute 2+2." reads as German).
- "dominant": otherwise (no prompt, a prompt of math only, a short prompt): R1's goal is
  "no mixing", so the target is the chain of thought's own most common language, counted
  a second time with it as the target so that _TARGET_PRIOR protects its short sentences.
Nothing else makes an item invalid: without a target the value measures consistency.

Unit: a word is a run of letters of one script; each Han or Kana character is a word of
its own (no segmenter: Chinese words average about 1.5 characters, so Chinese weighs a
little more than with a dictionary segmenter, the same way in every completion). Digits,
punctuation, math symbols, LaTeX commands (`\\frac`), single letters of alphabetic scripts
(math variables such as x or α) and common math function names (sin, log, ...) are neutral.

Attribution, sentence by sentence (sentences end at . ! ? ; 。！？； or a newline):
- Han counts as Japanese in a sentence that also has Kana (Japanese mixes kanji with
  kana; Chinese never uses kana), else Chinese; Kana is Japanese, Hangul Korean, and the
  other single-language scripts (Greek, Hebrew, Thai, ...) their language.
- Scripts shared by several languages (Latin, Cyrillic, Arabic, Devanagari): lingua,
  choosing among `settings.languages` plus the target, identifies each sentence's words
  of that script. Short sentences are ambiguous, so the target gets the benefit of the
  doubt: its likelihood is weighted 1.5 (see _TARGET_PRIOR). When lingua knows no
  language of the script, its words count as the script's main language (Cyrillic: ru,
  Arabic: ar, Devanagari: hi, Latin: "und", undetermined).
- Letters of scripts outside the table count as "und".

Value = target words / counted words; 0.0 with details `note: "no words"` when nothing is
counted: an empty chain of thought (or one of symbols only) earns nothing, or a policy would
learn to stop thinking for a consistency reward it cannot lose.

lingua's models are loaded lazily, once per process and language set, and shared by all
detectors of the process: lazy loading keeps lingua on the calling thread, whereas
`with_preloaded_language_models()` starts a thread pool. A worker calls `preload()` at start.
"""

from __future__ import annotations

import re
from collections import Counter

from lingua import IsoCode639_1, Language, LanguageDetector, LanguageDetectorBuilder

from reward_api.graders.base import InvalidItem, Score
from reward_api.graders.thought import chain_of_thought
from reward_api.profiles import LanguageSettings

UNIT = "word (a run of letters of one script; each Han or Kana character is one word)"
_UNDETERMINED = "und"

# script -> (letters, the language the script alone implies)
_SCRIPTS: dict[str, tuple[str, str]] = {
    "han": ("\u3005\u3007\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002fa1f", "zh"),
    "kana": ("\u3041-\u3096\u309d-\u309f\u30a1-\u30fa\u30fc-\u30ff\u31f0-\u31ff\uff66-\uff9d", "ja"),
    "hangul": ("\u1100-\u11ff\u3131-\u318e\uac00-\ud7a3", "ko"),
    "latin": ("A-Za-z\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u024f\u0300-\u036f\u1e00-\u1eff", _UNDETERMINED),
    "cyrillic": ("\u0400-\u0481\u048a-\u052f", "ru"),
    "arabic": ("\u0610-\u061a\u0620-\u065f\u066e-\u06d3\u06d5-\u06ef\u06fa-\u06ff", "ar"),
    "devanagari": ("\u0900-\u0963\u0971-\u097f", "hi"),
    "greek": ("\u0386\u0388-\u03ff\u1f00-\u1ffe", "el"),
    "hebrew": ("\u0591-\u05c7\u05d0-\u05ea\u05f0-\u05f2", "he"),
    "thai": ("\u0e01-\u0e3a\u0e40-\u0e4e", "th"),
    "armenian": ("\u0531-\u0556\u0561-\u0587", "hy"),
    "georgian": ("\u10a0-\u10ff", "ka"),
    "bengali": ("\u0980-\u09e3", "bn"),
    "gurmukhi": ("\u0a00-\u0a63", "pa"),
    "gujarati": ("\u0a80-\u0ae3", "gu"),
    "tamil": ("\u0b80-\u0bd7", "ta"),
    "telugu": ("\u0c00-\u0c63", "te"),
}
_IDENTIFIED = ("latin", "cyrillic", "arabic", "devanagari")
_BY_SCRIPT = frozenset(lang for script, (_, lang) in _SCRIPTS.items() if script not in _IDENTIFIED)
_SINGLE_LETTERS_NEUTRAL = frozenset({"latin", "cyrillic", "greek", "other"})
# Function names a math CoT writes without a backslash; they belong to no language.
_MATH_WORDS = frozenset(
    {"sin", "cos", "tan", "cot", "sec", "csc", "arcsin", "arccos", "arctan"}
    | {"log", "ln", "lg", "exp", "lim", "det", "gcd", "lcm", "mod"}
)
_ALL_LETTERS = "".join(letters for letters, _ in _SCRIPTS.values())
# One alternative per script, each a single character class: matching is linear.
_TOKENS = re.compile(
    "|".join(f"(?P<{script}>[{letters}]+)" for script, (letters, _) in _SCRIPTS.items())
    + r"|(?P<command>\\[A-Za-z]+)|(?P<stop>[.!?;\n。！？；])"
    + rf"|(?P<other>[^\W\d_{_ALL_LETTERS}]+)"
)
# A sentence counts as another language than the target only when lingua finds it at least
# this many times as likely: short sentences are ambiguous ("Let me compute" scores German
# 0.35, English 0.26). On 60 hand-written 3-6 word sentences in en/fr/de/es/pt/it, 1.5 lost
# none to another language (1.0 lost 1) and credited 5 of 300 to a wrong target (2.0: 10).
_TARGET_PRIOR = 1.5
# The prompt sets the target only when lingua is sure of it. On 92 short prompts in
# en/fr/de/es/zh/ru (PROMPT_TABLE in tests/test_language_grader.py), every wrong guess had a margin
# (likelihood of the best language / the runner-up's) of at most 1.43 ("Compute 2+2.": de 0.375,
# en 0.27; "sort: 3 1 2 ->": fr); a margin of 2 with 3 words leaves 66 of 92 prompts confident
# and none wrong (1.5 would be 71, too close to 1.43; 3 only 57). A prompt not confident costs
# little: the chain of thought is then held to its own dominant language.
_PROMPT_MIN_WORDS = 3
_PROMPT_MIN_MARGIN = 2.0
# lingua's time grows faster than linearly with word length (a 1 MB "word" takes minutes);
# this much text settles a sentence's language.
_MAX_DETECT_CHARS = 2000
_MAX_LISTED_LANGUAGES = 8
# One short text per identified script, with words long enough to load every n-gram order.
_WARM_UP = ("language detection warmup", "определение языка", "تحديد اللغة", "भाषा पहचान")

_CODES = {language: language.iso_code_639_1.name.lower() for language in Language.all()}
_NAMES = {language.name.lower(): code for language, code in _CODES.items()}
_DETECTORS: dict[frozenset[str], LanguageDetector | None] = {}


def grade_language(
    completion: str, prompt: str | None, target_language: str | None, settings: LanguageSettings
) -> Score:
    cot = _Words(chain_of_thought(completion))
    details: dict[str, object] = {}
    if target_language:
        target, source = _language_code(target_language, "target_language"), "item"
    elif settings.target_language:
        target, source = _language_code(settings.target_language, "language.target_language"), "profile"
    else:
        target, source = None, "prompt"
        if prompt and prompt.strip():
            target, details["prompt_language"] = _prompt_language(prompt, settings)
    if target is None:
        source = "dominant"
        target, counts = _dominant_language(cot, settings)
    else:
        counts = cot.count(_lingua_codes(settings, target), target)
    total = sum(counts.values())
    hits = counts[target] if target else 0
    details = {
        "target_language": target,
        "target_source": source,
        "unit": UNIT,
        "counted_words": total,
        "target_words": hits,
        "words_by_language": dict(counts.most_common(_MAX_LISTED_LANGUAGES)),
    } | details
    if not total:
        details["note"] = "no words"
    return Score(hits / total if total else 0.0, details)


def preload(settings: LanguageSettings | None = None) -> None:
    """Build the detector for `settings` (default: LanguageSettings()) and load its models now."""
    settings = settings or LanguageSettings()
    given = settings.target_language
    target = _language_code(given, "language.target_language") if given else None
    _detector(_lingua_codes(settings, target))


def _prompt_language(prompt: str, settings: LanguageSettings) -> tuple[str | None, dict[str, object]]:
    """The prompt's language when the detection is confident, else None; and what was seen."""
    words = _Words(prompt)
    blocks = Counter({language: n for language, n in words.implied.items() if language != _UNDETERMINED})
    blocks.update({script: sum(sentences.values()) for script, sentences in words.sentences.items() if sentences})
    if not blocks:
        return None, {"guess": None, "words": 0, "margin": None, "confident": False}
    block, count = blocks.most_common(1)[0]
    guess, margin = block, None  # a script that implies its language: 计算 3 加 4。
    if block in _IDENTIFIED:
        guess, margin = _identify_script(words.sentences[block], _detector(_lingua_codes(settings, None)), block)
    confident = (
        guess != _UNDETERMINED
        and count * 2 > sum(blocks.values())
        and (margin is None or (count >= _PROMPT_MIN_WORDS and margin >= _PROMPT_MIN_MARGIN))
    )
    seen = {
        "guess": guess,
        "words": count,
        "margin": None if margin is None else round(margin, 2),
        "confident": confident,
    }
    return (guess if confident else None), seen


def _identify_script(
    sentences: Counter[str], detector: LanguageDetector | None, script: str
) -> tuple[str, float | None]:
    """lingua's language for all the words of one shared script, with its margin over the runner-up.

    The margin is None when lingua's rules leave one language (letters only it uses, or the only
    configured language of the script); when lingua knows none, the script's main language.
    """
    text = " ".join(sentences)[:_MAX_DETECT_CHARS]
    values = detector.compute_language_confidence_values(text) if detector else []
    if not values or not values[0].value:
        return _SCRIPTS[script][1], None
    runner_up = values[1].value if len(values) > 1 else 0.0
    return _CODES[values[0].language], (values[0].value / runner_up if runner_up else None)


def _dominant_language(cot: _Words, settings: LanguageSettings) -> tuple[str | None, Counter[str]]:
    """The chain of thought's most common language and its word counts with that language as the target."""
    first = cot.count(_lingua_codes(settings, None), None)
    identified = [language for language, _ in first.most_common() if language != _UNDETERMINED]
    if not identified:
        return (_UNDETERMINED if first else None), first
    return identified[0], cot.count(_lingua_codes(settings, identified[0]), identified[0])


def _language_code(value: str, field: str) -> str:
    """An ISO 639-1 code lingua knows, from a code ("en", "zh-CN", "pt_BR") or a name ("French")."""
    text = value.strip().lower()
    code = text.replace("_", "-").split("-")[0]
    if code in _CODES.values():
        return code
    if text in _NAMES:
        return _NAMES[text]
    raise InvalidItem(f"{field}: unknown language {value!r}; expected an ISO 639-1 code such as 'en' or 'zh'")


def _lingua_codes(settings: LanguageSettings, target: str | None) -> frozenset[str]:
    codes = {_language_code(code, "language.languages") for code in settings.languages}
    if target:
        codes.add(target)
    return frozenset(codes - _BY_SCRIPT)


def _detector(codes: frozenset[str]) -> LanguageDetector | None:
    """One detector per language set and process, built on first use."""
    if codes not in _DETECTORS:
        _DETECTORS[codes] = _build_detector(codes) if codes else None
    return _DETECTORS[codes]


def _build_detector(codes: frozenset[str]) -> LanguageDetector:
    isos = [IsoCode639_1.from_str(code) for code in sorted(codes)]
    detector = LanguageDetectorBuilder.from_iso_codes_639_1(*isos).build()
    # Load the models now rather than during the first item, which has a deadline.
    for sample in _WARM_UP:
        detector.detect_language_of(sample)
    return detector


class _Words:
    """A text's words by sentence: counts of the languages their script implies; shared-script sentences."""

    def __init__(self, text: str) -> None:
        self.implied: Counter[str] = Counter()
        # Degenerate completions repeat the same sentence thousands of times: each is identified once.
        self.sentences: dict[str, Counter[str]] = {script: Counter() for script in _IDENTIFIED}
        self._identified: dict[frozenset[str], dict[str, list[tuple[str, float]]]] = {}
        self._words: dict[str, list[str]] = {script: [] for script in _IDENTIFIED}
        self._han = self._kana = 0
        for match in _TOKENS.finditer(text):
            script = match.lastgroup or ""
            if script == "stop":
                self._end_sentence()
            elif script != "command":
                self._add(script, match.group())
        self._end_sentence()

    def count(self, codes: frozenset[str], target: str | None) -> Counter[str]:
        """Words per language, lingua choosing among `codes` with the target favoured by _TARGET_PRIOR."""
        if codes not in self._identified:  # a second count with the same languages reuses lingua's work
            detector = _detector(codes)
            self._identified[codes] = {
                sentence: _likelihoods(detector, sentence)
                for sentences in self.sentences.values()
                for sentence in sentences
            }
        likelihoods = self._identified[codes]
        counts = Counter(self.implied)
        for script, sentences in self.sentences.items():
            for sentence, words in sentences.items():
                counts[_most_likely(likelihoods[sentence], target) or _SCRIPTS[script][1]] += words
        return counts

    def _add(self, script: str, token: str) -> None:
        if script == "han":
            self._han += len(token)
        elif script == "kana":
            self._kana += len(token)
        elif (len(token) == 1 and script in _SINGLE_LETTERS_NEUTRAL) or token.lower() in _MATH_WORDS:
            return
        elif script in self._words:
            self._words[script].append(token)
        else:
            self.implied[_SCRIPTS[script][1] if script in _SCRIPTS else _UNDETERMINED] += 1

    def _end_sentence(self) -> None:
        if self._han:
            self.implied["ja" if self._kana else "zh"] += self._han
        if self._kana:
            self.implied["ja"] += self._kana
        self._han = self._kana = 0
        for script, words in self._words.items():
            if words:
                self.sentences[script][" ".join(words)] += len(words)
                self._words[script] = []


def _likelihoods(detector: LanguageDetector | None, sentence: str) -> list[tuple[str, float]]:
    if detector is None:
        return []
    values = detector.compute_language_confidence_values(sentence[:_MAX_DETECT_CHARS])
    return [(_CODES[value.language], value.value) for value in values]


def _most_likely(likelihoods: list[tuple[str, float]], target: str | None) -> str | None:
    """lingua's most likely language, the target's likelihood weighted by _TARGET_PRIOR."""
    best, best_score = None, 0.0
    for language, value in likelihoods:
        score = value * (_TARGET_PRIOR if language == target else 1.0)
        if score > best_score:
            best, best_score = language, score
    return best
