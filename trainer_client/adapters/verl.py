"""verl: custom reward functions that grade on the reward service.

verl (0.7.1 and later, 0.9.x, main) scores rollouts in its reward loop: a manager's
`run_single` per sample, which awaits the custom function. Per-sample calls made at once
in one process go out as one batched request (`trainer_client.batching`).

For verl's own managers (naive, dapo, gdpo, rate_limited); since verl 0.9 the key is under
`reward.` (a top-level `custom_reward_function` is ignored there):

    reward.custom_reward_function.path=pkg://trainer_client.adapters.verl
    reward.custom_reward_function.name=compute_score
    +reward.custom_reward_function.reward_kwargs.url=http://reward-service:8000
    +reward.custom_reward_function.reward_kwargs.profile=r1

Options (`reward_kwargs`): `url` (or `urls`: one or a list), `profile` (a preset or an inline
profile), `token`, `max_concurrency`, `group_size` (samples per prompt: set it to
`actor_rollout_ref.rollout.n` for group rewards such as `kimi`), `val_group_size` (samples per
prompt in validation, `actor_rollout_ref.rollout.val_kwargs.n`; 1 by default, as verl's), `task`
(instead of the one guessed from the data source).

verl's validation calls the same function with no flag that says so; its data does: the split in
`extra_info` (verl's preprocessors write "train" and "test"). A sample of any split but "train" is
a validation sample: its group is `val_group_size` samples and its key names the split, so the
test set's prompt 0 and the training set's prompt 0 are never one group.

The options travel with verl's config into its Ray actors; the `REWARD_SERVICE_*` environment
variables are the fallback, read in the actor.

Every sample gets the same keys: `score`, `acc` (the accuracy component, verl's usual key),
`rs_ok` (1.0 graded, 0.0 not) and `rs_<component>`. An item the service could not grade
(invalid, timeout, error) scores the profile's `failure_reward` with `rs_ok` 0.0, and is
counted and logged (`trainer_client.adapters.common.FAILURES`); a service that does not
answer raises instead of scoring.

`reward.reward_manager.name=remote` (and verl <= 0.7.0's naive manager) call a sync function:
`compute_score_sync`. verl <= 0.7.0's `reward_model.reward_manager=batch`: `compute_score_batch`.
verl's reward-loop manager of ours, with exact token counts and groups: `verl_manager`.
This module imports without verl or numpy (`reward-service[client]`).
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

from trainer_client.adapters.common import plain, report_failures, task_for, text_of
from trainer_client.batching import ServiceSettings, shared_client
from trainer_client.client import RewardResult

# Where verl's preprocessors keep the question (gsm8k, geo3k: "question"; MATH-style sources: "problem").
_PROMPT_KEYS = ("prompt", "question", "problem", "query")
_SERVICE_OPTIONS = ("url", "urls", "profile", "token", "max_concurrency", "group_size", "val_group_size", "task")
# The splits verl's preprocessors give training data; any other (test, val, validation) is validation.
_TRAINING_SPLITS = {"train", "training"}
# verl passes these to every custom function when a reward model is enabled.
_VERL_KWARGS = ("reward_router_address", "reward_model_tokenizer")


class RewardOptions(NamedTuple):  # not a dataclass: verl may load this file as a module of no name (by its path)
    """What `reward_kwargs` say: where to grade, and what verl's data cannot say itself."""

    settings: ServiceSettings
    task: str | None  # every sample's task, instead of the one guessed from its data source
    val_group_size: int | None  # a validation sample's group size; None: no groups


def reward_options(kwargs: Mapping[str, Any], val_group_size: int = 1) -> RewardOptions:
    """The options in `reward_kwargs`, else the environment; `val_group_size` where the kwargs name none."""
    unknown = sorted(set(kwargs) - set(_SERVICE_OPTIONS) - set(_VERL_KWARGS))
    if unknown:
        warnings.warn(f"verl reward_kwargs {unknown} ignored: the service takes {_SERVICE_OPTIONS}", stacklevel=3)
    options = {name: plain(kwargs.get(name)) for name in _SERVICE_OPTIONS}
    settings = ServiceSettings.resolve(
        urls=options["url"] or options["urls"],
        profile=options["profile"],
        token=options["token"],
        max_concurrency=options["max_concurrency"],
        group_size=options["group_size"],
    )
    if settings.group_size is None:
        return RewardOptions(settings, options["task"], None)
    return RewardOptions(settings, options["task"], int(options["val_group_size"] or val_group_size))


def validation_split(extra_info: Mapping[str, Any] | None) -> str | None:
    """The split of a validation sample (verl's preprocessors write it in extra_info), None for training."""
    split = plain((extra_info or {}).get("split"))
    return split if isinstance(split, str) and split.lower() not in _TRAINING_SPLITS else None


def service_item(
    data_source: Any, solution_str: str, ground_truth: Any, extra_info: Mapping[str, Any] | None, options: RewardOptions
) -> dict[str, Any]:
    """One service item from verl's arguments; only the extra_info fields the service reads are sent."""
    extra = extra_info or {}
    source = plain(data_source)
    reference = plain(ground_truth)
    task = options.task or task_for(source)
    item: dict[str, Any] = {"task": task, "completion": solution_str, "reference": reference}
    if isinstance(reference, dict) and "task" in reference:
        item |= {"task": reference["task"], "reference": reference.get("reference", reference)}
    prompt = next((extra[key] for key in _PROMPT_KEYS if extra.get(key) is not None), None)
    if prompt is not None:
        item["prompt"] = text_of(plain(prompt))
    for key in ("task", "target_language", "num_tokens", "group"):
        if extra.get(key) is not None:
            item[key] = plain(extra[key])
    split = validation_split(extra)
    if "group" not in item and extra.get("index") is not None:
        # the rollouts of one prompt share its dataset index, which each split numbers from 0
        item["group"] = "/".join(str(part) for part in (source, split, plain(extra["index"])) if part is not None)
    if split is not None and options.val_group_size is not None:
        item["group_size"] = options.val_group_size
    return item


def verl_score(result: RewardResult) -> dict[str, Any]:
    """verl stacks every key across samples, so every sample has them all, failed or not."""
    components = {f"rs_{name}": value for name, value in result.components.items()}
    acc = result.components.get("accuracy", 0.0)
    return {"score": result.reward, "acc": acc, "rs_ok": float(result.ok), **components}


async def compute_score(
    data_source: Any, solution_str: str, ground_truth: Any, extra_info: Mapping[str, Any] | None = None, **kwargs: Any
) -> dict[str, Any]:
    """verl's custom reward function (awaited by its reward loop); `kwargs` are `reward_kwargs`."""
    options = reward_options(kwargs)
    item = service_item(data_source, solution_str, ground_truth, extra_info, options)
    result = await shared_client(options.settings).grade_one(item)
    report_failures([result], "verl")
    return verl_score(result)


def compute_score_sync(
    data_source: Any, solution_str: str, ground_truth: Any, extra_info: Mapping[str, Any] | None = None, **kwargs: Any
) -> dict[str, Any]:
    """`compute_score` for managers that call from threads: verl's `remote` manager, verl <= 0.7.0's naive."""
    options = reward_options(kwargs)
    item = service_item(data_source, solution_str, ground_truth, extra_info, options)
    result = shared_client(options.settings).submit(item).result()
    report_failures([result], "verl")
    return verl_score(result)


def compute_score_batch(
    data_sources: Sequence[Any],
    solution_strs: Sequence[str],
    ground_truths: Sequence[Any],
    extra_infos: Sequence[Mapping[str, Any] | None],
    **kwargs: Any,
) -> list[dict[str, Any]]:
    """verl <= 0.7.0's BatchRewardManager (`reward_model.reward_manager=batch`): the batch in one request."""
    options = reward_options(kwargs)
    items = [
        service_item(source, solution, truth, extra, options)
        for source, solution, truth, extra in zip(data_sources, solution_strs, ground_truths, extra_infos, strict=True)
    ]
    results = shared_client(options.settings).grade_sync(items)
    report_failures(results, "verl")
    return [verl_score(result) for result in results]
