"""verl: `compute_score` for the naive and reward-loop managers, and the batch form.

    custom_reward_function.path=trainer_client/adapters/verl.py
    custom_reward_function.name=compute_score          # or compute_score_batch (BatchRewardManager)

The task comes from `extra_info["task"]`, a dict ground truth's "task", or the data source
(code datasets -> `code`, everything else -> `math`).
"""

from __future__ import annotations

from typing import Any

from trainer_client.adapters.common import service_profile, service_urls, task_for_source
from trainer_client.client import RewardResult, SyncRewardClient

_client: SyncRewardClient | None = None


def _shared_client() -> SyncRewardClient:
    global _client
    if _client is None:
        _client = SyncRewardClient(service_urls(), profile=service_profile())
    return _client


def _item(data_source: str | None, solution_str: str, ground_truth: Any, extra_info: dict | None) -> dict[str, Any]:
    extra = extra_info or {}
    item: dict[str, Any] = {"task": task_for_source(data_source), "completion": solution_str, "reference": ground_truth}
    if isinstance(ground_truth, dict) and "task" in ground_truth:
        item |= {"task": ground_truth["task"], "reference": ground_truth.get("reference", ground_truth)}
    if "task" in extra:
        item["task"] = extra["task"]
    for key in ("prompt", "target_language", "num_tokens", "group"):
        if key in extra:
            item[key] = extra[key]
    return item


def _score(result: RewardResult) -> dict[str, Any]:
    """verl logs every key besides "score" as reward_extra_info."""
    return {"score": result.reward, **{f"rs_{name}": value for name, value in result.components.items()}}


def compute_score(
    data_source: str | None, solution_str: str, ground_truth: Any, extra_info: dict | None = None, **kwargs: Any
) -> dict[str, Any]:
    [result] = _shared_client().grade([_item(data_source, solution_str, ground_truth, extra_info)])
    return _score(result)


def compute_score_batch(
    data_sources: list[str],
    solution_strs: list[str],
    ground_truths: list[Any],
    extra_infos: list[dict | None],
    **kwargs: Any,
) -> list[dict[str, Any]]:
    items = [
        _item(source, solution, truth, extra)
        for source, solution, truth, extra in zip(data_sources, solution_strs, ground_truths, extra_infos, strict=True)
    ]
    return [_score(result) for result in _shared_client().grade(items)]
