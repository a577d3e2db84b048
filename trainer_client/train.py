"""The reference trainer: GRPO, Dr. GRPO, DAPO and PPO on torch, sampling with vLLM,
rewards from the reward service. Read it top to bottom; the equations live in
trainer_client/algorithms.py.

Each step:
  1. sample G completions for each of the step's prompts, in chunks; each chunk's items go
     to the reward service as soon as it is sampled, so grading overlaps sampling;
  2. wait for the rewards (the wait is measured and logged);
  3. score the completions under the policy (old log-probs), the reference model (KL)
     and, for PPO, the value head;
  4. advantages: group z-score (GRPO, DAPO), group-centred (Dr. GRPO), or GAE (PPO);
  5. clipped policy-gradient updates (+ k3 KL, + clipped value loss for PPO);
  6. copy the new weights into vLLM; log, plot, checkpoint.
"""

from __future__ import annotations

import json
import random
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from tqdm import tqdm

from trainer_client import algorithms as alg
from trainer_client.client import RewardResult, SyncRewardClient
from trainer_client.config import Config
from trainer_client.plots import plot_curves
from trainer_client.rollout import Generator, Sample, TransformersGenerator, VLLMGenerator, vllm_available
from trainer_client.tiny_model import build_tiny_model

CHECKPOINT = "checkpoint"
METRICS = "metrics.jsonl"
PLOT = "curves.png"


@dataclass
class Rollout:
    """One step's samples, flattened prompt-major: sample j of prompt i is row i * G + j."""

    prompt_ids: list[list[int]]  # per row
    samples: list[Sample]
    results: list[RewardResult]
    generate_s: float
    reward_wait_s: float

    @property
    def rewards(self) -> torch.Tensor:
        return torch.tensor([r.reward for r in self.results], dtype=torch.float32)


def train(config: Config) -> Path:
    out = Path(config.train.output_dir)
    out.mkdir(parents=True, exist_ok=True)
    device = _device(config.train.device)
    _seed_everything(config.train.seed)
    rows = _read_prompts(Path(config.data.prompts))

    # ---- models: policy, frozen reference, value head (PPO), tokenizer --------------------------------
    from transformers import AutoModelForCausalLM, AutoTokenizer

    if config.model.build_tiny and not config.model_path().exists():
        build_tiny_model(config.model_path(), seed=config.train.seed)
    checkpoint = out / CHECKPOINT
    resuming = config.train.resume and (checkpoint / "state.pt").exists()
    policy_path = checkpoint / "model" if resuming else config.model_path()
    dtype = getattr(torch, config.model.dtype)
    tokenizer = AutoTokenizer.from_pretrained(policy_path)
    policy = AutoModelForCausalLM.from_pretrained(policy_path, dtype=dtype).to(device)
    algo = config.algorithm
    needs_reference = algo.kl_coef > 0
    reference = None
    if needs_reference:
        reference = AutoModelForCausalLM.from_pretrained(config.model_path(), dtype=dtype).to(device).eval()
        reference.requires_grad_(False)
    value_head = torch.nn.Linear(policy.config.hidden_size, 1).to(device) if algo.name == "ppo" else None
    parameters = list(policy.parameters()) + (list(value_head.parameters()) if value_head else [])
    optimizer = torch.optim.AdamW(parameters, lr=algo.learning_rate)

    start_step = 0
    if resuming:
        start_step = _load_state(checkpoint / "state.pt", optimizer, value_head) + 1
        _truncate_metrics(out / METRICS, start_step)

    generator = _generator(config, policy, tokenizer, policy_path)
    client = SyncRewardClient(
        config.reward.urls,
        profile=config.reward.profile,
        batch_size=config.reward.batch_size,
        timeout_s=config.reward.timeout_s,
        token=config.reward.token or None,
    )
    prompt_order = random.Random(config.train.seed).sample(range(len(rows)), len(rows))

    # ---- the loop ------------------------------------------------------------------------------------
    progress = tqdm(range(start_step, config.train.steps), initial=start_step, total=config.train.steps, unit="step")
    try:
        for step in progress:
            step_started = time.perf_counter()
            batch_rows = [
                rows[prompt_order[(step * config.rollout.prompts_per_step + k) % len(rows)]]
                for k in range(config.rollout.prompts_per_step)
            ]
            rollout = _rollout(config, step, batch_rows, tokenizer, generator, client)
            metrics = _update(config, rollout, policy, reference, value_head, optimizer, tokenizer, device)
            generator.load_weights(policy)

            step_s = time.perf_counter() - step_started
            response_tokens = sum(len(s.token_ids) for s in rollout.samples)
            metrics |= _reward_metrics(rollout) | {
                "step": step,
                "response_length": response_tokens / len(rollout.samples),
                "generate_s": rollout.generate_s,
                "reward_wait_s": rollout.reward_wait_s,
                "reward_wait_share": rollout.reward_wait_s / step_s,
                "step_s": step_s,
                "tokens_per_s": response_tokens / rollout.generate_s if rollout.generate_s else 0.0,
            }
            with (out / METRICS).open("a") as log:
                log.write(json.dumps(metrics) + "\n")
            progress.set_postfix(reward=f"{metrics['reward_mean']:.3f}", kl=f"{metrics['kl']:.4f}")
            last = step == config.train.steps - 1
            if last or (config.train.checkpoint_every and (step + 1) % config.train.checkpoint_every == 0):
                _save_checkpoint(checkpoint, step, policy, tokenizer, optimizer, value_head)
                plot_curves(out / METRICS, out / PLOT)
    finally:
        client.close()
    return out


# ---- 1-2. rollouts and rewards ----------------------------------------------------------------------------


def _rollout(config: Config, step: int, rows: list[dict], tokenizer, generator: Generator, client) -> Rollout:
    group = config.rollout.samples_per_prompt
    prompt_ids = [tokenizer(row["prompt"])["input_ids"] for row in rows]
    chunk = -(-len(rows) // max(1, config.rollout.chunks))
    pending, samples, generate_s = [], [], 0.0
    for start in range(0, len(rows), chunk):
        began = time.perf_counter()
        groups = generator.generate(
            prompt_ids[start : start + chunk],
            group,
            config.rollout.max_new_tokens,
            config.rollout.temperature,
            config.rollout.top_p,
            seed=config.train.seed * 1_000_003 + step * 1009 + start,
        )
        generate_s += time.perf_counter() - began
        items = []
        for offset, group_samples in enumerate(groups):
            i = start + offset
            for j, sample in enumerate(group_samples):
                items.append(_reward_item(rows[i], sample, f"{step}:{i}", f"{step}:{i}:{j}"))
                samples.append(sample)
        pending.append(client.submit(items))  # graded while the next chunk samples
    waited_from = time.perf_counter()
    results = [result for future in pending for result in future.result()]
    reward_wait_s = time.perf_counter() - waited_from
    expanded_prompts = [ids for ids in prompt_ids for _ in range(group)]
    return Rollout(expanded_prompts, samples, results, generate_s, reward_wait_s)


def _reward_item(row: dict, sample: Sample, group: str, item_id: str) -> dict[str, Any]:
    item = {k: v for k, v in row.items() if k != "prompt"}
    return item | {
        "completion": sample.text,
        "prompt": row["prompt"],
        "group": group,
        "id": item_id,
        "num_tokens": len(sample.token_ids),
    }


def _reward_metrics(rollout: Rollout) -> dict[str, float]:
    rewards = rollout.rewards
    metrics = {
        "reward_mean": rewards.mean().item(),
        "reward_std": rewards.std().item() if len(rewards) > 1 else 0.0,
        "not_ok_items": float(sum(not r.ok for r in rollout.results)),
    }
    names = {name for r in rollout.results for name in r.components}
    for name in sorted(names):
        metrics[f"reward/{name}"] = sum(r.components.get(name, 0.0) for r in rollout.results) / len(rollout.results)
    return metrics


# ---- 3. scoring: log-probs, values ------------------------------------------------------------------------


@dataclass
class Batch:
    input_ids: torch.Tensor  # [B, P + T]: left-padded prompt, right-padded response
    attention_mask: torch.Tensor
    position_ids: torch.Tensor
    response_ids: torch.Tensor  # [B, T]
    mask: torch.Tensor  # [B, T] 1.0 on response tokens that count in the loss
    prompt_width: int


def _batch(rollout: Rollout, tokenizer, device: torch.device, drop_truncated: bool) -> Batch:
    pad = tokenizer.pad_token_id
    width = max(len(ids) for ids in rollout.prompt_ids)
    length = max(1, max(len(s.token_ids) for s in rollout.samples))
    rows, attention, masks = [], [], []
    for prompt, sample in zip(rollout.prompt_ids, rollout.samples, strict=True):
        response = sample.token_ids
        rows.append([pad] * (width - len(prompt)) + prompt + response + [pad] * (length - len(response)))
        attention.append(
            [0] * (width - len(prompt)) + [1] * (len(prompt) + len(response)) + [0] * (length - len(response))
        )
        keep = 0.0 if drop_truncated and not sample.finished else 1.0  # DAPO overlong filtering
        masks.append([keep] * len(response) + [0.0] * (length - len(response)))
    input_ids = torch.tensor(rows, device=device)
    attention_mask = torch.tensor(attention, device=device)
    position_ids = (attention_mask.cumsum(dim=1) - 1).clamp(min=0)
    return Batch(
        input_ids, attention_mask, position_ids, input_ids[:, width:], torch.tensor(masks, device=device), width
    )


def _forward(model, batch: Batch, value_head=None):
    """Per-token log-probs of the response [B, T], the logits behind them, and values (PPO)."""
    out = model(
        input_ids=batch.input_ids,
        attention_mask=batch.attention_mask,
        position_ids=batch.position_ids,
        output_hidden_states=value_head is not None,
    )
    # Position t's logits predict token t + 1: the response starts after the prompt's last token.
    logits = out.logits[:, batch.prompt_width - 1 : -1].float()
    logprobs = torch.log_softmax(logits, dim=-1).gather(-1, batch.response_ids.unsqueeze(-1)).squeeze(-1)
    values = None
    if value_head is not None:
        hidden = out.hidden_states[-1][:, batch.prompt_width - 1 : -1].float()
        values = value_head(hidden).squeeze(-1)
    return logprobs, logits, values


# ---- 4-5. advantages and updates --------------------------------------------------------------------------


def _update(config: Config, rollout: Rollout, policy, reference, value_head, optimizer, tokenizer, device) -> dict:
    algo = config.algorithm
    batch = _batch(rollout, tokenizer, device, drop_truncated=algo.filters_overlong())
    rewards = rollout.rewards.to(device)
    with torch.no_grad():
        old_logprobs, _, old_values = _forward(policy, batch, value_head)
        ref_logprobs = _forward(reference, batch)[0] if reference is not None else old_logprobs

    if algo.name == "ppo":
        token_rewards = alg.ppo_token_rewards(rewards, old_logprobs, ref_logprobs, batch.mask, algo.kl_coef)
        advantages, returns = alg.gae(token_rewards, old_values, batch.mask, algo.gamma, algo.lam)
        advantages = alg.whiten(advantages, batch.mask)
    else:
        group = config.rollout.samples_per_prompt
        per_sequence = alg.group_advantages(rewards, group, scale_by_std=algo.name != "dr_grpo")
        advantages, returns = per_sequence.unsqueeze(1) * batch.mask, None
    aggregation = {"grpo": "sequence_mean", "dr_grpo": "token_sum_constant"}.get(algo.name, "token_mean")

    stats: dict[str, list[float]] = {"loss": [], "clip_fraction": [], "entropy": [], "kl": [], "grad_norm": []}
    if value_head is not None:
        stats["value_loss"] = []
    rows = torch.arange(batch.input_ids.shape[0], device=device)
    for _ in range(algo.updates_per_step):
        for minibatch in rows[torch.randperm(len(rows), device=device)].chunk(algo.minibatches):
            mb = _select(batch, minibatch)
            logprobs, logits, values = _forward(policy, mb, value_head)
            mask = mb.mask
            pg_loss, clipped = alg.clipped_surrogate(
                logprobs, old_logprobs[minibatch], advantages[minibatch], algo.clip_low, algo.upper_clip()
            )
            kl = alg.k3_kl(logprobs, ref_logprobs[minibatch])
            per_token = pg_loss + (algo.kl_coef * kl if algo.name != "ppo" else 0.0)
            loss = alg.aggregate(per_token, mask, aggregation, config.rollout.max_new_tokens)
            if value_head is not None:
                value_loss = alg.clipped_value_loss(
                    values, old_values[minibatch], returns[minibatch], mask, algo.value_clip
                )
                loss = loss + algo.value_coef * value_loss
                stats["value_loss"].append(value_loss.item())
            optimizer.zero_grad()
            loss.backward()
            grad_norm = torch.nn.utils.clip_grad_norm_(
                [p for g in optimizer.param_groups for p in g["params"]], algo.max_grad_norm
            )
            optimizer.step()
            with torch.no_grad():
                stats["loss"].append(loss.item())
                stats["clip_fraction"].append(alg.masked_mean(clipped, mask).item())
                stats["entropy"].append(alg.masked_mean(alg.entropy_from_logits(logits), mask).item())
                stats["kl"].append(alg.masked_mean(kl, mask).item())
                stats["grad_norm"].append(float(grad_norm))
    return {name: sum(values) / len(values) for name, values in stats.items()}


def _select(batch: Batch, rows: torch.Tensor) -> Batch:
    return Batch(
        batch.input_ids[rows],
        batch.attention_mask[rows],
        batch.position_ids[rows],
        batch.response_ids[rows],
        batch.mask[rows],
        batch.prompt_width,
    )


# ---- set-up helpers ---------------------------------------------------------------------------------------


def _generator(config: Config, policy, tokenizer, model_path: Path) -> Generator:
    backend = config.rollout.backend
    if backend == "auto":
        backend = "vllm" if vllm_available() else "transformers"
    if backend == "vllm":
        rollout = config.rollout
        return VLLMGenerator(
            str(model_path),
            config.model.dtype,
            config.train.seed,
            rollout.max_model_len,
            rollout.vllm_gpu_memory_utilization,
            rollout.vllm_cpu_kv_cache_mb,
        )
    return TransformersGenerator(policy, tokenizer)


def _device(name: str) -> torch.device:
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return torch.device(name)


def _seed_everything(seed: int) -> None:
    random.seed(seed)
    torch.manual_seed(seed)


def _read_prompts(path: Path) -> list[dict]:
    rows = []
    with path.open(encoding="utf-8") as lines:
        for number, line in enumerate(lines, 1):
            if line.strip():
                row = json.loads(line)
                if not isinstance(row, dict) or not isinstance(row.get("prompt"), str):
                    raise ValueError(f"{path}:{number}: each row needs a string `prompt`")
                rows.append(row)
    if not rows:
        raise ValueError(f"{path}: no prompts")
    return rows


def _save_checkpoint(directory: Path, step: int, policy, tokenizer, optimizer, value_head) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    policy.save_pretrained(directory / "model")
    tokenizer.save_pretrained(directory / "model")
    state = {
        "step": step,
        "optimizer": optimizer.state_dict(),
        "value_head": value_head.state_dict() if value_head is not None else None,
        "torch_rng": torch.get_rng_state(),
        "python_rng": random.getstate(),
    }
    torch.save(state, directory / "state.pt.tmp")
    (directory / "state.pt.tmp").replace(directory / "state.pt")  # a crash mid-save keeps the last good one


def _load_state(path: Path, optimizer, value_head) -> int:
    state = torch.load(path, weights_only=False)
    optimizer.load_state_dict(state["optimizer"])
    if value_head is not None and state["value_head"] is not None:
        value_head.load_state_dict(state["value_head"])
    torch.set_rng_state(state["torch_rng"])
    random.setstate(state["python_rng"])
    return state["step"]


def _truncate_metrics(path: Path, next_step: int) -> None:
    """On resume, forget steps logged after the checkpoint: they will be run again."""
    if path.exists():
        kept = [line for line in path.read_text().splitlines() if json.loads(line)["step"] < next_step]
        path.write_text("".join(line + "\n" for line in kept))
