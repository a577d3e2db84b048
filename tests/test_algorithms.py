"""The RL equations against values computed by hand."""

from __future__ import annotations

import math

import pytest
import torch

from trainer_client import algorithms as alg


@pytest.mark.parametrize(
    ("rewards", "group_size", "scale", "expected"),
    [
        # group [1, 0]: mean 0.5, sample std 0.7071 -> +-0.5 / 0.7072
        ([1.0, 0.0], 2, True, [0.5 / (math.sqrt(0.5) + 1e-4), -0.5 / (math.sqrt(0.5) + 1e-4)]),
        ([1.0, 0.0], 2, False, [0.5, -0.5]),
        # two groups of 3: [1, 2, 3] (mean 2, std 1) and [5, 5, 5] (all equal -> 0)
        ([1.0, 2.0, 3.0, 5.0, 5.0, 5.0], 3, True, [-1 / 1.0001, 0.0, 1 / 1.0001, 0.0, 0.0, 0.0]),
        ([1.0, 2.0, 3.0, 5.0, 5.0, 5.0], 3, False, [-1.0, 0.0, 1.0, 0.0, 0.0, 0.0]),
    ],
)
def test_group_advantages(rewards, group_size, scale, expected) -> None:
    got = alg.group_advantages(torch.tensor(rewards), group_size, scale_by_std=scale)
    assert got.tolist() == pytest.approx(expected, abs=1e-6)


@pytest.mark.parametrize(
    ("logp", "ref", "expected"),
    [
        (0.0, 0.0, 0.0),
        (math.log(0.5), math.log(0.25), 0.5 - math.log(0.5) - 1),  # d = log(0.5): e^d - d - 1
        (math.log(0.25), math.log(0.5), 2 - math.log(2) - 1),
    ],
)
def test_k3_kl(logp, ref, expected) -> None:
    assert alg.k3_kl(torch.tensor([logp]), torch.tensor([ref])).item() == pytest.approx(expected)


@pytest.mark.parametrize(
    ("ratio", "advantage", "low", "high", "loss", "clipped"),
    [
        (1.0, 1.0, 0.2, 0.2, -1.0, 0.0),
        (1.5, 1.0, 0.2, 0.2, -1.2, 1.0),  # clipped at 1 + 0.2
        (1.5, 1.0, 0.2, 0.28, -1.28, 1.0),  # DAPO clip-higher lets it reach 1.28
        (0.5, 1.0, 0.2, 0.2, -0.5, 0.0),  # min picks the unclipped, smaller objective
        (0.5, -1.0, 0.2, 0.2, 0.8, 1.0),  # negative advantage: clipped at 1 - 0.2
        (1.5, -1.0, 0.2, 0.2, 1.5, 0.0),
    ],
)
def test_clipped_surrogate(ratio, advantage, low, high, loss, clipped) -> None:
    logp = torch.tensor([math.log(ratio)])
    got_loss, got_clipped = alg.clipped_surrogate(logp, torch.zeros(1), torch.tensor([advantage]), low, high)
    assert got_loss.item() == pytest.approx(loss)
    assert got_clipped.item() == clipped


def test_aggregations_normalise_length_differently() -> None:
    per_token = torch.tensor([[1.0, 1.0, 1.0, 1.0], [3.0, 0.0, 0.0, 0.0]])
    mask = torch.tensor([[1.0, 1.0, 1.0, 1.0], [1.0, 0.0, 0.0, 0.0]])
    assert alg.aggregate(per_token, mask, "sequence_mean").item() == pytest.approx((1.0 + 3.0) / 2)
    assert alg.aggregate(per_token, mask, "token_mean").item() == pytest.approx(7.0 / 5)
    assert alg.aggregate(per_token, mask, "token_sum_constant", max_tokens=8).item() == pytest.approx(7.0 / 16)


def test_gae_by_hand() -> None:
    # one sequence of 3 tokens, the third padded: r = [0, 1], V = [0.5, 0.2], gamma 0.9, lambda 0.8
    rewards = torch.tensor([[0.0, 1.0, 0.0]])
    values = torch.tensor([[0.5, 0.2, 9.9]])
    mask = torch.tensor([[1.0, 1.0, 0.0]])
    advantages, returns = alg.gae(rewards, values, mask, gamma=0.9, lam=0.8)
    delta1 = 1.0 - 0.2  # last real token: no bootstrap
    delta0 = 0.0 + 0.9 * 0.2 - 0.5
    assert advantages[0, :2].tolist() == pytest.approx([delta0 + 0.9 * 0.8 * delta1, delta1])
    assert advantages[0, 2].item() == 0.0
    assert returns[0, :2].tolist() == pytest.approx([delta0 + 0.72 * delta1 + 0.5, delta1 + 0.2])


def test_ppo_token_rewards_put_the_score_on_the_last_token() -> None:
    logp = torch.tensor([[-1.0, -1.0, -1.0]])
    ref = torch.tensor([[-1.5, -1.0, -2.0]])
    mask = torch.tensor([[1.0, 1.0, 0.0]])
    got = alg.ppo_token_rewards(torch.tensor([2.0]), logp, ref, mask, kl_coef=0.1)
    assert got[0].tolist() == pytest.approx([-0.05, 2.0, 0.0])


def test_clipped_value_loss() -> None:
    values, old, returns = torch.tensor([[1.0, 0.0]]), torch.tensor([[0.0, 0.0]]), torch.tensor([[0.0, 1.0]])
    mask = torch.ones(1, 2)
    # token 0: unclipped (1-0)^2 = 1, clipped (0.2-0)^2 = 0.04 -> max 1; token 1: both (0-1)^2 = 1
    assert alg.clipped_value_loss(values, old, returns, mask, clip=0.2).item() == pytest.approx(0.5 * (1 + 1) / 2)


def test_entropy_of_uniform_and_certain_distributions() -> None:
    logits = torch.tensor([[[0.0, 0.0, 0.0, 0.0], [100.0, 0.0, 0.0, 0.0]]])
    assert alg.entropy_from_logits(logits)[0].tolist() == pytest.approx([math.log(4), 0.0], abs=1e-6)
