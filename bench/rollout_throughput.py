"""Rollout speed on the tiny model: vLLM against transformers `generate`, and how much of a
training step waits on rewards with and without overlapping grading with sampling.

    .venv/bin/python bench/rollout_throughput.py [--prompts 64] [--samples 8] [--steps 4]

(a) the same prompts, `n` samples each, sampled by vLLM and by transformers: tokens/s, ratio;
(b) GRPO steps against the real reward service (`reward-api serve` on loopback), grading each
    chunk of completions while the next samples (chunks > 1) or after all of them (chunks = 1):
    the share of step time spent waiting on rewards.
"""

from __future__ import annotations

import argparse
import gc
import json
import sys
import tempfile
import time
from pathlib import Path

import torch

from reward_api.local import LocalServer
from trainer_client.config import config_from_dict
from trainer_client.rollout import TransformersGenerator, VLLMGenerator
from trainer_client.sort_task import write_sort_prompts
from trainer_client.tiny_model import build_tiny_model
from trainer_client.train import train


def sampling(model_dir: Path, prompts: list[list[int]], samples: int, max_new_tokens: int) -> dict[str, float]:
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    policy = AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32)
    generators = {
        "vllm": VLLMGenerator(str(model_dir), "float32", seed=0),
        "transformers": TransformersGenerator(policy, tokenizer),
    }
    rates = {}
    for name, generator in generators.items():
        generator.generate(prompts[:2], samples, max_new_tokens, 1.0, 1.0, seed=1)  # warm-up
        started = time.perf_counter()
        groups = generator.generate(prompts, samples, max_new_tokens, 1.0, 1.0, seed=2)
        seconds = time.perf_counter() - started
        tokens = sum(len(s.token_ids) for group in groups for s in group)
        rates[name] = tokens / seconds
        print(f"{name:13s} {tokens:6d} tokens in {seconds:6.2f}s: {rates[name]:9.1f} tokens/s")
    print(f"ratio vllm / transformers: {rates['vllm'] / rates['transformers']:.2f}x")
    generators.clear()  # free this engine's memory before the training runs start their own
    gc.collect()
    return rates


def wait_share(work: Path, url: str, args: argparse.Namespace, chunks: int) -> float:
    run = work / f"chunks-{chunks}"
    config = config_from_dict(
        {
            "model": {"path": str(work / "model")},
            "data": {"prompts": str(work / "sort.jsonl")},
            "rollout": {
                "backend": "vllm", "prompts_per_step": args.prompts, "samples_per_prompt": args.samples,
                "max_new_tokens": args.max_new_tokens, "chunks": chunks,
            },
            "reward": {"urls": [url], "profile": args.profile},
            "train": {"steps": args.steps + 1, "output_dir": str(run), "checkpoint_every": 0},
        }
    )  # fmt: skip
    train(config)
    rows = [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()][1:]  # skip warm-up
    share = sum(r["reward_wait_s"] for r in rows) / sum(r["step_s"] for r in rows)
    step_s = sum(r["step_s"] for r in rows) / len(rows)
    print(f"chunks={chunks}: reward wait {share:6.1%} of step time (mean step {step_s:.2f}s)")
    return share


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--prompts", type=int, default=64, help="prompts per step / per sampling batch")
    parser.add_argument("--samples", type=int, default=8)
    parser.add_argument("--max-new-tokens", type=int, default=16)
    parser.add_argument("--steps", type=int, default=4)
    parser.add_argument("--profile", default="r1", help="reward profile for the overlap runs")
    parser.add_argument("--layers", type=int, default=2, help="model depth (the tests' tiny model: 2)")
    parser.add_argument("--heads", type=int, default=2, help="attention heads; hidden size = 64 x heads")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="rollout-bench-") as tmp:
        work = Path(tmp)
        model_dir = build_tiny_model(work / "model", num_layers=args.layers, num_heads=args.heads)
        write_sort_prompts(work / "sort.jsonl", count=args.prompts * (args.steps + 1), seed=0)
        from transformers import AutoTokenizer

        tokenizer = AutoTokenizer.from_pretrained(model_dir)
        rows = [json.loads(line) for line in (work / "sort.jsonl").read_text().splitlines()[: args.prompts]]
        prompts = [tokenizer(row["prompt"])["input_ids"] for row in rows]
        print(
            f"Llama {args.layers} layers x {64 * args.heads} hidden, {args.prompts} prompts x {args.samples} samples, "
            f"{args.max_new_tokens} new tokens"
        )
        sampling(model_dir, prompts, args.samples, args.max_new_tokens)
        with LocalServer(work, REWARD_API_LOG_LEVEL="warning") as server:
            without = wait_share(work, server.url, args, chunks=1)
            overlapped = wait_share(work, server.url, args, chunks=4)
        print(f"reward wait share: {without:.1%} without overlap, {overlapped:.1%} with (chunks=4)")


if __name__ == "__main__":
    sys.exit(main())
