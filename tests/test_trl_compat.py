"""TRL 1.16's own calling code drives our reward functions against the real service on loopback.

GRPOTrainer runs a real training step on a tiny local model. Its completions come through TRL's
`rollout_func` hook as scripted token ids, so every reward is known in advance, and TRL's own response
parser (the Qwen3 chat template's, set by TRL's `add_response_schema`) decodes them, splitting the
`<think>` block into `reasoning_content` as it does for reasoning models.

AsyncGRPOTrainer cannot be built without CUDA: its `__init__` calls `get_peak_flops_per_device`, which calls
`torch.cuda.get_device_name`; its forward uses FlashAttention-3 kernels fetched from the Hub; its weight
sync uses NCCL. The part that touches reward functions, `AsyncRolloutWorker`, runs here: it pickles them
into a spawned process, generates with a real vLLM (CPU) server and scores each group there.
"""

from __future__ import annotations

import asyncio
import math
import pickle
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from datasets import Dataset
from transformers import PreTrainedTokenizerFast
from trl.trainer.utils import get_callable_name, is_async_callable

from reward_api.local import LocalServer
from tests.vllm_serving import VLLMServer, chat_model, chat_tokenizer, vllm_server
from trainer_client.adapters import trl

__all__ = ["chat_model", "vllm_server"]  # fixtures of tests.vllm_serving: pytest finds them here by name

NUM_GENERATIONS = 4


@dataclass(frozen=True)
class Scripted:
    """One sample of every group, in group order, and what the graders make of it."""

    text: str
    accuracy: float
    format: float


SCRIPT = [
    Scripted("<think>two and two</think>\\boxed{4}", accuracy=1.0, format=1.0),
    Scripted("<think>hm</think>\\boxed{5}", accuracy=0.0, format=1.0),
    Scripted("\\boxed{4}", accuracy=1.0, format=0.0),
    Scripted("<think>two and two and two</think>\\boxed{4}", accuracy=1.0, format=1.0),
]
GRADABLE = {"prompt": [{"role": "user", "content": "two plus two ?"}], "answer": "4", "task": "math"}
NO_ANSWER = {"prompt": [{"role": "user", "content": "two and two ?"}], "answer": "", "task": "math"}  # invalid


def completion_ids(tokenizer: PreTrainedTokenizerFast, position: int) -> list[int]:
    return tokenizer(SCRIPT[position].text, add_special_tokens=False)["input_ids"] + [tokenizer.eos_token_id]


def scripted_rollout(prompts: list[Any], trainer: Any) -> dict[str, list]:
    """TRL's rollout_func: SCRIPT[i] for the i-th sample of each group (TRL lays a group out contiguously)."""
    tokenizer = trainer.processing_class
    return {
        "prompt_ids": [
            tokenizer.apply_chat_template(p, add_generation_prompt=True, return_dict=False) for p in prompts
        ],
        "completion_ids": [completion_ids(tokenizer, i % NUM_GENERATIONS) for i in range(len(prompts))],
        "logprobs": None,
    }


def kimi_expected(tokenizer: PreTrainedTokenizerFast) -> list[float]:
    """Kimi k1.5 over the scripted group: accuracy + lambda (correct) or min(0, lambda) (wrong)."""
    lengths = [len(completion_ids(tokenizer, i)) for i in range(NUM_GENERATIONS)]
    low, high = min(lengths), max(lengths)
    rewards = []
    for sample, length in zip(SCRIPT, lengths, strict=True):
        lam = 0.5 - (length - low) / (high - low)
        rewards.append(sample.accuracy + (lam if sample.accuracy else min(0.0, lam)))
    return rewards


@dataclass
class GRPOStep:
    kimi: trl.RewardFunction
    format: trl.AsyncRewardFunction
    logs: dict[str, float]  # what the trainer logged after its step
    table: dict[str, Any]  # TRL's completions table: prompt, completion, rewards per function name, advantages
    tokenizer: PreTrainedTokenizerFast

    def rows(self, prompt: dict) -> list[int]:
        return [i for i, p in enumerate(self.table["prompt"]) if p == prompt["prompt"]]


@pytest.fixture(scope="module")
def grpo_step(server: LocalServer, chat_model: Path, tmp_path_factory: pytest.TempPathFactory) -> GRPOStep:
    """One GRPOTrainer step: a sync `kimi` and an async `format` function, a gradable and an unscorable prompt."""
    from trl import GRPOConfig, GRPOTrainer

    kimi = trl.reward_function(reference_column="answer", profile="kimi", urls=server.url)
    fmt = trl.async_reward_function(reference_column="answer", profile="format", urls=server.url)
    tokenizer = chat_tokenizer()
    args = GRPOConfig(
        output_dir=str(tmp_path_factory.mktemp("grpo")), per_device_train_batch_size=2 * NUM_GENERATIONS,
        num_generations=NUM_GENERATIONS, max_completion_length=16, max_steps=1, learning_rate=1e-3, report_to=[],
        use_cpu=True, logging_steps=1, save_strategy="no",
    )  # fmt: skip
    trainer = GRPOTrainer(
        model=str(chat_model), reward_funcs=[kimi, fmt], args=args, processing_class=tokenizer,
        train_dataset=Dataset.from_list([GRADABLE, NO_ANSWER]), rollout_func=scripted_rollout,
    )  # fmt: skip
    trainer.train()
    return GRPOStep(kimi, fmt, trainer.state.log_history[0], trainer._logs, tokenizer)


def test_trl_detects_the_async_function_and_names_each_instance(grpo_step: GRPOStep) -> None:
    assert (is_async_callable(grpo_step.kimi), is_async_callable(grpo_step.format)) == (False, True)
    names = [get_callable_name(f) for f in (grpo_step.kimi, grpo_step.format)]
    assert names == [grpo_step.kimi.__name__, grpo_step.format.__name__]
    assert names[0].startswith("reward_service_kimi_math") and names[1].startswith("reward_service_format_math")


def test_reasoning_content_is_graded_by_format(grpo_step: GRPOStep) -> None:
    rows = grpo_step.rows(GRADABLE)
    completions = [grpo_step.table["completion"][i] for i in rows]
    assert [bool(c[0].get("reasoning_content")) for c in completions] == [bool(s.format) for s in SCRIPT]
    formats = [grpo_step.table["rewards"][grpo_step.format.__name__][i] for i in rows]
    assert formats == [s.format for s in SCRIPT]


def test_completion_ids_and_contiguous_groups_give_kimi_length(grpo_step: GRPOStep) -> None:
    kimi = [grpo_step.table["rewards"][grpo_step.kimi.__name__][i] for i in grpo_step.rows(GRADABLE)]
    expected = kimi_expected(grpo_step.tokenizer)
    assert len(set(expected)) == NUM_GENERATIONS  # the lengths differ, so a missing num_tokens would show
    assert kimi == pytest.approx(expected)


def test_unscorable_samples_are_none_and_trl_leaves_them_out(grpo_step: GRPOStep) -> None:
    table, rows = grpo_step.table, grpo_step.rows(NO_ANSWER)
    for function in (grpo_step.kimi, grpo_step.format):
        assert all(math.isnan(table["rewards"][function.__name__][i]) for i in rows)
        assert grpo_step.logs[f"rewards/{function.__name__}/not_computed"] == pytest.approx(0.5)
    assert [table["advantages"][i] for i in rows] == [0.0] * NUM_GENERATIONS
    # TRL's reward mean is over the gradable group only: the unscorable one counts neither as 0 nor at all.
    gradable = [k + s.format for k, s in zip(kimi_expected(grpo_step.tokenizer), SCRIPT, strict=True)]
    assert grpo_step.logs["reward"] == pytest.approx(sum(gradable) / len(gradable), abs=1e-3)


def test_two_instances_log_their_own_metrics(grpo_step: GRPOStep) -> None:
    kimi, fmt, logs = grpo_step.kimi.__name__, grpo_step.format.__name__, grpo_step.logs
    accuracy = sum(s.accuracy for s in SCRIPT) / len(SCRIPT)
    assert logs[f"rewards/{kimi}/accuracy"] == pytest.approx(accuracy)
    assert logs[f"rewards/{fmt}/format"] == pytest.approx(sum(s.format for s in SCRIPT) / len(SCRIPT))
    assert logs[f"rewards/{kimi}/mean"] == pytest.approx(sum(kimi_expected(grpo_step.tokenizer)) / NUM_GENERATIONS)
    assert logs[f"rewards/{fmt}/mean"] == pytest.approx(sum(s.format for s in SCRIPT) / len(SCRIPT))


@pytest.mark.parametrize(
    ("make", "profiles", "expected"),
    [
        (trl.reward_function, ["r1", "r1"], ["reward_service_r1_sort", "reward_service_r1_sort_2"]),
        (trl.async_reward_function, ["dapo", {"name": "kimi", "weights": {"accuracy": 1}}],
         ["reward_service_dapo_sort", "reward_service_kimi_sort"]),
    ],
)  # fmt: skip
def test_names_are_unique_among_live_functions_and_the_same_in_every_run(make, profiles: list, expected) -> None:
    """(The sort task: no other test's live functions hold these names.)"""
    first_run = [make(task="sort", profile=p) for p in profiles]
    assert [function.__name__ for function in first_run] == expected
    del first_run  # that trainer is gone: the next one, in the same process, logs under the same names
    second_run = [make(task="sort", profile=p) for p in profiles]
    assert [function.__name__ for function in second_run] == expected


@pytest.mark.parametrize(
    ("completion", "expected"),
    [
        ("<think>a</think>b", "<think>a</think>b"),
        ([{"role": "assistant", "content": "b", "reasoning_content": "a"}], "<think>a</think>b"),
        ([{"role": "assistant", "content": "b", "thinking": "a"}], "<think>a</think>b"),
        ([{"role": "assistant", "content": "<think>a</think>b", "reasoning_content": ""}], "<think>a</think>b"),
        ([{"role": "assistant", "content": [{"type": "text", "text": "b"}, {"type": "image"}]}], "b"),
        (
            [{"role": "assistant", "content": "", "reasoning_content": "call", "tool_calls": [{}]},
             {"role": "tool", "name": "calc", "content": "\\boxed{9}"},
             {"role": "assistant", "content": "\\boxed{4}", "reasoning_content": "so 4"}],
            "<think>call</think>\n<think>so 4</think>\\boxed{4}",
        ),
    ],
)  # fmt: skip
def test_completion_text_keeps_reasoning_and_drops_tool_output(completion: Any, expected: str) -> None:
    assert trl.completion_text(completion) == expected


@pytest.mark.parametrize(
    ("prompts", "num_generations", "expected"),
    [
        (["a", "a", "b", "b"], None, [0, 0, 1, 1]),
        (["a", "a", "a", "a"], 2, [0, 0, 1, 1]),
        (["a", "a", "a", "a"], None, [0, 0, 0, 0]),
        ([[{"content": "a"}], [{"content": "a"}], [{"content": "b"}]], None, [0, 0, 1]),
        (["a", "b", "a"], None, [0, 1, 2]),
    ],
)
def test_group_ids_follow_contiguous_prompts(prompts: list, num_generations: int | None, expected: list) -> None:
    ids = trl.group_ids(prompts, num_generations)
    numbering = {group: n for n, group in enumerate(dict.fromkeys(ids))}
    assert [numbering[g] for g in ids] == expected
    assert set(ids).isdisjoint(trl.group_ids(prompts, num_generations))  # unique to the call


def test_pickled_functions_score_like_the_originals(server: LocalServer) -> None:
    prompts = [GRADABLE["prompt"]] * 2 + [NO_ANSWER["prompt"]]
    completions = [[{"role": "assistant", "content": s.text}] for s in SCRIPT[:3]]
    columns = {"answer": ["4", "4", ""], "completion_ids": [[1] * 3, [1] * 5, [1] * 2]}
    options = {"profile": "kimi", "reference_column": "answer", "urls": server.url}
    for original in (trl.reward_function(**options), trl.async_reward_function(**options)):
        before = original(prompts=prompts, completions=completions, **columns)  # its process client now exists
        copy = pickle.loads(pickle.dumps(original))
        after = copy(prompts=prompts, completions=completions, **columns)
        if is_async_callable(copy):
            before, after = asyncio.run(before), asyncio.run(after)
        assert (get_callable_name(copy), is_async_callable(copy)) == (original.__name__, is_async_callable(original))
        assert after == before and before[2] is None and before[0] == 1.5


def test_numpy_dataset_values_are_sent_as_plain_data(server: LocalServer) -> None:
    """A dataset formatted as numpy gives TRL numpy scalars and arrays, which it passes on as reward kwargs (a list of
    each column's values, `_calculate_rewards`): a code reference of arrays and an integer answer are graded."""
    code = {"inputs": ["2\n", "5\n"], "outputs": ["4\n", "10\n"]}
    rows = Dataset.from_list([
        {"answer": 4, "tests": code, "task": "math"}, {"answer": 4, "tests": code, "task": "code"},
    ]).with_format("numpy")  # fmt: skip
    examples = [rows[i] for i in range(len(rows))]
    assert (
        type(examples[0]["answer"]).__module__ == "numpy" and type(examples[1]["tests"]["inputs"]).__module__ == "numpy"
    )
    columns = {key: [example[key] for example in examples] for key in ("answer", "tests", "task")}
    prompts = [[{"role": "user", "content": "twice ?"}]] * 2
    completions = [
        [{"role": "assistant", "content": text}] for text in ("\\boxed{4}", "```python\nprint(2 * int(input()))\n```")
    ]
    math = trl.reward_function(reference_column="answer", urls=server.url)(prompts[:1], completions[:1], **{
        key: values[:1] for key, values in columns.items()
    })  # fmt: skip
    code_reward = trl.reward_function(task="code", reference_column="tests", urls=server.url)(
        prompts[1:], completions[1:], **{key: values[1:] for key, values in columns.items()}
    )
    assert math == [1.0] and code_reward == [1.0]


@pytest.mark.slow
def test_async_grpo_rollout_worker_unpickles_and_calls_our_functions(
    server: LocalServer, chat_model: Path, vllm_server: VLLMServer
) -> None:
    from accelerate.state import PartialState
    from transformers import AutoTokenizer
    from trl.experimental.async_grpo.async_rollout_worker import AsyncRolloutWorker

    PartialState()  # TRL's worker logs through accelerate
    kimi = trl.reward_function(reference_column="answer", profile="kimi", urls=server.url)
    fmt = trl.async_reward_function(reference_column="answer", profile="format", urls=server.url)
    tokenizer = AutoTokenizer.from_pretrained(chat_model)
    worker = AsyncRolloutWorker(
        model_name=str(chat_model), dataset=Dataset.from_list([GRADABLE, NO_ANSWER]), reward_funcs=[kimi, fmt],
        processing_class=tokenizer, eos_token_ids=[tokenizer.eos_token_id], num_generations=NUM_GENERATIONS,
        max_inflight_tasks=2 * NUM_GENERATIONS, vllm_server_url=vllm_server.url, max_tokens=8,
    )  # fmt: skip
    worker.start()  # pickles reward_funcs into a spawned process
    try:
        groups = first_groups(worker.rollout_buffer, count=2, timeout_s=180)
    finally:
        worker.stop()

    for group_id, group in groups.items():
        row = (GRADABLE, NO_ANSWER)[group_id % 2]  # the worker cycles through the dataset, one group per row
        for function in (kimi, fmt):
            in_child = [s.metrics[f"rewards/{function.__name__}"] for s in group]
            assert in_child == pytest.approx(score_here(function, row, group), nan_ok=True), function.__name__
        if row is NO_ANSWER:
            assert all(math.isnan(s.metrics["reward"]) and s.advantage == 0.0 for s in group)
        else:
            assert not any(math.isnan(s.metrics["reward"]) for s in group)


def first_groups(buffer: Any, count: int, timeout_s: float) -> dict[int, list]:
    """Groups 0 .. count-1 as the worker pushes them (later groups may finish first and are left out)."""
    deadline = time.monotonic() + timeout_s
    groups: dict[int, list] = {}
    while any(len(groups.get(g, [])) < NUM_GENERATIONS for g in range(count)):
        sample = buffer.get(timeout=max(deadline - time.monotonic(), 0.1))
        groups.setdefault(sample.group_id, []).append(sample)
    return {g: groups[g] for g in range(count)}


def score_here(function: trl.RewardFunction | trl.AsyncRewardFunction, row: dict, group: list) -> list[float]:
    """The same group scored in this process, from the prompt, completions and token ids TRL kept."""
    ids = [s.input_ids[s.completion_mask == 1].tolist() for s in group]
    rewards = function(
        prompts=[s.prompt for s in group], completions=[s.completion for s in group], completion_ids=ids,
        answer=[row["answer"]] * len(group),
    )  # fmt: skip
    rewards = asyncio.run(rewards) if is_async_callable(function) else rewards
    return [math.nan if r is None else r for r in rewards]
