"""Types shared by every grader: what a grader returns and how it rejects bad input."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Score:
    """One component's value for one completion, with what the grader saw.

    `details` must be JSON-serialisable and small: it travels back to the trainer.
    """

    value: float
    details: dict[str, Any] = field(default_factory=dict)


class InvalidItem(ValueError):
    """The item itself is unusable (e.g. a missing or malformed reference).

    The message names the offending field and says what was expected; the item
    reports `status: invalid` and the rest of the batch is graded as usual.
    """
