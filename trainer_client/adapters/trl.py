"""TRL: reward functions for `GRPOTrainer(reward_funcs=...)`, sync or `async def`.

    from trainer_client.adapters.trl import reward_function
    trainer = GRPOTrainer(..., reward_funcs=[reward_function(task="math", reference_column="answer")])

TRL calls `f(prompts=..., completions=..., completion_ids=..., **dataset_columns)`; completions
may be chat message lists. Components are logged through TRL's `log_metric` when offered.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from trainer_client.adapters.common import service_profile, service_urls, text_of
from trainer_client.client import RewardClient, RewardResult, SyncRewardClient


def _items(
    prompts: Sequence[Any], completions: Sequence[Any], kwargs: dict[str, Any], task: str, reference_column: str
) -> list[dict[str, Any]]:
    if reference_column not in kwargs:
        raise KeyError(
            f"the dataset has no column {reference_column!r} (columns: {sorted(kwargs)}); "
            "pass reference_column= to reward_function"
        )
    tasks = kwargs.get("task", [task] * len(completions))
    return [
        {
            "task": tasks[i],
            "completion": text_of(c),
            "prompt": text_of(prompts[i]),
            "reference": kwargs[reference_column][i],
        }
        for i, c in enumerate(completions)
    ]


def _log_components(results: list[RewardResult], kwargs: dict[str, Any]) -> None:
    log_metric = kwargs.get("log_metric")
    if log_metric is None or not results:
        return
    for name in results[0].components:
        log_metric(f"reward_service/{name}", sum(r.components.get(name, 0.0) for r in results) / len(results))


def reward_function(
    task: str = "math",
    reference_column: str = "reference",
    urls: str | Sequence[str] | None = None,
    profile: str | dict[str, Any] | None = None,
    **client_options: Any,
) -> Callable[..., list[float | None]]:
    """A synchronous TRL reward function backed by the reward service."""
    client = SyncRewardClient(urls or service_urls(), profile=profile or service_profile(), **client_options)

    def reward_service(prompts, completions, **kwargs) -> list[float | None]:
        results = client.grade(_items(prompts, completions, kwargs, task, reference_column))
        _log_components(results, kwargs)
        return [r.reward for r in results]

    return reward_service


def async_reward_function(
    task: str = "math",
    reference_column: str = "reference",
    urls: str | Sequence[str] | None = None,
    profile: str | dict[str, Any] | None = None,
    **client_options: Any,
) -> Callable[..., Any]:
    """An `async def` TRL reward function: TRL awaits it on its own loop, beside its other rewards."""
    clients: dict[int, RewardClient] = {}  # one per event loop: an httpx client is bound to its loop

    async def reward_service(prompts, completions, **kwargs) -> list[float | None]:
        import asyncio

        loop_id = id(asyncio.get_running_loop())
        if loop_id not in clients:
            clients[loop_id] = RewardClient(
                urls or service_urls(), profile=profile or service_profile(), **client_options
            )
        results = await clients[loop_id].grade(_items(prompts, completions, kwargs, task, reference_column))
        _log_components(results, kwargs)
        return [r.reward for r in results]

    return reward_service
