"""Trainer configuration: a TOML file, every field with a default that works.

    [model]       path = "runs/demo/model"   # or build_tiny = true
    [data]        prompts = "data/sort.jsonl" # rows: {"prompt": ..., "task": ..., "reference": ...}
    [rollout]     backend = "auto"            # vllm when installed, else transformers
    [algorithm]   name = "grpo"               # grpo | dr_grpo | dapo | ppo
    [reward]      urls = ["http://127.0.0.1:8000"]
    [train]       steps = 50

Unknown sections or fields are errors that name them.
"""

from __future__ import annotations

import dataclasses
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

if sys.version_info < (3, 11):  # noqa: UP036 - tomllib; the client and the adapters run on 3.10 (pyproject.toml)
    raise ImportError(f"the reference trainer needs Python 3.11 or newer, not {sys.version.split()[0]}")

import tomllib


@dataclass
class ModelConfig:
    path: str = ""  # a transformers model directory; empty with build_tiny: <output_dir>/model
    build_tiny: bool = False  # build the tiny sort-task Llama first (no hub needed)
    dtype: Literal["float32", "bfloat16", "float16"] = "float32"


@dataclass
class DataConfig:
    prompts: str = ""  # JSONL, one row per prompt: prompt, task, reference (+ any item fields)


@dataclass
class RolloutConfig:
    backend: Literal["auto", "vllm", "transformers"] = "auto"
    prompts_per_step: int = 8
    samples_per_prompt: int = 8  # the group size G
    max_new_tokens: int = 16
    temperature: float = 1.0
    top_p: float = 1.0
    chunks: int = 2  # generate in this many chunks, grading each while the next one samples
    max_model_len: int | None = None  # vLLM's context; None: the model's own maximum
    vllm_gpu_memory_utilization: float = 0.3  # on a GPU: the share vLLM takes for weights and KV cache
    # On CPU: the KV cache's size. (vLLM's CPU default sizes it from a share of all RAM
    # minus this process's size, which fails once the trainer itself holds a few GB.)
    vllm_cpu_kv_cache_mb: int = 512


@dataclass
class AlgorithmConfig:
    name: Literal["grpo", "dr_grpo", "dapo", "ppo"] = "grpo"
    learning_rate: float = 1e-3
    clip_low: float = 0.2
    clip_high: float | None = None  # None: = clip_low; DAPO's clip-higher default is 0.28
    kl_coef: float = 0.0  # GRPO's beta (k3 KL in the loss) or PPO's per-token KL penalty in the reward
    updates_per_step: int = 1  # optimisation epochs over each step's rollouts
    minibatches: int = 1
    max_grad_norm: float = 1.0
    overlong_filter: bool | None = None  # DAPO: drop truncated samples from the loss (default on for dapo)
    gamma: float = 1.0  # PPO
    lam: float = 0.95  # PPO
    value_clip: float = 0.2  # PPO
    value_coef: float = 0.5  # PPO

    def upper_clip(self) -> float:
        if self.clip_high is not None:
            return self.clip_high
        return 0.28 if self.name == "dapo" else self.clip_low

    def filters_overlong(self) -> bool:
        return self.overlong_filter if self.overlong_filter is not None else self.name == "dapo"


@dataclass
class RewardConfig:
    urls: list[str] = field(default_factory=lambda: ["http://127.0.0.1:8000"])
    profile: str | dict[str, Any] = "accuracy"
    batch_size: int = 256
    timeout_s: float = 300.0
    token: str = ""


@dataclass
class TrainConfig:
    steps: int = 50
    seed: int = 0
    output_dir: str = "runs/demo"
    checkpoint_every: int = 10  # steps; 0 = only at the end
    resume: bool = True  # continue from <output_dir>/checkpoint when it exists
    device: str = "auto"  # auto | cpu | cuda


@dataclass
class Config:
    model: ModelConfig = field(default_factory=ModelConfig)
    data: DataConfig = field(default_factory=DataConfig)
    rollout: RolloutConfig = field(default_factory=RolloutConfig)
    algorithm: AlgorithmConfig = field(default_factory=AlgorithmConfig)
    reward: RewardConfig = field(default_factory=RewardConfig)
    train: TrainConfig = field(default_factory=TrainConfig)

    def model_path(self) -> Path:
        return Path(self.model.path) if self.model.path else Path(self.train.output_dir) / "model"


def load_config(path: str | Path) -> Config:
    with open(path, "rb") as handle:
        return config_from_dict(tomllib.load(handle))


def config_from_dict(raw: dict[str, Any]) -> Config:
    sections = {f.name: f for f in dataclasses.fields(Config)}
    unknown = sorted(set(raw) - set(sections))
    if unknown:
        raise ValueError(f"unknown config section(s) {unknown}; known: {sorted(sections)}")
    built = {}
    for name, section in sections.items():
        cls = section.default_factory().__class__
        values = raw.get(name, {})
        known = {f.name for f in dataclasses.fields(cls)}
        extra = sorted(set(values) - known)
        if extra:
            raise ValueError(f"[{name}]: unknown field(s) {extra}; known: {sorted(known)}")
        built[name] = cls(**values)
    config = Config(**built)
    _validate(config)
    return config


def _validate(config: Config) -> None:
    if not config.data.prompts:
        raise ValueError("[data] prompts: a JSONL file of prompts is required")
    if not config.model.path and not config.model.build_tiny:
        raise ValueError("[model]: set path to a model directory, or build_tiny = true")
    if config.rollout.samples_per_prompt < 2 and config.algorithm.name != "ppo":
        raise ValueError("[rollout] samples_per_prompt: group-relative algorithms need at least 2")
    if config.algorithm.name not in ("grpo", "dr_grpo", "dapo", "ppo"):
        raise ValueError(f"[algorithm] name: {config.algorithm.name!r} is not grpo, dr_grpo, dapo or ppo")
