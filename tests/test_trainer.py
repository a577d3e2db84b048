"""The reference trainer, for real: a tiny Llama built here, vLLM (CPU) rollouts, rewards from
the real reward service on loopback, torch updates."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reward_api.local import LocalServer
from trainer_client.config import config_from_dict
from trainer_client.sort_task import write_sort_prompts
from trainer_client.train import train


def make_config(tmp: Path, url: str, algorithm: dict, steps: int, backend: str = "vllm", **train_options) -> object:
    prompts = write_sort_prompts(tmp / "sort.jsonl", count=64, seed=0)
    return config_from_dict(
        {
            "model": {"build_tiny": True, "path": str(tmp.parent / "tiny-model")},
            "data": {"prompts": str(prompts)},
            "rollout": {"backend": backend, "prompts_per_step": 8, "samples_per_prompt": 16, "max_new_tokens": 5},
            "algorithm": algorithm,
            "reward": {"urls": [url]},
            "train": {"steps": steps, "seed": 0, "output_dir": str(tmp / "run"), **train_options},
        }
    )


def metrics(run: Path) -> list[dict]:
    return [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]


def test_grpo_on_the_sort_task_learns(server: LocalServer, tmp_path: Path) -> None:
    config = make_config(tmp_path, server.url, {"name": "grpo", "learning_rate": 1e-3}, steps=40)
    rows = metrics(train(config))
    assert [row["step"] for row in rows] == list(range(40))
    first = sum(row["reward_mean"] for row in rows[:5]) / 5
    last = sum(row["reward_mean"] for row in rows[-5:]) / 5
    assert last > first + 0.05, (first, last)
    for key in (
        "reward/accuracy",
        "kl",
        "entropy",
        "clip_fraction",
        "response_length",
        "reward_wait_s",
        "tokens_per_s",
    ):
        assert key in rows[-1]
    png = tmp_path / "run" / "curves.png"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert (tmp_path / "run" / "checkpoint" / "model" / "config.json").exists()


def test_ppo_value_loss_falls(server: LocalServer, tmp_path: Path) -> None:
    algorithm = {"name": "ppo", "learning_rate": 1e-3, "kl_coef": 0.05, "updates_per_step": 2, "minibatches": 2}
    config = make_config(tmp_path, server.url, algorithm, steps=12, backend="transformers")
    rows = metrics(train(config))
    first = sum(row["value_loss"] for row in rows[:3]) / 3
    last = sum(row["value_loss"] for row in rows[-3:]) / 3
    assert last < first, (first, last)
    assert all(row["kl"] >= 0 for row in rows)


@pytest.mark.parametrize(
    ("algorithm", "clip_high"),
    [({"name": "dr_grpo"}, 0.2), ({"name": "dapo"}, 0.28), ({"name": "grpo", "kl_coef": 0.04}, 0.2)],
)
def test_other_algorithms_train(server: LocalServer, tmp_path: Path, algorithm: dict, clip_high: float) -> None:
    config = make_config(tmp_path, server.url, algorithm | {"updates_per_step": 2}, steps=2, backend="transformers")
    assert config.algorithm.upper_clip() == clip_high
    rows = metrics(train(config))
    assert len(rows) == 2 and all(row["loss"] == row["loss"] for row in rows)  # finite, not NaN
    assert rows[-1]["clip_fraction"] >= 0.0


def test_resume_continues_from_the_checkpoint(server: LocalServer, tmp_path: Path) -> None:
    first = make_config(tmp_path, server.url, {"name": "grpo"}, steps=4, backend="transformers", checkpoint_every=2)
    train(first)
    state_after_four = (tmp_path / "run" / "checkpoint" / "state.pt").read_bytes()
    second = make_config(tmp_path, server.url, {"name": "grpo"}, steps=6, backend="transformers", checkpoint_every=2)
    rows = metrics(train(second))
    assert [row["step"] for row in rows] == [0, 1, 2, 3, 4, 5]
    assert (tmp_path / "run" / "checkpoint" / "state.pt").read_bytes() != state_after_four


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ({"data": {}}, "prompts"),
        ({"data": {"prompts": "x.jsonl"}}, "build_tiny"),
        ({"data": {"prompts": "x"}, "model": {"build_tiny": True}, "optimiser": {}}, "unknown config section"),
        ({"data": {"prompts": "x"}, "model": {"build_tiny": True}, "rollout": {"samples": 4}}, "unknown field"),
        ({"data": {"prompts": "x"}, "model": {"build_tiny": True}, "rollout": {"samples_per_prompt": 1}}, "at least 2"),
    ],
)
def test_config_errors_name_the_field(raw: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        config_from_dict(raw)
