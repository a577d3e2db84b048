"""verl: a reward-loop manager that grades on the reward service (verl >= 0.7.0, which it imports).

    reward.reward_manager.source=importlib
    reward.reward_manager.module.path=pkg://trainer_client.adapters.verl_manager
    reward.reward_manager.name=ServiceRewardManager
    +reward.reward_kwargs.url=http://reward-service:8000
    +reward.reward_kwargs.profile=r1

verl hands `run_single` one sample at a time (its reward loop fans a batch out per sample,
its agent loop calls as each rollout ends), so no manager sees a whole batch: the samples
of one process share one batching client instead, and go out in a few requests. Over
`verl.compute_score` the manager adds what only the rollout knows: the response's exact
token count (length rewards), the prompt when extra_info has none, and verl's `uid` (one per
prompt, new in each step and each validation) as the group. `reward.reward_kwargs` takes the
options of `verl.compute_score`; `val_group_size` defaults to verl's own
`actor_rollout_ref.rollout.val_kwargs.n`; results have the same keys and failure handling.
"""

from __future__ import annotations

import asyncio
from typing import Any

from verl import DataProto
from verl.experimental.reward_loop.reward_manager.base import RewardManagerBase

from trainer_client.adapters.common import plain, report_failures, text_of
from trainer_client.adapters.verl import reward_options, service_item, verl_score
from trainer_client.batching import shared_client


class ServiceRewardManager(RewardManagerBase):
    """Loaded by verl from `reward.reward_manager.source=importlib`; see the module doc."""

    def __init__(
        self,
        config: Any,
        tokenizer: Any,
        compute_score: Any = None,  # verl's default scorer when no custom function is set: unused
        reward_router_address: str | None = None,  # verl's reward-model router: unused
        reward_model_tokenizer: Any = None,
    ) -> None:
        super().__init__(config, tokenizer, compute_score)
        validation_n = config.actor_rollout_ref.rollout.val_kwargs.get("n", 1)
        self.options = reward_options(config.reward.get("reward_kwargs") or {}, val_group_size=validation_n)

    async def run_single(self, data: DataProto) -> dict[str, Any]:
        sample = data[-1]  # for multi-sequence outputs verl scores the last sequence
        response_ids = sample.batch["responses"]
        num_tokens = int(sample.batch["attention_mask"][-response_ids.shape[-1] :].sum())
        fields = sample.non_tensor_batch
        solution = self.tokenizer.decode(response_ids[:num_tokens], skip_special_tokens=True)
        ground_truth = fields["reward_model"]["ground_truth"]
        item = service_item(fields["data_source"], solution, ground_truth, fields.get("extra_info"), self.options)
        item["num_tokens"] = num_tokens
        if fields.get("raw_prompt") is not None:
            item.setdefault("prompt", text_of(plain(fields["raw_prompt"])))
        if fields.get("uid") is not None:
            item["group"] = plain(fields["uid"])
        await asyncio.sleep(0)  # the step's other samples, scheduled behind this one, get here too: one request
        result = await shared_client(self.options.settings).grade_one(item)
        report_failures([result], "verl")
        score = verl_score(result)
        return {"reward_score": score["score"], "reward_extra_info": score}
