"""Language consistency with the real lingua detector: zh/en mixing, Latin-script languages, targets, and the
README's first request through the real service."""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from reward_api.graders import language
from reward_api.graders.base import InvalidItem
from reward_api.graders.language import grade_language, preload
from reward_api.local import LocalServer
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

# (prompt, lingua's guess, confident): real short prompts in en/fr/de/es/zh/ru. A shared-script
# (Latin) guess counts only with 3+ words and 2x the runner-up's likelihood (the margin): every
# wrong guess here has a margin of at most 1.43, so none sets the target. Han and Cyrillic (ru is
# the only Cyrillic language configured) imply their language. Not confident: the CoT is held
# to its own dominant language.
PROMPT_TABLE = [
    # en
    ("Compute 2+2.", "de", False),  # margin 1.39, 1 word
    ("sort: 3 1 2 ->", "fr", False),  # margin 1.43, 1 word
    ("What is the sum of 3 and 4?", "en", True),
    ("Solve for x.", "en", False),  # margin 1.15, 2 words
    ("Find x if 2x+3=7.", "de", False),  # margin 1.12, 2 words
    ("Simplify $\\frac{6}{8}$.", "en", False),  # margin 6.24, 1 word
    ("How many primes are less than 20?", "en", True),
    ("Evaluate the integral.", "en", True),
    ("What is 15% of 80?", "en", True),
    ("Find the area of a circle with radius 3.", "en", True),
    ("Is 91 prime?", "pt", False),  # margin 1.23, 2 words
    ("Factor x^2-1.", "en", False),  # margin 1.0, 1 word
    ("Write a function that reverses a string.", "en", True),
    ("Natalia sold clips to 48 of her friends in April.", "en", True),
    ("Prove that there are infinitely many primes.", "en", True),
    ("Given a list of integers, return the largest one.", "en", True),
    ("Compute the derivative of sin(x).", "en", False),  # margin 1.58, 4 words
    ("Find the GCD of 12 and 18.", "en", True),
    ("Solve: 3x = 12", "pt", False),  # margin 1.04, 1 word
    ("Compute $\\dbinom{8}{4}$.", "de", False),  # margin 1.39, 1 word
    ("Round 3.14159 to the nearest hundredth.", "en", True),
    ("Find the remainder when 2^10 is divided by 7.", "en", True),
    ("Let $f(x)=x^2$. Find $f(3)$.", "de", False),  # margin 1.24, 2 words
    ("Express 0.75 as a fraction.", "fr", False),  # margin 1.03, 3 words
    ("Janet has 3 apples and buys 5 more. How many does she have?", "en", True),
    ("Convert 12 feet to inches.", "en", True),
    ("Find the median of 3, 8, 1.", "en", True),
    ("Calculate 7 times 8.", "en", False),  # margin 1.79, 2 words
    ("Reverse the list.", "en", True),
    ("Sort the numbers.", "en", True),
    # fr
    ("Calculez la somme de 3 et 4.", "fr", True),
    ("Résoudre pour x.", "fr", False),  # margin 382.63, 2 words
    ("Combien font 2 et 2 ?", "fr", True),
    ("Trouvez x si 2x+3=7.", "fr", False),  # margin 7.84, 2 words
    ("Quelle est la somme de 3 et 4 ?", "fr", True),
    ("Simplifiez la fraction.", "fr", False),  # margin 1.55, 3 words
    ("Calculer l'aire du cercle.", "fr", True),
    ("Écrivez une fonction qui inverse une chaîne.", "fr", True),
    ("Montrer que 91 n'est pas premier.", "fr", True),
    ("Combien de nombres premiers sont inférieurs à 20 ?", "fr", True),
    ("Calculez la dérivée de sin(x).", "fr", True),
    ("Trouvez le PGCD de 12 et 18.", "fr", True),
    ("Marie a 3 pommes et en achète 5. Combien en a-t-elle ?", "fr", True),
    ("Convertir 12 pieds en pouces.", "fr", True),
    ("Triez les nombres.", "fr", False),  # margin 1.56, 3 words
    ("Exprimez 0,75 sous forme de fraction.", "fr", True),
    ("Résolvez l'équation.", "fr", False),  # margin 2.94, 2 words
    ("Quel est le reste de 2^10 divisé par 7 ?", "fr", True),
    # de
    ("Berechne die Summe von 3 und 4.", "de", True),
    ("Löse nach x auf.", "de", True),
    ("Was ist 2 plus 2?", "fr", False),  # margin 1.06, 3 words
    ("Finde x, wenn 2x+3=7.", "de", False),  # margin 20.41, 2 words
    ("Wie viele Primzahlen sind kleiner als 20?", "de", True),
    ("Vereinfache den Bruch.", "de", True),
    ("Berechne die Fläche des Kreises.", "de", True),
    ("Schreibe eine Funktion, die einen String umkehrt.", "de", True),
    ("Zeige, dass 91 keine Primzahl ist.", "de", True),
    ("Berechne die Ableitung von sin(x).", "de", True),
    ("Finde den ggT von 12 und 18.", "de", True),
    ("Anna hat 3 Äpfel und kauft 5 dazu. Wie viele hat sie?", "de", True),
    ("Rechne 12 Fuß in Zoll um.", "de", True),
    ("Sortiere die Zahlen.", "de", True),
    ("Löse die Gleichung.", "de", True),
    ("Was ist der Rest von 2^10 geteilt durch 7?", "de", True),
    # es
    ("Calcula la suma de 3 y 4.", "es", False),  # margin 1.32, 4 words
    ("Resuelve para x.", "es", False),  # margin 7.87, 2 words
    ("¿Cuánto es 2 más 2?", "es", True),
    ("Encuentra x si 2x+3=7.", "es", False),  # margin 50.43, 2 words
    ("¿Cuántos números primos hay menores que 20?", "es", True),
    ("Simplifica la fracción.", "es", True),
    ("Calcula el área del círculo.", "es", False),  # margin 1.92, 5 words
    ("Escribe una función que invierta una cadena.", "es", True),
    ("Demuestra que 91 no es primo.", "es", True),
    ("Calcula la derivada de sin(x).", "es", False),  # margin 1.6, 4 words
    ("Encuentra el MCD de 12 y 18.", "es", True),
    ("María tiene 3 manzanas y compra 5 más. ¿Cuántas tiene?", "es", True),
    ("Ordena los números.", "es", False),  # margin 1.48, 3 words
    ("Resuelve la ecuación.", "es", True),
    ("¿Cuál es el resto de 2^10 entre 7?", "es", True),
    ("Convierte 12 pies a pulgadas.", "es", True),
    # zh
    ("计算 3 加 4。", "zh", True),
    ("求 x 的值。", "zh", True),
    ("2+2 等于多少？", "zh", True),
    ("化简分数。", "zh", True),
    ("解方程 2x+3=7。", "zh", True),
    ("排序：3 1 2", "zh", True),
    # ru
    ("Вычислите 3+4.", "ru", True),
    ("Найдите x.", "ru", True),
    ("Сколько будет 2+2?", "ru", True),
    ("Упростите дробь.", "ru", True),
    ("Решите уравнение 2x+3=7.", "ru", True),
    ("Отсортируйте числа.", "ru", True),
    # math only: no word of a language
    ("$x^2=4$, x>0, x=?", None, False),
    ("1 + 1 = ?", None, False),
    ("\\int_0^1 x\\,dx", "en", False),  # margin 1.01, 1 word
    ("x = ?", None, False),
    ("3 1 2 ->", None, False),
    ("$$\\sum_{k=1}^{n} k$$", None, False),
    # longer prompts
    ("计算从1到100所有整数的和。", "zh", True),
    ("Calculez la somme des entiers de 1 à 100.", "fr", True),
    ("Berechne die Summe der ganzen Zahlen von 1 bis 100.", "de", True),
    ("Calcula la suma de los enteros del 1 al 100.", "es", True),
    ("What is the sum of the integers from 1 to 100?", "en", True),
    ("1から100までの整数の和を求めなさい。", "ja", True),
    # no majority: as many Chinese as Latin words
    ("计算 the sum", "zh", False),
]
README_COMPLETION = "<think>Half of one is one half.</think> The answer is $\\boxed{0.5}$."
EN_COT = f"<think>{COTS['en']}</think>"

# (completion, prompt, dominant language, value, words by language): no confident target
DOMINANT = [
    (README_COMPLETION, None, "en", 1.0, {"en": 6}),
    (README_COMPLETION, "   ", "en", 1.0, {"en": 6}),
    (EN_COT, "Compute 2+2.", "en", 1.0, {"en": 47}),
    (EN_COT, "sort: 3 1 2 ->", "en", 1.0, {"en": 47}),
    (EN_COT, "$x^2=4$, x>0, x=?", "en", 1.0, {"en": 47}),
    (EN_COT, "1 + 1 = ?", "en", 1.0, {"en": 47}),
    (f"<think>{COTS['fr']}</think>", None, "fr", 1.0, {"fr": 47}),
    # Half Chinese (8 characters), half English (7 words).
    ("<think>我们先来计算总和。Then we divide the sum by two.</think>", None, "zh", 8 / 15, {"zh": 8, "en": 7}),
    # "Let me compute" alone reads as German; the second pass, with English as the target, keeps it English.
    (
        "<think>Let me compute. Then I divide the sum of the first ten terms by two.</think>",
        None,
        "en",
        1.0,
        {"en": 14},
    ),
    # Only the dominant language gets the prior: the short English sentence, read as German, is not French.
    ("<think>Let me compute. Ensuite, je divise le résultat par deux.</think>", None, "fr", 7 / 10, {"fr": 7, "de": 3}),
]
# (given target, normalised code)
CODES = [("en", "en"), ("EN", "en"), ("zh-CN", "zh"), ("pt_BR", "pt"), ("French", "fr"), (" de ", "de")]

# (prompt, target argument, settings, message start): only explicit unknown codes are invalid
INVALID = [
    ("What is 1+1?", "xx", SETTINGS, "target_language: unknown language 'xx'"),
    ("What is 1+1?", "klingon", SETTINGS, "target_language: unknown language 'klingon'"),
    (None, None, LanguageSettings(target_language="xx"), "language.target_language: unknown language 'xx'"),
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
    assert score.value == (1.0 if counted else 0.0)  # no words: nothing earned (an empty CoT)
    assert ("note" in score.details) == (counted == 0)


@pytest.mark.parametrize(("prompt", "guess", "confident"), PROMPT_TABLE)
def test_target_from_the_prompt_only_when_confident(prompt: str, guess: str, confident: bool) -> None:
    score = grade_language(EN_COT, prompt, None, SETTINGS)
    assert (score.details["prompt_language"]["guess"], score.details["prompt_language"]["confident"]) == (
        guess,
        confident,
    )
    if confident:
        assert (score.details["target_source"], score.details["target_language"]) == ("prompt", guess)
        assert score.value == (1.0 if guess == "en" else 0.0)  # a Chinese prompt, an English CoT: 0
    else:
        assert (score.details["target_source"], score.details["target_language"]) == ("dominant", "en")
        assert score.value == 1.0


@pytest.mark.parametrize(("completion", "prompt", "dominant", "value", "by_language"), DOMINANT)
def test_without_a_confident_target_the_cot_keeps_to_its_dominant_language(
    completion: str, prompt: str | None, dominant: str, value: float, by_language: dict[str, int]
) -> None:
    score = grade_language(completion, prompt, None, SETTINGS)
    assert (score.details["target_source"], score.details["target_language"]) == ("dominant", dominant)
    assert score.value == pytest.approx(value)
    assert score.details["words_by_language"] == by_language
    assert score.details["target_words"] == by_language[dominant]


@pytest.mark.parametrize(
    "completion", ["", "  \n", "<think></think>", "<think> \n</think>4", "<think>x^2 = 4.</think>"]
)
def test_no_words_earn_nothing(completion: str) -> None:
    score = grade_language(completion, None, None, SETTINGS)
    assert (score.value, score.details["target_language"], score.details["note"]) == (0.0, None, "no words")


def test_target_precedence_item_then_profile_then_prompt_then_dominant() -> None:
    completion = f"<think>{COTS['fr']}</think>"
    profile_fr = LanguageSettings(target_language="fr")
    prompt = "What is the sum of 3 and 4?"
    sources = [
        (grade_language(completion, prompt, "de", profile_fr), "de", "item"),
        (grade_language(completion, prompt, None, profile_fr), "fr", "profile"),
        (grade_language(completion, prompt, None, SETTINGS), "en", "prompt"),
        (grade_language(completion, "What is 1+1?", None, SETTINGS), "fr", "dominant"),
    ]
    for score, target, source in sources:
        assert (score.details["target_language"], score.details["target_source"]) == (target, source)
    assert "prompt_language" not in sources[0][0].details


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


def readme_first_request() -> str:
    """The JSON body of the README's first curl example (section "Start"), as the shell passes it."""
    start = (Path(__file__).resolve().parent.parent / "README.md").read_text().split("\n## Start\n", 1)[1]
    found = re.search(r"curl -s localhost:8000/v1/rewards .*? -d '(.*?)'\n", start, re.DOTALL)
    assert found, "README: no curl example in the Start section"
    return found.group(1)


def test_readme_first_example_over_http(server: LocalServer) -> None:
    with server.client() as client:
        response = client.post(
            "/v1/rewards", content=readme_first_request(), headers={"content-type": "application/json"}
        )
    assert response.status_code == 200, response.text
    result = next(r for r in response.json()["results"] if r["id"] == "a")
    assert (result["status"], result["reward"]) == ("ok", 3.0), result
    assert result["components"] == {"accuracy": 1.0, "format": 1.0, "language": 1.0}
    assert (result["details"]["language"]["target_source"], result["details"]["language"]["target_language"]) == (
        "dominant",
        "en",
    )
