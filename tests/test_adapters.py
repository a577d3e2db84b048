"""Adapters, called the way each framework calls them, against the real reward service.

TRL installs on CPU, so its adapter runs inside a real GRPOTrainer step. verl, OpenRLHF
and slime need GPUs or their own stacks to install; their adapters are called exactly as
those frameworks' code calls a custom reward (keyword names, argument types, awaiting).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import torch

from reward_api.local import LocalServer
from trainer_client.adapters import openrlhf, slime, trl, verl
from trainer_client.tiny_model import build_tiny_model

RIGHT, WRONG = "<think>two and two</think> \\boxed{4}", "<think>hm</think> \\boxed{5}"


@pytest.fixture
def service_env(server: LocalServer, monkeypatch: pytest.MonkeyPatch) -> LocalServer:
    monkeypatch.setenv("REWARD_SERVICE_URL", server.url)
    for module in (verl, openrlhf):
        monkeypatch.setattr(module, "_client", None)
    monkeypatch.setattr(slime, "_clients", {})
    return server


def test_trl_sync_and_async_functions_take_plain_and_chat_completions(service_env: LocalServer) -> None:
    sync_reward = trl.reward_function(reference_column="answer")
    async_reward = trl.async_reward_function(reference_column="answer")
    logged: dict[str, float] = {}
    kwargs = {"answer": ["4", "4"], "trainer_state": None, "log_metric": logged.__setitem__}
    assert sync_reward(prompts=["2+2?", "2+2?"], completions=[RIGHT, WRONG], completion_ids=[[], []], **kwargs) == [
        1.0, 0.0,
    ]  # fmt: skip
    chat_prompts = [[{"role": "user", "content": "2+2?"}]] * 2
    chat = [[{"role": "assistant", "content": RIGHT}], [{"role": "assistant", "content": WRONG}]]
    got = asyncio.run(async_reward(prompts=chat_prompts, completions=chat, completion_ids=[[], []], **kwargs))
    assert got == [1.0, 0.0]
    assert logged == {"reward_service/accuracy": 0.5}


def test_trl_reward_function_names_a_missing_column(service_env: LocalServer) -> None:
    with pytest.raises(KeyError, match="no column 'answer'"):
        trl.reward_function(reference_column="answer")(prompts=["q"], completions=["a"], solution=["1"])


def test_trl_grpo_trainer_step_uses_the_service(service_env: LocalServer, tmp_path: Path) -> None:
    from datasets import Dataset
    from trl import GRPOConfig, GRPOTrainer

    model_dir = build_tiny_model(tmp_path / "model")
    dataset = Dataset.from_list([{"prompt": "sort: 3 1 2 ->", "reference": [3, 1, 2]}] * 8)
    calls: list[list[float]] = []
    sort_reward = trl.reward_function(task="sort")

    def recorded(**kwargs: Any) -> list[float | None]:
        calls.append(sort_reward(**kwargs))
        return calls[-1]

    args = GRPOConfig(
        output_dir=str(tmp_path / "out"), per_device_train_batch_size=4, num_generations=4, max_completion_length=4,
        max_steps=1, learning_rate=1e-3, report_to=[], use_cpu=True, logging_steps=1, save_strategy="no",
    )  # fmt: skip
    trainer = GRPOTrainer(model=str(model_dir), reward_funcs=[recorded], args=args, train_dataset=dataset)
    trainer.train()
    assert calls and all(0.0 <= r <= 1.0 for r in calls[0]) and len(calls[0]) == 4


def test_verl_compute_score_single_and_batch(service_env: LocalServer) -> None:
    # NaiveRewardManager: compute_score(data_source=..., solution_str=..., ground_truth=..., extra_info=...)
    single = verl.compute_score(data_source="openai/gsm8k", solution_str=RIGHT, ground_truth="4", extra_info={})
    assert single["score"] == 1.0 and single["rs_accuracy"] == 1.0
    # BatchRewardManager: compute_score(data_sources=..., solution_strs=..., ground_truths=..., extra_infos=...)
    batch = verl.compute_score_batch(
        data_sources=["openai/gsm8k", "sort-task"],
        solution_strs=[WRONG, "1 2 3"],
        ground_truths=["4", {"task": "sort", "reference": [3, 2, 1]}],
        extra_infos=[None, {"index": 1}],
    )
    assert [s["score"] for s in batch] == [0.0, 1.0]


def test_openrlhf_reward_func(service_env: LocalServer) -> None:
    out = openrlhf.reward_func(["Q: 2+2?" + RIGHT + "<|im_end|>", "Q: 2+2?" + WRONG], ["Q: 2+2?"] * 2, ["4", "4"])
    assert out["rewards"].tolist() == [1.0, 0.0] and out["scores"].tolist() == [1.0, 0.0]
    assert isinstance(out["rewards"], torch.Tensor)
    assert out["extra_logs"]["accuracy"].tolist() == [1.0, 0.0]
    assert openrlhf.reward_func([], [], [])["rewards"].tolist() == []


@dataclass
class SlimeSample:
    """The fields of slime.utils.types.Sample that a custom reward reads."""

    prompt: str | list[dict[str, str]] = ""
    response: str = ""
    label: Any = None
    response_length: int = 0
    metadata: dict = field(default_factory=dict)


def test_slime_custom_reward_single_and_group(service_env: LocalServer) -> None:
    async def run() -> tuple[float, list[float]]:
        one = await slime.reward(None, SlimeSample("2+2?", RIGHT, "4", 5))
        group = await slime.reward(
            None,
            [SlimeSample([{"role": "user", "content": "sort"}], "1 2", '{"task": "sort", "reference": [2, 1]}'),
             SlimeSample("2+2?", WRONG, "4")],
        )  # fmt: skip
        return one, group

    assert asyncio.run(run()) == (1.0, [1.0, 0.0])
