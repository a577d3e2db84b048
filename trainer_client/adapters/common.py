"""What the adapters share: how a trainer's sample becomes an item, and how failures are reported."""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from reward_api.compat import not_computed, text_of
from trainer_client.client import RewardResult

__all__ = ["FAILURES", "plain", "report_failures", "task_for", "text_of"]

log = logging.getLogger("trainer_client.adapters")
_CODE_SOURCES = ("code", "apps", "taco", "livecodebench", "humaneval", "mbpp", "codecontests", "leetcode")

# (framework, status) -> how many rewards could not be computed in this process.
FAILURES: Counter[tuple[str, str]] = Counter()


def plain(value: Any) -> Any:
    """JSON-able Python from a trainer's dataset values: numpy arrays and scalars (parquet rows, datasets formatted
    as numpy), torch tensors, nested in mappings (verl's OmegaConf containers) and sequences."""
    if hasattr(value, "tolist"):
        return plain(value.tolist())
    if isinstance(value, Mapping):
        return {str(key): plain(item) for key, item in value.items()}
    if isinstance(value, Sequence) and not isinstance(value, str | bytes):
        return [plain(item) for item in value]
    return value


def task_for(data_source: str | None) -> str:
    """The task of a verl item that names none (verl names data sets, not tasks): `code` for a code-sounding data
    set (a reference without tests is then `invalid`, saying what it lacks), else `auto`: the service decides from
    what the reference is (tests in any shape mean code, whatever the data set is called: primeintellect, lcbv5,
    open-r1's verifiable coding problems), and the rest is math."""
    source = (data_source or "").lower()
    return "code" if any(name in source for name in _CODE_SOURCES) else "auto"


def report_failures(results: Sequence[RewardResult], source: str) -> None:
    """Count every reward that could not be computed and say so in one log line per call.

    A trainer that cannot take None would otherwise see the failure reward as a wrong answer.
    """
    message = not_computed(results)
    if message is None:
        return
    for result in results:
        if not result.ok:
            FAILURES[(source, result.status)] += 1
    log.warning("%s: %s", source, message)
