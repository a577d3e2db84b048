"""Language consistency with the real lingua detector: zh/en mixing, Latin-script languages, targets."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from reward_api.graders import language
from reward_api.graders.base import InvalidItem
from reward_api.graders.language import grade_language, preload
from reward_api.profiles import LanguageSettings

SETTINGS = LanguageSettings()

COTS = {
    "en": "First, I need to find the sum of all integers from one to one hundred. Using the formula for "
    "an arithmetic series, the sum equals n times n plus one divided by two. Substituting gives five "
    "thousand and fifty. Let me double check by pairing the first and last terms.",
    "fr": "Tout d'abord, je dois trouver la somme de tous les entiers de un à cent. En utilisant la "
    "formule d'une série arithmétique, la somme est égale à n fois n plus un divisé par deux. En "
    "remplaçant, on obtient cinq mille cinquante. Vérifions en associant le premier et le dernier terme.",
    "de": "Zuerst muss ich die Summe aller ganzen Zahlen von eins bis hundert finden. Mit der Formel für "
    "eine arithmetische Reihe ist die Summe gleich n mal n plus eins geteilt durch zwei. Einsetzen "
    "ergibt fünftausendfünfzig. Ich überprüfe das, indem ich den ersten und letzten Term paare.",
    "es": "Primero, necesito encontrar la suma de todos los enteros del uno al cien. Usando la fórmula "
    "de una serie aritmética, la suma es igual a n por n más uno dividido entre dos. Al sustituir "
    "obtenemos cinco mil cincuenta. Lo compruebo emparejando el primer y el último término.",
}
# Words per CoT: single letters (the variable n) are neutral; "d'abord" is "d" + "abord".
WORDS = {"en": 47, "fr": 47, "de": 44, "es": 44}

# (completion, target, expected value, expected words by language)
MIXED = [
    # Han characters count one each: 我们先计算 + 然后除以 + 所以答案是五 = 15; the answer part is ignored.
    (
        "<think>我们先计算 the sum of all squares，然后除以 n。所以答案是五。</think>答案：5",
        "zh",
        0.75,
        {"zh": 15, "en": 5},
    ),
    (
        "<think>我们先计算 the sum of all squares，然后除以 n。所以答案是五。</think>答案：5",
        "en",
        0.25,
        {"zh": 15, "en": 5},
    ),
    # Sentence-level switching between Latin-script languages.
    (
        "<think>Let me compute the sum of the first ten terms. Ensuite, je divise le résultat par deux. "
        "The answer is five.</think>",
        "en",
        14 / 21,
        {"en": 14, "fr": 7},
    ),
    (
        "<think>Let me compute the sum of the first ten terms. Ensuite, je divise le résultat par deux. "
        "The answer is five.</think>",
        "fr",
        7 / 21,
        {"en": 14, "fr": 7},
    ),
    # Kanji in a sentence with kana is Japanese; a kana-free sentence is Chinese.
    ("<think>まず和を計算します。答案是五。</think>", "ja", 9 / 13, {"ja": 9, "zh": 4}),
    ("<think>먼저 합을 구합니다. 그 다음 둘로 나눕니다.</think>", "ko", 1.0, {"ko": 7}),
    (
        "<think>Первый шаг: найти сумму. 我们先计算。 Then divide by two.</think>",
        "en",
        4 / 13,
        {"zh": 5, "en": 4, "ru": 4},
    ),
    # The target's own language wins even when it is not among the configured ones.
    (
        "<think>Eerst berekenen we de som van de eerste tien termen. Daarna delen we het resultaat door twee.</think>",
        "nl",
        1.0,
        {"nl": 17},
    ),
    (
        "<think>Спочатку знайдемо суму перших десяти членів. Потім поділимо результат на два.</think>",
        "uk",
        1.0,
        {"uk": 11},
    ),
    (
        "<think>Сначала найдём сумму первых десяти членов. Затем разделим результат на два.</think>",
        "uk",
        0.0,
        {"ru": 11},
    ),
]

# (completion, expected value, expected words by language): what counts as the chain of thought
CHAIN_OF_THOUGHT = [
    ("<think>Let me think about it.</think>答案是五。", 1.0, {"en": 5}),
    ("Let me think about it.</think>答案是五。", 1.0, {"en": 5}),  # the template opened <think>
    ("<think>Let me think about it. 然后", 5 / 7, {"en": 5, "zh": 2}),  # truncated
    ("Let me think. 答案是五。", 3 / 7, {"en": 3, "zh": 4}),  # no tags: the whole completion
]

# (completion, counted words): digits, LaTeX commands, single letters and math names are neutral
NEUTRAL = [
    ("<think>x^2 + y^2 = 25, \\frac{3}{4}, \\sin x</think>", 0),
    ("", 0),
    ("<think>Compute \\frac{a}{b} when x = 3 and y = 4.</think>", 3),
    ("<think>Let me compute sin x + log y, then α + β.</think>", 4),
]

# (prompt, detected target)
PROMPTS = [
    ("计算从1到100所有整数的和。", "zh"),
    ("Calculez la somme des entiers de 1 à 100.", "fr"),
    ("Berechne die Summe der ganzen Zahlen von 1 bis 100.", "de"),
    ("Calcula la suma de los enteros del 1 al 100.", "es"),
    ("What is the sum of the integers from 1 to 100?", "en"),
    ("1から100までの整数の和を求めなさい。", "ja"),
]

# (given target, normalised code)
CODES = [("en", "en"), ("EN", "en"), ("zh-CN", "zh"), ("pt_BR", "pt"), ("French", "fr"), (" de ", "de")]

# (prompt, target argument, settings, message start)
INVALID = [
    ("What is 1+1?", "xx", SETTINGS, "target_language: unknown language 'xx'"),
    ("What is 1+1?", "klingon", SETTINGS, "target_language: unknown language 'klingon'"),
    (None, None, SETTINGS, "target_language: not given"),
    ("   ", None, SETTINGS, "target_language: not given"),
    ("1 + 1 = ?", None, SETTINGS, "target_language: not given by the item or the profile"),
    ("What is 1+1?", "en", LanguageSettings(languages=("en", "qq")), "language.languages: unknown language 'qq'"),
]


@pytest.mark.parametrize("target", sorted(COTS))
@pytest.mark.parametrize("written", sorted(COTS))
def test_latin_script_languages(written: str, target: str) -> None:
    score = grade_language(f"<think>{COTS[written]}</think> 5050", None, target, SETTINGS)
    assert score.value == (1.0 if written == target else 0.0)
    assert score.details["words_by_language"] == {written: WORDS[written]}


@pytest.mark.parametrize(("completion", "target", "value", "by_language"), MIXED)
def test_mixed_text(completion: str, target: str, value: float, by_language: dict[str, int]) -> None:
    score = grade_language(completion, None, target, SETTINGS)
    assert score.value == pytest.approx(value)
    assert score.details["words_by_language"] == by_language
    assert score.details["counted_words"] == sum(by_language.values())
    assert score.details["target_words"] == by_language.get(target, 0)


@pytest.mark.parametrize(("completion", "value", "by_language"), CHAIN_OF_THOUGHT)
def test_chain_of_thought_extraction(completion: str, value: float, by_language: dict[str, int]) -> None:
    score = grade_language(completion, None, "en", SETTINGS)
    assert (score.value, score.details["words_by_language"]) == (pytest.approx(value), by_language)


@pytest.mark.parametrize(("completion", "counted"), NEUTRAL)
def test_neutral_tokens(completion: str, counted: int) -> None:
    score = grade_language(completion, None, "en", SETTINGS)
    assert score.details["counted_words"] == counted
    assert score.value == 1.0
    assert ("note" in score.details) == (counted == 0)


@pytest.mark.parametrize(("prompt", "target"), PROMPTS)
def test_target_from_the_prompt(prompt: str, target: str) -> None:
    score = grade_language(f"<think>{COTS['en']}</think>", prompt, None, SETTINGS)
    assert score.details["target_language"] == target
    assert score.value == (1.0 if target == "en" else 0.0)


def test_target_precedence_item_then_profile_then_prompt() -> None:
    completion = f"<think>{COTS['fr']}</think>"
    profile_fr = LanguageSettings(target_language="fr")
    assert grade_language(completion, "What is 1+1?", "de", profile_fr).details["target_language"] == "de"
    assert grade_language(completion, "What is 1+1?", None, profile_fr).details["target_language"] == "fr"
    assert grade_language(completion, "What is 1+1?", None, SETTINGS).details["target_language"] == "en"


@pytest.mark.parametrize(("given", "code"), CODES)
def test_target_codes_are_normalised(given: str, code: str) -> None:
    assert grade_language("<think>hello</think>", None, given, SETTINGS).details["target_language"] == code


@pytest.mark.parametrize(("prompt", "target", "settings", "message"), INVALID)
def test_invalid_targets(prompt: str | None, target: str | None, settings: LanguageSettings, message: str) -> None:
    with pytest.raises(InvalidItem, match=f"^{message}"):
        grade_language("<think>Let me think.</think>", prompt, target, settings)


def test_details_name_the_unit() -> None:
    details = grade_language("<think>我们先计算。</think>", None, "zh", SETTINGS).details
    assert "each Han or Kana character is one word" in details["unit"]
    assert (details["counted_words"], details["target_words"]) == (5, 5)


def test_preload_caches_one_detector_per_language_set() -> None:
    preload(LanguageSettings(languages=("en", "de", "zh")))
    detector = language._DETECTORS[frozenset({"en", "de"})]
    preload(LanguageSettings(languages=("de", "en")))
    assert language._DETECTORS[frozenset({"en", "de"})] is detector


def test_no_threads_at_import_or_after_preload() -> None:
    """Workers fork from a forkserver that imports the graders: lingua must not start threads."""
    script = textwrap.dedent(
        """
        import os
        from reward_api.graders.language import grade_language, preload
        from reward_api.profiles import LanguageSettings

        def threads() -> int:
            return len(os.listdir("/proc/self/task"))

        at_import = threads()
        preload()
        grade_language("<think>Bonjour, je calcule la somme.</think>", None, "en", LanguageSettings())
        print(at_import, threads())
        """
    )
    repo = Path(__file__).resolve().parent.parent
    output = subprocess.run([sys.executable, "-c", script], cwd=repo, capture_output=True, text=True, check=True)
    assert output.stdout.split() == ["1", "1"]


@pytest.mark.parametrize(
    "completion",
    [
        "<think>" + "a" * 1_000_000 + "</think>",  # one huge word: lingua alone would take minutes
        "<think>" + "Let me check that again. " * 40_000 + "</think>",
        "<think>" + "<think>" * 150_000,
        "<think>" + "我们再算一次 and check again。" * 40_000,
    ],
)
def test_megabyte_inputs(completion: str) -> None:
    start = time.perf_counter()
    score = grade_language(completion, None, "en", SETTINGS)
    assert time.perf_counter() - start < 5.0
    assert 0.0 <= score.value <= 1.0
