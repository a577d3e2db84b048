"""What a grading worker runs for one item: its text components, from the graders.

Pure functions of the item and the profile: no server, no pool. The service calls
`grade_text` inside a worker process; tests and the CLI may call it directly.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from reward_api.graders.base import InvalidItem, Score
from reward_api.graders.format import grade_format
from reward_api.graders.language import grade_language
from reward_api.graders.language import preload as preload_language
from reward_api.graders.length import grade_repetition
from reward_api.graders.math import grade_math
from reward_api.graders.sort import grade_sort
from reward_api.profiles import Profile


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


@dataclass(frozen=True)
class TextGrades:
    status: Literal["ok", "invalid"]
    scores: dict[str, Score] = field(default_factory=dict)
    reason: str | None = None


# The accuracy grader of each task. A task grader reads only what it declares.
TASKS: dict[str, Callable[[ItemJob], Score]] = {
    "math": lambda job: grade_math(job.completion, job.reference, job.profile.math),
    "sort": lambda job: grade_sort(job.completion, job.reference, job.prompt),
}

_COMPONENTS: dict[str, Callable[[ItemJob], Score]] = {
    "accuracy": lambda job: TASKS[job.task](job),
    "format": lambda job: grade_format(job.completion, job.profile.format),
    "language": lambda job: grade_language(job.completion, job.prompt, job.target_language, job.profile.language),
    "repetition": lambda job: grade_repetition(job.completion, job.profile.length),
}


def grade_text(job: ItemJob) -> TextGrades:
    """Grade every requested text component; an unusable item is `invalid`, not an error."""
    try:
        return TextGrades("ok", {name: _COMPONENTS[name](job) for name in job.components})
    except InvalidItem as exc:
        return TextGrades("invalid", reason=str(exc))


def warm_up() -> None:
    """Load models ahead of the first item (the pool's forkserver runs this once)."""
    preload_language()
