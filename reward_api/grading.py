"""What a grading worker runs for one item: its text components, from the graders.

Pure functions of the item and the profile: no server, no pool. The service calls
`grade_text` inside a worker process; tests and the CLI may call it directly. Code items
are judged by a sandbox backend each process makes once, from the job's `SandboxConfig`
(workers are forked from a forkserver, so the service's settings travel in the job).
"""

from __future__ import annotations

import functools
import json
import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import TypeAdapter

from reward_api.graders.base import InvalidItem, Score
from reward_api.graders.code import grade_code
from reward_api.graders.format import grade_format
from reward_api.graders.language import grade_language
from reward_api.graders.language import preload as preload_language
from reward_api.graders.length import grade_repetition
from reward_api.graders.maths.verdict import grade_math
from reward_api.graders.sort import grade_sort
from reward_api.profiles import Profile
from sandbox.executor import Executor
from sandbox.isolation import Isolation
from sandbox.judge import JudgeBackend, LocalJudge


@dataclass(frozen=True)
class SandboxConfig:
    """Where a worker judges code: sandbox service URLs, else in this process with this isolation."""

    urls: tuple[str, ...] = ()
    token: str = ""  # the sandbox service's bearer token
    isolation: str = Isolation.BWRAP.value
    max_run_s: float = math.inf  # the longest sandbox run an item may ask for (its deadline comes after)


@dataclass(frozen=True)
class ItemJob:
    """Everything a worker needs to grade one item's text components."""

    task: str
    completion: str
    reference: Any
    prompt: str | None
    target_language: str | None
    components: tuple[str, ...]
    profile: Profile
    sandbox: SandboxConfig = SandboxConfig()


@dataclass(frozen=True)
class TextGrades:
    status: Literal["ok", "invalid", "timeout"]  # timeout: remembered, the item took its whole deadline
    scores: dict[str, Score] = field(default_factory=dict)
    reason: str | None = None


_GRADES = TypeAdapter(TextGrades)


def encode_grades(grades: TextGrades) -> bytes:
    """JSON, not a pickle (the shared cache's form): whoever can write to a shared Redis must not be able to run code
    in the service. Non-ASCII is escaped, so a lone surrogate in an echoed completion still encodes. (Built by hand:
    dataclasses.asdict deep-copies every detail first, which cost more than the rest of a put.)"""
    scores = {name: {"value": score.value, "details": score.details} for name, score in grades.scores.items()}
    return json.dumps(
        {"status": grades.status, "scores": scores, "reason": grades.reason}, separators=(",", ":")
    ).encode()


def decode_grades(raw: bytes) -> TextGrades:
    """The grades `encode_grades` wrote; anything else (another writer, another version) is a ValueError."""
    return _GRADES.validate_python(json.loads(raw))


# The accuracy grader of each task. A task grader reads only what it declares.
TASKS: dict[str, Callable[[ItemJob], Score]] = {
    "math": lambda job: grade_math(job.completion, job.reference, job.profile.math, job.prompt),
    "sort": lambda job: grade_sort(job.completion, job.reference, job.prompt),
    "code": lambda job: grade_code(
        job.completion, job.reference, job.profile.code, judge_backend(job.sandbox), job.sandbox.max_run_s
    ),
}

_COMPONENTS: dict[str, Callable[[ItemJob], Score]] = {
    "accuracy": lambda job: TASKS[job.task](job),
    "format": lambda job: grade_format(job.completion, job.profile.format),
    "language": lambda job: grade_language(job.completion, job.prompt, job.target_language, job.profile.language),
    "repetition": lambda job: grade_repetition(job.completion, job.profile.length),
}


@functools.cache
def judge_backend(sandbox: SandboxConfig) -> JudgeBackend:
    """One per worker process, made on its first code item (never in the forkserver, which only imports)."""
    if sandbox.urls:
        from sandbox.client import RemoteJudge  # the sandbox service's client, only when one is configured

        return RemoteJudge(list(sandbox.urls), token=sandbox.token or None)
    return LocalJudge(Executor(Isolation(sandbox.isolation)))


# Cheap signs, read before any parsing, that a math answer may take far longer to compare than most:
# integrals, limits, determinants, 3-digit exponents or factorials, and sums or products unless their
# upper bound is a number of one or two digits. One pattern each, tried only when the text holds its mark:
# one pattern with these alternatives took ~10 us per item to scan a completion's tail.
_COSTLY_COMMAND = re.compile(r"\\(?:int|iint|iiint|oint|lim|det)(?![a-zA-Z])")
_BIG_EXPONENT = re.compile(r"\^\s*\{?\s*-?\d{3,}")
_BIG_FACTORIAL = re.compile(r"\d{3,}\s*!")
_SERIES = re.compile(r"\\(?:sum|prod)(?![a-zA-Z])")
_SHORT_SERIES = re.compile(r"\\(?:sum|prod)\s*(?:_\s*(?:\{[^{}]*\}|\w))?\s*\^\s*(?:\{\s*\d{1,2}\s*\}|\d)")
_ANSWER_TAIL_CHARS = 400  # where a completion's final answer is
_COSTLY_TEXT_CHARS = 100_000  # any task: texts this long take long to read


def looks_costly(job: ItemJob) -> bool:
    """Whether an item goes to the pool's heavy lane, where it never holds a normal worker.

    A guess that costs microseconds: a wrong "yes" costs nothing (a heavy item runs at normal priority
    until it has burnt `slow_after_s` of CPU), a wrong "no" is caught by the pool, which moves a call
    aside once it has burnt `slow_after_s` of CPU.
    Code items never: their cost is their sandboxed programs, limited on their own.
    """
    if job.task == "code":
        return False
    # Only a text reference is read: str() of a list of a million numbers would itself cost the event loop.
    reference = job.reference if isinstance(job.reference, str) else ""
    if len(job.completion) > _COSTLY_TEXT_CHARS or len(reference) > _COSTLY_TEXT_CHARS:
        return True
    if job.task != "math":
        return False
    # Both texts in one scan; NUL, which no pattern matches, keeps a match from spanning them.
    text = f"{reference}\0{job.completion[-_ANSWER_TAIL_CHARS:]}"
    if (
        _COSTLY_COMMAND.search(text)
        or ("^" in text and _BIG_EXPONENT.search(text))
        or ("!" in text and _BIG_FACTORIAL.search(text))
    ):
        return True
    series = _SERIES.findall(text)  # mostly none: the short-series scan is skipped
    return bool(series) and len(series) > len(_SHORT_SERIES.findall(text))


def grade_text(job: ItemJob) -> TextGrades:
    """Grade every requested text component; an unusable item is `invalid`, not an error."""
    try:
        scores = {name: _COMPONENTS[name](job) for name in job.components}
    except InvalidItem as exc:
        return TextGrades("invalid", reason=str(exc))
    return TextGrades("ok", {name: Score(score.value, bounded(score.details)) for name, score in scores.items()})


# Details are for people reading a result; a sort item's echo of a 100,000-number answer is not.
MAX_DETAIL_ITEMS = 128  # above a code reference's default max_tests (100)
MAX_DETAIL_CHARS = 2000


def bounded(value: Any) -> Any:
    """`value` with every list cut to MAX_DETAIL_ITEMS and every string to MAX_DETAIL_CHARS, saying so."""
    if isinstance(value, dict):
        return {key: bounded(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        kept = [bounded(item) for item in value[:MAX_DETAIL_ITEMS]]
        return [*kept, f"... {len(value) - MAX_DETAIL_ITEMS} more"] if len(value) > MAX_DETAIL_ITEMS else kept
    if isinstance(value, str) and len(value) > MAX_DETAIL_CHARS:
        return f"{value[:MAX_DETAIL_CHARS]}... ({len(value)} characters)"
    return value


# Answers whose first grading builds what every later one reuses: ANTLR's parser tables (~0.2 s per
# form: a subscript, a function, an interval, a set, a relation, a log...; cold, 370 distinct answers
# took 2.8 s of parsing against 1.0 s warm), sympy's caches. Graded once in the forkserver, so every
# worker forked from it, a replacement too, starts warm.
_WARM_UP_MATH = (
    ("\\boxed{\\frac{x+1}{x^2-1}}", "\\frac{1}{x-1}"),
    ("\\boxed{2\\sqrt{3}}", "\\sqrt{12}"),
    ("\\boxed{b_{2} = 3k^2 - k + 5}", "3k^{2}-k+5"),
    ("\\boxed{T_{max} = \\frac{q}{p}}", "P_{1}/P"),
    ("\\boxed{g(u) = u^3 + 2u}", "g(t) = t^{3} + 2t"),
    ("\\boxed{\\left[-\\frac{1}{2}, \\sqrt{3}\\right) \\cup (4, +\\infty)}", "(-\\infty, -3] \\cup [5, 9)"),
    ("\\boxed{\\{3, -4, \\frac{1}{5}\\}}", "(7, -3), (0, 2)"),
    ("\\boxed{y \\geq -\\frac{2}{5}}", "-3 < t \\le 4 \\text{ or } t > 7"),
    ("\\boxed{\\{y \\mid y \\neq 2\\}}", "y \\in (2, 7]"),
    ("\\boxed{3t - 2s + 1 = 0}", "\\frac{y^2}{9} + \\frac{z^2}{4} = 1"),
    ("\\boxed{\\sin 3y + \\cos^2 y}", "7\\pi + \\frac{\\pi}{5}"),
    ("\\boxed{\\log_3 27 + \\ln 5}", "\\binom{9}{4} - \\sum_{j=1}^{8} j^2"),
)


def warm_up() -> None:
    """Load models and build parser tables ahead of the first item (the pool's forkserver runs this once)."""
    preload_language()
    for completion, reference in _WARM_UP_MATH:
        grade_math(completion, reference, Profile().math)
