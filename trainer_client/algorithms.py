"""The RL equations, one function each, cleanrl-style: read top to bottom.

Shapes: B sequences (G samples of each prompt, grouped contiguously), T response tokens.
`mask` is 1.0 on response tokens that count, 0.0 on padding. Log-probs are per token.

    GRPO      advantage  A_i = (r_i - mean(r_group)) / (std(r_group) + eps)
              loss       mean_i [ 1/|o_i| sum_t ( -min(rho A_i, clip(rho, 1-e, 1+e) A_i) + beta KL_t ) ]
    Dr. GRPO  advantage  A_i = r_i - mean(r_group)               (no std)
              loss       sum_i sum_t ( ... ) / (B * T_max)        (no 1/|o_i|)
    DAPO      advantage  as GRPO; clip-higher: clip(rho, 1-e_low, 1+e_high)
              loss       sum_i sum_t ( ... ) / sum_i |o_i|        (token-level)
              overlong filtering: truncated samples get mask 0
    PPO       per-token reward r_t = -kl_coef (log pi - log pi_ref) (+ sequence reward at the last token)
              GAE        delta_t = r_t + gamma V_{t+1} - V_t,  A_t = delta_t + gamma lambda A_{t+1}
              returns    R_t = A_t + V_t
              value loss 0.5 max((V - R)^2, (V_old + clip(V - V_old, -c, c) - R)^2)
    KL        k3 estimator  KL_t = exp(log pi_ref - log pi) - (log pi_ref - log pi) - 1  (>= 0, unbiased)
"""

from __future__ import annotations

from typing import Literal

import torch

Aggregation = Literal["sequence_mean", "token_sum_constant", "token_mean"]


def group_advantages(rewards: torch.Tensor, group_size: int, scale_by_std: bool = True, eps: float = 1e-4):
    """GRPO (scale_by_std) or Dr. GRPO advantages: one value per sequence, shape [B]."""
    grouped = rewards.view(-1, group_size)
    centered = grouped - grouped.mean(dim=1, keepdim=True)
    if scale_by_std:
        centered = centered / (grouped.std(dim=1, keepdim=True) + eps)
    return centered.reshape(-1)


def k3_kl(logprobs: torch.Tensor, ref_logprobs: torch.Tensor) -> torch.Tensor:
    """Per-token KL(pi || pi_ref) by the k3 estimator (Schulman): exp(d) - d - 1, d = log pi_ref - log pi."""
    delta = ref_logprobs - logprobs
    return torch.exp(delta) - delta - 1


def clipped_surrogate(
    logprobs: torch.Tensor,
    old_logprobs: torch.Tensor,
    advantages: torch.Tensor,
    clip_low: float,
    clip_high: float,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Per-token policy loss -min(rho A, clip(rho) A) and whether each token was clipped."""
    ratio = torch.exp(logprobs - old_logprobs)
    unclipped = ratio * advantages
    clipped = torch.clamp(ratio, 1 - clip_low, 1 + clip_high) * advantages
    loss = -torch.minimum(unclipped, clipped)
    was_clipped = (clipped < unclipped).float()
    return loss, was_clipped


def aggregate(per_token: torch.Tensor, mask: torch.Tensor, how: Aggregation, max_tokens: int | None = None):
    """Reduce per-token losses [B, T] to a scalar, the way each algorithm normalises length."""
    if how == "sequence_mean":  # GRPO: 1/|o_i| inside, mean over sequences
        per_sequence = (per_token * mask).sum(dim=1) / mask.sum(dim=1).clamp(min=1)
        return per_sequence.mean()
    if how == "token_sum_constant":  # Dr. GRPO: a constant denominator, no length bias
        return (per_token * mask).sum() / (per_token.shape[0] * (max_tokens or per_token.shape[1]))
    if how == "token_mean":  # DAPO: every token of the batch weighs the same
        return (per_token * mask).sum() / mask.sum().clamp(min=1)
    raise ValueError(f"unknown aggregation {how!r}")


def masked_mean(values: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    return (values * mask).sum() / mask.sum().clamp(min=1)


def entropy_from_logits(logits: torch.Tensor) -> torch.Tensor:
    """Per-token entropy of the sampling distribution, [B, T, V] -> [B, T]."""
    logp = torch.log_softmax(logits.float(), dim=-1)
    return -(logp.exp() * logp).sum(dim=-1)


def ppo_token_rewards(
    sequence_rewards: torch.Tensor,
    logprobs: torch.Tensor,
    ref_logprobs: torch.Tensor,
    mask: torch.Tensor,
    kl_coef: float,
) -> torch.Tensor:
    """PPO's reward per token: a KL penalty everywhere, the sequence's reward on its last token."""
    rewards = -kl_coef * (logprobs - ref_logprobs) * mask
    last = (mask.sum(dim=1).long() - 1).clamp(min=0)
    rewards[torch.arange(rewards.shape[0]), last] += sequence_rewards
    return rewards


def gae(
    rewards: torch.Tensor, values: torch.Tensor, mask: torch.Tensor, gamma: float, lam: float
) -> tuple[torch.Tensor, torch.Tensor]:
    """Generalised advantage estimation over response tokens; returns (advantages, returns)."""
    advantages = torch.zeros_like(rewards)
    next_advantage = torch.zeros(rewards.shape[0], dtype=rewards.dtype)
    next_value = torch.zeros(rewards.shape[0], dtype=rewards.dtype)
    for t in reversed(range(rewards.shape[1])):
        delta = rewards[:, t] + gamma * next_value - values[:, t]
        next_advantage = (delta + gamma * lam * next_advantage) * mask[:, t]
        next_value = values[:, t] * mask[:, t]
        advantages[:, t] = next_advantage
    return advantages, advantages + values


def clipped_value_loss(
    values: torch.Tensor, old_values: torch.Tensor, returns: torch.Tensor, mask: torch.Tensor, clip: float
) -> torch.Tensor:
    """PPO's value loss, clipped around the values the rollout saw."""
    clipped = old_values + torch.clamp(values - old_values, -clip, clip)
    loss = 0.5 * torch.maximum((values - returns) ** 2, (clipped - returns) ** 2)
    return masked_mean(loss, mask)


def whiten(values: torch.Tensor, mask: torch.Tensor, eps: float = 1e-8) -> torch.Tensor:
    """Zero mean, unit variance over the masked entries (PPO advantages)."""
    mean = masked_mean(values, mask)
    var = masked_mean((values - mean) ** 2, mask)
    return (values - mean) * torch.rsqrt(var + eps) * mask
