"""slime: a custom reward function for `--custom-rm-path trainer_client.adapters.slime.reward`.

slime awaits `reward(args, sample)` for one sample, or `reward(args, samples)` for a whole
group with `--group-rm`; both work. The label may be a plain math answer or a JSON object
selecting the task, as with the service's `/slime` endpoint.
"""

from __future__ import annotations

import asyncio
from typing import Any

from reward_api.compat import item_from_label
from trainer_client.adapters.common import service_profile, service_urls, text_of
from trainer_client.client import RewardClient

_clients: dict[int, RewardClient] = {}  # one per event loop


def _client() -> RewardClient:
    loop_id = id(asyncio.get_running_loop())
    if loop_id not in _clients:
        _clients[loop_id] = RewardClient(service_urls(), profile=service_profile())
    return _clients[loop_id]


def _item(sample: Any) -> dict[str, Any]:
    item = item_from_label(sample.response, sample.label, text_of(sample.prompt))
    length = getattr(sample, "response_length", None)
    return item | ({"num_tokens": length} if isinstance(length, int) else {})


async def reward(args: Any, sample_or_samples: Any, **kwargs: Any) -> float | list[float]:
    if isinstance(sample_or_samples, list):
        return await _client().rewards([_item(s) for s in sample_or_samples])
    [value] = await _client().rewards([_item(sample_or_samples)])
    return value
