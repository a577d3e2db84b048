"""Adapters, called the way each framework calls them, against the real reward service.

TRL installs on CPU, so its adapter runs inside a real GRPOTrainer step. verl's own code
drives its adapter in tests/frameworks/verl/test_verl_compat.py, OpenRLHF's and slime's in
tests/frameworks/openrlhf/test_openrlhf_slime_compat.py.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from reward_api.local import LocalServer
from trainer_client.adapters import trl
from trainer_client.tiny_model import build_tiny_model

RIGHT, WRONG = "<think>two and two</think> \\boxed{4}", "<think>hm</think> \\boxed{5}"


@pytest.fixture
def service_env(server: LocalServer, monkeypatch: pytest.MonkeyPatch) -> LocalServer:
    monkeypatch.setenv("REWARD_SERVICE_URL", server.url)
    return server


def test_trl_sync_and_async_functions_take_plain_and_chat_completions(service_env: LocalServer) -> None:
    sync_reward = trl.reward_function(reference_column="answer")
    async_reward = trl.async_reward_function(reference_column="answer")
    logged: dict[str, float] = {}
    kwargs = {"answer": ["4", "4"], "trainer_state": None, "log_metric": logged.__setitem__}
    ids = [[7] * 9, [7] * 6]
    assert sync_reward(prompts=["2+2?", "2+2?"], completions=[RIGHT, WRONG], completion_ids=ids, **kwargs) == [1.0, 0.0]
    chat_prompts = [[{"role": "user", "content": "2+2?"}]] * 2
    chat = [[{"role": "assistant", "content": RIGHT}], [{"role": "assistant", "content": WRONG}]]
    got = asyncio.run(async_reward(prompts=chat_prompts, completions=chat, completion_ids=ids, **kwargs))
    assert got == [1.0, 0.0]
    assert logged == {
        f"rewards/{name}/{metric}": value
        for name in (sync_reward.__name__, async_reward.__name__)
        for metric, value in (("accuracy", 0.5), ("not_computed", 0.0))
    }


def test_trl_reward_function_names_a_missing_column(service_env: LocalServer) -> None:
    with pytest.raises(KeyError, match="no column 'answer'"):
        trl.reward_function(reference_column="answer")(prompts=["q"], completions=["a"], solution=["1"])


def test_trl_grpo_trainer_step_uses_the_service(service_env: LocalServer, tmp_path: Path) -> None:
    from datasets import Dataset
    from trl import GRPOConfig, GRPOTrainer

    model_dir = build_tiny_model(tmp_path / "model")
    dataset = Dataset.from_list([{"prompt": "sort: 3 1 2 ->", "reference": [3, 1, 2]}] * 8)
    sort_reward = trl.reward_function(task="sort")
    args = GRPOConfig(
        output_dir=str(tmp_path / "out"), per_device_train_batch_size=4, num_generations=4, max_completion_length=4,
        max_steps=1, learning_rate=1e-3, report_to=[], use_cpu=True, logging_steps=1, save_strategy="no",
    )  # fmt: skip
    trainer = GRPOTrainer(model=str(model_dir), reward_funcs=[sort_reward], args=args, train_dataset=dataset)
    trainer.train()
    rewards = list(trainer._logs["rewards"][sort_reward.__name__])  # what TRL got from us, per sample
    assert len(rewards) == 4 and all(0.0 <= r <= 1.0 for r in rewards)
    logged = trainer.state.log_history[0]
    assert logged[f"rewards/{sort_reward.__name__}/mean"] == pytest.approx(sum(rewards) / 4)
    assert logged[f"rewards/{sort_reward.__name__}/accuracy"] == pytest.approx(sum(rewards) / 4)
