"""OpenRLHF: a `reward_func` file for `--remote_rm_url trainer_client/adapters/openrlhf.py`.

OpenRLHF calls `reward_func(queries, prompts, labels)`; `queries` are prompt + response
decoded with special tokens. Items are built exactly as the service's own `/get_reward`
endpoint builds them (reward_api.compat), so both paths grade the same way.
"""

from __future__ import annotations

from typing import Any

from reward_api.compat import openrlhf_items
from trainer_client.adapters.common import service_profile, service_urls
from trainer_client.client import SyncRewardClient

_client: SyncRewardClient | None = None


def reward_func(queries: list[str], prompts: list[str], labels: list[Any], **kwargs: Any) -> dict[str, Any]:
    import torch

    global _client
    if _client is None:
        _client = SyncRewardClient(service_urls(), profile=service_profile())
    results = _client.grade(openrlhf_items(list(queries), list(prompts or []), list(labels or [])))
    rewards = torch.tensor([r.reward for r in results], dtype=torch.float32)
    names = results[0].components.keys() if results else ()
    extra_logs = {name: torch.tensor([r.components[name] for r in results]) for name in names}
    return {"rewards": rewards, "scores": rewards.clone(), "extra_logs": extra_logs}
