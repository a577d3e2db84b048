"""verl's own code (PyPI verl 0.9.1) driving our verl adapter, against the real reward service on loopback.

verl's custom-function loader (`get_custom_reward_fn`) loads `compute_score` by file path or
package path with `reward_kwargs`; its `RewardLoopManager` scores a rollout batch in Ray actors
(`compute_rm_score`, as `RayPPOTrainer` does) through its `naive` and `remote` managers and
through our `ServiceRewardManager` loaded from an importlib source. The configuration is verl's
own `ppo_trainer.yaml` composed by Hydra with the overrides the README documents. The batch is
read from parquet as verl's data is: ground truths and extra_info carry numpy arrays and scalars.
"""

from __future__ import annotations

import asyncio
import inspect
import itertools
import json
import logging
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import pandas as pd
import pytest
import ray
import torch
import verl
from hydra import compose, initialize_config_dir
from omegaconf import DictConfig
from tokenizers import Tokenizer, decoders, models, pre_tokenizers
from transformers import PreTrainedTokenizerFast
from verl import DataProto
from verl.experimental.reward_loop import RewardLoopManager, RewardLoopWorker
from verl.protocol import pad_dataproto_to_divisor
from verl.trainer.ppo.reward import extract_reward, get_custom_reward_fn
from verl.workers.reward_manager import BatchRewardManager
from verl.workers.reward_manager import NaiveRewardManager as LegacyNaiveRewardManager

from reward_api.local import LocalServer
from tests.scrape import metric
from trainer_client.adapters import verl as verl_adapter
from trainer_client.adapters import verl_manager
from trainer_client.adapters.common import FAILURES
from trainer_client.client import SyncRewardClient

ADAPTER_FILE = str(Path(verl_adapter.__file__).resolve())
ADAPTER_PACKAGE = "pkg://trainer_client.adapters.verl"
MANAGER_FILE = str(Path(verl_manager.__file__).resolve())
MANAGER_PACKAGE = "pkg://trainer_client.adapters.verl_manager"
DEAD_URL = "http://127.0.0.1:9"  # what the environment says: only reward_kwargs lead to the service
R1_KEYS = {"score", "acc", "rs_ok", "rs_accuracy", "rs_format", "rs_language"}

NATALIA = (
    "Natalia sold clips to 48 of her friends in April, and then she sold half as many clips in May. "
    "How many clips did Natalia sell altogether in April and May?"
)
CLIPS_RIGHT = "<think>She sold 48 clips in April and half of that, 24, in May, so 48 + 24 = 72.</think> $\\boxed{72}$"
CLIPS_WRONG = "<think>She sold 48 clips in April and twice that, 96, in May, so she sold 96.</think> $\\boxed{96}$"
SQUARE = "What is the positive solution of $x^2 = 49$?"
SQUARE_RIGHT = "<think>Seven times seven is forty-nine, and seven is positive.</think> The answer is $\\boxed{7}$."
SQUARE_WRONG = "<think>The square root of forty-nine is nine, I believe.</think> The answer is $\\boxed{9}$."


@dataclass(frozen=True)
class Row:
    """One prompt of a verl data set, with the completion its rollouts return, as verl's preprocessors write it."""

    data_source: str
    question: str
    ground_truth: Any
    extra_info: dict[str, Any]
    completion: str
    right: bool
    ok: bool = True


# gsm8k.py keeps the question in extra_info; math_dataset.py keeps only split and index.
TEXT_ROWS = [
    Row("openai/gsm8k", NATALIA, "72", {"split": "train", "index": 0, "question": NATALIA}, CLIPS_RIGHT, True),
    Row("openai/gsm8k", NATALIA, "72", {"split": "train", "index": 0, "question": NATALIA}, CLIPS_WRONG, False),
    Row("openai/gsm8k", NATALIA, "", {"split": "train", "index": 1, "question": NATALIA}, CLIPS_RIGHT, False, ok=False),
    Row("DigitalLearningGmbH/MATH-lighteval", SQUARE, "7", {"split": "train", "index": 2}, SQUARE_RIGHT, True),
    Row("DigitalLearningGmbH/MATH-lighteval", SQUARE, "7", {"split": "train", "index": 2}, SQUARE_WRONG, False),
]


def sort_row(numbers: list[int], index: int, answer: str, right: bool) -> Row:
    """A structured ground truth: parquet gives its list back as a numpy array."""
    question = f"Sort {' '.join(map(str, numbers))}."
    completion = f"<think>I put the numbers in order, from the smallest to the largest one.</think> {answer}"
    truth = {"task": "sort", "reference": numbers}
    return Row(
        "sort-task", question, truth, {"split": "train", "index": index, "question": question}, completion, right
    )


SORT_ROWS = [
    sort_row([3, 1, 2], 3, "1 2 3", True),
    sort_row([3, 1, 2], 3, "3 2 1", False),
    sort_row([5, 4, 6], 4, "4 5 6", True),
]
ROWS = TEXT_ROWS + SORT_ROWS
ROLLOUTS = 8  # rollouts per row: 8 rows x 8 = 64 per-sample calls


def save_byte_tokenizer(directory: Path) -> Path:
    """A byte-level tokenizer (any text round-trips), saved where verl's `hf_tokenizer` loads it."""
    vocabulary = ["<pad>", "</s>", *sorted(pre_tokenizers.ByteLevel.alphabet())]
    core = Tokenizer(models.BPE(vocab={token: i for i, token in enumerate(vocabulary)}, merges=[]))
    core.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    core.decoder = decoders.ByteLevel()
    PreTrainedTokenizerFast(tokenizer_object=core, pad_token="<pad>", eos_token="</s>").save_pretrained(directory)
    return directory


def verl_config(*overrides: str) -> DictConfig:
    """verl's own trainer configuration with command-line overrides, composed as `main_ppo` composes it."""
    with initialize_config_dir(config_dir=str(Path(verl.__file__).parent / "trainer" / "config"), version_base=None):
        return compose("ppo_trainer", overrides=list(overrides))


def function_overrides(server: LocalServer, path: str, name: str, profile: str = "r1") -> list[str]:
    return [
        f"reward.custom_reward_function.path={path}",
        f"reward.custom_reward_function.name={name}",
        f"+reward.custom_reward_function.reward_kwargs.url={server.url}",
        f"+reward.custom_reward_function.reward_kwargs.profile={profile}",
    ]


def manager_overrides(
    server: LocalServer, path: str = MANAGER_PACKAGE, profile: str = "r1", group_size: int | None = None
) -> list[str]:
    group = [f"+reward.reward_kwargs.group_size={group_size}"] if group_size else []
    return [
        "reward.reward_manager.source=importlib",
        f"reward.reward_manager.module.path={path}",
        "reward.reward_manager.name=ServiceRewardManager",
        f"+reward.reward_kwargs.url={server.url}",
        f"+reward.reward_kwargs.profile={profile}",
        *group,
    ]


def through_parquet(rows: list[Row], tmp_path: Path) -> pd.DataFrame:
    """The rows as verl's preprocessors write them, one parquet file per data set, read back as verl reads them."""
    frames = []
    for source, group in itertools.groupby(rows, key=lambda row: row.data_source):
        records = [
            {"data_source": source, "prompt": [{"role": "user", "content": row.question}], "ability": "math",
             "reward_model": {"style": "rule", "ground_truth": row.ground_truth}, "extra_info": row.extra_info}
            for row in group
        ]  # fmt: skip
        path = tmp_path / f"{source.replace('/', '_')}.parquet"
        pd.DataFrame(records).to_parquet(path)
        frames.append(pd.read_parquet(path))
    return pd.concat(frames, ignore_index=True)


def padded(sequences: list[list[int]], pad: int, left: bool) -> torch.Tensor:
    width = max(map(len, sequences))
    return torch.tensor([[pad] * (width - len(s)) + s if left else s + [pad] * (width - len(s)) for s in sequences])


def rollout_batch(rows: list[Row], tokenizer: PreTrainedTokenizerFast, tmp_path: Path, rollouts: int) -> DataProto:
    """Each row repeated `rollouts` times (verl's interleaved repeat), with the tensors verl keeps after rollout."""
    frame = through_parquet(rows, tmp_path)
    repeat = np.repeat(np.arange(len(rows)), rollouts)
    prompts = [tokenizer.encode(rows[i].question) for i in repeat]
    responses = [tokenizer.encode(rows[i].completion) for i in repeat]
    prompt_ids = padded(prompts, tokenizer.pad_token_id, left=True)
    response_ids = padded(responses, tokenizer.pad_token_id, left=False)
    mask = torch.cat([padded([[1] * len(p) for p in prompts], 0, left=True),
                      padded([[1] * len(r) for r in responses], 0, left=False)], dim=1)  # fmt: skip
    non_tensors = {column: frame[column].to_numpy()[repeat] for column in ("data_source", "reward_model", "extra_info")}
    non_tensors["raw_prompt"] = frame["prompt"].to_numpy()[repeat]
    non_tensors["uid"] = np.array([f"prompt-{i}" for i in repeat], dtype=object)
    non_tensors["__num_turns__"] = np.full(len(repeat), 2)
    tensors = {"prompts": prompt_ids, "responses": response_ids, "attention_mask": mask,
               "input_ids": torch.cat([prompt_ids, response_ids], dim=1)}  # fmt: skip
    return DataProto.from_dict(tensors=tensors, non_tensors=non_tensors)


def reward_requests(server: LocalServer) -> float:
    """`POST /v1/rewards` requests the service has answered, from its Prometheus metrics."""
    lines = httpx.get(f"{server.url}/metrics", timeout=10).text.splitlines()
    return sum(
        float(line.rsplit(" ", 1)[1])
        for line in lines
        if line.startswith("reward_requests_total{") and 'endpoint="/v1/rewards"' in line
    )


def per_sample(scores: list[float], extra: dict[str, Any], rows: list[Row], rollouts: int) -> list[dict[str, Any]]:
    """Each sample's score and extra info next to the row it came from."""
    return [
        {"row": rows[i // rollouts], "score": score, **{key: values[i] for key, values in extra.items()}}
        for i, score in enumerate(scores)
    ]


def check_r1(samples: list[dict[str, Any]]) -> None:
    """r1: a right answer with its <think> block in English scores 3.0, a wrong one less, a failed one 0 and rs_ok 0."""
    for sample in samples:
        row = sample["row"]
        assert sample["rs_ok"] == float(row.ok), sample
        if row.right:
            assert sample["score"] == pytest.approx(3.0), sample
            assert sample["acc"] == 1.0 and sample["rs_format"] == 1.0 and sample["rs_language"] == 1.0, sample
        elif row.ok:
            assert sample["acc"] < 1.0 and 1.0 <= sample["score"] < 3.0, sample
        else:
            assert sample["score"] == 0.0 and sample["acc"] == 0.0, sample


def stop(manager: RewardLoopManager) -> None:
    """Kill the manager's actors and wait until their names (verl names them) are free for the next manager."""
    for worker in manager.reward_loop_workers:
        ray.kill(worker)
    deadline = time.monotonic() + 60
    while ray.util.list_named_actors() and time.monotonic() < deadline:
        time.sleep(0.1)


@pytest.fixture(scope="module")
def tokenizer_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return save_byte_tokenizer(tmp_path_factory.mktemp("tokenizer"))


@pytest.fixture(scope="module")
def tokenizer(tokenizer_dir: Path) -> PreTrainedTokenizerFast:
    return PreTrainedTokenizerFast.from_pretrained(tokenizer_dir)


@pytest.fixture
def dead_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REWARD_SERVICE_URL", DEAD_URL)


@pytest.fixture(scope="module")
def ray_cluster() -> Iterator[None]:
    """A local Ray cluster whose actors see no usable REWARD_SERVICE_URL, as on a cluster where env does not travel."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("REWARD_SERVICE_URL", DEAD_URL)
        ray.init(num_cpus=4, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


@pytest.mark.parametrize(
    ("path", "name", "url_from", "awaited"),
    [
        (ADAPTER_FILE, "compute_score", "reward_kwargs", True),
        (ADAPTER_PACKAGE, "compute_score", "reward_kwargs", True),
        (ADAPTER_PACKAGE, "compute_score", "environment", True),
        (ADAPTER_PACKAGE, "compute_score_sync", "reward_kwargs", False),
    ],
)
def test_verl_loader_loads_the_function_with_reward_kwargs(
    server: LocalServer, monkeypatch: pytest.MonkeyPatch, path: str, name: str, url_from: str, awaited: bool
) -> None:
    overrides = function_overrides(server, path, name)
    if url_from == "environment":
        overrides = [override for override in overrides if ".url=" not in override]
    monkeypatch.setenv("REWARD_SERVICE_URL", server.url if url_from == "environment" else DEAD_URL)
    reward_fn = get_custom_reward_fn(verl_config(*overrides))
    # parquet and verl's managers hand over numpy strings and integers
    extra_info = {
        "split": np.str_("train"),
        "index": np.int64(0),
        "question": np.str_(NATALIA),
        "num_turns": np.int64(2),
    }
    answer = reward_fn(
        data_source=np.str_("openai/gsm8k"), solution_str=CLIPS_RIGHT, ground_truth=np.str_("72"), extra_info=extra_info
    )
    assert inspect.isawaitable(answer) == awaited
    score = asyncio.run(answer) if awaited else answer
    assert score["score"] == pytest.approx(3.0) and score["rs_ok"] == 1.0, score
    assert set(score) == R1_KEYS


def test_verl_loader_names_reward_kwargs_the_service_does_not_take(server: LocalServer) -> None:
    overrides = [
        *function_overrides(server, ADAPTER_PACKAGE, "compute_score_sync"),
        "+reward.custom_reward_function.reward_kwargs.profil=kimi",
    ]
    reward_fn = get_custom_reward_fn(verl_config(*overrides))
    with pytest.warns(UserWarning, match=r"reward_kwargs \['profil'\] ignored"):
        reward_fn(data_source="openai/gsm8k", solution_str=CLIPS_RIGHT, ground_truth="72", extra_info={})


def test_verl_loader_function_reports_items_the_service_could_not_grade(
    server: LocalServer, dead_env: None, caplog: pytest.LogCaptureFixture
) -> None:
    reward_fn = get_custom_reward_fn(verl_config(*function_overrides(server, ADAPTER_PACKAGE, "compute_score")))
    before = FAILURES[("verl", "invalid")]
    with caplog.at_level(logging.WARNING, logger="trainer_client.adapters"):
        score = asyncio.run(reward_fn(data_source="gsm8k", solution_str=CLIPS_RIGHT, ground_truth="", extra_info={}))
    assert score["rs_ok"] == 0.0 and score["score"] == 0.0 and set(score) == R1_KEYS
    assert FAILURES[("verl", "invalid")] == before + 1
    assert "verl: 1 of 1 rewards not computed (invalid: 1)" in caplog.text


def test_64_concurrent_per_sample_calls_share_a_few_requests(server: LocalServer, dead_env: None) -> None:
    reward_fn = get_custom_reward_fn(verl_config(*function_overrides(server, ADAPTER_PACKAGE, "compute_score")))

    async def rollout_step() -> list[dict[str, Any]]:
        return await asyncio.gather(*(
            reward_fn(data_source="openai/gsm8k", solution_str=f"<think>Try {i}.</think> $\\boxed{{{i}}}$",
                      ground_truth="7", extra_info={"index": np.int64(i), "question": "What is 3 + 4?"})
            for i in range(64)
        ))  # fmt: skip

    before = reward_requests(server)
    scores = asyncio.run(rollout_step())
    requests = reward_requests(server) - before
    assert [s["acc"] for s in scores] == [float(i == 7) for i in range(64)]
    assert 1 <= requests <= 8, f"64 per-sample calls took {requests} requests"


@pytest.mark.parametrize(
    ("overrides", "max_requests"),
    [
        # verl's naive manager awaits our async function: its concurrent calls coalesce
        (lambda server: function_overrides(server, ADAPTER_PACKAGE, "compute_score"), 16),
        # verl's remote manager calls a sync function in one actor, one sample after another
        (lambda server: [*function_overrides(server, ADAPTER_PACKAGE, "compute_score_sync"),
                         "reward.reward_manager.name=remote"], 64),
        # our manager, from verl's importlib source
        (lambda server: manager_overrides(server), 16),
    ],
    ids=["naive", "remote", "importlib-ServiceRewardManager"],
)  # fmt: skip
def test_verl_reward_loop_scores_a_parquet_batch_in_ray_actors(
    server: LocalServer, ray_cluster: None, tokenizer_dir: Path, tokenizer: PreTrainedTokenizerFast, tmp_path: Path,
    overrides: Any, max_requests: int,
) -> None:  # fmt: skip
    config = verl_config(*overrides(server), f"actor_rollout_ref.model.path={tokenizer_dir}", "reward.num_workers=1")
    batch = rollout_batch(ROWS, tokenizer, tmp_path, ROLLOUTS)
    assert isinstance(batch.non_tensor_batch["reward_model"][-1]["ground_truth"]["reference"], np.ndarray)
    manager = RewardLoopManager(config)
    try:
        before = reward_requests(server)
        reward_tensor, extra = extract_reward(manager.compute_rm_score(batch))
        requests = reward_requests(server) - before
    finally:
        stop(manager)
    assert set(extra) >= R1_KEYS
    check_r1(per_sample(reward_tensor.sum(dim=-1).tolist(), extra, ROWS, ROLLOUTS))
    assert 1 <= requests <= max_requests, f"{len(batch)} samples took {requests} requests"


def test_service_reward_manager_groups_by_uid_with_exact_token_counts(
    server: LocalServer, tokenizer_dir: Path, tokenizer: PreTrainedTokenizerFast, tmp_path: Path
) -> None:
    """Kimi's length reward over one prompt's rollouts: verl's uid is the group, the response's tokens its length."""
    lengths = [0, 10, 20, 30]
    completions = [CLIPS_RIGHT.replace("</think>", " " * n + "</think>") for n in lengths]
    rows = [Row("openai/gsm8k", NATALIA, "72", {"split": "train"}, completion, True) for completion in completions]
    batch = rollout_batch(rows, tokenizer, tmp_path, rollouts=1)
    batch.non_tensor_batch["uid"] = np.array(["natalia"] * len(rows), dtype=object)  # one prompt, four rollouts
    config = verl_config(
        *manager_overrides(server, MANAGER_FILE, profile="kimi", group_size=len(rows)),
        f"actor_rollout_ref.model.path={tokenizer_dir}",
    )

    async def score() -> list[dict[str, Any]]:
        worker = RewardLoopWorker(config)  # what each of verl's reward-loop actors runs
        return await worker.compute_score_batch(batch)

    kimi = [output["reward_extra_info"]["rs_kimi_length"] for output in asyncio.run(score())]
    # lambda = 0.5 - (len - min_len) / (max_len - min_len), right answers keep it
    assert kimi == pytest.approx([0.5 - n / lengths[-1] for n in lengths])


def test_kimi_rewards_are_the_same_over_eight_reward_workers_as_over_one(
    server: LocalServer, ray_cluster: None, tokenizer_dir: Path, tokenizer: PreTrainedTokenizerFast, tmp_path: Path
) -> None:
    """verl's reward loop splits a batch over `reward.num_workers` actors (8 by default), so each prompt's rollouts
    reach several workers: with `group_size` the service completes each group (reward_api/groups.py)."""
    pads = [0, 10, 20, 30]
    completions = [CLIPS_RIGHT.replace("</think>", " " * n + "</think>") for n in pads]
    completions += [CLIPS_WRONG.replace("</think>", " " * n + "</think>") for n in pads]  # a second prompt
    rows = [Row("openai/gsm8k", NATALIA, "72", {"split": "train"}, completion, True) for completion in completions]
    batch = rollout_batch(rows, tokenizer, tmp_path, rollouts=1)
    batch.non_tensor_batch["uid"] = np.array(["right"] * 4 + ["wrong"] * 4, dtype=object)

    def kimi_over(workers: int) -> list[float]:
        config = verl_config(
            *manager_overrides(server, MANAGER_FILE, profile="kimi", group_size=4),
            f"actor_rollout_ref.model.path={tokenizer_dir}",
            f"reward.num_workers={workers}",
        )
        manager = RewardLoopManager(config)
        try:
            _, extra = extract_reward(manager.compute_rm_score(batch))
        finally:
            stop(manager)
        return list(extra["rs_kimi_length"])

    one = kimi_over(1)
    assert one == pytest.approx([0.5 - n / pads[-1] for n in pads] + [min(0.0, 0.5 - n / pads[-1]) for n in pads])
    assert kimi_over(8) == pytest.approx(one)


def validation_then_training(tokenizer: PreTrainedTokenizerFast, tmp_path: Path, val_n: int) -> list[DataProto]:
    """Two prompts numbered 0 and 1 in both splits (verl's gsm8k preprocessing numbers each split from 0): the
    validation batch as `RayPPOTrainer._validate` builds it (`val_kwargs.n` rollouts a prompt, a new uid per prompt,
    padded to the agent loop's 8 workers by copying its first rows), then a training batch of 4 rollouts a prompt."""

    def batch(split: str, rollouts: int) -> DataProto:
        rows = [
            Row("openai/gsm8k", NATALIA, "72", {"split": split, "index": index, "question": NATALIA},
                (CLIPS_RIGHT if index == 0 else CLIPS_WRONG).replace("</think>", " x" * 10 * n + "</think>"), True)
            for index in (0, 1) for n in range(rollouts)
        ]  # fmt: skip
        data = rollout_batch(rows, tokenizer, tmp_path, rollouts=1)
        uids = [str(uuid.uuid4()) for _ in range(2)]
        data.non_tensor_batch["uid"] = np.array([uid for uid in uids for _ in range(rollouts)], dtype=object)
        return data

    validation, _ = pad_dataproto_to_divisor(batch("test", val_n), 8)
    return [validation, batch("train", 4)]


def without_groups(
    server: LocalServer, data: DataProto, tokenizer: PreTrainedTokenizerFast, exact_tokens: bool
) -> list[float]:
    """Kimi's length reward of each sample graded in one request, its group the request's samples of its uid; the
    length is the response's tokens where the scorer knows them (our manager), else the service's estimate."""
    items = []
    for row in data:
        item = {"task": "math", "completion": tokenizer.decode(row.batch["responses"], skip_special_tokens=True),
                "reference": "72", "group": row.non_tensor_batch["uid"]}  # fmt: skip
        if exact_tokens:
            item["num_tokens"] = int(row.batch["attention_mask"].sum()) - len(row.batch["prompts"])
        items.append(item)
    distinct = {json.dumps(item, sort_keys=True): item for item in items}  # verl's padding copies are one sample
    with SyncRewardClient(server.url, profile="kimi") as client:
        graded = dict(zip(distinct, client.grade(list(distinct.values())), strict=True))
    return [graded[json.dumps(item, sort_keys=True)].components["kimi_length"] for item in items]


# The function's val_group_size is 1 unless set, as verl's val_kwargs.n; our manager reads val_kwargs.n itself.
@pytest.mark.parametrize(("scorer", "val_n"), [("compute_score", 1), ("ServiceRewardManager", 2)])
def test_validation_before_training_at_eight_workers_waits_for_no_group(
    server: LocalServer, ray_cluster: None, tokenizer_dir: Path, tokenizer: PreTrainedTokenizerFast, tmp_path: Path,
    scorer: str, val_n: int,
) -> None:  # fmt: skip
    """verl validates before training with `val_kwargs.n` rollouts a prompt, through the same scorer as training's
    `rollout.n`: each phase's groups complete at their own size (none graded partial after a wait), the test split's
    prompt 0 is not the training split's, and the rewards are those of grading without groups."""
    if scorer == "compute_score":
        options = [*function_overrides(server, ADAPTER_PACKAGE, "compute_score", profile="kimi"),
                   "+reward.custom_reward_function.reward_kwargs.group_size=4"]  # fmt: skip
    else:  # our manager reads val_kwargs.n from verl's config
        options = manager_overrides(server, MANAGER_PACKAGE, profile="kimi", group_size=4)
    config = verl_config(
        *options,
        f"actor_rollout_ref.model.path={tokenizer_dir}",
        "actor_rollout_ref.rollout.n=4",
        f"actor_rollout_ref.rollout.val_kwargs.n={val_n}",
        "actor_rollout_ref.rollout.agent.num_workers=8",
        "reward.num_workers=8",
    )
    partial_before = metric(server, "reward_group_items_total", outcome="partial")
    complete_before = metric(server, "reward_group_items_total", outcome="complete")
    manager = RewardLoopManager(config)
    try:
        phases = validation_then_training(tokenizer, tmp_path, val_n)
        kimi = [list(extract_reward(manager.compute_rm_score(data))[1]["rs_kimi_length"]) for data in phases]
    finally:
        stop(manager)
    assert metric(server, "reward_group_items_total", outcome="partial") == partial_before
    assert metric(server, "reward_group_items_total", outcome="complete") > complete_before
    for data, rewards in zip(phases, kimi, strict=True):
        assert rewards == pytest.approx(without_groups(server, data, tokenizer, scorer == "ServiceRewardManager"))
    # 0.5 - (len - min) / (max - min) over each prompt's 4 rollouts, a wrong answer's at most 0
    assert kimi[1] == pytest.approx([0.5, 1 / 6, -1 / 6, -0.5, 0.0, 0.0, -1 / 6, -0.5])


@pytest.mark.parametrize(
    ("manager_cls", "name"),
    [(BatchRewardManager, "compute_score_batch"), (LegacyNaiveRewardManager, "compute_score_sync")],
)
def test_legacy_verl_managers_take_the_sync_functions(
    server: LocalServer, dead_env: None, tokenizer: PreTrainedTokenizerFast, tmp_path: Path, manager_cls: type,
    name: str,
) -> None:  # fmt: skip
    """verl <= 0.7.0 scored in the driver with these managers (0.9.1 still ships them)."""
    reward_fn = get_custom_reward_fn(verl_config(*function_overrides(server, ADAPTER_PACKAGE, name)))
    manager = manager_cls(tokenizer=tokenizer, num_examine=0, compute_score=reward_fn)
    output = manager(rollout_batch(ROWS, tokenizer, tmp_path, rollouts=1), return_dict=True)
    extra = output["reward_extra_info"]
    assert set(extra) >= R1_KEYS
    check_r1(per_sample(output["reward_tensor"].sum(dim=-1).tolist(), extra, ROWS, rollouts=1))


def test_the_function_module_imports_without_verl_or_numpy() -> None:
    """verl loads `compute_score` from a `reward-service[client]` install: httpx, no numpy, no verl."""
    blocked = "import sys; sys.modules.update(numpy=None, verl=None, torch=None); import trainer_client.adapters.verl"
    done = subprocess.run([sys.executable, "-c", blocked], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr


A_PLUS_B_TESTS = [{"input": "1 2\n", "output": "3\n"}, {"input": "20 22\n", "output": "42\n"}]
# (data_source, ground_truth) as the public code sets' verl rows store them: whatever the name, tests mean code.
CODE_SOURCES = [
    ("primeintellect", json.dumps({"inputs": ["1 2\n", "20 22\n"], "outputs": ["3\n", "42\n"]})),  # PRIME's Eurus
    ("lcbv5", json.dumps([test | {"testtype": "stdin"} for test in A_PLUS_B_TESTS])),  # DeepCoder
    ("open-r1/verifiable-coding-problems-python", json.dumps({"language": "python", "test_cases": A_PLUS_B_TESTS})),
    ("likaixin/TACO-verified", json.dumps({"inputs": ["1 2\n", "20 22\n"], "outputs": ["3\n", "42\n"]})),
    ("deepmind/code_contests", {"tests": A_PLUS_B_TESTS}),
    ("livecodebench/code_generation_lite", json.dumps({"tests": A_PLUS_B_TESTS})),
]


@pytest.mark.parametrize(("data_source", "ground_truth"), CODE_SOURCES)
def test_code_sets_are_graded_as_code_whatever_their_name(
    server: LocalServer, dead_env: None, data_source: str, ground_truth: Any
) -> None:
    reward_fn = get_custom_reward_fn(
        verl_config(*function_overrides(server, ADAPTER_PACKAGE, "compute_score_sync", profile="accuracy"))
    )
    program = "```python\na, b = map(int, input().split())\nprint(a {} b)\n```"
    for operator, accuracy in (("+", 1.0), ("-", 0.0)):
        score = reward_fn(
            data_source=np.str_(data_source),
            solution_str=program.format(operator),
            ground_truth=ground_truth,
            extra_info={"index": np.int64(0)},
        )
        assert (score["acc"], score["rs_ok"]) == (accuracy, 1.0), (data_source, operator, score)


def test_a_code_set_whose_reference_holds_no_tests_is_invalid_not_zero(
    server: LocalServer, dead_env: None, caplog: pytest.LogCaptureFixture
) -> None:
    reward_fn = get_custom_reward_fn(verl_config(*function_overrides(server, ADAPTER_PACKAGE, "compute_score_sync")))
    with caplog.at_level(logging.WARNING, logger="trainer_client.adapters"):
        score = reward_fn(data_source="codecontests", solution_str="```python\nprint(3)\n```", ground_truth="42")
    assert score["rs_ok"] == 0.0 and "invalid" in caplog.text
