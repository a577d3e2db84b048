"""What the adapters share: where the service is, and how a trainer's sample becomes an item."""

from __future__ import annotations

import os
from typing import Any

DEFAULT_URL = "http://127.0.0.1:8000"
_CODE_SOURCES = ("code", "apps", "taco", "livecodebench", "humaneval", "mbpp", "codecontests", "leetcode")


def service_urls() -> list[str]:
    return [url.strip() for url in os.environ.get("REWARD_SERVICE_URL", DEFAULT_URL).split(",") if url.strip()]


def service_profile() -> str | None:
    return os.environ.get("REWARD_SERVICE_PROFILE") or None


def text_of(message_or_text: Any) -> str:
    """Completions and prompts come as text or as chat messages: the graders want text."""
    if isinstance(message_or_text, str):
        return message_or_text
    if isinstance(message_or_text, list):
        return "\n".join(str(m.get("content", "")) if isinstance(m, dict) else str(m) for m in message_or_text)
    if isinstance(message_or_text, dict):
        return str(message_or_text.get("content", ""))
    return str(message_or_text)


def task_for_source(data_source: str | None) -> str:
    """verl names datasets, not tasks: code datasets go to the code grader, the rest to math."""
    source = (data_source or "").lower()
    return "code" if any(name in source for name in _CODE_SOURCES) else "math"
