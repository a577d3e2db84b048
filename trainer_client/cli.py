"""`trainer-client train --config FILE` trains; `trainer-client demo` runs the whole CPU demo."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from service_kit.cli import run_command

DEMO_CONFIG = """\
[model]
build_tiny = true

[data]
prompts = "{output}/sort.jsonl"

[rollout]
prompts_per_step = 8
samples_per_prompt = 16
max_new_tokens = 5
temperature = 1.0
chunks = 2

[algorithm]
name = "grpo"
learning_rate = 1e-3

[reward]
urls = ["{url}"]
profile = "accuracy"

[train]
steps = {steps}
seed = {seed}
output_dir = "{output}"
checkpoint_every = 10
"""


def _train(args: argparse.Namespace) -> int:
    from trainer_client.config import load_config
    from trainer_client.train import train

    out = train(load_config(args.config))
    print(f"metrics: {out / 'metrics.jsonl'}\ncurves:  {out / 'curves.png'}")
    return 0


def _demo(args: argparse.Namespace) -> int:
    """Start the reward service, write sort prompts and a config, train GRPO on the tiny model."""
    from reward_api.local import LocalServer
    from trainer_client.config import load_config
    from trainer_client.sort_task import write_sort_prompts
    from trainer_client.train import train

    output = Path(args.output).resolve()
    output.mkdir(parents=True, exist_ok=True)
    write_sort_prompts(output / "sort.jsonl", seed=args.seed)
    with LocalServer(output, REWARD_API_LOG_LEVEL="warning") as server:
        config_path = output / "demo.toml"
        config_path.write_text(DEMO_CONFIG.format(output=output, url=server.url, steps=args.steps, seed=args.seed))
        print(f"reward service at {server.url}; config {config_path}")
        out = train(load_config(config_path))
    print(f"metrics: {out / 'metrics.jsonl'}\ncurves:  {out / 'curves.png'}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="trainer-client", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    train = commands.add_parser("train", help="train with a TOML config")
    train.add_argument("--config", type=Path, required=True)
    train.set_defaults(run=_train)
    demo = commands.add_parser("demo", help="GRPO on the sort task with a tiny model, on CPU")
    demo.add_argument("--output", default="runs/demo")
    demo.add_argument("--steps", type=int, default=200)
    demo.add_argument("--seed", type=int, default=0)
    demo.set_defaults(run=_demo)
    return parser


def main(argv: list[str] | None = None) -> int:
    return run_command(build_parser(), argv)


if __name__ == "__main__":
    sys.exit(main())
