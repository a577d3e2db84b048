"""slime: a custom reward function, `--custom-rm-path trainer_client.adapters.slime.reward`.

slime awaits `reward(args, sample)` once per sample, or `reward(args, samples)` with a whole
group under `--group-rm`; both work. Per-sample calls are coalesced into batched requests
(`trainer_client.batching`).

- The label is a plain math answer or a JSON object selecting the task, as with the
  service's `/slime` endpoint (`reward_api.compat.slime_item` builds both).
- `Sample.group_index` is the item's group and `Sample.response_length` its token count, so
  group rewards (`kimi`) compare the samples of one prompt. Per-sample calls wait (a bounded
  time) until `args.n_samples_per_prompt` samples of a group have arrived, so a group goes out
  whole; with `--group-rm` slime hands over the group at once.
- A sample the service could not grade (invalid, timeout, error) gets the profile's failure
  reward and `Sample.remove_sample = True`, which keeps it out of the loss (its reward still
  counts in its group's mean); it is counted in `trainer_client.adapters.common.FAILURES`
  and logged. A service that does not answer raises.

- Aborts: slime aborts the rest of a rollout once it has enough (over-sampling, dynamic
  filtering), and an aborted sample never reaches the reward function, so its group would wait
  for it. With `--rollout-sample-hook-path trainer_client.adapters.slime.rollout_sample_hook`
  each aborted sample is withdrawn from its group (`RewardClient.withdraw`): the group's
  samples already graded get their rewards at once, over the samples that came.
- Eval samples carry no `group_index` (slime's eval builds them from its data set): each is
  graded at once, whatever `--n-samples-per-eval-prompt` is.

Settings: `reward_service_url`, `reward_service_profile`, `reward_service_token` and
`reward_service_max_concurrency` in slime's `--custom-config-path` YAML (they travel in `args`
to the rollout actors), else the `REWARD_SERVICE_*` environment variables.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from reward_api.compat import slime_item
from trainer_client.adapters.common import report_failures
from trainer_client.batching import ServiceSettings, shared_client
from trainer_client.client import RewardResult


async def reward(args: Any, sample_or_samples: Any, **kwargs: Any) -> float | list[float]:
    if isinstance(sample_or_samples, list):
        return await _grade(_settings(args, group_size=None), sample_or_samples)
    [value] = await _grade(_settings(args, group_size=getattr(args, "n_samples_per_prompt", None)), [sample_or_samples])
    return value


async def rollout_sample_hook(args: Any, sample: Any, **kwargs: Any) -> None:
    """slime's `--rollout-sample-hook-path`, called with every generated sample before its reward: an aborted
    sample of a group is withdrawn from it, so the group's other samples need not wait for it."""
    group_size = getattr(args, "n_samples_per_prompt", None)
    status = getattr(getattr(sample, "status", None), "name", None)  # slime's Sample.Status, without importing it
    if status == "ABORTED" and getattr(sample, "group_index", None) is not None and group_size:
        withdrawal = {"group": sample.group_index, "group_size": group_size}
        await shared_client(_settings(args, group_size=group_size)).withdraw([withdrawal])


async def _grade(settings: ServiceSettings, samples: Sequence[Any]) -> list[float]:
    results = await shared_client(settings).grade([_item(sample) for sample in samples])
    report_failures(results, "slime")
    for sample, result in zip(samples, results, strict=True):
        _exclude_if_not_graded(sample, result)
    return [result.reward for result in results]


def _settings(args: Any, group_size: int | None) -> ServiceSettings:
    """`group_size` only for per-sample calls: a `--group-rm` call already holds its whole group."""
    return ServiceSettings.resolve(
        urls=getattr(args, "reward_service_url", None),
        profile=getattr(args, "reward_service_profile", None),
        token=getattr(args, "reward_service_token", None),
        max_concurrency=getattr(args, "reward_service_max_concurrency", None),
        group_size=group_size,
    )


def _item(sample: Any) -> dict[str, Any]:
    length = getattr(sample, "response_length", None)
    return slime_item(
        sample.prompt,
        sample.response,
        sample.label,
        group=getattr(sample, "group_index", None),
        num_tokens=length if isinstance(length, int) and not isinstance(length, bool) else None,
    )


def _exclude_if_not_graded(sample: Any, result: RewardResult) -> None:
    if not result.ok and hasattr(sample, "remove_sample"):
        sample.remove_sample = True
