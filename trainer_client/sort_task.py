"""The seed's sort task as prompts for the trainer: "sort: 3 1 0 2 ->", answered "0 1 2 3"."""

from __future__ import annotations

import json
import random
from pathlib import Path


def sort_prompt(numbers: list[int]) -> str:
    return "sort: " + " ".join(map(str, numbers)) + " ->"


def write_sort_prompts(path: str | Path, count: int = 256, length: int = 4, seed: int = 0) -> Path:
    """JSONL rows {"prompt", "task": "sort", "reference": numbers}, digits 0-9."""
    rng = random.Random(seed)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as out:
        for _ in range(count):
            numbers = [rng.randrange(10) for _ in range(length)]
            out.write(json.dumps({"prompt": sort_prompt(numbers), "task": "sort", "reference": numbers}) + "\n")
    return path
