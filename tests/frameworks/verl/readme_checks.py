"""The README's verl examples, run by verl itself in its environment (tests/frameworks/__init__.py).

tests/test_readme.py hands each block over: `python -m tests.frameworks.verl.readme_checks NAME SERVICE_URL`, the
block on standard input; a failed check exits non-zero with its traceback.
"""

from __future__ import annotations

import asyncio
import re
import shlex
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import verl.trainer.config
from hydra import compose, initialize_config_dir
from hydra.core.override_parser.overrides_parser import OverridesParser
from omegaconf import OmegaConf
from verl.trainer.ppo.reward import get_custom_reward_fn, load_reward_manager, resolve_reward_manager_cls

from trainer_client.adapters.verl import reward_options
from trainer_client.adapters.verl_manager import ServiceRewardManager

VERL_SERVICE_ADDRESS = "http://REWARD_HOST:8000"  # where the verl examples put the reward service


def verl_config(text: str) -> Any:
    """verl's own Hydra config with a `main_ppo` block's overrides, each read back as verl reads it."""
    argv = shlex.split(text.replace("\\\n", " "), comments=True)
    assert argv[:3] == ["python3", "-m", "verl.trainer.main_ppo"], argv
    overrides = [word for word in argv if "=" in word]
    with initialize_config_dir(config_dir=str(Path(verl.trainer.config.__file__).parent), version_base=None):
        config = compose(config_name="ppo_trainer", overrides=overrides)  # an unknown key raises, as in main_ppo
    for override in OverridesParser.create().parse_overrides(overrides):
        key = override.key_or_group
        assert OmegaConf.select(config, key) == override.value(), f"{key}: verl reads {OmegaConf.select(config, key)!r}"
    return config


def check_verl_reward_function(text: str, service_url: str) -> None:
    """verl's loader imports the function with its reward_kwargs, and it grades a GSM8K sample on the service."""
    reward_fn = get_custom_reward_fn(verl_config(text.replace(VERL_SERVICE_ADDRESS, service_url)))
    question = "Natalia sold 48 clips in April and half as many in May. How many clips did she sell?"
    completion = "<think>She sold 48 in April and half of that, 24, in May: 48 + 24 = 72.</think> $\\boxed{72}$"
    score = asyncio.run(
        reward_fn(data_source="openai/gsm8k", solution_str=completion, ground_truth="72",
                  extra_info={"split": "train", "index": 0, "question": question})
    )  # fmt: skip
    assert score["score"] == 3.0 and score["rs_ok"] == 1.0, score


def check_verl_reward_manager(text: str, service_url: str) -> None:
    """verl resolves our manager from its importlib source (test_verl_compat.py runs it in verl's reward loop)."""
    config = verl_config(text.replace(VERL_SERVICE_ADDRESS, service_url))
    assert resolve_reward_manager_cls(config) is ServiceRewardManager
    settings = reward_options(config.reward.reward_kwargs).settings
    assert settings.urls == (service_url,) and settings.profile == "kimi" and settings.group_size == 8


def check_verl_sandbox_fusion(text: str, service_url: str) -> None:
    """verl takes the overrides, and its reward manager loader hands the URL to its SandboxFusion scorer."""
    config = verl_config(text)
    # The comment's sizing rests on verl's default number of reward workers.
    shown_workers = re.search(r"reward\.num_workers \((\d+)\)", text)
    assert shown_workers is None or config.reward.num_workers == int(shown_workers.group(1))
    manager = load_reward_manager(config, tokenizer=None)
    assert manager.compute_score.keywords["sandbox_fusion_url"] == config.reward.sandbox_fusion.url


CHECKS: dict[str, Callable[[str, str], None]] = {
    "verl-reward-function": check_verl_reward_function,
    "verl-reward-manager": check_verl_reward_manager,
    "verl-sandbox-fusion": check_verl_sandbox_fusion,
}

if __name__ == "__main__":
    name, url = sys.argv[1:]
    CHECKS[name](sys.stdin.read(), url)
