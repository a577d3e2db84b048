"""Real model answers that are correct but written in hard-to-verify forms, each with a wrong twin.

Where they come from (public repositories; the row is the item's index in the file, or its
1-based line in a JSONL file):

- OpenLMLab/GAOKAO-Bench: Chinese college-entrance maths fill-in-the-blank answers of GPT-4
  (Results/gpt_4_0314_sub/..., scored by GPT-4-turbo in the ..._wo_marking_criterion files) and of
  gpt-3.5-turbo (result/gpt-3.5-turbo_填空题/..._{1,2,3}/..., scored in `correction_score`; that
  folder is in the history, before commit 5f7f7a0). "M1"/"M2" are the Math_I/Math_II files.
- KbsdJames/Omni-MATH: GPT-4o judgements of Llama-3.1-70B-Instruct and InternLM2-Math-Plus-Mixtral8x22B
  answers (GPT_eval/examples/*_gpteval.jsonl as of commit dfe913f, judged TRUE).
- TIGER-AI-Lab/TheoremQA: outputs/*.jsonl (model answers to TheoremQA with its rounded references).

How they were picked: the data set's own label (or its judge) says the answer is correct, or, for
TheoremQA, which carries no label, the exact value was worked out by hand; every case was then
checked by hand (sympy for the algebra), and only answers whose form a rule-based grader rejected
(ours before issue 10, or math-verify 0.9) were kept. `answer` is the final answer as the model wrote
it (what would be inside \\boxed{}); GAOKAO answers lose only the `$...$` around them and a trailing
`。`. `reference` is the data set's, less GAOKAO's `$...$` and the sentence's closing period.
`wrong` is a close edit of `answer` that is wrong (a flipped sign or endpoint, a changed digit or
word); a grader must reject it.
"""

from __future__ import annotations

from dataclasses import dataclass

FAMILIES = (
    "set_builder_intervals",
    "unicode_html",
    "renamed_variables",
    "labelled",
    "unordered_solutions",
    "stated_precision",
    "notation_slips",
    "expanded_identity",
    "text_answers",
)

_GK4 = "OpenLMLab/GAOKAO-Bench Results/gpt_4_0314_sub/gpt-4-0314_2010-2022_Math_{}_Fill-in-the-Blank.json #{}"
_GK35 = (
    "OpenLMLab/GAOKAO-Bench@5f7f7a0^ result/gpt-3.5-turbo_填空题/gpt-3.5-turbo_填空题_{}/"
    "gpt-3.5-turbo_2010-2022_Math_{}_Fill-in-the-Blank.json #{}"
)
_OMNI = "KbsdJames/Omni-MATH@dfe913f GPT_eval/examples/{}_gpteval.jsonl line {}"
_LLAMA, _INTERN = "meta_llama_3-1_70b_instruct", "internlm2-math-plus-mixtral8x22b"
_TQA = "TIGER-AI-Lab/TheoremQA outputs/{}.jsonl line {}"


def _gk4(paper: str, row: int) -> str:
    return _GK4.format(paper, row)


def _gk35(run: int, paper: str, row: int) -> str:
    return _GK35.format(run, run, paper, row)


@dataclass(frozen=True)
class Case:
    family: str
    answer: str  # the model's final answer, as written
    reference: str  # the data set's reference answer
    wrong: str  # a close edit of `answer` that is wrong
    source: str  # repository, path and row


CASES: list[Case] = [
    # --- set-builder notation and inequalities vs intervals
    Case("set_builder_intervals", "x>−1/4", r"\left(-\frac{1}{4},+\infty\right)", "x<−1/4", _gk4("II", 49)),
    Case(
        "set_builder_intervals",
        r"x>\frac{-1}{4}",
        r"\left(-\frac{1}{4},+\infty\right)",
        r"x\geq\frac{-1}{4}",
        _gk35(3, "I", 43),
    ),
    # --- Unicode and HTML math
    Case("unicode_html", "2√2", r"2 \sqrt{2}", "2√3", _gk4("I", 75)),
    Case("unicode_html", "根号3", r"\sqrt{3}", "根号2", _gk4("I", 65)),
    # --- labelled answers: a name, then the value
    Case("labelled", "S=N_1/N", r"\frac{\mathrm{N}_{1}}{\mathrm{~N}}", "S=N/N_1", _gk4("II", 1)),
    Case("labelled", "最大值为 $1$", "1", "最大值为 $2$", _gk35(1, "II", 21)),
    Case("labelled", r"最大值为 $\sqrt{5}$", r"\sqrt{5}", r"最大值为 $\sqrt{3}$", _gk35(2, "II", 42)),
    Case("labelled", "切线方程为 $y=2x-2$", "y=2 x-2", "切线方程为 $y=2x+2$", _gk35(1, "II", 53)),
    Case("labelled", "切线方程为 $y=5x+2$", "5 x-y+2=0", "切线方程为 $y=5x-2$", _gk35(2, "I", 70)),
    Case("labelled", "乙去过的城市为 $A$", "A", "乙去过的城市为 $B$", _gk35(2, "II", 18)),
    Case("labelled", "$A$ 城市", "A", "$C$ 城市", _gk35(3, "I", 17)),
    Case(
        "labelled",
        r"向右平移 $\frac{\pi}{3}$ 个单位长度",
        r"\frac{\pi}{3}",
        r"向右平移 $\frac{\pi}{6}$ 个单位长度",
        _gk35(3, "II", 36),
    ),
    Case("labelled", "平均正点率的估计值为 0.98", "0. 98", "平均正点率的估计值为 0.97", _gk35(3, "I", 57)),
    Case(
        "labelled",
        "(a, 1) for any positive integer a",
        "(a, n) = (a, 1)",
        "(1, a) for any positive integer a",
        _OMNI.format(_LLAMA, 62),
    ),
    # --- precision stated by the reference (a rounded decimal)
    Case(
        "stated_precision",
        "1.6666666666666667",
        "1.67",
        "1.6166666666666667",
        _TQA.format("internlm2_math_20b_5shots_short", 461),
    ),
    Case("stated_precision", "3.102", "3.1", "3.202", _TQA.format("internlm2_math_20b_5shots_short", 468)),
    Case(
        "stated_precision",
        "0.8333333333333334",
        "0.8333",
        "0.8433333333333334",
        _TQA.format("internlm2_math_20b_5shots_short", 759),
    ),
    Case(
        "stated_precision",
        "1.9090909090909092",
        "1.9",
        "1.8090909090909092",
        _TQA.format("internlm2_20b_5shots_short", 35),
    ),
    Case("stated_precision", "0.3333", "0.33", "0.3433", _TQA.format("internlm2_20b_5shots_short", 51)),
    Case("stated_precision", "28.296", "28.3", "28.396", _TQA.format("internlm2_20b_5shots_short", 122)),
    Case("stated_precision", "0.333", "0.33", "0.323", _TQA.format("Mistral_7B_v0.1_5shots_mistral", 51)),
    Case(
        "stated_precision",
        "3.6666666666666665",
        "3.67",
        "3.6166666666666665",
        _TQA.format("Mistral_7B_Base_V0.2_5shots_mistral", 273),
    ),
    # --- notation slips (either side)
    Case("notation_slips", "N_{1}/N", r"\frac{\mathrm{N}_{1}}{\mathrm{~N}}", "N/N_{1}", _gk4("I", 0)),
    Case(
        "notation_slips", r"\dfrac{N_1}{N}", r"\frac{\mathrm{N}_{1}}{\mathrm{~N}}", r"\dfrac{N}{N_1}", _gk35(1, "I", 0)
    ),
    Case("notation_slips", "0.98", "0. 98", "0.89", _gk4("I", 57)),
    Case("notation_slips", "a > b", r"\[ a > b \]", "a < b", _OMNI.format(_LLAMA, 95)),
    Case("notation_slips", r"\boxed{3n}", "3n", r"\boxed{2n}", _OMNI.format(_LLAMA, 93)),
    # --- short text answers
    Case("text_answers", "1和3", "1 和 3", "1和2", _gk4("II", 35)),
    Case("text_answers", r"ML \perp NK", r"\text{ML} \perp \text{NK}", r"ML \parallel NK", _OMNI.format(_INTERN, 39)),
    Case(
        "text_answers",
        r"\(\boxed{\text{All composite integers } s \geq 4}\)",
        r"\text{All composite integers } s \geq 4",
        r"\(\boxed{\text{All prime integers } s \geq 4}\)",
        _OMNI.format(_INTERN, 64),
    ),
    Case(
        "text_answers",
        r"There are infinitely many positive integers \( n \) such that \( d(n!) - 1 \) is a composite number.",
        r"\text{There are infinitely many positive integers } n \text{ such that } d(n!) - 1"
        r" \text{ is a composite number.}",
        r"There are finitely many positive integers \( n \) such that \( d(n!) - 1 \) is a composite number.",
        _OMNI.format(_INTERN, 78),
    ),
]

# Real answers in forms that both graders already accepted before issue 10 (regression guards), with twins.
ACCEPTED_TODAY: list[Case] = [
    Case("unicode_html", "λ=8/5", r"\frac{8}{5}", "λ=5/8", _gk4("II", 76)),
    Case("unicode_html", "14π", r"14 \pi", "7π", _gk4("II", 44)),
    Case("labelled", r"\lambda = 1/2", r"\frac{1}{2}", r"\lambda = 1/4", _gk4("I", 24)),
    Case("labelled", r"S_{n}=-\frac{1}{n}", r"-\frac{1}{n}", r"S_{n}=\frac{1}{n}", _gk4("I", 26)),
    Case("labelled", r"k=-\frac{10}{3}", r"-\frac{10}{3}", r"k=-\frac{3}{10}", _gk4("I", 71)),
    Case("labelled", "m=-6", "-6", "m=6", _gk4("II", 33)),
    Case("labelled", "a=1", "1", "a=-1", _gk4("II", 25)),
    Case("labelled", "D X=1.96", "1.96", "D X=1.69", _gk35(1, "I", 38)),
    Case("labelled", "f(-1)=3", "3", "f(-1)=-3", _gk35(1, "II", 22)),
    Case("labelled", "S_{10}=100", "100", "S_{10}=10", _gk35(2, "II", 65)),
    Case("labelled", r"\frac{S_{10}}{S_{5}}=4", "4", r"\frac{S_{10}}{S_{5}}=2", _gk35(3, "I", 61)),
    Case("expanded_identity", "y=3x", "3 x-y=0", "y=-3x", _gk4("II", 59)),
    Case("expanded_identity", "y=x+1", "x-y+1=0", "y=x-1", _gk4("II", 40)),
    Case("expanded_identity", "y=5x+2", "5 x-y+2=0", "y=5x-2", _gk35(2, "I", 70)),
    Case(
        "expanded_identity",
        r"\frac{x^2}{4} - y^2 = 1",
        r"\frac{1}{4} x^{2}-y^{2}=1",
        r"\frac{x^2}{4} - y^2 = -1",
        _gk4("II", 28),
    ),
    Case(
        "expanded_identity",
        r"\frac{3}{\sqrt{10}}",
        r"\frac{3 \sqrt{10}}{10}",
        r"\frac{3}{\sqrt{5}}",
        _gk35(2, "II", 41),
    ),
    Case("expanded_identity", r"\frac{-\sqrt{2}}{10}", r"-\frac{\sqrt{2}}{10}", r"\frac{\sqrt{2}}{10}", _gk4("II", 64)),
    Case("expanded_identity", r"\sqrt{8}", r"2 \sqrt{2}", r"\sqrt{6}", _gk4("II", 51)),
    Case("text_answers", "分层抽样", "分层抽样", "系统抽样", _gk4("II", 57)),
    Case(
        "text_answers",
        "All odd positive integers",
        r"\text{All odd positive integers}",
        "All even positive integers",
        _OMNI.format(_INTERN, 67),
    ),
    Case("text_answers", "No", r"\text{No}", "Yes", _OMNI.format(_INTERN, 71)),
    Case("text_answers", r"\text{no}", r"\text{No}", r"\text{yes}", _OMNI.format(_INTERN, 72)),
    Case("text_answers", "No", r"\text{No}", "Yes", _OMNI.format(_INTERN, 100)),
    Case("text_answers", "True", r"\text{True}", "False", _OMNI.format(_INTERN, 12)),
]
