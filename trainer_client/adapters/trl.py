"""TRL: reward functions for `GRPOTrainer` and `AsyncGRPOTrainer` (`reward_funcs=[...]`).

    from trainer_client.adapters.trl import async_reward_function, reward_function
    reward_funcs = [reward_function(task="math", reference_column="answer", profile="r1"),
                    async_reward_function(reference_column="answer", profile="kimi", num_generations=8)]

TRL calls `f(prompts=, completions=, completion_ids=, **dataset_columns, trainer_state=, log_extra=,
log_metric=)` (AsyncGRPOTrainer passes the first four only, one prompt's group per call) and takes one
`float | None` per sample: None marks a sample the service could not grade (status other than `ok`),
which TRL leaves out of the group baseline and gives a zero advantage.

- Chat completions: `reasoning_content` (or `thinking`) goes back inside `<think>...</think>` before the
  content, so `format` and `language` see the chain of thought that TRL's response parser split off.
- `completion_ids` give each item's exact `num_tokens`; the samples of one prompt, which TRL lays out
  contiguously, share a `group` (cut every `num_generations` samples when given) for `kimi_length`.
- Each function has its own `__name__`, `reward_service_<profile>_<task>`, which TRL uses for its
  `rewards/<name>/mean` metrics: the same in every run, with `_2`, `_3`, ... only while another live
  function has the name (two with the same settings in one trainer); the components go to `log_metric` as
  `rewards/<name>/<component>` with `rewards/<name>/not_computed`, the fraction of samples graded None.
- The functions are picklable callable instances (AsyncGRPOTrainer scores in a spawned process): they
  carry only their settings and take the process's shared batching client when called.
"""

from __future__ import annotations

import itertools
import json
import re
import uuid
import weakref
from collections.abc import Sequence
from typing import Any

from trainer_client.adapters.common import plain, report_failures, text_of
from trainer_client.batching import ServiceSettings, shared_client
from trainer_client.client import RewardResult

_LIVE_NAMES: weakref.WeakValueDictionary[str, _RewardFunction] = weakref.WeakValueDictionary()


def completion_text(completion: Any) -> str:
    """The text the model wrote: assistant messages, each with its reasoning back inside <think>...</think>."""
    if not isinstance(completion, list):
        return text_of(completion)
    written = [m for m in completion if not isinstance(m, dict) or m.get("role", "assistant") == "assistant"]
    return "\n".join(_message_text(m) if isinstance(m, dict) else str(m) for m in written)


def _message_text(message: dict[str, Any]) -> str:
    content = message.get("content") or ""
    if isinstance(content, list):  # typed content blocks: [{"type": "text", "text": ...}, {"type": "image"}]
        content = "".join(block.get("text", "") for block in content if block.get("type") == "text")
    reasoning = message.get("reasoning_content") or message.get("thinking")
    return f"<think>{reasoning}</think>{content}" if reasoning else str(content)


def group_ids(prompts: Sequence[Any], num_generations: int | None = None) -> list[str]:
    """One id per sample: a run of equal consecutive prompts is one group, cut every `num_generations`.

    Ids are unique to the call, so groups of calls coalesced into one request never merge.
    """
    call = uuid.uuid4().hex[:12]
    ids: list[str] = []
    group, run = -1, 0
    for i, prompt in enumerate(prompts):
        if i == 0 or prompt != prompts[i - 1] or run == num_generations:
            group, run = group + 1, 0
        run += 1
        ids.append(f"{call}-{group}")
    return ids


def _unique_name(function: _RewardFunction, settings: ServiceSettings, task: str) -> str:
    """`reward_service_<profile>_<task>`, suffixed only while a live function holds that name: a trainer made
    again in the same process (a sweep, a notebook) logs under the same names."""
    profile = settings.profile or "default"
    if profile.lstrip().startswith("{"):
        profile = json.loads(profile).get("name", "custom")
    base = re.sub(r"\W+", "_", f"reward_service_{profile}_{task}")
    name = next(name for n in itertools.count(1) if (name := base if n == 1 else f"{base}_{n}") not in _LIVE_NAMES)
    _LIVE_NAMES[name] = function
    return name


class _RewardFunction:
    """What the sync and async functions share: turning TRL's arguments into items, results into rewards."""

    def __init__(
        self,
        task: str = "math",
        reference_column: str = "reference",
        *,
        profile: str | dict[str, Any] | None = None,
        urls: str | Sequence[str] | None = None,
        token: str | None = None,
        max_concurrency: int | None = None,
        num_generations: int | None = None,
        name: str | None = None,
    ) -> None:
        self.task = task
        self.reference_column = reference_column
        self.num_generations = num_generations
        self.settings = ServiceSettings.resolve(
            urls=urls, profile=profile, token=token, max_concurrency=max_concurrency
        )
        self.__name__ = name or _unique_name(self, self.settings, task)  # TRL names metrics and columns after it

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.__name__!r}, urls={list(self.settings.urls)})"

    def items(
        self,
        prompts: Sequence[Any],
        completions: Sequence[Any],
        completion_ids: Sequence[Sequence[int]] | None,
        columns: dict[str, Any],
    ) -> list[dict[str, Any]]:
        if self.reference_column not in columns:
            raise KeyError(
                f"the dataset has no column {self.reference_column!r} (columns: {sorted(columns)}); "
                "pass reference_column= to the reward function"
            )
        # Dataset columns as TRL passes them: numpy values where the dataset holds them (a numpy-formatted dataset).
        tasks = plain(columns.get("task")) or [self.task] * len(completions)
        languages = plain(columns.get("target_language")) or [None] * len(completions)
        groups = group_ids(prompts, self.num_generations)
        items = []
        for i, completion in enumerate(completions):
            item = {
                "task": tasks[i] or self.task,
                "completion": completion_text(completion),
                "prompt": text_of(prompts[i]),
                "reference": plain(columns[self.reference_column][i]),
                "group": groups[i],
            }
            if completion_ids is not None:
                item["num_tokens"] = len(completion_ids[i])
            if languages[i]:
                item["target_language"] = languages[i]
            items.append(item)
        return items

    def rewards(self, results: list[RewardResult], columns: dict[str, Any]) -> list[float | None]:
        report_failures(results, "trl")
        log_metric = columns.get("log_metric")
        if log_metric is not None and results:
            self._log_components(results, log_metric)
        return [r.reward if r.ok else None for r in results]

    def _log_components(self, results: list[RewardResult], log_metric: Any) -> None:
        graded = [r for r in results if r.ok]
        log_metric(f"rewards/{self.__name__}/not_computed", 1 - len(graded) / len(results))
        for component in sorted({c for r in graded for c in r.components}):
            values = [r.components[component] for r in graded if component in r.components]
            log_metric(f"rewards/{self.__name__}/{component}", sum(values) / len(values))


class RewardFunction(_RewardFunction):
    """A synchronous TRL reward function backed by the reward service."""

    def __call__(
        self,
        prompts: Sequence[Any],
        completions: Sequence[Any],
        completion_ids: Sequence[Sequence[int]] | None = None,
        **columns: Any,
    ) -> list[float | None]:
        items = self.items(prompts, completions, completion_ids, columns)
        return self.rewards(shared_client(self.settings).grade_sync(items), columns)


class AsyncRewardFunction(_RewardFunction):
    """An `async def __call__`: TRL (`is_async_callable`) awaits it on its loop, beside its other rewards."""

    async def __call__(
        self,
        prompts: Sequence[Any],
        completions: Sequence[Any],
        completion_ids: Sequence[Sequence[int]] | None = None,
        **columns: Any,
    ) -> list[float | None]:
        items = self.items(prompts, completions, completion_ids, columns)
        return self.rewards(await shared_client(self.settings).grade(items), columns)


def reward_function(task: str = "math", reference_column: str = "reference", **options: Any) -> RewardFunction:
    """A synchronous TRL reward function; `options` are RewardFunction's keyword arguments."""
    return RewardFunction(task, reference_column, **options)


def async_reward_function(
    task: str = "math", reference_column: str = "reference", **options: Any
) -> AsyncRewardFunction:
    """An `async def` TRL reward function; `options` are RewardFunction's keyword arguments."""
    return AsyncRewardFunction(task, reference_column, **options)
