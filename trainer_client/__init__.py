"""Everything a training job needs to use the reward service during rollouts."""

from trainer_client.client import RewardClient, RewardResult, RewardServiceError, SyncRewardClient

__all__ = ["RewardClient", "RewardResult", "RewardServiceError", "SyncRewardClient"]
