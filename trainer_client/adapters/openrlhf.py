"""OpenRLHF: a `reward_func` file, `--reward.remote_url /path/to/trainer_client/adapters/openrlhf.py`.

OpenRLHF (0.10.2 and later; `--remote_rm_url` before) loads this file by path and calls
`reward_func(queries, prompts, labels)` once per sample, from a thread per sample; those
calls are coalesced into batched requests (`trainer_client.batching`). `queries` are
prompt + response decoded with special tokens; items and the answer are built exactly as
the service's own `/get_reward` endpoint builds them (`reward_api.compat`), so both
paths grade alike:

- `rewards`: the profile's reward; `scores`: the accuracy in [0, 1], which OpenRLHF's
  dynamic filtering keeps a group by (0 < mean < 1) even when rewards are DAPO's +1/-1;
  `extra_logs`: every component and `graded`.
- A sample the service could not grade (invalid, timeout, error) gets the profile's
  failure reward, score 0 and `graded` 0.0, is counted in
  `trainer_client.adapters.common.FAILURES` and logged; OpenRLHF takes no None. A service
  that does not answer raises, and OpenRLHF logs the sample without a reward.

Settings come from `REWARD_SERVICE_URL`, `REWARD_SERVICE_PROFILE`, `REWARD_SERVICE_TOKEN`,
`REWARD_SERVICE_MAX_CONCURRENCY` and `REWARD_SERVICE_GROUP_SIZE` (`n_samples_per_prompt`: a prompt's
samples are its group, which group rewards need whole), read where OpenRLHF runs its rollouts (pass them to Ray in
`--runtime-env-json '{"env_vars": {...}}'`).
"""

from __future__ import annotations

from typing import Any

from reward_api.compat import openrlhf_answer, openrlhf_items
from trainer_client.adapters.common import report_failures
from trainer_client.batching import ServiceSettings, shared_client


def reward_func(queries: list[str], prompts: list[str], labels: list[Any], **kwargs: Any) -> dict[str, Any]:
    client = shared_client(ServiceSettings.resolve())
    results = client.grade_sync(openrlhf_items(list(queries), list(prompts or []), list(labels or [])))
    report_failures(results, "openrlhf")
    return openrlhf_answer(results)
